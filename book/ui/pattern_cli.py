"""``fuseki pattern``: the games that reach a corner, side or anywhere pattern, and their continuations.

The pattern is the region ``--region A:B`` (two opposite corner vertices) of a position
(``--moves`` or ``--sgf``/``--move``, as for ``fuseki search``); ``--any`` points match
anything.  Output: the region drawn as text with the continuations lettered, the table
(letter, vertex, colour of the player who played it, games, at once, after tenuki, that
player's win rate: ``search.Continuation``, counted as Kombilo does; Black's and White's
moves at one point are two rows with one letter), ``tenuki N``, ``total N games``.
A pattern that cannot be searched for prints one line and exits with 2.

With ``--ai`` (``book.ui.ai_text.add_ai_options``) a whole-board pattern (the region is the
board, no "any" point: ``Pattern.whole_board``) is a position, and its continuations its next
moves: each gets KataGo's win rate, lead and loss for the player to move, and the marks, as
``fuseki search --ai`` gives them (``pattern_ai``: the searched position's values, stored or
asked, in the orientation the pattern was entered).  A smaller region says
``ai_text.WHOLE_BOARD_ONLY`` once instead.
"""

from __future__ import annotations

import sys

from fuseki.book.ui import ai_text
from fuseki.book.ui.book_cli import add_filter_options, add_position_options, parse_years, position_of
from fuseki.book.ui.cli_shared import add_book_option, book_location
from fuseki.engine.core import coords
from fuseki.engine.core.base import BLACK, EMPTY, point_to_xy, xy_to_point

LETTERS = "abcdefghijklmnopqrstuvwxyz"
TABLE_LIMIT = 20


def add_commands(subparsers) -> None:
    p = subparsers.add_parser(
        "pattern", help="games reaching a corner, side or anywhere pattern, and what was played next",
        description="Pattern search. Example: fuseki pattern --moves \"Q16 R14\" --region N19:T13")
    add_position_options(p)
    p.add_argument("--region", required=True, metavar="A:B",
                   help="the pattern's rectangle by two opposite corners, e.g. N19:T13 (a corner region)")
    p.add_argument("--any", default="", metavar="POINTS", help="points of the region that match anything: R17,S18")
    p.add_argument("--swap-colours", action="store_true", help="also find the pattern with colours exchanged")
    add_filter_options(p)
    add_book_option(p)
    ai_text.add_ai_options(p)
    p.set_defaults(run=run_pattern)


def parse_region(text: str, size: int) -> tuple[int, int, int, int]:
    """``N19:T13`` -> (x0, y0, x1, y1); PatternError for anything else."""
    from fuseki.book.patterns.pattern import PatternError

    corners = text.replace(" ", "").split(":")
    if len(corners) != 2:
        raise PatternError(f"bad region '{text}': give two opposite corners, e.g. N19:T13")
    try:
        (xa, ya), (xb, yb) = (point_to_xy(coords.parse_point(v, size), size) for v in corners)
    except ValueError as exc:
        raise PatternError(f"bad region '{text}': {exc}") from None
    return min(xa, xb), min(ya, yb), max(xa, xb), max(ya, yb)


def pattern_from_board(board, region_text: str, any_text: str, swap: bool):
    """The Pattern of ``board``'s region, less its "any" points."""
    from fuseki.book.patterns.pattern import Pattern, PatternError

    size = board.size
    region = parse_region(region_text, size)
    x0, y0, x1, y1 = region
    try:
        anything = {coords.parse_point(v, size) for v in any_text.replace(" ", "").split(",") if v}
    except ValueError as exc:
        raise PatternError(f"bad --any point: {exc}") from None
    inside = {xy_to_point(x, y, size) for y in range(y0, y1 + 1) for x in range(x0, x1 + 1)}
    outside = sorted(anything - inside)
    if outside:
        raise PatternError("--any points outside the region: "
                           + ", ".join(coords.point_to_vertex(p, size) for p in outside))
    cells = {p: board.color_at(p) for p in inside if p not in anything}
    return Pattern(size, region, cells, swap_colours=swap)


