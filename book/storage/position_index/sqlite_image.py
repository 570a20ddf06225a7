"""A SQLite database image holding one table of (key, code) rows, written page by page.

The importer's writer hands each batch's position rows to SQLite as such an image:
``sqlite3.Connection.deserialize`` opens it as an attached in-memory database, and
SQLite's whole-table transfer copies its records into the new segment table
(``book.storage.position_index.segments``).  Handing the same 2.3 M rows of the Tygem archive to SQLite
through the driver (``INSERT ... VALUES`` of 250 rows, ``executemany``) cost most of
the writer's CPU (bench/book.py prints it per game): SQLite's own per-row work is most of it,
even when a compiled loop calls ``sqlite3_bind_int64`` and ``sqlite3_step``.  Writing the
pages here costs a fraction of that, and the transfer copies records without decoding them.

The format is SQLite's documented, stable file format (https://sqlite.org/fileformat2.html):

- page 1 is SQLite's own: the 100-byte database header and the schema table holding
  the one ``CREATE TABLE``, taken from an empty database SQLite made (``_first_page``);
  only its page count is changed.  The table's root is page 2.
- the table has no rowid, so it is an *index* b-tree: leaf pages (type 0x0A) hold the
  rows; interior pages (type 0x02) hold rows too, each with the page of the rows
  below it, and the page of the rows after their last one in their header.
- a row is a record: header size (3), the serial types of key and code, then each
  value big-endian in the fewest bytes SQLite would use for it.

Pages are filled as full as they go (the tree is built bottom up, a level at a time),
so the image is as packed as SQLite's own bulk load.
"""

from __future__ import annotations

import mmap
import os
import sqlite3
from functools import lru_cache

import numpy as np

from fuseki.engine.core.lazy_jit import njit  # numba is imported when a kernel first runs

PAGE_SIZE = 16384
_LEAF, _INTERIOR = 0x0A, 0x02  # b-tree page types of an index (a table without rowid)
_LEAF_HEADER, _INTERIOR_HEADER = 8, 12
_PAGE_COUNT_OFFSET = 28  # in the database header: the size of the database in pages
# SQLite never uses the page holding the byte at 2**30 (its "lock-byte page", PENDING_BYTE in
# https://sqlite.org/fileformat2.html): a tree naming it reads as malformed.  A file past 1 GiB
# (65,536 pages) leaves it empty.
LOCK_PAGE = (1 << 30) // PAGE_SIZE + 1
WIDE_CODES = 1 << 47  # codes written wide (serial type 5: 6 bytes, signed) are in [0, WIDE_CODES)


def rows_image(keys: np.ndarray, codes: np.ndarray, create_table: str, wide_codes: bool = False,
               own_codes: bool = False) -> np.ndarray:
    """The image (uint8) of a database whose one table, made by ``create_table``, holds the rows.

    ``create_table`` must make a table without rowid whose primary key is (key, code),
    both integers.  ``keys`` must be in ascending order; codes of equal keys may come
    in any order.  ``wide_codes``: every code takes 6 bytes, where SQLite would take
    the fewest (a valid record all the same), so that ``add_to_codes`` can change
    them in place.  Raises ValueError for unsorted keys, a repeated (key, code), or
    with ``wide_codes`` a code outside [0, WIDE_CODES).  ``own_codes``: ``codes`` (int64) may be
    reordered in place instead of copied (the caller has no further use for them).
    """
    keys, codes = ordered_rows(keys, codes, own_codes)
    if wide_codes and len(codes) and (codes.min() < 0 or codes.max() >= WIDE_CODES):
        raise ValueError("a code does not fit in 6 bytes")
    extra = _no_columns(len(keys))
    sizes = _payload_sizes(keys, codes, extra, wide_codes)
    levels, next_page = _levels(np.arange(len(keys), dtype=np.int64), sizes, np.empty(0, dtype=np.int64), 3)
    pages = next_page - 1
    image = np.zeros(pages * PAGE_SIZE, dtype=np.uint8)
    image[:PAGE_SIZE] = _first_page_of(create_table, pages)
    for rows, starts, ends, children, numbers in levels:
        _write_pages(image, numbers, rows, starts, ends, children, keys, codes, extra, sizes, PAGE_SIZE, wide_codes)
    return image


def _no_columns(rows: int) -> np.ndarray:
    """The further columns of rows that have none (a positions table's: key and code only)."""
    return np.empty((rows, 0), dtype=np.int64)


