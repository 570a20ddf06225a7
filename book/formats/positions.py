"""Boards from what people and records give: a typed move list, or a game record up to a move.

Shared by ``fuseki search``, the shell and the web page so that they read moves and
replay records the same way.  Legality is the rules core's (``engine.core.board``).
"""

from __future__ import annotations

from fuseki.engine.core import base
from fuseki.engine.core.base import BLACK, EMPTY, WHITE, IllegalMove, opponent
from fuseki.engine.core.board import Board


class PositionError(ValueError):
    """A move list or record that does not give a position; the message names the move."""


def board_after_moves(tokens: list[str], size: int) -> Board:
    """The board after ``tokens`` (SGF ``pd``, GTP ``Q16`` or ``pass``), Black first, alternating.

    Raises PositionError naming the move number and token for a bad vertex or an illegal move.
    """
    board = Board(size)
    for number, token in enumerate(tokens, 1):
        try:
            point = base.parse_point(token, size)
        except base.CoordinateError as exc:
            raise PositionError(f"move {number}: bad vertex '{token[:10]}': {exc}") from None
        try:
            board.play(board.to_move, point)
        except IllegalMove as exc:
            # named as a player names it (Q16), whichever form the token had (pd, Q16)
            vertex = base.point_to_vertex(point, size)
            raise PositionError(f"move {number} ({vertex}) is illegal: {exc.reason}") from None
    return board


def to_move_without_moves(record) -> int:
    """Who plays first in a record that has no moves: White after handicap stones, else Black."""
    return WHITE if record.handicap else BLACK


def board_after_record(record, upto: int, strict: bool = True) -> Board:
    """The record's board after its setup stones and its first ``upto`` moves.

    The side to move is the colour of the record's next move (a record may let one
    colour play twice), else White after handicap stones, else Black's opponent of the
    last move.  With ``strict`` an illegal recorded move raises PositionError; without,
    it is put on the board as a stone without captures so the replay goes on as the
    record does (games from servers with other rules, broken files).
    """
    if not 0 <= upto <= len(record.moves):
        raise PositionError(f"move {upto}: the game has {len(record.moves)} moves")
    board = Board(record.size)
    for colour in (BLACK, WHITE, EMPTY):
        points = [p for c, p in record.setup if c == colour]
        if points:
            board.set_stones(colour, points)
    board.to_move = record.moves[0][0] if record.moves else to_move_without_moves(record)
    for number, (colour, point) in enumerate(record.moves[:upto], 1):
        try:
            board.play(colour, point)
        except IllegalMove as exc:
            if strict:
                raise PositionError(f"{record.source}: move {number} is illegal: {exc.reason}") from None
            board.set_stones(colour, [point])
            board.to_move = opponent(colour)
    if upto < len(record.moves):
        board.to_move = record.moves[upto][0]
    return board
