"""Boards in the tests' shorthand: points by GTP vertex, moves as ``"B C3 W pass ..."``, and the
simple ko position the board tests start from.

Not a test module: test modules import from here (and from conftest.py), never from each other.
"""


from fuseki.engine.core import base
from fuseki.engine.core.base import BLACK, WHITE

COLOR = {"B": BLACK, "W": WHITE}


def pt(board, vertex):
    return base.vertex_to_point(vertex, board.size)


def play(board, moves):
    """Play ``"B C3 W pass ..."``; returns the captures of each move."""
    words = moves.split()
    return [board.play(COLOR[c], pt(board, v)) for c, v in zip(words[::2], words[1::2])]


KO = """
    .XO..
    X.XO.
    .XO..
    .....
    ....."""
