"""Merges of a SQLite book's segment files (``book.storage.position_index.segment_files``), done outside transactions.

A merge reads and writes files only (``segment_files.merge``), so another process's import
goes on meanwhile; one short write transaction then links its file in, and the parts' files
go once it has committed.  ``intake`` calls these (the import's merges, ``Book.compact``'s),
each link in a transaction of the write lock it is handed; the importer's ``Merger`` runs
``segment_files.merge`` in a process of its own.  ``Book.reclaim`` gives back
the pages that merges of segments in the book's own file freed.
"""

from __future__ import annotations

import os

from fuseki.book.storage.dialect import book_file
from fuseki.book.storage.position_index import segment_files, segments


def next_merge(db, announce=None):
    """(parts, level, sources, folder, the book's file) of the next merge ``segment_files.merge``
    is to make in the book on ``db`` (the lowest full level's oldest segments), announced
    (``announce(segments, rows)``); None: no level is full."""
    with db.connect() as conn:
        plan = segments.full_level(conn)
        if plan is None:
            return None
        parts, level = plan
        sources, folder = segments.merge_sources(conn, parts), segment_files.book_folder(conn)
        path = book_file(conn)
    if announce is not None:
        announce(len(parts), sum(part.rows for part in parts))
    return parts, level, sources, folder, path


def link_merge(writing, parts, level: int, name: str, rows: int) -> bool:
    """Link in a merged segment file (``segment_files.merge`` of ``parts``) in a transaction of
    ``writing()`` (the book's write lock: ``intake.Writing``), then remove the parts' files;
    False (and the file removed) if another writer merged a part first."""
    with writing() as conn:
        folder = segment_files.book_folder(conn)
        replaced = segments.link_merged(conn, parts, name, rows, level)
    segment_files.remove(folder, [name] if replaced is None else replaced)
    return replaced is not None


def fold_files(db, writing) -> None:
    """``compact`` of a book with segment files: every segment merged into one file, which then
    moves into the book's own file (a book in one file, as the built-in book ships).

    Raises RuntimeError if another process merged the book's segments meanwhile."""
    with db.connect() as conn:
        parts, folder = segments.live(conn), segment_files.book_folder(conn)
        sources = segments.merge_sources(conn, parts)
        level = max(part.level for part in parts)
        path = book_file(conn)
    name, rows = segment_files.merge(sources, path, folder, os.getpid())
    if not link_merge(writing, parts, level, name, rows):
        raise RuntimeError("another process changed the book's segments during compact: run it again")
    with db.connect() as conn:
        merged, = segment_files.in_files(conn)
    raw = db.raw_connection()
    try:
        segment_files.fold_in(raw.driver_connection, folder, merged)
    finally:
        raw.close()
    segment_files.remove(folder, [merged.name])
    try:
        os.rmdir(folder)
    except OSError:  # not empty: another importer's files
        pass
