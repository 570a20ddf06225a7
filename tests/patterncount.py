"""Pattern search's brute force (see tests/test_patterns.py), its games and its random patterns.

``make_games`` is ``games.random_game`` after ``games.OPENINGS``, written with ``games.sgf_text``;
``brute`` replays every game with the rules core and slides the pattern over every window;
``check`` compares every count of ``search`` with it.  tests/test_reproducible.py draws the same
games and patterns under three hash seeds.

Not a test module: test modules import from here (and from conftest.py), never from each other.
"""

from __future__ import annotations

import functools

import numpy as np

from fuseki.book.analysis.patterns.pattern import EMPTY_OR_BLACK, EMPTY_OR_WHITE, Pattern
from fuseki.book.analysis.patterns.search import search
from fuseki.engine.core import coords
from fuseki.engine.core.base import BLACK, EMPTY, PASS, WHITE, point_to_xy, xy_to_point
from fuseki.engine.core.board import Board

from games import OPENINGS, random_game, sgf_text

ANY = -1


def make_games(folder, size, count, seed):
    rng = np.random.default_rng(seed)
    games = []
    for i in range(count):
        opening = OPENINGS[i % len(OPENINGS)] if size == 19 else ["cc", "gg", "cg"][: i % 4]
        moves = random_game(rng, size, opening, length=int(rng.integers(5, 40)))
        winner = [BLACK, WHITE, None][i % 3]
        result = {BLACK: "B+R", WHITE: "W+3.5", None: "Void"}[winner]
        (folder / f"g{size}_{i:03d}.sgf").write_bytes(sgf_text(size, moves, date=f"{2010 + i % 5}-01-01",
                                                             result=result))
        games.append((moves, winner, 2010 + i % 5))
    return games


def boards_of(moves, size):
    """Array (positions, size, size) of the board after 0..n moves (rows y, columns x)."""
    board = Board(size)
    out = np.zeros((len(moves) + 1, size, size), dtype=np.int8)
    for i in range(len(moves) + 1):
        for colour in (BLACK, WHITE):
            for p in board.stones(colour):
                x, y = point_to_xy(p, size)
                out[i, y, x] = colour
        if i < len(moves):
            board.play(*moves[i])
    return out


@functools.lru_cache
def _turns(size):
    """(8, size * size) flat indices: where ``coords.transform_xy`` takes each point, by symmetry."""
    return np.array([[y * size + x for x, y in (coords.transform_xy(t, x, y, size)
                                              for y in range(size) for x in range(size))] for t in range(8)])


@functools.lru_cache
def turned_xy(size):
    """(8, size, size) arrays x and y: where ``coords.transform_xy`` takes (x, y), by symmetry."""
    out = np.zeros((2, 8, size, size), dtype=np.int64)
    for t in range(8):
        for y in range(size):
            for x in range(size):
                out[:, t, y, x] = coords.transform_xy(t, x, y, size)
    return out[0], out[1]


@functools.lru_cache
def points_of(size):
    """(size, size): ``xy_to_point`` of (x, y) at [y, x]."""
    return np.array([[xy_to_point(x, y, size) for x in range(size)] for y in range(size)], dtype=np.int64)


def turned(grids, size):
    """(positions, 8, size, size): each board turned by symmetry t (``coords.transform_xy``)."""
    flat = grids.reshape(grids.shape[0], -1)
    out = np.empty((grids.shape[0], 8, size * size), dtype=grids.dtype)
    for t, moved in enumerate(_turns(size)):
        out[:, t, moved] = flat
    return out.reshape(grids.shape[0], 8, size, size)


# Each game's turned boards and who moves next are the same for every pattern: drawn once per
# game, not once per pattern (the real games' tests compare about 200 patterns with 300 games).
# Keyed by the moves themselves, so that a game is never taken for another; the oldest go first
# past DRAWN_MOST games (the real games' 300 and a generated set stay in together).
_DRAWN: dict = {}
DRAWN_MOST = 512


