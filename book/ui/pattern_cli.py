"""``fuseki pattern``: the games that reach a corner, side or anywhere pattern, and their continuations.

The pattern is the region ``--region A:B`` (two opposite corner vertices) of a position
(``--moves`` or ``--sgf``/``--move``, as for ``fuseki search``); ``--any`` points match
anything, ``--empty-or-black``/``--empty-or-white`` points (Kombilo's ``x``/``o``) anything
but a white/black stone. Kombilo's options (``pattern.Pattern``): ``--fixed-colour`` (the
default) or ``--swap-colours``, ``--to-move black|white`` (who moves next),
``--moves-from``/``--moves-to`` (the move range; ``--moves-to`` is Kombilo's move limit).
Output: the region drawn as text with the continuations lettered, the table (letter, vertex,
colour of the player who played it, games, at once, after tenuki, that player's win rate:
``search.Continuation``, counted as Kombilo does; Black's and White's moves at one point are
two rows with one letter), ``tenuki N``, ``total N games``. A pattern that cannot be
searched for prints one line and exits with 2.

With ``--ai`` (``book.ui.ai_text.add_ai_options``) a whole-board pattern (the region is the
board, no "any" point: ``Pattern.whole_board``) is a position, and its continuations its next
moves: each gets KataGo's win rate, lead and loss for the player to move, and the marks, as
``fuseki search --ai`` gives them (``pattern_ai``: the searched position's values, stored or
asked, in the orientation the pattern was entered).  A smaller region says
``ai_text.WHOLE_BOARD_ONLY`` once instead.
"""

from __future__ import annotations

import sys
from dataclasses import replace

from fuseki.book.ui import ai_text, within
from fuseki.book.ui.book_cli import add_filter_options, add_position_options, filters_of, position_of
from fuseki.book.ui.cli_shared import add_book_option, book_location
from fuseki.engine.core import base
from fuseki.engine.core.base import BLACK, EMPTY, WHITE, point_to_xy, xy_to_point

LETTERS = "abcdefghijklmnopqrstuvwxyz"
TABLE_LIMIT = 20
TO_MOVE = {"either": EMPTY, "black": BLACK, "white": WHITE, "b": BLACK, "w": WHITE}


def add_commands(subparsers) -> None:
    p = subparsers.add_parser(
        "pattern", help="games reaching a corner, side or anywhere pattern, and what was played next",
        description="Pattern search. Example: fuseki pattern --moves \"Q16 R14\" --region N19:T13; within "
                    "an earlier answer: add --save-games p.json, then fuseki pattern --moves \"Q16 R14 O17\" "
                    "--region N19:T13 --within p.json (or --within-moves \"Q16 D4\")")
    add_position_options(p)
    p.add_argument("--region", required=True, metavar="A:B",
                   help="the pattern's rectangle by two opposite corners, e.g. N19:T13 (a corner region)")
    p.add_argument("--any", default="", metavar="POINTS", help="points of the region that match anything: R17,S18")
    p.add_argument("--empty-or-black", default="", metavar="POINTS",
                   help="points of the region that match empty or a black stone (Kombilo's x): R17,S18")
    p.add_argument("--empty-or-white", default="", metavar="POINTS",
                   help="points of the region that match empty or a white stone (Kombilo's o)")
    colours = p.add_mutually_exclusive_group()
    colours.add_argument("--fixed-colour", dest="swap_colours", action="store_false", default=False,
                         help="Black's stones must be black (Kombilo's fixed colour; the default)")
    colours.add_argument("--swap-colours", dest="swap_colours", action="store_true",
                         help="also find the pattern with colours exchanged (then who moves next too)")
    p.add_argument("--to-move", default="either", choices=["either", "black", "white"],
                   help="who moves next after the matched position, in the pattern's colours (default either)")
    p.add_argument("--moves-from", type=int, default=0, metavar="M",
                   help="count a match only after at least M moves (default 0)")
    p.add_argument("--moves-to", type=int, default=None, metavar="N",
                   help="count a match only after at most N moves (Kombilo's move limit; default none)")
    add_filter_options(p)
    within.add_within_options(p)
    add_book_option(p)
    ai_text.add_ai_options(p)
    p.set_defaults(run=run_pattern)


