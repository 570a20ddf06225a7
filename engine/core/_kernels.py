"""numba kernels: the hot loops of the rules core (play with captures, legality,
eye test, area count, fast replay and random playouts).

Everything here works on one flat ``int64`` state array so that a whole board
is copied (a superko trial, ``Board.copy``) with a single ``ndarray.copy``; undo
keeps the changed colours only and calls ``rebuild`` (see ``board.py``).  With
``L = (size + 2) ** 2`` cells in the padded array (see ``coords``):

=================  =============================================================
``s[0:L]``         colour of each cell (EMPTY, BLACK, WHITE, BORDER)
``s[L:2L]``        chain id of each stone: the point of the chain's "head" stone
``s[2L:3L]``       next stone of the same chain (a circular linked list)
``s[3L:4L]``       per head: pseudo-liberties (empty neighbours counted once
                   per adjacent stone)
``s[4L:5L]``       per head: sum of those liberty points
``s[5L:6L]``       per head: sum of their squares
``s[6L:7L]``       per head: number of stones
``s[7L:]``         META: ko point (or -1), prisoners taken by Black, by White,
                   then one Zobrist hash per key layer (``keys.shape[0]``)
=================  =============================================================

Liberties are pseudo-liberties maintained incrementally (no flood fill per
move).  A chain is in atari exactly when all its pseudo-liberties are the same
point, i.e. when ``n * sum(p*p) == sum(p) ** 2`` (equality case of
Cauchy-Schwarz); that gives exact suicide and capture tests in O(1).

``keys[t, c, p]`` is the Zobrist key of a stone of colour ``c`` at ``p`` for
hash layer ``t``.  The board uses one layer; the importer's replay uses eight,
one per symmetry (``keys[t, c, p] = key[c, sym[t, p]]``), so the hash of every
rotated position comes for free.

These functions trust their arguments: the Python layer (``board.py``) checks
points and colours before calling them.  Set ``NUMBA_DISABLE_JIT=1`` to run
them as plain Python when debugging.

``njit`` is ``engine.core.lazy_jit``'s: numba is imported when a kernel first needs machine code,
and the per-move kernels (``python_first``) run as Python for a process's first few hundred moves
(a command that replays a few moves never starts numba: ~0.6 s).
"""

import numpy as np

from fuseki.engine.core.lazy_jit import njit  # numba is imported when a kernel first needs it

# Copies of base's constants: numba's cache checks only this file, so a kernel must not read
# another module's globals (tests/test_numba_cache.py checks the copies equal the originals).
EMPTY, BLACK, WHITE, BORDER = 0, 1, 2, 3
PASS = -1
END = -2  # base.END: next move of the last position of a game (importer output)

OK, OCCUPIED, SUICIDE, KO = 0, 1, 2, 3
_SIGN_BIT = np.int64(-(2 ** 63))

N_FIELDS = 7
META_KO, META_PRISONERS, META_HASH = 0, 1, 3  # prisoners at +1 (black), +2 (white)
META_LEN = META_HASH + 8


@njit(cache=True, python_first=True)
def new_state(size):
    """An empty board: border cells set, no stones, no ko, hashes zero."""
    w = size + 2
    n = w * w
    s = np.zeros(N_FIELDS * n + META_LEN, dtype=np.int64)
    for p in range(n):
        y, x = divmod(p, w)
        if x == 0 or y == 0 or x == w - 1 or y == w - 1:
            s[p] = BORDER
    s[N_FIELDS * n + META_KO] = -1
    return s


@njit(cache=True, inline="always", python_first=True)
def _in_atari(s, n, head):
    libs = s[3 * n + head]
    total = s[4 * n + head]
    return libs > 0 and libs * s[5 * n + head] == total * total


@njit(cache=True, inline="always", python_first=True)
def _add_liberty(s, n, head, p):
    s[3 * n + head] += 1
    s[4 * n + head] += p
    s[5 * n + head] += p * p


@njit(cache=True, inline="always", python_first=True)
def _remove_liberty(s, n, head, p):
    s[3 * n + head] -= 1
    s[4 * n + head] -= p
    s[5 * n + head] -= p * p


