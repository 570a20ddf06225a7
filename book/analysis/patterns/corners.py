"""The corner book: what strong players played next in a corner, whatever the rest of the board.

A whole-board book runs dry after a dozen or two moves, in the middle of a joseki; the
corner's own content is still in thousands of games.  This module keys a corner by its
content and answers its continuations:

- **corner region**: the ``W x W`` square at each corner, ``W = size // 2`` (9 on 19x19,
  6 on 13x13, 4 on 9x9); the four regions never overlap (the centre lines belong to none).
- **corner key**: the region's stones *relative to the player to move* (own, opponent), so
  a joseki and the same joseki with colours exchanged share a key, seen from the corner in
  its canonical orientation: each corner is first reflected onto the top-left one (corner
  ``c``: bit 0 flips x, bit 1 flips y), then read as it is or transposed, whichever gives
  the smaller hash.  Hash: XOR of the core Zobrist table's ``stone[r][v][u]`` (``r`` = 0
  own, 1 opponent; ``(u, v)`` the local point in that orientation) and ``size[s]``.
- **corner move**: a point of the region as its local index ``v * W + u`` in the key's
  orientation (for a corner that reads the same transposed, the smaller of the two
  indices: the two moves are one), or ``TENUKI`` (-1): the player to move answered
  elsewhere after the opponent had played in this corner.

The table ``corner_moves(key, move, played, wins, games)`` (``corner_build``) counts, over the
first ``DEPTH`` moves of every game, each move in the corner where it was played (the key
of that corner before it) and each tenuki from the corner of the previous move: ``played``,
the times it was seen, in any corner of any game, ``wins``, the times the player who played
it won, and ``games``, the distinct games it was seen in.  A corner shape occurs in several
corners of one game (the empty corner in all four), so ``played`` may exceed the book's games
and ``games`` never does.  A key's own row (move ``ALL``: every continuation of the key, and
the games it was seen in, the corner's ``games``) is kept only where those games are not the
times of its continuations kept (``corner_build.needed_rows``); without it they are.  The
counts are of the corner's content, whatever the rest of the board: a position of 2 games may
show a corner move of thousands.  A corner book built before the ``games`` column (the
built-in book's) has only the times (``counts_games`` False): its ``games`` are then the times
played, and the book chooser estimates games from them (``book_chooser.within_games``).
``lookup`` reads the four corners of a board in one statement and maps the moves back onto it.
This module imports no numba: the engine's book chooser calls it at ``genmove``.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from functools import cache

import numpy as np

from fuseki.book.model.stats import ratio
from fuseki.book.storage import dialect
from fuseki.engine.core import base, zobrist
from fuseki.engine.core.base import BLACK, WHITE

TABLE = "corner_moves"
TENUKI = -1
ALL = -2  # the move of a key's own row: every continuation of the key (``CornerMoves.games``)
MIN_CORNER_BOOK_SIZE = 5  # below this a corner is the whole board: no corner book
# corner 0..3 by name (bit 0: the right side, bit 1: the bottom, as ``frames`` reads them; app.js names them so)
CORNER_NAMES = ("top left", "top right", "bottom left", "bottom right")


@dataclass(frozen=True)
class Frames:
    """The corner geometry of one board size, as arrays over the board's padded points."""

    size: int
    width: int                # W: the corner region is W x W
    corner_of: np.ndarray     # corner 0..3 of each padded point, -1 outside every corner
    local: np.ndarray         # (points, 2): the local index v*W+u as read plain (0) and transposed (1)
    zkeys: np.ndarray         # (2, W*W) uint64: the hash of an own (0) / opponent (1) stone at each local index
    size_key: int             # mixed into every key of this size
    back: np.ndarray          # (4, 2, W*W): the padded point of each corner's local index per reading


def corner_width(size: int) -> int:
    """W, the side of the corner region on a ``size`` board (0 when the board has no corners)."""
    return size // 2 if size >= MIN_CORNER_BOOK_SIZE else 0


