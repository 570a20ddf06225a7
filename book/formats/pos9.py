"""The 9x9 research file formats (issue 5): Zobrist table file and position file.

Reading guide: table file (``Table9``, ``read_table``, ``write_table``), then the
rotation-normalised id (``normalised_hash``), then the position file
(``Positions``, ``iter_positions``, ``read_positions``; ``Positions.to_bytes`` writes).
The scored file (``Scores``, ``read_scores``; ``Scores.to_bytes`` writes) is in
``book.formats.pos9_scores``; the conventions below hold for both modules.

Conventions
-----------
Board points are numbered 0..80 row by row from the top-left corner:
``index = 9 * y + x`` with (x, y) as in ``engine.core.coords`` (column from the
left, row from the top).  A board is 81 ASCII bytes, ``#`` black, ``O`` white,
``.`` empty (``PositionDB`` order).

Byte order: every binary integer is **big-endian** (network order).  The
8 hash bytes of a ``PositionID`` are the 64-bit hash written most significant
byte first, i.e. the 16 hex digits of the table file read as one number: the
hash ``0x0123456789abcdef`` is stored as the bytes ``01 23 45 67 89 ab cd ef``.
Big-endian was chosen because it is the only order in which the bytes read
in a hex dump look like the hex in the table file.

Records (offsets inside a record)::

    PositionID          0   8  hash, unsigned, big-endian
                        8   1  tie-breaker, always 0 (another value is an error)
                        9   1  ASCII 'B' or 'W': the player to move
    PositionDB         10  81  the board, '#' 'O' '.'
                       91   1  1 if PositionExtraInfo follows, else 0 (the byte
                               value, not the ASCII digit)
    PositionExtraInfo  92   4  source file id >= 1, unsigned
                       96   2  variation number, unsigned
                       98   2  move number, unsigned
    => 92 or 100 bytes; position files have no header.

    scored file record: PositionID (10) + score (1 byte, 3..8: 3 means
    "3 or less", 8 "8 or more") + confidence (1 byte, 0..100) => 12 bytes.

Hashes: a position hash is the XOR, over the stones, of the table's black or
white column at the stone's point (the ko column is never used: positions
carry no ko point).  The default table is the project's one table:
``row 9*y + x = engine.core.zobrist.table().stone[0..2][y][x]``, so for a 9x9
board ``engine.core.board.Board.hash`` equals ``Table9.hash`` of the same stones.
The ``PositionID`` hash written by ``fuseki pos9 export`` (``book.ui.commands.pos9_command``) is the
rotation-normalised one (``normalised_hash``).

Malformed input raises ``RecordError`` (a ``ValueError``) naming the record
(counted from 1) and the byte offset (counted from 0, from the start of the
file) of the first bad byte; the good records before it are yielded first
(``iter_positions``) or kept in ``RecordError.partial`` (``read_positions``).
Files are parsed in blocks with numpy, never byte by byte in Python, except
for the record boundaries of a file that mixes 92- and 100-byte records.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import BinaryIO

import numpy as np

from fuseki.engine.core import base, coords, zobrist

SIZE = 9
POINTS = SIZE * SIZE
HEAD = 92           # PositionID + PositionDB
EXTRA = 8           # PositionExtraInfo
# the board bytes of a record (not the core's colour codes, ``base.BLACK`` ...)
BLACK_BYTE, WHITE_BYTE, EMPTY_BYTE = ord("#"), ord("O"), ord(".")
BLOCK_BYTES = 4 << 20  # bytes read at a time: about 40 000 position records

_BOARD = slice(10, 10 + POINTS)
_FLAG = 91


class RecordError(ValueError):
    """A malformed record or table line.

    Attributes: ``record`` (counted from 1; a line number for table files),
    ``offset`` (byte offset of the first bad byte, from the start of the file;
    for a truncated record, the end of the file), ``partial`` (what was read
    before the bad record, or None).
    """

    def __init__(self, record: int, offset: int, reason: str, partial=None, kind: str = "record"):
        super().__init__(f"{kind} {record}, byte {offset}: {reason}")
        self.record, self.offset, self.reason, self.partial = record, offset, reason, partial


# --- the Zobrist table file ---------------------------------------------------

@dataclass(frozen=True, eq=False)
class Table9:
    """Zobrist keys of the 81 points: ``keys[9*y + x, c]``, c = 0 black, 1 white, 2 ko (uint64)."""

    keys: np.ndarray

    def hash(self, board) -> int:
        """Hash of one board (81 ASCII bytes or str): XOR of the black/white keys of its stones."""
        return int(self.hashes(as_boards(board))[0])

    def hashes(self, boards: np.ndarray) -> np.ndarray:
        """Hashes of an (n, 81) uint8 array of boards, as uint64."""
        return _xor_rows(boards, self.keys[:, 0], self.keys[:, 1])

    def normalised_hashes(self, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(hash, symmetry)`` arrays: see ``normalised_hash``."""
        perms = symmetry_permutations()
        # hash of T_n(board) = XOR over stones at p of key[T_n(p)]
        all_hashes = np.stack([
            _xor_rows(boards, self.keys[perms[n], 0], self.keys[perms[n], 1]) for n in range(8)
        ])
        sym = np.argmin(all_hashes, axis=0)  # the first minimum: the smallest symmetry number
        return all_hashes[sym, np.arange(len(boards))], sym.astype(np.uint8)

    def __eq__(self, other) -> bool:
        return isinstance(other, Table9) and np.array_equal(self.keys, other.keys)


