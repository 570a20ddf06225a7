"""The positions index's part of an older book's upgrade (``book.storage.migrate`` says when and why).

2 -> 3: the segments' next-move statistics, ``summary_<id>`` tables (with PostgreSQL's
primary-key index ``summary_<id>_pkey``) and the table ``summary`` of each segment file,
renamed ``next_stats_<id>`` and ``next_stats``.  4 -> 5: each segment file that is a SQLite
database of ``positions`` and ``next_stats`` written again as a packed one
(``packed_segment``).  The segment files change first, each on its own, and one already done
is left as it is; the book's tables change in the caller's write transaction.
"""

from __future__ import annotations

import os
import sqlite3

from sqlalchemy import select, text

from fuseki.book.storage import schema
from fuseki.book.storage.connect import sqlite_uri
from fuseki.book.storage.position_index import nextmoves, packed_segment, segment_files
from fuseki.book.storage.position_index.sqlite_image import MappedRows

_OLD_TABLES = {  # (old name, id) of the tables summary_<id>
    "sqlite": text("SELECT name, substr(name, 9) FROM sqlite_master WHERE type = 'table' AND name GLOB 'summary_*'"),
    "postgresql": text("SELECT tablename, substr(tablename, 9) FROM pg_tables WHERE schemaname = current_schema() "
                       "AND tablename LIKE 'summary!_%' ESCAPE '!'"),
}


def upgrade(conn, found: str) -> None:
    """The index of a book of schema version ``found`` ("2", "3" or "4") brought to this one."""
    if found == "2":
        rename_next_stats(conn)
    pack_segment_files(conn)


def rename_next_stats(conn) -> None:
    """2 -> 3: ``summary`` -> ``next_stats`` in the segment files, then in the book."""
    folder = segment_files.book_folder(conn)
    for segment in segment_files.in_files(conn):
        _rename_in_file(os.path.join(folder, segment.name))
    for old, segment_id in conn.execute(_OLD_TABLES[conn.dialect.name]).all():
        new = f"next_stats_{int(segment_id)}"
        conn.exec_driver_sql(f"ALTER TABLE {old} RENAME TO {new}")
        if conn.dialect.name == "postgresql":
            conn.exec_driver_sql(f"ALTER INDEX IF EXISTS {old}_pkey RENAME TO {new}_pkey")


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


def pack_segment_files(conn) -> None:
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
