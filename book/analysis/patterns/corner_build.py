"""Building the corner book (``corners``) from the pattern index's board events.

``update(book)`` brings the pattern index up to date, then, when games were added since the
corner book was built, rebuilds the table ``corner_moves`` from every indexed game: a numba
kernel replays each game's events (captures already resolved), keeps the hashes of the four
corners incrementally (2 readings x 2 points of view a corner), and sees one record per corner
move and per tenuki, and with each one record of its corner's key alone (move ``corners.ALL``).
Each record is counted twice over: ``played``, every time it was seen (a corner shape occurs in
several corners of one game: the empty corner up to four times), and ``games``, the distinct
games it was seen in (its tally slot keeps the last game it counted: the records come in the
games' order), never more than the book's games; ``wins`` are the times its player won.  A key's
own row is kept only where it says what its continuations do not (``needed_rows``: on the Tygem
month 15,278 of them beside 44,394 continuations, 124 bytes a game against 84 before the games
were counted).  A first walk marks each record in a bit filter, a second counts exactly, in a
hash table, only the records the filter saw twice (``records``): continuations played fewer than
``prune`` times are dropped (a corner move of one game is noise, and they are most of the
records), so they never cost more than their filter bits.  The first walk marks continuations
only: one seen again marks its key's own record too (the key's row is kept only beside a
continuation kept).  Every game is walked twice however many games there are (``records``: each
thread replays a share of the games and places the records of its own key ranges).  A walk
gathers a buffer of records (``gather``), then places them one key range at a time (``place``):
each of the 4,096 ranges has its own filter words and its own run of tally slots, so the
accesses of a range's records fall in its own words and slots, and a record costs the same in a
book of any size (when each record went straight to its bit and its slot, a miss of the caches
each, the count walk of 1.5 million games cost 7.7 times that of 366k: docs/benchmarks.md);
within its range a record's bit and slot follow its key's bits (``_bit``, ``_slot``), and the records are
placed in that order, so the range's filter words and slots are visited in order, not at random.
A SQLite book's table is written as pages of a scratch file beside the book, which SQLite's
transfer copies whole (``_through_file``; the build runs before the write transaction, which
only swaps the table in); PostgreSQL's goes in through COPY.  The meta rows say what the table
was built from and how.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit

from fuseki.book.analysis.patterns import corners, index, index_map
from fuseki.book.analysis.pipeline.progress import STDERR, Steps
from fuseki.book.storage import dialect, schema
from fuseki.book.storage.index_state import indexed_through
from fuseki.book.storage.position_index import segment_sweep, sqlite_image

DEPTH = 120   # moves of each game counted: joseki are played early, a late corner key is unique
PRUNE = 2     # continuations played fewer times are not kept
RANGE_BITS = 12  # the key space in 2 ** RANGE_BITS ranges (the top bits of the signed key): a run of them is what
# a thread places, and each has its own filter words and tally slots, which a round's records of the range visit
# in order (``_bit``, ``_slot``), so a record costs about the same at any size (bench/corner_walks.py)
RANGES = 1 << RANGE_BITS
# the tally tables of one count walk together at most; more: another walk for the rest.  Bigger tables cost
# more a record (fewer of a round's records meet each range's slots): at 1.5 million mirror games 3 walks of
# 1.2 GB took 24 s, 2 of 2.1 and 1.4 GB 26 s (bench/corner_walks.py, issue 61)
TABLE_BYTES = 5 << 28
CHUNKS = 20  # each walk's games in this many chunks: the threads meet after each, and the progress moves
THREADS = min(os.cpu_count() or 1, 4)  # walks at once (numba lets go of the GIL), each on a run of key ranges
GAMES_A_THREAD = 20_000  # no more threads than this many games each
# records a thread gathers before the threads place them (128 MB, touched only as far as a round fills it):
# a round is a chunk's games or a buffer, whichever is less, and a round's records of a range share its filter
# lines and tally slots; with 2 M a round of the 1.5 million mirror games was a third to a half of a chunk, and
# a record cost more (bench/corner_walks.py, issue 61)
BUFFER_RECORDS = 1 << 23
ORDER_ROOM = 1.25  # a thread's room to order its own ranges' rows of a round, in buffers (its share: about one)
FILTER_BITS = 4  # bits of each seen/twice filter per bounded record (4: ~9% of once-played pass it, bench/corpus.py)
THROUGH = "corner_moves_through"
SETTINGS = "corner_moves_settings"

ALL = corners.ALL  # the move of a key's own record: every continuation of the key, tenuki included
MARK, TALLY = 0, 1  # what ``place`` does with each record
# The progress: the mark walk's share of the whole, and of each count walk's share the part its
# walk takes (the rest: its tables ordered, then written by the caller a piece of WRITE_ROWS
# rows at a time, each piece moving the line).  On the 1.5 million mirror games the line then
# moved 1-5 points every 2-3 s from start to end (78 s; docs/benchmarks.md, issue 61).
MARK_SHARE, COUNT_PART = 0.2, 0.7
WRITE_ROWS = 1 << 20
PROGRESS_FROM = 50_000  # games: fewer take a second or two, and say nothing until their summary line
KEY, MOVE, PLAYED, WINS, GAMES = 0, 1, 2, 3, 4  # the tally table's columns (one slot: 40 bytes)
COLUMNS = 5
WON, GAME = 16, 32  # a gathered record's info above its move + 2: its player won (a bit), its game (the bits above)
MAX_GAMES = (1 << 32) - 2  # a game's number + 1 fits the 32 bits above a tally slot's count of games
LAST_GAME = 32  # the tally's games column: the count in the bits below, the last game counted (+ 1) above
SUB_BITS = 8  # a range's records placed in the order of these key bits below the range's (``place``)
# a record's place in its range: its key's bits but for the lowest, from its hash (``_bit``, ``_slot``): a key's
# moves spread over 2 ** FILTER_SPREAD bits of a filter (4 words, 64 bytes: a cache line) or SLOT_GROUP slots
# of a tally (320 bytes), of which a run is a multiple
FILTER_SPREAD = 8
SLOT_GROUP = 8


@njit(cache=True, nogil=True)
def _toggle(h, corner_of, local, zkeys, stone, p):
    """A stone of colour ``stone`` appears on or leaves ``p``: update its corner's four hashes."""
    c = corner_of[p]
    if c < 0:
        return
    for reading in range(2):
        code = local[p, reading]
        h[c, reading, 0] ^= zkeys[0 if stone == 1 else 1, code]  # Black's point of view
        h[c, reading, 1] ^= zkeys[0 if stone == 2 else 1, code]  # White's


