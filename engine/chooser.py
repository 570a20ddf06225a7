"""Move choosers: what ``genmove`` asks for a move.

A chooser is any object with ``choose(board, color) -> point`` (``PASS`` when
it has nothing to play).  It must not change the board.  The GTP layer
checks legality itself and falls back to ``RandomChooser`` or a pass, so a
chooser (e.g. the opening book's) may propose a move it has not checked.
"""

from __future__ import annotations

from typing import Protocol


class MoveChooser(Protocol):
    def choose(self, board, color: int) -> int:
        """A point for ``color`` to play on ``board``, or PASS.  Leaves ``board`` unchanged."""
        ...


class RandomChooser:
    """Uniformly random legal moves that never fill the player's own single-point eye.

    The same ``seed`` on the same sequence of positions gives the same moves;
    ``seed=None`` draws a fresh one.
    """

    def __init__(self, seed: int | None = None):
        import numpy as np  # here, not at import time: the GTP front end starts without numpy

        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def choose(self, board, color: int) -> int:
        return board.random_move(color, self.rng)
