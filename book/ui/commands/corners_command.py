"""``fuseki corners``: build the book's corner book, and show what was played next in each corner.

The corner book (``book.analysis.patterns.corners``) is what the engine plays once the whole board
has left the book.  ``fuseki corners --book B`` builds it (or brings it up to date: it is
rebuilt from the pattern index when games were added); with a position (``--moves`` or
``--sgf``/``--move``, as for ``fuseki search``) it then prints each corner: the region drawn
as text with its continuations lettered, the table (letter, vertex, games, win rate of the
player who played it), and how often players left the corner (tenuki) instead.

With ``--ai`` (``book.ui.present.ai_text.add_ai_options``) each continuation also gets KataGo's
win rate, lead and loss for the player who plays it, and the marks, as ``fuseki search --ai``
gives the next moves (``book.ui.present.corner_text.corner_ai``: the values of the whole
position, stored or asked, through ``book.analysis.ai.next_move_values``; a continuation is its
one point on this board, the vertex shown); ``tenuki`` has no single point and no values.  The
last line names KataGo's network, rules, komi and visits.
"""

from __future__ import annotations

import sys

from fuseki.book.ui.cli_shared import add_book_option, add_position_options, book_location, position_of
from fuseki.book.ui.present import ai_text
from fuseki.book.ui.present.corner_text import corner_ai, corners_text
from fuseki.engine.core.base import BLACK, WHITE


def add_command(subparsers) -> None:
    p = subparsers.add_parser(
        "corners", help="build the corner book (joseki for the engine) and show a position's corners",
        description="Build or update the book's corner book (what strong players played next in a "
                    "corner, whatever the rest of the board), then show each corner of the position. "
                    "Example: fuseki corners --book games.sqlite --moves \"Q16 D4 Q3 D16 R5\"")
    add_position_options(p)
    p.add_argument("--color", choices=("B", "W", "b", "w"), help="the player to move (default: the next player)")
    p.add_argument("--build-only", action="store_true", help="build the corner book, show nothing")
    add_book_option(p)
    ai_text.add_ai_options(p)
    p.set_defaults(run=run_corners)


def run_corners(args) -> int:
    from fuseki.book.analysis.patterns import corner_build
    from fuseki.book.play.book_chooser import book_corners
    from fuseki.book.storage.connect import BookError
    from fuseki.book.storage.store import Book

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
        found = book_corners(book, board, color)  # games, as the page and the engine show them
        if found is None:
            print(f"fuseki corners: {location} has no corner book", file=sys.stderr)
            return 1
        if not found:
            print(f"fuseki corners: a {board.size}x{board.size} board has no corners", file=sys.stderr)
            return 2
        ai = corner_ai(args, board, color, found, book) if args.ai else None  # the book's own values first
    finally:
        book.close()
    print(corners_text(board, color, found, ai))
    return 0