@njit(cache=True, nogil=True)
def _reading(h, local, size_key, c, mover, p):
    """(key, move) of corner ``c`` with ``mover`` to play ``p`` (-1: tenuki), the lesser of its two readings."""
    plain = h[c, 0, mover - 1] ^ size_key
    transposed = h[c, 1, mover - 1] ^ size_key
    key = plain if plain <= transposed else transposed
    if p < 0:
        move = -1
    elif plain == transposed:
        move = min(local[p, 0], local[p, 1])
    else:
        move = local[p, 0] if plain <= transposed else local[p, 1]
    return key, move


@njit(cache=True, nogil=True)
def _mixed(key, move):
    """A hash of the record (key, move), computed once a record placed: its low bits spread a
    key's several moves over neighbouring places (``_bit``, ``_slot``)."""
    x = key ^ (np.uint64(move + 2) * np.uint64(0x9E3779B97F4A7C15))
    x ^= x >> np.uint64(31)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(29)
    return x


@njit(cache=True, nogil=True)
def _bit(key, mixed, bits):
    """The filter bit of a record (its key, its hash ``mixed``) among the ``2 ** bits`` of its
    key range: the key's next bits below the range's above (a Zobrist hash: uniform), so the
    records of a range taken in their keys' order (``place``) visit the words in order, each
    cache line once, where a hash of the record sent each to a line of its own
    (docs/benchmarks.md, "The corner book's records in their keys' order"); the lowest
    ``FILTER_SPREAD`` bits from the record's hash, so a key's moves share a line, not a bit."""
    if bits <= FILTER_SPREAD:
        return np.int64(mixed & np.uint64((1 << bits) - 1))
    high = (key << np.uint64(RANGE_BITS)) >> np.uint64(64 - bits + FILTER_SPREAD)
    return np.int64((high << np.uint64(FILTER_SPREAD)) | (mixed & np.uint64((1 << FILTER_SPREAD) - 1)))


@njit(cache=True, nogil=True)
def _log2(n):
    """The exponent of the power of two ``n``."""
    bits = 0
    while (1 << bits) < n:
        bits += 1
    return bits


@njit(cache=True, nogil=True)
def _slot(key, mixed, run):
    """The home slot of a record (its key, its hash ``mixed``) in its range's run of ``run`` tally
    slots (a multiple of ``SLOT_GROUP``, any size: a run holds 1.5 slots an expected entry,
    where a power of two held 1.5 to 3): the key's next 32 bits below the range's scaled to the
    run, so the slots follow the keys' order as ``_bit``'s bits do, and within a group of
    ``SLOT_GROUP`` slots the record's hash (a key's moves side by side)."""
    high = (key << np.uint64(RANGE_BITS)) >> np.uint64(32)
    group = np.int64((high * np.uint64(run)) >> np.uint64(32)) & ~np.int64(SLOT_GROUP - 1)
    return group | np.int64(mixed & np.uint64(SLOT_GROUP - 1))


@njit(cache=True, nogil=True)
def gather(events, offsets, chosen, start, winners, corner_of, local, zkeys, size_key, depth, lo, hi, keys_too,
           out):
    """Replay the games ``chosen[start:]`` and, for each corner move and each tenuki (a move that
    leaves the corner last played in) whose key lies in the key ranges ``lo`` to ``hi``
    (``key_range``), append its record (key, move) and, when ``keys_too``, its key's record
    (key, ``corners.ALL``: the mark walk goes without, ``place``) to ``out`` as rows (key, info:
    ``move + 2``, the mover won at bit ``WON``, and from bit ``GAME`` the game, by which
    ``place`` counts each record's games: the rows come in the games' order).  Stops before a
    game whose records might not fit (at most 4 a move within ``depth``).  Returns (the position
    in ``chosen`` of the next game, rows)."""
    rows = 0
    npoints = corner_of.shape[0]
    h = np.zeros((4, 2, 2), dtype=np.uint64)
    colour = np.zeros(npoints, dtype=np.int64)
    at = start
    while at < len(chosen):
        if rows + 4 * depth > len(out):
            break
        g = chosen[at]
        at += 1
        h[:] = 0
        colour[:] = 0
        played = 0
        previous = -1
        for i in range(offsets[g], offsets[g + 1]):
            kind = np.int64(events[i]) >> 12
            p = np.int64(events[i]) & 0xFFF
            if kind >= 4:  # setup stone
                colour[p] = kind - 3
                _toggle(h, corner_of, local, zkeys, kind - 3, p)
                continue
            if kind == 3:  # captured
                _toggle(h, corner_of, local, zkeys, colour[p], p)
                colour[p] = 0
                continue
            played += 1
            if played > depth:
                break
            c = corner_of[p] if p > 0 else -1
            flags = (np.uint64(1 if winners[g] == kind else 0) << np.uint64(WON)) | (np.uint64(g) << np.uint64(GAME))
            for step in range(4):  # the corner left (a tenuki there), then the corner played in; each then its key
                if step < 2 and not (previous >= 0 and previous != c) or step & 1 and not keys_too:
                    continue
                if step >= 2 and c < 0:
                    continue
                key, move = _reading(h, local, size_key, previous if step < 2 else c, kind,
                                     -1 if step < 2 else p)
                if step & 1:
                    move = ALL
                r = key_range(key)
                if r < lo or r >= hi:
                    continue
                out[rows, 0], out[rows, 1] = key, np.uint64(move + 2) | flags
                rows += 1
            if c >= 0:
                colour[p] = kind
                _toggle(h, corner_of, local, zkeys, kind, p)
            previous = c
    return at, rows


