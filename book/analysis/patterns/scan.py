"""The pattern scan: replay games from their event lists and find each one's first match.

Each game is its list of board events (``engine.core.replay.replay_events``: setup stones,
moves, the stones each move captured), so the scan needs no rules: it sets and clears
points. A game first keeps only its *live* placements (``pattern.PlacementTable`` rows):
those whose stones all lie where the game ever had a stone of that colour, found for all
shifts of an orientation at once by shifting bit sets; a game with none is not replayed.
Then a placement is checked only when an event sets one of its points to what it wants
there, and the position matches when some placement holds. A colour wildcard
(``pattern.EMPTY_OR_BLACK``/``EMPTY_OR_WHITE``) is checked when its point is emptied (the
one change that can satisfy it); with Kombilo's options (who moves next, a move range) a
matching position that does not count keeps its placements standing, each checked again
after every move. At a game's first match that counts it notes the move number and, reading
on through the same events, the continuation as Kombilo counts it: the first later move, by
either player, inside the region of a matching placement (unswapped first, then the smallest
pattern point it maps to, a point standing for its orbit), and how many moves came first
elsewhere (0: at once); a game that never plays inside again is a tenuki.

A scan may be given a ``budget.Budget`` (the web page's, per request): it then runs over the
games in parts (``PART_GAMES``, then about ``PART_SECONDS``) and looks at the budget between
parts, so that the work itself
stops once the budget is spent (``budget.BudgetSpent``), not only the answer; or, asked for a
``partial`` answer (the web page's pattern searches, ``fuseki pattern --budget``), it returns
the games scanned so far, the first part at least.  Without one (the CLI, the shell) it scans
every game in one call.
"""

from __future__ import annotations

import time

import numpy as np
from numba import get_num_threads, njit, prange

from fuseki.book.analysis.patterns.budget import Budget
from fuseki.engine.core import numba_cache
from fuseki.engine.core.replay import EVENT_MOVE, EVENT_REMOVE, EVENT_SETUP

# the scan's kernels come from numba's cache without its compiler's registries: ~0.1-0.3 s of
# fuseki pattern's start (engine/core/numba_cache.py, issue 61)
numba_cache.install()

NONE = -1  # out_move of a game that never matched; out_point of a tenuki, a pass or the game's end
EMPTY, BLACK, WHITE = 0, 1, 2  # pattern.EMPTY_OR_BLACK (3) and EMPTY_OR_WHITE (4) allow all but 5 - want
NO_LIMIT = 1 << 40  # moves_to of a search without a move limit
# from this many placements on (side and anywhere patterns), a game's live placements are linked
# for it alone; below, the lists of every placement are as short (bench/patterns.py)
LINK_PLACEMENTS = 64
# games scanned between two looks at a Budget, at first and at least: on 2 cores a worst
# pattern (anywhere, colours swapped) takes about 0.15 s for them, a corner pattern 5 ms; later
# parts are sized to take about PART_SECONDS at the pace measured, since each part's launch
# costs a few ms (a corner pattern on 11,364 games in parts of 2,048 took 55 ms, not 25 ms).
# A scan therefore stops at most about max(PART_SECONDS, PART_GAMES games) after its budget.
PART_GAMES = 2048
PART_SECONDS = 0.1
# side and anywhere scans keep only the placements that can hold in time (``_possible``); False:
# as before issue 61 (bench/patterns.py --compare-in-time times both in one run)
IN_TIME = True


@njit(cache=True, parallel=True)
def scan(chunks, events, offsets, games, held, to_move, moves_from, moves_to, in_time, points, by_want_start,
         by_want_place, cell_start, cell_point, cell_want, stoneless, back, swapped, way_start, way_point,
         way_colour, way_shifts, way_place, out_move, out_place, out_point, out_colour, out_later):
    """``_scan_range`` over ``games`` in ``chunks`` shared by numba's threads."""
    count = games.shape[0]
    for c in prange(chunks):
        _scan_range(count * c // chunks, count * (c + 1) // chunks, events, offsets, games, held, to_move,
                    moves_from, moves_to, in_time, points, by_want_start, by_want_place, cell_start, cell_point,
                    cell_want, stoneless, back, swapped, way_start, way_point, way_colour, way_shifts,
                    way_place, out_move, out_place, out_point, out_colour, out_later)


@njit(cache=True)
def _holds(colour, i, cell_start, cell_point, cell_want):
    for j in range(cell_start[i], cell_start[i + 1]):
        c, w = colour[cell_point[j]], cell_want[j]
        if c != w and (w <= WHITE or c == 5 - w):  # a wildcard fails only on the colour it forbids
            return False
    return True


