"""A segment file's format: its rows and next-move statistics as flat sorted arrays.

A segment file (``book.storage.position_index.segment_files``) is written once and never changed, and is
read by key: so it needs no page tree.  A row of SQLite's b-tree cost 20 bytes (an 8-byte
key, a 6-byte code, 6 bytes of cell pointer and record headers: ``dbstat`` of a segment of
4.2 M rows), three quarters of the whole book; here it costs 14 (docs/storage.md).

Layout (little-endian; every array starts on a multiple of 8):

    header  64 bytes: MAGIC, rows, stats rows, FENCE, then zeros
    keys    int64[rows]           signed position keys, ascending
    codes   6 bytes a row         unsigned, ascending within a key (``schema``'s code layout)
    fence   int64[ceil(rows / FENCE)]   keys[0], keys[FENCE], ...: where to look for a key
    stats keys    int64[stats rows]     the next-move statistics (``nextmoves.NextMoveStats``),
    stats counts  int32[stats rows, 5]  sorted by (key, year, next)

A reader finds a key with two binary searches: the fence's (read once, in memory) and the
keys' between two fence entries (one page, read when asked).  ``Writer`` writes a merge's rows a chunk at
a time into their places, so a merge holds one chunk and never the whole file.
"""

from __future__ import annotations

import os

import numpy as np

from fuseki.book.storage.position_index import nextmoves
from fuseki.book.storage.position_index.sqlite_image import ordered_rows

MAGIC = b"fsk-seg1"
FENCE = 512  # a fence entry every this many keys: one 4 KB page of keys between two entries
_HEADER = 64
_CODE_BYTES = 6
CODE_LIMIT = 1 << (8 * _CODE_BYTES)  # codes are in [0, CODE_LIMIT)


_NO_CODES = np.empty(0, dtype=np.int64)
_NO_CODES.flags.writeable = False


class FormatError(ValueError):
    """A file that is not a whole segment file of this format."""


def _pad(size: int) -> int:
    return -size % 8


