"""The AI value cache against an independent slow implementation.

Values stored from one orientation of a position and read from each of the 8 must land on
the points the slow way computes: transform the (x, y) of each point with
``coords.transform_xy`` from the storing orientation back to the base position and on to
the reading one, and merge the points that a symmetry *of the board as read* (found by
comparing stone sets, no keys) maps onto each other, keeping the best-ranked one.
Positions with symmetry (the empty board, a lone tengen stone, mirrored pairs) are where a
mistake would hide.
"""

from __future__ import annotations

import random
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import create_engine

from fuseki.book.queries import ai_values
from fuseki.book.queries.ai_values import AiSettings
from fuseki.engine.core import base, coords, zobrist
from fuseki.engine.core.base import BLACK, WHITE
from fuseki.engine.core.board import Board

SIZE = 19
SETTINGS = AiSettings(rules="japanese", komi=6.5, network="kata1-b18c384nbt-test", visits=8)


def stones_of(position: dict[tuple[int, int], int], n: int) -> dict[tuple[int, int], int]:
    return {coords.transform_xy(n, x, y, SIZE): c for (x, y), c in position.items()}


def board_of(stones: dict[tuple[int, int], int]) -> Board:
    board = Board(SIZE)
    for color in (BLACK, WHITE):
        board.set_stones(color, [base.xy_to_point(x, y, SIZE) for (x, y), c in stones.items() if c == color])
    return board


def slow_expected(position, stored_in: int, read_in: int, moves, lines):
    """What a read in orientation ``read_in`` must give for ``moves`` (and their ``lines``)
    stored in ``stored_in``: (orbit, values..., line) in the place of the orbit's first move,
    with the values of its most visited one (twins on a symmetric board are one move); the
    loss the best lead among the orbits' values of 100+ visits (of all, when none has 100)
    minus the move's, at least 0; the line turned as the board, then by the board's own
    symmetry that takes the move to the orbit's first point (the lines, when several do)."""
    board = stones_of(position, read_in)
    # symmetries of the board as read: those mapping its stone set onto itself
    own = [s for s in range(8) if stones_of(board, s) == board]

    def as_read(point: int) -> tuple[int, int] | None:
        if point == base.PASS:
            return None
        x, y = base.point_to_xy(point, SIZE)
        bx, by = coords.transform_xy(coords.INVERSE[stored_in], x, y, SIZE)
        return coords.transform_xy(read_in, bx, by, SIZE)

    def turned(s: int, point: int) -> int:
        xy = as_read(point)
        return base.PASS if xy is None else base.xy_to_point(*coords.transform_xy(s, *xy, SIZE), SIZE)

    places: dict[tuple, int] = {}
    chosen: list = []
    for (point, visits, winrate, lead, _loss, prior), line in zip(moves, lines):
        if point == base.PASS:
            orbit, turns = (base.PASS,), own
        else:
            orbit = tuple(sorted({turned(s, point) for s in own}))
            turns = [s for s in own if turned(s, point) == orbit[0]]
        # a move the board's own symmetry leaves in place has as many equivalent lines
        entry = [orbit, visits, winrate, lead, None, prior, {tuple(turned(s, p) for p in line) for s in turns}]
        if orbit not in places:
            places[orbit] = len(chosen)
            chosen.append(entry)
        elif visits > chosen[places[orbit]][1]:
            chosen[places[orbit]] = entry
    deep = [e for e in chosen if e[1] >= 100] or chosen
    best = max(e[3] for e in deep)
    return [tuple(e[:4]) + (max(0.0, best - e[3]),) + tuple(e[5:]) for e in chosen]


POSITIONS = {
    "empty": {},
    "tengen": {(9, 9): BLACK},
    "mirrored": {(3, 3): BLACK, (15, 15): BLACK, (3, 15): WHITE, (15, 3): WHITE},
    "diagonal": {(3, 3): BLACK, (15, 15): WHITE},
    "irregular": {(15, 3): BLACK, (3, 2): WHITE, (16, 15): BLACK, (2, 14): WHITE, (9, 3): BLACK},
}


@pytest.fixture
def conn():
    engine = create_engine("sqlite://")
    with engine.begin() as connection:
        ai_values.create(connection)
        yield connection
    engine.dispose()


