"""The built-in opening book: where it lies in the package and what it holds.

``data/builtin.sqlite`` is a statistics book (``book.storage.position_index.statistics_book``: next moves with
games and wins, no game records) built by ``fuseki book build-builtin`` from the Tygem
archives (``book.builders.statbook``); ``data/builtin.json`` beside it says what it
holds, so that ``fuseki-gtp`` can name its book at start without opening the database
(and without importing numpy or SQLAlchemy: this module imports neither).

The engine and the read-only commands use it when no book is named (no ``--book``,
``$FUSEKI_BOOK`` or ``[book] path``) and none exists at the default location.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data"  # book/data: package data of fuseki.book
PATH = DATA / "builtin.sqlite"
INFO = DATA / "builtin.json"


def available() -> bool:
    """True when the package carries the built-in book."""
    return PATH.is_file()


@lru_cache(maxsize=1)
def info() -> dict:
    """The JSON file's fields (``games``, ``min_games``, ``positions``, ``description``...); {} without it."""
    try:
        return json.loads(INFO.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def label() -> str:
    """How ``fuseki-gtp`` names it, e.g. ``built-in (369,210 games of Tygem ..., positions
    reached by >= 8 games)``."""
    found = info()
    if not found:
        return "built-in"
    return (f"built-in ({found.get('games', 0):,} games of {found.get('description') or 'unknown origin'}, "
            f"positions reached by >= {found.get('min_games', 1)} games)")
