"""The Go board: the one place that decides what is legal.

``Board`` is the Python face of the numba kernels in ``_kernels``: it checks
arguments, keeps the history needed for undo and positional superko, and
turns kernel result codes into ``IllegalMove`` exceptions.  It knows nothing
of GTP, SGF or databases.  Points are padded indices (see ``coords``).

The history is one small ``Change`` per move or setup (the points whose colour changed,
the ko point and prisoners before), not a copy of the kernels' state (24 KB on 19x19):
a 100,000-move game keeps a few hundred bytes a move, and ``undo`` rebuilds the chains
from the colours it restores (``tests/test_bounded.py`` checks both growths).
"""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

import numpy as np

from fuseki.engine.core import _kernels as K
from fuseki.engine.core import base, coords, zobrist
from fuseki.engine.core.base import (
    BLACK,
    EMPTY,
    WHITE,
    IllegalMove,
    opponent,
    star_points,
)

_REASONS = {K.OCCUPIED: "occupied", K.SUICIDE: "suicide", K.KO: "ko"}


class NothingToUndo(Exception):
    """``undo`` was asked with no move (or setup) to take back."""


class Change(NamedTuple):
    """What ``undo`` needs to take back one move or setup: the state before it, as a difference."""
    to_move: int
    moves: int                      # entries it added to ``Board.moves`` (1 for a move, 0 for setup)
    ko: int                         # the ko point before, -1 for none
    black_prisoners: int            # prisoners taken by Black before
    white_prisoners: int
    colours: tuple[tuple[int, int], ...]  # (point, colour before) of each point it changed


_NO_POINTS: tuple = ()


@cache
def kernel_keys(size: int) -> np.ndarray:
    """The single-layer key array the board's kernels use (int64 bit patterns)."""
    return zobrist.padded_keys(size).view(np.int64)[None, :, :].copy()


@cache
def symmetric_kernel_keys(size: int) -> np.ndarray:
    """Eight key layers, ``keys[t, c, p] = key[c, sym[t, p]]``: layer t hashes the position under symmetry t."""
    base = zobrist.padded_keys(size).view(np.int64)
    sym = coords.symmetry_table(size)
    return np.stack([base[:, sym[t]] for t in range(8)])


def side_keys(size: int) -> np.ndarray:
    """``side[c]``: what the book key XORs in for colour c to move (size key included)."""
    table = zobrist.table()
    side = np.zeros(3, dtype=np.uint64)
    side[BLACK] = table.size[size]
    side[WHITE] = table.size[size] ^ table.white_to_move
    return side.view(np.int64)


