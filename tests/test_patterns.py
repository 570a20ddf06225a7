"""Pattern search (book.analysis.patterns) against a brute-force scan written here, on generated games
(19x19 and 9x9; 19x19 on PostgreSQL too) and on 300 real Tygem games (skipped without ../shared).

The brute force turns the *board* instead of placing the pattern: for each position of each
game it draws the board in the 8 orientations as numpy arrays and slides the pattern's
window over each (along the axes the region as drawn lets it slide), with any-points left
out and, with colour swap, the colours exchanged.  A game's match is its first position
with a match; its continuation the next move drawn the same way, if it falls in a matching
window: Kombilo's continuation, the first move from the match on (by either player) that
falls in a matching window, unswapped windows first, then the smallest pattern point; "at
once" when it is the very next move, else "after tenuki"; none at all: a tenuki.  Every
count is compared: games matched and the move number of each, each continuation's games at
once and after tenuki and wins by point and colour, tenuki.

Kombilo's options the same way: a colour wildcard compares the window with "not white" (x) or
"not black" (o), colours exchanged with the rest; who moves next keeps only the windows of the
positions whose next move (from the game's own list) is that colour's, the other colour's
for an exchanged window; a move range keeps only the positions in it.  The first position
left is the game's match.
"""

from __future__ import annotations

import dataclasses
import functools
from collections import Counter
from urllib.parse import urlsplit

import numpy as np
import pytest

from fuseki.book.analysis.patterns.pattern import EMPTY_OR_BLACK, EMPTY_OR_WHITE, Pattern, PatternError
from fuseki.book.analysis.patterns.search import search
from fuseki.book.analysis.pipeline import importer
from fuseki.book.model.filters import Filters
from fuseki.book.storage.store import Book
from fuseki.engine.core import coords
from fuseki.engine.core.base import BLACK, EMPTY, PASS, WHITE, point_to_xy, xy_to_point
from fuseki.engine.core.board import Board

from conftest import missing_service
from test_store import OPENINGS, random_game, sgf_text

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


def turned(grids, size):
    """(positions, 8, size, size): each board turned by symmetry t (``coords.transform_xy``)."""
    flat = grids.reshape(grids.shape[0], -1)
    out = np.empty((grids.shape[0], 8, size * size), dtype=grids.dtype)
    for t, moved in enumerate(_turns(size)):
        out[:, t, moved] = flat
    return out.reshape(grids.shape[0], 8, size, size)


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
        grids = turned(boards[g] if boards is not None else boards_of(moves, size), size)
        variants = [(False, window_matches(grids, want, region, size))]
        if swap:
            variants.append((True, window_matches(grids, swapped_want, region, size)))
        number = np.arange(len(grids))
        counts = (number >= moves_from) & (number <= (len(grids) if moves_to is None else moves_to))
        after = np.array([moves[i][0] for i in range(len(moves))] + [EMPTY])  # who moves next
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
        windows = [(swapped, int(t), int(dy), int(dx)) for swapped, hits in variants
                   for t, dy, dx in zip(*np.nonzero(hits[i]))]
        found = None
        for j in range(i, len(moves)):
            if moves[j][1] == PASS:
                continue
            inside = []
            for swapped, t, dy, dx in windows:
                tx, ty = coords.transform_xy(t, *point_to_xy(moves[j][1], size), size)
                qx, qy = tx - dx + x0, ty - dy + y0
                if x0 <= qx <= x1 and y0 <= qy <= y1:
                    inside.append((swapped, xy_to_point(qx, qy, size)))
            if inside:
                found = j, min(inside)
                break
        if found is None:
            if i == len(moves):
                tenuki[2] += 1
                continue
            colour = moves[i][0]
            if min(w[0] for w in windows):  # only swapped windows: the colour exchanged back
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


@pytest.fixture(scope="module", params=[(19, "sqlite"), (9, "sqlite"), (19, "postgresql")],
                ids=["19-sqlite", "9-sqlite", "19-postgresql"])