@njit(cache=True, nogil=True)
def place(gathered, counts, lo, hi, mode, filters, region, twice, table, fills, runs, spare, out):
    """Put those of ``gather``'s rows in the key ranges ``lo`` to ``hi`` (the first ``counts[b]``
    of each buffer ``gathered[b]``, in that order; only read: the threads place their own ranges
    from the same rows) in the order of their ranges (a counting sort into ``spare``), and each
    range's in the order of their keys' next ``SUB_BITS`` bits (another, into ``out``: both
    stable, a game's rows of a record stay together), then, one range at a time (its filter
    words and its table slots, visited in order: ``_bit``, ``_slot``), for each record:

    - ``MARK``: set its bit in ``filters[:, 0]`` (seen; a bit already set: in ``filters[:, 1]``,
      twice, and its key's record's twice bit with it, and ``twice[range]`` counts them), within
      its range's words ``region[range]`` (first word, words: a power of two).  The mark walk
      sees no key's record of its own: half the records, and a key's own row is kept only beside
      a continuation played twice (``needed_rows``), which sets its bit;
    - ``TALLY``: count it (played, wins, and games: a game other than the last counted) in
      ``table`` when its twice bit is set (every record played twice or more has it; no
      filters: every record).  The table holds the ranges ``lo`` to ``hi`` in runs of slots,
      range ``lo + i`` from ``runs[i]`` to ``runs[i + 1]`` (a multiple of ``SLOT_GROUP``;
      ``fills[i]`` entries), and is laid out again when a run would pass three quarters full (``_grown``).

    Returns the table, its runs (grown or not), and 0; or, placing nothing, the rows of the
    ranges when ``spare`` and ``out`` are too short to hold them."""
    ranges = hi - lo
    starts = np.zeros(ranges + 1, dtype=np.int64)
    for b in range(len(counts)):
        for i in range(counts[b]):
            r = key_range(gathered[b, i, 0]) - lo
            if 0 <= r < ranges:
                starts[r + 1] += 1
    for r in range(ranges):
        starts[r + 1] += starts[r]
    if starts[ranges] > len(spare):
        return table, runs, starts[ranges]  # nothing placed: the caller gives room for them all
    fill = starts[:-1].copy()
    for b in range(len(counts)):
        for i in range(counts[b]):
            r = key_range(gathered[b, i, 0]) - lo
            if 0 <= r < ranges:
                spare[fill[r], 0], spare[fill[r], 1] = gathered[b, i, 0], gathered[b, i, 1]
                fill[r] += 1
    subs = 1 << SUB_BITS
    sub_fill = np.zeros(subs + 1, dtype=np.int64)
    low_games = np.uint64((1 << LAST_GAME) - 1)
    bits = first = 0
    run = SLOT_GROUP
    for r in range(ranges):
        first_row, last_row = starts[r], starts[r + 1]
        sub_fill[:] = 0
        for j in range(first_row, last_row):
            sub_fill[((spare[j, 0] << np.uint64(RANGE_BITS)) >> np.uint64(64 - SUB_BITS)) + 1] += 1
        sub_fill[0] = first_row
        for k in range(subs):
            sub_fill[k + 1] += sub_fill[k]
        for j in range(first_row, last_row):
            k = (spare[j, 0] << np.uint64(RANGE_BITS)) >> np.uint64(64 - SUB_BITS)
            out[sub_fill[k], 0], out[sub_fill[k], 1] = spare[j, 0], spare[j, 1]
            sub_fill[k] += 1
        if len(filters):
            bits = _log2(region[lo + r, 1]) + 6
        if len(table) > 1:
            first, run = runs[r], runs[r + 1] - runs[r]
        for j in range(first_row, last_row):
            key = out[j, 0]
            move = np.int64(out[j, 1] & np.uint64(0xFFFF)) - 2
            mixed = _mixed(key, move)
            if len(filters):
                s = _bit(key, mixed, bits)
                word, bit = region[lo + r, 0] + (s >> 6), np.uint64(1) << np.uint64(s & 63)
                if mode == MARK:
                    if not filters[word, 0] & bit:
                        filters[word, 0] |= bit
                        continue
                    if not filters[word, 1] & bit:
                        filters[word, 1] |= bit
                        twice[lo + r] += 1
                    # its key's too, every time (the record's bit may have been set by another's)
                    s = _bit(key, _mixed(key, ALL), bits)
                    word, bit = region[lo + r, 0] + (s >> 6), np.uint64(1) << np.uint64(s & 63)
                    if not filters[word, 1] & bit:
                        filters[word, 1] |= bit
                        twice[lo + r] += 1
                    continue
                if not filters[word, 1] & bit:
                    continue
            if 4 * (fills[r] + 1) > 3 * run:
                table, runs = _grown(table, runs, fills, r)
                first, run = runs[r], runs[r + 1] - runs[r]
            s = _slot(key, mixed, run)
            while table[first + s, PLAYED] and not (table[first + s, KEY] == key
                                                    and np.int64(table[first + s, MOVE]) == move):
                s = s + 1 if s + 1 < run else 0
            s += first
            if not table[s, PLAYED]:
                table[s, KEY], table[s, MOVE] = key, np.uint64(move)
                fills[r] += 1
            table[s, PLAYED] += np.uint64(1)
            table[s, WINS] += (out[j, 1] >> np.uint64(WON)) & np.uint64(1)
            game = (out[j, 1] >> np.uint64(GAME)) + np.uint64(1)
            if table[s, GAMES] >> np.uint64(LAST_GAME) != game:  # the record's first row of this game
                table[s, GAMES] = (game << np.uint64(LAST_GAME)) | ((table[s, GAMES] & low_games) + np.uint64(1))
    return table, runs, 0


