"""A position's corners as text (``fuseki corners`` and the shell's ``corners``): each corner's
region drawn with its continuations lettered, their table (vertex, games, win rate) and tenuki,
the last move's corner first; with ``--ai`` KataGo's columns beside them (``corner_ai``)."""

from __future__ import annotations

from fuseki.book.ui.present import ai_text
from fuseki.book.ui.present.textboard import LETTERS
from fuseki.engine.core import base
from fuseki.engine.core.base import BLACK, COLOUR_NAME, EMPTY, WHITE

CORNER_ROWS = 8  # moves listed a corner


def corner_region(corner: int, size: int) -> tuple[int, int, int, int]:
    """(x0, y0, x1, y1) of a corner region (x from the left, y from the top)."""
    from fuseki.book.analysis.patterns.corners import corner_width

    width = corner_width(size)
    x0 = size - width if corner & 1 else 0
    y0 = size - width if corner & 2 else 0
    return x0, y0, x0 + width - 1, y0 + width - 1


def corner_lines(board, corner, last_point: int | None = None, ai_values: list | None = None) -> list[str]:
    """One corner (a ``corners.CornerMoves``) drawn as text: stones, letters on its moves, then its
    table; with ``ai_values`` (one ``book.analysis.ai.MoveValues`` or None per move listed) KataGo's columns."""
    size = board.size
    x0, y0, x1, y1 = corner_region(corner.corner, size)
    marked: dict[int, str] = {}
    for letter, move in zip(LETTERS[:CORNER_ROWS], corner.moves):
        for point in move.points:
            if point != base.PASS and board.color_at(point) == EMPTY:
                marked.setdefault(point, letter)
    if last_point is not None and last_point != base.PASS and board.color_at(last_point) in (BLACK, WHITE):
        marked[last_point] = "#" if board.color_at(last_point) == BLACK else "@"  # the last move
    lines = board.diagram(marked, (x0, y0, x1, y1))
    if ai_values is not None and corner.moves:
        lines.append(f"{'':4}{'move':<6}{'games':>7}  {'win %':>6} {ai_text.AI_HEAD}")
    listed = corner.moves[:CORNER_ROWS]
    # a move's share of the games with this corner (an older corner book, times only: of its times)
    games = corner.total if corner.games is None else corner.games
    notes = ai_text.ai_notes([m.games for m in listed], games, ai_values[:len(listed)]) \
        if ai_values is not None else []
    for index, move in enumerate(listed):
        vertex = base.point_to_vertex(move.point, size)
        line = f"{LETTERS[index]} - {vertex:<5} {move.games:>7}  {100 * move.winrate:5.1f}%"
        if ai_values is not None:
            ai = ai_values[index]
            line += f" {ai_text.ai_columns(ai)}{notes[index]}"
        lines.append(line)
    if len(corner.moves) > CORNER_ROWS:
        rest = corner.moves[CORNER_ROWS:]
        lines.append(f"    ... {len(rest)} more moves, {sum(m.times or m.games for m in rest)} times played")
    lines.append(f"tenuki {corner.tenuki}")
    return lines


def corners_text(board, color: int, found, ai=None) -> str:
    """What ``fuseki corners`` prints for a position: each corner, the last move's first; ``ai``
    (``corner_ai``'s (values, per corner values)) adds KataGo's columns and the footer."""
    from fuseki.book.analysis.patterns.corners import CORNER_NAMES
    from fuseki.book.play.corner_chooser import last_corner

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
        shown = ai[1].get(corner.corner, []) if ai is not None else None
        blocks.append("\n".join([f"{head}: {corner.total} continuations"]
                                + corner_lines(board, corner, last_point, shown)))
    who = COLOUR_NAME[color]
    footer = f"\n\n{ai_text.ai_footer(ai[0])}" if ai is not None else ""
    return f"{who} to play\n\n" + "\n\n".join(blocks) + footer


def corner_ai(args, board, color: int, found, book=None, ask_unless_none: bool = False):
    """(values, {corner: values of each continuation listed}) for ``corners_text``: the
    position's AI values (``ai_text.ai_values_of_moves``: stored, else KataGo's) and each
    continuation's (``book.analysis.ai.next_move_values`` of its one point, the vertex shown: a corner
    symmetric about its diagonal lists two points that the whole board may tell apart).
    With ``ask_unless_none``: None when nothing is stored and no KataGo is configured."""
    from fuseki.book.analysis.ai import one_point_each

    listed = [(c.corner, m) for c in found for m in c.moves[:CORNER_ROWS]]
    moves = one_point_each(m for _, m in listed)
    values, move_values = ai_text.ai_values_of_moves(args, board, color, moves, book, ask_unless_none)
    if values is None:
        return None
    per_corner: dict[int, list] = {}
    for (corner, _), value in zip(listed, move_values):
        per_corner.setdefault(corner, []).append(value)
    return values, per_corner