def drawn(moves, size, board=None):
    """(``turned`` boards of the game, who moves next at each position, EMPTY at the end), read
    only; ``board``: the game's ``boards_of``, if drawn already."""
    key = (size, tuple(moves))
    found = _DRAWN.get(key)
    if found is None:
        grids = turned(board if board is not None else boards_of(moves, size), size)
        after = np.array([colour for colour, _point in moves] + [EMPTY])
        grids.flags.writeable = after.flags.writeable = False
        while len(_DRAWN) >= DRAWN_MOST:
            del _DRAWN[next(iter(_DRAWN))]
        found = _DRAWN[key] = grids, after
    return found


def window_matches(grids, want, region, size):
    """(positions, 8, dy, dx) booleans: the pattern (``want`` h x w, ANY ignored) matches with
    its top left corner at (dx, dy) of the turned board; only the offsets the region as drawn
    may slide to (along an axis whose edges it touches neither of) can be True."""
    x0, y0, x1, y1 = region
    h, w = want.shape
    slide_x = x0 > 0 and x1 < size - 1
    slide_y = y0 > 0 and y1 < size - 1
    xs = range(size - w + 1) if slide_x else range(x0, x0 + 1)
    ys = range(size - h + 1) if slide_y else range(y0, y0 + 1)
    hits = np.ones(grids.shape[:2] + (len(ys), len(xs)), dtype=bool)
    for (cy, cx), value in np.ndenumerate(want):  # one slice of every window per pattern cell
        if value != ANY:
            cells = grids[:, :, ys[0] + cy:ys[-1] + cy + 1, xs[0] + cx:xs[-1] + cx + 1]
            hits &= cells != {EMPTY_OR_BLACK: WHITE, EMPTY_OR_WHITE: BLACK}[value] if value > WHITE else cells == value
    out = np.zeros(grids.shape[:2] + (size - h + 1, size - w + 1), dtype=bool)
    out[:, :, ys[0]:ys[-1] + 1, xs[0]:xs[-1] + 1] = hits
    return out


def brute(games, size, region, want, swap, boards=None, to_move=EMPTY, moves_from=0, moves_to=None):
    """{game index: move number}, {(point, colour): [at once, after tenuki, wins]}, tenuki
    [black, white, ended].  ``to_move``, ``moves_from``, ``moves_to``: Kombilo's options (the
    positions whose next move is not by ``to_move`` -- the other colour in a window with colours
    exchanged -- or outside the move range never match).

    Kombilo's counting: the continuation is the first move from the match on that falls in a
    matching window (passes and moves elsewhere skipped), by either player; among the windows
    holding it, unswapped first, then the smallest pattern point; "at once" when it is the
    very next move.  A game with none is a tenuki, by the colour of its next move (ended: none).
    ``boards``: each game's ``boards_of``, if already drawn."""
    x0, y0, x1, y1 = region
    exchange = {BLACK: WHITE, WHITE: BLACK, EMPTY_OR_BLACK: EMPTY_OR_WHITE, EMPTY_OR_WHITE: EMPTY_OR_BLACK}
    swapped_want = np.vectorize(lambda v: exchange.get(int(v), int(v)))(want).astype(want.dtype)
    matches, table, tenuki = {}, {}, [0, 0, 0]
    for g, (moves, winner, _year) in enumerate(games):
        grids, after = drawn(moves, size, boards[g] if boards is not None else None)
        variants = [(False, window_matches(grids, want, region, size))]
        if swap:
            variants.append((True, window_matches(grids, swapped_want, region, size)))
        number = np.arange(len(grids))
        counts = (number >= moves_from) & (number <= (len(grids) if moves_to is None else moves_to))
        for swapped, hits in variants:
            asked = (WHITE if to_move == BLACK else BLACK) if swapped else to_move
            hits &= (counts & (after == asked if to_move != EMPTY else True))[:, None, None, None]
        hit_any = np.zeros(len(grids), dtype=bool)
        for _s, hits in variants:
            hit_any |= hits.any(axis=(1, 2, 3))
        if not hit_any.any():
            continue
        i = int(np.flatnonzero(hit_any)[0])
        matches[g] = i
        # the matching windows at position i as arrays (swapped, t, dy, dx): each move after it is
        # turned once by each symmetry (``turned_xy``), its place in every window then read at once
        win = [(np.full(len(ts), swapped), ts, dys, dxs) for swapped, hits in variants
               for ts, dys, dxs in [np.nonzero(hits[i])]]
        win_s, win_t, win_dy, win_dx = (np.concatenate(column) for column in zip(*win))
        turned_x, turned_y = turned_xy(size)
        points = points_of(size)
        found = None
        for j in range(i, len(moves)):
            if moves[j][1] == PASS:
                continue
            x, y = point_to_xy(moves[j][1], size)
            qx = turned_x[win_t, y, x] - win_dx + x0
            qy = turned_y[win_t, y, x] - win_dy + y0
            inside = (x0 <= qx) & (qx <= x1) & (y0 <= qy) & (qy <= y1)
            if inside.any():  # the least (swapped, point): an unswapped window first
                swapped = bool(win_s[inside].all())
                pick = inside & (win_s == swapped)
                found = j, (swapped, int(points[qy[pick], qx[pick]].min()))
                break
        if found is None:
            if i == len(moves):
                tenuki[2] += 1
                continue
            colour = moves[i][0]
            if win_s.all():  # only swapped windows: the colour exchanged back
                colour = WHITE if colour == BLACK else BLACK
            tenuki[0 if colour == BLACK else 1] += 1
            continue
        j, (swapped, point) = found
        colour = moves[j][0]
        won = winner == colour
        if swapped:
            colour = WHITE if colour == BLACK else BLACK
        entry = table.setdefault((point, colour), [0, 0, 0])
        entry[0 if j == i else 1] += 1
        entry[2] += won
    return matches, table, tenuki


