"""The pattern index as a search scans it: mapped from the files beside a SQLite book.

A pattern search needs, for every indexed game of a board size: its events, the points it
ever held a stone of each colour (``engine.core.replay.ever_held``) and its winner.  Beside a
SQLite book on disk they are files the import appends to (``book.storage.pattern_files``),
and ``load`` maps them: a new process starts its first search at once instead of reading
rows and computing bit sets (3 s on 366,535 games, ``bench/patterns.py --processes``).

- Entries the table ``pattern_events`` still holds (a PostgreSQL book or one in memory: all;
  beside files, those of a book an older fuseki imported and the games ``index.update``
  replayed) are read and computed, and added to what the files give.  A process that may
  write the book then moves them into the files and deletes them from the table, in one
  transaction (``move_waiting``), so the next process maps them and the index is stored once.
- Files the book names that are missing or not its own (``pattern_files.Missing``: a book
  copied without its ``-patterns`` folder) are written again from the stored games when the
  book may be written, with a progress line; a read-only book then refuses the search and
  says why.
"""

from __future__ import annotations

import sys

import numpy as np
from sqlalchemy import select

from fuseki.book.analysis.patterns import index
from fuseki.book.storage import pattern_files
from fuseki.book.storage.connect import BookError
from fuseki.book.storage.index_state import indexed_through
from fuseki.book.storage.pattern_events import move_to_files, pattern_events, read_table, set_through
from fuseki.book.storage.pattern_files import IndexedGames
from fuseki.engine.core.replay import ever_held


def load(book, size: int) -> IndexedGames:
    """The book's indexed games of ``size``: the files mapped, and what the table still holds."""
    try:
        with book.db.connect() as conn:
            through = indexed_through(conn)
            stored = pattern_files.read(conn, size)
            waiting = _from_table(conn, size, stored.through if stored is not None else 0, through)
    except pattern_files.Missing as exc:
        if book.readonly:
            raise BookError(f"{exc}; open the book once with write access to index its games again") from None
        rebuild(book, str(exc))
        return load(book, size)
    if len(waiting.game_ids) and not book.readonly and pattern_files.folder_of_book(book) is not None:
        move_waiting(book)
    if stored is None:
        return waiting
    if not len(waiting.game_ids):
        return stored._replace(through=through)
    return _joined(stored, waiting)


def sizes(book) -> list[int]:
    """The board sizes the index holds games of."""
    with book.db.connect() as conn:
        found = set(pattern_files.sizes(conn))
        found.update(int(s) for s in conn.execute(select(pattern_events.c.size).distinct()).scalars())
    return sorted(found)


def refresh(book) -> None:
    """Move what the table holds into the files (the import calls this after indexing its
    games, so the next process maps them all)."""
    if not book.readonly and pattern_files.folder_of_book(book) is not None:
        move_waiting(book)


def move_waiting(book) -> int:
    """Move the table's entries up to the index's mark into the files, in one transaction of
    the book's writer (``pattern_events.move_to_files``); returns how many games moved."""
    with book.writing() as conn:
        return move_to_files(conn)


def rebuild(book, why: str) -> None:
    """Index every game again from its stored SGF, into new files (their old ones are lost)."""
    print(f"fuseki: {why}: indexing the book's games again", file=sys.stderr)
    with book.writing() as conn:
        for size in pattern_files.sizes(conn):
            pattern_files.forget(conn, size)
        conn.execute(pattern_events.delete())
        set_through(conn, 0)
    index.update(book, progress=sys.stderr)
    move_waiting(book)


def _from_table(conn, size: int, after: int, through: int) -> IndexedGames:
    """The table's indexed games of ``size`` with ids in (after, through], with their bit sets."""
    entries = read_table(conn, size, after, through)
    return IndexedGames(entries.game_ids, entries.events, entries.offsets,
                        ever_held(entries.events, entries.offsets, size), entries.winners, through)


def _joined(older: IndexedGames, newer: IndexedGames) -> IndexedGames:
    offsets = np.concatenate([older.offsets[:-1], newer.offsets + older.offsets[-1]])
    return IndexedGames(np.concatenate([older.game_ids, newer.game_ids]),
                        np.concatenate([older.events, newer.events]), offsets,
                        np.concatenate([older.held, newer.held]),
                        np.concatenate([older.winners, newer.winners]), newer.through)
