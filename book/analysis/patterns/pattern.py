"""What a pattern is and every place it can be found (pure: no book, no numba).

A pattern is a rectangular *region* of a board of ``size`` and what each of its points must
hold: ``BLACK``, ``WHITE``, ``EMPTY``, or nothing at all (an "any" point, left out of
``cells``), or one of Kombilo's colour wildcards: ``EMPTY_OR_BLACK`` (its ``x``: any but a
white stone) and ``EMPTY_OR_WHITE`` (its ``o``: any but a black stone). Its *anchoring*
follows the region (issue "Pattern search"): a region touching two edges that meet is a
corner pattern, found only in the corners; touching one edge, a side pattern, found along
every edge at any offset; touching none, an anywhere pattern, found at every translation --
in each case in the 8 orientations of the board. In general: the pattern slides along an
axis, as far as the edges, only when the region as drawn touches neither edge across that
axis.

A :class:`Placement` is one place and orientation: the board points it covers, what each
must hold, and the way back from a board point to the pattern's own point (the region as
the user drew it).  Placements that ask the same thing of the same points, read the same
way, are one (a self-symmetric pattern); a game counts once whatever matches; the pattern's own symmetry
joins its points into *orbits*, and a continuation is listed once per orbit, as the
whole-board search merges equivalent moves.

Kombilo's search options ride on the pattern too.  *Fixed colour* is the default: Black's
stones must be black; ``swap_colours`` also finds the pattern with colours exchanged (wildcards
too: ``x`` and ``o`` trade places).  ``to_move`` (Kombilo's "who moves next": ``EMPTY`` either,
``BLACK``, ``WHITE``): a position counts only where the game's next move (a pass included) is
that colour's -- in the pattern's colours, so a match with colours exchanged asks the other
colour; a game that ends at the position has no one to move and never counts then.
``moves_from``/``moves_to``: a position counts only after that many moves, ``moves_from`` to
``moves_to`` inclusive (0: the start, setup stones only; ``moves_to`` is Kombilo's "move
limit"; None: no limit).  A game's match is its first position that counts: a position that
matches with the wrong player to move, or too early, does not end the search in that game.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fuseki.engine.core import base, coords
from fuseki.engine.core.base import BLACK, EMPTY, WHITE, point_to_xy, xy_to_point

EMPTY_OR_BLACK = 3  # Kombilo's "x": empty or a black stone (anything but white)
EMPTY_OR_WHITE = 4  # Kombilo's "o": empty or a white stone (anything but black)
SWAP = {BLACK: WHITE, WHITE: BLACK, EMPTY: EMPTY, EMPTY_OR_BLACK: EMPTY_OR_WHITE, EMPTY_OR_WHITE: EMPTY_OR_BLACK}


# The largest moves_from/moves_to: far past any stored game (the import keeps at most 2,500
# moves, a position row 4,095), and a number the scan's 64-bit integers hold (2**63 gave a 500).
MAX_MOVE_RANGE = 100_000


class PatternError(ValueError):
    """A pattern that cannot be searched for (one clear line: the CLI prints it, the web answers 400)."""


@dataclass(frozen=True)
class Placement:
    """One place and orientation of a pattern on the board."""

    cells: tuple[tuple[int, int], ...]  # (board point, BLACK/WHITE/EMPTY), sorted
    back: dict[int, int] = field(compare=False, hash=False)  # board point in the region -> pattern point
    swapped: bool = False  # the colours exchanged (--swap-colours)


@dataclass(frozen=True)
class PlacementTable:
    """Placements as rows of arrays: ``point``/``want`` (placements, cells) sorted by point,
    ``back_point``/``back_pattern`` (placements, region points): board point and the pattern
    point on it; ``swapped``, ``orientation`` (0-15: 8 times swapped plus the symmetry) and
    ``shift`` (placements,): each placement's cells are its orientation's cells at shift 0 plus
    ``shift``."""

    point: np.ndarray
    want: np.ndarray
    back_point: np.ndarray
    back_pattern: np.ndarray
    swapped: np.ndarray
    orientation: np.ndarray
    shift: np.ndarray


@dataclass
class Pattern:
    """A region of a ``size`` board, ``cells``: pattern point -> what it must hold (no "any"),
    and Kombilo's search options (the module docstring)."""

    size: int
    region: tuple[int, int, int, int]  # x0, y0, x1, y1 (columns from the left, rows from the top)
    cells: dict[int, int]
    swap_colours: bool = False  # False: fixed colour (Kombilo's default "fixed color")
    to_move: int = EMPTY  # who moves next: EMPTY (either), BLACK or WHITE, in the pattern's colours
    moves_from: int = 0  # the position counts only after at least this many moves
    moves_to: int | None = None  # ... and at most this many (Kombilo's move limit); None: no limit

    def __post_init__(self) -> None:
        x0, y0, x1, y1 = self.region
        if not (0 <= x0 <= x1 < self.size and 0 <= y0 <= y1 < self.size):
            raise PatternError(f"region {self.region} is not on a {self.size}x{self.size} board")
        if x0 == x1 and y0 == y1:
            raise PatternError("a region of one point is not a pattern: give two opposite corners")
        outside = [p for p in self.cells if p not in self.points()]
        if outside:
            raise PatternError("points outside the region: "
                               + ", ".join(base.point_to_vertex(p, self.size) for p in sorted(outside)))
        if not self.cells:
            raise PatternError("the pattern has no point to match: every point of the region is 'any'")
        if self.to_move not in (EMPTY, BLACK, WHITE):
            raise PatternError(f"who moves next must be Black, White or either, not {self.to_move}")
        if max(self.moves_from, self.moves_to or 0) > MAX_MOVE_RANGE:
            raise PatternError(f"bad move range {self.moves_from}-{self.moves_to}: "
                               f"moves from and moves to are at most {MAX_MOVE_RANGE:,}")
        if self.moves_from < 0 or (self.moves_to is not None and self.moves_to < self.moves_from):
            raise PatternError(f"bad move range {self.moves_from}-{self.moves_to}: "
                               "give 0 <= moves from <= moves to")

    def points(self) -> list[int]:
        """Every point of the region, "any" points included."""
        x0, y0, x1, y1 = self.region
        return [xy_to_point(x, y, self.size) for y in range(y0, y1 + 1) for x in range(x0, x1 + 1)]

    @property
    def whole_board(self) -> bool:
        """Every point of the board is in the region and none is "any" or a wildcard: the pattern
        is a position."""
        return (len(self.cells) == self.size * self.size
                and all(v in (EMPTY, BLACK, WHITE) for v in self.cells.values()))

    @property
    def kind(self) -> str:
        """"corner", "side" or "anywhere" (a band across the board counts as a side)."""
        x0, y0, x1, y1 = self.region
        horizontal = x0 == 0 or x1 == self.size - 1
        vertical = y0 == 0 or y1 == self.size - 1
        if horizontal and vertical:
            return "corner"
        return "side" if horizontal or vertical else "anywhere"

    def placements(self) -> list[Placement]:
        """Every distinct placement, unswapped ones first (a game counts once per placement set)."""
        table = self.placement_table()
        return [Placement(tuple(zip(table.point[i].tolist(), table.want[i].tolist())),
                          dict(zip(table.back_point[i].tolist(), table.back_pattern[i].tolist())),
                          bool(table.swapped[i]))
                for i in range(len(table.swapped))]

    def placement_table(self) -> PlacementTable:
        """:meth:`placements` as arrays, built without a Python object per placement (an anywhere
        pattern has thousands): for each orientation, its cells at every shift at once."""
        if "_table" in self.__dict__:
            return self.__dict__["_table"]
        orbit_min = self.orbit_min()
        parts = []
        for swapped in ((False, True) if self.swap_colours else (False,)):
            for t in range(8):
                part = self._oriented(t, swapped)
                # the same cells read the same way up to the pattern's symmetry: one placement
                # (a side pattern slid into a corner may read the same cells another way: kept)
                order = np.argsort(part.back_point[0], kind="stable")
                way = orbit_min[part.back_pattern[:, order]]
                parts.append((part, np.hstack([part.point, part.want, part.back_point[:, order], way])))
        keys = np.vstack([k for _p, k in parts])
        _unique, first = np.unique(keys, axis=0, return_index=True)
        keep = np.sort(first)
        table = PlacementTable(*(np.concatenate([getattr(p, name) for p, _k in parts])[keep]
                                 for name in ("point", "want", "back_point", "back_pattern", "swapped",
                                              "orientation", "shift")))
        self.__dict__["_table"] = table
        return table

    def orbits(self) -> dict[int, tuple[int, ...]]:
        """pattern point -> the points equivalent to it under the pattern's own symmetry."""
        if "_orbits" in self.__dict__:
            return self.__dict__["_orbits"]
        base = self._oriented(0, False, ((0, 0),))
        base_back = dict(zip(base.back_point[0].tolist(), base.back_pattern[0].tolist()))
        parent = {p: p for p in self.points()}

        def root(p: int) -> int:
            while parent[p] != p:
                p = parent[p]
            return p

        for t in range(8):
            other = self._oriented(t, False)
            same = (other.point == base.point).all(axis=1) & (other.want == base.want).all(axis=1)
            for i in np.flatnonzero(same).tolist():
                back = dict(zip(other.back_point[i].tolist(), other.back_pattern[i].tolist()))
                if set(back) != set(base_back):
                    continue
                for board_point, pattern_point in back.items():  # pattern_point lands on board_point
                    a, b = root(pattern_point), root(base_back[board_point])
                    if a != b:
                        parent[max(a, b)] = min(a, b)
        groups: dict[int, list[int]] = {}
        for p in self.points():
            groups.setdefault(root(p), []).append(p)
        self.__dict__["_orbits"] = {p: tuple(sorted(groups[root(p)])) for p in self.points()}
        return self.__dict__["_orbits"]

    def orbit_min(self) -> np.ndarray:
        """pattern point -> the smallest point of its orbit (an array over padded points, cached:
        the placement table and the scan's tables both read it)."""
        if "_orbit_min" not in self.__dict__:
            orbit_min = np.full((self.size + 2) ** 2, -1, dtype=np.int64)
            for p, orbit in self.orbits().items():
                orbit_min[p] = orbit[0]
            orbit_min.setflags(write=False)
            self.__dict__["_orbit_min"] = orbit_min
        return self.__dict__["_orbit_min"]

    def _oriented(self, t: int, swapped: bool, shifts=None) -> PlacementTable:
        """The placements of orientation ``t`` at each of ``shifts`` (default: all of ``_shifts``),
        cells sorted by board point (shifting keeps the order)."""
        turned = self._turned(t)
        shift = np.array([dy * (self.size + 2) + dx for dx, dy in (shifts or self._shifts(t))], dtype=np.int64)
        cells = sorted((q, SWAP[self.cells[p]] if swapped else self.cells[p])
                       for p, _x, _y, q in turned if p in self.cells)
        point = np.array([q for q, _w in cells], dtype=np.int64)
        want = np.array([w for _q, w in cells], dtype=np.int64)
        back_point = np.array([q for _p, _x, _y, q in turned], dtype=np.int64)
        back_pattern = np.array([p for p, _x, _y, _q in turned], dtype=np.int64)
        n = len(shift)
        return PlacementTable(point[None, :] + shift[:, None], np.broadcast_to(want, (n, len(want))),
                              back_point[None, :] + shift[:, None],
                              np.broadcast_to(back_pattern, (n, len(back_pattern))),
                              np.full(n, swapped, dtype=np.bool_), np.full(n, 8 * swapped + t, dtype=np.int64),
                              shift)

    def _turned(self, t: int) -> list[tuple[int, int, int, int]]:
        """(pattern point, x, y, its padded point) of each region point under symmetry t (cached)."""
        cache = self.__dict__.setdefault("_turned_cache", {})
        if t not in cache:
            turned = []
            for p in self.points():
                x, y = coords.transform_xy(t, *point_to_xy(p, self.size), self.size)
                turned.append((p, x, y, xy_to_point(x, y, self.size)))
            cache[t] = turned
        return cache[t]

    def _shifts(self, t: int) -> list[tuple[int, int]]:
        turned = self._turned(t)
        xs, ys = [x for _p, x, _y, _q in turned], [y for _p, _x, y, _q in turned]
        low_x, high_x, low_y, high_y = min(xs), max(xs), min(ys), max(ys)
        last = self.size - 1
        slide_x = low_x > 0 and high_x < last  # touches neither the left nor the right edge
        slide_y = low_y > 0 and high_y < last
        dxs = range(-low_x, last - high_x + 1) if slide_x else (0,)  # to the edges included
        dys = range(-low_y, last - high_y + 1) if slide_y else (0,)
        return [(dx, dy) for dx in dxs for dy in dys]
