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
from numba import njit

from fuseki.engine.core.replay import EVENT_MOVE, EVENT_REMOVE, EVENT_SETUP

NONE = -1  # out_move of a game that never matched; out_next of a match at the game's end
EMPTY = 0


@njit(cache=True, inline="always")
def _apply(colour, x, new, cover_start, cover_place, cover_want, mismatch, zeros):
    if cover_start[x] == cover_start[x + 1]:  # no placement looks at x (most points, for a corner)
        return zeros
    old = colour[x]
    if old == new:
        return zeros
    for j in range(cover_start[x], cover_start[x + 1]):
        placement = cover_place[j]
        want = cover_want[j]
        if old == want:  # was satisfied, is not any more
            if mismatch[placement] == 0:
                zeros -= 1
            mismatch[placement] += 1
        elif new == want:
            mismatch[placement] -= 1
            if mismatch[placement] == 0:
                zeros += 1
    colour[x] = new
    return zeros


@njit(cache=True)
def scan(events, offsets, games, points, cover_start, cover_place, cover_want, initial, back, swapped,
         out_move, out_place, out_next, out_colour):
    """Scan game g = ``events[offsets[g]:offsets[g + 1]]`` for each g of ``games``, writing
    its answers at g's place in ``games`` (see the module docstring).

    ``cover_*``: for board point x, the placements covering it (``cover_place``) and what each
    wants there, in ``cover_start[x]:cover_start[x + 1]``; ``initial``: each placement's
    unsatisfied cells on the empty board; ``back[placement, x]``: the pattern point of board
    point x, or -1 outside its region.  Writes, per game: the move number of the first match
    (NONE: no match), the placement, the next move's point (0: pass, NONE: the game ended)
    and colour.
    """
    places = initial.shape[0]
    colour = np.zeros(points, dtype=np.int64)  # kept at the covered points only
    covered = np.flatnonzero(cover_start[1:] != cover_start[:-1])
    mismatch = np.empty(places, dtype=np.int64)
    for n in range(games.shape[0]):
        g = games[n]
        for x in covered:
            colour[x] = EMPTY
        mismatch[:] = initial
        zeros = 0
        for i in range(places):
            if initial[i] == 0:
                zeros += 1
        k, end = offsets[g], offsets[g + 1]
        while k < end and (events[k] >> 12) >= EVENT_SETUP:
            zeros = _apply(colour, events[k] & 4095, (events[k] >> 12) - EVENT_SETUP + 1,
                           cover_start, cover_place, cover_want, mismatch, zeros)
            k += 1
        out_move[n] = NONE
        number = 0
        while True:
            if zeros > 0:
                nxt, who = NONE, 0
                if k < end:
                    nxt = events[k] & 4095
                    who = (events[k] >> 12) - EVENT_MOVE + 1
                best, best_key = -1, 1 << 40
                for i in range(places):
                    if mismatch[i] != 0:
                        continue
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
            p = events[k] & 4095
            if p != 0:
                zeros = _apply(colour, p, (events[k] >> 12) - EVENT_MOVE + 1,
                               cover_start, cover_place, cover_want, mismatch, zeros)
            k += 1
            while k < end and (events[k] >> 12) == EVENT_REMOVE:
                zeros = _apply(colour, events[k] & 4095, EMPTY, cover_start, cover_place, cover_want,
                               mismatch, zeros)
                k += 1
            number += 1


def tables(placements, size: int, orbits: dict[int, tuple[int, ...]]):
    """The scan's arrays for ``placements``: (points, cover_start, cover_place, cover_want,
    initial, back, swapped); ``back`` names each pattern point by its orbit's smallest point,
    so that the choice among overlapping placements does not depend on their order."""
    points = (size + 2) ** 2
    entries = [(q, i, want) for i, placement in enumerate(placements) for q, want in placement.cells]
    entries.sort()
    cover = np.array(entries, dtype=np.int64).reshape(-1, 3)
    cover_start = np.searchsorted(cover[:, 0], np.arange(points + 1)).astype(np.int64)
    initial = np.array([sum(1 for _q, want in p.cells if want != EMPTY) for p in placements], dtype=np.int64)
    back = np.full((len(placements), points), -1, dtype=np.int64)
    for i, placement in enumerate(placements):
        for q, p in placement.back.items():
            back[i, q] = orbits[p][0]
    swapped = np.array([p.swapped for p in placements], dtype=np.int64)
    return points, cover_start, cover[:, 1].copy(), cover[:, 2].copy(), initial, back, swapped


def run(events: np.ndarray, offsets: np.ndarray, games: np.ndarray, placements, size: int, orbits):
    """(move numbers, placement indices, next points, next colours) of ``games``; see ``scan``."""
    out = [np.empty(len(games), dtype=np.int64) for _ in range(4)]
    scan(events, offsets, games, *tables(placements, size, orbits), *out)
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


@njit(cache=True)
def may_match(held, masks, games):
    """Of ``games``, those where some placement's stones (``masks[placement]``: bit sets like
    ``held``'s) all lie on points that held a stone of their colour at some time."""
    keep = np.zeros(games.shape[0], dtype=np.bool_)
    for n in range(games.shape[0]):
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
