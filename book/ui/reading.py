"""What people type, read one way by every way in (the ``fuseki`` command, the shell, the web
page): years and periods, moves, a game record's position, a pattern's region, points and
Kombilo's options, and the filters in words.  No argparse and no HTTP here: each way in
hands texts over and says the ValueError/PatternError in its own way."""

from __future__ import annotations

from fuseki.engine.core import base
from fuseki.engine.core.base import BLACK, COLOUR_NAME, EMPTY, WHITE, point_to_xy, xy_to_point


def filters_note(filters) -> str:
    """The filters in words (``years 2010-2016; player lee; winner B``), "" for none."""
    years = "" if filters.year_from is None and filters.year_to is None else "years " + "-".join(
        "" if y is None else str(y) for y in (filters.year_from, filters.year_to))
    return "; ".join(x for x in (years, filters.player and f"player {filters.player}", *filters.describe()) if x)


def parse_years(text: str | None) -> tuple[int | None, int | None]:
    """``2010-2016``, ``2010-``, ``-2016`` or ``2014`` as (from, to); ValueError otherwise."""
    if not text:
        return None, None
    start, dash, end = text.strip().partition("-")
    try:
        low = int(start) if start.strip() else None
        high = int(end) if end.strip() else (None if dash else low)
    except ValueError:
        raise ValueError(f"bad year range '{text}': use 2010-2016, 2010-, -2016 or 2014") from None
    if low is None and high is None:
        raise ValueError(f"bad year range '{text}': use 2010-2016, 2010-, -2016 or 2014")
    if low is not None and high is not None and low > high:
        raise ValueError(f"bad year range '{text}': {low} is after {high}")
    return low, high


def parse_periods(text: str) -> tuple[tuple[int | None, int | None], tuple[int | None, int | None]]:
    """``2005-2007:2008-2009`` (each side as ``--year`` takes it) as two (from, to); ValueError otherwise."""
    first, colon, second = (text or "").partition(":")
    if not colon or not first.strip() or not second.strip():
        raise ValueError(f"bad periods '{text}': use FROM-TO:FROM-TO, e.g. 2005-2007:2008-2009")
    return parse_years(first), parse_years(second)


def parse_moves(text: str, size: int):
    """A Board after the moves (SGF letters or GTP vertices, Black first, alternating)."""
    from fuseki.book.formats.positions import board_after_moves

    return board_after_moves(text.replace(",", " ").split(), size)


def board_from_sgf(path: str, move: int):
    """A Board at the position after ``move`` moves of the game in ``path`` (setup included)."""
    from fuseki.book.formats.positions import board_after_record
    from fuseki.book.formats.sgf_reader import read_games

    with open(path, "rb") as handle:
        record = read_games(handle.read(), path)[0]
    return board_after_record(record, move, strict=True)


TO_MOVE = {"either": EMPTY, "black": BLACK, "white": WHITE, "b": BLACK, "w": WHITE}


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
        words.append(f"{COLOUR_NAME[pattern.to_move]} to move")
    if pattern.moves_from or pattern.moves_to is not None:
        high = "" if pattern.moves_to is None else pattern.moves_to
        words.append(f"moves {pattern.moves_from}-{high}")
    return ", ".join(words)
