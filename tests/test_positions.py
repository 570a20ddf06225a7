"""book.formats.positions: boards from typed move lists and from records, as search, shell and web read them."""

import pytest

from fuseki.book.formats.positions import PositionError, board_after_moves, board_after_record
from fuseki.book.formats.sgf_reader import read_games
from fuseki.engine.core import base
from fuseki.engine.core.base import BLACK, WHITE

CAPTURE = b"(;GM[1]SZ[9];B[ba];W[aa];B[ab];W[ca])"   # B[ab] takes the corner stone


def test_sgf_gtp_and_pass_spellings_give_one_board():
    one = board_after_moves(["pd", "dp", "pass", "Q4"], 19)
    other = board_after_moves(["Q16", "d4", "PASS", "pp"], 19)
    assert one.ascii() == other.ascii() and one.to_move == other.to_move == BLACK


@pytest.mark.parametrize("tokens, message", [
    (["pd", "zz"], "move 2: bad vertex 'zz'"),
    (["pd", "I5"], "move 2: bad vertex 'I5'"),
    (["pd", "pd"], "move 2 (Q16) is illegal: occupied"),
])
def test_bad_moves_name_the_move(tokens, message):
    with pytest.raises(PositionError, match=message.replace("(", r"\(").replace(")", r"\)")):
        board_after_moves(tokens, 19)


def test_a_record_replays_with_captures_and_the_next_movers_colour():
    record = read_games(CAPTURE, "capture.sgf")[0]
    board = board_after_record(record, 3)
    assert board.color_at(base.sgf_to_point("aa", 9)) == 0  # captured
    assert board.to_move == WHITE
    assert board_after_record(record, 0).to_move == BLACK


def test_an_illegal_recorded_move_is_an_error_or_a_stone():
    record = read_games(b"(;GM[1]SZ[9];B[aa];W[aa])", "bad.sgf")[0]
    with pytest.raises(PositionError, match="bad.sgf: move 2 is illegal: occupied"):
        board_after_record(record, 2)
    assert board_after_record(record, 2, strict=False).color_at(base.sgf_to_point("aa", 9)) == WHITE
    with pytest.raises(PositionError, match="the game has 2 moves"):
        board_after_record(record, 3)
