"""The one Zobrist table: fixed 64-bit keys that every hash in fuseki is built from.

The keys come from SplitMix64 started at ``SEED`` (a documented, fixed
generator, never Python's ``hash()``), drawn in this order:

1. ``stone[c][y][x]`` for c = 0 black, 1 white, 2 reserved; y, x in 0..24
   (row from the top, column from the left: the same (x, y) as ``coords``).
   Layer 2 was meant for a ko point and is used by no hash; it stays in the
   table because dropping it would shift every later key, and with them the
   keys of every book already built;
2. ``white_to_move``;
3. ``size[s]`` for s in 0..25 (0 is unused).

The keys also ship as ``engine/core/data/zobrist.txt`` (one hex key a line, in the
order above, after ``#`` comment lines) so that other programs can read them;
a test checks the file against the generator.

Hashes built from the table:

* ``Board.hash``: XOR of ``stone[c][y][x]`` over the stones; the positional
  hash used for superko.  It does not depend on the board size or the ko point.
* position key (the book's key): ``Board.hash ^ size[s]``, and ``^
  white_to_move`` when White is to play.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np

from fuseki.engine.core import base

SEED = 0x5EED_F05E_C1_2026
TABLE_FILE = Path(__file__).with_name("data") / "zobrist.txt"
_MASK = (1 << 64) - 1
_STONE_LAYERS = 3  # black, white, reserved (see the module docstring)


def splitmix64(seed: int):
    """Yield the SplitMix64 sequence from ``seed`` (Steele, Lea and Flood, 2014)."""
    state = seed & _MASK
    while True:
        state = (state + 0x9E3779B97F4A7C15) & _MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        yield z ^ (z >> 31)


def generate_keys(seed: int = SEED) -> list[int]:
    """All keys in file order (see the module docstring) from ``seed``."""
    count = _STONE_LAYERS * base.MAX_SIZE ** 2 + 1 + base.MAX_SIZE + 1
    gen = splitmix64(seed)
    return [next(gen) for _ in range(count)]


def read_table_file(path: Path = TABLE_FILE) -> list[int]:
    """Read the keys of a table file written by ``write_table_file``."""
    keys = []
    for line in path.read_text(encoding="ascii").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keys.append(int(line, 16))
    return keys


def write_table_file(path: Path, keys: list[int]) -> None:
    """Write keys as 16-digit hex lines behind a comment header."""
    header = (
        f"# fuseki Zobrist table: SplitMix64 from seed 0x{SEED:X}\n"
        "# order: stone[colour 0=black 1=white 2=reserved][y 0..24 from top][x 0..24 from left],\n"
        "#        white_to_move, size[0..25]\n"
    )
    path.write_text(header + "".join(f"{k:016x}\n" for k in keys), encoding="ascii")


class _Table:
    """The keys as numpy arrays (uint64)."""

    def __init__(self, keys: list[int]):
        n = _STONE_LAYERS * base.MAX_SIZE ** 2
        arr = np.array(keys, dtype=np.uint64)
        self.stone = arr[:n].reshape(_STONE_LAYERS, base.MAX_SIZE, base.MAX_SIZE)
        self.white_to_move = int(arr[n])
        self.size = [int(k) for k in arr[n + 1:]]


@cache
def table() -> _Table:
    """The shipped table (read once)."""
    return _Table(read_table_file())


@cache
def padded_keys(size: int) -> np.ndarray:
    """``keys[c, p]`` for c = 0 empty (zero), 1 black, 2 white; p a padded index.

    Indexed by the board's colour codes (EMPTY, BLACK, WHITE) so kernels can XOR
    ``keys[colour, p]``.  Border cells hold zero.
    """
    stone = table().stone
    keys = np.zeros((3, base.array_length(size)), dtype=np.uint64)
    for y in range(size):
        for x in range(size):
            p = base.xy_to_point(x, y, size)
            keys[1, p] = stone[0, y, x]
            keys[2, p] = stone[1, y, x]
    keys.setflags(write=False)
    return keys


def position_key(stones_hash: int, size: int, white_to_move: bool) -> int:
    """The book's key: stones hash, board size and side to move, as an unsigned 64-bit int."""
    key = stones_hash ^ table().size[size]
    if white_to_move:
        key ^= table().white_to_move
    return key


def to_signed(key: int) -> int:
    """The same 64 bits as a signed integer (how SQL BIGINT columns store keys)."""
    return key - (1 << 64) if key >= 1 << 63 else key


def to_unsigned(key: int) -> int:
    """Inverse of ``to_signed``."""
    return key & _MASK