@njit(cache=True, python_first=True)
def legality(s, size, p, c, allow_suicide):
    """OK, OCCUPIED, KO or SUICIDE for colour ``c`` playing on point ``p``."""
    w = size + 2
    n = w * w
    if s[p] != EMPTY:
        return OCCUPIED
    if s[N_FIELDS * n + META_KO] == p:
        # Only the captured side's retake is ko: GTP lets the capturer play
        # twice, and then filling the point is an ordinary move.
        for q in (p - 1, p + 1, p - w, p + w):
            if s[q] != BORDER:
                if s[q] != c:
                    return KO
                break
    if allow_suicide:
        return OK
    for q in (p - 1, p + 1, p - w, p + w):
        col = s[q]
        if col == EMPTY:
            return OK
        if col == BORDER:
            continue
        atari = _in_atari(s, n, s[n + q])
        if col == c and not atari:
            return OK  # the friendly chain keeps another liberty
        if col != c and atari:
            return OK  # the move captures
    return SUICIDE


@njit(cache=True, python_first=True)
def _merge(s, n, a, b):
    """Join chains with heads a and b; returns the surviving head."""
    if s[6 * n + a] < s[6 * n + b]:
        a, b = b, a
    q = b
    while True:
        s[n + q] = a
        q = s[2 * n + q]
        if q == b:
            break
    na, nb = s[2 * n + a], s[2 * n + b]
    s[2 * n + a], s[2 * n + b] = nb, na
    for f in (3, 4, 5, 6):
        s[f * n + a] += s[f * n + b]
    return a


@njit(cache=True, python_first=True)
def _set_stone(s, keys, n, p, col, old):
    """Change the colour of p and update every hash layer."""
    s[p] = col
    base = N_FIELDS * n + META_HASH
    for t in range(keys.shape[0]):
        s[base + t] ^= keys[t, old, p] ^ keys[t, col, p]


@njit(cache=True, python_first=True)
def _remove_chain(s, keys, size, head):
    """Take a chain off the board, giving its points back as liberties."""
    w = size + 2
    n = w * w
    col = s[head]
    count = 0
    q = head
    while True:
        _set_stone(s, keys, n, q, EMPTY, col)
        s[n + q] = 0
        count += 1
        q = s[2 * n + q]
        if q == head:
            break
    q = head
    while True:
        nxt = s[2 * n + q]
        for r in (q - 1, q + 1, q - w, q + w):
            if s[r] == BLACK or s[r] == WHITE:
                _add_liberty(s, n, s[n + r], q)
        s[2 * n + q] = 0
        q = nxt
        if q == head:
            break
    return count


@njit(cache=True, python_first=True)
def play(s, keys, size, p, c, allow_suicide):
    """Play colour ``c`` at ``p`` (PASS allowed).

    Returns the number of stones captured (>= 0), or minus the reason
    (-OCCUPIED, -KO, -SUICIDE) leaving ``s`` unchanged.
    """
    w = size + 2
    n = w * w
    meta = N_FIELDS * n
    if p == PASS:
        s[meta + META_KO] = -1
        return 0
    reason = legality(s, size, p, c, allow_suicide)
    if reason != OK:
        return -reason
    _set_stone(s, keys, n, p, c, EMPTY)
    s[n + p] = p
    s[2 * n + p] = p
    s[3 * n + p] = 0
    s[4 * n + p] = 0
    s[5 * n + p] = 0
    s[6 * n + p] = 1
    for q in (p - 1, p + 1, p - w, p + w):
        col = s[q]
        if col == EMPTY:
            _add_liberty(s, n, p, q)
        elif col != BORDER:
            _remove_liberty(s, n, s[n + q], p)
    head = p
    for q in (p - 1, p + 1, p - w, p + w):
        if s[q] == c and s[n + q] != head:
            head = _merge(s, n, head, s[n + q])
    captured = 0
    ko = -1
    o = 3 - c
    for q in (p - 1, p + 1, p - w, p + w):
        if s[q] == o and s[3 * n + s[n + q]] == 0:
            captured += _remove_chain(s, keys, size, s[n + q])
            ko = q
    if s[3 * n + head] == 0:  # suicide, only reached when allowed
        s[meta + META_PRISONERS + o - 1] += _remove_chain(s, keys, size, head)
    s[meta + META_PRISONERS + c - 1] += captured
    if captured == 1 and s[6 * n + head] == 1 and s[3 * n + head] == 1:
        s[meta + META_KO] = ko
    else:
        s[meta + META_KO] = -1
    return captured


@njit(cache=True, python_first=True)
def rebuild(s, keys, size):
    """Recompute chains, liberties and hashes from the colours alone (after setup)."""
    w = size + 2
    n = w * w
    for f in range(1, N_FIELDS):
        s[f * n:(f + 1) * n] = 0
    meta = N_FIELDS * n
    for t in range(keys.shape[0]):
        s[meta + META_HASH + t] = 0
    for p in range(n):
        col = s[p]
        if col == BLACK or col == WHITE:
            for t in range(keys.shape[0]):
                s[meta + META_HASH + t] ^= keys[t, col, p]
            s[n + p] = p
            s[2 * n + p] = p
            s[6 * n + p] = 1
    for p in range(n):
        col = s[p]
        if col != BLACK and col != WHITE:
            continue
        for q in (p - 1, p + 1, p - w, p + w):
            if s[q] == EMPTY:
                _add_liberty(s, n, s[n + p], q)
            elif s[q] == col and s[n + q] != s[n + p]:
                _merge(s, n, s[n + p], s[n + q])


