"""The corner-ways book's games (tests/test_corner_ways_in.py, test_ai_corners.py; the book itself
is conftest's ``corner_ways_book``).

Five games whose top-right corner goes Black Q16, White O17, then Black Q14 (three games) or
R14 (two); the rest of the board is D4 and D16.  The position asked about has C4 and C16
instead: the whole board is in no game, its top-right corner is in all five.

Not a test module: test modules import from here (and from conftest.py), never from each other.
"""

from __future__ import annotations

from fuseki.engine.core import base

GAMES = ["Q16 D4 D16 O17 Q14 K10", "Q16 D4 D16 O17 Q14 C10", "Q16 D4 D16 O17 Q14 K3",
         "Q16 D4 D16 O17 R14 K10", "Q16 D4 D16 O17 R14 C10"]
ASKED = "Q16 C4 C16 O17"  # Black to play: out of the whole-board book, top right in the corner book


def moves_of(text):
    return [(1 + i % 2, base.vertex_to_point(v, 19)) for i, v in enumerate(text.split())]
