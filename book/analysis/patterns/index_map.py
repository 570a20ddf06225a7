"""The pattern index as one file per board size, mapped by a search instead of read.

A pattern search needs, for every indexed game of a board size: its events (the
``pattern_events`` table, ``book.analysis.patterns.index``), the points it ever held a stone of each
colour (``scan.ever_held``) and its winner.  Read from the book and computed, they cost each
new process about 3 s on 366,535 games before its first search (events 1.0 s, winners 0.7 s,
bit sets 1.2 s: ``bench/patterns.py --processes``), so every ``fuseki pattern`` from a shell
waited that long.  Here they are written once, as arrays in one file
``BOOK-patterns/<size>.map`` beside a SQLite book, and a process maps the file (the pages
come from the operating system's cache, shared by every process that reads the book).

- A map holds the games indexed up to ``through`` (the index's ``pattern_events_through``
  when it was written).  It is used only while that is still the index's mark and the
  book's meta row ``pattern_map_<size>`` names the map's token: a book made again at the
  same path, or an index that grew, never answers from an old map.  A grown index is
  mapped again with only the new games read from the table.
- Written by a process that may write the book (the import, or a search with write
  access): to a temporary file, then the token is committed in the book, then the file
  renamed over the old map.  A reader between the two reads the table, as before maps
  existed (correct, slower); a process that already mapped the old file keeps it (POSIX).
- A book opened read-only, on PostgreSQL or in memory reads the table as it always did.

Cost: about 590 bytes a game on disk for 19x19 games (the events 457 B/game, the bit sets
112 B, ids, offsets and winners), docs/limits.md.
"""

from __future__ import annotations

import json
import mmap
import os
import secrets
import sys
from typing import NamedTuple

import numpy as np
from sqlalchemy import select

from fuseki.book.analysis.patterns import index, scan
from fuseki.book.storage import schema, segment_sweep
from fuseki.book.storage.pattern_events import indexed_through, pattern_events

MAGIC = b"fuseki pattern map 1\n"
HEADER = 4096  # bytes before the first array; each array starts on a 4096-byte boundary
FOLDER_SUFFIX = "-patterns"


class IndexedGames(NamedTuple):
    """What a pattern search scans, for one board size: per indexed game (ids ascending)
    its events ``events[offsets[i]:offsets[i + 1]]``, ``held[i]`` (``scan.ever_held``) and
    ``winners[i]`` (0 none, 1 Black, 2 White); ``through``: the index's mark they reflect."""

    game_ids: np.ndarray
    events: np.ndarray
    offsets: np.ndarray
    held: np.ndarray
    winners: np.ndarray
    through: int


def words(size: int) -> int:
    """uint64 words of a bit set over the padded board's points."""
    return ((size + 2) ** 2 + 63) // 64


def load(book, size: int) -> IndexedGames:
    """The book's indexed games of ``size``: from its map when that is current, else from the
    table (then, when the book may be written, the map is written for the next process)."""
    with book.db.connect() as conn:
        through = indexed_through(conn)
        token = _token(conn, size)
    path = map_path(book, size)
    mapped = _read(path, size, through, token) if path and token else None
    if mapped is not None:
        return mapped
    older = _read_any(path, size, token) if path and token and not book.readonly else None
    with book.db.connect() as conn:
        fresh = _from_table(conn, size, older.through if older is not None else 0, through)
    games = _joined(older, fresh) if older is not None else fresh
    if path and not book.readonly:
        try:
            _write(book, path, games)
        except OSError as exc:  # a folder it may not write: searches read the table, as before
            print(f"fuseki: pattern index map not written ({path}: {exc.strerror or exc})", file=sys.stderr)
    return games


def refresh(book) -> None:
    """Bring every board size's map up to the index (the import calls this after indexing
    its games, so the first search after it maps them at once)."""
    if map_path(book, 19) is None or book.readonly:
        return
    with book.db.connect() as conn:
        sizes = [int(s) for s in conn.execute(select(pattern_events.c.size).distinct()).scalars()]
    for size in sizes:
        load(book, size)


def map_path(book, size: int) -> str | None:
    """Where the map of a SQLite book on disk is (None for other books)."""
    if getattr(book, "path", None) is None:
        return None
    return os.path.join(str(book.path) + FOLDER_SUFFIX, f"{int(size)}.map")


def _meta_name(size: int) -> str:
    return f"pattern_map_{int(size)}"


def _token(conn, size: int) -> str | None:
    return conn.execute(select(schema.meta.c.value).where(schema.meta.c.name == _meta_name(size))).scalar()


