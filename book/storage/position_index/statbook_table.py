"""Next-move statistics: for a position, each next move with its games and each colour's wins.

The table ``next_stats`` holds, per position and next move, what ``Book.next_moves`` counts
from the positions index (``book.storage.position_index.segments``) game by game:

- ``key``: the canonical position key (the smallest of the 8 symmetric keys, compared
  unsigned), stored signed as in the segments (``zobrist.to_signed``);
- ``next``: the move played from it in canonical orientation (a padded point, ``PASS`` = -1,
  ``END`` = -2 for the games that ended there), *not* merged under the position's own
  symmetry, so that a reader maps and merges it exactly as the store does
  (``orbits.merge_orbits``);
- ``games``, ``black_wins``, ``white_wins``.

Primary key ``(key, next)``, ``WITHOUT ROWID`` on SQLite: the table is its index and one
position's moves are one short range scan.  The position's total is the sum of its rows'
games (the ``END`` row included) and the games that ended there are the ``END`` row's.

The counting rule is the store's: a game counts once per position, at its first visit (a
game may come back to a position through a ko or passes), with the move it played then.

A *statistics book* (the built-in book, ``book.storage.position_index.statistics_book``) is a SQLite
file of ``meta`` and this table only: no games, no positions index.  It is marked twice: the meta row
``book_kind = statistics`` (what a reader checks) and the SQLite header's application id
(``APPLICATION_ID``, what ``Book.open`` reads from the file's first 100 bytes, so that it
never opens such a file for writing: that would turn it to WAL mode and add tables).

In memory the rows are ``nextmoves.NextMoveStats`` (the one form of next-move statistics),
with no year: ``NO_YEAR`` in every record.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Iterator

import numpy as np
from sqlalchemy import (
    BigInteger,
    Column,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    SmallInteger,
    Table,
    bindparam,
    select,
    text,
)
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.schema import CreateTable

from fuseki.book.storage import schema, scheme
from fuseki.book.storage.position_index import nextmoves, segment_files, segments
from fuseki.book.storage.position_index.nextmoves import NextMoveStats
from fuseki.book.storage.position_index.statbook_file import APPLICATION_ID, KIND, STATISTICS, to_stats

PAGE_SIZE = 4096  # a statistics book's page size (fixed: part of its bytes)
RANGES = 256  # key ranges read one at a time from a book of games (memory: ~1/256 of its rows)

metadata = MetaData()

next_stats = Table(
    "next_stats", metadata,
    Column("key", BigInteger, nullable=False),
    Column("next", SmallInteger, nullable=False),
    Column("games", Integer, nullable=False),
    Column("black_wins", Integer, nullable=False),
    Column("white_wins", Integer, nullable=False),
    PrimaryKeyConstraint("key", "next", name="pk_next_stats"),
    sqlite_with_rowid=False,
)


def from_book(conn, min_games: int = 1, ranges: int = RANGES) -> Iterator[NextMoveStats]:
    """The statistics of a book of games' positions reached by at least ``min_games`` games,
    without years, in key order, one key range at a time.

    Reads every segment's rows of a range at once (a range holds every row of its keys),
    so memory stays at a ``ranges``-th of the book's rows.
    """
    files = segment_files.in_files(conn)
    in_files = {segment.id for segment in files}
    ids = tuple(segment.id for segment in segments.live(conn) if segment.id not in in_files)
    if not ids and not files:
        return
    folder = segment_files.book_folder(conn)
    for low, high in segment_files.key_ranges(ranges):
        keys, codes = _range_rows(conn, ids, low, high)
        if files:
            file_keys, file_codes = segment_files.range_rows(folder, files, low, high)
            keys, codes = np.concatenate([keys, file_keys]), np.concatenate([codes, file_codes])
        found = nextmoves.without_years(keys, codes, min_games)
        if len(found):
            yield found


def _range_rows(conn, ids: tuple[int, ...], low: int, high: int) -> tuple[np.ndarray, np.ndarray]:
    """(keys, codes) of every segment's rows with ``low <= key <= high``."""
    if not ids:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    union = " UNION ALL ".join(f"SELECT key, code FROM positions_{int(i)} WHERE key BETWEEN :low AND :top"
                               for i in ids)
    bounds = {"low": low, "top": high}
    joined = _JOINED.get(conn.dialect.name)
    if joined is None:
        rows = conn.execute(text(union), bounds).all()
        pairs = np.array(rows, dtype=np.int64).reshape(-1, 2)
        return pairs[:, 0].copy(), pairs[:, 1].copy()
    # Two strings of comma-separated numbers parsed by numpy; one aggregate query feeds both
    # the same rows in the same order.
    return segment_files.joined_rows([conn.execute(text(joined.format(union=union)), bounds).one()])


