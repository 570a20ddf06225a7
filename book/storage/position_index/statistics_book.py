"""A statistics book: next-move statistics without games (the built-in book is one).

``Book.open`` opens a file marked as a statistics book (``statbook_table``) through
``face.open_statistics`` (``open_index`` here) and holds a ``StatisticsTable`` as its positions
index (``face.PositionsIndex``) instead of a ``SegmentIndex``.  What it can answer it answers as a book of games would:

- ``next_moves`` reads one position's statistics (``statbook_file.StatisticsFile.lookup``) and
  counts them with ``answers.answer``, as the index counts a segment's statistics, so its answer equals
  the full book's for every position the statistics kept (tests/test_statbook.py checks it
  in all 8 orientations);
- ``Book.stats`` gives the games it was built from (meta rows), its positions and file size.

What needs games it refuses in words, never with an empty answer: ``Book.games`` and a year,
player or header filter raise ``StatisticsOnly``; ``game`` and ``game_sgf`` raise KeyError saying why.
The file is opened ``immutable`` (no locks, no journal: it is package data and may lie on
a read-only disk) and is never written.  Its meta rows and next moves are read through the
``sqlite3`` module alone (``book.storage.position_index.statbook_file``), so that opening it and answering a
search imports no SQLAlchemy (issue 61); ``StatisticsTable.engine`` makes the SQLAlchemy engine
of the file for a ``Book`` that is asked for one (``Book.db``: the corner book, the AI values).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fuseki.book.model.filters import Filters
from fuseki.book.storage.connect import BookError
from fuseki.book.storage.position_index import statbook_file
from fuseki.book.storage.position_index.answers import NextMoves, Visits, answer
from fuseki.book.storage.scheme import MIGRATES_FROM, check_meta
from fuseki.engine.core.zobrist import to_signed, to_unsigned

IMPORT_HINT = "import games into a book of your own (fuseki import FILES --book mine.sqlite)"


class StatisticsOnly(BookError):
    """A question only games can answer, asked of a statistics book."""


@dataclass(frozen=True)
class StatisticsInfo:
    """What a statistics book says of itself (its meta rows)."""

    title: str       # how messages name it: "the built-in book", or the file
    games: int       # the games it was counted from
    min_games: int   # it keeps the positions reached by at least this many games
    positions: int
    years: tuple[int, int] | None
    sizes: dict[int, int]  # games per board size
    description: str  # where its games come from

    @classmethod
    def from_meta(cls, meta: dict[str, str], path: str) -> StatisticsInfo:
        low, _, high = meta.get("years", "").partition("-")
        years = (int(low), int(high)) if low.isdigit() and high.isdigit() else None
        sizes = dict(tuple(int(n) for n in pair.split(":")) for pair in meta.get("sizes", "").split(",") if pair)
        return cls(meta.get("title") or f"the statistics book {path}", int(meta.get("games", 0)),
                   int(meta.get("min_games", 1)), int(meta.get("positions", 0)), years, sizes,
                   meta.get("description", ""))

    def no_games(self) -> str:
        """Why a statistics book lists no games."""
        return (f"{self.title} holds next-move statistics, not games: it has no game lists or counts; "
                f"{IMPORT_HINT}")

    def no_filters(self) -> str:
        """Why a statistics book cannot filter by year, player or header."""
        return (f"{self.title} holds next-move statistics, not games: it cannot select games by year "
                f"or player, nor by event, result, rank, handicap or komi; {IMPORT_HINT}")


class StatisticsTable:
    """A statistics book's ``face.PositionsIndex``: the ``next_stats`` table, one position a read
    (through ``reader``, the file's own ``sqlite3`` connections); ``info``: what the
    book says of itself."""

    def __init__(self, reader: statbook_file.StatisticsFile, info: StatisticsInfo):
        self.reader, self.info = reader, info

    def next_moves(self, board, to_move: int, filters: Filters, kept: np.ndarray | None = None) -> NextMoves:
        """As a book of games answers (``answers.answer``: the same counting and orbit merging,
        over the position's statistics instead of its rows); StatisticsOnly for a filter that
        selects games (years, players, headers)."""
        keys = board.symmetric_keys(to_move)
        return answer(self.visits(min(keys), filters), board, keys, to_move, filters)

    def visits(self, key: int, filters: Filters, every_row: bool = False, kept: np.ndarray | None = None) -> Visits:
        """The position's statistics and no game; StatisticsOnly when games are asked for
        (``every_row``) or a filter selects them (so ``kept`` never is)."""
        if every_row:
            raise StatisticsOnly(self.info.no_games())
        if filters.selects_games():
            raise StatisticsOnly(self.info.no_filters())
        return Visits(self.reader.lookup(to_signed(key)).counts, np.empty(0, dtype=np.int64))

    def codes(self, key: int, every_row: bool = False, games: np.ndarray | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
        """No codes: they are games' (``face.PositionsIndex.codes``)."""
        raise StatisticsOnly(self.info.no_games())

    def version(self) -> int:
        """Never changes: a statistics book is written once."""
        return 0

    def forget(self) -> None:
        """Nothing is kept."""

    def positions(self, conn, min_games: int) -> list[tuple[int, int]]:
        """Its table's positions, each with the games of its rows (``conn``: SQLAlchemy's)."""
        from sqlalchemy import func, select

        from fuseki.book.storage.position_index.statbook_table import next_stats

        games = func.sum(next_stats.c.games)
        rows = conn.execute(select(next_stats.c.key, games).group_by(next_stats.c.key).having(games >= min_games))
        return [(to_unsigned(int(key)), int(count)) for key, count in rows]

    def need_games(self, what: str) -> None:
        raise StatisticsOnly(f"{self.info.title} holds next-move statistics without {what}; {IMPORT_HINT}")

    def row_count(self, conn) -> int:
        """Its positions (a meta row)."""
        return self.info.positions

    def stored_bytes(self, conn) -> int:
        """None outside its one file."""
        return 0

    def close(self) -> None:
        self.reader.close()

    def engine(self):
        """The SQLAlchemy engine of the file (``immutable``, read-only)."""
        from fuseki.book.storage.connect import file_url, make_db

        return make_db(file_url(Path(self.reader.path).resolve(), immutable=1), readonly=True)


def open_index(path: str) -> StatisticsTable:
    """The index of the statistics book at ``path`` (its reader and what it says of itself);
    BookError if it is not one, SchemeMismatch if it was counted with other keys."""
    reader = statbook_file.StatisticsFile(str(Path(path).resolve()))
    try:
        meta = reader.meta()
        # version 3 renamed the segments' tables only: a statistics book has none
        check_meta(meta, MIGRATES_FROM)
        if meta.get(statbook_file.KIND) != statbook_file.STATISTICS:
            raise BookError(f"{path} is marked as a statistics book but its meta table does not say so")
    except Exception:
        reader.close()
        raise
    return StatisticsTable(reader, StatisticsInfo.from_meta(meta, path))