# ctz by de Bruijn multiplication: the lowest set bit of a word times _DE_BRUIJN, top 6 bits
_DE_BRUIJN = np.uint64(0x03F79D71B4CB0A89)
_LOWEST_BIT = np.zeros(64, dtype=np.int64)
for _bit in range(64):
    _LOWEST_BIT[(((1 << _bit) * 0x03F79D71B4CB0A89) & (2 ** 64 - 1)) >> 58] = _bit


@njit(cache=True)
def _live(held_g, way_start, way_point, way_colour, way_shifts, way_place, acc, live):
    """Write into ``live`` the placements whose stones all lie where the game ever had a stone
    of their colour (``held_g``: ``ever_held`` of one game); returns how many.

    Orientation o's placements are its cells at shift 0 plus a shift; shifted so that the
    smallest is 0, bit s of ``way_shifts[o]`` says whether shift s is a placement
    (``way_place[o, s]``).  The shifts where a stone at point q of colour c can lie are the
    game's bit set of c shifted down by q; their AND over the orientation's stones (``way_*``
    of o in ``way_start[o]:way_start[o + 1]``, points at the smallest shift) are the live ones.
    """
    words = acc.shape[0]
    one = np.uint64(1)
    alive = 0
    for o in range(way_start.shape[0] - 1):
        for w in range(words):
            acc[w] = way_shifts[o, w]
        for j in range(way_start[o], way_start[o + 1]):
            q = way_point[j]
            c = way_colour[j] - 1
            down, bits = q >> 6, np.uint64(q & 63)
            left = False
            for w in range(words):
                if acc[w] == 0:  # no shift left in this word (a corner pattern has one shift)
                    continue
                lo = held_g[c, w + down] if w + down < words else np.uint64(0)
                if bits:
                    hi = held_g[c, w + down + 1] if w + down + 1 < words else np.uint64(0)
                    lo = (lo >> bits) | (hi << (np.uint64(64) - bits))
                acc[w] &= lo
                left = left or acc[w] != 0
            if not left:
                break
        for w in range(words):
            m = acc[w]
            while m:
                lowest = m & (~m + one)
                bit = _LOWEST_BIT[(lowest * _DE_BRUIJN) >> np.uint64(58)]
                live[alive] = way_place[o, 64 * w + bit]
                alive += 1
                m ^= lowest
    return alive


@njit(cache=True)
def _possible(events, k, end, live, alive, cell_start, cell_point, cell_want, arrive, filled, emptied):
    """Keep in ``live[:alive]`` only the placements that can hold at some point of the game's
    events ``events[k:end]``; returns how many.  A necessary condition, exact to the events and
    cheap (one pass over them, then a few cells a placement), that ``_live``'s ever-held bit sets
    cannot see because it has no order in time: the placement's stones are never all on the
    board before the last of them first arrives (``arrive[c - 1, p]``: the index of the first
    event putting colour c on p), and an empty cell whose point was filled by then (``filled``)
    and never emptied again (``emptied``: no capture there) stays filled.  Most anywhere
    placements that an ever-held test keeps die so: their shape's surroundings were filled
    before their stones came together.  The scratch arrays are left as they were found."""
    never = np.int64(1) << 40
    for j in range(k, end):
        kind = events[j] >> 12
        x = events[j] & 4095
        if x == 0:
            continue
        if kind == EVENT_REMOVE:
            emptied[x] = True
            continue
        c = kind - EVENT_SETUP if kind >= EVENT_SETUP else kind - EVENT_MOVE
        if arrive[c, x] == never:
            arrive[c, x] = j
        if filled[x] == never:
            filled[x] = j
    kept = 0
    for a in range(alive):
        i = live[a]
        last = np.int64(-1)
        for j in range(cell_start[i], cell_start[i + 1]):
            w = cell_want[j]
            if w == BLACK or w == WHITE:
                last = max(last, arrive[w - 1, cell_point[j]])
        can = last < never
        if can:
            for j in range(cell_start[i], cell_start[i + 1]):
                q = cell_point[j]
                if cell_want[j] == EMPTY and filled[q] <= last and not emptied[q]:
                    can = False
                    break
        if can:
            live[kept] = i
            kept += 1
    for j in range(k, end):
        x = events[j] & 4095
        arrive[0, x] = never
        arrive[1, x] = never
        filled[x] = never
        emptied[x] = False
    return kept