def parse_region(text: str, size: int) -> tuple[int, int, int, int]:
    """``N19:T13`` -> (x0, y0, x1, y1); PatternError for anything else."""
    from fuseki.book.analysis.patterns.pattern import PatternError

    corners = text.replace(" ", "").split(":")
    if len(corners) != 2:
        raise PatternError(f"bad region '{text}': give two opposite corners, e.g. N19:T13")
    try:
        (xa, ya), (xb, yb) = (point_to_xy(base.parse_point(v, size), size) for v in corners)
    except ValueError as exc:
        raise PatternError(f"bad region '{text}': {exc}") from None
    return min(xa, xb), min(ya, yb), max(xa, xb), max(ya, yb)


def pattern_from_board(board, region_text: str, any_text: str, swap: bool, empty_or_black: str = "",
                       empty_or_white: str = "", to_move: int = EMPTY, moves_from: int = 0,
                       moves_to: int | None = None):
    """The Pattern of ``board``'s region, less its "any" points, with its wildcard points
    (``EMPTY_OR_BLACK``/``EMPTY_OR_WHITE``, whatever the board holds there) and Kombilo's
    options; PatternError for a point given twice or outside the region."""
    from fuseki.book.analysis.patterns.pattern import EMPTY_OR_BLACK, EMPTY_OR_WHITE, Pattern, PatternError

    size = board.size
    region = parse_region(region_text, size)
    x0, y0, x1, y1 = region
    inside = {xy_to_point(x, y, size) for y in range(y0, y1 + 1) for x in range(x0, x1 + 1)}
    given: dict[int, int | None] = {}
    for name, text, value in (("--any", any_text, None), ("--empty-or-black", empty_or_black, EMPTY_OR_BLACK),
                              ("--empty-or-white", empty_or_white, EMPTY_OR_WHITE)):
        try:
            points = [base.parse_point(v, size) for v in text.replace(" ", "").split(",") if v]
        except ValueError as exc:
            raise PatternError(f"bad {name} point: {exc}") from None
        outside = sorted(set(points) - inside)
        if outside:
            raise PatternError(f"{name} points outside the region: "
                               + ", ".join(base.point_to_vertex(p, size) for p in outside))
        twice = sorted(p for p in set(points) if p in given)
        if twice:
            raise PatternError(f"{name} points given twice: "
                               + ", ".join(base.point_to_vertex(p, size) for p in twice))
        given.update((p, value) for p in points)
    cells = {p: given.get(p, board.color_at(p)) for p in inside if given.get(p, EMPTY) is not None}
    return Pattern(size, region, cells, swap_colours=swap, to_move=to_move, moves_from=moves_from,
                   moves_to=moves_to)


def pattern_from_options(board, region_text: str, get):
    """``pattern_from_board`` with its points and Kombilo's options as texts, ``get(name,
    default)`` giving each: ``any``, ``empty_or_black``, ``empty_or_white``, ``swap`` (1, true,
    on) or ``fixed_colour`` (0, false, off: the same), ``to_move`` (black, white, either, b, w),
    ``moves_from``, ``moves_to`` (the web API's parameters; the shell's words map to them);
    PatternError for a bad value."""
    from fuseki.book.analysis.patterns.pattern import PatternError

    swap = get("swap", "") in ("1", "true", "on") or get("fixed_colour", "") in ("0", "false", "off")
    try:
        to_move = TO_MOVE[get("to_move", "either").lower()]
        low, high = (None if not get(end, "") else int(get(end, "")) for end in ("moves_from", "moves_to"))
    except (KeyError, ValueError):
        raise PatternError("to_move is black, white or either; moves_from and moves_to are move numbers") from None
    return pattern_from_board(board, region_text, get("any", ""), swap, get("empty_or_black", ""),
                              get("empty_or_white", ""), to_move, low or 0, high)


