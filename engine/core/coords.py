"""Coordinates and the 8 symmetries: the one module that converts between every way of naming a point.

The point conventions and the numpy-free conversions live in ``base`` (and are imported from
there only: one import path per name); this module adds the symmetries, whose tables are numpy
arrays.

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

from functools import cache
from typing import TYPE_CHECKING

from fuseki.engine.core.base import (
    PASS,
    array_length,
    xy_to_point,
)

if TYPE_CHECKING:
    import numpy as np

INVERSE = (0, 1, 2, 5, 4, 3, 6, 7)


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


@cache
def symmetry_table(size: int) -> np.ndarray:
    """``table[n, p]`` is the image of padded index ``p`` under symmetry ``n``.

    Border cells map to themselves, so the table can be applied to a whole
    padded array: ``transformed[table[n]] = board`` moves every stone.
    """
    import numpy as np  # here, not above: the fuseki command's parser imports coords, numpy waits for use

    length = array_length(size)
    table = np.tile(np.arange(length, dtype=np.int32), (8, 1))
    for n in range(8):
        for y in range(size):
            for x in range(size):
                tx, ty = transform_xy(n, x, y, size)
                table[n, xy_to_point(x, y, size)] = xy_to_point(tx, ty, size)
    table.setflags(write=False)
    return table


@cache
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
