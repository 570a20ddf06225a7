"""Segments as files beside a SQLite book, so that the one writer only links them in.

A SQLite book ``games.sqlite`` keeps its newer segments (``book.storage.segments``) in the folder
``games.sqlite-segments/``: each is a small SQLite database of its own, written once and
never changed, holding the table ``positions`` (key, code) and the table ``next_stats``
(``book.storage.nextmoves``).  The main file lists them in ``segment_files(id, file, base)``.

Why: in one file, every row of every batch went through SQLite's single writer (its
transfer of the batch's page image into a new table, the most of the writer's time), so
an import could not go faster than that one core, whatever the number of parsers.  Now
each parser writes its batch's image straight to a file (one ``write``), the writer adds
one row, and a merge is done by whoever calls ``merge`` (the importer: a process of its
own) and linked in by one short transaction.

- Codes in a level-0 file number the batch's games from 0 (the parser cannot know the
  ids the writer will give); ``base`` (the first id, shifted) is added when it is read.
  A merge writes codes as they are read (base 0).  Games of a batch that the book already
  holds (another parser's batch brought them) leave the file before it is linked
  (``drop_games``); the others keep their numbers.
- A file exists before its row and outlives it: a file no row names is left over by an
  importer that stopped (or a merge whose parts are gone) and is removed when the book is
  next opened, by a writer or a reader (``book.storage.segment_sweep``) -- unless the process
  named in the file's name still runs, for it may link it yet.  Files a merge replaced are
  removed after its commit.
- Readers open a file read-only and ``immutable`` (no locks: it never changes); a file
  removed under a reader that already opened it stays readable (POSIX), one removed
  before it opened it raises ``Gone`` and the reader takes a new snapshot.
- ``Book.compact`` folds every segment back into the main file: a book for shipping
  (the built-in book) is one file.
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

from fuseki.book.storage import nextmoves, schema, sqlite_image
from fuseki.book.storage.connect import sqlite_uri
from fuseki.book.storage.schema import segment_files as files_table
from fuseki.book.storage.schema import segment_table, segments

SUFFIX = "-segments"  # the folder beside the book's file
# New segments of a SQLite book on disk go to files; FUSEKI_SEGMENT_FILES=0 writes them into the
# book's own file as before (bench/book.py's baseline; tests compare both).
ENABLED = os.environ.get("FUSEKI_SEGMENT_FILES", "1") != "0"
_POSITIONS = Table("positions", MetaData(), *schema.positions_columns("positions"), sqlite_with_rowid=False)
POSITIONS_DDL = str(CreateTable(_POSITIONS).compile(dialect=sqlite_dialect.dialect())).strip()
_STATS_DDL = "CREATE TABLE next_stats (key INTEGER PRIMARY KEY, stats BLOB NOT NULL) WITHOUT ROWID"
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


# --- the book's list of files ------------------------------------------------------------

def files_folder(conn) -> str | None:
    """The folder new segments of this book go to as files (``book.storage.segment_files``); None:
    they go into the database (PostgreSQL, a SQLite book in memory, files turned off)."""
    if conn.dialect.name != "sqlite" or not ENABLED:
        return None
    return book_folder(conn)


def book_folder(conn) -> str | None:
    """The folder beside a SQLite book on disk where its segment files are (None: no file)."""
    path = book_path(conn)
    return folder_of(path) if path else None


def book_path(conn) -> str | None:
    """The file of a SQLite book (None: another database, or in memory), as SQLite opened it."""
    if conn.dialect.name != "sqlite":
        return None
    info = conn.connection.info
    if "fuseki_path" not in info:
        found = [path for _seq, name, path in conn.connection.dbapi_connection.execute("PRAGMA database_list")
                 if name == "main"]
        info["fuseki_path"] = found[0] if found and found[0] else None
    return info["fuseki_path"]


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


def missing(db) -> tuple[str, list[str]] | None:
    """(folder, names) of the files the book lists that are not in its folder (None: none is
    missing): a book copied or moved without its folder.  A merge that commits meanwhile
    removes files it no longer lists, so a file counts as missing only if two reads list it."""
    gone: set[str] | None = None
    for _ in range(3):
        with db.connect() as conn:
            folder = book_folder(conn)
            listed = [segment.name for segment in in_files(conn)] if folder else []
        found = {name for name in listed if not os.path.exists(os.path.join(folder, name))}
        if not found:
            return None
        if gone is not None and found & gone:
            return folder, sorted(found & gone)
        gone = found
    return None


def _has_files_table(conn) -> bool:
    return bool(conn.exec_driver_sql(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'segment_files'").scalar())


def fold_in(dbapi_connection, folder: str, segment: FileSegment) -> None:
    """Move a segment file's rows and next-move statistics into tables of the book's own file (``compact``:
    a book in one file).  ``dbapi_connection``: a SQLite connection outside any transaction
    (ATTACH needs that); commits.  The file is left for the caller to remove."""
    path = os.path.join(folder, segment.name)
    dbapi_connection.execute("ATTACH ? AS fold", (path,))
    try:
        dbapi_connection.execute("BEGIN IMMEDIATE")
        try:
            new = int(dbapi_connection.execute(_NEW_ID).fetchone()[0])
            level, rows = dbapi_connection.execute("SELECT level, rows FROM segments WHERE id = ?",
                                                   (segment.id,)).fetchone()
            table = segment_table(new)
            dbapi_connection.execute(str(CreateTable(table).compile(dialect=sqlite_dialect.dialect())))
            dbapi_connection.execute(f"INSERT INTO main.{table.name} SELECT key, code + {int(segment.base)} "
                                     "FROM fold.positions" if segment.base else
                                     f"INSERT INTO main.{table.name} SELECT * FROM fold.positions")  # "*": the transfer
            next_stats = nextmoves.stats_table(new)
            dbapi_connection.execute(str(CreateTable(next_stats).compile(dialect=sqlite_dialect.dialect())))
            dbapi_connection.execute(f"INSERT INTO main.{next_stats.name} SELECT * FROM fold.next_stats")
            dbapi_connection.execute("DELETE FROM segment_files WHERE id = ?", (segment.id,))
            dbapi_connection.execute("DELETE FROM segments WHERE id = ?", (segment.id,))
            dbapi_connection.execute("INSERT INTO segments (id, level, rows) VALUES (?, ?, ?)", (new, level, rows))
            dbapi_connection.execute("COMMIT")
        except BaseException:
            dbapi_connection.execute("ROLLBACK")
            raise
    finally:
        dbapi_connection.execute("DETACH fold")


# --- writing -----------------------------------------------------------------------------

def write_image(folder: str, image: np.ndarray, next_stats: nextmoves.NextMoveStats, owner: int) -> str:
    """Write a segment file from an image of ``POSITIONS_DDL`` rows and their next-move statistics; returns its name.

    The image goes to the file as it is (a parser's one write); the next-move statistics are added through
    SQLite, whose commit also syncs the file: once this returns, the file is whole on disk.
    """
    os.makedirs(folder, exist_ok=True)
    name = new_name(owner)
    path = os.path.join(folder, name)
    with open(path, "wb") as out:
        out.write(image.data)
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute("BEGIN")
        _write_stats(connection, next_stats)
        connection.execute("COMMIT")
    finally:
        connection.close()
    return name


class FileWriter(NamedTuple):
    """Writes a parser's batches as segment files of the book's folder (``batches.make_batch``'s
    ``rows_to``): each call writes one batch's rows (sorted by key; its games numbered from 0,
    the codes may be reordered) and next-move statistics, and returns the file's name."""

    folder: str
    owner: int  # the pid of the process that links the files (segment files' names start with it)

    def __call__(self, keys: np.ndarray, codes: np.ndarray, next_stats: nextmoves.NextMoveStats) -> str:
        return write_image(self.folder, image(keys, codes, own_codes=True), next_stats, self.owner)


