"""The corner book's rows as ``/api/corners`` answers them (book.ui.web.app): one translation,
kept apart from the routes."""

from __future__ import annotations

from fuseki.book.ui.web.api_args import point_json
from fuseki.engine.core import base


def corners_json(found, board, letters: str) -> list[dict]:
    """The corner book's continuations of each corner, the last move's corner first (``last``).

    Corners of the same content (the same key: four empty corners at the start) have the same
    continuations: the first of them lists ``same``, the others, and each of its rows ``all_points``,
    its points in all of them; each other one says ``same_as``, that first corner (the page lists
    such continuations once).

    The counts are of the corner's stones, whatever the rest of the board (``corners``): a row's
    ``games`` are the games that played it in a corner like this one, never more than the book's
    games, its ``times`` how often it was played there, up to four times a game (the empty
    corner), its ``winrate`` that of the times; a corner's ``games`` are the games with a corner
    like it and a continuation, ``total`` and ``tenuki`` times (``tenuki_games``: games).
    ``found``: after ``book_chooser.within_games`` (an older corner book's games estimated)."""
    from fuseki.book.play.corner_chooser import last_corner

    last = last_corner(board, board.to_move)
    size = board.size
    ordered = sorted(found, key=lambda c: (c.corner != last, c.corner))
    first_of: dict[int, int] = {}
    for corner in ordered:
        first_of.setdefault(corner.key, corner.corner)
    out = []
    for corner in ordered:
        others = [c for c in ordered if c.key == corner.key and c.corner != corner.corner]
        leads = first_of[corner.key] == corner.corner
        points_of = {}  # local move -> its points in every corner of this content
        for c in [corner, *others] if leads else []:
            for m in c.moves:
                points_of.setdefault(m.move, []).extend(m.points)
        rows = [{"letter": letters[i] if i < len(letters) else None, **point_json(m.point, size),
                 "points": [base.point_to_sgf(p, size) for p in m.points], "games": m.games,
                 "times": m.times or m.games, "winrate": m.winrate,
                 **({"all_points": [base.point_to_sgf(p, size) for p in points_of[m.move]]} if leads else {})}
                for i, m in enumerate(corner.moves)]
        out.append({"corner": corner.corner, "last": corner.corner == last, "total": corner.total,
                    "games": corner.games, "tenuki": corner.tenuki, "tenuki_games": corner.tenuki_games,
                    "next": rows,
                    "same": [c.corner for c in others] if leads else [],
                    "same_as": None if leads else first_of[corner.key]})
    return out
