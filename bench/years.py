"""Benchmark of a position's date profile (``fuseki search --by-year``: book.queries.years).

``python3 bench/years.py --book BOOK [--queries 50] [--repeats 3]``: positions sampled from the
book's games in random orientations (``bench/book.py``'s ``sample_boards``: 5% empty boards, a
third from the first 12 moves), each asked of an open read-only book, in one run:

- baseline: ``Book.next_moves`` (the plain search);
- ``years.date_profile`` (what ``--by-year`` adds: the years table, every move's years and trend);
- the same with ``period_changes`` (``--trends``) on top.

The first profile reads the games' years once (one scan of ``games``, timed apart); the
positions are then asked ``--repeats`` times in turn, the first round untimed (it warms the
cache of busy positions both share).  Prints median (p50), p99 and max in ms.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
__import__("gtp_main").use_this_checkout()  # import fuseki from this checkout, installed or not

from book import ms, sample_boards, time_calls  # noqa: E402  bench/book.py
from fuseki.book.queries import years  # noqa: E402
from fuseki.book.storage.store import Book  # noqa: E402
from fuseki.engine.core.board import Board  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--book", required=True)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    book = Book.open(args.book, readonly=True)
    stats = book.stats()
    print(f"book {args.book}: {stats.games:,} games, years {stats.years}")
    boards = sample_boards(book, args.queries, random.Random(args.seed))
    start = time.perf_counter()
    years.date_profile(book, Board(19))
    print(f"first profile (reads every game's year once): {1000 * (time.perf_counter() - start):.1f} ms")
    low, high = stats.years or (2000, 2001)
    middle = (low + high) // 2
    periods = ((low, middle), (middle + 1, high))
    cases = [("next_moves (baseline)", lambda b: book.next_moves(b)),
             ("date_profile (--by-year)", lambda b: years.date_profile(book, b)),
             (f"+ period_changes {periods}", lambda b: years.period_changes(years.date_profile(book, b), *periods))]
    for _name, call in cases:
        time_calls(call, boards)  # warm: the busy positions' rows
    results = {name: [] for name, _call in cases}
    for _ in range(args.repeats):
        for name, call in cases:
            results[name] += time_calls(call, boards)
    print(f"{len(boards)} positions ({sum(1 for b in boards if not b.moves)} empty boards) x {args.repeats}:")
    for name, times in results.items():
        print(f"    {name:<44} {ms(times)}")
    book.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
