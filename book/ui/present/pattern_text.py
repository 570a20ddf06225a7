"""A pattern search's answer as text (``fuseki pattern`` and the shell's ``pattern``): the region
drawn with its continuations lettered, their table (``search.Continuation``: letter, vertex,
colour, games, at once, after tenuki, win rate), tenuki, the total and, for a search in parts,
how far it got; with ``--ai`` KataGo's columns for a whole-board pattern (``pattern_ai``)."""

from __future__ import annotations

from fuseki.book.ui.present import ai_text
from fuseki.book.ui.present.textboard import TABLE_LIMIT, row_letters
from fuseki.book.ui.reading import options_text
from fuseki.engine.core import base
from fuseki.engine.core.base import COLOUR_NAME, EMPTY, xy_to_point


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
    """``result_text``'s ``ai``: ``WHOLE_BOARD_ONLY`` (``book.analysis.ai``) for a pattern smaller than the
    board, else (values, each listed continuation's values) of the searched position
    (``ai_text.ai_values_of_moves``); with ``ask_unless_none``, ``ai_text.NO_VALUES`` when
    nothing is stored and no KataGo is configured."""
    if not result.pattern.whole_board:
        from fuseki.book.analysis.ai import WHOLE_BOARD_ONLY

        return WHOLE_BOARD_ONLY
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
    notes = ai_text.ai_notes([m.games for m in shown], result.total, ai[1][:len(shown)]) if columns else []
    for index, (letter, move) in enumerate(zip(row_letters(shown), shown)):
        vertex = base.point_to_vertex(move.point, result.pattern.size)
        colour = COLOUR_NAME[move.colour]
        line = (f"{letter} - {vertex:<5} {colour:<6} {move.games:>6} {move.at_once:>8} {move.after_tenuki:>13}"
                f"  {100 * move.winrate:5.1f}%")
        if columns:
            value = ai[1][index]
            lines.append(f"{line} {ai_text.ai_columns(value)}{notes[index]}")
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
    if result.before or not result.complete:
        lines.append(progress_line(result))
    kind = f"{result.pattern.kind} pattern, {options_text(result.pattern)}"
    return "\n".join(pattern_lines(board, result.pattern, result) + [kind] + lines)


def progress_line(result) -> str:
    """How far a search in parts got (``search.PatternResult``), and how to go on."""
    done = result.before + result.scanned
    part = f" (this part: {result.scanned:,} games from game id {result.first_id})" if result.before else ""
    if result.complete:
        return f"scanned to the end: {done:,} of {result.games:,} games ({result.percent:.1f}%){part}"
    return (f"stopped at the budget: {done:,} of {result.games:,} games scanned ({result.percent:.1f}%){part}; "
            f"go on with --from {result.next_id}")


