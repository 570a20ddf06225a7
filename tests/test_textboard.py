"""The text board of ``fuseki search`` and the shell: every letter on the board has its row
in the table, also when a position has more next moves than the table lists."""

from __future__ import annotations

import re

from fuseki.book.model.stats import Stats
from fuseki.book.storage.position_index.answers import NextMoves
from fuseki.book.storage.position_index.orbits import MoveStat
from fuseki.book.ui.present import textboard
from fuseki.engine.core.base import BLACK, point_to_vertex, xy_to_point
from fuseki.engine.core.board import Board


def many_moves(count: int, size: int = 19) -> NextMoves:
    points = [xy_to_point(x, y, size) for y in range(size) for x in range(size)][:count]
    moves = [MoveStat(p, (p,), Stats(count - i, 0, 0)) for i, p in enumerate(points)]
    return NextMoves(total=sum(m.games for m in moves), ended=0, moves=moves, to_move=BLACK)


def test_every_letter_on_the_board_has_a_row_in_the_table():
    board, found = Board(19), many_moves(30)
    text = textboard.search_text(board, found)
    board_part, table_part = text.split("\nBlack to play")
    on_board = set(re.findall(r"(?<= )[a-z](?= )", board_part))
    rows = dict(re.findall(r"^([a-z]) - (\S+)", table_part, re.MULTILINE))
    assert on_board == set(rows) and len(rows) == textboard.TABLE_LIMIT
    for letter, vertex in rows.items():  # and each letter stands where its row says
        point = next(m.point for m in found.moves if point_to_vertex(m.point, 19) == vertex)
        assert textboard.marks(found)[point] == letter
    assert "... 10 more moves" in table_part