def write_rows(folder: str, keys: np.ndarray, codes: np.ndarray, next_stats: nextmoves.NextMoveStats,
               owner: int) -> str:
    """``write_image`` of rows (sorted by key), codes as they are."""
    return write_image(folder, sqlite_image.rows_image(keys, codes, POSITIONS_DDL), next_stats, owner)


def drop_games(path: str, games: np.ndarray, years: np.ndarray) -> int:
    """Take the games numbered ``games`` (in the file, from 0) out of a segment file no row
    names yet: their rows deleted, their counts taken out of its next-move statistics; returns how many
    rows went.  ``years[i]``: the year of the file's game i (``nextmoves.NO_YEAR``: none).

    The writer does this when another parser's batch already brought some of a batch's
    games; the others keep their numbers (their ids leave a gap where these were).  One
    scan of the file instead of reading every row and writing the file again."""
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute("PRAGMA journal_mode=MEMORY")  # no journal file in the folder
        connection.execute("BEGIN IMMEDIATE")
        numbers = ",".join(str(int(game)) for game in games)
        found = connection.execute(f"DELETE FROM positions WHERE code >> {schema.GAME_SHIFT} IN ({numbers}) "
                                   "RETURNING key, code").fetchall()
        if found:
            rows = np.array(found, dtype=np.int64)
            removed = nextmoves.from_codes(rows[:, 0], rows[:, 1], lambda _low, _high: (0, years), 1)
            keys = ",".join(str(key) for key in np.unique(removed.keys).tolist())
            stored = connection.execute(f"SELECT key, stats FROM next_stats WHERE key IN ({keys})").fetchall()
            updates, deletes = nextmoves.take_out(stored, removed)
            connection.executemany("UPDATE next_stats SET stats = ? WHERE key = ?", [(s, k) for k, s in updates])
            connection.executemany("DELETE FROM next_stats WHERE key = ?", [(key,) for key in deletes])
        connection.execute("COMMIT")
        return len(found)
    finally:
        connection.close()


