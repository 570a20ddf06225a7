"""The rules core, read as Go diagrams (style principle 10).

Positions are built with ``Board.from_ascii`` (``X`` black, ``O`` white, ``.``
empty, top row first) and points are named as GTP vertices.  The randomized
tests (test_board_random.py) cross-check every move against ``sgfmill.boards.Board``.
"""

import numpy as np
import pytest

from fuseki.engine.core import base
from fuseki.engine.core.base import BLACK, EMPTY, PASS, WHITE, IllegalMove, opponent
from fuseki.engine.core.board import Board, NothingToUndo

from boards import KO, play, pt

# --- helpers -----------------------------------------------------------------------

def vx(board, point):
    return None if point is None else base.point_to_vertex(point, board.size)


def clean(diagram):
    return "\n".join(line.replace(" ", "") for line in diagram.strip().splitlines())


def assert_board(board, diagram):
    """Compare with a diagram; on failure list the differing vertices and show both boards."""
    expected, actual = clean(diagram), board.ascii()
    if expected != actual:
        size = board.size
        diff = [base.point_to_vertex(base.xy_to_point(x, y, size), size)
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
    with pytest.raises(base.CoordinateError):
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
    (["D4", "D4"], ValueError), ([0], base.CoordinateError), ([10 ** 5], base.CoordinateError)])
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


def test_diagram_draws_stones_star_points_marks_and_a_region():
    board = Board.from_ascii("""
        . . . . . . . . .
        . . . . . . . . .
        . . X . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . O . .
        . . . . . . . . .
        . . . . . . . . .
    """)
    whole = board.diagram(notes={9: "note"})
    assert whole[0] == whole[-1] == "   A B C D E F G H J"
    assert whole[1] == " 9 . . . . . . . . . 9     note"
    assert whole[3] == " 7 . . X . . . + . . 7"
    assert whole[5] == " 5 . . . . + . . . . 5"
    assert whole[7] == " 3 . . + . . . O . . 3"
    corner = board.diagram({base.xy_to_point(0, 0, 9): "a", base.xy_to_point(2, 2, 9): "#"}, (0, 0, 3, 3))
    assert corner == ["   A B C D", " 9 a . . . 9", " 8 . . . . 8", " 7 . . # . 7", " 6 . . . . 6", "   A B C D"]
