"""The book's policies against ``weighted`` over the opening, judged by the stored values only.

No KataGo: each policy (``--policies``, default sound, best, weighted) plays ``--games`` games
of ``--moves`` moves (both sides) from the empty board against the built-in book at
``--policy weighted`` (seeded per game, so the games differ; the same seeds for every policy),
colours alternating; where the books have no move, a random legal move (the engine's chain
without a fallback engine: what the policy itself plays is what is measured).  For the tested
side's moves it prints:

- where they came from: book, ai line, corner book, none (random);
- the stored loss (``book.analysis.ai.next_move_values``: against the position's best deep
  move) of the moves whose values are deep (``book.analysis.ai.deep``), on average a move, and
  how many such moves there were;
- in how many positions it played another move than ``best`` would have there.

The target of issue 56: the default's stored loss at most 0.08 points a move, and its share of
book moves at least 80% of ``best``'s.

Usage::

    python3 bench/policy.py [--games 10] [--moves 20] [--policies sound,best,weighted]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
__import__("gtp_main").use_this_checkout()  # import fuseki from this checkout, installed or not

from fuseki.book.analysis.ai import OnePoint, deep, next_move_values  # noqa: E402
from fuseki.book.model import builtin  # noqa: E402
from fuseki.book.play.book_chooser import BookChooser  # noqa: E402
from fuseki.engine.core.base import BLACK, board_points, opponent  # noqa: E402
from fuseki.engine.core.board import Board  # noqa: E402
from fuseki.engine.players.chooser import point_of  # noqa: E402


def random_move(board, color: int, rng: random.Random) -> int | None:
    points = [p for p in board_points(board.size) if board.legal_reason(color, p) is None]
    return rng.choice(points) if points else None


def play(policy: str, games: int, moves: int, quiet) -> dict:
    sources: Counter = Counter()
    losses: list[float] = []
    differ = positions = 0
    best = BookChooser(str(builtin.PATH), policy="best", seed=0, corner_book=False, log=quiet)
    spent: list[float] = []
    for game in range(games):
        tested = BookChooser(str(builtin.PATH), policy=policy, seed=game, log=quiet)
        other = BookChooser(str(builtin.PATH), policy="weighted", seed=1000 + game, log=quiet)
        mine = BLACK if game % 2 == 0 else opponent(BLACK)
        board, rng = Board(19), random.Random(game)
        for _ in range(moves):
            color = board.to_move
            chooser = tested if color == mine else other
            started = time.perf_counter()
            choice = chooser.choose(board, color)
            point = None if choice is None else choice.move
            if color == mine:
                spent.append(time.perf_counter() - started)
                sources[choice.source if choice is not None else "none"] += 1
                stores = tested.ai_stores()
                values = stores.values(board, color) if stores is not None and point is not None else None
                if values is not None:
                    ai = next_move_values(values, board, color, [OnePoint(point, (point,))], stores.values)[0]
                    if deep(ai):
                        losses.append(ai.loss)
                played_best = point_of(best.choose(board, color))
                if played_best is not None:  # the same move: a point of the orbit best's move stands for
                    orbit = next((m.points for m in best.next_moves(board, color).moves if played_best in m.points),
                                 (played_best,))
                    positions += 1
                    differ += point not in orbit
            if point is None:
                point = random_move(board, color, rng)
            if point is None:
                break
            board.play(color, point)
    return {"sources": sources, "losses": losses, "differ": differ, "positions": positions, "spent": spent}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=10)
    parser.add_argument("--moves", type=int, default=20, help="moves of each game (both sides)")
    parser.add_argument("--policies", default="sound,best,weighted")
    args = parser.parse_args()
    quiet = lambda _line: None  # noqa: E731
    print(f"{args.games} games of {args.moves} moves against the built-in book at --policy weighted, no KataGo")
    results = {}
    for policy in args.policies.split(","):
        results[policy] = found = play(policy, args.games, args.moves, quiet)
        total = sum(found["sources"].values())
        share = {k: v / total for k, v in found["sources"].items()}
        losses = found["losses"]
        mean = statistics.fmean(losses) if losses else float("nan")
        spent = sorted(found["spent"])
        print(f"  {policy:<9} {total} moves: " + ", ".join(f"{k} {v} ({share[k]:.0%})"
                                                         for k, v in found["sources"].most_common()))
        print(f"  {'':<9} stored loss where deep: {mean:.3f} points a move ({len(losses)} moves, "
              f"{sum(losses):.1f} in all); another move than best in {found['differ']} of {found['positions']} "
              f"positions; a choice p50 {1000 * statistics.median(spent):.1f} ms, p99 "
              f"{1000 * spent[min(len(spent) - 1, int(0.99 * len(spent)))]:.1f} ms")
    if "best" in results:
        book_best = results["best"]["sources"]["book"]
        for policy, found in results.items():
            if policy != "best" and book_best:
                print(f"  {policy}: book moves {found['sources']['book']} = "
                      f"{found['sources']['book'] / book_best:.0%} of best's {book_best}")


if __name__ == "__main__":
    main()
