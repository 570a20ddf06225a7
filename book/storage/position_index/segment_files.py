"""Segments as files beside a SQLite book, so that the one writer only links them in.

A SQLite book ``games.sqlite`` keeps its newer segments (``book.storage.position_index.segments``) in the folder
``games.sqlite-segments/``: each is a file written once and never changed, holding its rows
(key, code) and its next-move statistics (``book.storage.position_index.nextmoves``) as flat sorted arrays
(``book.storage.position_index.packed_segment``: 14 bytes a row, where a SQLite table took 20).  The main
file lists them in ``segment_files(id, file, base)``.

Why: in one file, every row of every batch went through SQLite's single writer, so an
import could not go faster than that one core, whatever the number of parsers.  Now each
parser writes its batch's file (one ``write``), the writer adds one row, and a merge is
done by whoever calls ``merge`` (the importer: a process of its own) and linked in by one
short transaction.

- Codes in a level-0 file number the batch's games from 0 (the parser cannot know the
  ids the writer will give); ``base`` (the first id, shifted) is added when it is read.
  A merge writes codes as they are read (base 0).  Games of a batch that the book already
  holds (another parser's batch brought them) leave the file before it is linked
  (``drop_games``); the others keep their numbers.
- A file exists before its row and outlives it: a file no row names is left over by an
  importer that stopped (or a merge whose parts are gone) and is removed when the book is
  next opened, by a writer or a reader (``book.storage.position_index.segment_sweep``) -- unless the process
  named in the file's name still runs, for it may link it yet.  Files a merge replaced are
  removed after its commit.
- Readers open a file once (it never changes) and share it between threads; a file removed
  under a reader that already opened it stays readable (POSIX), one removed before it opened
  it raises ``Gone`` and the reader takes a new snapshot.
- ``Book.compact`` folds every segment back into the main file (``fold_in``): a
  book for shipping (the built-in book) is one file.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import uuid
from typing import NamedTuple

import numpy as np
from sqlalchemy import MetaData, Table, insert, select
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.schema import CreateTable

from fuseki.book.storage import schema, scheme
from fuseki.book.storage.connect import sqlite_uri
from fuseki.book.storage.dialect import book_file
from fuseki.book.storage.position_index import nextmoves, packed_segment, sqlite_image
from fuseki.book.storage.schema import segment_files as files_table
from fuseki.book.storage.schema import segment_table, segments

SUFFIX = "-segments"  # the folder beside the book's file
# New segments of a SQLite book on disk go to files; FUSEKI_SEGMENT_FILES=0 writes them into the
# book's own file as before (bench/book.py's baseline; tests compare both).
ENABLED = os.environ.get("FUSEKI_SEGMENT_FILES", "1") != "0"
# the table of the scratch file ``fold_in`` writes (and of an older book's segment files: ``migrate``)
_POSITIONS = Table("positions", MetaData(), *schema.positions_columns("positions"), sqlite_with_rowid=False)
POSITIONS_DDL = str(CreateTable(_POSITIONS).compile(dialect=sqlite_dialect.dialect())).strip()
MERGE_ROWS_PER_STEP = 4_000_000  # a merge holds about this many rows (64 MB) at once


class Gone(RuntimeError):
    """A segment file named by a snapshot was removed (a merge replaced it) before it was opened."""


class FileSegment(NamedTuple):
    id: int
    name: str  # in the book's folder
    base: int  # added to every code read from it


def key_ranges(count: int) -> list[tuple[int, int]]:
    """About ``count`` signed key ranges ``(low, high)`` (inclusive), in signed order, each
    holding about as many keys.

    A canonical key is the smallest of 8 (unsigned), so keys crowd near 0: the fraction
    below ``u`` (of 2**64) is ``1 - (1 - u)**8``, and the bounds are its quantiles.
    """
    cuts = {0, 1 << 63, 1 << 64}
    cuts.update(int((1 - (1 - i / count) ** 0.125) * (1 << 64)) for i in range(1, count))
    cuts = sorted(cuts)
    ranges = [(low - (1 << 64) if low >= 1 << 63 else low, high - 1 - (1 << 64) if low >= 1 << 63 else high - 1)
              for low, high in zip(cuts[:-1], cuts[1:]) if high > low]
    return sorted(ranges)


def folder_of(database: str) -> str:
    """The folder of the segment files of the SQLite book at ``database``."""
    return database + SUFFIX


def new_name(owner: int) -> str:
    """A fresh file name; ``owner``: the pid of the process that will link it (``segment_sweep``)."""
    return f"{owner}-{uuid.uuid4().hex}.seg"


def scratch_path(folder: str, what: str) -> str:
    """A fresh path in ``folder`` for a file this process writes before it renames it (``what``:
    its suffix).  Named after this process, so that no other process's sweep removes it while
    this one runs (``segment_sweep``); left behind by a process killed meanwhile, it is swept."""
    return os.path.join(folder, f"{new_name(os.getpid())}.{what}")


# --- the book's list of files ------------------------------------------------------------

def files_folder(conn) -> str | None:
    """The folder new segments of this book go to as files (``book.storage.position_index.segment_files``); None:
    they go into the database (PostgreSQL, a SQLite book in memory, files turned off)."""
    if conn.dialect.name != "sqlite" or not ENABLED:
        return None
    return book_folder(conn)


def book_folder(conn) -> str | None:
    """The folder beside a SQLite book on disk where its segment files are (None: no file)."""
    path = book_file(conn)
    return folder_of(path) if path else None


def new_segment_id(conn) -> int:
    """The id of a new segment, in a file or not: ids only grow (a merge's is the largest)."""
    return int(conn.exec_driver_sql(_NEW_ID).scalar())


_NEW_ID = "SELECT coalesce(max(id), 0) + 1 FROM segments"  # also on a bare sqlite3 connection (fold_in)


def link_file(conn, name: str, rows: int, base: int) -> int:
    """List a segment file (in the book's folder) as a new level-0 segment; returns its id.

    ``base``: what its codes lack (the first game id, shifted).  Call in the write
    transaction of its games."""
    segment = new_segment_id(conn)
    conn.execute(insert(files_table).values(id=segment, file=name, base=base))
    conn.execute(insert(segments).values(id=segment, level=0, rows=rows))
    return segment


def in_files(conn) -> list[FileSegment]:
    """The segments kept in files, oldest first (none in a book made before them)."""
    if conn.dialect.name != "sqlite" or not _has_files_table(conn):
        return []
    query = select(files_table.c.id, files_table.c.file, files_table.c.base).order_by(files_table.c.id)
    return [FileSegment(int(i), name, int(base)) for i, name, base in conn.execute(query)]


def _has_files_table(conn) -> bool:
    return bool(conn.exec_driver_sql(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'segment_files'").scalar())


def fold_in(dbapi_connection, folder: str, segment: FileSegment) -> None:
    """Move a segment file's rows and next-move statistics into tables of the book's own file (``compact``:
    a book in one file).  ``dbapi_connection``: a SQLite connection outside any transaction
    (ATTACH needs that); commits.  The file is left for the caller to remove.

    The rows go through a scratch SQLite file beside it, written a key range at a time
    (``sqlite_image.RowsFile``: one range in memory), which SQLite's transfer copies whole into
    the new table, its pages packed."""
    path = os.path.join(folder, segment.name)
    scratch = scratch_path(folder, "folding")
    reader = packed_segment.Reader(path)
    try:
        writer = sqlite_image.RowsFile(scratch, POSITIONS_DDL)
        try:
            for low, high in key_ranges(max(1, reader.rows // MERGE_ROWS_PER_STEP)):
                keys, codes = reader.between(low, high)
                if len(keys):
                    writer.add(keys, codes + segment.base)
        finally:
            writer.close()
        next_stats = reader.all_stats()
    finally:
        reader.close()
    try:
        dbapi_connection.execute("ATTACH ? AS fold", (scratch,))
        try:
            dbapi_connection.execute("BEGIN IMMEDIATE")
            try:
                new = int(dbapi_connection.execute(_NEW_ID).fetchone()[0])
                level, rows = dbapi_connection.execute("SELECT level, rows FROM segments WHERE id = ?",
                                                       (segment.id,)).fetchone()
                table = segment_table(new)
                dbapi_connection.execute(str(CreateTable(table).compile(dialect=sqlite_dialect.dialect())))
                dbapi_connection.execute(f"INSERT INTO main.{table.name} SELECT * FROM fold.positions")  # the transfer
                stats = nextmoves.stats_table(new)
                dbapi_connection.execute(str(CreateTable(stats).compile(dialect=sqlite_dialect.dialect())))
                dbapi_connection.executemany(f"INSERT INTO main.{stats.name} (key, stats) VALUES (?, ?)",
                                             nextmoves.to_rows(next_stats))
                dbapi_connection.execute("DELETE FROM segment_files WHERE id = ?", (segment.id,))
                dbapi_connection.execute("DELETE FROM segments WHERE id = ?", (segment.id,))
                dbapi_connection.execute("INSERT INTO segments (id, level, rows) VALUES (?, ?, ?)", (new, level, rows))
                dbapi_connection.execute("COMMIT")
            except BaseException:
                dbapi_connection.execute("ROLLBACK")
                raise
        finally:
            dbapi_connection.execute("DETACH fold")
    finally:
        remove(folder, [os.path.basename(scratch)])


# --- writing -----------------------------------------------------------------------------

def write_rows(folder: str, keys: np.ndarray, codes: np.ndarray, next_stats: nextmoves.NextMoveStats,
               owner: int) -> str:
    """Write a segment file of rows (sorted by key; ties may come in any order) and their next-move
    statistics; returns its name.  The file is whole on disk once this returns."""
    os.makedirs(folder, exist_ok=True)
    name = new_name(owner)
    packed_segment.write(os.path.join(folder, name), keys, codes, next_stats)
    return name


class FileWriter(NamedTuple):
    """Writes a parser's batches as segment files of the book's folder (``batches.make_batch``'s
    ``rows_to``): each call writes one batch's rows (sorted by key; its games numbered from 0)
    and next-move statistics, and returns the file's name."""

    folder: str
    owner: int  # the pid of the process that links the files (segment files' names start with it)

    def __call__(self, keys: np.ndarray, codes: np.ndarray, next_stats: nextmoves.NextMoveStats) -> str:
        return write_rows(self.folder, keys, codes, next_stats, self.owner)


def drop_games(path: str, games: np.ndarray, years: np.ndarray) -> int:
    """Take the games numbered ``games`` (in the file, from 0) out of a segment file no row
    names yet: their rows gone, their counts taken out of its next-move statistics; returns how many
    rows went.  ``years[i]``: the year of the file's game i (``nextmoves.NO_YEAR``: none).

    The writer does this when another parser's batch already brought some of a batch's
    games; the others keep their numbers (their ids leave a gap where these were).  The file
    is written again under its name (a batch's file: a few MB)."""
    reader = packed_segment.Reader(path)
    try:
        keys, codes = reader.all_rows()
        stats = reader.all_stats()
    finally:
        reader.close()
    gone = np.isin(codes >> scheme.GAME_SHIFT, np.asarray(games, dtype=np.int64))
    if not gone.any():
        return 0
    removed = nextmoves.from_codes(keys[gone], codes[gone], lambda _low, _high: (0, years), 1)
    touched = np.isin(stats.keys, removed.keys)
    updates, _deletes = nextmoves.take_out(nextmoves.to_rows(nextmoves.NextMoveStats(
        stats.keys[touched], stats.counts[touched])), removed)
    kept = nextmoves.combine([nextmoves.NextMoveStats(stats.keys[~touched], stats.counts[~touched]),
                              nextmoves.from_stored(updates)])
    scratch = scratch_path(os.path.dirname(path), "dropping")
    try:
        packed_segment.write(scratch, keys[~gone], codes[~gone], kept)
        os.replace(scratch, path)
    finally:
        remove(os.path.dirname(path), [os.path.basename(scratch)])
    return int(gone.sum())


def remove(folder: str, names) -> None:
    """Remove segment files (those already gone are no error)."""
    for name in names:
        try:
            os.unlink(os.path.join(folder, name))
        except FileNotFoundError:
            pass


# --- reading -----------------------------------------------------------------------------

class _Readers:
    """The segment files this process reads, each opened once and shared by its threads.

    Kept across queries (opening one costs more than reading a key from it); forgotten
    when the file leaves the book's snapshots (``keep``).  A file removed after it was opened
    stays readable (POSIX); one removed before raises ``Gone``."""

    def __init__(self):
        self.lock = threading.Lock()
        self.open: dict[str, packed_segment.Reader] = {}
        # (folder, files) -> [(reader, base)]: a snapshot's files, looked up once (a query reads every
        # file of its snapshot; finding 27 readers by path took 19 us a query)
        self.lists: dict[tuple, list[tuple[packed_segment.Reader, int]]] = {}

    def of(self, folder: str, files) -> list[tuple[packed_segment.Reader, int]]:
        """(reader, base) of each of ``files`` (``FileSegment``) in ``folder``."""
        found = self.lists.get((folder, tuple(files)))
        if found is None:
            found = [(self.get(os.path.join(folder, segment.name)), segment.base) for segment in files]
            with self.lock:
                if len(self.lists) >= 16:
                    self.lists.clear()
                self.lists[(folder, tuple(files))] = found
        return found

    def get(self, path: str) -> packed_segment.Reader:
        with self.lock:
            reader = self.open.get(path)
        if reader is not None:
            return reader
        try:
            reader = packed_segment.Reader(path)
        except FileNotFoundError:
            raise Gone(path) from None
        with self.lock:
            return self.open.setdefault(path, reader)

    def keep(self, folder: str, names) -> None:
        """Forget the folder's files not in ``names`` (each is closed once no query holds it)."""
        paths = {os.path.join(folder, name) for name in names}
        with self.lock:
            for path in [path for path in self.open if os.path.dirname(path) == folder and path not in paths]:
                del self.open[path]
            self.lists.clear()


_READERS = _Readers()


def forget(folder: str, names) -> None:
    """Forget the open files no longer in the book (``names``: those still in)."""
    _READERS.keep(folder, names)


def _readers(folder: str, files):
    return _READERS.of(folder, files)


def key_stats(folder: str, files, key: int) -> tuple[list[nextmoves.NextMoveStats], list[np.ndarray]]:
    """(next-move statistics, codes) of ``key`` in the files: a file that counted the key gives its
    statistics, another its codes."""
    stats, codes = [], []
    for reader, base in _readers(folder, files):
        counted = reader.key_stats(key)
        if counted is not None:
            stats.append(counted)
        else:
            found = reader.key_codes(key)
            if len(found):
                found += base
                codes.append(found)
    return stats, codes


def codes(folder: str, files, key: int) -> np.ndarray:
    """Every code of ``key`` in the files, file after file."""
    found = [reader.key_codes(key) + base for reader, base in _readers(folder, files)]
    return np.concatenate(found) if found else np.empty(0, dtype=np.int64)


def range_rows(folder: str, files, low: int, high: int) -> tuple[np.ndarray, np.ndarray]:
    """(keys, codes) of the files' rows with ``low <= key <= high`` (signed), file after file."""
    keys, codes = [np.empty(0, dtype=np.int64)], [np.empty(0, dtype=np.int64)]
    for reader, base in _readers(folder, files):
        found_keys, found_codes = reader.between(low, high)
        keys.append(found_keys)
        codes.append(found_codes + base)
    return np.concatenate(keys), np.concatenate(codes)


def joined_rows(found) -> tuple[np.ndarray, np.ndarray]:
    """(keys, codes) from pairs of comma-separated strings (``group_concat``), one pair a segment:
    numpy parses a string in a fifth of the time the driver takes for a row object a row."""
    found = [(keys, codes) for keys, codes in found if keys]
    return schema.joined_numbers([keys for keys, _ in found]), schema.joined_numbers([codes for _, codes in found])


def read_rows(path: str) -> tuple[np.ndarray, np.ndarray]:
    """(keys, codes) of every row of one file, in key order, codes as stored."""
    reader = packed_segment.Reader(path)
    try:
        return reader.all_rows()
    finally:
        reader.close()


def read_stats(path: str) -> nextmoves.NextMoveStats:
    """Every record of one file's next-move statistics."""
    reader = packed_segment.Reader(path)
    try:
        return reader.all_stats()
    finally:
        reader.close()


# --- merging ------------------------------------------------------------------------------

class Source(NamedTuple):
    """A segment a merge reads: a file of the book's folder (``table`` None) or a table of the book's own file."""

    path: str
    table: str | None  # positions table in the book's file; None: a segment file
    next_stats: str | None  # its next-move statistics table in the book's file, if it has one
    base: int


def merge(sources: list[Source], book_path: str, folder: str, owner: int) -> tuple[str, int]:
    """Write one segment file holding every row of ``sources`` and their next-move statistics; returns
    (its name, its rows).  Reads the book (read-only) for the years of games whose rows a
    part did not count.  Changes nothing else: the caller links the file in.

    Rows go through a key range at a time (``MERGE_ROWS_PER_STEP``) into their places in the
    file (``packed_segment.Writer``: no copy of the file, one range in memory).  The file gets
    its name once it is whole.
    """
    os.makedirs(folder, exist_ok=True)
    name = new_name(owner)
    scratch = os.path.join(folder, name + ".merging")
    parts = []
    book = None
    try:
        # a file's rows from the file; a table in the book's own file (a writer may change it) through SQL
        parts = [packed_segment.Reader(source.path) if source.table is None else None for source in sources]
        if any(part is None for part in parts):
            book = sqlite3.connect(_read_uri(book_path, False), uri=True)
        rows = sum(part.rows if part is not None else book.execute(f"SELECT count(*) FROM {source.table}").fetchone()[0]
                   for part, source in zip(parts, sources))
        writer = packed_segment.Writer(scratch, rows)
        counted = _parts_stats(book, parts, sources)
        uncounted = _Uncounted(parts, nextmoves.missing_keys(counted))
        try:
            for low, high in key_ranges(max(1, rows // MERGE_ROWS_PER_STEP)):
                keys, codes = _read_range(book, parts, sources, low, high, uncounted)
                if len(keys):
                    writer.add(*sorted_rows(keys, codes), own_codes=True)  # new arrays: the writer's to order
            writer.finish(_merged_stats(book, parts, sources, book_path, counted, uncounted))
        finally:
            writer.close()
        path = os.path.join(folder, name)
        os.rename(scratch, path)
    finally:
        for part in parts:
            if part is not None:
                part.close()
        if book is not None:
            book.close()
        remove(folder, [os.path.basename(scratch)])
    _sync(path)
    return name, rows


def sorted_rows(keys: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows in (key, code) order.  Each part's rows come in that order and later parts hold
    later games (higher codes), so a stable sort by key alone merges the runs: on a merge of
    the 366,535-game book's segments, a twentieth of the time of sorting by both columns
    (``np.lexsort``), which many equal keys slow down.  Where the parts' codes overlap (a
    merge of parts not in the order of their games), ``sqlite_image.order_ties`` puts each
    key's codes in order (rows already in order it only looks at)."""
    order = np.argsort(keys, kind="stable")
    keys, codes = keys[order], codes[order]
    sqlite_image.order_ties(keys, codes)
    return keys, codes


def _read_uri(path: str, immutable: bool) -> str:
    return sqlite_uri(path, mode="ro", **({"immutable": 1} if immutable else {}))


def _read_range(book, parts, sources, low: int, high: int,
                uncounted: _Uncounted | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The parts' rows with keys in [low, high], their bases added, part after part; each file
    part's rows under keys it did not count kept aside in ``uncounted``."""
    keys, codes = [], []
    for i, (part, source) in enumerate(zip(parts, sources)):
        if part is not None:
            found_keys, found_codes = part.between(low, high)
            found_codes += source.base
            if uncounted is not None:
                uncounted.take(i, found_keys, found_codes)
        else:
            found_keys, found_codes = joined_rows([book.execute(
                _RANGE.format(table=source.table), {"b": source.base, "low": low, "top": high}).fetchone()])
        keys.append(found_keys)
        codes.append(found_codes)
    return np.concatenate(keys), np.concatenate(codes)


class _Uncounted:
    """A merge's rows under the keys each file part did not count (``nextmoves.missing_keys``),
    taken from the rows the merge reads a key range at a time: looking them up again, a key at a
    time, was 1.2 s of a 27-segment merge's 8.6 (``bench/merge.py --parts 27``).  A batch's part left
    a key uncounted because fewer than ``nextmoves.GAMES`` of its games reached it (a merged
    part: fewer in each batch it holds), so what is kept stays small: 94,000 such keys and parts
    in that merge of 78 M rows."""

    def __init__(self, parts, missing: list[np.ndarray]):
        self.missing = [keys if part is not None else None for part, keys in zip(parts, missing)]
        self.rows: list[list[tuple[np.ndarray, np.ndarray]]] = [[] for _ in parts]

    def take(self, i: int, keys: np.ndarray, codes: np.ndarray) -> None:
        """Keep part i's rows (``keys`` ascending) whose keys it did not count."""
        wanted = self.missing[i]
        if not len(wanted) or not len(keys):
            return
        wanted = wanted[wanted.searchsorted(keys[0], "left"):wanted.searchsorted(keys[-1], "right")]
        first, end = keys.searchsorted(wanted, "left"), keys.searchsorted(wanted, "right")
        places = _spans(first, end)
        if len(places):
            self.rows[i].append((keys[places], codes[places]))

    def of(self, i: int, missing: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Part i's rows under ``missing``, the keys ``take`` was given for it."""
        if self.missing[i] is None or not np.array_equal(missing, self.missing[i]):
            raise ValueError(f"part {i}: asked for other keys than those set aside")
        found = self.rows[i]
        return (np.concatenate([k for k, _ in found]) if found else np.empty(0, dtype=np.int64),
                np.concatenate([c for _, c in found]) if found else np.empty(0, dtype=np.int64))


def _spans(first: np.ndarray, end: np.ndarray) -> np.ndarray:
    """The places ``first[j]:end[j]`` of every j, one after another."""
    lengths = end - first
    kept = lengths > 0
    first, lengths = first[kept], lengths[kept]
    if not len(first):
        return np.empty(0, dtype=np.int64)
    starts = np.cumsum(lengths) - lengths  # where each span starts among the places
    return np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(starts - first, lengths)


_RANGE = "SELECT group_concat(key), group_concat(code + :b) FROM {table} WHERE key BETWEEN :low AND :top"


def _parts_stats(book, parts, sources) -> list[nextmoves.NextMoveStats]:
    """Each part's stored next-move statistics (those of the keys it counted)."""
    found = []
    for part, source in zip(parts, sources):
        if part is not None:
            found.append(part.all_stats())
        elif source.next_stats:
            found.append(nextmoves.from_stored(book.execute(f"SELECT key, stats FROM {source.next_stats}").fetchall()))
        else:
            found.append(nextmoves.empty())
    return found


def _merged_stats(book, parts, sources, book_path: str, counted: list[nextmoves.NextMoveStats],
                  uncounted: _Uncounted) -> nextmoves.NextMoveStats:
    """The parts' next-move statistics (``counted``) added up (``nextmoves.add_up``), as
    ``segments.merge`` does: a file part's rows under keys it did not count from ``uncounted``,
    a table's through SQL."""

    def count_rows(i: int, missing: np.ndarray) -> nextmoves.NextMoveStats:
        if parts[i] is not None:
            keys, codes = uncounted.of(i, missing)
        else:
            rows = book.execute(
                f"SELECT p.key, p.code + ? FROM json_each(?) AS j JOIN {sources[i].table} AS p ON p.key = j.value",
                (sources[i].base, "[" + ",".join(map(str, missing.tolist())) + "]")).fetchall()
            pairs = np.array(rows, dtype=np.int64).reshape(-1, 2)
            keys, codes = pairs[:, 0], pairs[:, 1]
        return nextmoves.from_codes(keys, codes, lambda low, high: _years(book_path, low, high), 1)

    return nextmoves.add_up(counted, count_rows)


def _years(book_path: str, low: int, high: int) -> tuple[int, np.ndarray]:
    """``nextmoves.years_by_id`` read from the book's file (a merge process has no database connection)."""
    book = sqlite3.connect(_read_uri(book_path, False), uri=True)
    try:
        found = book.execute(nextmoves.YEARS_QUERY, {"a": low, "b": high}).fetchall()
        return low, nextmoves.years_array(low, high, found)
    finally:
        book.close()


def _sync(path: str) -> None:
    """The file and its folder's entry on disk (VACUUM INTO does not sync)."""
    for synced in (path, os.path.dirname(path)):
        descriptor = os.open(synced, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def file_size(path: str) -> int:
    """A file's size; 0 once gone (a merge replaced a segment file since the list was read)."""
    try:
        return os.path.getsize(path)
    except FileNotFoundError:
        return 0