_JOINED = {
    "sqlite": "SELECT group_concat(key), group_concat(code) FROM ({union})",
    "postgresql": "SELECT string_agg(CAST(key AS TEXT), ',' ORDER BY key, code), "
                  "string_agg(CAST(code AS TEXT), ',' ORDER BY key, code) FROM ({union}) AS found",
}


def lookup(conn, key: int) -> NextMoveStats:
    """The statistics of one position (``key`` signed), in next order, with no year, through
    SQLAlchemy (a ``Book`` reads them through ``statbook_file.StatisticsFile.lookup``, the same
    query in plain ``sqlite3``; tests/test_statbook.py holds the two equal)."""
    return to_stats(key, conn.execute(_LOOKUP, {"key": key}).all())


_LOOKUP = (select(next_stats.c.next, next_stats.c.games, next_stats.c.black_wins, next_stats.c.white_wins)
           .where(next_stats.c.key == bindparam("key")).order_by(next_stats.c.next))


# --- statistics book files ---------------------------------------------------------------------


def write_file(path: str, chunks: Iterable[NextMoveStats], meta: dict[str, str], extra=None) -> int:
    """Write a statistics book: ``meta`` (with the versions and the kind) and the rows.

    ``extra(conn)``, if given, writes more tables (the corner book) through the sqlite3
    connection inside the same transaction, in key order too.

    The same rows and meta give the same bytes (with the same SQLite library): fixed page
    size, rows inserted in key order, meta in name order, no timestamps, and the file
    packed by VACUUM INTO a new file.  ``chunks`` must come in key order.  Returns the
    number of rows.  The file appears at ``path`` only when complete.
    """
    rows = 0
    draft, final = f"{path}.draft{os.getpid()}", f"{path}.tmp{os.getpid()}"
    for name in (draft, final):
        if os.path.exists(name):
            os.remove(name)
    meta = {**meta, **scheme.versions(), KIND: STATISTICS}
    conn = sqlite3.connect(draft, isolation_level=None)
    try:
        conn.execute(f"PRAGMA page_size={PAGE_SIZE}")
        conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
        conn.execute("BEGIN")
        for table in (schema.meta, next_stats):
            conn.execute(str(CreateTable(table).compile(dialect=sqlite_dialect.dialect())))
        conn.executemany("INSERT INTO meta (name, value) VALUES (?, ?)", sorted(meta.items()))
        for chunk in chunks:  # without years: a statistics book has no year column
            conn.executemany("INSERT INTO next_stats VALUES (?, ?, ?, ?, ?)",
                             zip(chunk.keys.tolist(), *(chunk.counts[:, column].tolist() for column in
                                 (nextmoves.NEXT, nextmoves.COUNT, nextmoves.BLACK_WINS, nextmoves.WHITE_WINS))))
            rows += len(chunk)
        if extra is not None:
            extra(conn)
        conn.execute("COMMIT")
        conn.execute("VACUUM INTO ?", (final,))
    finally:
        conn.close()
        os.remove(draft)
    os.replace(final, path)
    return rows
