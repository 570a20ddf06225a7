"""The rows of busy positions, stored together: one blob of codes per position.

A position many games reached (the empty board: every game) keeps one row per game in each
segment (``book.storage.position_index.segments``).  A next-move query without filters reads the segments'
next-move statistics instead (``book.storage.position_index.nextmoves``), but a list of its games or a filter on the
players or the headers needs every row: 366,535 of them for the empty board of the Tygem
corpus, 42-71 ms read from 27 segments, and about 120 ns a row more as the book grows.  A
process keeps them once read (``SegmentIndex.busy``), but each new process, and each position
a server has not yet seen, paid the read.

So the import stores, for every position of at least ``BUSY_ROWS`` games, all its codes
(sorted: game id, then move number) as one blob in the table ``busy_rows``, and the meta row
``busy_rows_through`` says which book version (largest game id) they are: a reader uses a
blob only when that is the version its snapshot reads, in the same read transaction, and
otherwise reads the segments as before (games added since, by an import that did not store
them again).  Segment merges move rows without changing them: the blobs stay right.

Which positions: those whose games the segments' next-move statistics count at least ``BUSY_ROWS``
times (next-move statistics counts a key where at least ``nextmoves.GAMES`` of a segment's games
reached it; a position that misses the bar in every segment is read as before).

Cost: 8 bytes a code, 2.9 M codes for the 773 busy positions of 366,535 games (23 MB, 63
bytes a game, docs/limits.md), written in about a second at the end of ``fuseki import``.
"""

from __future__ import annotations

import threading

import numpy as np
from sqlalchemy import BigInteger, Column, LargeBinary, MetaData, Table, select

from fuseki.book.storage import schema
from fuseki.book.storage.position_index import nextmoves, segments

BUSY_ROWS = 500  # a position of this many games or more is busy: its rows are stored (and kept, SegmentIndex.busy)
THROUGH = "busy_rows_through"  # the meta row: the book version (largest game id) the blobs are of

_metadata = MetaData()
table = Table("busy_rows", _metadata, Column("key", BigInteger, primary_key=True, autoincrement=False),
              Column("codes", LargeBinary, nullable=False), sqlite_with_rowid=False)


def store(book, least: int | None = None) -> int:
    """Store the rows of every busy position (at least ``least`` games, default ``BUSY_ROWS``)
    of the book as it is now, replacing the earlier ones; the number of positions stored."""
    least = BUSY_ROWS if least is None else least
    with book.writing() as conn:
        snap = segments.snapshot(conn)
        keys = _busy_keys(conn, snap, least)
        table.create(conn, checkfirst=True)
        conn.execute(table.delete())
        for key in keys.tolist():
            codes = np.sort(segments.codes(conn, snap, key))
            conn.execute(table.insert().values(key=key, codes=codes.astype("<i8").tobytes()))
        conn.execute(schema.meta.delete().where(schema.meta.c.name == THROUGH))
        conn.execute(schema.meta.insert().values(name=THROUGH, value=str(snap.version)))
    return len(keys)


def _busy_keys(conn, snap, least: int) -> np.ndarray:
    """The signed keys the next-move statistics of the snapshot's segments count at least ``least`` games of."""
    parts = [segments.stats_of(conn, segment) for segment in
             (*(f.id for f in snap.files), *snap.with_stats)]
    parts = [part for part in parts if part is not None and len(part)]
    if not parts:
        return np.empty(0, dtype=np.int64)
    keys = np.concatenate([part.keys for part in parts])
    games = np.concatenate([part.counts[:, nextmoves.COUNT] for part in parts]).astype(np.int64)
    distinct, where = np.unique(keys, return_inverse=True)
    return distinct[np.bincount(where, weights=games) >= least]


class StoredRows:
    """A book's reader of the stored blobs: which keys have one, per book version (read again
    when the version changes, or while there is none of it), and a key's codes in the
    caller's read transaction."""

    def __init__(self):
        self._lock = threading.Lock()
        self._version = -1
        self._keys: frozenset[int] = frozenset()

    def codes(self, conn, snap, key: int) -> np.ndarray | None:
        """The codes of the signed ``key`` (sorted) when a blob of the snapshot's version holds
        them, else None (read the segments)."""
        if snap.version != self._version:
            self._load(conn, snap.version)
        if key not in self._keys:
            return None
        through, blob = conn.execute(select(
            select(schema.meta.c.value).where(schema.meta.c.name == THROUGH).scalar_subquery(),
            select(table.c.codes).where(table.c.key == key).scalar_subquery())).one()
        if blob is None or through != str(snap.version):
            return None
        return np.frombuffer(bytes(blob), dtype="<i8").astype(np.int64, copy=False)

    def _load(self, conn, version: int) -> None:
        """The keys of the blobs of ``version``; none while the blobs are of another (asked
        again at the next read: they may be stored for this version later)."""
        keys: frozenset[int] = frozenset()
        through = conn.execute(select(schema.meta.c.value).where(schema.meta.c.name == THROUGH)).scalar()
        current = through == str(version)
        if current:
            keys = frozenset(int(k) for k in conn.execute(select(table.c.key)).scalars())
        with self._lock:  # a book with no busy position asks no more until it changes
            self._version, self._keys = (version if current else -1), keys
