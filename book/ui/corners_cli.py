"""``fuseki corners``: build the book's corner book, and show what was played next in each corner.

The corner book (``book.patterns.corners``) is what the engine plays once the whole board
has left the book.  ``fuseki corners --book B`` builds it (or brings it up to date: it is
rebuilt from the pattern index when games were added); with a position (``--moves`` or
``--sgf``/``--move``, as for ``fuseki search``) it then prints each corner: the region drawn
as text with its continuations lettered, the table (letter, vertex, games, win rate of the
player who played it), and how often players left the corner (tenuki) instead.
"""

from __future__ import annotations

import sys

from fuseki.book.ui.book_cli import add_position_options, position_of
from fuseki.book.ui.cli_shared import add_book_option, book_location
from fuseki.engine.core import coords
from fuseki.engine.core.base import BLACK, EMPTY, WHITE

LETTERS = "abcdefghijklmnopqrstuvwxyz"
TABLE_LIMIT = 8
CORNER_NAMES = ("top left", "top right", "bottom left", "bottom right")


def add_commands(subparsers) -> None:
    p = subparsers.add_parser(
        "corners", help="build the corner book (joseki for the engine) and show a position's corners",
        description="Build or update the book's corner book (what strong players played next in a "
                    "corner, whatever the rest of the board), then show each corner of the position. "
                    "Example: fuseki corners --book games.sqlite --moves \"Q16 D4 Q3 D16 R5\"")
    add_position_options(p)
    p.add_argument("--color", choices=("B", "W", "b", "w"), help="the player to move (default: the next player)")
    p.add_argument("--build-only", action="store_true", help="build the corner book, show nothing")
    add_book_option(p)
    p.set_defaults(run=run_corners)


def corner_region(corner: int, size: int) -> tuple[int, int, int, int]:
    """(x0, y0, x1, y1) of a corner region (x from the left, y from the top)."""
    from fuseki.book.patterns.corners import corner_width

    width = corner_width(size)
    x0 = size - width if corner & 1 else 0
    y0 = size - width if corner & 2 else 0
    return x0, y0, x0 + width - 1, y0 + width - 1


def corner_lines(board, corner, last_point: int | None = None) -> list[str]:
    """One corner (a ``corners.CornerMoves``) drawn as text: stones, letters on its moves, then its table."""
    size = board.size
    x0, y0, x1, y1 = corner_region(corner.corner, size)
    marked: dict[int, str] = {}
    for letter, move in zip(LETTERS[:TABLE_LIMIT], corner.moves):
        for point in move.points:
            if point != coords.PASS and board.color_at(point) == EMPTY:
                marked.setdefault(point, letter)
    if last_point is not None and last_point != coords.PASS and board.color_at(last_point) in (BLACK, WHITE):
        marked[last_point] = "#" if board.color_at(last_point) == BLACK else "@"  # the last move
    lines = board.diagram(marked, (x0, y0, x1, y1))
    for index, move in enumerate(corner.moves[:TABLE_LIMIT]):
        vertex = coords.point_to_vertex(move.point, size)
        lines.append(f"{LETTERS[index]} - {vertex:<5} {move.games:>7}  {100 * move.winrate:5.1f}%")
    if len(corner.moves) > TABLE_LIMIT:
        rest = corner.moves[TABLE_LIMIT:]
        lines.append(f"    ... {len(rest)} more moves, {sum(m.games for m in rest)} times played")
    lines.append(f"tenuki {corner.tenuki}")
    return lines


def corners_text(board, color: int, found) -> str:
    """What ``fuseki corners`` prints for a position: each corner, the last move's first."""
    from fuseki.book.corner_chooser import last_corner

    last = last_corner(board, color)
    last_point = board.moves[-1][1] if board.moves else None
    order = sorted(found, key=lambda c: (c.corner != last, c.corner))
    blocks = []
    for corner in order:
        head = f"{CORNER_NAMES[corner.corner]} corner"
        if corner.corner == last:
            head += " (the last move's)"
        if not corner.moves and not corner.tenuki:
            blocks.append(f"{head}: not in the corner book")
            continue
        blocks.append("\n".join([f"{head}: {corner.total} continuations"] + corner_lines(board, corner, last_point)))
    who = "Black" if color == BLACK else "White"
    return f"{who} to play\n\n" + "\n\n".join(blocks)


def run_corners(args) -> int:
    from fuseki.book.patterns import corner_build, corners
    from fuseki.book.storage.store import Book, BookError

    board = position_of(args)
    color = board.to_move if args.color is None else (BLACK if args.color.upper() == "B" else WHITE)
    location = book_location(args)
    try:
        book = Book.open(location)
    except BookError:
        book = Book.open(location, readonly=True)  # a statistics book (the built-in one): as built
    try:
        corner_build.update(book)
        if args.build_only:
            return 0
        found = corners.of_book(book, board, color)
    finally:
        book.close()
    if found is None:
        print(f"fuseki corners: {location} has no corner book", file=sys.stderr)
        return 1
    if not found:
        print(f"fuseki corners: a {board.size}x{board.size} board has no corners", file=sys.stderr)
        return 2
    print(corners_text(board, color, found))
    return 0
