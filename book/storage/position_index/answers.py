"""What the positions index answers of a position, and the one count of its next moves.

``Visits``: what an index knows of one position (its counts ahead and its games one by one);
``answer``: the ``NextMoves`` counted from them, the same for every form of the index
(``MaskNeeded``: a question with filters that select games asks the book for their mask)
(``face.PositionsIndex``), so a statistics book answers exactly as the book of games it was
counted from (tests/test_statbook.py, in all 8 orientations).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from fuseki.book.model.filters import Filters
from fuseki.book.storage import scheme
from fuseki.book.storage.position_index import nextmoves, orbits
from fuseki.book.storage.position_index.orbits import MoveStat
from fuseki.engine.core.base import BLACK, END


class MaskNeeded(Exception):
    """A book of games' index asked with filters that select games but without the mask of the
    games they keep (``kept``), or with one that covers fewer games than it read: ``Book``
    builds the mask from its games table to cover game ``top`` and asks again, so that the
    index never calls back into the book (the mask is kept per ``Filters``: this is the first
    question with them, or the first after an import added games)."""

    def __init__(self, top: int):
        super().__init__(f"a mask of the kept games up to game {top} is needed")
        self.top = top


@dataclass(frozen=True)
class NextMoves:
    """The answer of ``Book.next_moves``: the position's games (``total``; ``ended``: those that
    ended there) and its next moves, each a ``MoveStat`` (a point and its ``Stats``), most played
    first; ``key`` is the canonical key (unsigned)."""

    total: int
    ended: int
    moves: list[MoveStat]
    key: int = 0
    to_move: int = BLACK


class Visits(NamedTuple):
    """What an index knows of one position (its canonical key), as arrays: ``counts``,
    next-move statistics counted ahead (the rows of ``nextmoves.NextMoveStats.counts`` of this
    key: years, next points, games, wins), and ``codes``, the other games one by one: each
    game's code at its first visit (ascending game ids), read through the properties below.
    ``answer`` sums both per next point into ``MoveStat``s (a point and its ``Stats``) of a
    ``NextMoves``."""

    counts: np.ndarray
    codes: np.ndarray

    @property
    def game_ids(self) -> np.ndarray:
        return self.codes >> scheme.GAME_SHIFT

    @property
    def moves(self) -> np.ndarray:
        """The move number of each game's first visit."""
        return (self.codes >> scheme.MOVE_SHIFT) & scheme.MOVE_MASK

    @property
    def nexts(self) -> np.ndarray:
        """Each game's next point there, in canonical orientation (``END``: it ended there)."""
        return ((self.codes >> scheme.NEXT_SHIFT) & scheme.NEXT_MASK) - 2

    @property
    def winners(self) -> np.ndarray:
        return self.codes & scheme.WINNER_MASK


def answer(visits: Visits, board, keys: list[int], side: int, filters: Filters) -> NextMoves:
    """The ``NextMoves`` of a position from its ``visits`` (``keys``: the asked board's 8
    symmetric keys), whatever the index's form: the games one by one counted by next point
    (``nextmoves.count_nexts``), the counts a year filter keeps added, then merged under the
    position's symmetry in the asked orientation (``orbits.tally``)."""
    games, black, white = nextmoves.count_nexts(visits.codes)
    counts = nextmoves.select_years(visits.counts, filters.year_from, filters.year_to)
    at = counts[:, nextmoves.NEXT] + 2
    np.add.at(games, at, counts[:, nextmoves.COUNT])
    np.add.at(black, at, counts[:, nextmoves.BLACK_WINS])
    np.add.at(white, at, counts[:, nextmoves.WHITE_WINS])
    index = np.flatnonzero(games[1:]) + 1  # END's apart
    stats = orbits.tally(index, games[index], black[index], white[index], board.size, keys, side, filters.min_games)
    return NextMoves(total=int(games.sum()), ended=int(games[END + 2]), moves=stats, key=min(keys), to_move=side)