@njit(cache=True, python_first=True)
def is_eye(s, size, p, c):
    """True if p is an empty point whose neighbours are all c and that is not a false eye."""
    w = size + 2
    if s[p] != EMPTY:
        return False
    for q in (p - 1, p + 1, p - w, p + w):
        if s[q] != c and s[q] != BORDER:
            return False
    enemy = 0
    edge = 0
    for q in (p - w - 1, p - w + 1, p + w - 1, p + w + 1):
        if s[q] == BORDER:
            edge = 1
        elif s[q] == 3 - c:
            enemy += 1
    return enemy + edge < 2


@njit(cache=True)
def first_playable(s, size, order, c, allow_suicide):
    """The first point of ``order`` that is legal for c and not c's own eye, or PASS."""
    for i in range(order.shape[0]):
        p = order[i]
        if legality(s, size, p, c, allow_suicide) == OK and not is_eye(s, size, p, c):
            return p
    return PASS


@njit(cache=True)
def area(s, size):
    """(black, white) Tromp-Taylor area: stones plus empty regions reaching one colour only."""
    w = size + 2
    n = w * w
    seen = np.zeros(n, dtype=np.bool_)
    stack = np.empty(n, dtype=np.int64)
    black = 0
    white = 0
    for p in range(n):
        col = s[p]
        if col == BLACK:
            black += 1
        elif col == WHITE:
            white += 1
        elif col == EMPTY and not seen[p]:
            seen[p] = True
            stack[0] = p
            top = 1
            region = 0
            reach = 0  # bit 1 black, bit 2 white
            while top > 0:
                top -= 1
                q = stack[top]
                region += 1
                for r in (q - 1, q + 1, q - w, q + w):
                    if s[r] == EMPTY:
                        if not seen[r]:
                            seen[r] = True
                            stack[top] = r
                            top += 1
                    elif s[r] == BLACK or s[r] == WHITE:
                        reach |= s[r]
            if reach == BLACK:
                black += region
            elif reach == WHITE:
                white += region
    return black, white


@njit(cache=True, inline="always")
def _canonical_key(s, meta, side):
    """``(key, t)``: the smallest of the position's 8 symmetric keys (layer t's hash XOR
    ``side``, the side to move's key), compared as unsigned 64-bit, and its layer (the
    smallest t on ties).  Flipping the sign bit lets int64 compare them so (numba's uint64
    arithmetic made this loop a third of the whole replay).  ``replay``'s and
    ``_replay_with_events``'."""
    best = 0
    best_flipped = (s[meta + META_HASH] ^ side) ^ _SIGN_BIT
    for t in range(1, 8):
        flipped = (s[meta + META_HASH + t] ^ side) ^ _SIGN_BIT
        if flipped < best_flipped:
            best_flipped = flipped
            best = t
    return best_flipped ^ _SIGN_BIT, best


@njit(cache=True)
def replay(size, keys, sym, side_keys, setup_points, setup_colors, move_points, move_colors,
           no_moves_to_move, out_key, out_sym, out_next):
    """Replay one game and describe every position it reached, in canonical orientation.

    For position i (before move i; i = len(moves) is the final position):
    ``out_key[i]`` is the smallest of its 8 symmetric keys (compared as unsigned
    64-bit), ``out_sym[i]`` the symmetry that gives it, and ``out_next[i]`` the
    move played from it mapped by that symmetry (PASS, or END for the last
    position).  ``keys`` has 8 layers (one per symmetry) and ``side_keys[c]``
    is XORed in for the side to move (it carries the board-size key too).
    The side to move is each move's colour; after the last move, its opponent;
    in a game without moves, ``no_moves_to_move`` (White after handicap stones).

    Returns the number of positions written: ``len(moves) + 1``, or ``k + 1``
    when move k is illegal (the position before it then gets END).
    """
    s = new_state(size)
    n = (size + 2) ** 2
    meta = N_FIELDS * n
    for i in range(setup_points.shape[0]):
        p = setup_points[i]
        s[p] = setup_colors[i]
    rebuild(s, keys, size)
    count = move_points.shape[0]
    last = no_moves_to_move if count == 0 else 3 - move_colors[count - 1]
    for i in range(count + 1):
        to_move = move_colors[i] if i < count else last
        out_key[i], best = _canonical_key(s, meta, side_keys[to_move])
        out_sym[i] = best
        if i == count:
            out_next[i] = END
            return count + 1
        p = move_points[i]
        if play(s, keys, size, p, move_colors[i], False) < 0:
            out_next[i] = END
            return i + 1
        out_next[i] = PASS if p == PASS else sym[best, p]
    return count + 1