def _xor_rows(boards: np.ndarray, black_keys: np.ndarray, white_keys: np.ndarray) -> np.ndarray:
    zero = np.uint64(0)
    terms = np.where(boards == BLACK_BYTE, black_keys, zero) ^ np.where(boards == WHITE_BYTE, white_keys, zero)
    return np.bitwise_xor.reduce(terms, axis=1) if len(boards) else np.zeros(0, np.uint64)


def generate_table(seed: int = zobrist.SEED) -> Table9:
    """The 9x9 table cut from ``zobrist.generate_keys(seed)`` (stone[c][y][x], x, y < 9)."""
    n = 3 * base.MAX_SIZE ** 2
    stone = np.array(zobrist.generate_keys(seed)[:n], dtype=np.uint64)
    return _cut(stone.reshape(3, base.MAX_SIZE, base.MAX_SIZE))


@cache
def default_table() -> Table9:
    """The project's one table (``engine/data/zobrist.txt``) cut to 9x9."""
    return _cut(zobrist.table().stone)


def _cut(stone: np.ndarray) -> Table9:
    keys = np.ascontiguousarray(stone[:, :SIZE, :SIZE].reshape(3, POINTS).T)
    keys.setflags(write=False)
    return Table9(keys)


_HEX16 = re.compile(rb"[0-9A-Fa-f]{16}")


def read_table(path: str | os.PathLike) -> Table9:
    """Read a ``zobrist_board_81.dat`` file.

    Raises RecordError (``record`` = line number) for a header other than
    8 / 3 / 81, a row that is not three 16-digit hex codes separated by
    commas, or a wrong number of rows.  Trailing blank lines and CRLF are accepted.
    """
    data = Path(path).read_bytes()
    lines = data.split(b"\n")
    starts = np.cumsum([0] + [len(line) + 1 for line in lines])
    while len(lines) > 1 and not lines[-1].strip():
        lines.pop()
    expected = (b"8", "bytes per hash code"), (b"3", "number of columns"), (b"81", "number of rows")
    for i, (want, name) in enumerate(expected):
        got = lines[i].strip() if i < len(lines) else b"<end of file>"
        if got != want:
            raise RecordError(i + 1, int(starts[min(i, len(lines))]), f"table header: {name} is "
                              f"{got.decode('ascii', 'replace')!r}, expected {want.decode()}", kind="line")
    rows = []
    for i, line in enumerate(lines[3:], start=3):
        fields = line.rstrip(b"\r").split(b",")
        if len(rows) == POINTS:
            raise RecordError(i + 1, int(starts[i]), f"table has more than {POINTS} rows", kind="line")
        if len(fields) != 3 or not all(_HEX16.fullmatch(f) for f in fields):
            raise RecordError(i + 1, int(starts[i]), f"table row {i - 2} is not three 16-digit hex codes: "
                              f"{line[:60].decode('ascii', 'replace')!r}", kind="line")
        rows.append([int(f, 16) for f in fields])
    if len(rows) != POINTS:
        raise RecordError(len(lines) + 1, len(data), f"table has {len(rows)} rows, expected {POINTS}",
                          kind="line")
    return Table9(np.array(rows, dtype=np.uint64))


def write_table(path: str | os.PathLike, table: Table9) -> None:
    """Write ``table`` as a ``zobrist_board_81.dat`` file (lower-case hex, LF line ends)."""
    body = "".join(",".join(f"{int(k):016x}" for k in row) + "\n" for row in table.keys)
    Path(path).write_bytes(f"8\n3\n{POINTS}\n{body}".encode("ascii"))


