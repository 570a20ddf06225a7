"""Move choosers: what ``genmove`` asks for a move.

A chooser is any object with ``choose(board, color) -> point``: a point,
``PASS``, ``RESIGN``, or None when it has nothing to say (the next chooser of
the chain is asked).  It must not change the board.  The GTP layer checks
legality itself and falls back to ``RandomChooser`` or a pass, so a chooser
(e.g. the opening book's) may propose a move it has not checked.

The program that starts the engine (``fuseki-gtp``) builds the chain, e.g.
book, then another GTP engine, then random moves, and hands it to the game.
Two optional faces, found by duck typing:

- an *advisor* also has ``next_moves(board, color)`` (an object with ``moves``:
  ``MoveStat``-like entries with ``point``, ``points``, ``games``, ``winrate``)
  and ``min_games``: the analysis commands (``book_moves``, ``lz-analyze``, ...)
  show its candidates;
- an *external engine* also has ``ask(board, command)`` (the scoring commands
  consult it) and ``choose_cleanup(board, color)`` (``kgs-genmove_cleanup``);
- any chooser may have ``warm_up()``: the GTP loop calls it on a thread once its
  first answer is out (the book opens its database then).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from fuseki.engine.core.base import PASS


class MoveChooser(Protocol):
    def choose(self, board, color: int) -> int | None:
        """A point for ``color`` to play on ``board``, PASS, RESIGN, or None.  Leaves ``board`` unchanged."""
        ...


def eligible(moves: Sequence, min_games: int) -> list:
    """The candidate moves a chooser may play: not a pass, and seen in at least ``min_games`` games."""
    return [m for m in moves if m.point != PASS and m.games >= min_games]


class RandomChooser:
    """Uniformly random legal moves that never fill the player's own single-point eye.

    The same ``seed`` on the same sequence of positions gives the same moves;
    ``seed=None`` draws a fresh one.
    """

    def __init__(self, seed: int | None = None):
        self.seed = seed
        self._rng = None

    @property
    def rng(self):
        """The numpy generator, made at first use: the GTP front end starts without numpy."""
        if self._rng is None:
            import numpy as np

            self._rng = np.random.default_rng(self.seed)
        return self._rng

    def choose(self, board, color: int) -> int:
        return board.random_move(color, self.rng)