def book_and_games(request, tmp_path_factory):
    """A book of 90 generated games of one size, on SQLite or PostgreSQL (the same answers)."""
    size, backend = request.param
    folder = tmp_path_factory.mktemp(f"patterns{size}")
    games = make_games(folder, size, 90, seed=size)
    if backend == "sqlite":
        url = str(folder / "book.sqlite")
    else:
        server = request.getfixturevalue("_postgres")
        if isinstance(server, str):
            missing_service(server)
        url = server.create()
    book = Book.open(url)
    importer.import_paths(book, [str(folder)], workers=0)
    assert book.stats().games == len(games)
    yield book, games, size
    book.close()
    if backend != "sqlite":
        server.drop(urlsplit(url).path.lstrip("/"))


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


MOST_DRAWS = 240  # patterns drawn at most while one a test needs (e.g. a continuation after tenuki) is missing


def draws(least, seen, *needed):
    """0, 1, 2, ...: at least ``least`` patterns, then more while a count of ``seen`` named in
    ``needed`` is 0 (at most ``MOST_DRAWS``), so that a test needing some property of its random
    patterns draws until it has one instead of passing or failing by the luck of its first
    ``least``."""
    i = 0
    while i < least or (not all(seen[name] for name in needed) and i < MOST_DRAWS):
        yield i
        i += 1


@pytest.mark.parametrize("kind", ["corner", "side", "anywhere"])
def test_every_answer_equals_the_brute_force(book_and_games, kind):
    book, games, size = book_and_games
    rng = rng_for("brute force", kind, size)
    seen = Counter()
    for i in draws(12, seen, "later"):
        pattern, want = pattern_of(games, rng, kind, size, any_points=i % 3, swap=i % 2 == 1)
        assert pattern.kind == kind
        found = check(book, games, pattern, want)
        seen["matched"] += found.total
        seen["later"] += sum(c.after_tenuki for c in found.continuations)
    assert seen["matched"] >= 12  # every pattern came from a game: it matches at least there
    assert seen["later"]  # continuations after tenuki were compared too


def test_empty_and_self_symmetric_regions(book_and_games):
    book, games, size = book_and_games
    empty = Pattern(size, (0, 0, 3, 3), {xy_to_point(x, y, size): EMPTY for x in range(4) for y in range(4)})
    found = check(book, games, empty, np.zeros((4, 4), dtype=np.int8))
    assert found.total == len(games) and set(found.matches.values()) == {0}  # the empty board matches
    # a stone on the diagonal of a square corner: the pattern is its own mirror image
    cells = {xy_to_point(x, y, size): EMPTY for x in range(5) for y in range(5)}
    corner_stone = xy_to_point(3, 3, size) if size == 19 else xy_to_point(2, 2, size)
    cells[corner_stone] = BLACK
    want = np.zeros((5, 5), dtype=np.int8)
    want[point_to_xy(corner_stone, size)[::-1]] = BLACK
    pattern = Pattern(size, (0, 0, 4, 4), cells)
    found = check(book, games, pattern, want)
    orbits = pattern.orbits()  # mirror points are one entry, the diagonal's alone
    assert orbits[xy_to_point(1, 0, size)] == tuple(sorted((xy_to_point(1, 0, size), xy_to_point(0, 1, size))))
    assert orbits[xy_to_point(1, 1, size)] == (xy_to_point(1, 1, size),)
    assert len(pattern.placements()) == 4  # 8 orientations, each corner found once
    for c in found.continuations:
        assert c.points == orbits[c.point]


def test_filters_apply_to_every_count(book_and_games):
    book, games, size = book_and_games
    rng = np.random.default_rng(7)
    pattern, want = pattern_of(games, rng, "corner", size, any_points=1, swap=True)
    check(book, games, pattern, want, Filters(year_from=2012, year_to=2013), keep=lambda g: 2012 <= g[2] <= 2013)


def kombilo_options(rng, i):
    """Who moves next (either, Black, White in turn) and, for three patterns in four, a move
    range: from a move, to a move, or both."""
    options = {"to_move": [EMPTY, BLACK, WHITE][i % 3]}
    if i % 4 >= 2:
        options["moves_from"] = int(rng.integers(0, 12))
    if i % 4 in (1, 2):
        options["moves_to"] = options.get("moves_from", 0) + int(rng.integers(0, 25))
    return options


