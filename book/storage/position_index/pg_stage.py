"""A PostgreSQL book's new segments, written by the import's parsers in parallel ("staged").

On SQLite each parser writes its batch's rows as a segment file and the one writer only
links it in (``book.storage.position_index.segment_files``).  This is the same for PostgreSQL, where files are
not at hand (the server may be another machine): each parser COPYs its batch's rows,
its games numbered from 0, into a table of its own on its own connection, builds the
table's primary key, writes the batch's next-move statistics beside it, and commits.  The writer then
links the batch in the transaction that adds its games (``link``): it renames the table
to ``positions_<id>_rows`` and makes ``positions_<id>`` a view that adds the first game
id to every code, so that readers and merges read it as any segment.  The rows are
written once, by the parsers' server sessions side by side; what the writer does for
them is a few catalogue statements, however many rows there are.

A staged table's name starts with its import's token.  The importer holds the session
advisory lock (``LOCK_CLASS``, token) while it runs (``hold``), and the server lets it
go with the connection, however the import ends; ``sweep`` drops the staged tables
whose lock is free, which an import that was killed left.  Process ids would not do:
the server may be on another host.
"""

from __future__ import annotations

import itertools
import os
import secrets
from typing import NamedTuple

import numpy as np
from sqlalchemy import insert, text

from fuseki.book.storage import pgcopy, schema, scheme
from fuseki.book.storage.connect import WRITE_LOCK, make_db
from fuseki.book.storage.position_index import nextmoves, segment_files

# FUSEKI_PG_STAGE=0: the writer copies every row itself, as before staging (a baseline for
# bench/book.py; tests compare both)
ENABLED = os.environ.get("FUSEKI_PG_STAGE", "1") != "0"
PREFIX = "fuseki_stage_"
# Two-key advisory locks (a key space of their own beside the writers' one-key WRITE_LOCK):
# (LOCK_CLASS, token) is held by the import whose staged tables carry token.
LOCK_CLASS = WRITE_LOCK
_STAGED = text("SELECT tablename FROM pg_tables WHERE schemaname = current_schema() "
               "AND tablename LIKE 'fuseki!_stage!_%' ESCAPE '!'")


def copy_rows(conn, name: str, keys: np.ndarray, codes: np.ndarray) -> None:
    """A new table ``name`` holding rows ``(key, code)``, written frozen (no later pass of VACUUM
    or of the first readers setting hint bits), its primary key built once they are in."""
    conn.exec_driver_sql(f"CREATE TABLE {name} (key BIGINT NOT NULL, code BIGINT NOT NULL)")
    with conn.connection.dbapi_connection.cursor() as cur:
        pgcopy.copy_in(cur, name, ["key", "code"], [(keys, 8), (codes, 8)], freeze=True)
    add_key(conn, name)


def add_key(conn, name: str) -> None:
    """A segment's primary key, built once its rows are in: PostgreSQL sorts them and writes
    the B-tree in one pass, which costs less than inserting each row's entry during the COPY."""
    conn.exec_driver_sql(f"ALTER TABLE {name} ADD CONSTRAINT pk_{name} PRIMARY KEY (key, code)")


def rows_table(segment_id: int) -> str:
    """The table of a segment staged by a parser, under the view ``positions_<segment_id>``."""
    return f"positions_{int(segment_id)}_rows"


def drop_segment(conn, segment_id: int) -> None:
    """Drop a segment's table: a staged segment's view with its rows, or a table the writer wrote."""
    conn.exec_driver_sql(f"DROP TABLE IF EXISTS {rows_table(segment_id)} CASCADE")  # the view with it
    conn.exec_driver_sql(f"DROP TABLE IF EXISTS positions_{int(segment_id)}")


def staged_tables(conn) -> list[str]:
    """The names of every staged table of the book: rows and next-move statistics, of any import."""
    return list(conn.execute(_STAGED).scalars())


class Stager:
    """Stages a parser's batches (``batches.make_batch``'s ``rows_to``): each call writes one
    batch's rows and next-move statistics as tables named for the import's token, and returns the name.

    Made in the importing process and used in a parser process: it connects on first use."""

    def __init__(self, url, token: int):
        self.url, self.token, self.db = url, token, None
        self.numbers = itertools.count()

    def __call__(self, keys: np.ndarray, codes: np.ndarray, next_stats: nextmoves.NextMoveStats) -> str:
        if self.db is None:
            self.db = make_db(self.url, readonly=False)
        name = f"{PREFIX}{self.token}_{os.getpid()}_{next(self.numbers)}"
        with self.db.begin() as conn:
            copy_rows(conn, name, keys, codes)
            nextmoves.write_table(conn, f"{name}_next_stats", next_stats)
        return name

    def close(self) -> None:
        if self.db is not None:
            self.db.dispose()
            self.db = None


class Hold(NamedTuple):
    """An import's token and the connection that holds its lock (``hold``)."""

    token: int
    conn: object