@pytest.mark.parametrize("name", sorted(POSITIONS))
def test_values_read_in_any_orientation_land_on_the_right_points(conn, name):
    position = POSITIONS[name]
    rng = random.Random(name)
    empty_points = [base.xy_to_point(x, y, SIZE) for y in range(SIZE) for x in range(SIZE)]
    for stored_in in range(8):
        stored_board = stones_of(position, stored_in)
        free = [p for p in empty_points if base.point_to_xy(p, SIZE) not in stored_board]
        chosen = rng.sample(free, 40) + [base.PASS]
        # leads and visits in random order (a later move may lead by more, a twin be searched deeper)
        moves = [(p, rng.choice((1, 7, 99, 100, 150, 400)), rng.random(), rng.uniform(-10, 10), i * 0.25, rng.random())
                 for i, p in enumerate(chosen)]
        # each move's line: the move, then up to 5 other free points, a pass now and then
        lines = [[p] + rng.sample(free, rng.randint(0, 5)) + ([base.PASS] if rng.random() < 0.2 else [])
                 for p in chosen]
        side = WHITE if len(position) % 2 else BLACK
        keys = board_of(stored_board).symmetric_keys(side)
        ai_values.put(conn, keys, SIZE, SETTINGS, (321, 0.45, -1.5), moves, lines)
        for read_in in range(8):
            got = ai_values.get(conn, board_of(stones_of(position, read_in)).symmetric_keys(side), SIZE, SETTINGS)
            assert (got.visits, got.winrate, got.score_lead) == (321, pytest.approx(0.45), pytest.approx(-1.5))
            expected = slow_expected(position, stored_in, read_in, moves, lines)
            assert [m.points for m in got.moves] == [e[0] for e in expected], (stored_in, read_in)
            for m, e in zip(got.moves, expected):
                assert m.point == e[0][0] and m.pv in e[-1] and m.pv[0] == m.point
                assert (m.visits, m.winrate, m.score_lead, m.loss, m.prior) == pytest.approx(e[1:-1], abs=1e-4)
                assert m.loss >= 0


def test_settings_key_the_values_and_a_second_put_replaces(conn):
    keys = board_of({(3, 3): BLACK}).symmetric_keys(WHITE)
    move = (base.xy_to_point(15, 3, SIZE), 9, 0.5, 0.0, 0.0, 0.2)
    ai_values.put(conn, keys, SIZE, SETTINGS, (10, 0.5, 0.0), [move])
    for other in (AiSettings("chinese", 6.5, SETTINGS.network, 8), AiSettings("japanese", 7.5, SETTINGS.network, 8),
                  AiSettings("japanese", 6.5, "another-net", 8), AiSettings("japanese", 6.5, SETTINGS.network, 16)):
        assert ai_values.get(conn, keys, SIZE, other) is None
    assert ai_values.get(conn, board_of({(3, 3): BLACK}).symmetric_keys(BLACK), SIZE, SETTINGS) is None  # side
    ai_values.put(conn, keys, SIZE, SETTINGS, (20, 0.6, 1.0), [])
    again = ai_values.get(conn, keys, SIZE, SETTINGS)
    assert (again.visits, again.moves) == (20, ())


def test_komi_must_be_whole_or_half():
    with pytest.raises(ValueError, match="half"):
        AiSettings("japanese", 6.25, "net", 8).row_key()