def check_options(book, games, kind, size, rng, count, **drawn):
    """``count`` patterns with wildcards and Kombilo's options, each against the brute force;
    the options must bite: some game's match moves later than without them (a position that
    did not count does not end the search)."""
    seen = Counter()
    for i in draws(count, seen, "matched", "moved", "later"):
        pattern, want = pattern_of(games, rng, kind, size, any_points=i % 2, swap=i % 2 == 0,
                                   wildcards=1 + i % 3, **kombilo_options(rng, i))
        found = check(book, games, pattern, want, **drawn)
        plain = search(book, dataclasses.replace(pattern, to_move=EMPTY, moves_from=0, moves_to=None))
        seen["matched"] += found.total
        seen["moved"] += sum(1 for g, number in found.matches.items() if number > plain.matches[g])
        seen["later"] += sum(c.after_tenuki for c in found.continuations)
    assert seen["matched"] and seen["moved"] and seen["later"]


@pytest.mark.parametrize("kind", ["corner", "side", "anywhere"])
def test_kombilo_options_equal_the_brute_force(book_and_games, kind):
    book, games, size = book_and_games
    rng = rng_for("kombilo options", kind, size)
    check_options(book, games, kind, size, rng, 12)


def test_bad_kombilo_options_are_refused_with_one_line():
    cells = {xy_to_point(0, 0, 19): BLACK}
    with pytest.raises(PatternError, match="who moves next"):
        Pattern(19, (0, 0, 3, 3), cells, to_move=EMPTY_OR_BLACK)
    with pytest.raises(PatternError, match="bad move range"):
        Pattern(19, (0, 0, 3, 3), cells, moves_from=30, moves_to=20)
    assert not Pattern(19, (0, 0, 18, 18), {p: EMPTY_OR_BLACK for p in Pattern(19, (0, 0, 18, 18), cells).points()}
                       ).whole_board  # a wildcard is not a position


@pytest.mark.parametrize("region, cells, message", [
    ((0, 0, 19, 3), {}, "not on a 19x19 board"),
    ((4, 4, 4, 4), {xy_to_point(4, 4, 19): EMPTY}, "one point"),
    ((0, 0, 3, 3), {xy_to_point(9, 9, 19): BLACK}, "outside the region"),
    ((0, 0, 3, 3), {}, "no point to match"),
])
def test_bad_patterns_are_refused_with_one_line(region, cells, message):
    with pytest.raises(PatternError, match=message):
        Pattern(19, region, cells)


def test_replay_events_leave_the_boards_the_rules_core_makes():
    """engine.core.replay.replay_events: setting and clearing points as its events say gives, before every
    move and at the end, the stones Board has (long 9x9 games: many captures)."""
    from fuseki.engine.core.replay import EVENT_MOVE, EVENT_REMOVE, EVENT_SETUP, replay_events

    def stones_of(board):
        return {p: c for c in (BLACK, WHITE) for p in board.stones(c)}

    rng = np.random.default_rng(11)
    captures = 0
    for _ in range(20):
        moves = random_game(rng, 9, (), length=120)
        events = replay_events(9, np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64),
                               np.array([p for _c, p in moves], dtype=np.int64),
                               np.array([c for c, _p in moves], dtype=np.int64))
        board, stones, played = Board(9), {}, 0
        for event in events.tolist():
            kind, point = event >> 12, event & 4095
            assert kind != EVENT_SETUP
            if kind == EVENT_REMOVE:
                del stones[point]
                captures += 1
                continue
            assert stones == stones_of(board)  # the previous move and its captures are all applied
            assert (kind - EVENT_MOVE + 1, point or PASS) == moves[played]
            if point:
                stones[point] = kind - EVENT_MOVE + 1
            board.play(*moves[played])
            played += 1
        assert stones == stones_of(board) and played == len(moves)
    assert captures > 50


