"""A statistics book's file read through the ``sqlite3`` module alone, without SQLAlchemy.

A statistics book (``book.storage.position_index.statistics_book``; the built-in book is one) answers a next-move
question with one short range scan of its table ``next_stats`` (``book.storage.position_index.statbook_table``
describes it), and ``Book.open`` reads its meta rows once.  Both are plain SQL on one file, so
this module asks them of ``sqlite3`` directly: importing SQLAlchemy was most of a ``fuseki search``
on the built-in book (120-400 ms of ~0.5-1.2 s, issue 61, bench/cli.py and docs/benchmarks.md).
``Book`` still makes a SQLAlchemy engine of the file when something else asks for one
(``Book.db``: the corner book, the AI values), and tests/test_statbook.py holds this module's
rows equal to the SQLAlchemy query's (``statbook_table.lookup``) for the built-in book's positions.

The file opens ``immutable`` (no locks, no journal: it is package data and may lie on a read-only
disk), one connection per thread that reads (a ``Book`` is shared by the web server's threads).
"""

from __future__ import annotations

import sqlite3
import threading

import numpy as np

from fuseki.book.storage.connect import BookError, sqlite_uri
from fuseki.book.storage.position_index import nextmoves
from fuseki.book.storage.position_index.nextmoves import NextMoveStats

STATISTICS = "statistics"  # meta book_kind of a statistics book
KIND = "book_kind"
APPLICATION_ID = 0x66757374  # "fust", PRAGMA application_id of a statistics book file
# the rows of one position, as statbook_table.lookup's SQLAlchemy query asks them
LOOKUP = "SELECT next, games, black_wins, white_wins FROM next_stats WHERE key = ? ORDER BY next"


def is_statistics_file(path: str) -> bool:
    """True when ``path`` is a SQLite file whose header carries ``APPLICATION_ID``."""
    try:
        with open(path, "rb") as handle:
            header = handle.read(100)
    except OSError:
        return False
    return (len(header) == 100 and header.startswith(b"SQLite format 3\0")
            and int.from_bytes(header[68:72], "big") == APPLICATION_ID)


def to_stats(key: int, rows: list) -> NextMoveStats:
    """The statistics of one position (``key`` signed) from its rows (next, games, black wins,
    white wins) in next order, with no year."""
    if not rows:
        return nextmoves.empty()
    counts = np.empty((len(rows), 5), dtype=np.int32)
    counts[:, nextmoves.YEAR] = nextmoves.NO_YEAR
    # from plain tuples: numpy probes a row object for the array protocols
    counts[:, nextmoves.NEXT:] = [tuple(row) for row in rows]
    return NextMoveStats(np.full(len(rows), key, dtype=np.int64), counts)


class StatisticsFile:
    """The connections of one statistics book file, one per reading thread."""

    def __init__(self, path: str):
        self.path = path
        self._local = threading.local()
        self._opened: list[sqlite3.Connection] = []
        self._lock = threading.Lock()

    def _connection(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            try:
                conn = sqlite3.connect(sqlite_uri(self.path, immutable=1), uri=True, check_same_thread=False)
            except sqlite3.Error as exc:
                raise BookError(f"cannot open the book {self.path}: {exc}") from None
            # as connect.make_db sets a read-only book's: readers keep what they read
            conn.execute("PRAGMA cache_size=-262144")
            conn.execute("PRAGMA mmap_size=1073741824")
            with self._lock:
                self._opened.append(conn)
            self._local.conn = conn
        return conn

    def meta(self) -> dict[str, str]:
        """The meta rows; BookError if there is no meta table."""
        conn = self._connection()
        try:
            if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").fetchone():
                raise BookError(f"{self.path} is not a fuseki book (no meta table)")
            return dict(conn.execute("SELECT name, value FROM meta").fetchall())
        except sqlite3.DatabaseError as exc:  # not a database after all (its header only looked like one)
            raise BookError(f"cannot open the book {self.path}: {exc}") from None

    def lookup(self, key: int) -> NextMoveStats:
        """The statistics of one position (``key`` signed), in next order, with no year."""
        return to_stats(key, self._connection().execute(LOOKUP, (key,)).fetchall())

    def close(self) -> None:
        """Close every thread's connection (a later read opens a new one)."""
        with self._lock:
            opened, self._opened = self._opened, []
            self._local = threading.local()
        for conn in opened:
            conn.close()