@njit(cache=True)
def replay_games(size, keys, sym, side_keys, setup_points, setup_colors, setup_offsets,
                 move_points, move_colors, move_offsets, no_moves_to_move, out_key, out_next, counts):
    """``replay`` for many games of one size in one call (the importer's batches).

    Game g's setup is ``setup_*[setup_offsets[g]:setup_offsets[g + 1]]``, its moves
    ``move_*[move_offsets[g]:move_offsets[g + 1]]``; its positions start at
    ``move_offsets[g] + g`` in the outputs and ``counts[g]`` gets how many it reached.
    (Here, beside ``replay``, because numba's cache of a function is not refreshed
    when a function it calls in another file changes.)
    """
    scratch = np.empty(out_key.shape[0], dtype=np.int64)
    for g in range(counts.shape[0]):
        a, b = move_offsets[g], move_offsets[g + 1]
        s, t = setup_offsets[g], setup_offsets[g + 1]
        start = a + g
        stop = b + g + 1
        counts[g] = replay(size, keys, sym, side_keys, setup_points[s:t], setup_colors[s:t],
                           move_points[a:b], move_colors[a:b], no_moves_to_move[g], out_key[start:stop],
                           scratch[start:stop], out_next[start:stop])


# replay_events' event kinds (kind << 12 | point, one uint16 each)
EVENT_MOVE, EVENT_REMOVE, EVENT_SETUP = 1, 3, 4  # a move's kind is EVENT_MOVE + colour - 1 (1 B, 2 W)


@njit(cache=True)
def ever_held(events, offsets, words):
    """(games, 2, words) uint64 bit sets: the points where each game of ``events`` (game g's
    are ``events[offsets[g]:offsets[g + 1]]``) ever had a black (0) and a white (1) stone,
    by setup or move."""
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
def _move_events(s, w, p, c, captured, colour, stack, out, k):
    """Write a move played (``p`` by ``c``, ``captured`` stones taken) and one removal per stone
    it took into ``out`` from ``k``; ``colour``: the board as the events left it (updated),
    ``stack``: scratch.  Returns the next free index.  (replay_events and _replay_with_events.)"""
    out[k] = (EVENT_MOVE + c - 1) << 12 | (0 if p == PASS else p)
    k += 1
    if p == PASS:
        return k
    colour[p] = c
    if captured == 0:
        return k
    o = 3 - c
    for q in (p - 1, p + 1, p - w, p + w):
        if colour[q] != o or s[q] != EMPTY:
            continue
        top = 0
        stack[0] = q
        colour[q] = EMPTY
        while top >= 0:  # the whole chain went: every stone of it is empty now
            r = stack[top]
            top -= 1
            out[k] = EVENT_REMOVE << 12 | r
            k += 1
            for t in (r - 1, r + 1, r - w, r + w):
                if colour[t] == o:
                    colour[t] = EMPTY
                    top += 1
                    stack[top] = t
    return k


@njit(cache=True)
def replay_events(size, keys, setup_points, setup_colors, move_points, move_colors, out):
    """A game as the list of what happens on its board, captures resolved: each setup stone
    ``(EVENT_SETUP + colour - 1) << 12 | p``, each move ``(EVENT_MOVE + colour - 1) << 12 | p``
    (p = 0 for a pass) followed by one ``EVENT_REMOVE << 12 | q`` per stone it captured.
    ``out`` needs room for twice the setup stones and moves (a stone is captured at most
    once).  Stops before an illegal move; returns the number of events written."""
    s = new_state(size)
    w = size + 2
    n = w * w
    colour = np.zeros(n, dtype=np.int64)  # the board as the events left it
    stack = np.empty(n, dtype=np.int64)
    k = 0
    for i in range(setup_points.shape[0]):
        p = setup_points[i]
        s[p] = setup_colors[i]
        colour[p] = setup_colors[i]
        out[k] = (EVENT_SETUP + setup_colors[i] - 1) << 12 | p
        k += 1
    rebuild(s, keys, size)
    for i in range(move_points.shape[0]):
        p = move_points[i]
        c = move_colors[i]
        captured = play(s, keys, size, p, c, False)
        if captured < 0:
            return k
        k = _move_events(s, w, p, c, captured, colour, stack, out, k)
    return k


