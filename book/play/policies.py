"""How a book chooser orders the moves it may play: the policies ``best``, ``weighted``,
``winrate`` and ``sound`` (``book.play.book_chooser`` explains them; ``sound`` orders as ``best``, the
chooser having left out the moves KataGo's stored values condemn), shared by the whole-board chooser and the corner
book's (``book.play.corner_chooser``)."""

from __future__ import annotations

import math
import random

from fuseki.engine.config import POLICIES


def policy_order(moves: list, policy: str, temperature: float, rng: random.Random) -> list:
    """``moves`` in the order the policy tries them (first = preferred).

    ``weighted`` draws without replacement, so a later entry is the next draw
    once the earlier ones are found illegal.
    """
    if policy in ("best", "sound"):
        return sorted(moves, key=lambda m: -m.games)  # stable: keeps the book's tie order
    if policy == "winrate":
        return sorted(moves, key=lambda m: (-m.winrate, -m.games))
    if policy == "weighted":
        return _weighted_draws(moves, temperature, rng)
    raise ValueError(f"unknown book policy {policy!r} (one of {', '.join(POLICIES)})")


def _weighted_draws(moves: list, temperature: float, rng: random.Random) -> list:
    # Weights in log space relative to the most played move, so huge counts and
    # tiny temperatures neither overflow nor underflow to all-zero.
    top = max((m.games for m in moves), default=1)
    weights = [math.exp((math.log(m.games) - math.log(top)) / temperature) for m in moves]
    pool, order = list(moves), []
    while pool:
        pick = rng.choices(range(len(pool)), weights=weights)[0]
        order.append(pool.pop(pick))
        weights.pop(pick)
    return order
