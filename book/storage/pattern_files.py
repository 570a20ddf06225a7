"""The pattern index of a SQLite book on disk, as files that only grow: one set per board size.

A pattern search scans, for every indexed game of a board size, its events
(``engine.core.replay.replay_events``), the points it ever held a stone of each colour
(``replay.ever_held``) and its winner.  Beside a SQLite book they are kept in the folder
``BOOK-patterns/`` as one file per array -- ``<size>.ids``, ``.offsets``, ``.events``,
``.held``, ``.winners`` -- and a process maps them (the pages come from the operating
system's cache, shared by every process that reads the book) instead of reading rows and
computing bit sets: 3 s before the first search on 366,535 games otherwise
(``bench/patterns.py --processes``).  These files are the index's one copy: the table
``pattern_events`` (``book.storage.pattern_events``) holds only the games not yet in them
(a PostgreSQL book or one in memory keeps every game there; so does a book an older fuseki
imported, until its games are moved here).

- **Append only.**  The import's writer adds each batch's games at the files' ends inside
  the batch's transaction; the meta row ``pattern_files_<size>`` (a JSON object: the files'
  ``token``, how many ``games`` and ``events`` they hold, and ``through``, the game id up to
  which they hold every indexed game of this size) is written in that transaction too.  So
  what the row says is what committed: bytes past it (a batch that rolled back or a killed
  writer) are cut off by the next append, never read.  Existing bytes never change, so a
  reader that mapped the files keeps a consistent prefix while a writer appends.
- **Tied to their book**: each file starts with a 4,096-byte header naming the token.  A
  book made again at the same path has no row, and its first append starts the files
  again; a book whose row names files that are missing or not its own raises ``Missing``
  (``book.analysis.patterns.index_map`` then indexes the games again from their stored SGF).
- The writer ``fsync``s the files before the book commits the row, so a commit the book
  keeps never names bytes the disk lost.
- **Read without SQLAlchemy** where the book is ready as it stands (``read_ready``: ``fuseki
  pattern``'s start, issue 61): the state rows are ``book.storage.index_state``'s queries, which a
  bare ``sqlite3`` connection and a ``Book``'s SQLAlchemy one both run, so this module imports the
  tables (``schema``) only to write.

Cost: about 590 bytes a 19x19 game (events 457 B, the bit sets 112 B, id, offset and
winner 17 B): docs/storage.md's table.
"""

from __future__ import annotations

import json
import mmap
import os
import secrets
import sqlite3
from typing import NamedTuple

import numpy as np

from fuseki.book.storage import index_state, scheme
from fuseki.book.storage.connect import BookError, sqlite_uri
from fuseki.book.storage.dialect import book_file
from fuseki.engine.core.replay import ever_held, held_words

SUFFIX = "-patterns"  # the folder beside the book's file
MAGIC = b"fuseki pattern index 2\n"
HEADER = 4096  # bytes before an array's first element


class Missing(BookError):
    """The book names pattern files that are missing or are not its own (a book copied
    without its ``-patterns`` folder)."""


class IndexedGames(NamedTuple):
    """Indexed games of one board size, ids ascending, as a pattern search scans them: game
    i's events are ``events[offsets[i]:offsets[i + 1]]``, ``held[i]`` (``replay.ever_held``),
    ``winners[i]`` (0 none, 1 Black, 2 White); every indexed game of the size up to
    ``through`` is here (the files' mark, or the index's in ``index_map.load``'s answer)."""

    game_ids: np.ndarray
    events: np.ndarray
    offsets: np.ndarray
    held: np.ndarray
    winners: np.ndarray
    through: int


def _dtypes(size: int) -> dict[str, tuple[np.dtype, tuple[int, ...]]]:
    """Each array's element type and the shape of one element."""
    return {"game_ids": (np.dtype(np.int64), ()), "offsets": (np.dtype(np.int64), ()),
            "events": (np.dtype(np.uint16), ()), "held": (np.dtype(np.uint64), (2, held_words(size))),
            "winners": (np.dtype(np.int8), ())}


