"""Do the marks hold under more search?  The built-in book's ``?`` and ``!`` re-searched deeper.

The marks (``book.analysis.ai.marks``) are drawn from the book's stored values (400 visits).
This takes a seeded sample of ``--sample`` marked moves (``?`` and ``!`` in turn, as many of
each as there are), and for each asks KataGo for the marked move and for the move it is judged
against (a ``?``: the position's best deep move, the one its loss is measured from; a ``!``:
the position's most played move), each by a search of its own with the move forced
(``AiJudge.force``'s query, ``--visits`` each: 1,600 is 4x the stored 400), then draws the mark
again by the same rule from the new figures (the other moves' values as stored).  It prints
each move, the old and new loss (``?``) or lead difference (``!``), and how many marks held.

On a CPU here a 1,600-visit search takes about 45 minutes: this is a run for a GPU machine
(docs/katago.md, "How sure a mark is").  Its smallest setting (``--sample 2 --visits 2``) is
what the test suite starts.

Usage::

    python3 bench/marks.py --katago CMD [--sample 40] [--visits 1600] [--seed 1] [--positions N]
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
__import__("gtp_main").use_this_checkout()  # import fuseki from this checkout, installed or not

from fuseki.book.analysis import annotate  # noqa: E402
from fuseki.book.analysis.ai import (  # noqa: E402
    CHOICE,
    MISTAKE,
    AiValueStores,
    forced_query,
    forced_rows,
    marks,
    next_move_values,
)
from fuseki.book.analysis.katago import KataGo, answer_timeout, find_command  # noqa: E402
from fuseki.book.model import builtin  # noqa: E402
from fuseki.book.storage.store import Book  # noqa: E402
from fuseki.engine.core import base  # noqa: E402


@dataclasses.dataclass
class Marked:
    board: object
    side: int
    games: list[int]
    total: int
    values: list  # MoveValues per next move, as stored
    points: list[int]  # the next moves' points
    index: int  # the marked move
    reference: int  # the move it is judged against (its index in the next moves, or -1: KataGo's best, unplayed)
    reference_point: int
    kind: str


def marked_moves(book, stores, limit: int | None = None) -> list[Marked]:
    """Every marked move of the book's positions of 200+ games that have stored values (of the
    ``limit`` most played, when given)."""
    every = annotate.popular_positions(book, 200, limit)
    finder = annotate.BoardFinder(book, [p.key for p in every], [p.key for p in every])
    found = []
    for position in every:
        at = finder.find(position.key)
        values = stores.values(*at) if at is not None else None
        if values is None:
            continue
        board, side = at
        nexts = book.next_moves(board, side)
        moves = [m for m in nexts.moves if m.point != base.PASS]
        move_values = next_move_values(values, board, side, moves, stores.values)
        games = [m.games for m in moves]
        kinds = marks(games, nexts.total, move_values)
        best = next((m.point for m in values.moves if m.score_lead == values.best_lead), base.PASS)
        top = max(range(len(games)), key=lambda i: games[i]) if games else 0
        for i, kind in enumerate(kinds):
            if kind is None:
                continue
            point = best if kind == MISTAKE else moves[top].point
            reference = next((j for j, m in enumerate(moves) if point in m.points), -1)
            found.append(Marked(board, side, games, nexts.total, move_values, [m.point for m in moves], i,
                                reference, point, kind))
    return found


def sample(found: list[Marked], size: int, seed: int) -> list[Marked]:
    rng = random.Random(seed)
    by_kind = {kind: [m for m in found if m.kind == kind] for kind in (MISTAKE, CHOICE)}
    for moves in by_kind.values():
        rng.shuffle(moves)
    chosen = []
    while len(chosen) < size and any(by_kind.values()):
        for kind in (MISTAKE, CHOICE):
            if by_kind[kind] and len(chosen) < size:
                chosen.append(by_kind[kind].pop())
    return chosen


def research(katago: KataGo, marked: list[Marked], visits: int, settings) -> list[tuple[Marked, str | None, str]]:
    """Each marked move and its reference searched again with the move forced; the mark drawn
    again from the new figures: (marked, the new mark, a line of figures)."""
    asked = []
    for m in marked:
        for point in (m.points[m.index], m.reference_point):
            query = forced_query(m.board, m.side, point, settings.rules, settings.komi, visits)
            asked.append((m, point, katago.submit(**query)))
    fresh: dict[tuple[int, int], tuple] = {}
    for m, point, pending in asked:
        rows, _ = forced_rows(pending.result(answer_timeout(visits))[-1], point, m.board.size)
        if rows:
            fresh[(id(m), point)] = rows[0]
    out = []
    for m in marked:
        mine, theirs = fresh.get((id(m), m.points[m.index])), fresh.get((id(m), m.reference_point))
        if mine is None or theirs is None:
            out.append((m, None, "KataGo gave no value with the move forced"))
            continue
        values = list(m.values)
        old = values[m.index]
        if m.kind == MISTAKE:  # the loss against the best move, both searched again
            new_loss = max(0.0, theirs[3] - mine[3])
            values[m.index] = dataclasses.replace(old, score_lead=mine[3], loss=new_loss, visits=mine[1],
                                                  best_visits=theirs[1])
            figures = f"loss {old.loss:.2f} at {old.visits} -> {new_loss:.2f} at {mine[1]} (best {theirs[1]})"
        else:  # the lead against the most played move, both searched again
            top = values[m.reference]
            values[m.reference] = dataclasses.replace(top, score_lead=theirs[3], visits=theirs[1])
            values[m.index] = dataclasses.replace(old, score_lead=mine[3], visits=mine[1])
            figures = (f"lead over the most played {old.score_lead - top.score_lead:+.2f} -> "
                       f"{mine[3] - theirs[3]:+.2f} at {mine[1]} / {theirs[1]} visits")
        out.append((m, marks(m.games, m.total, values)[m.index], figures))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--katago", help="KataGo's analysis command (default: $FUSEKI_KATAGO or .ci/katago's)")
    parser.add_argument("--sample", type=int, default=40, help="marked moves searched again")
    parser.add_argument("--visits", type=int, default=1600, help="visits of each search (4x the stored 400)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--positions", type=int, default=None, metavar="N",
                        help="draw the sample from the N most played positions only (default: all 2,464)")
    args = parser.parse_args()
    command = args.katago or find_command()
    if not command:
        sys.exit("no KataGo (bash .ci/katago gets one)")
    with Book.open(str(builtin.PATH), readonly=True) as book:
        stores = AiValueStores(book.db, None, "japanese", 6.5)
        found = marked_moves(book, stores, args.positions)
        chosen = sample(found, args.sample, args.seed)
        settings = stores.values(chosen[0].board, chosen[0].side).settings if chosen else None
    counts = {kind: sum(m.kind == kind for m in found) for kind in (MISTAKE, CHOICE)}
    print(f"the built-in book's marks: {counts[MISTAKE]} ?, {counts[CHOICE]} !; {len(chosen)} searched again "
          f"at {args.visits} visits each (the marked move and the move it is judged against)")
    started = time.monotonic()
    with KataGo(command) as katago:
        results = research(katago, chosen, args.visits, settings)
    held = {kind: [0, 0] for kind in (MISTAKE, CHOICE)}
    for m, mark, figures in results:
        vertex = base.point_to_vertex(m.points[m.index], m.board.size)
        held[m.kind][0] += mark == m.kind
        held[m.kind][1] += 1
        print(f"  {'?' if m.kind == MISTAKE else '!'} {vertex:<4} {m.games[m.index]:>6} of {m.total:<6} {figures}: "
              f"{'held' if mark == m.kind else 'lost'}")
    for kind, sign in ((MISTAKE, "?"), (CHOICE, "!")):
        print(f"{sign}: {held[kind][0]} of {held[kind][1]} held at {args.visits} visits")
    print(f"({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
