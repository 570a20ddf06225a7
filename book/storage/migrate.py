"""Bring a book written by an older fuseki to this schema when it is opened.

``scheme.SCHEMA_VERSION`` 2 -> 3: the segments' next-move statistics were called summaries.
Their tables were ``summary_<id>`` in the book's own database (with PostgreSQL's primary-key
index ``summary_<id>_pkey``) and ``summary`` in each segment file
(``book.storage.position_index.segment_files``).  Version 3 names them ``next_stats_<id>`` and ``next_stats``,
the one name of the concept (``book.storage.position_index.nextmoves``).  The rows and bytes are the same.

3 -> 4: beside a SQLite book on disk the pattern index is stored once, in the files of
``book.storage.pattern_files``; version 3 kept every game's events in the table
``pattern_events`` and a second copy in a whole-file map (``BOOK-patterns/<size>.map`` and the
meta row ``pattern_map_<size>``).  The upgrade moves the table's entries into the files
(``pattern_events.move_to_files``) and removes the map: an older fuseki would find an empty
table and answer every pattern search with no game, so it must refuse a version-4 book.  A
PostgreSQL book or one in memory keeps its table: only the version row changes.

4 -> 5: a segment file holds its rows and next-move statistics as flat sorted arrays
(``book.storage.position_index.packed_segment``: 14 bytes a row) where version 4 kept a SQLite database of
the tables ``positions`` and ``next_stats`` (20 bytes a row).  Each file is written again in
the new form under a scratch name that then replaces it (``os.replace``: a reader that had
opened the old one keeps it), so a file is whole in one form or the other, and one already
packed is left as it is.  An older fuseki cannot read the new files, so it must refuse a
version-5 book.

``Book.open`` runs ``upgrade`` in its writer's transaction, holding the write lock, before it
checks the versions.  A book opened read-only that needs it is opened once for writing first.
The segment files are renamed first, each in a transaction of its own, and one already
renamed is left as it is.  The pattern files are appended to in the book's transaction (bytes
past what the book commits are cut off by the next append).  The version row moves last,
with the book's own tables.  So an upgrade cut short leaves a book that says "2" or "3", and
the next open finishes it.  A statistics book has no segments and no pattern index: it is
read at version 2, 3 or 4 as it is (``statistics_book.open_index``).
"""

from __future__ import annotations

import os
import sqlite3

from sqlalchemy import inspect, select, text

from fuseki.book.storage import pattern_events, pattern_files, schema, scheme
from fuseki.book.storage.connect import sqlite_uri
from fuseki.book.storage.position_index import nextmoves, packed_segment, segment_files
from fuseki.book.storage.position_index.sqlite_image import MappedRows
from fuseki.book.storage.scheme import MIGRATES_FROM  # the schema versions upgrade brings to SCHEMA_VERSION

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
    """Bring a version-2, -3 or -4 book to this version (see the module docstring), in the
    caller's write transaction; True when there was anything to do."""
    found = version(conn)
    if found not in MIGRATES_FROM:
        return False
    if found == "2":
        _rename_next_stats(conn)
    _pattern_index_once(conn)
    _pack_segment_files(conn)
    conn.execute(schema.meta.update().where(schema.meta.c.name == "schema_version")
                 .values(value=scheme.SCHEMA_VERSION))
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


def _pack_segment_files(conn) -> None:
    """4 -> 5: each segment file that is a SQLite database written again as a packed one."""
    folder = segment_files.book_folder(conn)
    rows = dict(conn.execute(select(schema.segments.c.id, schema.segments.c.rows)).all())
    for segment in segment_files.in_files(conn):
        _pack_file(os.path.join(folder, segment.name), int(rows[segment.id]))


def _pack_file(path: str, rows: int) -> None:
    """One version-4 segment file (a SQLite database of ``positions`` and ``next_stats``) of ``rows``
    rows as a packed one, in its place; nothing if it is packed already.  Reads a key range at a
    time, from the mapped pages: version 4 wrote files past 1 GiB with a row on SQLite's lock-byte
    page (``sqlite_image.LOCK_PAGE``), which SQLite reads as malformed.  Raises ValueError when
    the file holds another number of rows."""
    if packed_segment.is_packed(path):
        return
    scratch = segment_files.scratch_path(os.path.dirname(path), "packing")
    connection = sqlite3.connect(sqlite_uri(path, mode="ro", immutable=1), uri=True)
    try:
        has_stats = connection.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'next_stats'").fetchone()
        stats = nextmoves.from_stored(connection.execute("SELECT key, stats FROM next_stats ORDER BY key").fetchall()
                                      if has_stats else [])
        mapped = MappedRows(path, "positions")
        try:
            writer = packed_segment.Writer(scratch, rows)
            try:
                for low, high in segment_files.key_ranges(max(1, rows // segment_files.MERGE_ROWS_PER_STEP)):
                    writer.add(*mapped.between(low, high))
                writer.finish(stats)
            finally:
                writer.close()
        finally:
            mapped.close()
        os.replace(scratch, path)
    finally:
        connection.close()
        segment_files.remove(os.path.dirname(path), [os.path.basename(scratch)])
