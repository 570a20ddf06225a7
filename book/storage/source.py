"""Where a book's next moves come from: one interface, one implementation per physical form.

A ``Book`` (``book.storage.store``) holds one ``NextMoveSource`` and asks it every question
about a position:

- ``segment_index.SegmentIndex``: a book of games.  Its positions index is the segments'
  rows, one per game and position (``book.storage.segments``), with each segment's
  next-move statistics of its busy keys beside them (``book.storage.nextmoves``);
- ``statbook.StatisticsTable``: a statistics book (the built-in one).  Its one table
  ``next_stats`` holds each position's next-move statistics, with no games behind them
  (``book.storage.statbook_table``).

Both answer ``next_moves`` through ``answer`` below, so a statistics book answers exactly as
the book of games it was counted from (tests/test_statbook.py, in all 8 orientations).
What needs games (``visits``: the games that reached a position) only the index answers;
a statistics book raises ``statbook.StatisticsOnly`` saying why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Protocol

import numpy as np

from fuseki.book.model.filters import Filters
from fuseki.book.storage import nextmoves, orbits
from fuseki.book.storage.orbits import MoveStat
from fuseki.engine.core.base import BLACK, END, WHITE


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
    """What a source knows of one position (its canonical key), as arrays: ``counts``,
    next-move statistics counted ahead (the rows of ``nextmoves.NextMoveStats.counts`` of this
    key: years, next points, games, wins), and the other games one by one, each at its first
    visit (ascending ids, with the move number, the next point in canonical orientation and the
    winner).  ``answer`` sums both per next point into ``MoveStat``s (a point and its
    ``Stats``) of a ``NextMoves``."""

    counts: np.ndarray
    game_ids: np.ndarray
    moves: np.ndarray
    nexts: np.ndarray
    winners: np.ndarray


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
    symmetric keys): the counts a year filter keeps, then each game, merged under the
    position's symmetry in the asked orientation (``orbits.tally``)."""
    counts = nextmoves.select_years(visits.counts, filters.year_from, filters.year_to)
    nexts, winners = visits.nexts, visits.winners
    played = counts[:, nextmoves.NEXT] != END
    moved = nexts != END
    index = np.concatenate([nexts[moved], counts[played, nextmoves.NEXT]]) + 2
    weights = np.concatenate([np.ones(int(moved.sum())), counts[played, nextmoves.COUNT]])
    black = np.concatenate([winners[moved] == BLACK, counts[played, nextmoves.BLACK_WINS]])
    white = np.concatenate([winners[moved] == WHITE, counts[played, nextmoves.WHITE_WINS]])
    stats = orbits.tally(index, weights, black, white, board.size, keys, side, filters.min_games)
    total = len(nexts) + int(counts[:, nextmoves.COUNT].sum())
    ended = int((~moved).sum()) + int(counts[~played, nextmoves.COUNT].sum())
    return NextMoves(total=total, ended=ended, moves=stats, key=min(keys), to_move=side)
