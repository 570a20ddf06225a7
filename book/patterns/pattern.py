"""What a pattern is and every place it can be found (pure: no book, no numba).

A pattern is a rectangular *region* of a board of ``size`` and what each of its points must
hold: ``BLACK``, ``WHITE``, ``EMPTY``, or nothing at all (an "any" point, left out of
``cells``).  Its *anchoring* follows the region (issue "Pattern search"): a region touching
two edges that meet is a corner pattern, found only in the corners; touching one edge, a
side pattern, found along every edge at any offset; touching none, an anywhere pattern,
found at every translation -- in each case in the 8 orientations of the board.  In general:
the pattern slides along an axis, as far as the edges, only when the region as drawn
touches neither edge across that axis.

A :class:`Placement` is one place and orientation: the board points it covers, what each
must hold, and the way back from a board point to the pattern's own point (the region as
the user drew it).  Placements that ask the same thing of the same points, read the same
way, are one (a self-symmetric pattern); a game counts once whatever matches; the pattern's own symmetry
joins its points into *orbits*, and a continuation is listed once per orbit, as the
whole-board search merges equivalent moves.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fuseki.engine.core import coords
from fuseki.engine.core.base import BLACK, EMPTY, WHITE, point_to_xy, xy_to_point

SWAP = {BLACK: WHITE, WHITE: BLACK, EMPTY: EMPTY}


class PatternError(ValueError):
    """A pattern that cannot be searched for (one clear line: the CLI prints it, the web answers 400)."""


@dataclass(frozen=True)
class Placement:
    """One place and orientation of a pattern on the board."""

    cells: tuple[tuple[int, int], ...]  # (board point, BLACK/WHITE/EMPTY), sorted
    back: dict[int, int] = field(compare=False, hash=False)  # board point in the region -> pattern point
    swapped: bool = False  # the colours exchanged (--swap-colours)


@dataclass
class Pattern:
    """A region of a ``size`` board, ``cells``: pattern point -> what it must hold (no "any")."""

    size: int
    region: tuple[int, int, int, int]  # x0, y0, x1, y1 (columns from the left, rows from the top)
    cells: dict[int, int]
    swap_colours: bool = False

    def __post_init__(self) -> None:
        x0, y0, x1, y1 = self.region
        if not (0 <= x0 <= x1 < self.size and 0 <= y0 <= y1 < self.size):
            raise PatternError(f"region {self.region} is not on a {self.size}x{self.size} board")
        if x0 == x1 and y0 == y1:
            raise PatternError("a region of one point is not a pattern: give two opposite corners")
        outside = [p for p in self.cells if p not in self.points()]
        if outside:
            raise PatternError("points outside the region: "
                               + ", ".join(coords.point_to_vertex(p, self.size) for p in sorted(outside)))
        if not self.cells:
            raise PatternError("the pattern has no point to match: every point of the region is 'any'")

    def points(self) -> list[int]:
        """Every point of the region, "any" points included."""
        x0, y0, x1, y1 = self.region
        return [xy_to_point(x, y, self.size) for y in range(y0, y1 + 1) for x in range(x0, x1 + 1)]

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
        if "_placements" in self.__dict__:
            return self.__dict__["_placements"]
        orbits = self.orbits()
        found: dict[tuple, Placement] = {}
        for swapped in ((False, True) if self.swap_colours else (False,)):
            for t in range(8):
                for dx, dy in self._shifts(t):
                    placement = self._place(t, dx, dy, swapped)
                    # the same cells read the same way up to the pattern's symmetry: one placement
                    # (a side pattern slid into a corner may read the same cells another way: kept)
                    way = frozenset((q, orbits[p][0]) for q, p in placement.back.items())
                    found.setdefault((placement.cells, way), placement)
        self.__dict__["_placements"] = list(found.values())
        return self.__dict__["_placements"]

    def orbits(self) -> dict[int, tuple[int, ...]]:
        """pattern point -> the points equivalent to it under the pattern's own symmetry."""
        if "_orbits" in self.__dict__:
            return self.__dict__["_orbits"]
        base = self._place(0, 0, 0, False)
        parent = {p: p for p in self.points()}

        def root(p: int) -> int:
            while parent[p] != p:
                p = parent[p]
            return p

        for t in range(8):
            for dx, dy in self._shifts(t):
                other = self._place(t, dx, dy, False)
                if other.cells != base.cells or set(other.back) != set(base.back):
                    continue
                for board_point, pattern_point in other.back.items():  # pattern_point lands on board_point
                    a, b = root(pattern_point), root(base.back[board_point])
                    if a != b:
                        parent[max(a, b)] = min(a, b)
        groups: dict[int, list[int]] = {}
        for p in self.points():
            groups.setdefault(root(p), []).append(p)
        self.__dict__["_orbits"] = {p: tuple(sorted(groups[root(p)])) for p in self.points()}
        return self.__dict__["_orbits"]

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

    def _place(self, t: int, dx: int, dy: int, swapped: bool) -> Placement:
        shift = dy * (self.size + 2) + dx  # a padded point moves by this (the shift stays on the board)
        back, cells = {}, []
        for p, _x, _y, q in self._turned(t):
            back[q + shift] = p
            want = self.cells.get(p)
            if want is not None:
                cells.append((q + shift, SWAP[want] if swapped else want))
        return Placement(tuple(sorted(cells)), back, swapped)