def random_region(rng, kind, size):
    if kind == "corner":
        w, h = int(rng.integers(2, min(9, size))), int(rng.integers(2, min(9, size)))
        right, bottom = bool(rng.integers(2)), bool(rng.integers(2))
        x0 = size - w if right else 0
        y0 = size - h if bottom else 0
        return x0, y0, x0 + w - 1, y0 + h - 1
    if kind == "side":
        depth, length = int(rng.integers(2, 5)), int(rng.integers(2, size - 3))
        start = int(rng.integers(1, size - 1 - length))
        edge = int(rng.integers(4))
        if edge == 0:
            return start, 0, start + length - 1, depth - 1
        if edge == 1:
            return start, size - depth, start + length - 1, size - 1
        if edge == 2:
            return 0, start, depth - 1, start + length - 1
        return size - depth, start, size - 1, start + length - 1
    w, h = int(rng.integers(2, 5)), int(rng.integers(2, 5))
    x0, y0 = int(rng.integers(1, size - w)), int(rng.integers(1, size - h))
    return x0, y0, x0 + w - 1, y0 + h - 1


def pattern_of(games, rng, kind, size, any_points, swap, wildcards=0, **options):
    """A pattern cut from a position of one of the games (so at least that game matches, unless
    ``options``, Kombilo's, rule that position out); ``wildcards`` points become x (empty or
    black) or o (empty or white), each one its stone allows."""
    moves = games[int(rng.integers(len(games)))][0]
    board = Board(size)
    for move in moves[: int(rng.integers(0, len(moves) + 1))]:
        board.play(*move)
    region = random_region(rng, kind, size)
    x0, y0, x1, y1 = region
    want = np.zeros((y1 - y0 + 1, x1 - x0 + 1), dtype=np.int8)
    cells = {}
    for y in range(y0, y1 + 1):
        for x in range(x0, x1 + 1):
            p = xy_to_point(x, y, size)
            want[y - y0, x - x0] = board.color_at(p)
            cells[p] = board.color_at(p)
    for _ in range(any_points):
        y, x = int(rng.integers(want.shape[0])), int(rng.integers(want.shape[1]))
        if sum(v != ANY for v in want.flat) > 1:
            want[y, x] = ANY
            cells.pop(xy_to_point(x + x0, y + y0, size), None)
    for _ in range(wildcards):
        y, x = int(rng.integers(want.shape[0])), int(rng.integers(want.shape[1]))
        if want[y, x] != ANY:
            wild = {BLACK: EMPTY_OR_BLACK, WHITE: EMPTY_OR_WHITE}.get(
                int(want[y, x]), [EMPTY_OR_BLACK, EMPTY_OR_WHITE][int(rng.integers(2))])
            want[y, x] = wild
            cells[xy_to_point(x + x0, y + y0, size)] = wild
    return Pattern(size, region, cells, swap_colours=swap, **options), want


