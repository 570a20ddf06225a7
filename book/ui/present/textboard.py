"""The book's text views: the board with next-move letters, the next-move table, a games list.

Shared by ``fuseki search`` and ``fuseki shell``.  The board is drawn as GNU Go's
``showboard`` draws it -- GTP column letters (no ``I``) above and below, row numbers
on both sides, ``X`` Black, ``O`` White, ``.`` empty, ``+`` star points -- with
lower-case letters on the next moves: ``a`` the most played, and every point
equivalent to it under the position's symmetry marked with the same letter.

Nothing here queries the book: the functions take a ``NextMoves`` / ``GameRow`` list.

Text from records and files (player names, events, file and member names) reaches a terminal
only through ``printable``: a name holding ``\x1b[31m`` or a NUL must not colour, move or
clear the user's terminal.
"""

from __future__ import annotations

from fuseki.engine.core import base
from fuseki.engine.core.base import COLOUR_NAME, EMPTY

TABLE_LIMIT = 20  # rows of a next-move or continuation table in the terminal (fuseki search, fuseki pattern)
# The one alphabet of table rows, for every way in: one letter per row, none on the board without one.
LETTERS = "abcdefghijklmnopqrstuvwxyz"[:TABLE_LIMIT]
# The shell's and the web page's tables letter their 12 most played moves: a letter is also a move
# the player types or clicks, and 12 stay readable on the board beside the stones.
SHORT_LETTERS = LETTERS[:12]


def printable(text: str) -> str:
    """``text`` with every character a terminal would act on written as its Python escape
    (``\x1b``, ``\x00``, ``\x9b``, ``\u202e``: control and format characters); newlines are
    kept, so a text of several lines keeps its lines."""
    if text.isprintable() or all(c.isprintable() or c == "\n" for c in text):
        return text
    return "".join(c if c.isprintable() or c == "\n" else ascii(c)[1:-1] for c in text)


def one_line(text: str) -> str:
    """``printable`` for a table's cell: a newline is escaped too."""
    return printable(text).replace("\n", "\\n")


def marks(found, letters: str = LETTERS) -> dict[int, str]:
    """point -> letter for the first ``len(letters)`` next moves (passes have no point)."""
    marked: dict[int, str] = {}
    if found is None:
        return marked
    for letter, move in zip(letters, found.moves):
        for point in move.points:
            if point != base.PASS:
                marked.setdefault(point, letter)
    return marked


def board_lines(board, found=None, letters: str = LETTERS) -> list[str]:
    """The board as text lines (``Board.diagram``), the next moves of ``found`` (a NextMoves)
    lettered where no stone is."""
    marked = {point: letter for point, letter in marks(found, letters).items() if board.color_at(point) == EMPTY}
    return board.diagram(marked)


TABLE_HEAD = "    move   games  win %"  # over move_table's columns (letter - vertex, games, win rate)


def move_table(found, size: int, letters: str = LETTERS, limit: int = TABLE_LIMIT) -> str:
    """A head (``TABLE_HEAD``), ``a - Q16   5405  52.1%`` lines (letter, vertex, games, win rate of
    the player who played it) and the total."""
    lines = [TABLE_HEAD] if found.moves else []
    for index, move in enumerate(found.moves[:limit]):
        letter = letters[index] if index < len(letters) else " "
        vertex = base.point_to_vertex(move.point, size)
        lines.append(f"{letter} - {vertex:<5} {move.games:>6}  {100 * move.winrate:5.1f}%")
    if len(found.moves) > limit:
        rest = found.moves[limit:]
        lines.append(f"    ... {len(rest)} more moves, {sum(m.games for m in rest)} games")
    total = f"total {found.total} games"
    if found.ended:
        total += f", {found.ended} ended here"
    if not found.total:
        total = "no games reached this position"
    lines.append(total)
    return "\n".join(lines)


def search_text(board, found, letters: str = LETTERS, note: str = "", verbose: bool = False) -> str:
    """What ``fuseki search`` prints: the board, who plays (with ``verbose``, after the position's
    hash and canonical key: the numbers a bug report or a look into the database needs), the table."""
    lines = board_lines(board, found, letters)
    side = COLOUR_NAME[found.to_move]
    keys = f"hash {board.position_key(found.to_move):016x}  canonical {found.key:016x}  " if verbose else ""
    lines.append(f"{keys}{side} to play{note}")
    lines.append(move_table(found, board.size, letters))
    return "\n".join(lines)


def games_table(rows) -> str:
    """One line per GameRow: id, players with ranks, date, result, the move the position came at."""
    lines = [f"{'id':>7}  {'Black':<22} {'White':<22} {'date':<10} {'result':<10} {'move':>4}"]
    for row in rows:
        black = one_line(f"{row.black} {row.black_rank}".strip())[:22]
        white = one_line(f"{row.white} {row.white_rank}".strip())[:22]
        date, result = one_line(row.date or "")[:10], one_line(row.result or "")[:10]
        lines.append(f"{row.id:>7}  {black:<22} {white:<22} {date:<10} {result:<10} {row.move_number:>4}")
    return "\n".join(lines)


def row_letters(continuations, alphabet: str = LETTERS) -> list[str | None]:
    """One letter per continuation, shared by the rows of one point (Black's and White's):
    the points lettered in the order of their first row; None once the alphabet runs out."""
    of_point: dict[int, str | None] = {}
    for move in continuations:
        if move.point not in of_point:
            of_point[move.point] = alphabet[len(of_point)] if len(of_point) < len(alphabet) else None
    return [of_point[move.point] for move in continuations]