@njit(cache=True)
def _replay_with_events(size, keys, sym, side_keys, setup_points, setup_colors, move_points, move_colors,
                        no_moves_to_move, out_key, out_sym, out_next, colour, stack, events):
    """``replay``, writing as it goes the game's ``replay_events`` into ``events`` (room for
    twice the setup stones and moves) from the same moves: (positions, events) written.

    The import's parsers replay every game for its positions anyway; the pattern index's
    events come from that replay instead of a second one.  ``colour`` and ``stack``: scratch
    of the board's cells.  (The loop of ``replay``, kept apart from it; the events are
    ``_move_events``', which ``replay_events`` writes too: the import's test compares the two.)
    """
    s = new_state(size)
    w = size + 2
    n = w * w
    meta = N_FIELDS * n
    colour[:] = 0
    k = 0
    for i in range(setup_points.shape[0]):
        p = setup_points[i]
        s[p] = setup_colors[i]
        colour[p] = setup_colors[i]
        events[k] = (EVENT_SETUP + setup_colors[i] - 1) << 12 | p
        k += 1
    rebuild(s, keys, size)
    count = move_points.shape[0]
    last = no_moves_to_move if count == 0 else 3 - move_colors[count - 1]
    for i in range(count + 1):
        to_move = move_colors[i] if i < count else last
        out_key[i], best = _canonical_key(s, meta, side_keys[to_move])
        out_sym[i] = best
        if i == count:
            out_next[i] = END
            return count + 1, k
        p = move_points[i]
        c = move_colors[i]
        captured = play(s, keys, size, p, c, False)
        if captured < 0:
            out_next[i] = END
            return i + 1, k
        out_next[i] = PASS if p == PASS else sym[best, p]
        k = _move_events(s, w, p, c, captured, colour, stack, events, k)
    return count + 1, k


@njit(cache=True)
def replay_games_events(size, keys, sym, side_keys, setup_points, setup_colors, setup_offsets,
                        move_points, move_colors, move_offsets, no_moves_to_move, out_key, out_next, counts,
                        events, event_counts):
    """``replay_games``, and each game's events as ``replay_events`` gives them: game g's start at
    ``2 * (setup_offsets[g] + move_offsets[g])`` in ``events``, ``event_counts[g]`` of them."""
    scratch = np.empty(out_key.shape[0], dtype=np.int64)
    n = (size + 2) ** 2
    colour = np.zeros(n, dtype=np.int64)
    stack = np.empty(n, dtype=np.int64)
    for g in range(counts.shape[0]):
        a, b = move_offsets[g], move_offsets[g + 1]
        s, t = setup_offsets[g], setup_offsets[g + 1]
        start = a + g
        stop = b + g + 1
        e = 2 * (s + a)
        counts[g], event_counts[g] = _replay_with_events(
            size, keys, sym, side_keys, setup_points[s:t], setup_colors[s:t], move_points[a:b], move_colors[a:b],
            no_moves_to_move[g], out_key[start:stop], scratch[start:stop], out_next[start:stop], colour, stack,
            events[e:2 * (t + b)])


@njit(cache=True)
def replay_moves(size, keys, move_points, move_colors):
    """Play a list of moves on an empty board; returns how many were legal in a row."""
    s = new_state(size)
    for i in range(move_points.shape[0]):
        if play(s, keys, size, move_points[i], move_colors[i], False) < 0:
            return i
    return move_points.shape[0]


@njit(cache=True)
def seed_rng(seed):
    """Seed numba's own random generator (used by ``playout``)."""
    np.random.seed(seed)


@njit(cache=True)
def playout(s, keys, size, c, max_moves):
    """Random play from state s (modified in place), c to move, until two passes.

    Moves are uniformly random among legal points that do not fill the mover's
    own eye.  Returns the number of moves played (passes included).
    """
    w = size + 2
    cand = np.empty(size * size, dtype=np.int64)
    passes = 0
    moves = 0
    while passes < 2 and moves < max_moves:
        m = 0
        for y in range(1, size + 1):
            for x in range(1, size + 1):
                p = y * w + x
                if s[p] == EMPTY:
                    cand[m] = p
                    m += 1
        chosen = PASS
        while m > 0:
            j = np.random.randint(m)
            p = cand[j]
            if legality(s, size, p, c, False) == OK and not is_eye(s, size, p, c):
                chosen = p
                break
            m -= 1
            cand[j] = cand[m]
        play(s, keys, size, chosen, c, False)
        passes = passes + 1 if chosen == PASS else 0
        moves += 1
        c = 3 - c
    return moves