def options_text(pattern) -> str:
    """Kombilo's options of ``pattern`` in words, after its kind: "fixed colour" or "colours also
    exchanged", then who moves next and the move range when asked."""
    words = ["colours also exchanged" if pattern.swap_colours else "fixed colour"]
    if pattern.to_move != EMPTY:
        words.append(("Black" if pattern.to_move == BLACK else "White") + " to move")
    if pattern.moves_from or pattern.moves_to is not None:
        high = "" if pattern.moves_to is None else pattern.moves_to
        words.append(f"moves {pattern.moves_from}-{high}")
    return ", ".join(words)


def row_letters(continuations, alphabet: str = LETTERS) -> list[str | None]:
    """One letter per continuation, shared by the rows of one point (Black's and White's):
    the points lettered in the order of their first row; None once the alphabet runs out."""
    of_point: dict[int, str | None] = {}
    for move in continuations:
        if move.point not in of_point:
            of_point[move.point] = alphabet[len(of_point)] if len(of_point) < len(alphabet) else None
    return [of_point[move.point] for move in continuations]


def pattern_lines(board, pattern, result=None) -> list[str]:
    """The region as text: X/O stones, ``.`` empty, ``?`` any, ``x``/``o`` empty or black/white
    (Kombilo's wildcards), letters on the continuations."""
    from fuseki.book.analysis.patterns.pattern import EMPTY_OR_BLACK, EMPTY_OR_WHITE

    x0, y0, x1, y1 = pattern.region
    marked: dict[int, str] = {}
    if result is not None:
        shown = result.continuations[:TABLE_LIMIT]
        for letter, move in zip(row_letters(shown), shown):
            for point in move.points:
                if point != base.PASS and board.color_at(point) == EMPTY:
                    marked.setdefault(point, letter)
    for y in range(y0, y1 + 1):
        for x in range(x0, x1 + 1):
            point = xy_to_point(x, y, pattern.size)
            if point not in pattern.cells:
                marked[point] = "?"
            elif pattern.cells[point] in (EMPTY_OR_BLACK, EMPTY_OR_WHITE):
                marked[point] = "x" if pattern.cells[point] == EMPTY_OR_BLACK else "o"
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
        vertex = base.point_to_vertex(move.point, result.pattern.size)
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
    kind = f"{result.pattern.kind} pattern, {options_text(result.pattern)}"
    return "\n".join(pattern_lines(board, result.pattern, result) + [kind] + lines)


def run_pattern(args) -> int:
    from fuseki.book.analysis.patterns.pattern import PatternError
    from fuseki.book.analysis.patterns.search import search
    from fuseki.book.storage.gamesets import GameSet
    from fuseki.book.storage.store import Book

    filters = filters_of(args)
    try:
        board = position_of(args)
        pattern = pattern_from_board(board, args.region, args.any, args.swap_colours, args.empty_or_black,
                                     args.empty_or_white, TO_MOVE[args.to_move], args.moves_from, args.moves_to)
    except PatternError as exc:
        print(f"fuseki pattern: {exc}", file=sys.stderr)
        return 2
    book = Book.open(book_location(args))
    try:
        games_within = within.within_of(args, book, board.size)
        result = search(book, pattern, replace(filters, within=games_within))
        if args.save_games:  # the games of this answer: those that matched
            within.save_games(args, book, GameSet(result.match_ids),
                              f"pattern {args.region} of {within.asked_text(args)}", "pattern")
        ai = pattern_ai(args, board, result, book) if args.ai else None  # the book's own values first
    finally:
        book.close()
    note = within.within_note(args, games_within)
    print(result_text(board, result, ai) + (f"\n{note.lstrip('; ')}" if note else ""))
    return 0
