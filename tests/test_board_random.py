"""The rules core, part two: eyes and random moves, symmetries and copies, colour-flipped
positions, the incremental chain state against a rebuilt board, area against a flood fill,
the playout kernel, and random games move by move against ``sgfmill.boards.Board`` (the
cases read as diagrams, captures, ko, suicide, undo and scoring, are in test_board.py)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sgfmill import boards as sgf_boards

from fuseki.engine.core import _kernels as K
from fuseki.engine.core import base, coords
from fuseki.engine.core.base import BLACK, EMPTY, PASS, WHITE, opponent
from fuseki.engine.core.board import Board, kernel_keys

from boards import KO, play, pt

# --- eyes and random moves ------------------------------------------------------------------

EYES = """
    .X.X.
    XXXXX
    XX.XX
    XXXXX
    .X.X."""


def test_is_eye():
    board = Board.from_ascii(EYES)
    for v in ("A5", "C5", "E5", "C3", "A1", "C1", "E1"):
        assert board.is_eye(BLACK, pt(board, v)), v
        assert not board.is_eye(WHITE, pt(board, v)), v
    edge_false = Board.from_ascii("""
        X.X..
        .XO..
        .....
        .....
        .....""")
    assert not edge_false.is_eye(BLACK, pt(edge_false, "B5"))
    edge_true = Board.from_ascii("""
        X.X..
        .X...
        .....
        .....
        .....""")
    assert edge_true.is_eye(BLACK, pt(edge_true, "B5"))
    centre_false = Board.from_ascii("""
        .....
        .OXO.
        .X.X.
        ..X..
        .....""")
    assert not centre_false.is_eye(BLACK, pt(centre_false, "C3"))
    centre_true = Board.from_ascii("""
        .....
        .OX..
        .X.X.
        ..X..
        .....""")
    assert centre_true.is_eye(BLACK, pt(centre_true, "C3"))


def test_random_move_passes_when_only_eyes_are_left():
    board = Board.from_ascii(EYES)
    for seed in range(20):
        rng = np.random.default_rng(seed)
        assert board.random_move(BLACK, rng) == PASS
        assert board.random_move(WHITE, rng) == PASS  # every point is suicide for White


def test_random_move_finds_the_only_playable_point():
    board = Board.from_ascii("""
        .X.X.
        XXXXX
        XX.XX
        XXXXX
        .XXO.""")
    for seed in range(20):
        assert board.random_move(BLACK, np.random.default_rng(seed)) == pt(board, "E1")


def test_random_move_never_fills_an_own_eye_and_is_legal():
    rng = np.random.default_rng(3)
    for _ in range(5):
        board = Board(9)
        color = BLACK
        for _ in range(1000):
            move = board.random_move(color, rng)
            if move == PASS and board.moves and board.moves[-1][1] == PASS:
                break
            if move != PASS:
                assert board.is_legal(color, move)
                assert not board.is_eye(color, move)
            board.play(color, move)
            color = opponent(color)
        # when both pass, every empty point is their own eye or illegal for each player
        assert board.moves[-1][1] == PASS
        for p in base.board_points(9):
            if board.color_at(p) == EMPTY:
                for c in (BLACK, WHITE):
                    assert board.is_eye(c, p) or not board.is_legal(c, p)


def test_random_move_is_reproducible_with_a_seeded_generator():
    def game(seed):
        board, rng, color = Board(9), np.random.default_rng(seed), BLACK
        for _ in range(60):
            board.play(color, board.random_move(color, rng))
            color = opponent(color)
        return board.moves

    assert game(11) == game(11)
    assert game(11) != game(12)


# --- symmetries, copies -------------------------------------------------------------------

def test_symmetric_keys_match_the_transformed_board():
    rng = np.random.default_rng(5)
    board = Board(9)
    for _ in range(40):
        board.play(board.to_move, board.random_move(board.to_move, rng))
    keys = board.symmetric_keys()
    assert keys[0] == board.position_key()
    assert len(set(keys)) == 8
    for n in range(8):
        image = Board(9)
        for color in (BLACK, WHITE):
            image.set_stones(color, [coords.transform_point(n, p, 9) for p in board.stones(color)])
        assert image.position_key(board.to_move) == keys[n], n
    assert board.symmetric_keys(WHITE) != board.symmetric_keys(BLACK)


def test_a_symmetric_position_has_equal_keys_for_its_symmetries():
    board = Board.from_ascii("""
        .....
        .X.X.
        ..O..
        .....
        .....""")
    keys = board.symmetric_keys()
    assert keys[1] == keys[0]  # left-right mirror
    assert len(set(keys)) == 4
    assert Board(19).symmetric_keys() == [Board(19).position_key()] * 8


def test_copy_is_independent():
    board = Board(9)
    play(board, "B E5 W E6")
    other = board.copy()
    play(other, "B D6")
    assert board.color_at(pt(board, "D6")) == EMPTY
    assert len(board.moves) == 2 and len(other.moves) == 3
    board.undo()
    assert other.color_at(pt(other, "E6")) == WHITE
    other.undo()
    other.undo()
    assert other.color_at(pt(other, "E6")) == EMPTY
    assert board.color_at(pt(board, "E5")) == BLACK


def test_copy_keeps_superko_history():
    board = Board.from_ascii(KO, superko=True)
    play(board, "W B4 B pass W pass")
    assert board.copy().legal_reason(BLACK, pt(board, "C4")) == "superko"


def test_colour_flipped_positions_mirror_legality_and_area():
    rng = np.random.default_rng(8)
    for _ in range(10):
        board = Board(7)
        for _ in range(int(rng.integers(10, 80))):
            board.play(board.to_move, board.random_move(board.to_move, rng))
        diagram = board.ascii()
        plain = Board.from_ascii(diagram)
        flipped = Board.from_ascii(diagram.translate(str.maketrans("XO", "OX")))
        black, white = plain.area()
        assert flipped.area() == (white, black)
        for p in base.board_points(7):
            for color in (BLACK, WHITE):
                assert plain.legal_reason(color, p) == flipped.legal_reason(opponent(color), p)
                assert plain.is_eye(color, p) == flipped.is_eye(opponent(color), p)
                if plain.is_legal(color, p):
                    a, b = plain.copy(), flipped.copy()
                    assert a.play(color, p) == b.play(opponent(color), p)
                    assert a.ascii() == b.ascii().translate(str.maketrans("XO", "OX"))


def chain_fields(board):
    """Per stone, its chain's (pseudo-liberties, sum, sum of squares, stones): the kernel's layout."""
    s, n = board._state, (board.size + 2) ** 2
    return {p: tuple(int(s[f * n + s[n + p]]) for f in (3, 4, 5, 6))
            for p in board.stones(BLACK) + board.stones(WHITE)}


def assert_consistent_with_a_rebuilt_board(board):
    """The incremental chains, liberties and hash agree with a board set up from the colours alone."""
    rebuilt = Board.from_ascii(board.ascii(), allow_suicide=board.allow_suicide)
    assert rebuilt.hash == board.hash
    assert chain_fields(board) == chain_fields(rebuilt)
    for p in base.board_points(board.size):
        if p == board.ko_point:
            continue
        for color in (BLACK, WHITE):
            assert board.legal_reason(color, p) == rebuilt.legal_reason(color, p)


@settings(max_examples=40, deadline=None)
@given(size=st.integers(3, 9), picks=st.lists(st.integers(0, 10 ** 6), min_size=1, max_size=200),
       suicide=st.booleans())
def test_incremental_state_matches_a_rebuilt_board(size, picks, suicide):
    board = Board(size, allow_suicide=suicide)
    points = base.board_points(size)
    for i, pick in enumerate(picks):
        point = points[pick % len(points)]
        if board.is_legal(board.to_move, point):
            board.play(board.to_move, point)
        if i % 25 == 0:
            assert_consistent_with_a_rebuilt_board(board)
    assert_consistent_with_a_rebuilt_board(board)


def tromp_taylor(board):
    """Area by the book: flood each empty region in Python and see which colours it reaches."""
    size, area = board.size, {BLACK: 0, WHITE: 0}
    seen = set()
    for start in base.board_points(size):
        color = board.color_at(start)
        if color != EMPTY:
            area[color] += 1
            continue
        if start in seen:
            continue
        region, reached, todo = 0, set(), [start]
        seen.add(start)
        while todo:
            q = todo.pop()
            region += 1
            x, y = base.point_to_xy(q, size)
            for nx, ny in ((x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)):
                if 0 <= nx < size and 0 <= ny < size:
                    r = base.xy_to_point(nx, ny, size)
                    if board.color_at(r) == EMPTY:
                        if r not in seen:
                            seen.add(r)
                            todo.append(r)
                    else:
                        reached.add(board.color_at(r))
        if len(reached) == 1:
            area[reached.pop()] += region
    return area[BLACK], area[WHITE]


def test_area_agrees_with_a_flood_fill_on_random_positions():
    rng = np.random.default_rng(21)
    for size in (2, 5, 9, 13):
        for _ in range(15):
            board = Board(size)
            for _ in range(int(rng.integers(0, 3 * size * size))):
                board.play(board.to_move, board.random_move(board.to_move, rng))
            assert board.area() == tromp_taylor(board)


@pytest.mark.parametrize("size", [5, 9, 19])
def test_playout_kernel_ends_a_legal_game_reproducibly(size):
    keys = kernel_keys(size)

    def run(seed):
        K.seed_rng(seed)
        s = K.new_state(size)
        moves = K.playout(s, keys, size, BLACK, 3 * size * size)
        return s, moves

    s, moves = run(5)
    assert 0 < moves < 3 * size * size, "two passes end the game before the limit"
    t, again = run(5)
    assert moves == again and (s == t).all()
    board = Board(size)
    board._state = s  # look at the final position through the Board API
    assert_consistent_with_a_rebuilt_board(board)
    for p in base.board_points(size):
        if board.color_at(p) == EMPTY:
            for color in (BLACK, WHITE):
                assert board.is_eye(color, p) or not board.is_legal(color, p)


# --- randomized cross-check against sgfmill ------------------------------------------------------

def sgfmill_rc(point, size):
    x, y = base.point_to_xy(point, size)
    return size - 1 - y, x


def assert_same_stones(board, reference):
    size = board.size
    for color, name in ((BLACK, "b"), (WHITE, "w")):
        ours = {sgfmill_rc(p, size) for p in board.stones(color)}
        theirs = {(r, c) for (r, c) in reference.board_points if reference.get(r, c) == name}
        assert ours == theirs


def sgfmill_reason(reference, ko, color, point, size):
    """What sgfmill's board says about a move: occupied, suicide, ko or None."""
    r, c = sgfmill_rc(point, size)
    name = "b" if color == BLACK else "w"
    if reference.get(r, c) is not None:
        return "occupied"
    if ko == (r, c):
        return "ko"
    trial = reference.copy()
    trial.play(r, c, name)
    return "suicide" if trial.get(r, c) is None else None