def test_a_table_made_before_lines_is_read_without_them_and_given_the_column_when_written(tmp_path):
    """The read-only built-in book's file has no ``pvs`` column: it reads as no lines; a
    writable old table gets the column from ``create`` and then keeps lines."""
    old = tmp_path / "old.sqlite"
    with sqlite3.connect(old) as db:  # the table as made before lines were kept (the built-in book's)
        db.execute("CREATE TABLE ai_values (key BIGINT NOT NULL, rules VARCHAR(32) NOT NULL, komi_halves INTEGER "
                   "NOT NULL, network VARCHAR(200) NOT NULL, visits INTEGER NOT NULL, root_visits INTEGER NOT NULL, "
                   "root_winrate FLOAT NOT NULL, root_score_lead FLOAT NOT NULL, moves BLOB NOT NULL, PRIMARY KEY "
                   "(key, rules, komi_halves, network, visits)) WITHOUT ROWID")
    keys = board_of({(3, 3): BLACK}).symmetric_keys(WHITE)
    q4, r16 = base.xy_to_point(15, 3, SIZE), base.xy_to_point(16, 15, SIZE)
    moves = [(q4, 9, 0.5, 1.0, 0.0, 0.2), (r16, 3, 0.4, -0.5, 1.5, 0.1)]
    records = np.array(moves, dtype=ai_values.MOVE_DTYPE)
    records["point"] = ai_values.to_canonical(records["point"].tolist(), keys, SIZE)
    with sqlite3.connect(old) as db:
        db.execute("INSERT INTO ai_values VALUES (?, 'japanese', 13, ?, 8, 10, 0.5, 1.0, ?)",
                   (zobrist.to_signed(min(keys)), SETTINGS.network, records.tobytes()))
    (tmp_path / "ro").mkdir()
    shutil.copy(old, tmp_path / "ro" / "old.sqlite")
    (tmp_path / "ro" / "old.sqlite").chmod(0o444)
    readonly = create_engine(f"sqlite:///file:{tmp_path / 'ro' / 'old.sqlite'}?mode=ro&uri=true")
    with readonly.connect() as conn:
        got = ai_values.get(conn, keys, SIZE, SETTINGS)
        best = ai_values.best(conn, keys, SIZE, "japanese", 6.5)
    readonly.dispose()
    assert [(m.point, m.pv, m.loss) for m in got.moves] == [(q4, (), 0.0), (r16, (), 1.5)]
    assert best.moves == got.moves
    writable = create_engine(f"sqlite:///{old}")
    with writable.begin() as conn:
        ai_values.create(conn)  # adds the column
        ai_values.merge_moves(conn, keys, SIZE, SETTINGS, (0, 0, 0), [(r16, 8, 0.45, 0.25, 0.0, 0.1)], [[r16, q4]])
    with writable.connect() as conn:
        got = ai_values.get(conn, keys, SIZE, SETTINGS)
    writable.dispose()
    # the forced move replaced the shallow one in its place; the root kept; the old move has no line
    assert [(m.point, m.visits, m.pv, m.loss) for m in got.moves] == [(q4, 9, (), 0.0), (r16, 8, (r16, q4), 0.75)]
    assert (got.visits, got.score_lead) == (10, 1.0)