def _levels(rows: np.ndarray, sizes: np.ndarray, children: np.ndarray, next_page: int):
    """The pages of the tree from one level up to its root: ([(rows, starts, ends, children, page
    numbers)] a level each, the root on page 2; the page after the last).  ``rows``: the level's
    rows (indexes into ``sizes``); ``children``: the pages below them (one more than the rows),
    empty for leaves."""
    levels = []
    while True:
        interior = len(children) > 0
        header = _INTERIOR_HEADER if interior else _LEAF_HEADER
        # a cell: its pointer (2), the payload size (1 byte: payloads are < 128), [child (4)], payload
        starts, ends = _plan_pages(rows, sizes, header, 3 + 4 * interior, PAGE_SIZE)
        if len(starts) == 1:  # the root
            levels.append((rows, starts, ends, children, np.array([2], dtype=np.int64)))
            return levels, next_page
        numbers, next_page = _numbered(next_page, len(starts))
        levels.append((rows, starts, ends, children, numbers))
        rows, children = rows[ends[:-1]], numbers  # the row after each page but the last goes up


def _numbered(next_page: int, count: int) -> tuple[np.ndarray, int]:
    """(the numbers of ``count`` new pages from ``next_page`` on, the page after them), the lock-byte
    page left out."""
    numbers = np.arange(next_page, next_page + count, dtype=np.int64)
    if next_page <= LOCK_PAGE:
        numbers[numbers >= LOCK_PAGE] += 1
    return numbers, int(numbers[-1]) + 1 if count else next_page


def _first_page_of(create_table: str, pages: int) -> np.ndarray:
    first = _first_page(create_table).copy()
    first[_PAGE_COUNT_OFFSET:_PAGE_COUNT_OFFSET + 4] = np.frombuffer(pages.to_bytes(4, "big"), dtype=np.uint8)
    return first