@njit(cache=True)
def _continue(events, k, end, holding, found, back, swapped, n, out_place, out_point, out_colour, out_later):
    """The continuation of a game matched before ``events[k]`` by the placements ``holding[:found]``:
    its first later move inside one of their regions (Kombilo's rule), by either player.
    Among the placements whose region holds it: unswapped first, then the smallest pattern
    point.  Writes the placement, that pattern point (its orbit's smallest), the move's colour
    and how many moves (passes included) came first elsewhere (0: at once).  None inside (a
    tenuki to the game's end): the first matching placement (unswapped first), NONE, the colour
    of the very next move (0: the game ended at the match) and 0."""
    best, best_key = -1, np.int64(1) << 40
    later = 0
    j = k
    while j < end:
        kind = events[j] >> 12
        if kind != EVENT_REMOVE:  # a move (setup stones come first, before any match is looked at)
            x = events[j] & 4095
            if x > 0:
                for m in range(found):
                    i = holding[m]
                    if back[i, x] >= 0:
                        key = (swapped[i] << 20) + back[i, x]
                        if key < best_key:
                            best, best_key = i, key
                if best >= 0:
                    out_place[n] = best
                    out_point[n] = back[best, x]
                    out_colour[n] = kind - EVENT_MOVE + 1
                    out_later[n] = later
                    return
            later += 1
        j += 1
    for m in range(found):
        i = holding[m]
        key = (swapped[i] << 20) + i
        if key < best_key:
            best, best_key = i, key
    out_place[n] = best
    out_point[n] = NONE
    out_colour[n] = (events[k] >> 12) - EVENT_MOVE + 1 if k < end else 0
    out_later[n] = 0