def hold(db) -> Hold:
    """A new import token, its lock held by a connection of its own until ``release``."""
    conn = db.connect()
    try:
        while True:
            token = secrets.randbits(31)
            if conn.execute(text("SELECT pg_try_advisory_lock(:c, :t)"), {"c": LOCK_CLASS, "t": token}).scalar():
                conn.commit()  # the lock is the session's; no transaction stays open
                return Hold(token, conn)
    except BaseException:
        conn.close()
        raise


def release(held: Hold) -> None:
    """Drop what the import staged and did not link (a stop, an error), and let its lock go."""
    conn = held.conn
    try:
        with conn.begin():
            _drop(conn, [name for name in staged_tables(conn) if _token(name) == held.token])
        conn.execute(text("SELECT pg_advisory_unlock(:c, :t)"), {"c": LOCK_CLASS, "t": held.token})
        conn.commit()
    except BaseException:
        conn.invalidate()  # a pooled connection must not keep the lock
        raise
    finally:
        conn.close()


def sweep(conn) -> list[str]:
    """Drop the staged tables of imports that are gone (their lock is free); returns their names.

    Call in a transaction: a lock it takes to check is the transaction's.  Not PostgreSQL: none."""
    if conn.dialect.name != "postgresql":
        return []
    names = staged_tables(conn)
    gone = []
    for token in sorted({_token(name) for name in names}):
        if conn.execute(text("SELECT pg_try_advisory_xact_lock(:c, :t)"), {"c": LOCK_CLASS, "t": token}).scalar():
            gone += [name for name in names if _token(name) == token]
    _drop(conn, gone)
    return gone


def _token(name: str) -> int:
    return int(name[len(PREFIX):].split("_", 1)[0])


def _drop(conn, names: list[str]) -> None:
    if names:
        conn.exec_driver_sql(f"DROP TABLE IF EXISTS {', '.join(names)}")


def drop(db, name: str) -> None:
    """Drop a staged batch the writer did not link (its games were all in the book)."""
    with db.begin() as conn:
        _drop(conn, [name, f"{name}_next_stats"])


def link(conn, name: str, rows: int, base: int) -> int:
    """Make the staged batch ``name`` a new level-0 segment whose codes read ``base`` (the
    first game id, shifted) more than stored; returns its id.  Call in the write
    transaction of its games."""
    segment = segment_files.new_segment_id(conn)
    table = rows_table(segment)
    conn.exec_driver_sql(f"ALTER TABLE {name} RENAME TO {table}")
    conn.exec_driver_sql(f"ALTER INDEX pk_{name} RENAME TO pk_{table}")
    conn.exec_driver_sql(f"CREATE VIEW positions_{segment} AS SELECT key, code + {int(base)} AS code FROM {table}")
    conn.exec_driver_sql(f"ALTER TABLE {name}_next_stats RENAME TO next_stats_{segment}")
    conn.exec_driver_sql(f"ALTER INDEX {name}_next_stats_pkey RENAME TO next_stats_{segment}_pkey")
    conn.execute(insert(schema.segments).values(id=segment, level=0, rows=rows))
    return segment


def drop_games(conn, name: str, games: np.ndarray, years: np.ndarray) -> int:
    """Take the games numbered ``games`` (from 0) out of the staged batch ``name``: their rows
    deleted, their counts taken out of its next-move statistics; returns how many rows went.
    ``years[i]``: the year of the batch's game i (``nextmoves.NO_YEAR``: none).

    ``segment_files.drop_games`` for a staged table: the writer does it when a batch still
    in another parser's hands brought some of this batch's games (the others keep their
    numbers, so their ids leave a gap)."""
    found = conn.execute(text(f"DELETE FROM {name} WHERE code >> {scheme.GAME_SHIFT} "
                              "IN (SELECT unnest(CAST(:g AS BIGINT[]))) RETURNING key, code"),
                         {"g": [int(game) for game in games]}).all()
    if not found:
        return 0
    rows = np.array([tuple(row) for row in found], dtype=np.int64)
    removed = nextmoves.from_codes(rows[:, 0], rows[:, 1], lambda _low, _high: (0, years), 1)
    stored = conn.execute(text(f"SELECT key, stats FROM {name}_next_stats WHERE key IN "
                               "(SELECT unnest(CAST(:k AS BIGINT[])))"),
                          {"k": np.unique(removed.keys).tolist()}).all()
    updates, deletes = nextmoves.take_out([(int(key), bytes(stats)) for key, stats in stored], removed)
    if updates:
        conn.execute(text(f"UPDATE {name}_next_stats SET stats = :s WHERE key = :k"),
                     [{"k": key, "s": stats} for key, stats in updates])
    if deletes:
        conn.execute(text(f"DELETE FROM {name}_next_stats WHERE key IN (SELECT unnest(CAST(:k AS BIGINT[])))"),
                     {"k": deletes})
    return len(found)
