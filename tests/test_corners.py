"""The corner book (book.analysis.patterns.corners, corner_build) and its chooser against a count written here.

The independent count reads each corner as tuples of (empty, own, opponent) cells in its two
readings (no hashes, no numba): a corner's class is the smaller tuple, a move's the smaller of
its local points in the readings equal to it.  It replays every game with the rules core and
counts, as the corner book promises, each move in the corner where it was played and each
tenuki from the corner of the previous move.  Every lookup (each corner: each continuation's
board points, times played and wins; tenuki) is compared with it, on 19x19 and 9x9, SQLite
and PostgreSQL, and the chooser's move with the one the rule of ``corner_chooser`` gives on
the count, in all 8 orientations.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

from fuseki.book.analysis.patterns import corner_build, corners, index_map
from fuseki.book.analysis.pipeline import importer
from fuseki.book.play.book_chooser import BookChooser
from fuseki.book.storage.store import Book
from fuseki.engine.core import base, coords
from fuseki.engine.core.base import BLACK, PASS, WHITE, xy_to_point
from fuseki.engine.core.board import Board

from cornercount import corner_at, count_games, expected, make_games, to_board
from games import sgf_text

# --- the independent count --------------------------------------------------------------------

def got(found):
    return [({frozenset(m.points): (m.times, m.wins, m.games) for m in c.moves}, (c.tenuki, c.tenuki_games), c.games)
            for c in found]


def positions(games, size, rng, count):
    """(board, mover) of random positions of the games, some in a random orientation."""
    out = []
    for _ in range(count):
        moves, _ = games[int(rng.integers(len(games)))]
        upto = int(rng.integers(len(moves) + 1))
        t = int(rng.integers(8))
        board = Board(size)
        for colour, point in moves[:upto]:
            board.play(colour, coords.transform_point(t, point, size) if point != PASS else PASS)
        out.append((board, board.to_move))
    return out


# --- fixtures -----------------------------------------------------------------------------------

@pytest.fixture(scope="module", params=[19, 9])
def corner_book(request, tmp_path_factory):
    size = request.param
    folder = tmp_path_factory.mktemp(f"corners{size}")
    games = make_games(folder, size, 120 if size == 19 else 60, seed=size)
    path = str(folder / "book.sqlite")
    with Book.open(path) as book:
        importer.import_paths(book, [str(folder)], workers=0)
        assert book.stats().games == len(games)
        corner_build.update(book, progress=None, prune=1)
    return path, games, size, count_games(games, size)


def test_every_corner_equals_the_independent_count(corner_book):
    path, games, size, table = corner_book
    rng = np.random.default_rng(1)
    with Book.open(path, readonly=True) as book:
        for board, mover in positions(games, size, rng, 80):
            found = corners.of_book(book, board, mover)
            assert got(found) == expected(table, board, mover, prune=1)
            for corner in found:
                assert [m.games for m in corner.moves] == sorted((m.games for m in corner.moves), reverse=True)
                assert all(m.point == min(m.points) and m.corner == corner.corner for m in corner.moves)


def test_pruned_and_on_postgresql_the_same(corner_book, tmp_path, pg_url):
    path, games, size, table = corner_book
    folder = tmp_path / "sgf"
    folder.mkdir()
    for moves, winner in games:  # the same games, in the same order
        result = {BLACK: "B+R", WHITE: "W+3.5", None: "Void"}[winner]
        (folder / f"{len(list(folder.iterdir())):04d}.sgf").write_bytes(sgf_text(size, moves, result=result))
    rng = np.random.default_rng(2)
    with Book.open(pg_url) as book:
        importer.import_paths(book, [str(folder)], workers=0)
        assert corner_build.update(book, progress=None, prune=2)
        assert not corner_build.update(book, progress=None, prune=2)  # up to date: not rebuilt
        for board, mover in positions(games, size, rng, 40):
            assert got(corners.of_book(book, board, mover)) == expected(table, board, mover, prune=2)


def test_the_games_a_build_counts_are_bounded_at_max_games_and_not_below(monkeypatch):
    """A game's number + 1 shares a tally word with its count (``LAST_GAME``): a build of more than
    ``MAX_GAMES`` games is refused by name, one of exactly ``MAX_GAMES`` is built."""
    monkeypatch.setattr(corner_build, "MAX_GAMES", 3)

    def built(games):  # games without moves: nothing to count, the bound alone is tested
        offsets = np.zeros(games + 1, dtype=np.int64)
        return list(corner_build.records(np.zeros(0, dtype=np.uint16), offsets, np.arange(games, dtype=np.int64),
                                         np.zeros(games, dtype=np.int8), 19))

    assert sum(len(columns[0]) for columns in built(3)) == 0
    with pytest.raises(ValueError, match="at most 3 games, not 4"):
        built(4)


def test_a_book_of_two_sizes_writes_both_and_leaves_no_scratch_file(tmp_path):
    """A SQLite book's corner book goes in through a scratch file that SQLite copies whole (the
    size of the most games) and the driver (the other size, whose keys fall among the first's):
    every corner of both sizes equals the independent count, and no scratch file is left."""
    made = {}
    for size, count in ((19, 80), (9, 50)):
        folder = tmp_path / f"sgf{size}"
        folder.mkdir()
        made[size] = (make_games(folder, size, count, seed=size + 100), folder)
    path = str(tmp_path / "book.sqlite")
    with Book.open(path) as book:
        importer.import_paths(book, [str(folder) for _games, folder in made.values()], workers=0)
        assert corner_build.update(book, progress=None, prune=1)
    assert not [name for name in os.listdir(tmp_path) if "scratch" in name]
    rng = np.random.default_rng(4)
    with Book.open(path, readonly=True) as book:
        for size, (games, _folder) in made.items():
            table = count_games(games, size)
            for board, mover in positions(games, size, rng, 40):
                assert got(corners.of_book(book, board, mover)) == expected(table, board, mover, prune=1), size


def test_a_build_sweeps_the_scratch_files_of_builds_killed_before_it_and_leaves_a_running_ones(tmp_path):
    """A build killed while it wrote leaves its scratch file (named for its process); the next
    build beside the book removes it, and leaves the file of a build whose process still runs."""
    folder = tmp_path / "sgf"
    folder.mkdir()
    make_games(folder, 19, 20, seed=5)
    path = str(tmp_path / "book.sqlite")
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True, check=True)
        dead, live = f"book.sqlite-corner-{int(gone.stdout)}.scratch", f"book.sqlite-corner-{running.pid}.scratch"
        for name in (dead, live):
            (tmp_path / name).write_bytes(b"a killed build's pages")
        with Book.open(path) as book:
            importer.import_paths(book, [str(folder)], workers=0)
            assert corner_build.update(book, progress=None)
        assert not (tmp_path / dead).exists() and (tmp_path / live).exists()
        assert not [n for n in os.listdir(tmp_path) if "scratch" in n and n != live]  # its own removed too
    finally:
        running.kill()
        running.wait()


@pytest.mark.parametrize("prune, threads", [(2, 1), (3, 1), (2, 3), (1, 3)])
def test_a_tiny_filter_many_walks_and_threads_count_the_same(corner_book, tmp_path, monkeypatch, prune, threads):
    """The filter only lets records through (a record played twice always has its twice bit):
    a filter of 64 words a thread, where most once-played records share a bit with another,
    tally tables that may hold no more than one key range (a count walk for each of the 64), 3
    threads each owning a third of the key space, the games in 7 chunks and each thread's
    records placed a game at a time (a thread's rows sometimes past the room it had to order
    them) must still give the independent count, pruned."""
    path, games, size, table = corner_book
    monkeypatch.setattr(corner_build, "FILTER_BITS", 0)
    monkeypatch.setattr(corner_build, "TABLE_BYTES", 1)
    monkeypatch.setattr(corner_build, "CHUNKS", 7)
    monkeypatch.setattr(corner_build, "THREADS", threads)
    monkeypatch.setattr(corner_build, "GAMES_A_THREAD", 1)
    monkeypatch.setattr(corner_build, "BUFFER_RECORDS", 1)  # room for one game's records: placed a game at a time
    monkeypatch.setattr(corner_build, "ORDER_ROOM", 0.05)
    shorts = []
    place = corner_build.place

    def recorded(*args):
        placed = place(*args)
        shorts.append(placed[2])
        return placed

    monkeypatch.setattr(corner_build, "place", recorded)
    copy = shutil.copytree(os.path.dirname(path), tmp_path / "copy")  # the book with its segment files
    rng = np.random.default_rng(3)
    with Book.open(str(copy / os.path.basename(path))) as book:
        with book.writing() as conn:  # built again even at the fixture's own settings
            conn.exec_driver_sql(f"DROP TABLE {corners.TABLE}")
        assert corner_build.update(book, progress=None, prune=prune)
        for board, mover in positions(games, size, rng, 40):
            assert got(corners.of_book(book, board, mover)) == expected(table, board, mover, prune=prune)
    if threads > 1:  # a thread's share of a round's rows past the room it had: given more, placed again
        assert any(shorts)


@pytest.mark.parametrize("filter_bits", [4, 1, 0])
def test_every_row_through_the_filters_equals_the_rows_counted_without(corner_book, monkeypatch, filter_bits):
    """The whole table, pruned at 2 through the seen and twice filters, equals the table of every
    record counted without filters (prune 1), pruned afterwards by ``_pruned_at``: the mark walk
    sees no key's own record, whose twice bit its continuations set (also when a continuation's
    bit was already set by another record's), so no key's own row may go missing or come out
    short.  Fewer filter bits crowd more records into each bit."""
    path, _games, size, _table = corner_book
    with Book.open(path, readonly=True) as book:
        loaded = index_map.load(book, size)
    chosen = np.arange(len(loaded.game_ids), dtype=np.int64)

    def rows(prune):
        return [(int(k), int(m), int(p), int(w), int(g)) for part in corner_build.records(
            loaded.events, loaded.offsets, chosen, loaded.winners, size, prune=prune)
            for k, m, p, w, g in zip(part[0].view(np.int64), *part[1:])]

    expected_rows = [tuple(int(x) for x in row) for row in corner_build._pruned_at(rows(1), 2)]
    assert sum(m == corners.ALL for _k, m, *_ in expected_rows) > 10 and len(expected_rows) > 100
    monkeypatch.setattr(corner_build, "FILTER_BITS", filter_bits)
    assert rows(2) == expected_rows


def test_a_keys_own_row_is_counted_when_its_continuations_bit_was_set_by_another_record():
    """The mark walk sees no key's own record: a continuation seen again sets its key's twice bit,
    also when its own twice bit was already set by another record sharing it (a filter of one
    word: 64 bits).  Key K: move a in two games, move b in one, so K's own row (played 3) says
    what its kept continuation does not; record Y, seen twice first, shares a's bit."""
    r = corner_build.RANGES // 2 + 5
    top = ((r ^ (corner_build.RANGES >> 1)) << (64 - corner_build.RANGE_BITS)) % 2 ** 64
    key_k = top | 0x1234_5678_9ABC
    a, b = 40, 41
    bits = 6  # one word a range
    home = lambda key, move: corner_build._bit(np.uint64(key), np.uint64(corner_build._mixed(np.uint64(key), move)),
                                               bits)
    y_key, y_move = next((top | n * 7919, m) for n in range(1, 500) for m in range(60)
                         if home(top | n * 7919, m) == home(key_k, a)
                         and home(top | n * 7919, corners.ALL) != home(key_k, corners.ALL)
                         and home(key_k, corners.ALL) not in (home(key_k, a), home(key_k, b)))
    game = lambda g: g << corner_build.GAME
    records = [(y_key, y_move, game(0)), (y_key, y_move, game(1)), (key_k, a, game(2)), (key_k, a, game(3)),
               (key_k, b, game(4))]
    region = np.zeros((corner_build.RANGES, 2), dtype=np.int64)
    region[:, 0], region[:, 1] = np.arange(corner_build.RANGES), 1
    filters = np.zeros((corner_build.RANGES, 2), dtype=np.uint64)
    twice = np.zeros(corner_build.RANGES, dtype=np.int64)

    def placed(rows, mode, table, fills, runs):
        out = np.array([(k, (m + 2) | info) for k, m, info in rows], dtype=np.uint64)
        table, runs, short = corner_build.place(out[None], np.array([len(out)]), r, r + 1, mode, filters, region,
                                                twice, table, fills, runs, np.zeros_like(out), np.zeros_like(out))
        assert short == 0
        return table, runs

    placed(records, corner_build.MARK, np.zeros((1, corner_build.COLUMNS), dtype=np.uint64),
           np.zeros(1, dtype=np.int64), np.zeros(2, dtype=np.int64))
    table, runs = corner_build._laid_out(twice[r:r + 1])
    with_keys = [row for k, m, info in records for row in ((k, m, info), (k, corners.ALL, info))]
    table, runs = placed(with_keys, corner_build.TALLY, table, np.zeros(1, dtype=np.int64), runs)
    keys, moves, played, _wins, games = corner_build._ordered(table, runs, 2, 0, 1)
    of_k = [(int(m), int(p), int(g)) for k, m, p, g in zip(keys, moves, played, games) if int(k) == key_k]
    assert of_k == [(corners.ALL, 3, 3), (a, 2, 2)]


def test_the_progress_moves_through_every_walk_and_every_piece_written(corner_book, monkeypatch):
    """The corner book's progress climbs through the mark walk, each count walk's chunks and
    each piece of rows written, never back, and reaches every game only with the last piece:
    no step at the end holds the ordering and writing of every row (1.5 million games: a
    quarter of the time)."""
    path, games, size, _table = corner_book
    seen = []

    class Recorded:
        def __init__(self, label, total, stream=None):
            self.total = total

        def update(self, done):
            seen.append(done)

        def close(self):
            seen.append("closed")

    monkeypatch.setattr(corner_build, "Steps", Recorded)
    monkeypatch.setattr(corner_build, "PROGRESS_FROM", 0)
    monkeypatch.setattr(corner_build, "WRITE_ROWS", 40)
    monkeypatch.setattr(corner_build, "CHUNKS", 5)
    monkeypatch.setattr(corner_build, "THREADS", 2)
    monkeypatch.setattr(corner_build, "GAMES_A_THREAD", 1)
    with Book.open(path, readonly=True) as book:
        loaded = index_map.load(book, size)
        chosen = np.arange(len(loaded.game_ids), dtype=np.int64)
        pieces = [len(c[0]) for c in corner_build.records(loaded.events, loaded.offsets, chosen, loaded.winners,
                                                          size, prune=2, progress=object())]
    assert seen[-1] == "closed" and seen[-2] == len(games)
    done = seen[:-1]
    assert done == sorted(done) and done.count(len(games)) == 1  # climbs; every game only at the very end
    assert len(done) == 5 + 5 + len(pieces) and len(pieces) >= 4 and max(pieces) <= 40
    written = done[-len(pieces):]  # one step a piece, after the count walk's last chunk
    assert len(set(written)) == len(written) and written[0] > done[-len(pieces) - 1]


def test_a_book_without_corner_book_says_none(tmp_path):
    with Book.open(str(tmp_path / "empty.sqlite")) as book:
        assert corners.of_book(book, Board(19), BLACK) is None
        assert corners.corner_keys(Board(4), BLACK) == []


# --- the chooser --------------------------------------------------------------------------------

def rule_choice(table, board, mover, min_games):
    """The points the corner chooser must pick from, by its rule (policy best) on the count."""
    size = board.size
    exp = expected(table, board, mover, prune=1)
    last = corner_at(board.moves[-1][1], size, size // 2) if board.moves and board.moves[-1][0] != mover else -1

    def ok(points):
        return [p for p in points if board.legal_reason(mover, p) is None and not board.is_eye(mover, p)]

    def best(candidates):
        top = max((played for _, played in candidates), default=0)
        return [(points, played) for points, played in candidates if played == top]

    # the chooser weighs games (a game that played a move in two corners like this one: once)
    if last >= 0:
        moves, (_, tenuki), _ = exp[last]
        local = [(points, played) for points, (_, _, played) in moves.items() if played >= min_games and ok(points)]
        if local and (tenuki < min_games or max(p for _, p in local) >= tenuki):
            return best(local)
    pooled = [(points, played) for c, (moves, _, _) in enumerate(exp) if c != last
              for points, (_, _, played) in moves.items() if played >= min_games and ok(points)]
    return best(pooled)


def test_the_chooser_answers_in_the_corner_the_rule_says_in_all_8_orientations(corner_book):
    path, games, size, table = corner_book
    rng = np.random.default_rng(3)
    centre = xy_to_point(size // 2, size // 2, size)  # next to no corner point, the same in every orientation
    checked = 0
    while checked < 12:
        moves, _ = games[int(rng.integers(len(games)))]
        upto = int(rng.integers(1, len(moves)))
        if centre in {p for _, p in moves[:upto]}:
            continue
        base = Board(size)
        for colour, point in moves[:upto]:
            base.play(colour, point)
        mover = base.to_move
        want = rule_choice(table, base, mover, min_games=2)
        if len(want) != 1:  # no corner move, or a tie the policy may break either way
            continue
        checked += 1
        for t in range(8):
            board = Board(size)
            for colour, point in moves[:upto]:
                board.play(colour, coords.transform_point(t, point, size))
            board.set_stones(WHITE if mover == BLACK else BLACK, [centre])  # the whole board: out of book
            chooser = BookChooser(path, min_games=2, seed=t)
            choice = chooser.choose(board, mover)
            assert choice.move in {coords.transform_point(t, p, size) for p in want[0][0]}, (t, upto)
            assert choice.source == "corner book"


def eye_and_suicide_book(tmp_path, setup_colour):
    """Games from a setup: three stones around J17 (inside the top-left corner), Black to play
    J17 (3 games) or D16 (2 games), then different tails."""
    folder = tmp_path / ("eye" if setup_colour == BLACK else "suicide")
    folder.mkdir()
    v = lambda text: base.vertex_to_point(text, 19)  # noqa: E731
    setup = [(setup_colour, v(p)) for p in ("H17", "J18", "J16")]
    tails = ["Q4", "Q3", "R4", "P3", "O4"]
    for i, first in enumerate(["J17", "J17", "J17", "D16", "D16"]):
        moves = [(BLACK, v(first)), (WHITE, v(tails[i])), (BLACK, v("K4"))]
        (folder / f"g{i}.sgf").write_bytes(sgf_text(19, moves, setup=setup, result="B+R"))
    path = str(tmp_path / f"{folder.name}.sqlite")
    with Book.open(path) as book:
        importer.import_paths(book, [str(folder)], workers=0)
        corner_build.update(book, progress=None)
    board = Board(19)
    board.set_stones(setup_colour, [p for _, p in setup] + [v("K17")])  # K17: outside the corner
    return path, board


@pytest.mark.parametrize("setup_colour, reason", [(BLACK, "fills its own eye"), (WHITE, "suicide")])
def test_never_its_own_eye_never_an_illegal_move(tmp_path, setup_colour, reason):
    path, board = eye_and_suicide_book(tmp_path, setup_colour)
    j17, d16 = base.vertex_to_point("J17", 19), base.vertex_to_point("D16", 19)
    logged = []
    chooser = BookChooser(path, verbose=True, log=logged.append)
    found = chooser.corner_moves(board, BLACK)
    assert [(m.point, m.games) for m in found[0].moves] == [(j17, 3), (d16, 2)]  # the corner is in book
    assert chooser.next_moves(board, BLACK).moves == []  # the whole board is not
    choice = chooser.choose(board, BLACK)
    assert (choice.move, choice.source) == (d16, "corner book")
    assert any("J17 skipped" in line and reason in line for line in logged), logged
    assert choice.comment.startswith("corner book D16 (out of the whole-board book"), choice


def test_corners_out_of_book_fall_through_to_the_next_chooser(corner_book):
    path, games, size, table = corner_book
    board = Board(size)
    # stones in every corner that no game has in that shape: each corner is unknown
    for corner in range(4):
        board.set_stones(BLACK, [to_board(corner, 0, 0, size), to_board(corner, 1, 1, size)])
        board.set_stones(WHITE, [to_board(corner, 1, 0, size)])
    chooser = BookChooser(path, seed=1)
    assert all(not c.moves and not c.tenuki for c in chooser.corner_moves(board, BLACK))
    assert chooser.choose(board, BLACK) is None


def test_corner_until_and_switch_off(corner_book):
    path, games, size, table = corner_book
    moves, _ = games[0]
    board = Board(size)
    for colour, point in moves[:3]:
        board.play(colour, point)
    assert BookChooser(path, corner_until=4).corner_moves(board, board.to_move) is not None
    assert BookChooser(path, corner_until=3).corner_moves(board, board.to_move) is None  # move 4 is past 3
    assert BookChooser(path, corner_book=False).corner_moves(board, board.to_move) is None


def test_weighted_draws_follow_the_counts(tmp_path):
    path, board = eye_and_suicide_book(tmp_path, WHITE)
    # the games' corner, no K17, White's last move in it: J17 (3 games) and D16 (2 games) playable
    board = Board(19)
    board.set_stones(WHITE, [base.vertex_to_point(p, 19) for p in ("J18", "J16", "Q10")])
    board.play(WHITE, base.vertex_to_point("H17", 19))
    chooser = BookChooser(path, policy="weighted", seed=7)
    drawn = Counter(chooser.choose(board, BLACK).move for _ in range(2000))
    j17 = base.vertex_to_point("J17", 19)
    assert set(drawn) == {j17, base.vertex_to_point("D16", 19)}
    assert abs(drawn[j17] / 2000 - 0.6) < 0.04


def test_random_is_seeded(corner_book):
    path, games, size, _ = corner_book
    one = [BookChooser(path, policy="weighted", seed=9).choose(b, m)
           for b, m in positions(games, size, np.random.default_rng(4), 10)]
    two = [BookChooser(path, policy="weighted", seed=9).choose(b, m)
           for b, m in positions(games, size, np.random.default_rng(4), 10)]
    assert one == two


def test_a_statistics_book_carries_the_corner_book_above_its_threshold(corner_book, tmp_path):
    """The built-in book's way: write_statistics copies the continuations of >= N times."""
    from fuseki.book.builders.statbook import write_statistics
    from fuseki.book.storage.position_index.statistics_book import StatisticsTable

    path, games, size, table = corner_book
    out = str(tmp_path / "stats.sqlite")
    with Book.open(path) as full:
        write_statistics(full, out, 2, corner_min_games=3)
    rng = np.random.default_rng(5)
    with Book.open(out, readonly=True) as stats:
        assert isinstance(stats.index, StatisticsTable)
        for board, mover in positions(games, size, rng, 40):
            assert got(corners.of_book(stats, board, mover)) == expected(table, board, mover, prune=3)
        chooser = BookChooser(out, seed=1)
        board, mover = positions(games, size, np.random.default_rng(6), 1)[0]
        assert chooser.corner_moves(board, mover) is not None


def needed_by_hand(rows):
    """The rows of a corner book kept (``corner_build.needed_rows``'s rule, written again here):
    every continuation; a key's own row (move ``ALL``) only beside a continuation kept and with
    its games not its times, or its times not the sum of its continuations' kept."""
    by_key = {}
    for row in rows:
        by_key.setdefault(row[0], []).append(row)
    kept = []
    for group in by_key.values():
        own = [r for r in group if r[1] == corners.ALL]
        continuations = [r for r in group if r[1] != corners.ALL]
        if own and continuations and (own[0][4] != own[0][2] or own[0][2] != sum(r[2] for r in continuations)):
            kept.append(own[0])
        kept.extend(continuations)
    return kept


@pytest.mark.parametrize("ranges,least", [(1, 1), (5, 2), (40, 3)])
def test_a_tables_rows_come_out_ordered_and_needed_a_slice_of_ranges_at_a_time(ranges, least):
    """``_ordered`` on a tally table of ``ranges`` key ranges (runs of slots holding keys of
    their own range, in no order, with empty slots, keys of several moves and their own rows):
    the rows played at least ``least`` times and needed (the rule written again above), ordered
    as ``np.lexsort`` orders them by signed key then move; the same rows whether the ranges are
    taken all at once or in ``_slices`` of a few entries."""
    rng = np.random.default_rng(ranges)
    lo = corner_build.RANGES // 2 - ranges // 2  # both signs of the keys when there are several ranges
    top = lambda r: ((r ^ (corner_build.RANGES >> 1)) << (64 - corner_build.RANGE_BITS)) % 2 ** 64
    table_rows, sizes = [], []
    for r in range(lo, lo + ranges):
        entries = []
        for _key in range(int(rng.integers(0, 30))):
            key = top(r) | int(rng.integers(0, 1 << 40))
            moves = sorted(set(rng.integers(-1, 60, size=int(rng.integers(0, 5))).tolist()))
            counts = [(int(rng.integers(1, 6)), int(rng.integers(0, 3))) for _ in moves]
            played = sum(p for p, _ in counts) + int(rng.integers(0, 2))
            games = played - int(rng.integers(0, 2))
            entries.append((key, corners.ALL, played, min(played, 2), max(games, 1)))
            entries.extend((key, m, p, min(p, w), max(p - 1, 1)) for m, (p, w) in zip(moves, counts))
        size = 1 << max((2 * len(entries)).bit_length(), 4)
        slots = [(0, 0, 0, 0, 0)] * size
        for entry, slot in zip(entries, rng.permutation(size)):
            slots[slot] = entry
        table_rows.extend(slots)
        sizes.append(size)
        assert all(corner_build.key_range(np.uint64(e[0])) == r for e in entries)
    table = np.array([(k, m % 2 ** 64, p, w, g) for k, m, p, w, g in table_rows], dtype=np.uint64)
    runs = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    fills = np.array([int((table[a:b, corner_build.PLAYED] > 0).sum()) for a, b in zip(runs, runs[1:])])

    signed = lambda k: k - 2 ** 64 if k >= 2 ** 63 else k
    played_enough = [(signed(int(k)), int(np.int64(m)), int(p), int(w), int(g))
                     for k, m, p, w, g in table if p >= least]
    order = np.lexsort(([r[1] for r in played_enough], [r[0] for r in played_enough]))
    expected = needed_by_hand([played_enough[i] for i in order]) if len(order) else []
    expected = sorted(expected, key=lambda r: (r[0], r[1]))

    def rows_of(columns):  # (keys, moves, played, wins, games)
        return [(signed(int(k)), int(m), int(p), int(w), int(g)) for k, m, p, w, g in zip(*columns)]

    assert rows_of(corner_build._ordered(table, runs, least, 0, ranges)) == expected
    slices = corner_build._slices(fills, 7)
    assert [a for a, _ in slices] == [0] + [b for _, b in slices[:-1]] and slices[-1][1] == ranges
    assert sum((rows_of(corner_build._ordered(table, runs, least, a, b)) for a, b in slices), []) == expected
    if ranges > 1:
        assert len(slices) > 1 and any(r[1] == corners.ALL for r in expected) \
            and any(r[1] != corners.ALL for r in expected)


@pytest.mark.parametrize("crowded", [1, 3])
def test_placing_records_counts_them_as_a_counter_does_while_runs_grow(crowded):
    """``place`` without filters, on gathered rows crowded into ``crowded`` of 6 key ranges (as
    the least of two readings crowds the small keys): every run starts at 16 slots and must be
    laid out again many times, some ranges growing and others not; the counts (played, wins,
    games: the distinct games of a record's rows, which come in the games' order, a record often
    several times a game) equal a count written here over the same rows, placed in 7 batches."""
    rng = np.random.default_rng(crowded)
    lo, hi = 2040, 2046
    top = lambda r: np.uint64(((r ^ (corner_build.RANGES >> 1)) << (64 - corner_build.RANGE_BITS)) % 2 ** 64)
    ranges = rng.choice(np.arange(lo, lo + crowded), size=6000).tolist() + list(range(lo, hi)) * 3
    spread = lambda n: (n * 0x9E3779B97F4A7C15) % 2 ** (64 - corner_build.RANGE_BITS)  # every bit below the range's
    keys = np.array([int(top(r)) | spread(int(rng.integers(0, 400))) for r in ranges], dtype=np.uint64)
    moves = rng.integers(-2, 40, size=len(keys))
    won = rng.integers(0, 2, size=len(keys))
    game = np.sort(rng.integers(0, 900, size=len(keys)))  # 900 games: each record in a game or several
    assert all(corner_build.key_range(k) == r for k, r in zip(keys, ranges))
    rows = np.zeros((len(keys), 2), dtype=np.uint64)
    rows[:, 0] = keys
    rows[:, 1] = ((moves + 2) | (won << corner_build.WON) | (game << corner_build.GAME)).astype(np.uint64)
    table, runs = corner_build._laid_out(np.zeros(hi - lo, dtype=np.int64))
    fills = np.zeros(hi - lo, dtype=np.int64)
    no_filter = np.zeros((0, 2), dtype=np.uint64)
    for part in np.array_split(np.arange(len(rows)), 7):
        out = rows[part].copy()
        table, runs, short = corner_build.place(out[None], np.array([len(out)]), lo, hi, corner_build.TALLY,
                                                no_filter, np.zeros((corner_build.RANGES, 2), dtype=np.int64),
                                                np.zeros(corner_build.RANGES, dtype=np.int64), table, fills, runs,
                                                np.zeros_like(out), np.zeros_like(out))
        assert short == 0
    expected, seen_in = {}, {}
    for k, m, w, g in zip(keys.tolist(), moves.tolist(), won.tolist(), game.tolist()):
        played, wins, _games = expected.get((k, m), (0, 0, 0))
        seen_in.setdefault((k, m), set()).add(g)
        expected[(k, m)] = (played + 1, wins + w, len(seen_in[(k, m)]))
    assert any(p > g for p, _w, g in expected.values())  # some record twice in a game
    used = table[table[:, corner_build.PLAYED] > 0]
    games_of = lambda g: int(g) & ((1 << corner_build.LAST_GAME) - 1)
    assert {(int(k), int(np.int64(m))): (int(p), int(w), games_of(g)) for k, m, p, w, g in used} == expected
    sizes = np.diff(runs)
    assert fills.sum() == len(expected)
    assert sizes.max() >= 512 and (4 * fills <= 3 * sizes).all()  # grown, and no run past three quarters
    assert (sizes % corner_build.SLOT_GROUP == 0).all()
