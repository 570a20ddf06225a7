"""The corner book's records a game as the book grows: ``python3 bench/corner_walks.py --books A [B ...]``.

For each finished book (read only: its pattern index's files are mapped) and each prefix of its
games (``--games 91000,183000,all``), ``corner_build.records`` is run to the end (the records
counted, ordered and pruned, nothing written), ``--repeat`` times; printed: the median and the
slowest run's time, microseconds a game, the rows kept a game, and the ratio of the time a game
to the first line's (the baseline of the same run: issue 61 asks for at most 1.3 from 366k to
1.5 million games).  ``PYTHONPATH=TREE`` (a tree holding a ``fuseki`` link to itself) measures
another tree's code the same way, for a before and after.

Run it on an otherwise idle machine; the books' files should be in the page cache (a first
warm-up run of the smallest prefix compiles the kernels and reads them in).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from fuseki.book.analysis.patterns import corner_build, index_map
from fuseki.book.storage.store import Book


def run_once(games, n: int) -> tuple[float, int]:
    """(seconds, rows kept) of the corner records of the first ``n`` games."""
    chosen = np.arange(n, dtype=np.int64)
    began = time.perf_counter()
    rows = 0
    for columns in corner_build.records(games.events, games.offsets, chosen, games.winners, 19):
        rows += len(columns[0])
    return time.perf_counter() - began, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--books", nargs="+", required=True, metavar="PATH", help="finished books, smallest first")
    parser.add_argument("--games", default="all", help="prefixes of each book's games, comma-separated, or all")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    base = None
    print(f"{'book':<28} {'games':>10} {'median s':>9} {'max s':>8} {'us/game':>8} {'rows/game':>9} {'vs first':>8}")
    for path in args.books:
        book = Book.open(path, readonly=True)
        games = index_map.load(book, 19)
        total = len(games.game_ids)
        sizes = [total if g == "all" else min(int(g), total) for g in args.games.split(",")]
        if base is None:
            run_once(games, min(sizes[0], 20_000))  # compile and read in
        for n in sizes:
            times, rows = [], 0
            for _ in range(args.repeat):
                seconds, rows = run_once(games, n)
                times.append(seconds)
            per_game = statistics.median(times) / n * 1e6
            base = base or per_game
            print(f"{Path(path).name:<28} {n:>10,} {statistics.median(times):>9.2f} {max(times):>8.2f} "
                  f"{per_game:>8.1f} {rows / n:>9.2f} {per_game / base:>8.2f}", flush=True)
        book.close()


if __name__ == "__main__":
    main()
