"""The pattern scan: replay games from their event lists and find each one's first match.

Each game is its list of board events (``engine.core.replay.replay_events``: setup stones,
moves, the stones each move captured), so the scan needs no rules: it sets and clears
points.  For every placement (``pattern.Placement``) it keeps how many of its cells the
board does not satisfy; a change at a point updates only the placements covering that
point, and the position matches when some placement's count is zero.  At a game's first
match it notes the move number and the move played next, and the placement that move
continues: among the matching placements, one whose region holds the next move (unswapped
first, then the smallest pattern point it maps to, a point standing for its orbit), else the
first matching one (unswapped first) and the move is a tenuki.
"""

from __future__ import annotations

import numpy as np
from numba import get_num_threads, njit, prange

from fuseki.engine.core.replay import EVENT_MOVE, EVENT_REMOVE, EVENT_SETUP

NONE = -1  # out_move of a game that never matched; out_next of a match at the game's end
EMPTY = 0


@njit(cache=True, parallel=True)
def scan(chunks, events, offsets, games, points, by_want_start, by_want_place, cell_start, cell_point,
         cell_want, stoneless, back, swapped, out_move, out_place, out_next, out_colour):
    """``_scan_range`` over ``games`` in ``chunks`` shared by numba's threads."""
    count = games.shape[0]
    for c in prange(chunks):
        _scan_range(count * c // chunks, count * (c + 1) // chunks, events, offsets, games, points,
                    by_want_start, by_want_place, cell_start, cell_point, cell_want, stoneless, back,
                    swapped, out_move, out_place, out_next, out_colour)


@njit(cache=True)
def _holds(colour, i, cell_start, cell_point, cell_want):
    for j in range(cell_start[i], cell_start[i + 1]):
        if colour[cell_point[j]] != cell_want[j]:
            return False
    return True


@njit(cache=True)
def _scan_range(first, last, events, offsets, games, points, by_want_start, by_want_place, cell_start,
                cell_point, cell_want, stoneless, back, swapped, out_move, out_place, out_next, out_colour):
    """Scan game g = ``events[offsets[g]:offsets[g + 1]]`` for g in ``games[first:last]``.

    A placement can only come to hold when one of its cells changes to what it wants there:
    each event at point x with value v lists the placements wanting v at x
    (``by_want_place[by_want_start[3 x + v]:by_want_start[3 x + v + 1]]``), and after the
    move's events those are checked cell by cell (``cell_*`` of placement i in
    ``cell_start[i]:cell_start[i + 1]``).  ``stoneless``: the placements the empty board
    holds; ``back[placement, x]``: the pattern point (orbit) of board point x, or -1.
    Writes, per game: the move number of the first match (NONE: none), the placement, the
    next move's point (0: pass, NONE: the game ended) and colour.
    """
    places = cell_start.shape[0] - 1
    colour = np.zeros(points, dtype=np.int64)
    candidates = np.empty(by_want_place.shape[0] + places, dtype=np.int64)
    holding = np.empty(places, dtype=np.int64)
    for n in range(first, last):
        g = games[n]
        colour[:] = EMPTY
        k, end = offsets[g], offsets[g + 1]
        found = 0
        if k < end and (events[k] >> 12) >= EVENT_SETUP:
            while k < end and (events[k] >> 12) >= EVENT_SETUP:
                colour[events[k] & 4095] = (events[k] >> 12) - EVENT_SETUP + 1
                k += 1
            for i in range(places):
                if _holds(colour, i, cell_start, cell_point, cell_want):
                    holding[found] = i
                    found += 1
        else:
            for i in stoneless:
                holding[found] = i
                found += 1
        out_move[n] = NONE
        number = 0
        while True:
            if found:
                nxt, who = NONE, 0
                if k < end:
                    nxt = events[k] & 4095
                    who = (events[k] >> 12) - EVENT_MOVE + 1
                best, best_key = -1, 1 << 40
                for m in range(found):
                    i = holding[m]
                    inside = nxt > 0 and back[i, nxt] >= 0
                    key = (swapped[i] << 20) + (back[i, nxt] if inside else (1 << 21) + i)
                    if key < best_key:
                        best, best_key = i, key
                out_move[n] = number
                out_place[n] = best
                out_next[n] = nxt
                out_colour[n] = who
                break
            if k >= end:
                break
            listed = 0
            while True:  # the move, then the stones it captured
                x = events[k] & 4095
                kind = events[k] >> 12
                v = EMPTY if kind == EVENT_REMOVE else kind - EVENT_MOVE + 1
                k += 1
                if x != 0:
                    colour[x] = v
                    for j in range(by_want_start[3 * x + v], by_want_start[3 * x + v + 1]):
                        if listed < candidates.shape[0]:
                            candidates[listed] = by_want_place[j]
                            listed += 1
                if k >= end or (events[k] >> 12) != EVENT_REMOVE:
                    break
            for m in range(listed):
                i = candidates[m]
                if i < 0:
                    continue
                if _holds(colour, i, cell_start, cell_point, cell_want):
                    holding[found] = i
                    found += 1
                    for later in range(m + 1, listed):  # a placement listed twice is held once
                        if candidates[later] == i:
                            candidates[later] = -1
            number += 1