def image(keys: np.ndarray, codes: np.ndarray, own_codes: bool = False) -> np.ndarray:
    """The page image of a segment file's ``positions`` (what a parser writes); ``own_codes``:
    ``codes`` may be reordered in place (``sqlite_image.rows_image``)."""
    return sqlite_image.rows_image(keys, codes, POSITIONS_DDL, own_codes=own_codes)


def _write_stats(connection, next_stats: nextmoves.NextMoveStats) -> None:
    connection.execute(_STATS_DDL)
    connection.executemany("INSERT INTO next_stats (key, stats) VALUES (?, ?)", nextmoves.to_rows(next_stats))


def remove(folder: str, names) -> None:
    """Remove segment files (those already gone are no error)."""
    for name in names:
        try:
            os.unlink(os.path.join(folder, name))
        except FileNotFoundError:
            pass


# --- reading -----------------------------------------------------------------------------

class _Connections:
    """Read-only connections to segment files, lent to one thread at a time.

    Kept across queries (opening one costs more than reading a key from it); forgotten
    when the file leaves the book's snapshots (``keep``) and in a forked child."""

    def __init__(self):
        self.lock = threading.Lock()
        self.free: dict[str, list[sqlite3.Connection]] = {}
        self.pid = os.getpid()

    def take(self, path: str) -> sqlite3.Connection:
        with self.lock:
            if self.pid != os.getpid():  # a forked child: the parent's connections are not ours
                self.free, self.pid = {}, os.getpid()
            spare = self.free.get(path)
            if spare:
                return spare.pop()
        try:
            return sqlite3.connect(_read_uri(path, True), uri=True, check_same_thread=False)
        except sqlite3.OperationalError:
            if not os.path.exists(path):
                raise Gone(path) from None
            raise

    def give(self, path: str, connection: sqlite3.Connection) -> None:
        with self.lock:
            self.free.setdefault(path, []).append(connection)

    def keep(self, folder: str, names) -> None:
        """Close the connections of the folder's files not in ``names``."""
        paths = {os.path.join(folder, name) for name in names}
        with self.lock:
            stale = [path for path in self.free if os.path.dirname(path) == folder and path not in paths]
            closing = [connection for path in stale for connection in self.free.pop(path)]
        for connection in closing:
            connection.close()


_CONNECTIONS = _Connections()


def _each(folder: str, files, statement: str, params: dict) -> list[tuple]:
    """The first row of ``statement`` in each file, with ``:b`` its base."""
    found = []
    for segment in files:
        path = os.path.join(folder, segment.name)
        connection = _CONNECTIONS.take(path)
        try:
            found.append(connection.execute(statement, {**params, "b": segment.base}).fetchone())
        finally:
            _CONNECTIONS.give(path, connection)
    return found


