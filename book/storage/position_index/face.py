"""Where a book's next moves come from: one interface, one implementation per physical form.

A ``Book`` (``book.storage.store``) holds one ``NextMoveSource`` and asks it every question
about a position:

- ``segment_index.SegmentIndex``: a book of games.  Its positions index is the segments'
  rows, one per game and position (``book.storage.position_index.segments``), with each segment's
  next-move statistics of its busy keys beside them (``book.storage.position_index.nextmoves``);
- ``statistics_book.StatisticsTable``: a statistics book (the built-in one).  Its one table
  ``next_stats`` holds each position's next-move statistics, with no games behind them
  (``book.storage.position_index.statbook_table``).

Both answer ``next_moves`` through ``answer`` below, so a statistics book answers exactly as
the book of games it was counted from (tests/test_statbook.py, in all 8 orientations).
What needs games (``visits``: the games that reached a position) only the index answers;
a statistics book raises ``statistics_book.StatisticsOnly`` saying why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Protocol

import numpy as np

from fuseki.book.model.filters import Filters
from fuseki.book.storage import scheme
from fuseki.book.storage.position_index import nextmoves, orbits
from fuseki.book.storage.position_index.orbits import MoveStat
from fuseki.engine.core.base import BLACK, END


@dataclass(frozen=True)
class NextMoves:
    """The answer of ``Book.next_moves``; ``key`` is the canonical key (unsigned)."""

    total: int
    ended: int
    moves: list[MoveStat]
    key: int = 0
    to_move: int = BLACK


class Visits(NamedTuple):
    """What a source knows of one position (its canonical key): ``counts``, next-move
    statistics counted ahead (``nextmoves.NextMoveStats.counts``: years, next points,
    games, wins), and ``codes``, the other games one by one: each game's code at its first
    visit (ascending game ids), read through the properties below."""

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


class NextMoveSource(Protocol):
    """The questions a ``Book`` asks of its positions (see the module docstring)."""

    def next_moves(self, board, to_move: int, filters: Filters) -> NextMoves:
        """Next moves from ``board``'s position (any orientation) with ``to_move`` to play."""

    def visits(self, key: int, filters: Filters, every_row: bool = False) -> Visits:
        """The position ``key`` (canonical, unsigned): its counts and the games the
        filters keep; ``every_row``: no counts, every game one by one."""

    def version(self) -> int:
        """A number that changes whenever the answers may."""

    def forget(self) -> None:
        """Drop what was kept of earlier reads (the importer wrote)."""


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
