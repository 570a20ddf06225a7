"""The corner book's independent count (see tests/test_corners.py) and its games.

A corner is read as tuples of (empty, own, opponent) cells in its two readings (no hashes, no
numba): a corner's class is the smaller tuple, a move's the smaller of its local points in the
readings equal to it.  ``make_games`` plays corner sequences in random corners and readings,
then random legal moves (``games.random_moves``), written with ``games.sgf_text``.

Not a test module: test modules import from here (and from conftest.py), never from each other.
"""

from __future__ import annotations

import functools

import numpy as np

from fuseki.book.analysis.patterns import corner_build
from fuseki.engine.core.base import BLACK, PASS, WHITE, point_to_xy, xy_to_point
from fuseki.engine.core.board import Board

from games import random_moves, sgf_text

# corner sequences in local (u, v) coordinates (u along the edge from the corner, v away from it)
JOSEKI_19 = [
    [(3, 3), (5, 2), (2, 5), (2, 2), (6, 3)],
    [(3, 3), (5, 2), (5, 3), (6, 2), (3, 5)],
    [(2, 3), (4, 2), (3, 2), (3, 1), (8, 2)],
    [(2, 3), (2, 5), (3, 5), (3, 6), (4, 5)],
    [(3, 3), (2, 2), (2, 3), (3, 2), (4, 2), (4, 1)],
]


JOSEKI_9 = [[(2, 2), (1, 2), (2, 1)], [(2, 2), (3, 1)], [(1, 2), (2, 1), (2, 2)]]


def to_board(corner, u, v, size):
    m = size - 1
    return xy_to_point(m - u if corner & 1 else u, m - v if corner & 2 else v, size)


def make_games(folder, size, count, seed):
    """SGF files of games that play corner sequences in random corners and readings, then random moves."""
    rng = np.random.default_rng(seed)
    library = JOSEKI_19 if size == 19 else JOSEKI_9
    games = []
    for i in range(count):
        board = Board(size)
        plans = {}
        for corner in rng.permutation(4).tolist():
            steps = library[int(rng.integers(len(library)))]
            flip = bool(rng.integers(2))
            plans[corner] = [to_board(corner, *(reversed(s) if flip else s), size) for s in steps]
        colour, current = BLACK, int(rng.integers(4))
        while any(plans.values()):
            if not plans[current] or rng.random() < 0.3:
                current = int(rng.choice([c for c, rest in plans.items() if rest]))
            point = plans[current].pop(0)
            if board.legal_reason(colour, point) is None:
                board.play(colour, point)
                colour = WHITE if colour == BLACK else BLACK
        random_moves(board, colour, rng, int(rng.integers(3, 25)))
        winner = [BLACK, WHITE, None][i % 3]
        result = {BLACK: "B+R", WHITE: "W+3.5", None: "Void"}[winner]
        (folder / f"g{size}_{i:03d}.sgf").write_bytes(sgf_text(size, list(board.moves), result=result))
        games.append((list(board.moves), winner))
    return games


@functools.cache
def corner_points(corner, size, width):
    """The corner's board points, (u, v) row by row, read plain and transposed."""
    plain = tuple(to_board(corner, u, v, size) for v in range(width) for u in range(width))
    transposed = tuple(to_board(corner, v, u, size) for v in range(width) for u in range(width))
    return plain, transposed


def readings(board, corner, mover, width):
    """The corner's cells (0 empty, 1 own, 2 opponent) as read plain and transposed (the board's
    stones read once, not a ``color_at`` a cell: the count read 6.6 million cells of the real
    month's 300 games one by one, 20 s of test_corner_games' set-up)."""
    cells = dict.fromkeys(board.stones(mover), 1)
    cells.update(dict.fromkeys(board.stones(WHITE if mover == BLACK else BLACK), 2))
    plain, transposed = corner_points(corner, board.size, width)
    return tuple(cells.get(p, 0) for p in plain), tuple(cells.get(p, 0) for p in transposed)


def local_of(point, corner, size):
    x, y = point_to_xy(point, size)
    m = size - 1
    return (m - x if corner & 1 else x), (m - y if corner & 2 else y)


def corner_at(point, size, width):
    if point == PASS:
        return -1
    for corner in range(4):
        u, v = local_of(point, corner, size)
        if u < width and v < width:
            return corner
    return -1


def class_of(board, corner, mover, width):
    plain, transposed = readings(board, corner, mover, width)
    canon = min(plain, transposed)
    return canon, [r for r, seen in enumerate((plain, transposed)) if seen == canon]


ALL = "all"  # the move of a corner class's own entry: every continuation of it


def count_games(games, size, depth=corner_build.DEPTH):
    """{(corner class, move class, None for tenuki, or ALL): [played, wins, games]}: played the
    times seen, games the distinct games seen in (a set of the game's entries)."""
    width = size // 2
    table: dict = {}
    for moves, winner in games:
        board = Board(size)
        previous = -1
        in_game: set = set()

        def count(entry_key, won, in_game=in_game):
            entry = table.setdefault(entry_key, [0, 0, 0])
            entry[0] += 1
            entry[1] += won
            if entry_key not in in_game:
                in_game.add(entry_key)
                entry[2] += 1

        for number, (colour, point) in enumerate(moves, start=1):
            if number > depth:
                break
            here = corner_at(point, size, width)
            won = int(winner == colour)
            if previous >= 0 and previous != here:
                canon, _ = class_of(board, previous, colour, width)
                count((canon, None), won)
                count((canon, ALL), won)
            if here >= 0:
                canon, reads = class_of(board, here, colour, width)
                u, v = local_of(point, here, size)
                move = min((u, v) if r == 0 else (v, u) for r in reads)
                count((canon, move), won)
                count((canon, ALL), won)
            board.play(colour, point)
            previous = here
    return table


_BY_CLASS: dict = {}  # id(table) -> (table, {corner class: [(move, counts)]}): a count is never changed


def by_class(table) -> dict:
    """The count's entries grouped by corner class, in the count's order (made once a count)."""
    kept = _BY_CLASS.get(id(table))
    if kept is None or kept[0] is not table:
        grouped: dict = {}
        for (seen, move), counts in table.items():
            grouped.setdefault(seen, []).append((move, counts))
        kept = _BY_CLASS[id(table)] = (table, grouped)
    return kept[1]


def expected(table, board, mover, prune):
    """Per corner: ({frozenset of board points: (played, wins, games)}, (tenuki played, its games),
    the corner class's games) from the count."""
    width = board.size // 2
    grouped = by_class(table)
    out = []
    for corner in range(4):
        canon, reads = class_of(board, corner, mover, width)
        moves, tenuki, games = {}, (0, 0), 0
        entries = grouped.get(canon, [])
        for move, (played, wins, in_games) in entries:
            if played < prune:
                continue
            if move is None:
                tenuki = (played, in_games)
                continue
            if move == ALL:  # kept beside a continuation kept (corner_build.records)
                games = in_games if any(m != ALL and p >= prune for m, (p, _, _) in entries) else 0
                continue
            points = frozenset(to_board(corner, *(move if r == 0 else move[::-1]), board.size) for r in reads)
            moves[points] = (played, wins, in_games)
        out.append((moves, tenuki, games))
    return out