class RowsFile:
    """A database file of one table of (key, code) rows, written a sorted chunk at a time:
    byte for byte the image ``rows_image`` makes of all the rows (leaf pages as the chunks
    come, the levels above them once ``close`` knows the last row), so a merge of many
    segment file into the book's own file (``segment_files.fold_in``) holds one chunk, not every
    row, and SQLite never inserts them one by one.  Rows must come in (key, code) order, across chunks too.

    ``columns``: integer columns each row has after its key and code (the corner book's played,
    wins and games: ``corner_build``), in the order ``create_table`` declares them; the primary
    key is still (key, code)."""

    def __init__(self, path: str, create_table: str, columns: int = 0):
        self.path, self.create_table = path, create_table
        self.file = open(path, "w+b")
        self.next_page = 3  # page 1: the header and schema; page 2: the root, written by close
        self.keys = self.codes = np.empty(0, dtype=np.int64)  # rows not yet in a page
        self.extra = np.empty((0, columns), dtype=np.int64)  # their further columns
        self.leaves: list[np.ndarray] = []  # page numbers of the leaves written
        self.up: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # the rows between them

    def add(self, keys: np.ndarray, codes: np.ndarray, extra: np.ndarray | None = None) -> None:
        """Rows after those added so far, in (key, code) order (ValueError otherwise); ``extra``:
        their further columns (rows x ``columns``)."""
        keys = np.concatenate([self.keys, np.asarray(keys, dtype=np.int64)])
        codes = np.concatenate([self.codes, np.asarray(codes, dtype=np.int64)])
        columns = self.extra.shape[1]
        extra = _no_columns(len(keys) - len(self.keys)) if extra is None else np.asarray(extra, dtype=np.int64)
        if extra.ndim != 2 or extra.shape[1] != columns or len(self.extra) + len(extra) != len(keys):
            raise ValueError(f"the further columns are not one row of {columns} for each key")
        extra = np.concatenate([self.extra, extra])
        if np.any((keys[1:] < keys[:-1]) | ((keys[1:] == keys[:-1]) & (codes[1:] <= codes[:-1]))):
            raise ValueError("rows are not in ascending (key, code) order")
        sizes = _payload_sizes(keys, codes, extra, False)
        rows = np.arange(len(keys), dtype=np.int64)
        starts, ends = _plan_pages(rows, sizes, _LEAF_HEADER, 3, PAGE_SIZE)
        # the last two pages wait for more rows: _plan_pages leaves the last row a page of its own
        # by ending the page before it one row early, which more rows would not
        kept = len(starts) - 2
        if kept > 0:
            self._write(rows, starts[:kept], ends[:kept], np.empty(0, dtype=np.int64), keys, codes, extra, sizes)
            up = ends[:kept]  # one row after each page: a page follows
            self.up.append((keys[up], codes[up], extra[up]))
            keys, codes, extra = keys[starts[kept]:], codes[starts[kept]:], extra[starts[kept]:]
        self.keys, self.codes, self.extra = keys.copy(), codes.copy(), extra.copy()

    def close(self) -> None:
        """Write the last leaves, the levels above them and the first page; sync the file."""
        try:
            keys, codes, extra = self.keys, self.codes, self.extra
            sizes = _payload_sizes(keys, codes, extra, False)
            rows = np.arange(len(keys), dtype=np.int64)
            if not self.leaves:  # every row is still here: the whole tree at once, as rows_image
                levels, self.next_page = _levels(rows, sizes, np.empty(0, dtype=np.int64), 3)
                for level in levels:
                    self._write(*level[:4], keys, codes, extra, sizes, numbers=level[4])
            else:
                starts, ends = _plan_pages(rows, sizes, _LEAF_HEADER, 3, PAGE_SIZE)
                self._write(rows, starts, ends, np.empty(0, dtype=np.int64), keys, codes, extra, sizes)
                up = ends[:-1]
                self.up.append((keys[up], codes[up], extra[up]))
                up_keys = np.concatenate([k for k, _, _ in self.up])
                up_codes = np.concatenate([c for _, c, _ in self.up])
                up_extra = np.concatenate([e for _, _, e in self.up])
                up_sizes = _payload_sizes(up_keys, up_codes, up_extra, False)
                levels, self.next_page = _levels(np.arange(len(up_keys), dtype=np.int64), up_sizes,
                                                 np.concatenate(self.leaves), self.next_page)
                for level in levels:
                    self._write(*level[:4], up_keys, up_codes, up_extra, up_sizes, numbers=level[4])
            os.pwrite(self.file.fileno(), _first_page_of(self.create_table, self.next_page - 1).tobytes(), 0)
            self.file.flush()
            os.fsync(self.file.fileno())
        finally:
            self.file.close()

    def _write(self, rows, starts, ends, children, keys, codes, extra, sizes, numbers=None) -> None:
        """Pages of one level, numbered from ``self.next_page`` on (leaves) or ``numbers``."""
        if numbers is None:
            numbers, self.next_page = _numbered(self.next_page, len(starts))
            if not len(children):
                self.leaves.append(numbers)
        pages = np.zeros(int(numbers[-1] - numbers[0] + 1) * PAGE_SIZE, dtype=np.uint8)  # the lock-byte page: zeros
        _write_pages(pages, numbers - numbers[0] + 1, rows, starts, ends, children, keys, codes, extra, sizes,
                     PAGE_SIZE, False)
        os.pwrite(self.file.fileno(), pages.tobytes(), int(numbers[0] - 1) * PAGE_SIZE)


def add_to_codes(image: np.ndarray, delta: int) -> None:
    """Add ``delta`` to every code of an image written with ``wide_codes``, in place.

    The importer's workers write a batch's image with the games numbered from 0; the
    writer, once it knows the first game id, adds it (shifted) here instead of writing
    the image again.  The same number added to every code keeps the rows in order, so
    the tree stays valid.  Raises ValueError (the image unchanged) if a code is not
    wide or would leave [0, WIDE_CODES).
    """
    # One pass that adds and checks; 6 bytes are a number modulo 2**48, so on failure the
    # same pass subtracting gives back the image's bytes.
    fits = _add_to_codes(image, PAGE_SIZE, delta)
    if fits != 1:
        _add_to_codes(image, PAGE_SIZE, -delta)
        raise ValueError("a code would not fit in 6 bytes" if fits == 0
                         else "the image's codes are not all written wide")


def row_count(image: np.ndarray) -> int:
    """The number of rows of an image."""
    return int(_row_count(image, PAGE_SIZE))