@njit(cache=True, nogil=True)
def _grown(table, runs, fills, full):
    """The tally's table laid out again: the run of range ``full`` twice as long, every other
    run at least long enough for twice its entries (the ranges fill at their own rates: the
    keys are the lesser of two readings, so the ranges of small keys get more), none shorter
    than it was; the entries placed again.  Returns (the table, its runs)."""
    ranges = len(runs) - 1
    sizes = np.empty(ranges, dtype=np.int64)
    for r in range(ranges):
        size = runs[r + 1] - runs[r]
        while 3 * size < 8 * fills[r]:
            size *= 2
        sizes[r] = size
    sizes[full] = max(sizes[full], 2 * (runs[full + 1] - runs[full]))
    laid = np.zeros(ranges + 1, dtype=np.int64)
    for r in range(ranges):
        laid[r + 1] = laid[r] + sizes[r]
    grown = np.zeros((laid[ranges], COLUMNS), dtype=np.uint64)
    for r in range(ranges):
        first, run = laid[r], sizes[r]
        for i in range(runs[r], runs[r + 1]):
            if table[i, PLAYED]:
                s = _slot(table[i, KEY], _mixed(table[i, KEY], np.int64(table[i, MOVE])), run)
                while grown[first + s, PLAYED]:
                    s = s + 1 if s + 1 < run else 0
                grown[first + s] = table[i]
    return grown, laid


def _run_sizes(twice) -> np.ndarray:
    """Each range's run of tally slots for its ``twice`` bits: 1.5 slots a bit, a multiple of
    ``SLOT_GROUP``, at least 16."""
    groups = (np.asarray(twice, dtype=np.int64) * 3 // 2 + SLOT_GROUP - 1) // SLOT_GROUP
    return np.maximum(groups * SLOT_GROUP, 16)


def _laid_out(twice) -> tuple[np.ndarray, np.ndarray]:
    """An empty tally table for the key ranges whose twice bits are ``twice``, and its runs
    (``_run_sizes``: each record played twice has a twice bit; 3.3 M twice bits, 4.1 M entries
    at 366k games, 59 M and 60 M at 1.5 million mirror games)."""
    sizes = _run_sizes(twice)
    runs = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=runs[1:])
    return np.zeros((int(runs[-1]), COLUMNS), dtype=np.uint64), runs


def _key_weights() -> np.ndarray:
    """The share of the records expected in each key range: a key is the lesser of its corner's
    two readings (``_reading``), so keys are spread as the least of two uniform numbers, with a
    density falling straight from twice the mean at the least key (unsigned) to none at the
    greatest; the ranges go in signed order (the greatest unsigned keys, negative, first)."""
    unsigned = ((np.arange(RANGES) ^ (RANGES >> 1)) + 0.5) / RANGES
    return 1.0 - unsigned


@njit(cache=True, nogil=True)
def key_range(key):
    """Which of the ``RANGES`` slices of the key space ``key`` lies in, in the order of the keys
    as signed 64-bit numbers (how the table stores them): the top bits with the sign flipped."""
    return np.int64((key ^ np.uint64(0x8000000000000000)) >> np.uint64(64 - RANGE_BITS))


@njit(cache=True)
def _bound(offsets, events, chosen, depth):
    """At most how many records ``walk`` sees in the games ``chosen``: four a move within ``depth``
    (a tenuki and a corner move, each with its key's record)."""
    total = 0
    for g in chosen:
        moves = 0
        for i in range(offsets[g], offsets[g + 1]):
            if (np.int64(events[i]) >> 12) <= 2:
                moves += 1
                if moves == depth:
                    break
        total += 4 * moves
    return total


