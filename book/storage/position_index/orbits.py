"""Next moves counted in canonical orientation -> ``MoveStat`` entries in the asked orientation.

A book counts next moves in the position's canonical orientation (``Board.symmetric_keys``:
the smallest key; ``t*`` the first symmetry giving it).  ``merge_orbits`` maps them back to
the asked board through ``symmetry_table[INVERSE[t*]]`` and merges the points equivalent under
the position's own symmetry group (its *stabilizer*: every ``s`` with ``keys[s] == keys[0]``)
into one ``MoveStat``.  The one place that does it: ``Book.next_moves`` calls ``tally`` for a
book of games and a statistics book alike (``statbook``), so both answer alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from fuseki.book.model.stats import Stats
from fuseki.engine.core import base, coords
from fuseki.engine.core.base import BLACK

PASS = base.PASS


@dataclass(frozen=True)
class MoveStat:
    """One next move (and the points equivalent to it) and its ``Stats``: the games that
    played it and each colour's wins among them."""

    point: int
    points: tuple[int, ...]
    stats: Stats
    to_move: int = BLACK

    @property
    def games(self) -> int:
        """The games that played it: what every policy and table orders and weighs by."""
        return self.stats.games

    @property
    def winrate(self) -> float:
        """Wins of the player to move over games (0..1)."""
        return self.stats.winrate(self.to_move)


def merge_orbits(points, games, black, white, size: int, keys: list[int], side: int,
                 min_games: int) -> list[MoveStat]:
    """MoveStats of next moves counted in canonical orientation (``points``: numpy arrays, no
    END, with their games and wins), for the board whose symmetric keys are ``keys``, orbits
    merged; those of at least ``min_games`` games, most games first (ties: point order)."""
    table = _symmetry_lists(size)
    back = table[coords.INVERSE[keys.index(min(keys))]]
    stabilizer = [table[s] for s in range(8) if keys[s] == keys[0]]
    # an orbit's points add up in lists, one Stats made per orbit: a Stats per point, added,
    # made the empty board's merge of 60 points 18 % slower (92 against 78 us, timeit)
    merged: dict[tuple[int, ...], list[int]] = {}
    for canon, g, b, w in zip(points.tolist(), games.tolist(), black.tolist(), white.tolist()):
        point = canon if canon == PASS else back[canon]
        orbit = (PASS,) if point == PASS else tuple(sorted({image[point] for image in stabilizer}))
        total = merged.setdefault(orbit, [0, 0, 0])
        total[0] += g
        total[1] += b
        total[2] += w
    stats = [MoveStat(orbit[0], orbit, Stats(g, b, w), side)
             for orbit, (g, b, w) in merged.items() if g >= min_games]
    stats.sort(key=lambda m: (-m.games, m.point))
    return stats


@cache
def _symmetry_lists(size: int) -> list[list[int]]:
    """``coords.symmetry_table`` as Python lists (indexing one point is cheaper in a list than in numpy)."""
    return coords.symmetry_table(size).tolist()


def tally(index, games, black, white, size: int, keys, side: int, min_games: int) -> list[MoveStat]:
    """``merge_orbits`` of weighted visits: ``index`` is each visit's next point + 2 (1: PASS,
    then the padded points), ``games``, ``black`` and ``white`` its weights (games, wins)."""
    if not len(index):
        return []
    games = np.bincount(index, weights=games)
    black = np.bincount(index, weights=black)
    white = np.bincount(index, weights=white)
    points = np.flatnonzero(games)
    games, black, white = games[points].astype(int), black[points].astype(int), white[points].astype(int)
    return merge_orbits(points - 2, games, black, white, size, keys, side, min_games)