def row_letters(continuations, alphabet: str = LETTERS) -> list[str | None]:
    """One letter per continuation, shared by the rows of one point (Black's and White's):
    the points lettered in the order of their first row; None once the alphabet runs out."""
    of_point: dict[int, str | None] = {}
    for move in continuations:
        if move.point not in of_point:
            of_point[move.point] = alphabet[len(of_point)] if len(of_point) < len(alphabet) else None
    return [of_point[move.point] for move in continuations]


def pattern_lines(board, pattern, result=None) -> list[str]:
    """The region as text: X/O stones, ``.`` empty, ``?`` any, letters on the continuations."""
    x0, y0, x1, y1 = pattern.region
    marked: dict[int, str] = {}
    if result is not None:
        shown = result.continuations[:TABLE_LIMIT]
        for letter, move in zip(row_letters(shown), shown):
            for point in move.points:
                if point != coords.PASS and board.color_at(point) == EMPTY:
                    marked.setdefault(point, letter)
    for y in range(y0, y1 + 1):
        for x in range(x0, x1 + 1):
            point = xy_to_point(x, y, pattern.size)
            if point not in pattern.cells:
                marked[point] = "?"
    return board.diagram(marked, pattern.region)


def pattern_ai(args, board, result, book=None, ask_unless_none: bool = False):
    """``result_text``'s ``ai``: ``ai_text.WHOLE_BOARD_ONLY`` for a pattern smaller than the
    board, else (values, each listed continuation's values) of the searched position
    (``ai_text.ai_values_of_moves``); with ``ask_unless_none``, ``ai_text.NO_VALUES`` when
    nothing is stored and no KataGo is configured."""
    if not result.pattern.whole_board:
        return ai_text.WHOLE_BOARD_ONLY
    shown = result.continuations[:TABLE_LIMIT]
    values, move_values = ai_text.ai_values_of_moves(args, board, board.to_move, shown, book, ask_unless_none)
    return ai_text.NO_VALUES if values is None else (values, move_values)


def result_text(board, result, ai=None) -> str:
    """What ``fuseki pattern`` prints after the board; ``ai`` (``pattern_ai``'s) adds KataGo's
    columns and their footer, or its one line."""
    lines = []
    columns = isinstance(ai, tuple)
    head = "    move  colour  games  at once  after tenuki   win %"
    lines.append(f"{head} {ai_text.AI_HEAD}" if columns else head)
    shown = result.continuations[:TABLE_LIMIT]
    for index, (letter, move) in enumerate(zip(row_letters(shown), shown)):
        vertex = coords.point_to_vertex(move.point, result.pattern.size)
        colour = "Black" if move.colour == BLACK else "White"
        line = (f"{letter} - {vertex:<5} {colour:<6} {move.games:>6} {move.at_once:>8} {move.after_tenuki:>13}"
                f"  {100 * move.winrate:5.1f}%")
        if columns:
            value = ai[1][index]
            lines.append(f"{line} {ai_text.ai_columns(value)}{ai_text.ai_note(move.games, result.total, value)}")
            continue
        lines.append(line)
    if len(result.continuations) > TABLE_LIMIT:
        rest = result.continuations[TABLE_LIMIT:]
        lines.append(f"    ... {len(rest)} more moves, {sum(m.games for m in rest)} games")
    lines.append(f"tenuki {result.tenuki.games} (no later move inside the region)")
    lines.append(f"total {result.total} games")
    if columns:
        lines.append(ai_text.ai_footer(ai[0]))
    elif ai is not None:
        lines.append(ai)
    return "\n".join(pattern_lines(board, result.pattern, result) + [f"{result.pattern.kind} pattern"] + lines)


def run_pattern(args) -> int:
    from fuseki.book.patterns.pattern import PatternError
    from fuseki.book.patterns.search import search
    from fuseki.book.storage.store import Book, Filters

    low, high = parse_years(args.year)
    try:
        board = position_of(args)
        pattern = pattern_from_board(board, args.region, args.any, args.swap_colours)
    except PatternError as exc:
        print(f"fuseki pattern: {exc}", file=sys.stderr)
        return 2
    book = Book.open(book_location(args))
    try:
        result = search(book, pattern, Filters(year_from=low, year_to=high, player=args.player or None))
        ai = pattern_ai(args, board, result, book) if args.ai else None  # the book's own values first
    finally:
        book.close()
    print(result_text(board, result, ai))
    return 0
