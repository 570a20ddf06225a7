"""The positions index's face for reading: what ``Book`` holds and asks every question about a position.

A ``Book`` (``book.storage.store``) holds one ``PositionsIndex``, one implementation per
physical form, and never asks which one it has:

- ``segment_index.SegmentIndex``: a book of games.  Its index is the segments' rows, one per
  game and position (``segments``, as tables or files), with each segment's next-move
  statistics of its busy keys beside them (``nextmoves``);
- ``statistics_book.StatisticsTable``: a statistics book (the built-in one).  Its one table
  ``next_stats`` holds each position's next-move statistics, with no games behind them
  (``statbook_table``); what needs games it refuses with ``statistics_book.StatisticsOnly``.

Both count through ``answers.answer``.  The writing side (an import's batches, merges, the
sweep) is ``intake``.  This module imports neither SQLAlchemy nor a book of games' modules
until a book of games is opened: a statistics book is opened and read through ``sqlite3``
alone (issue 61, tests/test_cli_startup.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from fuseki.book.model.filters import Filters

if TYPE_CHECKING:
    import numpy as np

    from fuseki.book.storage.position_index.answers import NextMoves, Visits
    from fuseki.book.storage.position_index.statistics_book import StatisticsTable


class PositionsIndex(Protocol):
    """The questions a ``Book`` asks of its positions (see the module docstring)."""

    def next_moves(self, board, to_move: int, filters: Filters, kept: np.ndarray | None = None) -> NextMoves:
        """Next moves from ``board``'s position (any orientation) with ``to_move`` to play;
        ``kept``: the boolean mask over game ids of the games the filters keep (None: they
        select none), else MaskNeeded."""

    def visits(self, key: int, filters: Filters, every_row: bool = False, kept: np.ndarray | None = None) -> Visits:
        """The position ``key`` (canonical, unsigned): its counts and the games the
        filters keep (``kept``, as in ``next_moves``); ``every_row``: no counts, every game one by one."""

    def codes(self, key: int, every_row: bool = False, games: np.ndarray | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
        """(next-move statistics counts, codes) of the position ``key`` (canonical, unsigned) as
        the index keeps them, every visit of every game not counted ahead; ``every_row``: no
        counts, every code (``games``: of those games only).  Raise
        ``statistics_book.StatisticsOnly`` where no games stand behind the index."""

    def version(self) -> int:
        """A number that changes whenever the answers may."""

    def forget(self) -> None:
        """Drop what was kept of earlier reads (the importer wrote)."""

    def positions(self, conn, min_games: int) -> list[tuple[int, int]]:
        """(canonical key, unsigned; games) of every position at least ``min_games`` games
        reached, in no order (``conn``: the book's SQLAlchemy connection)."""

    def need_games(self, what: str) -> None:
        """Raise ``statistics_book.StatisticsOnly`` saying the book holds next-move statistics
        without ``what`` (players, years) where no games stand behind its index; nothing where
        they do."""

    def row_count(self, conn) -> int:
        """The index's rows (a statistics book: its positions)."""

    def stored_bytes(self, conn) -> int:
        """Bytes the index keeps outside the database (a SQLite book's segment files)."""

    def close(self) -> None:
        """Close what the index opened of its own (a statistics book's sqlite3 connections)."""


def open_games(db) -> PositionsIndex:
    """The index of the book of games on ``db``."""
    from fuseki.book.storage.position_index.segment_index import SegmentIndex

    return SegmentIndex(db)


def open_statistics(path: str) -> StatisticsTable | None:
    """The index of the statistics book at ``path`` (read-only, whatever the book is opened as),
    with what the book says of itself (``info``: the games it was counted from, which the
    ``Book`` holds as its ``games_table.NoGames``); None where the file is none (the SQLite
    header's application id says so)."""
    from fuseki.book.storage.position_index import statbook_file, statistics_book

    return statistics_book.open_index(path) if statbook_file.is_statistics_file(path) else None
