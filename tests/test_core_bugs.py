"""Regression tests for two core bugs the GNU Go oracle found (copy sharing undo arrays; the
capturer filling its own ko point)."""
from fuseki.engine.core import base
from fuseki.engine.core.base import BLACK, EMPTY, WHITE
from fuseki.engine.core.board import Board

KO = """
    .XO..
    X.XO.
    .XO..
    .....
    ....."""


def pt(b, v):
    return base.vertex_to_point(v, b.size)


def test_copy_does_not_share_history_arrays_with_the_original():
    board = Board(9)
    board.play(BLACK, pt(board, "E5"))
    board.play(WHITE, pt(board, "E6"))
    other = board.copy()
    board.undo()                          # board._state is now the array in other._history
    board.play(WHITE, pt(board, "F5"))    # ... and play mutates it in place
    other.undo()
    assert other.color_at(pt(other, "F5")) == EMPTY
    assert other.ascii() == Board.from_ascii(other.ascii()).ascii()
    assert other.hash == Board.from_ascii(other.ascii()).hash


def test_the_capturer_may_fill_its_own_ko_point():
    # GTP lets a colour play twice; GNU Go accepts W C4 here (it is no recapture).
    board = Board.from_ascii(KO)
    board.play(WHITE, pt(board, "B4"))
    assert board.legal_reason(WHITE, pt(board, "C4")) is None