def test_live_placements_equal_a_direct_check(book_and_games):
    """The scan's bit-shift pre-filter (``scan._live``) against a check written here: a
    placement is live when each of its stones lies on a point the game ever held in that colour."""
    from fuseki.book.analysis.patterns import scan
    from fuseki.book.analysis.patterns.search import _indexed_games
    from fuseki.engine.core.replay import EVENT_MOVE, EVENT_REMOVE, EVENT_SETUP

    book, games, size = book_and_games
    _ids, events, offsets, _winner_of, held = _indexed_games(book, size)
    rng = np.random.default_rng(size + 11)
    for i, kind in enumerate(["corner", "side", "anywhere"] * 3):
        pattern, _want = pattern_of(games, rng, kind, size, any_points=i % 2, swap=i % 3 == 0)
        table = pattern.placement_table()
        ways = scan.tables(table, size, pattern.orbit_min())[-5:]
        acc = np.empty(held.shape[2], dtype=np.uint64)
        live = np.empty(len(table.swapped), dtype=np.int64)
        for g in range(len(offsets) - 1):
            ever = {BLACK: set(), WHITE: set()}  # from the events, not from ``held``
            for event in events[offsets[g]:offsets[g + 1]].tolist():
                kind_of, point = event >> 12, event & 4095
                if point and kind_of != EVENT_REMOVE:
                    ever[BLACK if kind_of in (EVENT_MOVE, EVENT_SETUP) else WHITE].add(point)
            expected = {i for i in range(len(table.swapped))
                        if all(q in ever[w] for q, w in zip(table.point[i].tolist(), table.want[i].tolist())
                               if w != EMPTY)}
            alive = scan._live(held[g], *ways, acc, live)
            assert sorted(live[:alive].tolist()) == sorted(expected), (pattern.region, g)


# --- real games --------------------------------------------------------------------------------

REAL_GAMES = 300


@pytest.fixture(scope="module")
def real_book(tmp_path_factory, tygem_games):
    """The first 300 Tygem games (19x19, no setup stones) in a book, each also read here with
    sgfmill and replayed with Board: (book, [(moves, winner, year)], their ids in the book,
    their boards)."""
    from sgfmill import sgf

    from conftest import sgfmill_main_line, write_archive

    members, games, boards = [], [], []
    for name, data in tygem_games:
        game = sgf.Sgf_game.from_bytes(data)
        root = game.get_root()
        if game.get_size() != 19 or root.has_setup_stones():
            continue
        moves = sgfmill_main_line(game)
        try:
            drawn = boards_of(moves, 19)
        except Exception:  # an illegal move: not a game the brute force can follow
            continue
        winner = {"b": BLACK, "w": WHITE}.get(game.get_winner())
        year = int(root.get("DT")[:4]) if root.has_property("DT") else None
        if any(moves == other[0] for other in games):  # the book keeps one of each game
            continue
        members.append((name, data))
        games.append((moves, winner, year))
        boards.append(drawn)
        if len(games) == REAL_GAMES:
            break
    folder = tmp_path_factory.mktemp("real-patterns")
    archive = write_archive(folder / "games.tgz", members)
    book = Book.open(str(folder / "book.sqlite"))
    importer.import_paths(book, [str(archive)], workers=0)
    with book.db.connect() as conn:
        id_of = {source: game_id for game_id, source in conn.exec_driver_sql("SELECT id, source FROM games")}
    ids = [next(i for source, i in id_of.items() if source.endswith(name)) for name, _data in members]
    assert len(set(ids)) == len(games) == REAL_GAMES
    yield book, games, ids, boards
    book.close()


@pytest.mark.parametrize("kind", ["corner", "side", "anywhere"])
def test_real_games_equal_the_brute_force(real_book, kind):
    """Twelve patterns of each kind cut from the real games (any points and colour swap in turn,
    corners up to 8x8): every count equals the brute force's over 300 whole games."""
    book, games, ids, boards = real_book
    rng = rng_for("real games", kind)
    seen = Counter()
    for i in draws(12, seen, "once", "later"):
        pattern, want = pattern_of(games, rng, kind, 19, any_points=i % 3, swap=i % 2 == 1)
        assert pattern.kind == kind
        found = check(book, games, pattern, want, ids=ids, boards=boards)
        seen["matched"] += found.total
        seen["once"] += sum(c.at_once for c in found.continuations)
        seen["later"] += sum(c.after_tenuki for c in found.continuations)
    assert seen["matched"] >= 12 and seen["once"] and seen["later"]


@pytest.mark.parametrize("kind", ["corner", "side", "anywhere"])
def test_real_games_with_kombilo_options_equal_the_brute_force(real_book, kind):
    """Eight patterns of each kind with wildcards, who moves next and move ranges: every count
    equals the brute force's over the 300 real games."""
    book, games, ids, boards = real_book
    rng = rng_for("real games with kombilo options", kind)
    check_options(book, games, kind, 19, rng, 8, ids=ids, boards=boards)
