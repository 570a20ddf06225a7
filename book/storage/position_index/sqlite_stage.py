"""Where a SQLite book's writer stages a batch's rows: an in-memory database attached to every
connection that may write (``connect`` attaches it; ``segments`` fills it and copies from it).

The PostgreSQL side, tables the parsers fill, is ``pg_stage``.
"""

from __future__ import annotations

import sqlite3
from functools import lru_cache

from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.schema import CreateTable

from fuseki.book.storage.position_index import sqlite_image
from fuseki.book.storage.schema import staging_table

# SQLite: a batch's rows come to SQLite as a database image (book.storage.position_index.sqlite_image) opened as the
# in-memory database STAGE, attached to every connection that may write (attach_stage); the
# image's table holds them in the staging table's definition, so SQLite's transfer copies them.
# Where the sqlite3 module has no deserialize (a SQLite built without it), they go through a
# temporary table instead, 250 rows an INSERT: the same segment, slower (bench/book.py prints the
# writer's CPU per game).
STAGE = "fuseki_import"
IMAGES = hasattr(sqlite3.Connection, "deserialize")  # whether SQLite takes rows as an image here
STAGE_DDL = str(CreateTable(staging_table).compile(dialect=sqlite_dialect.dialect())).strip()


def attach_stage(dbapi_connection) -> None:
    """Attach STAGE to a new SQLite connection that may write (outside any transaction)."""
    if IMAGES:
        dbapi_connection.execute(f"ATTACH ':memory:' AS {STAGE}")


def clear_stage(dbapi_connection) -> None:
    """Give back the memory of the rows staged by the last write (after its commit)."""
    if IMAGES and has_stage(dbapi_connection):
        dbapi_connection.deserialize(empty_stage(), name=STAGE)


def has_stage(dbapi_connection) -> bool:
    return any(name == STAGE for _seq, name, _file in dbapi_connection.execute("PRAGMA database_list"))


@lru_cache(maxsize=1)
def empty_stage() -> bytes:
    return sqlite_image.empty_image(STAGE_DDL)