@njit(cache=True, nogil=True)
def _ordered(table, runs, least, first, last):
    """The entries of the tally ``table``'s runs ``first`` to ``last`` played at least ``least``
    times and needed (``_needed``), in the order of the keys as signed 64-bit numbers (how the
    table stores them), then of the moves, as columns (keys unsigned, moves, played, wins,
    games).  A run holds one key range and the runs ascend as the signed keys do, so each run is
    ordered alone, in cache (a sort of the whole table by its keys' top bits scattered every
    row across it; docs/benchmarks.md, "The corner book's rows ordered while the last are
    written"); within a range the keys share their top bits, sign included, so unsigned order
    is signed order."""
    n = 0
    for i in range(runs[first], runs[last]):
        if table[i, PLAYED] >= least:
            n += 1
    at = np.empty(n, dtype=np.int64)
    j = 0
    for r in range(first, last):
        start = j
        for i in range(runs[r], runs[r + 1]):
            if table[i, PLAYED] >= least:
                at[j] = i
                j += 1
        if j - start > 1:
            part = at[start:j].copy()
            keys = np.empty(j - start, dtype=np.uint64)
            for k in range(j - start):
                keys[k] = table[part[k], KEY]
            at[start:j] = part[np.argsort(keys)]
            k = start + 1
            while k < j:  # a key's moves (a run of equal keys) in order: insertion, the runs are short
                i = at[k]
                m = k
                while m > start and table[at[m - 1], KEY] == table[i, KEY] \
                        and np.int64(table[at[m - 1], MOVE]) > np.int64(table[i, MOVE]):
                    at[m] = at[m - 1]
                    m -= 1
                at[m] = i
                k += 1
    keys = np.empty(n, dtype=np.uint64)
    moves = np.empty(n, dtype=np.int64)
    played = np.empty(n, dtype=np.int64)
    wins = np.empty(n, dtype=np.int64)
    games = np.empty(n, dtype=np.int64)
    for j in range(n):
        i = at[j]
        keys[j], moves[j] = table[i, KEY], np.int64(table[i, MOVE])
        played[j], wins[j] = table[i, PLAYED], table[i, WINS]
        games[j] = table[i, GAMES] & np.uint64((1 << LAST_GAME) - 1)
    needed = _needed(keys, moves, played, games)
    return keys[needed], moves[needed], played[needed], wins[needed], games[needed]


@njit(cache=True, nogil=True)
def _needed(keys, moves, played, games):
    """``needed_rows`` on key-ordered columns."""
    n = len(keys)
    needed = np.ones(n, dtype=np.bool_)
    start = 0
    while start < n:
        end = start + 1
        while end < n and keys[end] == keys[start]:
            end += 1
        if moves[start] == ALL:  # the least move: the first of its key
            continued = 0
            for j in range(start + 1, end):
                continued += played[j]
            needed[start] = end > start + 1 and (games[start] != played[start] or played[start] != continued)
        start = end
    return needed


def _slices(fills, rows: int) -> list[tuple[int, int]]:
    """Consecutive runs (first, last) of a table's ranges of about ``rows`` entries each
    (``fills``: each range's entries), every range in one."""
    ends = np.cumsum(fills)
    cuts = [0]
    for r in range(len(fills)):
        if ends[r] - (ends[cuts[-1] - 1] if cuts[-1] else 0) >= rows and r + 1 < len(fills):
            cuts.append(r + 1)
    return list(zip(cuts, cuts[1:] + [len(fills)]))


def _split(ranges: list[int], weights, ways: int) -> list[tuple[int, int]]:
    """Contiguous runs (lo, hi) of ``ranges`` (consecutive key ranges), ``ways`` of them at most,
    of about equal ``weights`` (all alike where they are all 0): the ranges each thread owns."""
    weights = np.array([float(weights[r]) for r in ranges]) if len(ranges) else np.zeros(0)
    if not weights.sum():
        weights = np.ones(len(ranges))
    ends = np.cumsum(weights) / weights.sum()  # the share of the weight up to each range, itself included
    edges = [ranges[0]] + [ranges[0] + int(np.searchsorted(ends, way / ways)) + 1 for way in range(1, ways)] \
        + [ranges[-1] + 1]
    edges = [min(max(e, ranges[0]), ranges[-1] + 1) for e in edges]
    return [(a, b) for a, b in zip(edges, edges[1:]) if b > a]


def _groups(twice) -> list[list[int]]:
    """The key ranges in runs whose tally tables together fit ``TABLE_BYTES`` (a walk each),
    from the twice bits each range's records set: its run as ``_laid_out`` lays it (a run that
    grows past it is laid out again, and its walk's tables pass the bound by as much)."""
    sizes = _run_sizes(twice)
    groups, run, size = [], [], 0
    for r in range(RANGES):
        need = int(sizes[r]) * COLUMNS * 8 if twice[r] else 0  # a range with no bits: its 16 empty slots
        if run and size + need > TABLE_BYTES:
            groups.append(run)
            run, size = [], 0
        run.append(r)
        size += need
    return groups + [run]


