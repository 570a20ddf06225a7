"""Scoring commands (GTP 6.3.5): area scoring with every stone counted alive.

There is no life-and-death judgement yet, so ``final_status_list dead`` and
``seki`` are empty and ``alive`` is every stone; the score is Tromp-Taylor
area (stones plus territory reaching one colour only) minus komi.
"""

from __future__ import annotations

from fuseki.engine.core.base import BLACK, WHITE
from fuseki.engine.gtp.commands.args import count, vertex_text
from fuseki.engine.gtp.commands.registry import command
from fuseki.engine.gtp.protocol import GtpError

STATUSES = ("alive", "dead", "seki")


def score_text(score: float) -> str:
    """``B+3.5``, ``W+0.5`` or ``0`` (GTP 6.3.5), without a trailing ``.0``."""
    if score == 0:
        return "0"
    return ("B+%g" if score > 0 else "W+%g") % abs(score)


@command("final_score")
def final_score(game, args):
    count(args, 0)
    if game.referee is not None and (answer := game.referee.ask(game.board, "final_score")):
        return answer
    black, white = game.board.area()
    return score_text(black - white - game.komi)


@command("final_status_list")
def final_status_list(game, args):
    """One line per chain (as GNU Go answers), stones of both colours."""
    (status,) = count(args, 1)
    if status not in STATUSES:
        raise GtpError("syntax error")
    if game.referee is not None:
        answer = game.referee.ask(game.board, f"final_status_list {status}")
        if answer is not None:
            return answer
    if status != "alive" or game.is_empty():
        return ""
    return "\n".join(" ".join(vertex_text(p, game.size) for p in chain)
                     for chain in chains(game.board))


def chains(board) -> list[list[int]]:
    """Every chain of stones (black first), each a list of points in array order."""
    seen: set[int] = set()
    w = board.size + 2
    result = []
    for c in (BLACK, WHITE):
        for start in board.stones(c):
            if start in seen:
                continue
            chain, todo = [], [start]
            seen.add(start)
            while todo:
                p = todo.pop()
                chain.append(p)
                for q in (p - 1, p + 1, p - w, p + w):
                    if q not in seen and _on_board(q, board.size) and board.color_at(q) == c:
                        seen.add(q)
                        todo.append(q)
            result.append(sorted(chain))
    return result


def _on_board(point: int, size: int) -> bool:
    y, x = divmod(point, size + 2)
    return 1 <= x <= size and 1 <= y <= size