# --- symmetry and the rotation-normalised id -----------------------------------

@cache
def symmetry_permutations() -> np.ndarray:
    """``perm[n, 9*y + x]`` is the index of ``coords.transform_xy(n, x, y, 9)`` (8 x 81)."""
    perm = np.zeros((8, POINTS), dtype=np.intp)
    for n in range(8):
        for y in range(SIZE):
            for x in range(SIZE):
                tx, ty = coords.transform_xy(n, x, y, SIZE)
                perm[n, SIZE * y + x] = SIZE * ty + tx
    perm.setflags(write=False)
    return perm


def normalised_hash(board, table: Table9 | None = None) -> tuple[int, int]:
    """``(hash, symmetry)``: the smallest hash over the 8 symmetries of ``board``.

    ``symmetry`` is the n (0 = not rotated; the smallest n on ties) for which the board
    turned by n (the stone at (x, y) moved to ``coords.transform_xy(n, x, y, 9)``, the
    permutation ``symmetry_permutations()[n]``) hashes to ``hash``, so a move ``(x, y)``
    stored with the position maps to ``coords.transform_xy(n, x, y, 9)`` in
    the normalised orientation, and back with ``coords.INVERSE[n]``.
    """
    hashes, syms = (table or default_table()).normalised_hashes(as_boards(board))
    return int(hashes[0]), int(syms[0])


def as_boards(board) -> np.ndarray:
    """A (1, 81) uint8 array from 81 ASCII bytes or characters; raises ValueError otherwise."""
    raw = board.encode("ascii") if isinstance(board, str) else bytes(board)
    arr = np.frombuffer(raw, dtype=np.uint8)
    if len(arr) != POINTS or not np.isin(arr, (BLACK_BYTE, WHITE_BYTE, EMPTY_BYTE)).all():
        raise ValueError(f"a 9x9 board is 81 of '#', 'O', '.', not {raw[:90]!r}")
    return arr.reshape(1, POINTS)


# --- position files --------------------------------------------------------------

