"""The book's answers computed independently, by replaying games with the rules core's ``Board``:
which games reach a position in any orientation, what they played next, who won
(tests/test_store.py and the modules that check other books the same way).

Not a test module: test modules import from here (and from conftest.py), never from each other.
"""

from __future__ import annotations

from fuseki.engine.core import base, coords
from fuseki.engine.core.base import BLACK, WHITE, opponent
from fuseki.engine.core.board import Board


def signature(board: Board, to_move: int):
    return (frozenset(board.stones(BLACK)), frozenset(board.stones(WHITE)), to_move)


def transformed(board: Board, t: int) -> Board:
    """T_t(board): every stone moved by symmetry t, same player to move."""
    other = Board(board.size)
    for colour in (BLACK, WHITE):
        points = [coords.transform_point(t, p, board.size) for p in board.stones(colour)]
        if points:
            other.set_stones(colour, points)
    other.to_move = board.to_move
    return other


def expected(board: Board, games, to_move=None, keep=lambda game: True):
    """(total, ended, {frozenset(points): (games, black wins, white wins)}) by replaying with Board."""
    size = board.size
    side = board.to_move if to_move is None else to_move
    images = {signature(transformed(board, t), side): t for t in range(8)}
    stabilizer = [t for t in range(8) if signature(transformed(board, t), side) == signature(board, side)]
    total = ended = 0
    moves: dict = {}
    for game in games:
        moves_list, winner = game[0], game[1]
        if not keep(game):
            continue
        replay = Board(size)
        for i in range(len(moves_list) + 1):
            colour = moves_list[i][0] if i < len(moves_list) else (
                opponent(moves_list[-1][0]) if moves_list else BLACK)
            t = images.get(signature(replay, colour))
            if t is not None:
                total += 1
                if i == len(moves_list):
                    ended += 1
                else:
                    point = moves_list[i][1]
                    back = point if point == base.PASS else coords.transform_point(coords.INVERSE[t], point, size)
                    orbit = frozenset({back} if back == base.PASS else
                                      {coords.transform_point(s, back, size) for s in stabilizer})
                    g, b, w = moves.get(orbit, (0, 0, 0))
                    moves[orbit] = (g + 1, b + (winner == BLACK), w + (winner == WHITE))
                break
            if i < len(moves_list):
                replay.play(*moves_list[i])
    return total, ended, moves


def as_dict(found):
    return {frozenset(m.points): (m.games, m.stats.black_wins, m.stats.white_wins) for m in found.moves}


def board_after(moves, size=19, upto=None):
    board = Board(size)
    for colour, point in moves[:upto]:
        board.play(colour, point)
    if upto is not None and upto < len(moves):
        board.to_move = moves[upto][0]
    return board


def sample_positions(games, rng, count=12):
    positions = [Board(19)]
    for _ in range(count):
        moves = games[int(rng.integers(len(games)))][0]
        positions.append(board_after(moves, upto=int(rng.integers(0, min(len(moves), 6) + 1))))
    return positions