@njit(cache=True)
def _scan_range(first, last, events, offsets, games, held, to_move, moves_from, moves_to, in_time, points,
                by_want_start, by_want_place, cell_start, cell_point, cell_want, stoneless, back, swapped, way_start,
                way_point, way_colour, way_shifts, way_place, out_move, out_place, out_point, out_colour, out_later):
    """Scan game g = ``events[offsets[g]:offsets[g + 1]]`` for g in ``games[first:last]``.

    A placement can only come to hold when one of its cells changes to what it wants there:
    each event at point x with value v lists the placements wanting v at x
    (``by_want_place[by_want_start[3 x + v]:by_want_start[3 x + v + 1]]``), and after the
    move's events those are checked cell by cell (``cell_*`` of placement i in
    ``cell_start[i]:cell_start[i + 1]``).  Only the game's *live* placements take part: those
    whose stones all lie where the game ever had a stone of that colour (``held[g]``), the
    others can never hold (``_live``); a game with none is skipped without a replay.  With few
    live placements (most anywhere placements are dead in any one game) their wants are linked
    per point and value for this game alone (``head``/``link``), so an event looks at live
    placements only.  ``stoneless``: the placements the empty board holds;
    ``back[placement, x]``: the pattern point (orbit) of board point x, or -1.
    A matching position counts only from move ``moves_from`` to ``moves_to`` and, unless
    ``to_move`` is 0, for the placements whose player to move (``to_move``, the other colour
    for a swapped placement) plays the game's next move; until one counts, the placements
    held (``holding[:found]``, flagged in ``standing``) are checked again after each move.
    Writes, per game: the move number of the first match that counts (NONE: none), and
    ``_continue``'s placement, continuation, its colour and the moves played elsewhere before it.
    """
    places = cell_start.shape[0] - 1
    colour = np.zeros(points, dtype=np.int64)
    candidates = np.empty(by_want_place.shape[0] + places, dtype=np.int64)
    holding = np.empty(places, dtype=np.int64)
    live = np.empty(places, dtype=np.int64)
    chosen = np.empty(places, dtype=np.int64)  # the held placements whose player is to move
    standing = np.zeros(places, dtype=np.bool_)  # placement i is in holding[:found]
    head = np.full(3 * points, -1, dtype=np.int64)  # first live want of 3 x + v, or -1
    link = np.empty(by_want_place.shape[0], dtype=np.int64)  # next want of the same 3 x + v
    link_place = np.empty(by_want_place.shape[0], dtype=np.int64)
    acc = np.empty(held.shape[2], dtype=np.uint64)
    arrive = np.full((2, points), np.int64(1) << 40, dtype=np.int64)  # _possible's scratch
    filled = np.full(points, np.int64(1) << 40, dtype=np.int64)
    emptied = np.zeros(points, dtype=np.bool_)
    for n in range(first, last):
        g = games[n]
        out_move[n] = NONE
        alive = _live(held[g], way_start, way_point, way_colour, way_shifts, way_place, acc, live)
        if alive and in_time and places >= LINK_PLACEMENTS:  # side and anywhere patterns: those that can hold in time
            alive = _possible(events, offsets[g], offsets[g + 1], live, alive, cell_start, cell_point, cell_want,
                              arrive, filled, emptied)
        if alive == 0:
            continue
        # link the live placements' wants, unless the dense lists of every placement are short
        # anyway (few placements: corners) or most placements are live
        linked = places >= LINK_PLACEMENTS and 2 * alive < places
        wants = 0
        if linked:
            for a in range(alive - 1, -1, -1):
                i = live[a]
                for j in range(cell_start[i], cell_start[i + 1]):
                    key = 3 * cell_point[j] + (cell_want[j] if cell_want[j] <= WHITE else EMPTY)
                    link_place[wants] = i
                    link[wants] = head[key]
                    head[key] = wants
                    wants += 1
        colour[:] = EMPTY
        k, end = offsets[g], offsets[g + 1]
        found = 0
        if k < end and (events[k] >> 12) >= EVENT_SETUP:
            while k < end and (events[k] >> 12) >= EVENT_SETUP:
                colour[events[k] & 4095] = (events[k] >> 12) - EVENT_SETUP + 1
                k += 1
            for a in range(alive):
                if _holds(colour, live[a], cell_start, cell_point, cell_want):
                    holding[found] = live[a]
                    standing[live[a]] = True
                    found += 1
        else:
            for i in stoneless:
                holding[found] = i
                standing[i] = True
                found += 1
        number = 0
        while True:
            if found and number >= moves_from:
                counted, picked = holding, found
                if to_move != 0:  # Kombilo's "who moves next": the next move's colour
                    counted, picked = chosen, 0
                    if k < end:
                        after = (events[k] >> 12) - EVENT_MOVE + 1
                        for m in range(found):
                            if after == (to_move if swapped[holding[m]] == 0 else 3 - to_move):
                                chosen[picked] = holding[m]
                                picked += 1
                if picked:
                    _continue(events, k, end, counted, picked, back, swapped, n, out_place, out_point, out_colour,
                              out_later)
                    out_move[n] = number
                    break
            if k >= end or number >= moves_to:
                break
            listed = 0
            while True:  # the move, then the stones it captured
                x = events[k] & 4095
                kind = events[k] >> 12
                v = EMPTY if kind == EVENT_REMOVE else kind - EVENT_MOVE + 1
                k += 1
                if x != 0:
                    colour[x] = v
                    if linked:
                        e = head[3 * x + v]
                        while e >= 0:
                            if listed < candidates.shape[0]:
                                candidates[listed] = link_place[e]
                                listed += 1
                            e = link[e]
                    else:
                        for j in range(by_want_start[3 * x + v], by_want_start[3 * x + v + 1]):
                            if listed < candidates.shape[0]:
                                candidates[listed] = by_want_place[j]
                                listed += 1
                if k >= end or (events[k] >> 12) != EVENT_REMOVE:
                    break
            kept = 0
            for m in range(found):  # held at a position that did not count: do they still hold?
                i = holding[m]
                if _holds(colour, i, cell_start, cell_point, cell_want):
                    holding[kept] = i
                    kept += 1
                else:
                    standing[i] = False
            found = kept
            for m in range(listed):
                i = candidates[m]
                if standing[i]:  # held already, or listed twice
                    continue
                if _holds(colour, i, cell_start, cell_point, cell_want):
                    holding[found] = i
                    standing[i] = True
                    found += 1
            number += 1
        for m in range(found):
            standing[holding[m]] = False
        if linked:
            for a in range(alive):
                i = live[a]
                for j in range(cell_start[i], cell_start[i + 1]):
                    head[3 * cell_point[j] + (cell_want[j] if cell_want[j] <= WHITE else EMPTY)] = -1