@dataclass
class Positions:
    """A block of position records as parallel numpy arrays.

    ``hash`` uint64; ``to_move`` uint8 (``ord('B')``/``ord('W')``); ``board`` (n, 81) uint8
    ASCII; ``has_extra`` bool; ``source`` uint32, ``variation`` and ``move`` uint16 (0 where
    ``has_extra`` is False); ``offset`` int64, the byte offset of each record in its file
    (-1 for records not read from a file).  ``first_record`` is the number of the first one.
    """

    hash: np.ndarray
    to_move: np.ndarray
    board: np.ndarray
    has_extra: np.ndarray
    source: np.ndarray
    variation: np.ndarray
    move: np.ndarray
    offset: np.ndarray
    first_record: int = 1

    def __len__(self) -> int:
        return len(self.hash)

    def select(self, which) -> Positions:
        """The records picked by a boolean mask or index array."""
        fields = {f: getattr(self, f)[which] for f in _ARRAY_FIELDS}
        return Positions(**fields)

    def stones(self) -> np.ndarray:
        """Number of stones on each board."""
        return np.count_nonzero(self.board != EMPTY_BYTE, axis=1)

    def record(self, i: int) -> tuple:
        """Record ``i`` as ``(hash, 'B'|'W', board str, (source, variation, move) or None)``."""
        extra = None
        if self.has_extra[i]:
            extra = (int(self.source[i]), int(self.variation[i]), int(self.move[i]))
        return int(self.hash[i]), chr(self.to_move[i]), self.board[i].tobytes().decode("ascii"), extra

    def to_bytes(self) -> bytes:
        """The records in file form (92 or 100 bytes each)."""
        sizes = np.where(self.has_extra, HEAD + EXTRA, HEAD)
        starts = (np.cumsum(sizes) - sizes).astype(np.int64)
        out = np.zeros(int(sizes.sum()), dtype=np.uint8)
        head = np.zeros((len(self), HEAD), dtype=np.uint8)
        head[:, :8] = self.hash.astype(">u8").view(np.uint8).reshape(-1, 8)
        head[:, 9] = self.to_move
        head[:, _BOARD] = self.board
        head[:, _FLAG] = self.has_extra
        out[starts[:, None] + np.arange(HEAD)] = head
        ex = np.flatnonzero(self.has_extra)
        extra = np.zeros((len(ex), EXTRA), dtype=np.uint8)
        extra[:, 0:4] = self.source[ex].astype(">u4").view(np.uint8).reshape(-1, 4)
        extra[:, 4:6] = self.variation[ex].astype(">u2").view(np.uint8).reshape(-1, 2)
        extra[:, 6:8] = self.move[ex].astype(">u2").view(np.uint8).reshape(-1, 2)
        out[starts[ex, None] + HEAD + np.arange(EXTRA)] = extra
        return out.tobytes()

    @classmethod
    def from_records(cls, records) -> Positions:
        """Build from ``(hash, to_move, board, extra)`` tuples as ``record`` returns them.

        Raises ValueError for a bad colour, board, or extra info (source id must be >= 1).
        """
        records = list(records)
        n = len(records)
        out = cls.empty(n)
        for i, (h, to_move, board, extra) in enumerate(records):
            if not 0 <= h < 1 << 64:
                raise ValueError(f"hash {h} is not an unsigned 64-bit number")
            if to_move not in ("B", "W"):
                raise ValueError(f"player to move must be 'B' or 'W', not {to_move!r}")
            out.hash[i], out.to_move[i], out.board[i] = h, ord(to_move), as_boards(board)[0]
            if extra is not None:
                source, variation, move = extra
                if not (1 <= source < 1 << 32 and 0 <= variation < 1 << 16 and 0 <= move < 1 << 16):
                    raise ValueError(f"extra info {extra} out of range (source >= 1, 32/16/16 bits)")
                out.has_extra[i] = True
                out.source[i], out.variation[i], out.move[i] = source, variation, move
        return out

    @classmethod
    def empty(cls, n: int = 0) -> Positions:
        return cls(np.zeros(n, np.uint64), np.zeros(n, np.uint8), np.full((n, POINTS), EMPTY_BYTE, np.uint8),
                   np.zeros(n, bool), np.zeros(n, np.uint32), np.zeros(n, np.uint16),
                   np.zeros(n, np.uint16), np.full(n, -1, np.int64))

    @classmethod
    def concatenate(cls, parts: list[Positions]) -> Positions:
        if not parts:
            return cls.empty()
        fields = {f: np.concatenate([getattr(p, f) for p in parts]) for f in _ARRAY_FIELDS}
        return cls(**fields, first_record=parts[0].first_record)


_ARRAY_FIELDS = ("hash", "to_move", "board", "has_extra", "source", "variation", "move", "offset")


def read_positions(path: str | os.PathLike) -> Positions:
    """All records of a position file.

    Raises RecordError at the first malformed record, with the good records
    before it in ``partial``.
    """
    parts = []
    try:
        for block in iter_positions(path):
            parts.append(block)
    except RecordError as exc:
        exc.partial = Positions.concatenate(parts)
        raise
    return Positions.concatenate(parts)


def iter_positions(path: str | os.PathLike, block_bytes: int = BLOCK_BYTES) -> Iterator[Positions]:
    """Yield the records of a position file in blocks of about ``block_bytes`` bytes.

    Streams: memory stays near ``block_bytes`` whatever the file size.  Raises
    RecordError after yielding every good record before the first bad one:
    a truncated record, a tie-breaker other than 0, a player other than B/W,
    a board byte other than ``#O.``, an extra-info flag other than 0/1, or
    a source file id of 0.  Doesn't check that the hash matches the board.
    """
    with open(path, "rb") as f:
        yield from _iter_blocks(f, block_bytes)


def _iter_blocks(f: BinaryIO, block_bytes: int) -> Iterator[Positions]:
    pending = b""
    base = 0        # file offset of pending[0]
    record = 1      # number of the record at pending[0]
    while True:
        chunk = f.read(block_bytes)
        at_eof = not chunk
        data = pending + chunk
        starts, stop = _record_starts(data)
        block, tie = _decode(np.frombuffer(data, dtype=np.uint8), starts)
        bad = _first_invalid(block, tie)
        if bad is not None:
            starts = starts[:bad]
            stop = None  # the error is in a complete record: find it below
        if len(starts):
            good = block.select(slice(0, len(starts)))
            good.offset += base
            good.first_record = record
            yield good
        end = int(starts[-1]) + _size_at(data, int(starts[-1])) if len(starts) else 0
        if bad is not None or stop is not None or (at_eof and end < len(data)):
            offset, reason = _describe(data, end)
            raise RecordError(record + len(starts), base + offset, reason)
        if at_eof:
            return
        pending, base, record = data[end:], base + end, record + len(starts)