class Board:
    """A Go board with captures, ko, optional superko and suicide, undo and area scoring.

    ``to_move`` is the colour expected to play next: it becomes the opponent
    of whoever played last (``play`` does not refuse a colour playing twice,
    as GTP allows that).
    """

    def __init__(self, size: int = 19, komi: float = 7.5, superko: bool = False,
                 allow_suicide: bool = False):
        base.check_size(size)
        self.size = size
        self.komi = komi
        self.superko = superko
        self.allow_suicide = allow_suicide
        self._keys = kernel_keys(size)
        self._meta = K.N_FIELDS * base.array_length(size)
        self.clear()

    # --- state ----------------------------------------------------------------

    def clear(self) -> None:
        """Empty the board and forget the history."""
        self._state = K.new_state(self.size)
        self.to_move = BLACK
        self.moves: list[tuple[int, int]] = []
        self._history: list[Change] = []
        # hash -> how many positions of the history have it (positional superko; undo
        # forgets a hash when its count falls to 0, without looking at the whole history)
        self._seen: dict[int, int] = {self.hash: 1}

    def copy(self) -> Board:
        """An independent board in the same state (history included)."""
        other = Board.__new__(Board)
        other.__dict__.update(self.__dict__)
        other._state = self._state.copy()
        other.moves = list(self.moves)
        other._history = list(self._history)
        other._seen = dict(self._seen)
        return other

    @property
    def hash(self) -> int:
        """Positional Zobrist hash of the stones (unsigned 64-bit)."""
        return int(self._state[self._meta + K.META_HASH]) & 0xFFFFFFFFFFFFFFFF

    @property
    def ko_point(self) -> int | None:
        """The point the next player may not retake, or None."""
        ko = int(self._state[self._meta + K.META_KO])
        return None if ko < 0 else ko

    @property
    def captures(self) -> dict[int, int]:
        """Prisoners taken so far by each colour."""
        base = self._meta + K.META_PRISONERS
        return {BLACK: int(self._state[base]), WHITE: int(self._state[base + 1])}

    def position_key(self, to_move: int | None = None) -> int:
        """The book's key of this position with ``to_move`` (default: ``self.to_move``) to play."""
        side = self.to_move if to_move is None else to_move
        return zobrist.position_key(self.hash, self.size, side == WHITE)

    def symmetric_keys(self, to_move: int | None = None) -> list[int]:
        """The position key of the position under each symmetry n = 0..7."""
        side = self.to_move if to_move is None else to_move
        keys = symmetric_kernel_keys(self.size)
        colors = self._state[: base.array_length(self.size)]
        points = np.flatnonzero((colors == BLACK) | (colors == WHITE))
        result = []
        for t in range(8):
            h = np.bitwise_xor.reduce(keys[t, colors[points], points]) if len(points) else 0
            result.append(zobrist.position_key(int(h) & (2**64 - 1), self.size, side == WHITE))
        return result

    def color_at(self, point: int) -> int:
        """EMPTY, BLACK or WHITE at an on-board point."""
        self._check_point(point)
        return int(self._state[point])

    def stones(self, color: int) -> list[int]:
        """Points holding stones of ``color``, in array order."""
        colors = self._state[: base.array_length(self.size)]
        return [int(p) for p in np.flatnonzero(colors == color)]

    def is_empty(self) -> bool:
        """True when no stone is on the board."""
        return not self.stones(BLACK) and not self.stones(WHITE)

    # --- moves ----------------------------------------------------------------

    def legal_reason(self, color: int, point: int) -> str | None:
        """Why ``color`` may not play ``point`` now, or None if the move is legal."""
        if point == base.PASS:
            return None
        if not self._on_board(point):
            return "off board"
        code = K.legality(self._state, self.size, point, color, self.allow_suicide)
        if code != K.OK:
            return _REASONS[code]
        if self.superko:
            trial = self._state.copy()
            K.play(trial, self._keys, self.size, point, color, self.allow_suicide)
            if self._hash_of(trial) in self._seen:
                return "superko"
        return None

    def is_legal(self, color: int, point: int) -> bool:
        """True if ``color`` may play ``point`` now."""
        return self.legal_reason(color, point) is None

    def play(self, color: int, point: int) -> int:
        """Play a move (PASS allowed) and return the number of stones captured.

        Raises IllegalMove with the reason; the board is then unchanged.
        """
        if color not in (BLACK, WHITE):
            raise ValueError(f"colour {color} cannot play")
        if point != base.PASS and not self._on_board(point):
            raise IllegalMove("off board", point)
        ko, prisoners = self._ko_and_prisoners()
        colours = self._colours().copy() if point != base.PASS else None
        result = K.play(self._state, self._keys, self.size, point, color, self.allow_suicide)
        if result < 0:
            raise IllegalMove(_REASONS[-result], point)
        # a suicide (when allowed) takes the stone off again: compare rather than guess
        changed = _NO_POINTS if colours is None else self._changed_since(colours)
        change = Change(self.to_move, 1, ko, *prisoners, changed)
        if self.superko and point != base.PASS and self.hash in self._seen:
            self._restore(change)
            raise IllegalMove("superko", point)
        self._push(change, [(color, point)])
        self.to_move = opponent(color)
        return result

    def undo(self) -> None:
        """Take back the last move, handicap or setup; raises NothingToUndo."""
        if not self._history:
            raise NothingToUndo("nothing to undo")
        change = self._history.pop()
        added = self.hash
        self._restore(change)
        self.to_move = change.to_move
        del self.moves[len(self.moves) - change.moves:]
        self._seen[added] -= 1
        if not self._seen[added]:
            del self._seen[added]

    def place_handicap(self, points: list[int]) -> None:
        """Put black handicap stones on an empty board; White plays next."""
        if not self.is_empty():
            raise ValueError("board not empty")
        for p in points:
            self._check_point(p)
        if len(set(points)) != len(points):
            raise ValueError("repeated handicap point")
        self.set_stones(BLACK, points)
        self.to_move = WHITE

    def set_stones(self, color: int, points: list[int]) -> None:
        """Setup stones (SGF AB/AW/AE; EMPTY removes): no captures, recorded for undo."""
        for p in points:
            self._check_point(p)
        ko, prisoners = self._ko_and_prisoners()
        colours = self._colours().copy()
        for p in points:
            self._state[p] = color
        K.rebuild(self._state, self._keys, self.size)
        self._state[self._meta + K.META_KO] = -1
        self._push(Change(self.to_move, 0, ko, *prisoners, self._changed_since(colours)), [])

    # --- choosing and scoring -------------------------------------------------

    def is_eye(self, color: int, point: int) -> bool:
        """True if ``point`` is a single-point eye of ``color`` (not a false eye)."""
        self._check_point(point)
        return bool(K.is_eye(self._state, self.size, point, color))

    def random_move(self, color: int, rng: np.random.Generator) -> int:
        """A uniformly random legal move that does not fill ``color``'s own eye, else PASS."""
        colors = self._state[: base.array_length(self.size)]
        empty = np.flatnonzero(colors == EMPTY)
        order = rng.permutation(empty)
        while True:
            point = int(K.first_playable(self._state, self.size, order, color, self.allow_suicide))
            if point == base.PASS or not self.superko or self.is_legal(color, point):
                return point
            order = order[np.flatnonzero(order == point)[0] + 1:]

    def area(self) -> tuple[int, int]:
        """(black, white) area under Tromp-Taylor rules: stones plus territory."""
        black, white = K.area(self._state, self.size)
        return int(black), int(white)

    def score(self) -> float:
        """Black's area minus White's area minus komi (positive: Black wins)."""
        black, white = self.area()
        return black - white - self.komi

    # --- text -----------------------------------------------------------------

    def ascii(self) -> str:
        """The board as rows of ``X`` (black), ``O`` (white) and ``.``, top row first."""
        chars = {EMPTY: ".", BLACK: "X", WHITE: "O"}
        return "\n".join(
            "".join(chars[int(self._state[base.xy_to_point(x, y, self.size)])] for x in range(self.size))
            for y in range(self.size))

    def diagram(self, marks: dict[int, str] | None = None, region: tuple[int, int, int, int] | None = None,
                notes: dict[int, str] | None = None) -> list[str]:
        """The board as GNU Go's ``showboard`` draws it, one string a line: GTP column letters
        (no ``I``) above and below, row numbers on both sides, ``X`` Black, ``O`` White, ``.``
        empty, ``+`` star points.  The one text drawing of a board (GTP, the CLI, the shell).

        ``marks``: point -> a character drawn there instead (a next move's letter, ``?`` for
        any colour, the last move); ``region``: (x0, y0, x1, y1), inclusive, to draw part of
        the board (a corner, a pattern); ``notes``: row number -> text after that row.
        """
        size = self.size
        x0, y0, x1, y1 = region or (0, 0, size - 1, size - 1)
        marks, notes = marks or {}, notes or {}
        stars = set(star_points(size))
        chars = {BLACK: "X", WHITE: "O"}
        columns = "   " + " ".join(base.GTP_COLUMNS[x0:x1 + 1])
        lines = [columns]
        for y in range(y0, y1 + 1):
            row = size - y
            cells = []
            for x in range(x0, x1 + 1):
                point = base.xy_to_point(x, y, size)
                mark = marks.get(point)
                if mark is None:
                    mark = chars.get(int(self._state[point]), "+" if point in stars else ".")
                cells.append(mark)
            note = "    " + notes[row] if row in notes else ""
            lines.append(f"{row:2d} {' '.join(cells)} {row:<2d}{note}".rstrip())
        lines.append(columns)
        return lines

    @classmethod
    def from_ascii(cls, diagram: str, **options) -> Board:
        """A board from rows of ``X``/``O``/``.`` (spaces ignored); Black to play."""
        rows = [line.replace(" ", "") for line in diagram.strip().splitlines()]
        size = len(rows)
        if any(len(row) != size for row in rows):
            raise ValueError("a diagram must be square")
        board = cls(size, **options)
        for color, char in ((BLACK, "X"), (WHITE, "O")):
            points = [base.xy_to_point(x, y, size)
                      for y, row in enumerate(rows) for x, c in enumerate(row) if c == char]
            if points:
                board.set_stones(color, points)
        board._history.clear()
        board._seen = {board.hash: 1}
        return board

    # --- internals ------------------------------------------------------------

    def _on_board(self, point: int) -> bool:
        w = self.size + 2
        y, x = divmod(point, w)
        return 1 <= x <= self.size and 1 <= y <= self.size

    def _check_point(self, point: int) -> None:
        if not isinstance(point, (int, np.integer)) or not self._on_board(point):
            raise base.CoordinateError(f"{point} is not a point of a {self.size}x{self.size} board")

    def _hash_of(self, state: np.ndarray) -> int:
        return int(state[self._meta + K.META_HASH]) & 0xFFFFFFFFFFFFFFFF

    def _colours(self) -> np.ndarray:
        return self._state[: base.array_length(self.size)]

    def _ko_and_prisoners(self) -> tuple[int, tuple[int, int]]:
        meta = self._meta
        return (int(self._state[meta + K.META_KO]),
                (int(self._state[meta + K.META_PRISONERS]), int(self._state[meta + K.META_PRISONERS + 1])))

    def _changed_since(self, colours: np.ndarray) -> tuple[tuple[int, int], ...]:
        """(point, colour in ``colours``) of each point whose colour is different now."""
        points = np.flatnonzero(colours != self._colours())
        return tuple((int(p), int(colours[p])) for p in points)

    def _restore(self, change: Change) -> None:
        """Put back the colours, ko point and prisoners from before ``change``."""
        if change.colours:
            for point, colour in change.colours:
                self._state[point] = colour
            K.rebuild(self._state, self._keys, self.size)
        meta = self._meta
        self._state[meta + K.META_KO] = change.ko
        self._state[meta + K.META_PRISONERS] = change.black_prisoners
        self._state[meta + K.META_PRISONERS + 1] = change.white_prisoners

    def _push(self, change: Change, moves: list[tuple[int, int]]) -> None:
        self._history.append(change)
        self.moves.extend(moves)
        self._seen[self.hash] = self._seen.get(self.hash, 0) + 1
