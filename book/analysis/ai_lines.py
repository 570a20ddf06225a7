"""KataGo's line (principal variation) from a book move, out of the stored values only.

``move_line(ai, values, board, to_move, move, child_values)``: the line stored with KataGo's
candidate when its search of the position visited the move (``AiMove.pv``), else (no line
stored with it, or a move its search did not visit) the move followed by the best line of the
stored position after it (its best reply alone when that position has no line stored, the
move alone when nothing is stored after it).  Points in
``board``'s orientation; the first is a point of the move's orbit, not always ``move.point``
(a symmetric position's stored line starts where KataGo searched).  Shared by the engine's
analysis lines (``book.play.book_chooser``) and ``book.analysis.mistakes``; never asks KataGo.
"""

from __future__ import annotations

from collections.abc import Callable

from fuseki.engine.core.base import IllegalMove, opponent


def move_line(ai, values, board, to_move: int, move, child_values: Callable) -> tuple[int, ...]:
    """See the module docstring.  ``ai``: the move's ``book.analysis.ai.MoveValues`` (its ``source``);
    ``values``: the position's ``AiValues``; ``move``: ``point`` and ``points``;
    ``child_values(board, to_move, network)``: ``AiValueStores.values``."""
    from fuseki.book.analysis.ai import SEARCH

    own = getattr(ai, "pv", None)  # a reader that already carries the line
    if own:
        return tuple(own)
    if ai.source == SEARCH:
        found = next((m for m in values.moves if set(m.points) & set(move.points)), None)
        line = tuple(getattr(found, "pv", ()) or ()) if found is not None else ()
        if line:
            return line
    child = board.copy()
    try:
        child.play(to_move, move.point)
    except IllegalMove:  # its values came from the position after it, so it was legal there
        return (move.point,)
    after = child_values(child, opponent(to_move), values.settings.network)
    if after is None or not after.moves:
        return (move.point,)
    best = after.moves[0]
    return (move.point, *(getattr(best, "pv", ()) or (best.point,)))


def starting_at(board, to_move: int, line, point: int) -> tuple[int, ...]:
    """``line`` (``board``'s orientation) from ``point``: as it is when it starts there, else
    turned by the board's own symmetry that takes its first move to ``point`` (a move's orbit
    under a symmetric position); ``(point,)`` when the line is empty or no symmetry does."""
    from fuseki.engine.core import base, coords

    line = tuple(line)
    if not line:
        return (point,)
    if line[0] == point:
        return line
    keys = board.symmetric_keys(to_move)
    tables = coords.symmetry_table(board.size).tolist()
    for s in range(8):
        if keys[s] == keys[0] and tables[s][line[0]] == point:
            return tuple(q if q == base.PASS else tables[s][q] for q in line)
    return (point,)
