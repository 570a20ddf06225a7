"""The numpy-free base of the core: colours, points and their names, the fixed handicap and star
points, and ``IllegalMove``.

Everything here is plain Python, so that the GTP front end, the book's chooser and the
formats can name points and colours without loading numpy or numba.  ``coords`` adds the
8 symmetries (numpy tables) and re-exports these names; conventions:

=============  ==========================================  =====================
name           meaning                                     example (19x19)
=============  ==========================================  =====================
``(x, y)``     column from the left, row from the *top*    ``(15, 3)``
               (SGF order), both 0-based
point          index into the padded 1-D board array:      ``(3+1)*21 + 15+1``
               ``(y + 1) * (size + 2) + (x + 1)``
vertex         GTP text: column letter ``A``-``Z``          ``Q16``
               skipping ``I``, row counted from the
               *bottom*, 1-based; ``pass``
SGF point      two letters ``aa``...; ``''`` or ``tt``      ``pd``
               is a pass on boards up to 19x19
(row, col)     sgfmill's move: row from the *bottom*,      ``(15, 15)``
               column from the left, both 0-based;
               ``None`` is a pass
=============  ==========================================  =====================

The padded array has one border line on every side, so the four neighbours of
any point are ``p - 1, p + 1, p - W, p + W`` with ``W = size + 2`` and never
leave the array.  ``PASS`` is ``-1`` everywhere; ``END`` (-2) is the "next move" a replay gives
the last position of a game, never a point; ``RESIGN`` (-3) is what a chooser answers to
resign, never a point either.
"""

from __future__ import annotations

from functools import cache

# --- colours ------------------------------------------------------------------

EMPTY = 0
BLACK = 1
WHITE = 2
BORDER = 3

# The colours' names, the one map of each: the letters of SGF, GTP and KataGo (the web API's
# colours), and the words a sentence shows.
COLOUR_LETTER = {BLACK: "B", WHITE: "W"}
COLOUR_NAME = {BLACK: "Black", WHITE: "White"}


def opponent(color: int) -> int:
    """The other player's colour."""
    return 3 - color


def parse_color(text: str) -> int:
    """``b``/``black``/``w``/``white`` in any case; raises ValueError otherwise."""
    word = text.strip().lower()
    if word in ("b", "black"):
        return BLACK
    if word in ("w", "white"):
        return WHITE
    raise ValueError(f"'{text}' is not a colour")


# --- points -------------------------------------------------------------------

PASS = -1
# Two things, two values.  END is a book's stored "next move" of a game's last position (and
# of the position before an illegal move): stored as a code's next field (next + 2 = 0), so its
# value is part of the book's format; ``_kernels`` keeps a copy (tests/test_numba_cache.py
# checks it).  RESIGN is a chooser's answer, never stored: its own value, so an END that
# reached a chooser could never read as a resignation.
END = -2
RESIGN = -3
MIN_SIZE = 2  # the smallest board a game is played on (GTP, settings, the web page); a record may say 1
MAX_SIZE = 25
# |komi| allowed (GTP komi, loadsgf's KM): above the area of the largest board (625), so every
# komi that can decide a game fits; 1e308 would make scores meaningless (W+1e+308)
MAX_KOMI = 1000

# What one game record may cost, for the book's import and for GTP loadsgf alike (the engine may
# not import the book, so the one copy of these lives here and the book takes them from here).
# A game file's bytes: no game record is bigger (an archive member is read one byte past it).
MAX_RECORD_BYTES = 10 << 20
# The moves a record keeps: 4 x the board's points (19x19: 1,444; 9x9: 324), several times a
# long real game; a 400,000-pass file of 3.2 MB would otherwise be stored, replayed and
# exported whole.
MOVES_PER_POINT = 4
# Property values sgfmill may be given, per move of the move limit (the import: of the main line;
# loadsgf: of the whole file): a move's own, its comment, times and marks, and the setup stones,
# many times over.  sgfmill keeps about 200 bytes a value: 2.4 M comments in one node held 0.49 GB
# in the import's worker, 5.2 M empty values 434 MB in the engine.
VALUES_PER_MOVE = 32


def move_limit(size: int) -> int:
    """The moves a record of a ``size`` x ``size`` game keeps: ``MOVES_PER_POINT`` x its points."""
    return MOVES_PER_POINT * size * size
GTP_COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"  # no I, as in the GTP spec
SGF_LETTERS = "abcdefghijklmnopqrstuvwxyz"


class CoordinateError(ValueError):
    """A vertex, SGF point or (x, y) pair that does not name a point of the board."""


def check_size(size: int) -> None:
    """Raise CoordinateError unless ``1 <= size <= MAX_SIZE``."""
    if not 1 <= size <= MAX_SIZE:
        raise CoordinateError(f"board size {size} is not between 1 and {MAX_SIZE}")


def width(size: int) -> int:
    """Row stride of the padded array."""
    return size + 2


def array_length(size: int) -> int:
    """Number of cells in the padded array, border included."""
    return (size + 2) * (size + 2)


def xy_to_point(x: int, y: int, size: int) -> int:
    """Padded index of (x, y); raises CoordinateError when off the board."""
    if not (0 <= x < size and 0 <= y < size):
        raise CoordinateError(f"({x}, {y}) is off a {size}x{size} board")
    return (y + 1) * (size + 2) + x + 1


def point_to_xy(point: int, size: int) -> tuple[int, int]:
    """(x, y) of a padded index; raises CoordinateError for a border index or PASS."""
    y, x = divmod(point, size + 2)
    x, y = x - 1, y - 1
    if point == PASS or not (0 <= x < size and 0 <= y < size):
        raise CoordinateError(f"index {point} is not a point of a {size}x{size} board")
    return x, y


