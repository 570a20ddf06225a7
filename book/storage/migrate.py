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

The positions index's steps (2 -> 3, 4 -> 5) are its own (``position_index.upgrades``, through
``intake.upgrade``).  ``Book.open`` runs ``upgrade`` in its writer's transaction, holding the write lock, before it
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

from sqlalchemy import inspect, select

from fuseki.book.storage import pattern_events, pattern_files, schema, scheme
from fuseki.book.storage.position_index import intake
from fuseki.book.storage.scheme import MIGRATES_FROM  # the schema versions upgrade brings to SCHEMA_VERSION


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
    intake.upgrade(conn, found)  # the positions index's tables and files (2 -> 3, 4 -> 5)
    _pattern_index_once(conn)
    conn.execute(schema.meta.update().where(schema.meta.c.name == "schema_version")
                 .values(value=scheme.SCHEMA_VERSION))
    return True


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