def check(book, games, pattern, want, filters=None, keep=lambda game: True, ids=None, boards=None):
    """Compare every count of the book's answer with ``brute``'s; ``ids``: each game's id in the
    book (default: file order), ``boards``: each game's ``boards_of``, if drawn already."""
    found = search(book, pattern, filters)
    kept = [i for i, game in enumerate(games) if keep(game)]
    ids = ids or list(range(1, len(games) + 1))
    matches, table, tenuki = brute([games[i] for i in kept], pattern.size, pattern.region, want,
                                   pattern.swap_colours, boards and [boards[i] for i in kept],
                                   pattern.to_move, pattern.moves_from, pattern.moves_to)
    assert found.matches == {ids[kept[g]]: number for g, number in matches.items()}
    got = {(c.point, c.colour): [c.at_once, c.after_tenuki, c.wins] for c in found.continuations}
    assert got == table
    for c in found.continuations:
        assert c.point == min(c.points) and c.point in c.points
    assert [found.tenuki.black, found.tenuki.white, found.tenuki.ended] == tenuki
    assert found.total == len(matches)
    return found


# Each test's patterns come from its own generator, seeded from these numbers and the board
# size (never from hash() of a string, which PYTHONHASHSEED salts per process):
# tests/test_reproducible.py draws them under three hash seeds and finds the same patterns.
SEEDS = {"brute force": {"corner": 41, "side": 42, "anywhere": 43},
         "kombilo options": {"corner": 21, "side": 22, "anywhere": 23},
         "real games": {"corner": 1, "side": 2, "anywhere": 3},
         "real games with kombilo options": {"corner": 31, "side": 32, "anywhere": 33}}


def rng_for(test, kind, size=19):
    """The generator of ``test``'s patterns of ``kind`` on ``size`` boards."""
    return np.random.default_rng(SEEDS[test][kind] + 100 * size)


def expected_index(path: str, size: int):
    """(ids, events, offsets, held, winners) of the SQLite book at ``path``'s games of ``size``,
    computed from each stored record and the games table (read with sqlite3), without the
    pattern index: what ``index_map.load`` must give."""
    import sqlite3

    from fuseki.book.analysis.patterns import index
    from fuseki.book.storage.store import Book
    from fuseki.engine.core.replay import EVENT_MOVE, EVENT_REMOVE, EVENT_SETUP

    book = Book.open(path, readonly=True)
    ids = [i for i in book.game_ids(size)]
    pieces = [index.game_events(book.game(i)) for i in ids]
    book.close()
    words = ((size + 2) ** 2 + 63) // 64
    held = np.zeros((len(ids), 2, words), dtype=np.uint64)
    for g, events in enumerate(pieces):
        for event in events.tolist():
            kind, point = event >> 12, event & 4095
            if kind == EVENT_REMOVE or point == 0:  # a capture's removal, or a pass
                continue
            colour = kind - EVENT_SETUP if kind >= EVENT_SETUP else kind - EVENT_MOVE  # black 0, white 1
            held[g, colour, point >> 6] |= np.uint64(1) << np.uint64(point & 63)
    with sqlite3.connect(path) as conn:
        winner = dict(conn.execute("SELECT id, coalesce(winner, 0) FROM games").fetchall())
    offsets = np.concatenate([[0], np.cumsum([len(p) for p in pieces])]).astype(np.int64)
    events = np.concatenate(pieces) if pieces else np.empty(0, dtype=np.uint16)
    return (np.array(ids, dtype=np.int64), events, offsets, held,
            np.array([winner[i] for i in ids], dtype=np.int8))