@cache
def board_points(size: int) -> tuple[int, ...]:
    """Every on-board point, row by row from the top-left corner."""
    return tuple(xy_to_point(x, y, size) for y in range(size) for x in range(size))


# --- GTP vertices -------------------------------------------------------------

def vertex_to_point(vertex: str, size: int) -> int:
    """Parse a GTP vertex (any case, ``pass`` accepted) into a point.

    Raises CoordinateError with the reason when the text is not a vertex of
    this board.
    """
    if not vertex.isascii():  # str.upper/isdigit accept letters and digits of other scripts
        raise CoordinateError(f"'{vertex}' is not a vertex")
    text = vertex.strip().upper()
    if text == "PASS":
        return PASS
    if len(text) < 2 or text[0] not in GTP_COLUMNS or not text[1:].isdigit():
        raise CoordinateError(f"'{vertex}' is not a vertex")
    x = GTP_COLUMNS.index(text[0])
    row = int(text[1:])
    if x >= size or not 1 <= row <= size:
        raise CoordinateError(f"'{vertex}' is off a {size}x{size} board")
    return xy_to_point(x, size - row, size)


def point_to_vertex(point: int, size: int) -> str:
    """GTP vertex of a point (``pass`` for PASS), upper case as GTP prints it."""
    if point == PASS:
        return "pass"
    x, y = point_to_xy(point, size)
    return f"{GTP_COLUMNS[x]}{size - y}"


# --- SGF points ---------------------------------------------------------------

def sgf_to_point(text: str, size: int) -> int:
    """Parse an SGF point (``pd``); ``''`` and, up to 19x19, ``tt`` are PASS."""
    if text == "" or (text == "tt" and size <= 19):
        return PASS
    if len(text) != 2 or text[0] not in SGF_LETTERS or text[1] not in SGF_LETTERS:
        raise CoordinateError(f"'{text}' is not an SGF point")
    return xy_to_point(SGF_LETTERS.index(text[0]), SGF_LETTERS.index(text[1]), size)


def point_to_sgf(point: int, size: int) -> str:
    """SGF text of a point; PASS is written as the empty string (FF[4])."""
    if point == PASS:
        return ""
    x, y = point_to_xy(point, size)
    return SGF_LETTERS[x] + SGF_LETTERS[y]


def parse_point(token: str, size: int) -> int:
    """A point from what a person types: an SGF point (``pd``), a GTP vertex (``Q16``) or ``pass``.

    Two lower-case letters are SGF; anything else is read as a GTP vertex.
    Raises CoordinateError with the reason.
    """
    text = token.strip()
    if text.lower() == "pass":
        return PASS
    if len(text) == 2 and text.isascii() and text.isalpha() and text.islower():
        return sgf_to_point(text, size)
    return vertex_to_point(text, size)



# --- sgfmill's (row, col) -----------------------------------------------------

def rowcol_to_point(move: tuple[int, int] | None, size: int) -> int:
    """The point of sgfmill's ``(row, col)`` (row 0 at the bottom); None is PASS."""
    if move is None:
        return PASS
    row, col = move
    return xy_to_point(col, size - 1 - row, size)


def point_to_rowcol(point: int, size: int) -> tuple[int, int] | None:
    """sgfmill's ``(row, col)`` of a point; PASS is None."""
    if point == PASS:
        return None
    x, y = point_to_xy(point, size)
    return size - 1 - y, x


# --- handicap and star points ---------------------------------------------------

# GTP 4.1.1: the order in which the fixed points are taken, as (column, row) with
# 0 = the near star line, 1 = the middle, 2 = the far star line, rows from the bottom.
_PATTERN = {
    2: ["00", "22"],
    3: ["00", "22", "02"],
    4: ["00", "22", "02", "20"],
    5: ["00", "22", "02", "20", "11"],
    6: ["00", "22", "02", "20", "01", "21"],
    7: ["00", "22", "02", "20", "01", "21", "11"],
    8: ["00", "22", "02", "20", "01", "21", "10", "12"],
    9: ["00", "22", "02", "20", "01", "21", "10", "12", "11"],
}


def max_fixed(size: int) -> int:
    """GTP 4.1.1: no fixed handicap below 7x7, at most 4 on 7x7 and even sizes, else 9."""
    if size < 7:
        return 0
    return 4 if size == 7 or size % 2 == 0 else 9


def fixed_points(n: int, size: int) -> list[int]:
    """The GTP fixed placement of ``n`` stones (2 <= n <= max_fixed(size)), as points."""
    edge = 2 if size < 13 else 3  # the star line: 3rd line below 13x13, else 4th
    line = {"0": edge, "1": (size - 1) // 2, "2": size - 1 - edge}
    return [xy_to_point(line[c], size - 1 - line[r], size) for c, r in _PATTERN[n]]



def star_points(size: int) -> list[int]:
    """The hoshi: corners and centre below 15x15 (as drawn on 9x9 and 13x13), all nine above,
    only the corners on even sizes and 7x7, none below 7x7 (the fixed-handicap points)."""
    n = min(max_fixed(size), 9 if size >= 15 else 5)
    return fixed_points(n, size) if n else []


# --- the rules' verdict -----------------------------------------------------------

class IllegalMove(Exception):
    """A move the rules forbid.

    ``reason`` is one of ``occupied``, ``suicide``, ``ko``, ``superko``,
    ``off board``.
    """

    def __init__(self, reason: str, point: int | None = None):
        super().__init__(reason)
        self.reason = reason
        self.point = point