@cache
def frames(size: int) -> Frames:
    """The corner geometry of ``size`` (cached; read-only arrays)."""
    width = corner_width(size)
    n = base.array_length(size)
    corner_of = np.full(n, -1, dtype=np.int64)
    local = np.zeros((n, 2), dtype=np.int64)
    back = np.zeros((4, 2, max(width * width, 1)), dtype=np.int64)
    last = size - 1
    for y in range(size):
        for x in range(size):
            for corner in range(4):
                u = last - x if corner & 1 else x
                v = last - y if corner & 2 else y
                if u < width and v < width:
                    p = base.xy_to_point(x, y, size)
                    corner_of[p] = corner
                    local[p] = (v * width + u, u * width + v)
                    back[corner, 0, v * width + u] = p
                    back[corner, 1, u * width + v] = p
    stone = zobrist.table().stone
    zkeys = np.zeros((2, max(width * width, 1)), dtype=np.uint64)
    for code in range(width * width):
        zkeys[0, code] = stone[0, code // width, code % width]
        zkeys[1, code] = stone[1, code // width, code % width]
    for array in (corner_of, local, back, zkeys):
        array.setflags(write=False)
    return Frames(size, width, corner_of, local, zkeys, zobrist.table().size[size], back)


@dataclass(frozen=True)
class CornerKey:
    """One corner of a position: its key and the reading it was taken in."""

    corner: int
    key: int          # unsigned 64-bit
    reading: int      # 0 plain, 1 transposed: how local indices of the key map to this corner
    symmetric: bool   # the corner reads the same transposed: a move stands for both readings


def corner_keys(board, color: int) -> list[CornerKey]:
    """The keys of the four corners of ``board`` with ``color`` to play (empty without corners)."""
    frame = frames(board.size)
    if not frame.width:
        return []
    hashes = [[0, 0] for _ in range(4)]
    for relative, stones in enumerate((board.stones(color), board.stones(WHITE if color == BLACK else BLACK))):
        for p in stones:
            corner = int(frame.corner_of[p])
            if corner >= 0:
                hashes[corner][0] ^= int(frame.zkeys[relative, frame.local[p, 0]])
                hashes[corner][1] ^= int(frame.zkeys[relative, frame.local[p, 1]])
    found = []
    for corner, (plain, transposed) in enumerate(hashes):
        plain ^= frame.size_key
        transposed ^= frame.size_key
        reading = 0 if plain <= transposed else 1
        found.append(CornerKey(corner, min(plain, transposed), reading, plain == transposed))
    return found


def corner_of_point(point: int, size: int) -> int:
    """The corner (0..3) holding ``point``, or -1 (outside every corner, a pass, no corners)."""
    frame = frames(size)
    if not frame.width or point <= 0 or point >= len(frame.corner_of):
        return -1
    return int(frame.corner_of[point])


def board_points(found: CornerKey, move: int, size: int) -> tuple[int, ...]:
    """The board points a stored corner move stands for in the corner ``found`` was read from."""
    frame = frames(size)
    points = {int(frame.back[found.corner, found.reading, move])}
    if found.symmetric:
        points.add(int(frame.back[found.corner, 1 - found.reading, move]))
    return tuple(sorted(points))


@dataclass(frozen=True)
class CornerMove:
    """A move strong players played next in a corner (``MoveStat``-like: ``point``, ``points``, ``games``)."""

    point: int
    points: tuple[int, ...]   # the board points it stands for (two for a corner symmetric about its diagonal)
    games: int                # the games that played it in a corner like this one (an older corner book: ``times``)
    wins: int                 # of the ``times``, those whose player won the game
    corner: int
    move: int = TENUKI        # the stored local move (``lookup`` sets it): one move of the corners sharing a key
    times: int = 0            # times it was played in such a corner, up to four a game (0: as ``games``)

    @property
    def winrate(self) -> float:
        """The share of the times it was played won by the player who played it."""
        return ratio(self.wins, self.times or self.games)


@dataclass(frozen=True)
class CornerMoves:
    """One corner of a position in the corner book: its continuations and how often players left it."""

    corner: int
    key: int
    moves: list[CornerMove]   # most played first (ties: point order)
    tenuki: int               # times the player to move played elsewhere instead
    tenuki_wins: int
    games: int | None = None  # games with a corner like this one and a continuation (None: an older corner book)
    tenuki_games: int | None = None  # of those, games that left it (None: an older corner book)

    @property
    def total(self) -> int:
        """Every recorded continuation of this corner, tenuki included: times, not games."""
        return sum(m.times or m.games for m in self.moves) + self.tenuki


def has_table(conn) -> bool:
    """True when the book has a corner book (``corner_build.update`` made one)."""
    from sqlalchemy import inspect

    return inspect(conn).has_table(TABLE)


def counts_games(conn) -> bool:
    """True when the book's corner book has the ``games`` column (built since it counts games)."""
    from sqlalchemy import inspect

    return any(column["name"] == "games" for column in inspect(conn).get_columns(TABLE))


# engines of books seen with a corner book -> (the book's version, its table counts games): a
# table is never dropped for good, and an older one is built again with the games column when
# games are added (the import: a new version); one built again by ``fuseki corners`` alone is
# seen by the next process (a look at the columns at every genmove would cost more than it)
_KNOWN: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def of_book(book, board, color: int) -> list[CornerMoves] | None:
    """``lookup`` on an open ``Book`` (any kind: of games, statistics); None when it has no corner book."""
    with book.db.connect() as conn:
        known = _KNOWN.get(book.db)
        if known is None or (not known[1] and known[0] != book.version()):
            if not has_table(conn):
                return None
            known = _KNOWN[book.db] = (book.version(), counts_games(conn))
        return lookup(conn, board, color, known[1])


def lookup(conn, board, color: int, counted: bool | None = None) -> list[CornerMoves]:
    """The corner book's continuations of each corner of ``board`` with ``color`` to play.

    One entry per corner in corner order (corners the book does not know: no moves, no
    tenuki); an empty list on a board without corners.  ``conn``: a connection to a book
    that has the table (``has_table``); ``counted``: whether it has the ``games`` column
    (None: looked up).
    """
    keys = corner_keys(board, color)
    if not keys:
        return []
    if counted is None:
        counted = counts_games(conn)
    signed = sorted({zobrist.to_signed(k.key) for k in keys})
    placeholder = dialect.placeholder(conn)
    cursor = conn.connection.dbapi_connection.cursor()
    try:
        cursor.execute(f"SELECT key, move, played, wins, {'games' if counted else 'played'} FROM {TABLE} WHERE key IN "
                       f"({', '.join([placeholder] * len(signed))})", tuple(signed))
        rows = cursor.fetchall()
    finally:
        cursor.close()
    by_key: dict[int, list[tuple[int, int, int, int]]] = {}
    for key, move, played, wins, games in rows:
        by_key.setdefault(zobrist.to_unsigned(int(key)), []).append((int(move), int(played), int(wins), int(games)))
    answer = []
    for found in keys:
        moves, tenuki, tenuki_wins = [], 0, 0
        key_games, tenuki_games = (None, 0) if counted else (None, None)
        for move, played, wins, games in by_key.get(found.key, ()):
            if move == ALL:
                key_games = games
                continue
            if move == TENUKI:
                tenuki, tenuki_wins, tenuki_games = played, wins, games if counted else None
                continue
            points = board_points(found, move, board.size)
            moves.append(CornerMove(points[0], points, games, wins, found.corner, move, played))
        moves.sort(key=lambda m: (-m.games, -m.times, m.point))
        if counted and key_games is None:  # no row of its own: seen once a game, nothing pruned
            key_games = sum(m.times for m in moves) + tenuki
        answer.append(CornerMoves(found.corner, found.key, moves, tenuki, tenuki_wins, key_games, tenuki_games))
    return answer
