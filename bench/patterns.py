"""Pattern search timings (a script that prints figures, not a test).

``python3 bench/patterns.py --book BOOK [--patterns 30]``: patterns cut from positions of the
book's own games (a random game, a random move 8-60, a region with stones in it: corners of
5x5 to 9x9, sides 4 deep and 5-9 long, anywhere 3x3 to 4x4 with at least 3 stones), searched
one after another; p50/p99/max per kind, and the first search of the process apart (it
builds the pattern index if the book has none, and reads the indexed games into memory).
Targets (issue "Pattern search"): 378,000 games: corner p50 <= 0.5 s, p99 <= 2 s; side p99
<= 5 s; anywhere (>= 3 stones) p99 <= 10 s; 11,364 games: every search <= 200 ms.
``--kinds corner`` times one kind only; the corner patterns are timed again with Kombilo's
options (issue 32: colours also exchanged, Black to move, moves 0-60, an empty point made
Kombilo's x), which must not slow the plain search (the same patterns, the same seed).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
__import__("gtp_main").use_this_checkout()  # import fuseki from this checkout, installed or not

from fuseki.book.patterns import index  # noqa: E402
from fuseki.book.patterns.pattern import EMPTY_OR_BLACK, Pattern  # noqa: E402
from fuseki.book.patterns.search import search  # noqa: E402
from fuseki.book.storage.store import Book  # noqa: E402
from fuseki.engine.core.base import BLACK, EMPTY, xy_to_point  # noqa: E402
from fuseki.engine.core.board import Board  # noqa: E402


def region_of(kind: str, rng: random.Random, size: int) -> tuple[int, int, int, int]:
    if kind == "corner":
        w, h = rng.randint(5, 9), rng.randint(5, 9)
        x0 = size - w if rng.random() < 0.5 else 0
        y0 = size - h if rng.random() < 0.5 else 0
        return x0, y0, x0 + w - 1, y0 + h - 1
    if kind == "side":
        length = rng.randint(5, 9)
        start = rng.randint(1, size - 1 - length)
        return start, 0, start + length - 1, 3  # the top edge; the search finds it on every edge
    w, h = rng.randint(3, 4), rng.randint(3, 4)
    x0, y0 = rng.randint(1, size - 1 - w), rng.randint(1, size - 1 - h)
    return x0, y0, x0 + w - 1, y0 + h - 1


def cut_patterns(book: Book, kind: str, count: int, rng: random.Random) -> list[Pattern]:
    top = book.max_game_id()
    patterns: list[Pattern] = []
    least = 3 if kind == "anywhere" else 1
    while len(patterns) < count:
        record = book.game(rng.randint(1, top))
        if record.size != 19 or record.setup or len(record.moves) < 10:
            continue
        board = Board(19)
        try:
            for colour, point in record.moves[: rng.randint(8, min(60, len(record.moves)))]:
                board.play(colour, point)
        except Exception:  # an anomaly: another game
            continue
        x0, y0, x1, y1 = region_of(kind, rng, 19)
        cells = {xy_to_point(x, y, 19): board.color_at(xy_to_point(x, y, 19))
                 for y in range(y0, y1 + 1) for x in range(x0, x1 + 1)}
        if sum(1 for c in cells.values() if c != EMPTY) >= least:
            patterns.append(Pattern(19, (x0, y0, x1, y1), cells))
    return patterns


def with_options(pattern: Pattern) -> Pattern:
    """``pattern`` with Kombilo's options: colours also exchanged, Black to move, moves 0-60,
    its first empty point an x (empty or black)."""
    cells = dict(pattern.cells)
    empty = [p for p, c in sorted(cells.items()) if c == EMPTY]
    if empty:
        cells[empty[0]] = EMPTY_OR_BLACK
    return dataclasses.replace(pattern, cells=cells, swap_colours=True, to_move=BLACK, moves_to=60)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--book", required=True, help="a book of games (its pattern index is built if missing)")
    parser.add_argument("--patterns", type=int, default=30, help="patterns of each kind (default 30)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kinds", default="corner,side,anywhere", help="the kinds to time (default all three)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start")
    book = Book.open(args.book)
    start = time.perf_counter()
    built = index.update(book, progress=sys.stderr)
    print(f"{book.stats().games:,} games; pattern index: {built:,} games indexed now in "
          f"{time.perf_counter() - start:.1f} s")
    kinds = {kind: cut_patterns(book, kind, args.patterns, rng) for kind in args.kinds.split(",")}
    if "corner" in kinds:
        kinds["corner+options"] = [with_options(p) for p in kinds["corner"]]
    start = time.perf_counter()
    search(book, next(iter(kinds.values()))[0])
    print(f"first search of the process (reads the indexed games, compiles or loads the scan): "
          f"{time.perf_counter() - start:.2f} s")
    for kind, patterns in kinds.items():
        times, found = [], []
        for pattern in patterns:
            began = time.perf_counter()
            result = search(book, pattern)
            times.append(time.perf_counter() - began)
            found.append(result.total)
        ordered = sorted(times)
        p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
        print(f"{kind:<14} {len(patterns)} patterns: p50 {statistics.median(times):6.3f} s  p99 {p99:6.3f} s  "
              f"max {max(times):6.3f} s   games found: median {statistics.median(found):,.0f}, "
              f"max {max(found):,}")
    size = os.path.getsize(book.path) if book.path else 0
    with book.db.connect() as conn:
        indexed = conn.exec_driver_sql("SELECT sum(length(events)) FROM pattern_events").scalar() or 0
    print(f"pattern index: {indexed / max(book.stats().games, 1):,.0f} bytes/game (file {size / 1e9:.2f} GB)")
    book.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
