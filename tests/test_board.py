"""The rules core, read as Go diagrams (style principle 10).

Positions are built with ``Board.from_ascii`` (``X`` black, ``O`` white, ``.``
empty, top row first) and points are named as GTP vertices.  The randomized
tests at the end cross-check every move against ``sgfmill.boards.Board``.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sgfmill import boards as sgf_boards

from fuseki.engine.core import _kernels as K
from fuseki.engine.core import coords
from fuseki.engine.core.board import Board, IllegalMove, NothingToUndo, kernel_keys
from fuseki.engine.core.base import BLACK, EMPTY, WHITE, opponent
from fuseki.engine.core.coords import PASS

# --- helpers -----------------------------------------------------------------------

COLOR = {"B": BLACK, "W": WHITE}


def pt(board, vertex):
    return coords.vertex_to_point(vertex, board.size)


def vx(board, point):
    return None if point is None else coords.point_to_vertex(point, board.size)


def play(board, moves):
    """Play ``"B C3 W pass ..."``; returns the captures of each move."""
    words = moves.split()
    return [board.play(COLOR[c], pt(board, v)) for c, v in zip(words[::2], words[1::2])]


def clean(diagram):
    return "\n".join(line.replace(" ", "") for line in diagram.strip().splitlines())


def assert_board(board, diagram):
    """Compare with a diagram; on failure list the differing vertices and show both boards."""
    expected, actual = clean(diagram), board.ascii()
    if expected != actual:
        size = board.size
        diff = [coords.point_to_vertex(coords.xy_to_point(x, y, size), size)
                for y, (e_row, a_row) in enumerate(zip(expected.splitlines(), actual.splitlines()))
                for x, (e, a) in enumerate(zip(e_row, a_row)) if e != a]
        pytest.fail(f"boards differ at {' '.join(diff)}\nexpected:\n{expected}\nactual:\n{actual}")


def snapshot(board):
    return (board.ascii(), board.hash, board.ko_point, board.captures, board.to_move,
            list(board.moves), board.position_key())


# --- captures, ko: one table of cases ---------------------------------------------------
# (name, start, moves, expected diagram, ko vertex after the last move, (black, white) prisoners)

CASES = [
    ("single stone in the centre", """
        .....
        ..X..
        .XO..
        ..X..
        .....""", "B D3", """
        .....
        ..X..
        .X.X.
        ..X..
        .....""", None, (1, 0)),
    ("two chains with one move", """
        .X.X.
        XO.OX
        .X.X.
        .....
        .....""", "B C4", """
        .X.X.
        X.X.X
        .X.X.
        .....
        .....""", None, (2, 0)),
    ("three chains with one move", """
        ..X..
        .XOX.
        XO.OX
        .X.X.
        .....""", "B C3", """
        ..X..
        .X.X.
        X.X.X
        .X.X.
        .....""", None, (3, 0)),
    ("corner stone", """
        OX...
        .....
        .....
        .....
        .....""", "B A4", """
        .X...
        X....
        .....
        .....
        .....""", None, (1, 0)),
    ("two chains in the corner, a would-be suicide that captures", """
        .OX..
        OX...
        X....
        .....
        .....""", "B A5", """
        X.X..
        .X...
        X....
        .....
        .....""", None, (2, 0)),
    ("two stones on the edge", """
        XOO..
        .XX..
        .....
        .....
        .....""", "B D5", """
        X..X.
        .XX..
        .....
        .....
        .....""", None, (2, 0)),
    ("a whole edge group by White", """
        .....
        .....
        OOOOO
        XXXXO
        ...XO""", "W C1 W B1 W A1", """
        .....
        .....
        OOOOO
        ....O
        OOO.O""", None, (0, 5)),
    ("ko capture sets the ko point", """
        .XO..
        X.XO.
        .XO..
        .....
        .....""", "W B4", """
        .XO..
        XO.O.
        .XO..
        .....
        .....""", "C4", (0, 1)),
    ("ko capture on the edge", """
        X.XO.
        .XO..
        .....
        .....
        .....""", "W B5", """
        XO.O.
        .XO..
        .....
        .....
        .....""", "C5", (0, 1)),
    ("any other move clears the ko point", """
        .XO..
        X.XO.
        .XO..
        .....
        .....""", "W B4 B E1", """
        .XO..
        XO.O.
        .XO..
        .....
        ....X""", None, (0, 1)),
    ("a pass clears the ko point", """
        .XO..
        X.XO.
        .XO..
        .....
        .....""", "W B4 B pass", """
        .XO..
        XO.O.
        .XO..
        .....
        .....""", None, (0, 1)),
    ("snapback: the capture of the throw-in is no ko, the retake takes five", """
        OX..O
        OXXXO
        OOOOO
        .....
        .....""", "W C5 B D5 W C5", """
        O.O.O
        O...O
        OOOOO
        .....
        .....""", None, (1, 5)),
    ("a single capture by a stone that joins a chain is no ko", """
        .XX..
        X..X.
        .XX..
        .....
        .....""", "W C4 B B4", """
        .XX..
        XX.X.
        .XX..
        .....
        .....""", None, (1, 0)),
]


@pytest.mark.parametrize("name, start, moves, expected, ko, prisoners", CASES, ids=[c[0] for c in CASES])
def test_play_cases(name, start, moves, expected, ko, prisoners):
    board = Board.from_ascii(start)
    play(board, moves)
    assert_board(board, expected)
    assert vx(board, board.ko_point) == ko
    assert board.captures == {BLACK: prisoners[0], WHITE: prisoners[1]}


def test_play_returns_the_number_captured_and_sets_to_move():
    board = Board.from_ascii("""
        .X.X.
        XO.OX
        .X.X.
        .....
        .....""")
    assert board.play(BLACK, pt(board, "C4")) == 2
    assert board.to_move == WHITE
    assert board.play(WHITE, PASS) == 0
    assert board.to_move == BLACK
    assert board.moves == [(BLACK, pt(board, "C4")), (WHITE, PASS)]


# --- ko -----------------------------------------------------------------------------

KO = """
    .XO..
    X.XO.
    .XO..
    .....
    ....."""


def test_simple_ko_is_refused_then_allowed_after_a_tree_move():
    board = Board.from_ascii(KO)
    play(board, "W B4")
    assert board.legal_reason(BLACK, pt(board, "C4")) == "ko"
    before = snapshot(board)
    with pytest.raises(IllegalMove) as err:
        board.play(BLACK, pt(board, "C4"))
    assert err.value.reason == "ko" and err.value.point == pt(board, "C4")
    assert snapshot(board) == before, "an illegal move leaves the board unchanged"
    play(board, "B E1 W E2")  # Black's ko threat and White's answer
    assert board.play(BLACK, pt(board, "C4")) == 1
    assert vx(board, board.ko_point) == "B4"
    assert board.legal_reason(WHITE, pt(board, "B4")) == "ko"


def test_ko_point_is_cleared_by_a_pass():
    board = Board.from_ascii(KO)
    play(board, "W B4 B pass")
    assert board.ko_point is None
    play(board, "W pass")
    assert board.play(BLACK, pt(board, "C4")) == 1


def test_ko_is_refused_for_the_player_not_the_point_alone():
    board = Board.from_ascii(KO)
    play(board, "W B4")
    assert board.is_legal(BLACK, pt(board, "E1"))
    assert board.legal_reason(BLACK, pt(board, "C4")) == "ko"
    assert board.copy().legal_reason(BLACK, pt(board, "C4")) == "ko"


# --- positional superko ------------------------------------------------------------------

# Three kos: Black can take the top and bottom ones, White the middle one.
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
TRIPLE_KO_CYCLE = "B C8 W B5 B C2 W B8 B C5 W B2"


def test_triple_ko_cycle_is_legal_under_simple_ko():
    board = Board.from_ascii(TRIPLE_KO)
    start = board.hash
    assert play(board, TRIPLE_KO_CYCLE) == [1] * 6
    assert board.hash == start
    assert_board(board, TRIPLE_KO)


def test_triple_ko_cycle_is_refused_by_positional_superko():
    board = Board.from_ascii(TRIPLE_KO, superko=True)
    play(board, TRIPLE_KO_CYCLE.rsplit(" ", 2)[0])
    last = pt(board, "B2")
    assert board.legal_reason(WHITE, last) == "superko"
    before = snapshot(board)
    with pytest.raises(IllegalMove) as err:
        board.play(WHITE, last)
    assert err.value.reason == "superko"
    assert snapshot(board) == before
    assert board.random_move(WHITE, np.random.default_rng(1)) != last


def test_retaking_a_ko_after_two_passes_repeats_the_position():
    plain = Board.from_ascii(KO)
    play(plain, "W B4 B pass W pass")
    assert plain.is_legal(BLACK, pt(plain, "C4"))
    strict = Board.from_ascii(KO, superko=True)
    play(strict, "W B4 B pass W pass")
    assert strict.legal_reason(BLACK, pt(strict, "C4")) == "superko"


def test_undo_forgets_the_positions_it_takes_back():
    board = Board.from_ascii(TRIPLE_KO, superko=True)
    play(board, "B C8")
    board.undo()
    play(board, "W pass")
    assert board.legal_reason(BLACK, pt(board, "C8")) is None, "the undone position is not history"
    play(board, "B C8 W B5 B C2 W B8 B C5")
    assert board.legal_reason(WHITE, pt(board, "B2")) == "superko"


# --- suicide, occupied, off board -----------------------------------------------------------

SINGLE_SUICIDE = """
    .O...
    O....
    .....
    .....
    ....."""
GROUP_SUICIDE = """
    .XO..
    XXO..
    OO...
    .....
    ....."""


@pytest.mark.parametrize("diagram, vertex", [(SINGLE_SUICIDE, "A5"), (GROUP_SUICIDE, "A5")])
def test_suicide_is_refused(diagram, vertex):
    board = Board.from_ascii(diagram)
    before = snapshot(board)
    assert board.legal_reason(BLACK, pt(board, vertex)) == "suicide"
    with pytest.raises(IllegalMove) as err:
        board.play(BLACK, pt(board, vertex))
    assert err.value.reason == "suicide"
    assert snapshot(board) == before


def test_single_stone_suicide_when_allowed():
    board = Board.from_ascii(SINGLE_SUICIDE, allow_suicide=True)
    assert board.is_legal(BLACK, pt(board, "A5"))
    assert board.play(BLACK, pt(board, "A5")) == 0
    assert_board(board, SINGLE_SUICIDE)
    assert board.captures == {BLACK: 0, WHITE: 1}
    assert board.moves == [(BLACK, pt(board, "A5"))]


def test_group_suicide_when_allowed_removes_the_group_and_pays_the_opponent():
    board = Board.from_ascii(GROUP_SUICIDE, allow_suicide=True)
    assert board.play(BLACK, pt(board, "A5")) == 0
    assert_board(board, """
        ..O..
        ..O..
        OO...
        .....
        .....""")
    assert board.captures == {BLACK: 0, WHITE: 4}
    assert board.hash == Board.from_ascii(board.ascii()).hash
    board.undo()
    assert_board(board, GROUP_SUICIDE)
    assert board.captures == {BLACK: 0, WHITE: 0}


def test_occupied():
    board = Board(9)
    play(board, "B E5")
    for color in (BLACK, WHITE):
        assert board.legal_reason(color, pt(board, "E5")) == "occupied"
        with pytest.raises(IllegalMove) as err:
            board.play(color, pt(board, "E5"))
        assert err.value.reason == "occupied"
    assert board.moves == [(BLACK, pt(board, "E5"))]


@pytest.mark.parametrize("point", [0, 1, 10, 11 * 11 - 1, 11 * 11, 10 ** 6, -2, -12])
def test_off_board(point):
    board = Board(9)
    assert board.legal_reason(BLACK, point) == "off board"
    with pytest.raises(IllegalMove) as err:
        board.play(BLACK, point)
    assert err.value.reason == "off board"
    with pytest.raises(coords.CoordinateError):
        board.color_at(point)
    assert board.moves == []


def test_only_black_and_white_play():
    with pytest.raises(ValueError):
        Board(9).play(EMPTY, 12)


def test_pass_is_always_legal():
    board = Board.from_ascii(SINGLE_SUICIDE)
    assert board.legal_reason(BLACK, PASS) is None
    assert board.play(BLACK, PASS) == 0
    assert board.moves == [(BLACK, PASS)]


# --- undo, handicap, setup ---------------------------------------------------------------

def test_undo_of_many_moves_restores_everything_exactly():
    board = Board(9)
    rng = np.random.default_rng(7)
    snapshots = [snapshot(board)]
    color = BLACK
    for _ in range(250):
        board.play(color, board.random_move(color, rng))
        snapshots.append(snapshot(board))
        color = opponent(color)
    assert board.captures[BLACK] + board.captures[WHITE] > 10, "the game must include captures"
    assert any(s[2] is not None for s in snapshots), "and a ko"
    for expected in reversed(snapshots[:-1]):
        board.undo()
        assert snapshot(board) == expected
    with pytest.raises(NothingToUndo):
        board.undo()


def test_undo_then_replay_reaches_the_same_state():
    board = Board(9)
    play(board, "B E5 W E6 B D6 W F6 B E7 W pass B F7")
    after = snapshot(board)
    board.undo()
    board.undo()
    play(board, "W pass B F7")
    assert snapshot(board) == after


HANDICAP = ["D4", "Q16", "D16", "Q4"]


def test_place_handicap():
    board = Board(19)
    board.place_handicap([pt(board, v) for v in HANDICAP])
    assert board.to_move == WHITE
    assert sorted(board.stones(BLACK)) == sorted(pt(board, v) for v in HANDICAP)
    assert board.stones(WHITE) == [] and board.moves == []
    play(board, "W C3")
    board.undo()
    board.undo()
    assert board.is_empty() and board.to_move == BLACK
    assert board.hash == Board(19).hash


@pytest.mark.parametrize("points, error", [
    (["D4", "D4"], ValueError), ([0], coords.CoordinateError), ([10 ** 5], coords.CoordinateError)])
def test_bad_handicap(points, error):
    board = Board(19)
    with pytest.raises(error):
        board.place_handicap([pt(board, p) if isinstance(p, str) else p for p in points])


def test_handicap_needs_an_empty_board():
    board = Board(19)
    play(board, "B K10")
    with pytest.raises(ValueError):
        board.place_handicap([pt(board, "D4")])


def test_set_stones_builds_chains_and_is_undone():
    board = Board(5)
    board.set_stones(BLACK, [pt(board, v) for v in ("A4", "B5", "B4")])
    board.set_stones(WHITE, [pt(board, v) for v in ("C5", "C4", "A3", "B3", "E5")])
    board.set_stones(EMPTY, [pt(board, "E5")])
    assert_board(board, """
        .XO..
        XXO..
        OO...
        .....
        .....""")
    assert board.legal_reason(BLACK, pt(board, "A5")) == "suicide"
    assert board.play(WHITE, pt(board, "A5")) == 3
    assert board.hash == Board.from_ascii(board.ascii()).hash
    board.undo()
    board.undo()
    assert board.color_at(pt(board, "E5")) == WHITE
    board.undo()
    board.undo()
    assert board.is_empty()


# --- scoring ---------------------------------------------------------------------------

@pytest.mark.parametrize("diagram, area", [
    (""".....
        .....
        .....
        .....
        .....""", (0, 0)),
    ("""....
        .X..
        ....
        ....""", (16, 0)),
    # the middle column touches both colours: nobody's
    (""".X.O.
        .X.O.
        .X.O.
        .X.O.
        .X.O.""", (10, 10)),
    ("""X.O
        X.O
        X.O""", (3, 3)),
    ("""..XO.
        XXXOO
        ..XO.
        XXXOO
        ..XO.""", (15, 10)),
])
def test_area(diagram, area):
    board = Board.from_ascii(diagram, komi=6.5)
    assert board.area() == area
    assert board.score() == area[0] - area[1] - 6.5


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
        for p in coords.board_points(9):
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
    for i in range(40):
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
        for p in coords.board_points(7):
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
    for p in coords.board_points(board.size):
        if p == board.ko_point:
            continue
        for color in (BLACK, WHITE):
            assert board.legal_reason(color, p) == rebuilt.legal_reason(color, p)


@settings(max_examples=40, deadline=None)
@given(size=st.integers(3, 9), picks=st.lists(st.integers(0, 10 ** 6), min_size=1, max_size=200),
       suicide=st.booleans())
def test_incremental_state_matches_a_rebuilt_board(size, picks, suicide):
    board = Board(size, allow_suicide=suicide)
    points = coords.board_points(size)
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
    for start in coords.board_points(size):
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
            x, y = coords.point_to_xy(q, size)
            for nx, ny in ((x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)):
                if 0 <= nx < size and 0 <= ny < size:
                    r = coords.xy_to_point(nx, ny, size)
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
    for p in coords.board_points(size):
        if board.color_at(p) == EMPTY:
            for color in (BLACK, WHITE):
                assert board.is_eye(color, p) or not board.is_legal(color, p)


# --- randomized cross-check against sgfmill ------------------------------------------------------

def sgfmill_rc(point, size):
    x, y = coords.point_to_xy(point, size)
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
    points = coords.board_points(size)
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
