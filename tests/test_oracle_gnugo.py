"""Rules oracle: seeded random games played on fuseki's board and on a real GNU Go.

After every move both boards hold the same stones (GNU Go's ``list_stones``),
every move fuseki generates is legal for GNU Go, and arbitrary points (often
occupied, ko or suicide) are refused by both or accepted by both.  GNU Go runs
with its defaults (simple ko, suicide forbidden), which are fuseki's; further
runs pair ``allow_suicide=True`` with ``--allow-all-suicide`` and
``superko=True`` with ``--positional-superko``.

Skipped only when no ``gnugo`` binary is found (PATH, then Debian's /usr/games), and
never under ``FUSEKI_REQUIRE_SERVICES=1`` (CI).
"""


import numpy as np
import pytest

from fuseki.engine.core import base
from fuseki.engine.core.base import BLACK, PASS, WHITE, opponent
from fuseki.engine.core.board import Board
from fuseki.engine.players.gtp_client import GtpClient, GtpFailure

from conftest import GNUGO, needs_gnugo

# Skipped without gnugo, except in CI (FUSEKI_REQUIRE_SERVICES=1), where a missing oracle must fail.
pytestmark = [pytest.mark.slow, needs_gnugo]

NAME = {BLACK: "black", WHITE: "white"}


class GnuGo:
    """A GNU Go process spoken to in GTP through the project's client, one command at a time."""

    def __init__(self, *options):
        self.client = GtpClient([GNUGO, "--mode", "gtp", "--level", "0", *options], timeout=60)

    def send(self, command):
        """(success, answer) for one command: a ``?`` answer is a result here, not an error."""
        try:
            return True, self.client.send(command)
        except GtpFailure as failure:
            return False, failure.message

    def ok(self, command):
        success, answer = self.send(command)
        assert success, f"gnugo refused '{command}': {answer}"
        return answer

    def stones(self, color, size):
        return {base.vertex_to_point(v, size) for v in self.ok(f"list_stones {NAME[color]}").split()}

    def close(self):
        self.client.close()


@pytest.fixture(scope="module")
def gnugo():
    engine = GnuGo()
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def gnugo_superko():
    engine = GnuGo("--positional-superko")
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def gnugo_suicide():
    engine = GnuGo("--allow-all-suicide")
    yield engine
    engine.close()


def assert_same_board(board, engine):
    for color in (BLACK, WHITE):
        assert set(board.stones(color)) == engine.stones(color, board.size), NAME[color]


def random_game(board, engine, rng, max_moves, stats):
    """Play one random game on both boards; return the number of moves played."""
    size = board.size
    engine.ok(f"boardsize {size}")
    engine.ok("clear_board")
    points = base.board_points(size)
    color = BLACK
    for _ in range(max_moves):
        roll = rng.random()
        if roll < 0.3:  # an arbitrary point: occupied, ko, suicide or legal
            point = int(points[rng.integers(len(points))])
            if board.ko_point is not None and rng.random() < 0.5:
                point = board.ko_point
            reason = board.legal_reason(color, point)
            success, answer = engine.send(f"play {NAME[color]} {base.point_to_vertex(point, size)}")
            assert success == (reason is None), (board.ascii(), base.point_to_vertex(point, size), reason, answer)
            stats[reason] = stats.get(reason, 0) + 1
            if not success:
                assert answer == "illegal move"
                continue
            board.play(color, point)
        else:
            point = PASS if roll < 0.32 else board.random_move(color, rng)
            engine.ok(f"play {NAME[color]} {base.point_to_vertex(point, size)}")
            board.play(color, point)
            if point == PASS and len(board.moves) > 1 and board.moves[-2][1] == PASS and roll >= 0.32:
                break
        assert_same_board(board, engine)
        color = opponent(color)
    for color in (BLACK, WHITE):
        assert board.captures[color] == int(engine.ok(f"captures {NAME[color]}"))
    return len(board.moves)


@pytest.mark.parametrize("size, games, seed", [(9, 150, 9), (19, 25, 19), (5, 200, 5), (13, 20, 13)])
def test_random_games_agree_with_gnugo(gnugo, size, games, seed):
    rng = np.random.default_rng(seed)
    stats = {}
    for _ in range(games):
        random_game(Board(size), gnugo, rng, 3 * size * size, stats)
    assert stats.get("occupied") and stats.get(None)
    if size <= 9:  # the oracle only means something if it met every kind of illegal move
        assert stats.get("ko") and stats.get("suicide"), stats


@pytest.mark.parametrize("size, games, seed", [(5, 60, 55), (9, 30, 99)])
def test_suicide_allowed_agrees_with_gnugo(gnugo_suicide, size, games, seed):
    rng = np.random.default_rng(seed)
    stats = {}
    for _ in range(games):
        random_game(Board(size, allow_suicide=True), gnugo_suicide, rng, 3 * size * size, stats)
    assert "suicide" not in stats and stats.get("ko") and stats.get("occupied")


@pytest.mark.parametrize("size, games, seed", [(5, 100, 555), (9, 20, 999)])
def test_positional_superko_agrees_with_gnugo(gnugo_superko, size, games, seed):
    rng = np.random.default_rng(seed)
    stats = {}
    for _ in range(games):
        random_game(Board(size, superko=True), gnugo_superko, rng, 3 * size * size, stats)
    assert stats.get("ko") and stats.get("suicide") and stats.get("occupied")


# Three kos: Black can take the top and bottom ones, White the middle one (as in test_board.py).
TRIPLE_KO = """
    .XO......
    XO.O.....
    .XO......
    .XO......
    X.XO.....
    .XO......
    .XO......
    XO.O.....
    .XO......"""
TRIPLE_KO_CYCLE = "B C8 W B5 B C2 W B8 B C5 W B2".split()


@pytest.mark.parametrize("superko", [False, True])
def test_triple_ko_cycle_agrees_with_gnugo(gnugo, gnugo_superko, superko):
    engine = gnugo_superko if superko else gnugo
    board = Board.from_ascii(TRIPLE_KO, superko=superko)
    engine.ok("boardsize 9")
    engine.ok("clear_board")
    for color in (BLACK, WHITE):
        for p in board.stones(color):
            engine.ok(f"play {NAME[color]} {base.point_to_vertex(p, 9)}")
    assert_same_board(board, engine)
    answers = []
    for c, v in zip(TRIPLE_KO_CYCLE[::2], TRIPLE_KO_CYCLE[1::2]):
        color = BLACK if c == "B" else WHITE
        success, _ = engine.send(f"play {NAME[color]} {v}")
        assert success == board.is_legal(color, base.vertex_to_point(v, 9))
        answers.append(success)
        if success:
            board.play(color, base.vertex_to_point(v, 9))
        assert_same_board(board, engine)
    assert answers == [True] * 5 + [not superko]