def image_rows(image: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(keys, codes) of every row of an image, in primary-key order (the tree walked in order)."""
    keys, codes, n = _rows_between(image, PAGE_SIZE, 2, np.int64(-(1 << 63)), np.int64((1 << 63) - 1))
    return keys[:n], codes[:n]


def empty_image(create_table: str) -> bytes:
    """The image of the database with the table and no rows (to free a staged image's memory)."""
    empty = np.empty(0, dtype=np.int64)
    return rows_image(empty, empty, create_table).tobytes()


@lru_cache(maxsize=4)
def _first_page(create_table: str) -> np.ndarray:
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute(f"PRAGMA page_size={PAGE_SIZE}")
        conn.execute(create_table)
        (root,), = conn.execute("SELECT rootpage FROM sqlite_schema").fetchall()
        image = conn.serialize()
    finally:
        conn.close()
    if root != 2 or len(image) != 2 * PAGE_SIZE:
        raise ValueError(f"{create_table!r} does not make one table rooted on page 2")
    first = np.frombuffer(image[:PAGE_SIZE], dtype=np.uint8).copy()
    first.flags.writeable = False
    return first


def ordered_rows(keys: np.ndarray, codes: np.ndarray, own_codes: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The rows (``keys`` ascending) as int64 in (key, code) order, the codes of each key put in
    order (a copy, unless ``own_codes``: then ``codes`` may be reordered in place).  ValueError for
    keys and codes of other lengths, keys out of order or a repeated (key, code) row."""
    keys = np.ascontiguousarray(keys, dtype=np.int64)
    codes = np.ascontiguousarray(codes, dtype=np.int64) if own_codes else np.array(codes, dtype=np.int64)
    if len(keys) != len(codes):
        raise ValueError("keys and codes differ in length")
    if np.any(keys[1:] < keys[:-1]):
        raise ValueError("keys are not in ascending order")
    order_ties(keys, codes)
    if np.any((keys[1:] == keys[:-1]) & (codes[1:] == codes[:-1])):
        raise ValueError("a (key, code) row is repeated")
    return keys, codes


def order_ties(keys: np.ndarray, codes: np.ndarray) -> None:
    """Put the codes of each run of equal keys in ascending order, in place.  Rows that come in
    that order already (a merge's: a stable sort by key of parts in the order of their games)
    are only looked at: their lexsort was 7.1 s of a 13-segment merge's 11.1 s (38.7 M rows, the
    1.5 million games' book; bench/merge.py)."""
    same = keys[1:] == keys[:-1]
    if not np.any(same & (codes[1:] < codes[:-1])):
        return
    tied = np.zeros(len(keys), dtype=bool)
    tied[1:] |= same
    tied[:-1] |= same
    rows = np.flatnonzero(tied)
    if len(rows):
        codes[rows] = codes[rows[np.lexsort((codes[rows], keys[rows]))]]


@njit(cache=True, inline="always")
def _serial_type(v):
    """(serial type, bytes) SQLite stores an integer with (file format 4)."""
    u = ~v if v < 0 else v
    if v == 0 or v == 1:
        return 8 + v, 0
    if u <= 127:
        return 1, 1
    if u <= 32767:
        return 2, 2
    if u <= 8388607:
        return 3, 3
    if u <= 2147483647:
        return 4, 4
    if u <= 140737488355327:
        return 5, 6
    return 6, 8


@njit(cache=True, inline="always")
def _code_type(v, wide):
    return (5, 6) if wide else _serial_type(v)


@njit(cache=True)
def _payload_sizes(keys, codes, extra, wide):
    """Each row's record size: its header (its size, then a serial type a column), then the
    values; ``extra``: the further columns (rows x columns, none for a positions table)."""
    sizes = np.empty(len(keys), dtype=np.int8)  # a payload is under 128 bytes (5 columns: at most 46)
    for i in range(len(keys)):
        sizes[i] = 3 + _serial_type(keys[i])[1] + _code_type(codes[i], wide)[1]
    if extra.shape[1]:  # a second pass, so that the positions' rows (none) cost what they did
        for i in range(len(keys)):
            size = sizes[i] + extra.shape[1]
            for c in range(extra.shape[1]):
                size += _serial_type(extra[i, c])[1]
            sizes[i] = size
    return sizes


@njit(cache=True)
def _plan_pages(rows, sizes, header, cell_overhead, page_size):
    """Cut one level's rows into pages: page p holds rows[starts[p]:ends[p]].

    Each page but the last is followed by the row ``rows[ends[p]]``, which goes up to
    the next level.  A page takes rows while they fit; a last page is never left empty.
    """
    n = len(rows)
    starts = np.empty(n + 1, dtype=np.int64)
    ends = np.empty(n + 1, dtype=np.int64)
    pages = 0
    a = 0
    done = False
    while not done:
        used = header
        b = a
        while b < n and used + sizes[rows[b]] + cell_overhead <= page_size:
            used += sizes[rows[b]] + cell_overhead
            b += 1
        if b == n:
            done = True
        elif b + 1 == n:  # the row going up would be the last: leave it for a last page
            b -= 1
        starts[pages] = a
        ends[pages] = b
        pages += 1
        a = b + 1
    # copies: views would keep the row-sized buffers alive until the image is written
    return starts[:pages].copy(), ends[:pages].copy()


@njit(cache=True, inline="always")
def _put(image, at, value, length):
    for j in range(length):
        image[at + length - 1 - j] = (value >> (8 * j)) & 0xFF


@njit(cache=True)
def _write_pages(image, numbers, rows, starts, ends, children, keys, codes, extra, sizes, page_size, wide):
    """Write one level's pages; on an interior level ``children[i]`` is the page before rows[i]."""
    interior = len(children) > 0
    header = _INTERIOR_HEADER if interior else _LEAF_HEADER
    columns = extra.shape[1]
    for p in range(len(starts)):
        base = (numbers[p] - 1) * page_size
        a, b = starts[p], ends[p]
        image[base] = _INTERIOR if interior else _LEAF
        _put(image, base + 3, b - a, 2)  # cells; bytes 1-2 (free blocks) and 7 (fragments) stay 0
        if interior:
            _put(image, base + 8, children[b], 4)  # the page of the rows after this page's last
        top = page_size
        for i in range(a, b):
            r = rows[i]
            top -= sizes[r] + 1 + 4 * interior
            _put(image, base + header + 2 * (i - a), top, 2)
            at = base + top
            if interior:
                _put(image, at, children[i], 4)
                at += 4
            key_type, key_bytes = _serial_type(keys[r])
            code_type, code_bytes = _code_type(codes[r], wide)
            image[at] = sizes[r]
            image[at + 1] = 3 + columns
            image[at + 2] = key_type
            image[at + 3] = code_type
            _put(image, at + 4 + columns, keys[r], key_bytes)
            _put(image, at + 4 + columns + key_bytes, codes[r], code_bytes)
            if columns:
                value = at + 4 + columns + key_bytes + code_bytes
                for c in range(columns):
                    column_type, column_bytes = _serial_type(extra[r, c])
                    image[at + 4 + c] = column_type
                    _put(image, value, extra[r, c], column_bytes)
                    value += column_bytes
        _put(image, base + 5, top, 2)  # where the cell content starts


# --- reading an image back: its b-tree pages are 2 .. the page count --------------------------

_BODY_BYTES = np.array([0, 1, 2, 3, 4, 6, 8, 8, 0, 0], dtype=np.int64)  # by serial type (7: a float)


@njit(cache=True, inline="always")
def _get(image, at, length):
    """The big-endian signed integer of ``length`` bytes at ``at``."""
    value = np.int64(0)
    for j in range(length):
        value = (value << 8) | np.int64(image[at + j])
    if 0 < length < 8 and image[at] >= 0x80:
        value -= np.int64(1) << (8 * length)
    return value


@njit(cache=True, inline="always")
def _cell(image, base, index):
    """Where the record of a page's cell ``index`` starts (its payload size byte)."""
    interior = image[base] == _INTERIOR
    header = _INTERIOR_HEADER if interior else _LEAF_HEADER
    pointer = (np.int64(image[base + header + 2 * index]) << 8) | np.int64(image[base + header + 2 * index + 1])
    return base + pointer + (4 if interior else 0)


@njit(cache=True, inline="always")
def _cells(image, base):
    return (np.int64(image[base + 3]) << 8) | np.int64(image[base + 4])


@njit(cache=True)
def _row_count(image, page_size):
    total = 0
    for page in range(2, len(image) // page_size + 1):
        total += _cells(image, (page - 1) * page_size)
    return total


@njit(cache=True, inline="always")
def _emit(image, at, keys, codes, n):
    key_type, code_type = image[at + 2], image[at + 3]
    key_bytes = _BODY_BYTES[key_type]
    keys[n] = key_type - 8 if key_type >= 8 else _get(image, at + 4, key_bytes)
    codes[n] = code_type - 8 if code_type >= 8 else _get(image, at + 4 + key_bytes, _BODY_BYTES[code_type])
    return n + 1


@njit(cache=True)
def _add_to_codes(image, page_size, delta):
    """Add to every wide code (modulo 2**48: undone by adding -delta); 1 if every sum is in
    [0, WIDE_CODES), 0 if one is not, -1 if a code is not wide (all other codes changed)."""
    fits = 1
    for page in range(2, len(image) // page_size + 1):
        base = (page - 1) * page_size
        for c in range(_cells(image, base)):
            at = _cell(image, base, c)
            if image[at + 3] != 5:
                fits = -1
                continue
            code_at = at + 4 + _BODY_BYTES[image[at + 2]]
            code = _get(image, code_at, 6) + delta
            if fits == 1 and (code < 0 or code >= WIDE_CODES):
                fits = 0
            _put(image, code_at, code, 6)
    return fits


# --- reading a table of a database file by its mapped pages, a key range at a time ---------------

class MappedRows:
    """The rows of one (key, code) table of a database file that never changes (a segment
    file of a version-4 book), read from its mapped pages a key range at a time: what the
    upgrade to packed segment files reads (``book.storage.migrate``), where SQLite writing every
    row as text (``group_concat``) and numpy reading it back took 2.4 of 5.4 s for 6.4 million
    rows (measured on merges, when merges read such files).  Raises ValueError
    naming the file where a page is not of a table without rowid."""

    def __init__(self, path: str, table: str):
        self.path = path
        conn = sqlite3.connect(path)  # a plain path: SQLite reads its name as it is
        conn.execute("PRAGMA query_only = 1")
        try:
            found = conn.execute("SELECT rootpage FROM sqlite_schema WHERE name = ?", (table,)).fetchone()
            self.page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        finally:
            conn.close()
        if found is None:
            raise ValueError(f"{path}: no table {table}")
        self.root = found[0]
        with open(path, "rb") as file:
            self.map = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
        self.image = np.frombuffer(self.map, dtype=np.uint8)

    def between(self, low: int, high: int) -> tuple[np.ndarray, np.ndarray]:
        """(keys, codes) of the rows whose key is in [low, high], in (key, code) order."""
        keys, codes, n = _rows_between(self.image, self.page_size, self.root, np.int64(low), np.int64(high))
        if n < 0:
            raise ValueError(f"{self.path}: page {-n} is not a page of a table without rowid")
        return keys[:n], codes[:n]

    def close(self) -> None:
        del self.image
        self.map.close()


@njit(cache=True, inline="always")
def _cell_key(image, at):
    key_type = image[at + 2]
    return key_type - 8 if key_type >= 8 else _get(image, at + 4, _BODY_BYTES[key_type])


@njit(cache=True)
def _rows_between(image, page_size, root, low, high):
    """The rows from ``root`` in order: each interior page's cells between the subtrees on their
    left and right (at most a few levels; 64 is far more than a 4 GB image needs), going down
    only where keys in [low, high] can be (a subtree left of a separator below ``low`` is
    skipped) and ending at the first key above ``high``.  Returns (keys, codes, rows), rows < 0
    (minus the page) for a page of another kind."""
    room = page_size // 4  # more rows than a page holds (a cell takes at least 6 bytes with its pointer)
    keys = np.empty(room, dtype=np.int64)
    codes = np.empty(room, dtype=np.int64)
    pages = np.empty(64, dtype=np.int64)
    states = np.empty(64, dtype=np.int64)  # interior: 2i = go down child i next, 2i + 1 = emit cell i
    pages[0], states[0], depth, n = root, 0, 1, 0
    while depth > 0:
        if n + room > len(keys):
            keys = np.concatenate((keys, np.empty(len(keys), dtype=np.int64)))
            codes = np.concatenate((codes, np.empty(len(codes), dtype=np.int64)))
        page = pages[depth - 1]
        base = (page - 1) * page_size
        if image[base] != _INTERIOR and image[base] != _LEAF:
            return keys, codes, -page
        cells = _cells(image, base)
        state = states[depth - 1]
        if image[base] == _LEAF:
            for c in range(cells):
                at = _cell(image, base, c)
                key = _cell_key(image, at)
                if key > high:
                    return keys, codes, n
                if key >= low:
                    n = _emit(image, at, keys, codes, n)
            depth -= 1
        elif state > 2 * cells:
            depth -= 1
        elif state % 2 == 1:  # the separator after child state // 2
            at = _cell(image, base, state // 2)
            key = _cell_key(image, at)
            if key > high:
                return keys, codes, n
            if key >= low:
                n = _emit(image, at, keys, codes, n)
            states[depth - 1] += 1
        else:
            i = state // 2
            if i < cells and _cell_key(image, _cell(image, base, i)) < low:
                states[depth - 1] += 2  # every row of child i is below its separator, below low
                continue
            at = base + 8 if i == cells else _cell(image, base, i) - 4
            states[depth - 1] += 1
            pages[depth], states[depth] = _get(image, at, 4) & 0xFFFFFFFF, 0
            depth += 1
    return keys, codes, n