@pytest.mark.parametrize("size, games, seed", [(5, 40, 1), (9, 15, 2), (13, 4, 3), (19, 2, 4)])
def test_random_games_agree_with_sgfmill(size, games, seed):
    rng = np.random.default_rng(seed)
    points = base.board_points(size)
    checked = {"occupied": 0, "suicide": 0, "ko": 0, None: 0}
    for _ in range(games):
        board = Board(size)
        reference = sgf_boards.Board(size)
        ko = None
        color = BLACK
        for _ in range(4 * size * size):
            if rng.random() < 0.3:  # an arbitrary point, often illegal
                point = int(points[rng.integers(len(points))])
                if board.ko_point is not None and rng.random() < 0.5:
                    point = board.ko_point
                reason = board.legal_reason(color, point)
                assert reason == sgfmill_reason(reference, ko, color, point, size)
                checked[reason] += 1
                if reason is not None:
                    continue
            else:
                point = board.random_move(color, rng)
            board.play(color, point)
            if point == PASS:
                ko = None
                if len(board.moves) > 1 and board.moves[-2][1] == PASS:
                    break
            else:
                ko = reference.play(*sgfmill_rc(point, size), "b" if color == BLACK else "w")
                ours = None if board.ko_point is None else sgfmill_rc(board.ko_point, size)
                assert ours == ko
            assert_same_stones(board, reference)
            color = opponent(color)
    assert checked["occupied"] > 0 and checked[None] > 0
    if size <= 9:  # the check is only worth something if it meets every kind of illegal move
        assert checked["suicide"] > 0 and checked["ko"] > 0
