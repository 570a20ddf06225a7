"""Bring a book written by an older fuseki to this schema when it is opened.

``schema.SCHEMA_VERSION`` 2 -> 3: the segments' next-move statistics were called summaries.
Their tables were ``summary_<id>`` in the book's own database (with PostgreSQL's primary-key
index ``summary_<id>_pkey``) and ``summary`` in each segment file
(``book.storage.segment_files``).  Version 3 names them ``next_stats_<id>`` and ``next_stats``,
the one name of the concept (``book.storage.nextmoves``).  Nothing else changed: the rows and
bytes are the same.

``Book.open`` runs ``upgrade`` in its writer's transaction, holding the write lock, before it
checks the versions.  A book opened read-only that needs it is opened once for writing first.
The segment files are renamed first, each in a transaction of its own, and one already
renamed is left as it is.  The version row moves last, with the book's own tables.  So an
upgrade cut short leaves a book that says "2", and the next open finishes it.  A statistics
book has no segments: it is read at version 2 or 3 as it is (``statbook.open_file``).
"""

from __future__ import annotations

import os
import sqlite3

from sqlalchemy import inspect, select, text

from fuseki.book.storage import schema, segment_files

MIGRATES_FROM = ("2",)  # the schema versions upgrade brings to schema.SCHEMA_VERSION

_OLD_TABLES = {  # (old name, id) of the tables summary_<id>
    "sqlite": text("SELECT name, substr(name, 9) FROM sqlite_master WHERE type = 'table' AND name GLOB 'summary_*'"),
    "postgresql": text("SELECT tablename, substr(tablename, 9) FROM pg_tables WHERE schemaname = current_schema() "
                       "AND tablename LIKE 'summary!_%' ESCAPE '!'"),
}


def version(conn) -> str | None:
    """The book's schema version (None: no meta table or no row: a new database)."""
    if not inspect(conn).has_table("meta"):
        return None
    return conn.execute(select(schema.meta.c.value).where(schema.meta.c.name == "schema_version")).scalar()


def pending(conn) -> bool:
    """True when the book is of a version ``upgrade`` brings to this one."""
    return version(conn) in MIGRATES_FROM


def upgrade(conn) -> bool:
    """Rename the next-move statistics of a version-2 book (see the module docstring), in the
    caller's write transaction; True when there was anything to do."""
    if not pending(conn):
        return False
    folder = segment_files.book_folder(conn)
    for segment in segment_files.in_files(conn):
        _rename_in_file(os.path.join(folder, segment.name))
    for old, segment_id in conn.execute(_OLD_TABLES[conn.dialect.name]).all():
        new = f"next_stats_{int(segment_id)}"
        conn.exec_driver_sql(f"ALTER TABLE {old} RENAME TO {new}")
        if conn.dialect.name == "postgresql":
            conn.exec_driver_sql(f"ALTER INDEX IF EXISTS {old}_pkey RENAME TO {new}_pkey")
    conn.execute(schema.meta.update().where(schema.meta.c.name == "schema_version")
                 .values(value=schema.SCHEMA_VERSION))
    return True


def _rename_in_file(path: str) -> None:
    """``summary`` -> ``next_stats`` in one segment file (nothing if it has none: done before)."""
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute("BEGIN IMMEDIATE")
        if connection.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'summary'").fetchone():
            connection.execute("ALTER TABLE summary RENAME TO next_stats")
        connection.execute("COMMIT")
    finally:
        connection.close()