def tables(table, size: int, orbit_min: np.ndarray):
    """The scan's arrays for ``table`` (a ``pattern.PlacementTable``; see ``_scan_range``);
    ``back`` names each pattern point by its orbit's smallest point (``orbit_min``), so that
    the choice among overlapping placements does not depend on their order."""
    points = (size + 2) ** 2
    places, width = table.point.shape
    # a wildcard comes to hold only when its point is emptied: it is listed under EMPTY
    keys = (3 * table.point + np.where(table.want > WHITE, EMPTY, table.want)).ravel()
    owner = np.repeat(np.arange(places, dtype=np.int64), width)
    order = np.lexsort((owner, keys))
    by_want_start = np.searchsorted(keys[order], np.arange(3 * points + 1)).astype(np.int64)
    cell_start = np.arange(places + 1, dtype=np.int64) * width
    # stones first: a candidate usually fails at its first other stone (an empty point rarely
    # decides, a wildcard more rarely still)
    rank = np.where(table.want == EMPTY, 1, np.where(table.want > WHITE, 2, 0))
    stones_first = np.argsort(rank, axis=1, kind="stable")
    cell_point = np.take_along_axis(table.point, stones_first, axis=1).ravel()
    cell_want = np.take_along_axis(table.want, stones_first, axis=1).ravel()
    stoneless = np.flatnonzero(((table.want == EMPTY) | (table.want > WHITE)).all(axis=1)).astype(np.int64)
    back = np.full((places, points), -1, dtype=np.int64)
    back[np.arange(places)[:, None], table.back_point] = orbit_min[table.back_pattern]
    return (points, by_want_start, owner[order], cell_start, cell_point, cell_want, stoneless, back,
            table.swapped.astype(np.int64), *_ways(table, points))


def _ways(table, points: int):
    """``_live``'s arrays: each orientation's stones at its smallest shift, its shifts as bits
    and the placement at each shift."""
    words = (points + 63) // 64
    ways = np.unique(table.orientation)
    way_start = np.zeros(len(ways) + 1, dtype=np.int64)
    way_shifts = np.zeros((len(ways), words), dtype=np.uint64)
    way_place = np.full((len(ways), 64 * words), -1, dtype=np.int64)
    way_point, way_colour = [], []
    for o, way in enumerate(ways.tolist()):
        rows = np.flatnonzero(table.orientation == way)
        first = rows[np.argmin(table.shift[rows])]
        shifts = table.shift[rows] - table.shift[first]
        way_place[o, shifts] = rows
        np.bitwise_or.at(way_shifts[o], shifts >> 6, np.left_shift(np.uint64(1), (shifts & 63).astype(np.uint64)))
        stones = (table.want[first] == BLACK) | (table.want[first] == WHITE)
        way_point.extend(table.point[first][stones].tolist())
        way_colour.extend(table.want[first][stones].tolist())
        way_start[o + 1] = len(way_point)
    return (way_start, np.array(way_point, dtype=np.int64), np.array(way_colour, dtype=np.int64), way_shifts,
            way_place)


def run(events: np.ndarray, offsets: np.ndarray, games: np.ndarray, held: np.ndarray, table, size: int,
        orbit_min: np.ndarray, to_move: int = EMPTY, moves_from: int = 0, moves_to: int | None = None,
        budget: Budget | None = None, partial: bool = False):
    """(move numbers, placement indices, pattern points of the continuations, their colours,
    the moves played elsewhere before each) of ``games``; see ``_scan_range``.
    ``held``: ``ever_held`` of all the games ``games`` index; ``to_move``, ``moves_from``,
    ``moves_to``: Kombilo's options (``pattern.Pattern``).  ``budget``: scan the games in parts
    (``PART_GAMES``, then about ``PART_SECONDS`` each) and raise ``budget.BudgetSpent`` before a
    part once it is spent (None: every game at once).  ``partial``: instead of raising, stop
    there and return the columns of the games scanned so far (the first ``len(column)`` of
    ``games``); the first part is scanned even if the budget is spent already, so that a
    search that goes on from where it stopped always gets further."""
    out = [np.empty(len(games), dtype=np.int64) for _ in range(5)]
    options = (np.int64(to_move), np.int64(moves_from), np.int64(NO_LIMIT if moves_to is None else moves_to), IN_TIME,
               *tables(table, size, orbit_min))
    if budget is None:
        scan(4 * get_num_threads(), events, offsets, games, held, *options, *out)
        return out
    if not scan.signatures:  # compiled (or loaded from numba's cache) outside the budget: once a process
        scan(1, events, offsets, games[:0], held, *options, *(column[:0] for column in out))
    first, part = 0, PART_GAMES
    while first < len(games):
        if not partial:
            budget.check()
        elif first and budget.spent >= budget.seconds:  # the games scanned so far, the first part at least
            return [column[:first] for column in out]
        last = min(first + part, len(games))
        started = time.monotonic()
        scan(4 * get_num_threads(), events, offsets, games[first:last], held, *options,
             *(column[first:last] for column in out))
        took = time.monotonic() - started
        budget.charge(took, last - first)
        # the next part: about PART_SECONDS at this part's pace (each part's launch costs a few ms)
        part = max(PART_GAMES, int((last - first) * PART_SECONDS / max(took, 1e-6)))
        first = last
    return out