def forget(folder: str, names) -> None:
    """Close the kept connections of files no longer in the book (``names``: those still in)."""
    _CONNECTIONS.keep(folder, names)


# One row: the next-move statistics' record of the key, or else its rows.  The rows' subquery stands in a
# SELECT whose WHERE is false when the next-move statistics have the key, so SQLite never reads them then (a
# NOT EXISTS inside the subquery's own WHERE was checked row by row: 0.7 ms a file, the empty board,
# in bench/book.py --corpus's hot openings).
_STATS = ("SELECT stats, NULL FROM next_stats WHERE key = :k UNION ALL "
          "SELECT NULL, (SELECT group_concat(code + :b) FROM positions WHERE key = :k) "
          "WHERE NOT EXISTS (SELECT 1 FROM next_stats WHERE key = :k)")
_CODES = "SELECT group_concat(code + :b) FROM positions WHERE key = :k"
_RANGE = "SELECT group_concat(key), group_concat(code + :b) FROM {table} WHERE key BETWEEN :low AND :top"


def key_stats(folder: str, files, key: int) -> tuple[list[bytes], list[str]]:
    """(next-move statistics blobs, comma-separated codes) of ``key`` in the files: a file that counts
    the key gives its blob, another its rows."""
    found = _each(folder, files, _STATS, {"k": key})
    return [bytes(blob) for blob, _ in found if blob is not None], [codes for _, codes in found if codes]


def codes(folder: str, files, key: int) -> list[str]:
    """Every code of ``key`` in the files, as comma-separated strings."""
    return [codes for codes, in _each(folder, files, _CODES, {"k": key}) if codes]


def range_rows(folder: str, files, low: int, high: int) -> tuple[np.ndarray, np.ndarray]:
    """(keys, codes) of the files' rows with ``low <= key <= high`` (signed), file after file."""
    return joined_rows(_each(folder, files, _RANGE.format(table="positions"), {"low": low, "top": high}))


def joined_rows(found) -> tuple[np.ndarray, np.ndarray]:
    """(keys, codes) from pairs of comma-separated strings (``group_concat``), one pair a segment:
    numpy parses a string in a fifth of the time the driver takes for a row object a row."""
    found = [(keys, codes) for keys, codes in found if keys]
    return joined_numbers([keys for keys, _ in found]), joined_numbers([codes for _, codes in found])


def joined_numbers(strings) -> np.ndarray:
    """The int64 numbers of comma-separated strings (``group_concat``, ``string_agg``), in order;
    None or empty strings hold none."""
    found = ",".join(string for string in strings if string)
    return np.fromstring(found, dtype=np.int64, sep=",") if found else np.empty(0, dtype=np.int64)


def read_rows(path: str) -> tuple[np.ndarray, np.ndarray]:
    """(keys, codes) of every row of one file, in key order, codes as stored."""
    connection = sqlite3.connect(_read_uri(path, True), uri=True)
    try:  # two strings parsed by numpy: a row object a row took 2.5 times as long
        found = connection.execute("SELECT group_concat(key), group_concat(code) FROM positions").fetchone()
        return joined_rows([found])
    finally:
        connection.close()


def read_stats(path: str) -> nextmoves.NextMoveStats:
    """Every record of one file's next-move statistics."""
    connection = sqlite3.connect(_read_uri(path, True), uri=True)
    try:
        return nextmoves.from_stored(connection.execute("SELECT key, stats FROM next_stats ORDER BY key").fetchall())
    finally:
        connection.close()


# --- merging ------------------------------------------------------------------------------

class Source(NamedTuple):
    """A segment a merge reads: a file (``table`` 'positions') or a table of the book's own file."""

    path: str
    table: str  # positions table
    next_stats: str | None  # its next-move statistics table, if it has one
    base: int


