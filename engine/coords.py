"""Coordinates: the one module that converts between every way of naming a point.

Conventions (used by every other module):

=============  ==========================================  =====================
name           meaning                                     example (19x19)
=============  ==========================================  =====================
``(x, y)``     column from the left, row from the *top*    ``(15, 3)``
               (SGF order), both 0-based
point          index into the padded 1-D board array:      ``(3+1)*21 + 15+1``
               ``(y + 1) * (size + 2) + (x + 1)``
vertex         GTP text: column letter ``A``-``Z``          ``Q16``
               skipping ``I``, row counted from the
               *bottom*, 1-based; ``pass``
SGF point      two letters ``aa``...; ``''`` or ``tt``      ``pd``
               is a pass on boards up to 19x19
=============  ==========================================  =====================

The padded array has one border line on every side, so the four neighbours of
any point are ``p - 1, p + 1, p - W, p + W`` with ``W = size + 2`` and never
leave the array.  ``PASS`` is ``-1`` everywhere.

Symmetries are numbered as in the project's issue 2 (``M = size - 1``)::

    n  transform                        (x, y) ->     inverse
    0  identity                         (x, y)        0
    1  flip left-right                  (M-x, y)      1
    2  flip top-bottom                  (x, M-y)      2
    3  rotate 90 deg counter-clockwise  (y, M-x)      5
    4  rotate 180 deg                   (M-x, M-y)    4
    5  rotate 270 deg counter-clockwise (M-y, x)      3
    6  transpose                        (y, x)        6
    7  anti-transpose                   (M-y, M-x)    7

Applying symmetry ``n`` to a position moves the stone at ``(x, y)`` to
``transform_xy(n, x, y, size)``.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

PASS = -1
MAX_SIZE = 25
GTP_COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"  # no I, as in the GTP spec
SGF_LETTERS = "abcdefghijklmnopqrstuvwxyz"

INVERSE = (0, 1, 2, 5, 4, 3, 6, 7)


class CoordinateError(ValueError):
    """A vertex, SGF point or (x, y) pair that does not name a point of the board."""


def check_size(size: int) -> None:
    """Raise CoordinateError unless ``1 <= size <= MAX_SIZE``."""
    if not 1 <= size <= MAX_SIZE:
        raise CoordinateError(f"board size {size} is not between 1 and {MAX_SIZE}")


def width(size: int) -> int:
    """Row stride of the padded array."""
    return size + 2


def array_length(size: int) -> int:
    """Number of cells in the padded array, border included."""
    return (size + 2) * (size + 2)


def xy_to_point(x: int, y: int, size: int) -> int:
    """Padded index of (x, y); raises CoordinateError when off the board."""
    if not (0 <= x < size and 0 <= y < size):
        raise CoordinateError(f"({x}, {y}) is off a {size}x{size} board")
    return (y + 1) * (size + 2) + x + 1


def point_to_xy(point: int, size: int) -> tuple[int, int]:
    """(x, y) of a padded index; raises CoordinateError for a border index or PASS."""
    y, x = divmod(point, size + 2)
    x, y = x - 1, y - 1
    if point == PASS or not (0 <= x < size and 0 <= y < size):
        raise CoordinateError(f"index {point} is not a point of a {size}x{size} board")
    return x, y


@lru_cache(maxsize=None)
def board_points(size: int) -> tuple[int, ...]:
    """Every on-board point, row by row from the top-left corner."""
    return tuple(xy_to_point(x, y, size) for y in range(size) for x in range(size))


# --- GTP vertices -------------------------------------------------------------

def vertex_to_point(vertex: str, size: int) -> int:
    """Parse a GTP vertex (any case, ``pass`` accepted) into a point.

    Raises CoordinateError with the reason when the text is not a vertex of
    this board.
    """
    if not vertex.isascii():  # str.upper/isdigit accept letters and digits of other scripts
        raise CoordinateError(f"'{vertex}' is not a vertex")
    text = vertex.strip().upper()
    if text == "PASS":
        return PASS
    if len(text) < 2 or text[0] not in GTP_COLUMNS or not text[1:].isdigit():
        raise CoordinateError(f"'{vertex}' is not a vertex")
    x = GTP_COLUMNS.index(text[0])
    row = int(text[1:])
    if x >= size or not 1 <= row <= size:
        raise CoordinateError(f"'{vertex}' is off a {size}x{size} board")
    return xy_to_point(x, size - row, size)


def point_to_vertex(point: int, size: int) -> str:
    """GTP vertex of a point (``pass`` for PASS), upper case as GTP prints it."""
    if point == PASS:
        return "pass"
    x, y = point_to_xy(point, size)
    return f"{GTP_COLUMNS[x]}{size - y}"


# --- SGF points ---------------------------------------------------------------

def sgf_to_point(text: str, size: int) -> int:
    """Parse an SGF point (``pd``); ``''`` and, up to 19x19, ``tt`` are PASS."""
    if text == "" or (text == "tt" and size <= 19):
        return PASS
    if len(text) != 2 or text[0] not in SGF_LETTERS or text[1] not in SGF_LETTERS:
        raise CoordinateError(f"'{text}' is not an SGF point")
    return xy_to_point(SGF_LETTERS.index(text[0]), SGF_LETTERS.index(text[1]), size)


def point_to_sgf(point: int, size: int) -> str:
    """SGF text of a point; PASS is written as the empty string (FF[4])."""
    if point == PASS:
        return ""
    x, y = point_to_xy(point, size)
    return SGF_LETTERS[x] + SGF_LETTERS[y]


def parse_point(token: str, size: int) -> int:
    """A point from what a person types: an SGF point (``pd``), a GTP vertex (``Q16``) or ``pass``.

    Two lower-case letters are SGF; anything else is read as a GTP vertex.
    Raises CoordinateError with the reason.
    """
    text = token.strip()
    if text.lower() == "pass":
        return PASS
    if len(text) == 2 and text.isascii() and text.isalpha() and text.islower():
        return sgf_to_point(text, size)
    return vertex_to_point(text, size)


# --- the 8 symmetries ---------------------------------------------------------

def transform_xy(n: int, x: int, y: int, size: int) -> tuple[int, int]:
    """Image of (x, y) under symmetry ``n`` (see the module table)."""
    m = size - 1
    if n == 0:
        return x, y
    if n == 1:
        return m - x, y
    if n == 2:
        return x, m - y
    if n == 3:
        return y, m - x
    if n == 4:
        return m - x, m - y
    if n == 5:
        return m - y, x
    if n == 6:
        return y, x
    if n == 7:
        return m - y, m - x
    raise ValueError(f"symmetry {n} is not in 0..7")


def transform_point(n: int, point: int, size: int) -> int:
    """Image of a point under symmetry ``n``; PASS maps to PASS."""
    if point == PASS:
        return PASS
    return int(symmetry_table(size)[n, point])


@lru_cache(maxsize=None)
def symmetry_table(size: int) -> np.ndarray:
    """``table[n, p]`` is the image of padded index ``p`` under symmetry ``n``.

    Border cells map to themselves, so the table can be applied to a whole
    padded array: ``transformed[table[n]] = board`` moves every stone.
    """
    length = array_length(size)
    table = np.tile(np.arange(length, dtype=np.int32), (8, 1))
    for n in range(8):
        for y in range(size):
            for x in range(size):
                tx, ty = transform_xy(n, x, y, size)
                table[n, xy_to_point(x, y, size)] = xy_to_point(tx, ty, size)
    table.setflags(write=False)
    return table


@lru_cache(maxsize=None)
def _composition() -> tuple[tuple[int, ...], ...]:
    """``_composition()[a][b]`` is the symmetry equal to applying a, then b."""
    size = 5  # any size > 2 tells the 8 symmetries apart
    probe = [(1, 0), (0, 2)]
    images = {n: [transform_xy(n, x, y, size) for x, y in probe] for n in range(8)}
    rows = []
    for a in range(8):
        row = []
        for b in range(8):
            target = [transform_xy(b, *transform_xy(a, x, y, size), size) for x, y in probe]
            row.append(next(n for n in range(8) if images[n] == target))
        rows.append(tuple(row))
    return tuple(rows)


def compose(a: int, b: int) -> int:
    """The symmetry that applies ``a`` first and then ``b``."""
    return _composition()[a][b]
