"""Pattern search (book.analysis.patterns) against a brute-force scan written here, on generated games
(19x19 and 9x9; 19x19 on PostgreSQL too) and on 300 real Tygem games (slow; skipped without ../shared).

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
from collections import Counter
from urllib.parse import urlsplit

import numpy as np
import pytest

from fuseki.book.analysis.patterns.pattern import EMPTY_OR_BLACK, Pattern, PatternError
from fuseki.book.analysis.patterns.search import search
from fuseki.book.analysis.pipeline import importer
from fuseki.book.model.filters import Filters
from fuseki.book.storage.store import Book
from fuseki.engine.core.base import BLACK, EMPTY, PASS, WHITE, point_to_xy, xy_to_point
from fuseki.engine.core.board import Board

from conftest import missing_service
from games import random_game
from patterncount import boards_of, check, make_games, pattern_of, rng_for


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


@pytest.mark.parametrize("book_and_games", [  # a kernel on the index's arrays: no backend in it
    pytest.param((19, "sqlite"), id="19-sqlite", marks=pytest.mark.slow),  # 19 s on 2 loaded cores; 9x9 stays quick
    pytest.param((9, "sqlite"), id="9-sqlite")], indirect=True)
def test_placements_kept_in_time_keep_every_one_that_holds_and_drop_others(book_and_games):
    """Issue 61's pre-filter in time (``scan._possible``) against a replay written here: of the
    live placements it keeps exactly those the rule keeps, computed here from the events (the
    last of a placement's stones first arrives no later than an empty cell of it is filled for
    good), and it never drops one that holds at some position of the game (each position
    checked cell by cell here).  It must drop some (else it prunes nothing)."""
    from fuseki.book.analysis.patterns import scan
    from fuseki.book.analysis.patterns.search import _indexed_games
    from fuseki.engine.core.replay import EVENT_MOVE, EVENT_REMOVE, EVENT_SETUP

    book, games, size = book_and_games
    _ids, events, offsets, _winner_of, held = _indexed_games(book, size)
    rng = np.random.default_rng(size + 61)
    points = (size + 2) ** 2
    dropped = kept_total = 0
    for i, kind in enumerate(["side", "anywhere"] * 3):
        pattern, _want = pattern_of(games, rng, kind, size, any_points=i % 2, swap=i % 3 == 0)
        table = pattern.placement_table()
        arrays = scan.tables(table, size, pattern.orbit_min())
        cell_start, cell_point, cell_want = arrays[3], arrays[4], arrays[5]
        ways = arrays[-5:]
        acc = np.empty(held.shape[2], dtype=np.uint64)
        live = np.empty(len(table.swapped), dtype=np.int64)
        arrive = np.full((2, points), np.int64(1) << 40, dtype=np.int64)
        filled = np.full(points, np.int64(1) << 40, dtype=np.int64)
        emptied = np.zeros(points, dtype=np.bool_)
        for g in range(len(offsets) - 1):
            alive = scan._live(held[g], *ways, acc, live)
            candidates = live[:alive].tolist()
            game = events[offsets[g]:offsets[g + 1]].tolist()
            kept = scan._possible(events, offsets[g], offsets[g + 1], live, alive, cell_start, cell_point,
                                  cell_want, arrive, filled, emptied)
            assert (arrive == 1 << 40).all() and (filled == 1 << 40).all() and not emptied.any()  # left clean
            kept = set(live[:kept].tolist())
            # the rule, from the events here
            first: dict = {}
            removed = set()
            for k, event in enumerate(game):
                kind_of, point = event >> 12, event & 4095
                if not point:
                    continue
                if kind_of == EVENT_REMOVE:
                    removed.add(point)
                    continue
                colour = BLACK if kind_of in (EVENT_MOVE, EVENT_SETUP) else WHITE
                first.setdefault((colour, point), k)
                first.setdefault(point, k)
            never = float("inf")
            expected = set()
            for place in candidates:
                cells = list(zip(table.point[place].tolist(), table.want[place].tolist()))
                last = max((first.get((w, q), never) for q, w in cells if w in (BLACK, WHITE)), default=-1)
                if last < never and not any(w == EMPTY and q not in removed and first.get(q, never) <= last
                                            for q, w in cells):
                    expected.add(place)
            assert kept == expected, (pattern.region, g)
            # and every placement that holds at a position of the game is kept
            board = [EMPTY] * points
            held_once = set()
            cells_of = {place: list(zip(table.point[place].tolist(), table.want[place].tolist()))
                        for place in candidates}
            for k, event in enumerate(game):
                kind_of, point = event >> 12, event & 4095
                if point:
                    board[point] = EMPTY if kind_of == EVENT_REMOVE else (
                        BLACK if kind_of in (EVENT_MOVE, EVENT_SETUP) else WHITE)
                if k + 1 < len(game) and (game[k + 1] >> 12) == EVENT_REMOVE:
                    continue  # the move's captures come first
                for place, cells in cells_of.items():  # a wildcard fails only on the colour it forbids
                    if all(board[q] == w if w <= WHITE else board[q] != (WHITE if w == EMPTY_OR_BLACK else BLACK)
                           for q, w in cells):
                        held_once.add(place)
            assert held_once <= kept, (pattern.region, g, held_once - kept)
            dropped += len(candidates) - len(kept)
            kept_total += len(kept)
    assert dropped > 0 and kept_total > 0


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


@pytest.mark.slow  # the oracle over 300 games of the real archive
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


@pytest.mark.slow  # the oracle over 300 games of the real archive
@pytest.mark.parametrize("kind", ["corner", "side", "anywhere"])
def test_real_games_with_kombilo_options_equal_the_brute_force(real_book, kind):
    """Eight patterns of each kind with wildcards, who moves next and move ranges: every count
    equals the brute force's over the 300 real games."""
    book, games, ids, boards = real_book
    rng = rng_for("real games with kombilo options", kind)
    check_options(book, games, kind, 19, rng, 8, ids=ids, boards=boards)
