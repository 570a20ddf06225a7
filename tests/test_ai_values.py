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

import pytest
from sqlalchemy import create_engine

from fuseki.book.storage import ai_values
from fuseki.book.storage.ai_values import AiSettings
from fuseki.engine.core import coords
from fuseki.engine.core.base import BLACK, WHITE
from fuseki.engine.core.board import Board

SIZE = 19
SETTINGS = AiSettings(rules="japanese", komi=6.5, network="kata1-b18c384nbt-test", visits=8)


def stones_of(base: dict[tuple[int, int], int], n: int) -> dict[tuple[int, int], int]:
    return {coords.transform_xy(n, x, y, SIZE): c for (x, y), c in base.items()}


def board_of(stones: dict[tuple[int, int], int]) -> Board:
    board = Board(SIZE)
    for color in (BLACK, WHITE):
        board.set_stones(color, [coords.xy_to_point(x, y, SIZE) for (x, y), c in stones.items() if c == color])
    return board


def slow_expected(base, stored_in: int, read_in: int, moves):
    """What a read in orientation ``read_in`` must give for ``moves`` stored in ``stored_in``."""
    board = stones_of(base, read_in)
    # symmetries of the board as read: those mapping its stone set onto itself
    own = [s for s in range(8) if stones_of(board, s) == board]
    out, seen = [], set()
    for point, *values in moves:
        if point == coords.PASS:
            orbit = (coords.PASS,)
        else:
            x, y = coords.point_to_xy(point, SIZE)
            bx, by = coords.transform_xy(coords.INVERSE[stored_in], x, y, SIZE)
            rx, ry = coords.transform_xy(read_in, bx, by, SIZE)
            orbit = tuple(sorted({coords.xy_to_point(*coords.transform_xy(s, rx, ry, SIZE), SIZE) for s in own}))
        if orbit not in seen:
            seen.add(orbit)
            out.append((orbit, *values))
    return out


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
    base = POSITIONS[name]
    rng = random.Random(name)
    empty_points = [coords.xy_to_point(x, y, SIZE) for y in range(SIZE) for x in range(SIZE)]
    for stored_in in range(8):
        stored_board = stones_of(base, stored_in)
        free = [p for p in empty_points if coords.point_to_xy(p, SIZE) not in stored_board]
        chosen = rng.sample(free, 40) + [coords.PASS]
        moves = [(p, 100 - i, rng.random(), rng.uniform(-10, 10), i * 0.25, rng.random())
                 for i, p in enumerate(chosen)]
        side = WHITE if len(base) % 2 else BLACK
        keys = board_of(stored_board).symmetric_keys(side)
        ai_values.put(conn, keys, SIZE, SETTINGS, (321, 0.45, -1.5), moves)
        for read_in in range(8):
            got = ai_values.get(conn, board_of(stones_of(base, read_in)).symmetric_keys(side), SIZE, SETTINGS)
            assert (got.visits, got.winrate, got.score_lead) == (321, pytest.approx(0.45), pytest.approx(-1.5))
            expected = slow_expected(base, stored_in, read_in, moves)
            assert [m.points for m in got.moves] == [e[0] for e in expected], (stored_in, read_in)
            for m, e in zip(got.moves, expected):
                assert m.point == e[0][0]
                assert (m.visits, m.winrate, m.score_lead, m.loss, m.prior) == pytest.approx(e[1:], abs=1e-5)


def test_settings_key_the_values_and_a_second_put_replaces(conn):
    keys = board_of({(3, 3): BLACK}).symmetric_keys(WHITE)
    move = (coords.xy_to_point(15, 3, SIZE), 9, 0.5, 0.0, 0.0, 0.2)
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
