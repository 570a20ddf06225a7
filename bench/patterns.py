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
Kombilo's x), which must not slow the plain search (the same patterns, the same seed), and
with a year filter and a player filter (the book's most frequent name's first 3 letters).
``--processes N``: N corner and N side patterns each searched by a whole ``fuseki pattern``
process, as from a shell (start, open, map or read the index, search, print); with
``--baseline DIR`` (a checkout of an earlier commit: ``git worktree add --detach DIR cb38a16``)
each is also run by that checkout's ``fuseki pattern``, alternately, in the same run.
Targets (issue 32, 622,724 games): in one process corner and side p99 <= 1 s, anywhere
p99 <= 3 s; a whole process p99 <= 1.5 s.
``--compare-in-time`` (issue 61): each pattern is searched without and with the scan's pre-filter
in time (``scan._possible``, ``scan.IN_TIME``), alternately, in the same run: before and after.
``--budget S`` (issue 61): each pattern is searched again as the web page searches it, with a
scan budget of S seconds (the page's default: ``api_args.SCAN_SECONDS``, 3) and a partial answer
past it, then on from where it stopped (the page's "search on") until the whole book is scanned:
the first answer's time (p50/p99/max: the target is the budget plus one part), how many patterns
were answered whole, the percent of the games the cut ones had scanned, the parts each needed,
and that the parts' totals add up to the plain search's.  An older checkout has no partial
answers: there a search over the budget was a 503 (count the plain times over S).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
__import__("gtp_main").use_this_checkout()  # import fuseki from this checkout, installed or not

from fuseki.book.analysis.patterns import index, index_map  # noqa: E402
from fuseki.book.analysis.patterns.pattern import EMPTY_OR_BLACK, Pattern  # noqa: E402
from fuseki.book.analysis.patterns.search import search  # noqa: E402
from fuseki.book.model.filters import Filters  # noqa: E402
from fuseki.book.storage.store import Book  # noqa: E402
from fuseki.engine.core.base import BLACK, EMPTY, WHITE, point_to_vertex, xy_to_point  # noqa: E402
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


def summary(times: list[float]) -> str:
    ordered = sorted(times)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    return f"p50 {statistics.median(times):6.3f} s  p99 {p99:6.3f} s  max {max(times):6.3f} s"


def frequent_name(book: Book) -> str:
    """The first 3 letters of the most frequent name among 200 games."""
    names = [book.game(i).black for i in range(1, min(book.max_game_id(), 200) + 1)]
    names = [n for n in names if len(n) >= 3]
    return statistics.mode(n[:3] for n in names) if names else "a"


def cli_arguments(pattern: Pattern) -> list[str]:
    """``fuseki pattern`` arguments for a pattern without any-points or options."""
    x0, y0, x1, y1 = pattern.region
    size = pattern.size
    corner = f"{point_to_vertex(xy_to_point(x0, y0, size), size)}:{point_to_vertex(xy_to_point(x1, y1, size), size)}"
    black = [p for p, c in sorted(pattern.cells.items()) if c == BLACK]
    white = [p for p, c in sorted(pattern.cells.items()) if c == WHITE]
    # the stones as a move list: Black and White alternate, passes fill the shorter colour
    moves = []
    for i in range(max(len(black), len(white))):
        moves.append(point_to_vertex(black[i], size) if i < len(black) else "pass")
        moves.append(point_to_vertex(white[i], size) if i < len(white) else "pass")
    return ["--region", corner, "--moves", " ".join(moves)]


def fuseki_command(checkout: Path) -> list[str]:
    """The ``fuseki`` command of a checkout, as a shell starts it."""
    code = (f"import sys; sys.path.insert(0, {str(checkout)!r}); __import__('gtp_main').use_this_checkout(); "
            "from fuseki.book.ui.fuseki_command import main; sys.argv[0] = 'fuseki'; raise SystemExit(main())")
    return [sys.executable, "-c", code]


def whole_processes(book: Book, location: str, count: int, rng: random.Random, baseline: str | None) -> None:
    """Time ``fuseki pattern`` processes of this checkout (and of ``baseline``), alternately."""
    if book.path:
        index_map.refresh(book)
    checkouts = {"this checkout": ROOT, **({f"baseline {baseline}": Path(baseline)} if baseline else {})}
    for kind in ("corner", "side"):
        patterns = cut_patterns(book, kind, count, rng)
        times = {name: [] for name in checkouts}
        for pattern in patterns:
            for name, checkout in checkouts.items():
                command = [*fuseki_command(checkout), "pattern", "--book", location,
                           *cli_arguments(pattern)]
                began = time.perf_counter()
                done = subprocess.run(command, capture_output=True, text=True)
                times[name].append(time.perf_counter() - began)
                if done.returncode:
                    raise SystemExit(f"fuseki pattern failed: {done.stderr.strip()[-300:]}")
        for name, found in times.items():
            print(f"whole process, {kind:<7} {name:<40} {summary(found)}   ({count} patterns)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--book", required=True, help="a book of games (its pattern index is built if missing)")
    parser.add_argument("--patterns", type=int, default=30, help="patterns of each kind (default 30)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kinds", default="corner,side,anywhere", help="the kinds to time (default all three)")
    parser.add_argument("--processes", type=int, default=0, metavar="N",
                        help="also time N corner and N side patterns as whole fuseki pattern processes")
    parser.add_argument("--baseline", metavar="DIR", help="with --processes: time this checkout's too")
    parser.add_argument("--compare-in-time", action="store_true",
                        help="also time each pattern without and with the scan's pre-filter in time, alternately")
    parser.add_argument("--budget", type=float, metavar="S",
                        help="also search each pattern with a scan budget of S seconds and partial answers, "
                             "on to the end (the web page's search and its search on)")
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
    def timed(label, patterns, filters=None):
        times, found = [], []
        for pattern in patterns:
            began = time.perf_counter()
            result = search(book, pattern, filters)
            times.append(time.perf_counter() - began)
            found.append(result.total)
        print(f"{label:<24} {len(patterns)} patterns: {summary(times)}   games found: median "
              f"{statistics.median(found):,.0f}, max {max(found):,}")

    def budgeted(label, patterns, seconds):
        from fuseki.book.analysis.patterns.budget import Budget

        firsts, percents, parts_needed, whole = [], [], [], 0
        for pattern in patterns:
            plain = search(book, pattern)
            began = time.perf_counter()
            part = search(book, pattern, budget=Budget(seconds), partial=True)
            firsts.append(time.perf_counter() - began)
            total, parts = part.total, 1
            if part.complete:
                whole += 1
            else:
                percents.append(part.percent)
            while not part.complete:
                part = search(book, pattern, budget=Budget(seconds), from_id=part.next_id, partial=True)
                total, parts = total + part.total, parts + 1
            assert total == plain.total, (total, plain.total)  # the parts add up to the one scan
            parts_needed.append(parts)
        cut = (f"; the {len(percents)} cut short had scanned median {statistics.median(percents):.0f}% "
               f"(min {min(percents):.0f}%)" if percents else "")
        print(f"{label:<24} {len(patterns)} patterns, budget {seconds:g} s: first answer {summary(firsts)}; "
              f"{whole} answered whole{cut}; parts to the end median {statistics.median(parts_needed):.0f}, "
              f"max {max(parts_needed)}; the parts' totals equal the plain search's")

    def in_time(label, patterns):
        """Each pattern searched without and with scan._possible, alternately (the code before issue
        61 and this one, in one run): their times, and that they answer alike."""
        from fuseki.book.analysis.patterns import scan

        times = {False: [], True: []}
        for pattern in patterns:
            found = {}
            for flag in (False, True):
                scan.IN_TIME = flag
                began = time.perf_counter()
                result = search(book, pattern)
                times[flag].append(time.perf_counter() - began)
                found[flag] = (result.total, [(c.point, c.colour, c.games, c.wins) for c in result.continuations])
            assert found[False] == found[True], pattern
        scan.IN_TIME = True
        print(f"{label + ', not in time':<24} {len(patterns)} patterns: {summary(times[False])}   (as before issue 61)")
        print(f"{label + ', in time':<24} {len(patterns)} patterns: {summary(times[True])}   (the same answers)")

    for kind, patterns in kinds.items():
        timed(kind, patterns)
        if args.compare_in_time:
            in_time(kind, patterns)
        if args.budget is not None:
            budgeted(f"{kind}, budgeted", patterns, args.budget)
    if "corner" in kinds:
        years = book.stats().years
        if years:
            middle = (years[0] + years[1]) // 2
            timed(f"corner, years {middle}-", kinds["corner"], Filters(year_from=middle))
        name = frequent_name(book)
        timed(f"corner, player {name!r}", kinds["corner"], Filters(player=name))
    if args.processes:
        whole_processes(book, args.book, args.processes, rng, args.baseline)
    size = os.path.getsize(book.path) if book.path else 0
    with book.db.connect() as conn:
        indexed = conn.exec_driver_sql("SELECT sum(length(events)) FROM pattern_events").scalar() or 0
    folder = str(book.path) + "-patterns" if book.path else None
    if folder and os.path.isdir(folder):  # beside a SQLite book: its files (book.storage.pattern_files)
        indexed += sum(os.path.getsize(os.path.join(folder, name)) for name in os.listdir(folder))
    print(f"pattern index: {indexed / max(book.stats().games, 1):,.0f} bytes/game (file {size / 1e9:.2f} GB)")
    book.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