def _from_table(conn, size: int, after: int, through: int) -> IndexedGames:
    """The indexed games of ``size`` with ids in (after, through], read and computed."""
    game_ids, events, offsets = index.load(conn, size, after=after)
    if not events.flags.writeable:  # as a map's are: the scan is compiled for one kind of array
        events = events.copy()
    keep = game_ids <= through  # a writer may have indexed more since the mark was read
    if not keep.all():
        game_ids, offsets = game_ids[keep], offsets[: int(keep.sum()) + 1]
        events = events[: int(offsets[-1])]
    winners = np.zeros(len(game_ids), dtype=np.int8)
    if len(game_ids):
        found = np.array([tuple(row) for row in conn.execute(
            select(schema.games.c.id, schema.games.c.winner).where(
                schema.games.c.id > after, schema.games.c.id <= through, schema.games.c.winner.isnot(None)))],
            dtype=np.int64).reshape(-1, 2)
        at = np.searchsorted(game_ids, found[:, 0])
        inside = at < len(game_ids)
        inside[inside] = game_ids[at[inside]] == found[inside, 0]
        winners[at[inside]] = found[inside, 1]
    held = scan.ever_held(events, offsets, words(size))
    return IndexedGames(game_ids, events, offsets, held, winners, through)


def _joined(older: IndexedGames, newer: IndexedGames) -> IndexedGames:
    offsets = np.concatenate([older.offsets[:-1], newer.offsets + older.offsets[-1]])
    return IndexedGames(np.concatenate([older.game_ids, newer.game_ids]),
                        np.concatenate([older.events, newer.events]), offsets,
                        np.concatenate([older.held, newer.held]),
                        np.concatenate([older.winners, newer.winners]), newer.through)


_ARRAYS = ("game_ids", "events", "offsets", "held", "winners")


def _write(book, path: str, games: IndexedGames) -> None:
    """Write ``games`` as the map at ``path``: a temporary file, the token, then the rename."""
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    _sweep(folder)
    token = secrets.token_hex(8)
    layout, at = {}, HEADER
    for name in _ARRAYS:
        array = np.ascontiguousarray(getattr(games, name))
        layout[name] = {"dtype": array.dtype.str, "shape": list(array.shape), "at": at}
        at += -(-array.nbytes // HEADER) * HEADER
    header = json.dumps({"through": int(games.through), "token": token, "arrays": layout}).encode()
    if len(MAGIC) + len(header) + 1 > HEADER:
        raise ValueError("pattern map header too long")
    temporary = os.path.join(folder, f"{os.getpid()}-{os.path.basename(path)}.tmp")  # the segment files' naming
    with open(temporary, "wb") as out:
        out.write(MAGIC + header + b"\n")
        for name in _ARRAYS:
            out.seek(layout[name]["at"])
            out.write(np.ascontiguousarray(getattr(games, name)).tobytes())
        out.truncate(at)
    size = int(os.path.basename(path).split(".")[0])
    with book.writing() as conn:
        conn.execute(schema.meta.delete().where(schema.meta.c.name == _meta_name(size)))
        conn.execute(schema.meta.insert().values(name=_meta_name(size), value=token))
    os.replace(temporary, path)


def _sweep(folder: str) -> None:
    """Remove temporary maps whose writer is gone (killed before its rename); a writer is named
    as a segment file's is, so the segments' sweep tells (``segment_sweep.owner_alive``)."""
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        if name.endswith(".map.tmp") and not segment_sweep.owner_alive(path):
            try:
                os.remove(path)
            except OSError:
                pass


def _read_any(path: str, size: int, token: str) -> IndexedGames | None:
    """The map at ``path`` whatever its mark, if it is this book's (its token)."""
    return _read(path, size, None, token)


def _read(path: str, size: int, through: int | None, token: str) -> IndexedGames | None:
    """The map at ``path`` if it is this book's (``token``) and reflects ``through`` (None: any)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(HEADER)
            if not head.startswith(MAGIC):
                return None
            info = json.loads(head[len(MAGIC):].split(b"\n", 1)[0])
            if info.get("token") != token or (through is not None and info.get("through") != through):
                return None
            # copy-on-write: the arrays are writable to numba, and the file never changes
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_COPY)
    except (OSError, ValueError):
        return None
    arrays = {}
    for name in _ARRAYS:
        spec = info["arrays"][name]
        count = int(np.prod(spec["shape"]))
        if not count:  # no game (yet) of this part: nothing to map at the file's end
            arrays[name] = np.empty(spec["shape"], dtype=np.dtype(spec["dtype"]))
            continue
        arrays[name] = np.frombuffer(mapped, dtype=np.dtype(spec["dtype"]), count=count,
                                     offset=spec["at"]).reshape(spec["shape"])
    if arrays["held"].shape[1:] != (2, words(size)):
        return None
    return IndexedGames(**arrays, through=int(info["through"]))