class _Layout:
    """Where each array of a file of ``rows`` rows and ``stats`` statistics rows lies."""

    def __init__(self, rows: int, stats: int):
        self.rows, self.stats = rows, stats
        self.keys = _HEADER
        self.codes = self.keys + 8 * rows
        self.fence = self.codes + _CODE_BYTES * rows + _pad(_CODE_BYTES * rows)
        self.fences = -(-rows // FENCE)
        self.stats_keys = self.fence + 8 * self.fences
        self.stats_counts = self.stats_keys + 8 * stats
        self.size = self.stats_counts + 4 * 5 * stats

    def header(self) -> bytes:
        head = MAGIC + np.array([self.rows, self.stats, FENCE], dtype="<i8").tobytes()
        return head + bytes(_HEADER - len(head))


def encode_codes(codes: np.ndarray) -> bytes:
    """Codes (int64 in [0, CODE_LIMIT)) as 6 bytes each."""
    wide = np.ascontiguousarray(codes, dtype="<i8")
    return wide.view(np.uint8).reshape(-1, 8)[:, :_CODE_BYTES].tobytes()


def decode_codes(raw) -> np.ndarray:
    """int64 codes of 6-byte ones (a bytes-like object of 6 bytes a code)."""
    packed = np.frombuffer(raw, dtype=np.uint8).reshape(-1, _CODE_BYTES)
    wide = np.zeros((len(packed), 8), dtype=np.uint8)
    wide[:, :_CODE_BYTES] = packed
    return wide.view("<i8").ravel().astype(np.int64, copy=False)


def _checked(keys: np.ndarray, codes: np.ndarray, own_codes: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``sqlite_image.ordered_rows``, and ValueError for a code out of [0, CODE_LIMIT)."""
    keys, codes = ordered_rows(keys, codes, own_codes)
    if len(codes) and (codes.min() < 0 or codes.max() >= CODE_LIMIT):
        raise ValueError(f"a code is outside [0, 2**{8 * _CODE_BYTES})")
    return keys, codes


def _stats_bytes(next_stats: nextmoves.NextMoveStats) -> bytes:
    return (np.ascontiguousarray(next_stats.keys, dtype="<i8").tobytes()
            + np.ascontiguousarray(next_stats.counts, dtype="<i4").reshape(-1, 5).tobytes())


def write(path: str, keys: np.ndarray, codes: np.ndarray, next_stats: nextmoves.NextMoveStats) -> None:
    """Write a segment file of the rows (``keys`` ascending) and their next-move statistics, in
    one write; the file is on disk (synced) once this returns."""
    keys, codes = _checked(keys, codes)
    layout = _Layout(len(keys), len(next_stats))
    fence = keys[::FENCE]
    parts = [layout.header(), keys.astype("<i8").tobytes(), encode_codes(codes),
             bytes(_pad(_CODE_BYTES * len(keys))), fence.astype("<i8").tobytes(), _stats_bytes(next_stats)]
    with open(path, "wb") as out:
        out.write(b"".join(parts))
        out.flush()
        os.fsync(out.fileno())


class Writer:
    """A segment file of ``rows`` rows written a chunk at a time (a merge): each ``add`` gives the
    next rows in (key, code) order; ``finish`` adds the next-move statistics and syncs.  Raises
    ValueError when the rows given are not ``rows`` or out of order."""

    def __init__(self, path: str, rows: int):
        self.path, self.rows, self.done = path, rows, 0
        self.layout = _Layout(rows, 0)
        self.fence: list[np.ndarray] = []
        self.last: tuple[int, int] | None = None
        self.file = open(path, "wb")

    def add(self, keys: np.ndarray, codes: np.ndarray, own_codes: bool = False) -> None:
        """``own_codes``: ``codes`` may be reordered in place (``sqlite_image.ordered_rows``)."""
        keys, codes = _checked(keys, codes, own_codes)
        if not len(keys):
            return
        if self.done + len(keys) > self.rows:
            raise ValueError(f"more rows than the {self.rows} announced")
        if self.last is not None and (int(keys[0]), int(codes[0])) <= self.last:
            raise ValueError("a chunk's rows do not follow the rows before it")
        # the array itself, not a copy of its bytes (int64 is "<i8" on the machines numba runs on)
        os.pwrite(self.file.fileno(), np.ascontiguousarray(keys, dtype="<i8"), self.layout.keys + 8 * self.done)
        os.pwrite(self.file.fileno(), encode_codes(codes), self.layout.codes + _CODE_BYTES * self.done)
        self.fence.append(keys[-self.done % FENCE::FENCE])  # the rows whose place is a multiple of FENCE
        self.done += len(keys)
        self.last = int(keys[-1]), int(codes[-1])

    def finish(self, next_stats: nextmoves.NextMoveStats) -> None:
        if self.done != self.rows:
            raise ValueError(f"{self.done} rows given of the {self.rows} announced")
        layout = _Layout(self.rows, len(next_stats))
        fence = np.concatenate(self.fence) if self.fence else np.empty(0, dtype=np.int64)
        tail = bytes(_pad(_CODE_BYTES * self.rows)) + fence.astype("<i8").tobytes() + _stats_bytes(next_stats)
        os.pwrite(self.file.fileno(), tail, layout.fence - _pad(_CODE_BYTES * self.rows))
        os.pwrite(self.file.fileno(), layout.header(), 0)
        self.file.flush()
        os.fsync(self.file.fileno())
        self.close()

    def close(self) -> None:
        self.file.close()


class Reader:
    """A segment file open for reading.  Raises FileNotFoundError when there is no file and
    FormatError, naming the file, when it is not a whole segment file.

    The fence and the statistics' keys are read once (about 3 bytes a game); everything else
    is read when asked, with ``os.pread`` (threads share the reader): a key costs two reads,
    its stretch of keys (one page) and its codes.  Not mapped: a process that reads many keys
    would show the pages it touched as its own memory (the 1.5-million-game book's benchmark
    process reached 8 GB of resident set that way)."""

    def __init__(self, path: str):
        self.path, self._fd = path, -1
        self._fd = os.open(path, os.O_RDONLY)
        try:
            size = os.fstat(self._fd).st_size
            head = os.pread(self._fd, _HEADER, 0)
            if len(head) < _HEADER or head[:len(MAGIC)] != MAGIC:
                raise FormatError(f"{path} is not a fuseki segment file (no {MAGIC.decode()} header)")
            rows, stats, fence = np.frombuffer(head, dtype="<i8", count=3, offset=len(MAGIC)).tolist()
            self._layout = _Layout(rows, stats)
            if fence != FENCE or self._layout.size != size:
                raise FormatError(f"{path}: a segment file of {rows} rows is {self._layout.size} bytes, "
                                  f"this one {size} (cut short or damaged)")
            self.rows = rows
            self.fence = self._int64(self._layout.fence, self._layout.fences)
            self._stats_keys = self._int64(self._layout.stats_keys, stats)
        except BaseException:
            self.close()
            raise

    def _read(self, at: int, size: int) -> bytes:
        found = os.pread(self._fd, size, at)
        if len(found) != size:
            raise FormatError(f"{self.path}: cut short while it was read")
        return found

    def _int64(self, at: int, count: int) -> np.ndarray:
        return np.frombuffer(self._read(at, 8 * count), dtype="<i8").astype(np.int64)

    def _keys(self, first: int, end: int) -> np.ndarray:
        return self._int64(self._layout.keys + 8 * first, end - first)

    def _stretch(self, low: int, high: int) -> tuple[int, np.ndarray]:
        """(first, keys): the file's keys from place ``first`` on that hold every row with ``low <= key
        <= high`` and the row either side; the fence says where, one read fetches them (a page for
        one key of a few rows)."""
        block = int(self.fence.searchsorted(low, "left"))
        last = int(self.fence.searchsorted(high, "right")) if high != low or (
            block < len(self.fence) and self.fence[block] == low) else block
        first, end = max(block - 1, 0) * FENCE, min(last * FENCE + 1, self.rows)
        return first, np.frombuffer(self._read(self._layout.keys + 8 * first, 8 * (end - first)), dtype="<i8")

    def span(self, low: int, high: int) -> tuple[int, int]:
        """(first, end) of the rows with ``low <= key <= high``."""
        first, keys = self._stretch(low, high)
        return first + int(keys.searchsorted(low, "left")), first + int(keys.searchsorted(high, "right"))

    def codes(self, first: int, end: int) -> np.ndarray:
        """The codes of rows ``first:end`` (int64)."""
        return decode_codes(self._read(self._layout.codes + _CODE_BYTES * first, _CODE_BYTES * (end - first)))

    def key_codes(self, key: int) -> np.ndarray:
        """The codes of ``key``, ascending: a query's read of every file, one read of keys and,
        where the key is there, one of its codes."""
        first, end = self.span(key, key)
        return self.codes(first, end) if end > first else _NO_CODES

    def between(self, low: int, high: int) -> tuple[np.ndarray, np.ndarray]:
        """(keys, codes) of the rows with ``low <= key <= high``."""
        start, keys = self._stretch(low, high)
        first, end = int(keys.searchsorted(low, "left")), int(keys.searchsorted(high, "right"))
        return keys[first:end].astype(np.int64), self.codes(start + first, start + end)

    def all_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """(keys, codes) of every row."""
        return self._keys(0, self.rows), self.codes(0, self.rows)

    def key_stats(self, key: int) -> nextmoves.NextMoveStats | None:
        """The next-move statistics of ``key``; None: the file did not count it (its rows answer)."""
        first = int(self._stats_keys.searchsorted(key, "left"))
        if first == len(self._stats_keys) or self._stats_keys[first] != key:
            return None
        end = int(self._stats_keys.searchsorted(key, "right"))
        return nextmoves.NextMoveStats(self._stats_keys[first:end].copy(), self._counts(first, end))

    def _counts(self, first: int, end: int) -> np.ndarray:
        raw = self._read(self._layout.stats_counts + 20 * first, 20 * (end - first))
        return np.frombuffer(raw, dtype="<i4").reshape(-1, 5).astype(np.int32)

    def all_stats(self) -> nextmoves.NextMoveStats:
        return nextmoves.NextMoveStats(self._stats_keys.copy(), self._counts(0, len(self._stats_keys)))

    def close(self, _close=os.close) -> None:
        """Close the file (a reader forgotten without it closes once no query holds it)."""
        if self._fd >= 0:
            _close(self._fd)  # bound early: at interpreter exit the module's ``os`` may be gone
            self._fd = -1

    def __del__(self):
        self.close()


def is_packed(path: str) -> bool:
    """Whether the file starts as a segment file of this format (an older book's are SQLite databases)."""
    with open(path, "rb") as file:
        return file.read(len(MAGIC)) == MAGIC