def merge(sources: list[Source], book_path: str, folder: str, owner: int) -> tuple[str, int]:
    """Write one segment file holding every row of ``sources`` and their next-move statistics; returns
    (its name, its rows).  Reads the book (read-only) for the years of games whose rows a
    part did not count.  Changes nothing else: the caller links the file in.

    Rows go through a key range at a time (``MERGE_ROWS_PER_STEP``) into the file's pages
    (``sqlite_image.RowsFile``: packed as SQLite's bulk load, no row inserted one by one and
    no copy of the file); SQLite then adds the table of statistics.  The file gets its name
    once it is whole.
    """
    os.makedirs(folder, exist_ok=True)
    name = new_name(owner)
    scratch = os.path.join(folder, name + ".merging")
    total = 0
    try:
        writer = sqlite_image.RowsFile(scratch, POSITIONS_DDL)
        readers = [sqlite3.connect(_read_uri(source.path, source.path != book_path), uri=True) for source in sources]
        mapped = []
        try:
            # a file's rows from its mapped pages; a table in the book's own file (a writer may change it) through SQL
            mapped = [sqlite_image.MappedRows(source.path, source.table) if source.path != book_path else None
                      for source in sources]
            rows = sum(reader.execute(f"SELECT count(*) FROM {source.table}").fetchone()[0]
                       for reader, source in zip(readers, sources))
            for low, high in key_ranges(max(1, rows // MERGE_ROWS_PER_STEP)):
                keys, codes = _read_range(readers, mapped, sources, low, high)
                if len(keys):
                    writer.add(*sorted_rows(keys, codes))
                    total += len(keys)
            merged = _merged_stats(readers, sources, book_path)
        finally:
            for reader in readers:
                reader.close()
            for part in mapped:
                if part is not None:
                    part.close()
            writer.close()
        out = sqlite3.connect(scratch, isolation_level=None)
        try:
            out.execute("PRAGMA journal_mode=OFF")
            out.execute("BEGIN")
            _write_stats(out, merged)
            out.execute("COMMIT")
        finally:
            out.close()
        path = os.path.join(folder, name)
        os.rename(scratch, path)
    finally:
        remove(folder, [os.path.basename(scratch)])
    _sync(path)
    return name, total


def sorted_rows(keys: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows in (key, code) order.  Each part's rows come in that order and later parts hold
    later games (higher codes), so a stable sort by key alone merges the runs: on a merge of
    the 366,535-game book's segments, a twentieth of the time of sorting by both columns
    (``np.lexsort``), which many equal keys slow down.  Where the parts' codes overlap (a
    merge of parts not in the order of their games), the rows are sorted by both."""
    order = np.argsort(keys, kind="stable")
    keys, codes = keys[order], codes[order]
    same = keys[1:] == keys[:-1]
    if np.any(same & (codes[1:] <= codes[:-1])):
        order = np.lexsort((codes, keys))
        keys, codes = keys[order], codes[order]
    return keys, codes


def _read_uri(path: str, immutable: bool) -> str:
    return sqlite_uri(path, mode="ro", **({"immutable": 1} if immutable else {}))


def _read_range(readers, mapped, sources, low: int, high: int) -> tuple[np.ndarray, np.ndarray]:
    """The parts' rows with keys in [low, high], their bases added, part after part."""
    keys, codes = [], []
    for reader, rows, source in zip(readers, mapped, sources):
        if rows is not None:
            found_keys, found_codes = rows.between(low, high)
            found_codes += source.base
        else:
            found_keys, found_codes = joined_rows([reader.execute(
                _RANGE.format(table=source.table), {"b": source.base, "low": low, "top": high}).fetchone()])
        keys.append(found_keys)
        codes.append(found_codes)
    return np.concatenate(keys), np.concatenate(codes)


def _merged_stats(readers, sources, book_path: str) -> nextmoves.NextMoveStats:
    """The parts' next-move statistics added up (``nextmoves.add_up``), as ``segments.merge`` does."""
    found = [nextmoves.from_stored(reader.execute(f"SELECT key, stats FROM {source.next_stats}").fetchall())
             if source.next_stats else nextmoves.empty() for reader, source in zip(readers, sources)]

    def count_rows(i: int, missing: np.ndarray) -> nextmoves.NextMoveStats:
        rows = readers[i].execute(
            f"SELECT p.key, p.code + ? FROM json_each(?) AS j JOIN {sources[i].table} AS p ON p.key = j.value",
            (sources[i].base, "[" + ",".join(map(str, missing.tolist())) + "]")).fetchall()
        pairs = np.array(rows, dtype=np.int64).reshape(-1, 2)
        return nextmoves.from_codes(pairs[:, 0], pairs[:, 1], lambda low, high: _years(book_path, low, high), 1)

    return nextmoves.add_up(found, count_rows)


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