def tables(placements, size: int, orbits: dict[int, tuple[int, ...]]):
    """The scan's arrays for ``placements`` (see ``_scan_range``); ``back`` names each pattern
    point by its orbit's smallest point, so that the choice among overlapping placements does
    not depend on their order."""
    points = (size + 2) ** 2
    entries = sorted((3 * q + want, i) for i, placement in enumerate(placements) for q, want in placement.cells)
    by_want = np.array(entries, dtype=np.int64).reshape(-1, 2)
    by_want_start = np.searchsorted(by_want[:, 0], np.arange(3 * points + 1)).astype(np.int64)
    cell_start = np.zeros(len(placements) + 1, dtype=np.int64)
    np.cumsum([len(p.cells) for p in placements], out=cell_start[1:])
    # stones first: a candidate usually fails at its first other stone (an empty point rarely decides)
    cells = np.array([cell for p in placements for cell in sorted(p.cells, key=lambda c: c[1] == EMPTY)],
                     dtype=np.int64).reshape(-1, 2)
    stoneless = np.array([i for i, p in enumerate(placements) if all(w == EMPTY for _q, w in p.cells)],
                         dtype=np.int64)
    back = np.full((len(placements), points), -1, dtype=np.int64)
    for i, placement in enumerate(placements):
        for q, p in placement.back.items():
            back[i, q] = orbits[p][0]
    swapped = np.array([p.swapped for p in placements], dtype=np.int64)
    return (points, by_want_start, by_want[:, 1].copy(), cell_start, cells[:, 0].copy(), cells[:, 1].copy(),
            stoneless, back, swapped)


def run(events: np.ndarray, offsets: np.ndarray, games: np.ndarray, placements, size: int, orbits):
    """(move numbers, placement indices, next points, next colours) of ``games``; see ``scan``."""
    out = [np.empty(len(games), dtype=np.int64) for _ in range(4)]
    scan(4 * get_num_threads(), events, offsets, games, *tables(placements, size, orbits), *out)
    return out


# --- the pre-filter: the points each game ever held a stone of each colour ----------------------

@njit(cache=True)
def ever_held(events, offsets, words):
    """(games, 2, words) uint64 bit sets: the points where each game ever had a black (0) and a
    white (1) stone, by setup or move."""
    held = np.zeros((offsets.shape[0] - 1, 2, words), dtype=np.uint64)
    for g in range(offsets.shape[0] - 1):
        for k in range(offsets[g], offsets[g + 1]):
            kind = events[k] >> 12
            p = events[k] & 4095
            if kind == EVENT_REMOVE or p == 0:
                continue
            colour = (kind - EVENT_SETUP) if kind >= EVENT_SETUP else (kind - EVENT_MOVE)
            held[g, colour, p >> 6] |= np.uint64(1) << np.uint64(p & 63)
    return held


@njit(cache=True, parallel=True)
def may_match(held, masks, games):
    """Of ``games``, those where some placement's stones (``masks[placement]``: bit sets like
    ``held``'s) all lie on points that held a stone of their colour at some time."""
    keep = np.zeros(games.shape[0], dtype=np.bool_)
    for n in prange(games.shape[0]):
        g = games[n]
        for i in range(masks.shape[0]):
            ok = True
            for c in range(2):
                for w in range(masks.shape[2]):
                    if held[g, c, w] & masks[i, c, w] != masks[i, c, w]:
                        ok = False
                        break
                if not ok:
                    break
            if ok:
                keep[n] = True
                break
    return keep


def stone_masks(placements, words: int) -> np.ndarray:
    """Each placement's stones as bit sets (placements, 2, words), for ``may_match``."""
    masks = np.zeros((len(placements), 2, words), dtype=np.uint64)
    for i, placement in enumerate(placements):
        for q, want in placement.cells:
            if want != EMPTY:
                masks[i, want - 1, q >> 6] |= np.uint64(1) << np.uint64(q & 63)
    return masks
