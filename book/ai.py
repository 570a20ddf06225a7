"""KataGo's judgement of a book's positions: the AI value cache first, KataGo for the rest.

``AiJudge(cache, katago, rules, komi, visits)`` answers ``values(boards)`` with one
``ai_values.AiValues`` per (board, side to move): positions already in the cache (any
orientation) are read from it; the others are sent to KataGo all at once (its analysis
threads work on them side by side), stored in canonical orientation, then read back the
same way, so a fresh answer and a cached one are the same numbers on the same points.
``cached`` never asks KataGo: what a human-statistics query may call without waiting.

A book position is its stones, not a game's history: KataGo gets it as ``initialStones``
with the side to move, which is also what the cache's key says.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from sqlalchemy.engine import Engine

from fuseki.book.storage import ai_values
from fuseki.book.storage.ai_values import AiSettings, AiValues
from fuseki.engine.core import coords
from fuseki.engine.core.base import BLACK, WHITE
from fuseki.engine.players.katago import Analysis, KataGo

COLOR_LETTER = {BLACK: "B", WHITE: "W"}


def query_settings(board, to_move: int, rules: str, komi: float, visits: int) -> dict:
    """The ``KataGo.submit`` arguments that evaluate ``board`` with ``to_move`` to play."""
    size = board.size
    stones = [(COLOR_LETTER[color], coords.point_to_vertex(p, size))
              for color in (BLACK, WHITE) for p in board.stones(color)]
    return {"initial_stones": stones, "initial_player": COLOR_LETTER[to_move], "rules": rules,
            "komi": komi, "size": size, "max_visits": visits}


def rows_of(analysis: Analysis, size: int) -> tuple[tuple[int, float, float], list[tuple]]:
    """``ai_values.put``'s root and moves from a KataGo analysis (points in its orientation)."""
    root = (analysis.visits, analysis.winrate, analysis.score_lead)
    moves = [(coords.vertex_to_point(m.move, size), m.visits, m.winrate, m.score_lead, m.loss, m.prior)
             for m in analysis.moves]
    return root, moves


class AiJudge:
    """See the module docstring.  ``katago`` may be None: then only the cache answers."""

    def __init__(self, cache: Engine, katago: KataGo | None, rules: str, komi: float, visits: int,
                 network: str | None = None):
        self.cache = cache
        self.katago = katago
        name = network if network is not None else (katago.network if katago else "")
        self.settings = AiSettings(rules=rules, komi=komi, network=name, visits=visits)
        with cache.begin() as conn:
            ai_values.create(conn)

    def cached(self, board, to_move: int | None = None) -> AiValues | None:
        side = board.to_move if to_move is None else to_move
        with self.cache.connect() as conn:
            return ai_values.get(conn, board.symmetric_keys(side), board.size, self.settings)

    def values(self, boards: list, timeout: float = 600.0,
               progress: Callable[[int, int], None] | None = None) -> list[AiValues]:
        """Values of each (board, side to move) in ``boards``; KataGo evaluates the ones the
        cache lacks (``progress(done, of)`` after each).  Raises KataGoError from KataGo."""
        found = [self.cached(board, side) for board, side in boards]
        missing = [i for i, v in enumerate(found) if v is None]
        if missing and self.katago is None:
            raise ValueError("no KataGo to compute the values the cache lacks")
        s = self.settings
        pendings = [self.katago.submit(**query_settings(*boards[i], s.rules, s.komi, s.visits)) for i in missing]
        deadline = time.monotonic() + timeout
        for done, (i, pending) in enumerate(zip(missing, pendings), 1):  # KataGo works on all meanwhile
            answers = pending.result(max(0.0, deadline - time.monotonic()))
            board, side = boards[i]
            root, moves = rows_of(answers[-1], board.size)
            with self.cache.begin() as conn:  # one at a time: a run stopped half-way keeps what it got
                ai_values.put(conn, board.symmetric_keys(side), board.size, s, root, moves)
            if progress:
                progress(done, len(pendings))
        for i in missing:
            found[i] = self.cached(*boards[i])
        return found


# --- the marks: where KataGo and the players disagree (``fuseki search --ai``, the web page) ---

POPULAR = 0.10  # share of the position's games that makes a move popular
RARE = 0.02  # share under which a move is rarely played
MISTAKE_POINTS = 2.0  # KataGo's loss, in points, that makes a popular move a mistake
GOOD_POINTS = 0.5  # a loss under this is as good as KataGo's best move
MISTAKE, CHOICE = "mistake", "choice"
MARK_TEXT = {MISTAKE: "? popular mistake", CHOICE: "! AI's choice, rarely played"}


def mark(games: int, total: int, loss: float | None) -> str | None:
    """``MISTAKE`` for a move played in ``POPULAR`` of the ``total`` games or more that loses
    ``MISTAKE_POINTS`` or more; ``CHOICE`` for one under ``GOOD_POINTS`` from KataGo's best that
    under ``RARE`` of the games play; else None (also when KataGo has no value: ``loss`` None)."""
    if loss is None:
        return None
    total = max(total, 1)
    if games >= POPULAR * total and loss >= MISTAKE_POINTS:
        return MISTAKE
    if games < RARE * total and loss < GOOD_POINTS:
        return CHOICE
    return None
