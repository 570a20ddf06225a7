"""Bring a book written by an older fuseki to this schema when it is opened.

``schema.SCHEMA_VERSION`` 2 -> 3: the segments' next-move statistics were called summaries.
Their tables were ``summary_<id>`` in the book's own database (with PostgreSQL's primary-key
index ``summary_<id>_pkey``) and ``summary`` in each segment file
(``book.storage.segment_files``).  Version 3 names them ``next_stats_<id>`` and ``next_stats``,
the one name of the concept (``book.storage.nextmoves``).  The rows and bytes are the same.

3 -> 4: beside a SQLite book on disk the pattern index is stored once, in the files of
``book.storage.pattern_files``; version 3 kept every game's events in the table
``pattern_events`` and a second copy in a whole-file map (``BOOK-patterns/<size>.map`` and the
meta row ``pattern_map_<size>``).  The upgrade moves the table's entries into the files
(``pattern_events.move_to_files``) and removes the map: an older fuseki would find an empty
table and answer every pattern search with no game, so it must refuse a version-4 book.  A
PostgreSQL book or one in memory keeps its table: only the version row changes.

``Book.open`` runs ``upgrade`` in its writer's transaction, holding the write lock, before it
checks the versions.  A book opened read-only that needs it is opened once for writing first.
The segment files are renamed first, each in a transaction of its own, and one already
renamed is left as it is.  The pattern files are appended to in the book's transaction (bytes
past what the book commits are cut off by the next append).  The version row moves last,
with the book's own tables.  So an upgrade cut short leaves a book that says "2" or "3", and
the next open finishes it.  A statistics book has no segments and no pattern index: it is
read at version 2, 3 or 4 as it is (``statbook.open_file``).
"""

from __future__ import annotations

import os
import sqlite3

from sqlalchemy import inspect, select, text

from fuseki.book.storage import pattern_events, pattern_files, schema, segment_files

MIGRATES_FROM = ("2", "3")  # the schema versions upgrade brings to schema.SCHEMA_VERSION

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
    """Bring a version-2 or -3 book to this version (see the module docstring), in the
    caller's write transaction; True when there was anything to do."""
    found = version(conn)
    if found not in MIGRATES_FROM:
        return False
    if found == "2":
        _rename_next_stats(conn)
    _pattern_index_once(conn)
    conn.execute(schema.meta.update().where(schema.meta.c.name == "schema_version")
                 .values(value=schema.SCHEMA_VERSION))
    return True


def _rename_next_stats(conn) -> None:
    """2 -> 3: ``summary`` -> ``next_stats`` in the segment files, then in the book."""
    folder = segment_files.book_folder(conn)
    for segment in segment_files.in_files(conn):
        _rename_in_file(os.path.join(folder, segment.name))
    for old, segment_id in conn.execute(_OLD_TABLES[conn.dialect.name]).all():
        new = f"next_stats_{int(segment_id)}"
        conn.exec_driver_sql(f"ALTER TABLE {old} RENAME TO {new}")
        if conn.dialect.name == "postgresql":
            conn.exec_driver_sql(f"ALTER INDEX IF EXISTS {old}_pkey RENAME TO {new}_pkey")


def _pattern_index_once(conn) -> None:
    """3 -> 4: the table's pattern-index entries into the files; the old maps removed."""
    if not inspect(conn).has_table(pattern_events.pattern_events.name):
        return
    pattern_events.move_to_files(conn)
    conn.execute(schema.meta.delete().where(schema.meta.c.name.like("pattern\\_map\\_%", escape="\\")))
    folder = pattern_files.folder(conn)
    if folder is not None and os.path.isdir(folder):
        for name in os.listdir(folder):
            if name.endswith((".map", ".map.tmp")):
                os.remove(os.path.join(folder, name))


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