def records(events, offsets, chosen, winners, size: int, depth: int = DEPTH, prune: int = PRUNE,
            progress=None):
    """Yield the distinct (key, move) records of the games ``chosen`` played at least ``prune``
    times, as arrays (keys unsigned, moves, played, wins, games) in the order of the keys as signed
    64-bit numbers (how the table stores them), then of the moves; a run of key ranges at a time.

    The games are walked once to mark (every record sets its bit in a ``seen`` filter; a bit
    already set: in ``twice``), then once more to count exactly, in hash tables, only the
    records whose ``twice`` bit is set -- most records are of continuations played once (late,
    unique corners), and they never reach a table.  Each walk runs in ``THREADS`` threads, in
    rounds: each thread replays its share of a chunk's games into a buffer of records
    (``gather``: until the buffer is full), then each places, range by range, the records of its
    own key ranges from every thread's buffer (``place``: its own filter words, its own table;
    nothing shared is written, nothing waits on a lock, and no thread's table is merged into
    another's).  Each game is replayed once a walk (when each thread replayed every game for its
    own ranges, the replays were a quarter of the walks at 1.5 million games).  The count walks
    once more for each further run of key ranges when their tables would pass ``TABLE_BYTES``
    (a corpus whose every record is played twice).  So every game is replayed a fixed number of
    times whatever the corpus's size: before, the key space was cut into slices of
    ``RECORDS_PER_PART`` records, two walks of every game each, and the walks grew with the
    square of the games (bench/corpus.py)."""
    if len(offsets) - 1 > MAX_GAMES:  # offsets: each game's first event, then the end
        raise ValueError(f"the corner book counts at most {MAX_GAMES:,} games, not {len(offsets) - 1:,}")
    frame = corners.frames(size)
    geometry = (winners, frame.corner_of, frame.local, frame.zkeys, np.uint64(frame.size_key), depth)
    games = len(chosen)
    threads = max(1, min(THREADS, games // GAMES_A_THREAD))
    chunks = np.array_split(chosen, max(1, min(CHUNKS, games)))  # the threads meet after each: progress
    steps = Steps(f"corner book {size}x{size}", games, stream=progress) \
        if progress is not None and games > PROGRESS_FROM else None
    filtered = prune > 1
    region = np.zeros((RANGES, 2), dtype=np.int64)
    filters = np.zeros((0, 2), dtype=np.uint64)
    twice = np.zeros(RANGES, dtype=np.int64)  # each range's twice bits (a range is one thread's: no race)
    rows = max(BUFFER_RECORDS, 4 * depth)
    gathered = np.zeros((threads, rows, 2), dtype=np.uint64)  # each thread's buffer of the rows it gathers
    # each thread's rows of its own ranges from every buffer, in their order (``place``): more when a round brings more
    ordering = [tuple(np.zeros((int(rows * ORDER_ROOM) + 1, 2), dtype=np.uint64) for _ in range(2))
                for _ in range(threads)]
    none = np.zeros((1, COLUMNS), dtype=np.uint64)

    def placed(t, counts, lo, hi, mode, table, fills, runs):
        """Thread ``t`` places the records of its ranges ``lo`` to ``hi`` from every buffer (``counts``)."""
        while True:
            table, runs, short = place(gathered, counts, lo, hi, mode, filters, region, twice, table, fills, runs,
                                       *ordering[t])
            if not short:
                return table, fills, runs
            ordering[t] = (np.zeros((short, 2), dtype=np.uint64), np.zeros((short, 2), dtype=np.uint64))

    with ThreadPoolExecutor(threads) as pool:
        def each_chunk(owned, mode, tables, done, share):
            """Walk every chunk of the games, each thread placing its ``owned`` ranges; returns the tables."""
            lo, hi = owned[0][0], owned[-1][1]
            for number, chunk in enumerate(chunks):
                parts = np.array_split(chunk, len(owned))  # each thread's games to replay
                at = [0] * len(parts)
                while any(a < len(part) for a, part in zip(at, parts)):
                    ends = list(pool.map(
                        lambda t, at=at, parts=parts: gather(events, offsets, parts[t], at[t], *geometry, lo, hi,
                                                             mode == TALLY, gathered[t])
                        if at[t] < len(parts[t]) else (at[t], 0),
                        range(len(parts))))
                    at, counts = [a for a, _ in ends], np.array([n for _, n in ends], dtype=np.int64)
                    tables = list(pool.map(lambda t, tables=tables, counts=counts: placed(
                        t, counts, *owned[t], mode, *tables[t]), range(len(owned))))
                if steps is not None:
                    steps.update(int(games * (done + share * (number + 1) / len(chunks))))
            return tables

        if filtered:
            bound = int(_bound(offsets, events, chosen, depth))
            # each range's filter words: FILTER_BITS a bounded record of the range, a power of two
            words = 1 << max(int(bound * FILTER_BITS // RANGES - 1).bit_length() - 6, 0)
            region[:, 0], region[:, 1] = np.arange(RANGES) * words, words
            filters = np.zeros((RANGES * words, 2), dtype=np.uint64)
            owned = _split(list(range(RANGES)), _key_weights(), threads)
            unused = (none, np.zeros(1, dtype=np.int64), np.zeros(2, dtype=np.int64))
            each_chunk(owned, MARK, [unused] * len(owned), 0.0, MARK_SHARE)
        groups = _groups(twice) if filtered else [list(range(RANGES))]
        weights = twice if filtered else _key_weights()  # the threads' shares of the records
        share = (1.0 - (MARK_SHARE if filtered else 0.0)) / len(groups)
        for number, group in enumerate(groups):
            owned = _split(group, weights, threads)
            done = (MARK_SHARE if filtered else 0.0) + number * share
            tables = []  # each thread's (table, fills, runs)
            for lo, hi in owned:
                table, runs = _laid_out(twice[lo:hi])
                tables.append((table, np.zeros(hi - lo, dtype=np.int64), runs))
            tables = each_chunk(owned, TALLY, tables, done, share * COUNT_PART)
            # each table's rows ordered a slice of its ranges at a time, the next slice in a thread of the
            # pool (numba lets go of the GIL) while the caller writes this one: the writing (pages of a
            # scratch file, or 0.5 us a row through the driver) keeps one core and the ordering the other
            jobs = [(which, first, last, number, len(slices))
                    for which, (_table, fills, _runs) in enumerate(tables)
                    for slices in [_slices(fills, WRITE_ROWS)] for number, (first, last) in enumerate(slices)]
            columns = None
            pending = _ordering(pool, tables, jobs[0], max(prune, 1))
            for job, (which, _first, _last, number, slices) in enumerate(jobs):
                columns = pending.result()
                following = jobs[job + 1] if job + 1 < len(jobs) else None
                if following is None or following[0] != which:
                    tables[which] = None  # its memory goes before the next table's rows are written
                if following is not None:
                    pending = _ordering(pool, tables, following, max(prune, 1))
                pieces = range(0, max(len(columns[0]), 1), WRITE_ROWS)
                for piece, first in enumerate(pieces):
                    yield tuple(column[first:first + WRITE_ROWS] for column in columns)
                    if steps is not None:
                        written = (which + (number + (piece + 1) / len(pieces)) / slices) / len(tables)
                        steps.update(int(games * (done + share * (COUNT_PART + (1 - COUNT_PART) * written))))
            del tables, columns
    if steps is not None:
        steps.close()


def _ordering(pool, tables, job, least: int):
    """The ``pool``'s future of ``_ordered`` on ``job`` (table, first run, last run, ...) of
    ``tables`` (each count walk's (table, fills, runs))."""
    table, _fills, runs = tables[job[0]]
    return pool.submit(_ordered, table, runs, least, job[1], job[2])


def needed_rows(keys, moves, played, games) -> np.ndarray:
    """Which rows to keep of a key-ordered table whose every key has its own row (``ALL``, the
    least move: the first of its key): every continuation, and a key's own row only where it
    says something its continuations do not (``corners.lookup`` then takes the corner's games
    as its ``total``): beside a continuation kept, and with its games not its times (the key
    seen twice in a game) or its times not the sum of the continuations kept (some pruned).
    Most keys seen twice have no continuation played twice, and many kept are seen once a game
    with nothing pruned: on the Tygem month 44,394 continuations need 15,278 such rows (every
    key's: 113,149 more; beside a continuation kept: 30,684)."""
    keys = np.ascontiguousarray(np.asarray(keys).view(np.int64))
    return _needed(keys, np.ascontiguousarray(moves, dtype=np.int64),
                   np.ascontiguousarray(played, dtype=np.int64), np.ascontiguousarray(games, dtype=np.int64))


def create_statement(clustered: bool) -> str:
    """The corner book's CREATE TABLE; ``clustered``: stored in its key's order (SQLite's
    ``WITHOUT ROWID``: ``dialect.clusters_by_key``)."""
    return (f"CREATE TABLE {corners.TABLE} (key BIGINT NOT NULL, move SMALLINT NOT NULL, "
            "played INTEGER NOT NULL, wins INTEGER NOT NULL, games INTEGER NOT NULL, PRIMARY KEY (key, move))"
            + (" WITHOUT ROWID" if clustered else ""))


def copy_into(book, target, least: int) -> int:
    """Copy the book's corner book, continuations played at least ``least`` times, into the
    sqlite3 connection ``target`` (a statistics book being written), in key order; the rows copied."""
    with book.db.connect() as conn:
        counted = corners.counts_games(conn)  # an older corner book has no games: copied as it is
        columns = "key, move, played, wins" + (", games" if counted else "")
        rows = [tuple(r) for r in conn.exec_driver_sql(f"SELECT {columns} FROM {corners.TABLE} ORDER BY key, move")]
        _through, settings = built_through(conn)
    if counted:
        rows = _pruned_at(rows, least)
    else:  # an older corner book: its rows as they are, above the threshold
        rows = [r for r in rows if r[2] >= least]
    statement = create_statement(clustered=True)  # a SQLite file
    target.execute(statement if counted else statement.replace(", games INTEGER NOT NULL", ""))
    target.executemany(f"INSERT INTO {corners.TABLE} VALUES ({', '.join('?' * (5 if counted else 4))})", rows)
    target.execute("INSERT INTO meta (name, value) VALUES (?, ?)", (SETTINGS, f"{settings} least={least}"))
    return len(rows)


def _pruned_at(rows: list[tuple], least: int) -> list[tuple]:
    """Key-ordered rows (key, move, played, wins, games) with the continuations played fewer than
    ``least`` times left out and each key's own row as ``needed_rows`` keeps it: a key without
    one had its games equal to its continuations' times, which are summed into one first."""
    from itertools import groupby

    full = []
    for key, group in groupby(rows, key=lambda r: r[0]):
        group = list(group)
        if group[0][1] != ALL:  # ALL is the least move: the first of its key when there is one
            times = sum(r[2] for r in group)
            full.append((key, ALL, times, sum(r[3] for r in group), times))
        full.extend(group)
    kept = [r for r in full if r[1] == ALL or r[2] >= least]
    if not kept:
        return []
    keys, moves, played, wins, games = (np.array(column, dtype=np.int64) for column in zip(*kept))
    mask = needed_rows(keys, moves, played, games)
    return [r for r, keep in zip(kept, mask) if keep]


def built_through(conn) -> tuple[int, str]:
    """(the pattern index's game id the corner book was built at, its settings); (0, '') when none."""
    rows = dict(conn.execute(schema.meta.select().where(schema.meta.c.name.in_((THROUGH, SETTINGS)))).all())
    return int(rows.get(THROUGH) or 0), rows.get(SETTINGS, "")


def settings_text(depth: int, prune: int) -> str:
    """The settings a corner book was built with; ``games``: it counts games (a corner book
    built before, whose settings lack it, is built again by the next ``update``)."""
    return f"depth={depth} prune={prune} games"


def update(book, progress=STDERR, depth: int = DEPTH, prune: int = PRUNE) -> bool:
    """Bring the book's corner book up to date (see the module docstring); True when it was rebuilt.

    A read-only book is left as it is (its corner book, if any, answers as built).
    """
    if book.readonly:
        return False
    index.update(book, progress=progress)
    with book.db.connect() as conn:
        through = indexed_through(conn)
        if corners.has_table(conn) and built_through(conn) == (through, settings_text(depth, prune)):
            return False
        path = dialect.book_file(conn) if dialect.clusters_by_key(conn) else None
    sizes = index_map.sizes(book)
    began = time.perf_counter()
    # the index's files (book.analysis.patterns.index_map): mapped, not read from the table, and with the
    # winners (1.0 s and 800 MB of the writer's memory for the whole corpus, bench/corpus.py)
    indexed = [(size, index_map.load(book, size)) for size in sizes if corners.corner_width(size)]
    counts = [(size, lambda games=games, size=size: records(
        games.events, games.offsets, np.arange(len(games.game_ids), dtype=np.int64), games.winners, size, depth,
        prune, progress)) for size, games in sorted(indexed, key=lambda found: -len(found[1].game_ids))]
    if path is not None and counts:
        rows = _through_file(book, path, counts, through, depth, prune)
    else:
        with book.writing() as conn:
            conn.exec_driver_sql(f"DROP TABLE IF EXISTS {corners.TABLE}")
            conn.exec_driver_sql(create_statement(dialect.clusters_by_key(conn)))
            rows = sum(_write(conn, *counted) for _size, made in counts for counted in made())
            _built(conn, through, depth, prune)
    if progress is not None:
        print(f"corner book: {rows:,} continuations in {time.perf_counter() - began:.1f} s",
              file=progress, flush=True)
    return True


def _through_file(book, path: str, counts, through: int, depth: int, prune: int) -> int:
    """Write a SQLite book's corner book: the records of the size with the most games (``counts``:
    (size, its records) in that order) into a scratch file beside the book, a slice at a time as
    they come in the table's key order (``sqlite_image.RowsFile``), which SQLite's transfer then
    copies whole into the new table (0.15 us a row, against 0.48 through the driver: 0.15 to make
    the rows Python's and 0.33 in ``executemany``, on 3 M rows of this table); another size's
    records (their keys fall among the first's) through the driver after it.  The scratch file is
    named after this process and removed, whatever happens.  Returns the continuations written."""
    _sweep_scratch(path)
    scratch = f"{path}-corner-{os.getpid()}.scratch"
    rows = 0
    try:
        writer = sqlite_image.RowsFile(scratch, create_statement(clustered=True), columns=3)
        try:
            for keys, moves, played, wins, games in counts[0][1]():
                writer.add(keys.view(np.int64), moves, np.column_stack([played, wins, games]))
                rows += int((moves != ALL).sum())
        finally:
            writer.close()
        with book.writing(attached={_SCRATCH: scratch}) as conn:
            built, settings = built_through(conn)
            if corners.has_table(conn) and settings == settings_text(depth, prune) and built >= through:
                return rows  # another process built it meanwhile (this one built without the write lock)
            # main's: unqualified, a book without the table would drop the scratch file's
            conn.exec_driver_sql(f"DROP TABLE IF EXISTS main.{corners.TABLE}")
            conn.exec_driver_sql(create_statement(clustered=True))
            conn.exec_driver_sql(f"INSERT INTO main.{corners.TABLE} SELECT * FROM {_SCRATCH}.{corners.TABLE}")
            rows += sum(_write(conn, *counted) for _size, made in counts[1:] for counted in made())
            _built(conn, through, depth, prune)
    finally:
        if os.path.exists(scratch):
            os.remove(scratch)
    return rows


_SCRATCH = "fuseki_corner_book"  # the scratch file's name as an attached database


def _sweep_scratch(path: str) -> list[str]:
    """Remove the scratch files beside the book ``path`` left by builds whose process is gone
    (killed while it built: ``_through_file`` removes its own however it ends otherwise);
    returns their names.  Another running build's file is left alone."""
    folder, name = os.path.split(os.path.abspath(path))
    prefix, suffix = f"{name}-corner-", ".scratch"
    removed = []
    for entry in sorted(os.listdir(folder)):
        owner = entry[len(prefix):-len(suffix)] if entry.startswith(prefix) and entry.endswith(suffix) else ""
        if owner.isdigit() and not segment_sweep.written_by_live(int(owner), os.path.join(folder, entry)):
            try:
                os.remove(os.path.join(folder, entry))
                removed.append(entry)
            except FileNotFoundError:  # another build swept it first
                pass
    return removed


def _built(conn, through: int, depth: int, prune: int) -> None:
    """Say in the book's meta what the corner book was built at and how."""
    conn.execute(schema.meta.delete().where(schema.meta.c.name.in_((THROUGH, SETTINGS))))
    conn.execute(schema.meta.insert(), [{"name": THROUGH, "value": str(through)},
                                        {"name": SETTINGS, "value": settings_text(depth, prune)}])


def _write(conn, keys, moves, played, wins, games) -> int:
    """Insert counted records (keys unsigned) through the driver (``dialect.insert_integers``);
    the continuations among them (a key's own row is none)."""
    if not len(keys):
        return 0
    rows = np.empty((len(keys), 5), dtype=np.int64)
    rows[:, 0] = keys.view(np.int64)
    rows[:, 1], rows[:, 2], rows[:, 3], rows[:, 4] = moves, played, wins, games
    dialect.insert_integers(conn, corners.TABLE, ["key", "move", "played", "wins", "games"], rows, [8, 2, 4, 4, 4])
    return int((moves != ALL).sum())