def test_copy_goes_between_old_and_new_tables_and_more_moves_replace_fewer(tmp_path):
    """``copy`` from a table without ``pvs`` into a new one and back; a source row of the same
    settings with more moves (forced moves added) replaces the target's, one with fewer not."""
    keys = board_of({(3, 3): BLACK, (9, 2): WHITE}).symmetric_keys(BLACK)  # no symmetry: points as put
    q4, r16, c3 = (base.xy_to_point(x, y, SIZE) for x, y in ((15, 3), (16, 15), (2, 16)))

    def engine(name: str):
        db = create_engine(f"sqlite:///{tmp_path / name}")
        return db

    new, builtin = engine("new.sqlite"), engine("builtin.sqlite")
    with sqlite3.connect(tmp_path / "builtin.sqlite") as db:  # an old table, as the built-in book's
        db.execute("CREATE TABLE ai_values (key BIGINT NOT NULL, rules VARCHAR(32) NOT NULL, komi_halves INTEGER "
                   "NOT NULL, network VARCHAR(200) NOT NULL, visits INTEGER NOT NULL, root_visits INTEGER NOT NULL, "
                   "root_winrate FLOAT NOT NULL, root_score_lead FLOAT NOT NULL, moves BLOB NOT NULL, PRIMARY KEY "
                   "(key, rules, komi_halves, network, visits)) WITHOUT ROWID")
    with new.begin() as conn:
        ai_values.create(conn)
        ai_values.put(conn, keys, SIZE, SETTINGS, (9, 0.5, 1.0), [(q4, 9, 0.5, 1.0, 0.0, 0.2)], [[q4, r16]])
    with new.connect() as read, builtin.begin() as write:  # new -> old: the old gets the column
        assert ai_values.copy(read, write) == (1, 1)
    with builtin.connect() as conn:
        assert [m.pv for m in ai_values.get(conn, keys, SIZE, SETTINGS).moves] == [(q4, r16)]
    with new.begin() as conn:  # a forced move added to the source's row: it replaces the target's
        ai_values.merge_moves(conn, keys, SIZE, SETTINGS, (0, 0, 0), [(c3, 9, 0.3, -2.0, 0.0, 0.01)], [[c3]])
    with new.connect() as read, builtin.begin() as write:
        assert ai_values.copy(read, write) == (1, 0)
    with builtin.connect() as conn:
        got = ai_values.get(conn, keys, SIZE, SETTINGS)
        assert [(m.point, m.pv, m.loss) for m in got.moves] == [(q4, (q4, r16), 0.0), (c3, (c3,), 3.0)]
    with new.begin() as conn:  # c3 searched again with the move forced (as many moves, more visits): replaces
        ai_values.merge_moves(conn, keys, SIZE, SETTINGS, (0, 0, 0), [(c3, 400, 0.4, 0.5, 0.0, 0.01)], [[c3, q4]])
    with new.connect() as read, builtin.begin() as write:
        assert ai_values.copy(read, write) == (1, 0)
    with builtin.connect() as conn:
        assert ai_values.get(conn, keys, SIZE, SETTINGS).move(c3).visits == 400
    with new.begin() as conn:  # as many moves, fewer visits: the target's row stays
        ai_values.merge_moves(conn, keys, SIZE, SETTINGS, (0, 0, 0), [(c3, 3, 0.4, 0.5, 0.0, 0.01)], [[c3]])
    with new.connect() as read, builtin.begin() as write:
        assert ai_values.copy(read, write) == (1, 0)
    with builtin.connect() as conn:
        assert ai_values.get(conn, keys, SIZE, SETTINGS).move(c3).visits == 400
    with new.begin() as conn:  # fewer moves in the source: the target's row stays
        ai_values.put(conn, keys, SIZE, SETTINGS, (9, 0.5, 1.0), [], [])
    with new.connect() as read, builtin.begin() as write:
        ai_values.copy(read, write)
    with builtin.connect() as conn:
        assert len(ai_values.get(conn, keys, SIZE, SETTINGS).moves) == 2
    old = engine("old-source.sqlite")  # old -> new: rows without lines
    with sqlite3.connect(tmp_path / "old-source.sqlite") as db, sqlite3.connect(tmp_path / "builtin.sqlite") as src:
        db.execute("CREATE TABLE ai_values (key BIGINT NOT NULL, rules VARCHAR(32) NOT NULL, komi_halves INTEGER "
                   "NOT NULL, network VARCHAR(200) NOT NULL, visits INTEGER NOT NULL, root_visits INTEGER NOT NULL, "
                   "root_winrate FLOAT NOT NULL, root_score_lead FLOAT NOT NULL, moves BLOB NOT NULL, PRIMARY KEY "
                   "(key, rules, komi_halves, network, visits)) WITHOUT ROWID")
        row = src.execute("SELECT key, rules, komi_halves, network, 16, root_visits, root_winrate, root_score_lead, "
                          "moves FROM ai_values").fetchone()
        db.execute("INSERT INTO ai_values VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
    target = engine("target.sqlite")
    with old.connect() as read, target.begin() as write:
        assert ai_values.copy(read, write) == (1, 1)
    with target.connect() as conn:
        deeper = ai_values.AiSettings("japanese", 6.5, SETTINGS.network, 16)
        assert [m.pv for m in ai_values.get(conn, keys, SIZE, deeper).moves] == [(), ()]
    for db in (new, builtin, old, target):
        db.dispose()


def test_the_built_in_books_file_reads_its_deep_values():
    """The shipped file, opened read-only: the empty board's values from a search of 400 visits
    or more (the H100 run of docs/katago.md), each move with its line (starting with the move
    itself, in the same orientation as the move's point), loss >= 0."""
    path = Path(__file__).resolve().parents[1] / "book" / "data" / "builtin.sqlite"
    db = create_engine(f"sqlite:///file:{path}?mode=ro&uri=true")
    board = Board(SIZE)
    with db.connect() as conn:
        got = ai_values.best(conn, board.symmetric_keys(BLACK), SIZE, "japanese", 6.5)
    db.dispose()
    assert got is not None and got.settings.visits >= 400 and got.visits >= 400
    assert got.moves and all(m.pv and m.pv[0] in m.points and m.loss >= 0 for m in got.moves)
    assert min(m.loss for m in got.moves) == 0