def _bytes(size: int, name: str, count: int) -> int:
    """Bytes of ``count`` elements of array ``name``, its file's header included."""
    dtype, shape = _dtypes(size)[name]
    return HEADER + count * dtype.itemsize * int(np.prod(shape, dtype=np.int64))


_SUFFIXES = {"game_ids": "ids", "offsets": "offsets", "events": "events", "held": "held", "winners": "winners"}


def folder(conn) -> str | None:
    """The folder of a SQLite book on disk (None: PostgreSQL or in memory: the table holds all)."""
    path = book_file(conn)
    return path + SUFFIX if path else None


def path_of(folder_path: str, size: int, name: str) -> str:
    return os.path.join(folder_path, f"{int(size)}.{_SUFFIXES[name]}")


def paths(folder_path: str, size: int) -> list[str]:
    """Every file of ``size``."""
    return [path_of(folder_path, size, name) for name in _SUFFIXES]


def meta_name(size: int) -> str:
    return f"pattern_files_{int(size)}"


def state(conn, size: int) -> dict | None:
    """What the book says its files of ``size`` hold (token, games, events, through), or None."""
    value = index_state.meta_value(conn, meta_name(size))
    return json.loads(value) if value else None


def sizes(conn) -> list[int]:
    """The board sizes that have files."""
    return sorted(int(name.rsplit("_", 1)[1]) for name in index_state.meta_names(conn, meta_name(0)[:-1]))


def _counts(info: dict) -> dict[str, int]:
    """Elements of each array the committed state covers (offsets: one more than the games)."""
    games = int(info["games"])
    return {"game_ids": games, "offsets": games + 1, "events": int(info["events"]), "held": games,
            "winners": games}


def read(conn, size: int) -> IndexedGames | None:
    """The files of ``size`` as the book's current transaction sees them, mapped (None: the
    book has none of this size).  Raises ``Missing`` when they are gone or not this book's."""
    info = state(conn, size)
    where = folder(conn)
    if info is None or where is None:
        return None
    arrays = {}
    for name, count in _counts(info).items():
        dtype, shape = _dtypes(size)[name]
        path = path_of(where, size, name)
        try:
            with open(path, "rb") as handle:
                head = handle.read(HEADER)
                if not head.startswith(MAGIC) or json.loads(head[len(MAGIC):].split(b"\n", 1)[0]).get(
                        "token") != info["token"]:
                    raise Missing(f"{path}: not this book's pattern index (a book copied without its "
                                  f"{os.path.basename(where)} folder, or with another book's)")
                need = _bytes(size, name, count)
                if os.fstat(handle.fileno()).st_size < need:
                    raise Missing(f"{path}: shorter than the book says ({need:,} bytes)")
                # copy-on-write: numba's kernels take writable arrays; the file is never changed
                mapped = mmap.mmap(handle.fileno(), need, access=mmap.ACCESS_COPY)
        except FileNotFoundError:
            raise Missing(f"{path}: missing (copy a book with its {os.path.basename(where)} folder)") from None
        except (OSError, ValueError) as exc:
            raise Missing(f"{path}: {exc}") from None
        arrays[name] = np.frombuffer(mapped, dtype=dtype, count=(need - HEADER) // dtype.itemsize,
                                     offset=HEADER).reshape((count,) + shape)
    return IndexedGames(**arrays, through=int(info["through"]))


