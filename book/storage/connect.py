"""How a book connects: its URL, and the SQLAlchemy engine with the pool, pragmas and transactions.

What differs between SQLite and PostgreSQL once connected is ``book.storage.dialect``.
SQLAlchemy is imported by the functions that use it: ``BookError`` and ``sqlite_uri`` serve a
statistics book's reader too (``book.storage.position_index.statbook_file``), which imports no SQLAlchemy
(issue 61: its import is most of ``fuseki search``'s start on the built-in book, bench/cli.py).
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote, unquote

from fuseki.book.storage import wal

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

WRITE_LOCK = 0x66757365  # PostgreSQL advisory lock key ("fuse") of the book's writers (make_db)
POOL_SIZE = 32  # connections kept open per Book (as many again are opened and closed when more ask)
WAL_WAIT = 60.0  # seconds a connection waits for the lock that turning a new book to WAL needs


class BookError(ValueError):
    """A book that cannot be opened or used as asked (missing file, read-only, not a book)."""


def sqlite_uri(path, **parameters) -> str:
    """SQLite's URI of a file (``sqlite3.connect(..., uri=True)``): the path percent-encoded, so
    a name with ``#``, ``?`` or ``%`` in it names that file and not a shorter one."""
    query = "&".join(f"{name}={value}" for name, value in parameters.items())
    return f"file:{quote(str(path), safe='/')}" + (f"?{query}" if query else "")


def file_url(path, **parameters):
    """The SQLAlchemy URL of a SQLite file, built from its parts: a path is never parsed as a URL
    (a ``?`` in it would start the query).  With ``parameters`` (``mode="ro"``, ``immutable=1``)
    it opens as SQLite's URI (``sqlite_uri``)."""
    from sqlalchemy.engine import URL

    if not parameters:
        return URL.create("sqlite", database=str(path))
    return URL.create("sqlite", database=sqlite_uri(path),
                      query={**{name: str(value) for name, value in parameters.items()}, "uri": "true"})


def to_url(location: str, readonly: bool = False):
    """A SQLAlchemy URL from a path or URL; read-only SQLite files open with ``mode=ro``."""
    from sqlalchemy.engine import make_url

    if "://" not in str(location):
        path = Path(location).expanduser().resolve()
        return file_url(path, mode="ro") if readonly else file_url(path)
    url = make_url(location)
    if url.drivername == "postgresql":
        # SQLAlchemy 2.1 picks psycopg 3 for a bare postgresql://; the importer's COPY and the
        # 'postgresql' extra are psycopg2.
        url = url.set(drivername="postgresql+psycopg2")
    if readonly and url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:":
        return url.set(database=sqlite_uri(Path(sqlite_path(url)).resolve()),
                       query={**url.query, "mode": "ro", "uri": "true"})
    return url


def sqlite_path(url) -> str | None:
    """The SQLite file of ``url``, or None (another database, or in memory)."""
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return None
    return unquote(url.database[5:]) if url.database.startswith("file:") else url.database


def make_db(url, readonly: bool) -> Engine:
    """The SQLAlchemy engine of a book: its pool, and on SQLite the transactions and pragmas."""
    from sqlalchemy import create_engine, event

    from fuseki.book.storage.position_index import sqlite_stage

    # A connection for each thread that asks at once (the web server's request threads): with
    # SQLAlchemy's default of 5 (+10 opened and closed again per query) the 50 visitors of
    # bench/web_load.py queued for connections until they timed out.
    pool = {"pool_size": POOL_SIZE, "max_overflow": POOL_SIZE}
    if url.get_backend_name() == "postgresql" and readonly:
        # The server refuses every write of a read-only book's sessions, as SQLite's mode=ro does.
        return create_engine(url, pool_pre_ping=True, **pool,
                             connect_args={"options": "-c default_transaction_read_only=on"})
    if url.get_backend_name() != "sqlite":
        db = create_engine(url, pool_pre_ping=True, **pool)

        # A writer's transaction (``fuseki_write``: Book.open for writing, Book.writing) takes the
        # writers' advisory lock as it begins, as SQLite's BEGIN IMMEDIATE below does, and holds
        # it until it ends: writers take turns (a batch's fingerprint check and new ids cannot race
        # another importer's, nor two importers' CREATE TABLE IF NOT EXISTS of one new book on the
        # catalog); readers go on.
        @event.listens_for(db, "begin")
        def _write_lock(conn):
            if conn.get_execution_options().get("fuseki_write"):
                with conn.connection.dbapi_connection.cursor() as cursor:
                    cursor.execute(f"SELECT pg_advisory_xact_lock({WRITE_LOCK})")

        return db
    db = create_engine(url, connect_args={"check_same_thread": False, "timeout": 60}, **pool)

    # SQLAlchemy's documented recipe for SQLite transactions: the driver's own implicit
    # BEGIN is turned off and SQLAlchemy's begin emits it, so that a writer can ask for
    # BEGIN IMMEDIATE (Book.writing): two importers then queue for the write lock
    # instead of one failing when its read snapshot cannot become a write.
    @event.listens_for(db, "begin")
    def _begin(conn):
        options = conn.get_execution_options()
        if options.get("isolation_level") != "AUTOCOMMIT":  # on the driver's cursor: every query begins one
            conn.connection.dbapi_connection.execute("BEGIN IMMEDIATE" if options.get("fuseki_write") else "BEGIN")

    @event.listens_for(db, "connect")
    def _pragmas(dbapi_conn, _record):
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        if not readonly:
            # 16 KB pages: a third faster to fill with keys spread over the whole range than
            # 4 KB ones (fewer splits and B-tree levels); only a new database takes it.
            cur.execute("PRAGMA page_size=16384")
            # Pages a merge frees can be given back to the file system (Book.reclaim) without
            # rewriting the whole file; only a new database takes it (VACUUM: Book.compact).
            cur.execute("PRAGMA auto_vacuum=INCREMENTAL")
            _set_wal(cur)
            cur.execute("PRAGMA wal_autocheckpoint=0")  # the Book's Checkpointer thread does it (book.storage.wal)
            # A restarted log's file is cut back to the Checkpointer's bound, which reads it.
            cur.execute(f"PRAGMA journal_size_limit={wal.MAX_LOG_BYTES}")
            sqlite_stage.attach_stage(dbapi_conn)  # where an importer's rows are staged
        cur.execute("PRAGMA synchronous=NORMAL")
        # Readers keep what they read (256 MB); a writer's cache would fill with the pages it
        # wrote and never reads again (the games' records), while what it does read, the
        # fingerprint and player indexes, fits in 64 MB (bench/book.py --corpus: peak memory).
        cur.execute("PRAGMA cache_size=-262144" if readonly else "PRAGMA cache_size=-65536")
        cur.execute("PRAGMA mmap_size=1073741824")
        cur.execute("PRAGMA temp_store=MEMORY")
        cur.close()

    return db


def _set_wal(cursor) -> None:
    """``PRAGMA journal_mode=WAL``, waiting while another process holds the book's lock.

    Turning a new (still rollback-journal) file to WAL needs an exclusive lock, and SQLite
    answers "database is locked" at once, without its busy handler, when another connection
    holds one: two importers creating the same book at once failed so.  Once the file is in
    WAL mode the pragma takes no lock.
    """
    deadline = time.monotonic() + WAL_WAIT
    pause = 0.005
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
        time.sleep(pause)
        pause = min(2 * pause, 0.2)

