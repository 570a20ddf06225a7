"""The corner book as the book chooser's second voice: joseki once the whole board is out of book.

``pick_corner(found, board, color, ...)`` chooses among the continuations the corner book
(``book.analysis.patterns.corners``) gives for the four corners of the position:

1. the corner of the opponent's last move first: its continuations played in at least
   ``min_games`` games and, as one more entry, *tenuki* (how often players left that corner
   at this point); the policy orders them (``best``: the most played; ``weighted``: drawn in
   proportion to games; ``winrate``: the best for the player), and a drawn tenuki moves on;
2. then the continuations of every other corner, pooled and ordered by the same policy (with
   ``best``: the corner with the most-played continuation).

A move must be legal now (``board.legal_reason``: ko, superko, suicide; the rest of the board
may differ from the games the corner came from) and must not fill the player's own eye;
a symmetric corner's move stands for two points, one of the legal ones is drawn.  None when
no corner has such a move: the next chooser of the chain answers.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from fuseki.book.play.policies import policy_order
from fuseki.engine.players.chooser import eligible


@dataclass(frozen=True)
class CornerChoice:
    """What the corner book picked: the point, the corner move it stands for, the corner."""

    point: int
    move: object  # the corners.CornerMove
    corner: int
    skipped: tuple[tuple[int, str], ...] = ()  # (point, reason) of moves passed over


def last_corner(board, color: int) -> int:
    """The corner of the opponent's last move on ``board`` (-1: none, a pass, no move yet)."""
    from fuseki.book.analysis.patterns.corners import corner_of_point

    if not board.moves:
        return -1
    mover, point = board.moves[-1]
    return corner_of_point(point, board.size) if mover != color else -1


def pick_corner(found: Sequence, board, color: int, policy: str = "best", min_games: int = 1,
                temperature: float = 1.0, rng: random.Random | None = None) -> CornerChoice | None:
    """The corner move to play (see the module docstring), or None.

    ``found``: ``corners.lookup``'s answer for ``board`` with ``color`` to play.  Does not
    change ``board``.
    """
    from fuseki.book.analysis.patterns.corners import TENUKI, CornerMove

    rng = rng or random.Random()
    skipped: list[tuple[int, str]] = []
    last = last_corner(board, color)
    here = next((c for c in found if c.corner == last), None)
    if here is not None:
        entries = list(eligible(here.moves, min_games))
        tenuki_games = here.tenuki if here.tenuki_games is None else here.tenuki_games
        tenuki = None
        if tenuki_games >= min_games:  # leaving the corner, as one more entry the policy orders
            tenuki = CornerMove(TENUKI, (), tenuki_games, here.tenuki_wins, here.corner, TENUKI, here.tenuki)
            entries.append(tenuki)
        for entry in policy_order(entries, policy, temperature, rng):
            if entry is tenuki:
                break
            point = _playable(entry, board, color, rng, skipped)
            if point is not None:
                return CornerChoice(point, entry, last, tuple(skipped))
    others = [m for c in found if c.corner != last for m in eligible(c.moves, min_games)]
    for entry in policy_order(others, policy, temperature, rng):
        point = _playable(entry, board, color, rng, skipped)
        if point is not None:
            return CornerChoice(point, entry, entry.corner, tuple(skipped))
    return None


def candidates(found: Sequence, board, color: int) -> list:
    """Every corner's continuations in the order the chooser prefers their corners (policy
    ``best``): the opponent's last move's corner first, then the rest, most played first."""
    last = last_corner(board, color)
    return sorted((m for c in found for m in c.moves), key=lambda m: (m.corner != last, -m.games, m.point))


def _playable(move, board, color: int, rng: random.Random, skipped: list) -> int | None:
    """One of ``move``'s points that is legal and fills no own eye (drawn), else None."""
    good = []
    for point in move.points:
        reason = board.legal_reason(color, point)
        if reason is None and board.is_eye(color, point):
            reason = "fills its own eye"
        if reason is None:
            good.append(point)
        else:
            skipped.append((point, reason))
    return rng.choice(good) if good else None