def read_ready(path: str, size: int) -> tuple[IndexedGames, int] | None:
    """(the files of ``size`` mapped, the book's largest game id) of the SQLite book file ``path``,
    read through ``sqlite3`` alone, in one read transaction, when a search can scan them as they
    stand: a book of games of this fuseki's version (``scheme.check_meta``) whose index is complete
    up to its largest game id, with no entry waiting in the table, and whose files of ``size`` are
    there and its own.  None otherwise, or when the file cannot be opened so: the caller then opens
    the ``Book`` (``index.update``, ``index_map.load``), which does what the book needs or says why
    it cannot.  The states are read by ``index_state``'s queries, as through a ``Book``; what this
    saves is SQLAlchemy's import and a writer's ``Book.open`` (``fuseki pattern``: issue 61)."""
    try:
        conn = sqlite3.connect(sqlite_uri(path, mode="ro"), uri=True, isolation_level=None)
    except sqlite3.Error:
        return None
    try:
        conn.execute("BEGIN")  # one snapshot: the mark, the largest id and the files' row agree
        scheme.check_meta(dict(index_state.rows(conn, "SELECT name, value FROM meta")))
        top, through = index_state.max_game_id(conn), index_state.indexed_through(conn)
        if through < top or index_state.waiting(conn):
            return None
        games = read(conn, size)
    except (sqlite3.Error, scheme.SchemeMismatch, Missing):
        return None
    finally:
        conn.close()
    return None if games is None else (games._replace(through=through), top)  # as index_map.load's


def append(conn, size: int, game_ids: np.ndarray, events: np.ndarray, lengths: np.ndarray,
           winners: np.ndarray, through: int) -> None:
    """Add games of ``size`` (ids ascending, above every id the files hold; game i has
    ``lengths[i]`` of ``events``) at the files' ends, and say in the book, in the caller's
    write transaction, that the files now hold every indexed game of the size up to
    ``through``.  Starts the files when the book has none (or none of its own)."""
    from fuseki.book.storage import schema  # SQLAlchemy's tables: a writer has them, read_ready's reader not

    where = folder(conn)
    info = state(conn, size)
    if info is None:  # new files: a fresh token, so no reader takes an older book's for them
        os.makedirs(where, exist_ok=True)
        info = {"token": secrets.token_hex(8), "games": 0, "events": 0, "through": 0}
        _start(where, size, info["token"])
    events = np.ascontiguousarray(events, dtype=np.uint16)
    offsets = np.cumsum(lengths, dtype=np.int64) + int(info["events"])
    local = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=local[1:])
    new = {"game_ids": np.asarray(game_ids, dtype=np.int64), "offsets": offsets, "events": events,
           "held": ever_held(events, local, size), "winners": np.asarray(winners, dtype=np.int8)}
    for name, count in _counts(info).items():
        dtype = _dtypes(size)[name][0]
        with open(path_of(where, size, name), "r+b") as out:
            out.truncate(_bytes(size, name, count))  # what a rolled-back or killed writer left past the commit
            out.seek(0, os.SEEK_END)
            out.write(np.ascontiguousarray(new[name], dtype=dtype).tobytes())
            out.flush()
            os.fsync(out.fileno())
    info = {"token": info["token"], "games": int(info["games"]) + len(game_ids),
            "events": int(info["events"]) + len(events), "through": int(through)}
    conn.execute(schema.meta.delete().where(schema.meta.c.name == meta_name(size)))
    conn.execute(schema.meta.insert().values(name=meta_name(size), value=json.dumps(info)))


def _start(where: str, size: int, token: str) -> None:
    """Empty files of ``size`` holding only their header (offsets: its leading 0)."""
    header = MAGIC + json.dumps({"token": token, "size": int(size)}).encode() + b"\n"
    for name in _SUFFIXES:
        with open(path_of(where, size, name), "wb") as out:
            out.write(header.ljust(HEADER, b"\0"))
            if name == "offsets":
                out.write(np.zeros(1, dtype=np.int64).tobytes())


def forget(conn, size: int) -> None:
    """The book no longer names files of ``size`` (its next append starts them again)."""
    from fuseki.book.storage import schema

    conn.execute(schema.meta.delete().where(schema.meta.c.name == meta_name(size)))


def folder_of_book(book) -> str | None:
    """``folder`` of a ``Book`` (None: PostgreSQL or in memory)."""
    path = getattr(book, "path", None)
    return str(path) + SUFFIX if path is not None else None