def _size_at(data: bytes, start: int) -> int:
    return HEAD + EXTRA * data[start + _FLAG]


def _record_starts(data: bytes) -> tuple[np.ndarray, int | None]:
    """Start offsets of the complete records at the front of ``data``.

    Returns ``(starts, stop)``: ``stop`` is the offset of a record whose
    flag byte is neither 0 nor 1 (the boundaries after it are unknown), else None.
    """
    arr = np.frombuffer(data, dtype=np.uint8)
    for flag, size in ((1, HEAD + EXTRA), (0, HEAD)):  # the common case: one record size throughout
        n = len(arr) // size
        if n and (arr[_FLAG:n * size:size] == flag).all():
            tail = len(arr) - n * size
            if tail < HEAD or arr[n * size + _FLAG] != 1 - flag:
                stop = n * size if tail >= HEAD and arr[n * size + _FLAG] > 1 else None
                return np.arange(n, dtype=np.int64) * size, stop
    starts, pos, end = [], 0, len(data)  # mixed sizes: the boundaries need one step per record
    while pos + HEAD <= end:
        flag = data[pos + _FLAG]
        if flag > 1:
            return np.array(starts, dtype=np.int64), pos
        if pos + HEAD + EXTRA * flag > end:
            break
        starts.append(pos)
        pos += HEAD + EXTRA * flag
    return np.array(starts, dtype=np.int64), None


def _decode(arr: np.ndarray, starts: np.ndarray) -> tuple[Positions, np.ndarray]:
    """The records starting at ``starts``, and their tie-breaker bytes."""
    n = len(starts)
    head = arr[starts[:, None] + np.arange(HEAD)] if n else np.zeros((0, HEAD), np.uint8)
    has_extra = head[:, _FLAG] == 1
    out = Positions.empty(n)
    out.hash = head[:, :8].copy().view(">u8").ravel().astype(np.uint64)
    out.to_move = head[:, 9].copy()
    out.board = head[:, _BOARD].copy()
    out.has_extra = has_extra
    out.offset = starts.copy()
    ex = np.flatnonzero(has_extra)
    if len(ex):
        extra = arr[starts[ex, None] + HEAD + np.arange(EXTRA)]
        out.source[ex] = extra[:, 0:4].copy().view(">u4").ravel()
        out.variation[ex] = extra[:, 4:6].copy().view(">u2").ravel()
        out.move[ex] = extra[:, 6:8].copy().view(">u2").ravel()
    return out, head[:, 8]


def _first_invalid(block: Positions, tie: np.ndarray) -> int | None:
    """Index of the first record with a bad byte (the flag byte is checked by ``_record_starts``)."""
    board_ok = ((block.board == BLACK_BYTE) | (block.board == WHITE_BYTE) | (block.board == EMPTY_BYTE)).all(axis=1)
    ok = (tie == 0) & ((block.to_move == ord("B")) | (block.to_move == ord("W"))) & board_ok
    ok &= ~block.has_extra | (block.source >= 1)
    bad = np.flatnonzero(~ok)
    return int(bad[0]) if len(bad) else None


def _describe(data: bytes, start: int) -> tuple[int, str]:
    """``(offset in data, reason)`` for the first bad byte of the record at ``start``."""
    avail = len(data) - start

    def byte(i: int) -> str:
        b = data[start + i]
        return f"0x{b:02x}" + (f" ({chr(b)!r})" if 32 <= b < 127 else "")

    checks = [(8, lambda b: b == 0, "tie-breaker is {}, expected 0"),
              (9, lambda b: b in b"BW", "player to move is {}, expected 'B' or 'W'")]
    checks += [(10 + p, lambda b: b in b"#O.",
                f"board point {p} (x {p % SIZE}, y {p // SIZE}) is {{}}, expected '#', 'O' or '.'")
               for p in range(POINTS)]
    checks.append((_FLAG, lambda b: b in (0, 1), "extra-info flag is {}, expected 0 or 1"))
    for i, ok, reason in checks:
        if i >= avail:
            break
        if not ok(data[start + i]):
            return start + i, reason.format(byte(i))
    size = HEAD + EXTRA * data[start + _FLAG] if avail > _FLAG else HEAD
    if avail < size:
        return len(data), f"truncated record: {avail} of {size} bytes before the end of the file"
    return start + HEAD, "source file id is 0, expected >= 1"


# --- positions of a game, and merging -------------------------------------------

