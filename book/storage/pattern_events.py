"""Where the pattern index's games are written: each game of the book as its list of board events.

A game's entry is its setup stones, moves and captures as ``engine.core.replay.replay_events``
gives them (uint16 each, about 2 bytes a move).  The meta row ``pattern_events_through``
(``THROUGH``) is the game id up to which the index is complete: every game with an id up to
it has its entry, in exactly one of two places:

- beside a SQLite book on disk, the files of ``book.storage.pattern_files`` (the index's one
  copy there, mapped by each search);
- the table ``pattern_events(game_id, size, events)``: every entry of a PostgreSQL book or a
  book in memory; beside files, only entries not moved into them yet (those of a book an
  older fuseki imported, and the games ``index.update`` replays), which
  ``book.analysis.patterns.index_map`` moves there.

Two writers: the import's writer, with each batch's games in the batch's own transaction
(the parsers made the events from the games they had just replayed: ``add``), and
``book.analysis.patterns.index.update``, which replays the stored SGF of games that have no
entry (a book imported before the import wrote events).  This lives in storage so that the
pipeline writes the index without importing the patterns layer beside it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from sqlalchemy import select

from fuseki.book.storage import dialect, pattern_files, schema
from fuseki.book.storage.index_state import THROUGH, indexed_through, waiting

pattern_events = schema.pattern_events  # made with the book's other tables (schema.create)


def create(conn) -> None:
    """The table, if the book lacks it (a book last opened for writing before it was a book table)."""
    pattern_events.create(conn, checkfirst=True)


def set_through(conn, game_id: int) -> None:
    """Say the index is complete up to ``game_id``."""
    conn.execute(schema.meta.delete().where(schema.meta.c.name == THROUGH))
    conn.execute(schema.meta.insert().values(name=THROUGH, value=str(game_id)))


def add(conn, rows: list[tuple[int, int, bytes, int | None]], before: int) -> None:
    """Write the (game_id, size, events, winner) ``rows`` of games just written after
    ``before`` (the book's largest game id before them), in their transaction; ids ascending.

    Beside a SQLite book on disk they go to the end of the files while the index is complete
    and the table holds no entry waiting to be moved (a book this fuseki made: always), else
    to the table.  The mark moves to the last of them only where the index was complete up to
    ``before``: games an older import left unindexed keep it where it is, and ``index.update``
    replays them (and only them) later.  An import's one writer commits its batches in id
    order, so after each commit the mark says the truth whether or not the import ends.
    """
    if not rows:
        return
    complete = indexed_through(conn) >= before
    last = rows[-1][0]
    if complete and pattern_files.folder(conn) is not None and not waiting(conn):
        for size in sorted({row[1] for row in rows}):
            mine = [row for row in rows if row[1] == size]
            events = [np.frombuffer(row[2], dtype=np.uint16) for row in mine]
            pattern_files.append(conn, size, np.array([row[0] for row in mine], dtype=np.int64),
                                 np.concatenate(events), np.array([len(e) for e in events], dtype=np.int64),
                                 np.array([row[3] or 0 for row in mine], dtype=np.int8), last)
    else:
        dialect.insert_rows(conn, pattern_events, [row[:3] for row in rows])
    if complete:
        set_through(conn, last)


class Entries(NamedTuple):
    """Indexed games of one board size, ids ascending: game i's events are
    ``events[offsets[i]:offsets[i + 1]]``; ``winners[i]``: 0 none, 1 Black, 2 White."""

    game_ids: np.ndarray
    events: np.ndarray
    offsets: np.ndarray
    winners: np.ndarray


def read_table(conn, size: int, after: int, through: int) -> Entries:
    """The table's entries of ``size`` with ids in (after, through], and their games' winners."""
    cursor = conn.connection.dbapi_connection.cursor()
    placeholder = dialect.placeholder(conn)
    cursor.execute(f"SELECT game_id, events FROM pattern_events WHERE size = {placeholder} "
                   f"AND game_id > {placeholder} AND game_id <= {placeholder} ORDER BY game_id",
                   (size, int(after), int(through)))
    ids, blobs = [], []
    for game_id, blob in cursor:
        ids.append(game_id)
        blobs.append(bytes(blob))
    cursor.close()
    game_ids = np.array(ids, dtype=np.int64)
    offsets = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum([len(b) // 2 for b in blobs], out=offsets[1:])
    # a copy, not a view of the bytes: the scan's kernels take writable arrays
    events = np.frombuffer(b"".join(blobs), dtype=np.uint16).copy() if blobs else np.empty(0, dtype=np.uint16)
    winners = np.zeros(len(ids), dtype=np.int8)
    if ids:
        found = np.array([tuple(row) for row in conn.execute(
            select(schema.games.c.id, schema.games.c.winner).where(
                schema.games.c.id > after, schema.games.c.id <= through, schema.games.c.winner.isnot(None)))],
            dtype=np.int64).reshape(-1, 2)
        at = np.searchsorted(game_ids, found[:, 0])
        inside = at < len(game_ids)
        inside[inside] = game_ids[at[inside]] == found[inside, 0]
        winners[at[inside]] = found[inside, 1]
    return Entries(game_ids, events, offsets, winners)


def move_to_files(conn) -> int:
    """Move the table's entries up to the mark into the files beside a SQLite book on disk, and
    delete them from the table, in the caller's write transaction; returns how many games moved.
    Entries above the mark (games an older import left unindexed below them) stay."""
    if pattern_files.folder(conn) is None:
        return 0
    through = indexed_through(conn)
    moved = 0
    for size in [int(s) for s in conn.execute(select(pattern_events.c.size).distinct()).scalars()]:
        stored = pattern_files.state(conn, size)
        entries = read_table(conn, size, stored["through"] if stored else 0, through)
        if len(entries.game_ids):
            pattern_files.append(conn, size, entries.game_ids, entries.events, np.diff(entries.offsets),
                                 entries.winners, through)
            moved += len(entries.game_ids)
        conn.execute(pattern_events.delete().where(pattern_events.c.size == size,
                                                   pattern_events.c.game_id <= through))
    return moved


def move_to_table(conn) -> list[str]:
    """Put the files' entries back into the table and forget the files, in the caller's write
    transaction (``Book.compact``: a book to ship is one file); returns the files to remove
    once it commits."""
    where = pattern_files.folder(conn)
    gone = []
    for size in pattern_files.sizes(conn):
        stored = pattern_files.read(conn, size)
        ends = stored.offsets.tolist()
        rows = [(game_id, size, stored.events[ends[i]:ends[i + 1]].tobytes())
                for i, game_id in enumerate(stored.game_ids.tolist())]
        for start in range(0, len(rows), 10_000):
            dialect.insert_rows(conn, pattern_events, rows[start:start + 10_000])
        pattern_files.forget(conn, size)
        gone += pattern_files.paths(where, size)
    return gone
