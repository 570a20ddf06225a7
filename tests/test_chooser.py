"""Move choosers: the random chooser, and how genmove falls back when a chooser fails it."""

from __future__ import annotations

from fuseki.engine.config import Settings
from fuseki.engine.core.base import BLACK, PASS, WHITE, vertex_to_point
from fuseki.engine.core.board import Board
from fuseki.engine.gtp.commands.state import Game
from fuseki.engine.players.chooser import Chooser, ChooserChain, MoveChoice, RandomChooser


def moves(seed, n=40, size=9):
    board, chooser, out = Board(size), RandomChooser(seed), []
    for i in range(n):
        color = (BLACK, WHITE)[i % 2]
        point = chooser.choose(board, color).move
        board.play(color, point)
        out.append(point)
    return out


def test_same_seed_same_moves():
    assert moves(11) == moves(11)
    assert moves(11) != moves(12)


def test_random_moves_are_legal_and_leave_the_board_alone():
    board, chooser = Board(9), RandomChooser(3)
    for i in range(150):
        color = (BLACK, WHITE)[i % 2]
        before = (board.ascii(), board.hash, list(board.moves))
        point = chooser.choose(board, color).move
        assert (board.ascii(), board.hash, list(board.moves)) == before
        assert point == PASS or board.is_legal(color, point)
        board.play(color, point)


def test_random_chooser_does_not_fill_its_own_eye():
    board = Board.from_ascii("""
        . X
        X .
    """)
    assert RandomChooser(1).choose(board, BLACK) == MoveChoice(PASS, "random")


class Scripted(Chooser):
    """Proposes the given moves in turn (None: nothing to propose)."""

    name = "scripted"

    def __init__(self, *points):
        self.points = list(points)

    def choose(self, board, color):
        point = self.points.pop(0)
        return None if point is None else MoveChoice(point, self.name)


def test_a_chooser_declares_its_result_and_inherits_the_lifecycle():
    chooser: Chooser = Scripted(PASS)
    choice = chooser.choose(None, BLACK)
    assert choice == MoveChoice(PASS, "scripted") and choice.is_pass and not choice.is_resign
    chooser.warm_up()
    chooser.close()  # the protocol's defaults: nothing to do


def test_game_uses_its_chooser_and_falls_back_on_illegal_or_none():
    d4 = vertex_to_point("D4", 9)
    game = Game(Settings(board_size=9, seed=2), chain=ChooserChain([Scripted(d4, d4, None, PASS)]))
    assert game.choose(BLACK) == d4
    game.play(BLACK, d4)
    second = game.choose(WHITE)  # D4 is taken: the random chooser answers
    assert second not in (d4, PASS) and game.board.is_legal(WHITE, second)
    third = game.choose(WHITE)   # None: nothing from the chooser
    assert third != PASS and game.board.is_legal(WHITE, third)
    assert game.choose(WHITE) == PASS