def game_positions(size: int, setup, moves, source: int, table: Table9 | None = None,
                   normalise: bool = True) -> tuple[Positions, str | None]:
    """One record per position before each move of a game's main line.

    ``setup`` and ``moves`` are ``(colour, point)`` pairs as in ``book.model.records.GameRecord``.
    The record before move k (counted from 1) has the colour of move k to play and extra
    info ``(source, 0, k)``; variation 0 is the main line.  The hash is the
    rotation-normalised one unless ``normalise`` is False.  Replays with
    ``engine.core.board.Board`` (suicide allowed, simple ko): the game stops at an illegal
    move, whose position is still written, and the reason is returned as the note.
    Raises ValueError unless ``size`` is 9.
    """
    from fuseki.engine.core.base import IllegalMove
    from fuseki.engine.core.board import Board  # numba: loaded only by the jobs that replay

    if size != SIZE:
        raise ValueError(f"board size {size}, not {SIZE}")
    board = Board(SIZE, allow_suicide=True)
    for colour in (base.EMPTY, base.BLACK, base.WHITE):
        board.set_stones(colour, [p for c, p in setup if c == colour])
    index = {p: i for i, p in enumerate(base.board_points(SIZE))}
    rows, note = [], None
    for number, (colour, point) in enumerate(moves, start=1):
        row = np.full(POINTS, EMPTY_BYTE, np.uint8)
        row[[index[p] for p in board.stones(base.BLACK)]] = BLACK_BYTE
        row[[index[p] for p in board.stones(base.WHITE)]] = WHITE_BYTE
        rows.append((row, base.COLOUR_LETTER[colour], number))
        try:
            board.play(colour, point)
        except IllegalMove as exc:
            vertex = base.point_to_vertex(point, SIZE)
            note = f"move {number} ({vertex}) is illegal ({exc.reason}): stopped there"
            break
    out = Positions.empty(len(rows))
    if rows:
        out.board = np.stack([r[0] for r in rows])
        out.to_move = np.array([ord(r[1]) for r in rows], np.uint8)
        out.move = np.array([r[2] for r in rows], np.uint16)
        out.has_extra[:] = True
        out.source[:] = source
        table = table or default_table()
        out.hash = table.normalised_hashes(out.board)[0] if normalise else table.hashes(out.board)
    return out, note


def merge_files(out_path: str | os.PathLike, in_paths: list) -> tuple[int, int, list[RecordError]]:
    """Join position files into ``out_path``, keeping the first record of each PositionID.

    Returns ``(written, duplicates dropped, errors)``: a malformed input adds its
    RecordError (with ``path`` set) to ``errors`` and contributes its good records.
    Two passes over the inputs, so memory is about 9 bytes per record plus one
    block; the output is written to a temporary file and renamed, so ``out_path``
    may be one of the inputs.
    """
    keys, counts, errors = [], [], []
    for path in in_paths:  # pass 1: the ids
        count = 0
        try:
            for block in iter_positions(path):
                keys.append((block.hash, block.to_move))
                count += len(block)
        except RecordError as exc:
            exc.path = path
            errors.append(exc)
        counts.append(count)
    hashes = np.concatenate([k[0] for k in keys]) if keys else np.zeros(0, np.uint64)
    movers = np.concatenate([k[1] for k in keys]) if keys else np.zeros(0, np.uint8)
    order = np.lexsort((movers, hashes))  # stable: equal ids stay in input order
    first = np.ones(len(order), bool)
    first[1:] = (hashes[order][1:] != hashes[order][:-1]) | (movers[order][1:] != movers[order][:-1])
    keep = np.zeros(len(order), bool)
    keep[order[first]] = True
    tmp = Path(out_path).with_name(f".{Path(out_path).name}.{os.getpid()}.tmp")
    done = 0
    try:
        with open(tmp, "wb") as out:  # pass 2: the kept records, in input order
            for path, count in zip(in_paths, counts):
                for block in _good_blocks(path, count):
                    out.write(block.select(keep[done:done + len(block)]).to_bytes())
                    done += len(block)
        os.replace(tmp, out_path)
    finally:
        tmp.unlink(missing_ok=True)
    return int(keep.sum()), len(keep) - int(keep.sum()), errors


def _good_blocks(path, count: int) -> Iterator[Positions]:
    """The first ``count`` records of a file (which pass 1 found good)."""
    try:
        for block in iter_positions(path):
            count -= len(block)
            yield block
    except RecordError:
        if count:
            raise
