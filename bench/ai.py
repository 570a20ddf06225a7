"""KataGo's speed here and the AI value cache's look-up latency.

1. KataGo (when ``--katago``, ``$FUSEKI_KATAGO`` or ``bash .ci/katago`` gives one): its start
   (process start to the answer of ``query_version``: the network loaded, OpenCL tuning
   already cached), then ``--positions`` distinct positions (random openings) evaluated
   through ``book.analysis.ai.AiJudge`` at 1 visit (one network evaluation each: positions a second)
   and, fewer, at ``--visits`` (visits a second).
2. ``fuseki ai annotate``'s loop (``book.analysis.annotate``) over the built-in book's ``--annotate``
   most played positions at 1 visit, ``--threads`` queries in flight, each answer committed
   to a fresh cache file: positions a second, KataGo's start and the search for the
   positions' boards left out (the command's own progress line counts the same way).
3. annotate against KataGo's own ``katago benchmark`` in the same run (``--compare``
   positions at ``--compare-visits``): ``fuseki ai annotate``'s loop over the built-in
   book's most played positions, KataGo started and fed as the command does
   (``batch_command``: one search thread per analysis thread; ``queries_to_keep_in_flight``:
   twice the analysis threads in flight), the visits
   KataGo reported for them a second; then ``katago benchmark -model M -config C -v V -t T
   -n N`` with T the config's search threads (``numAnalysisThreads`` x ``numSearchThreads``),
   its visits a second; the KataGo settings, the load average before each, and the ratio
   (the target: annotate at 80% or more of KataGo's own figure).
4. The cache: ``--cached`` random openings stored with 40 candidate moves each in a fresh
   SQLite cache file, then looked up in random orientations, in turn: exactly the settings
   stored (``AiJudge.cached``, ``ai_values.get``), through ``book.analysis.ai.AiValueStores`` (the
   most visits of the network, ``ai_values.best``) and of any network: p50 and p99 of one
   look-up, beside the baseline of the same run: the same number of primary-key reads of
   the same rows without decoding them (what SQLite alone costs).

Usage::

    python3 bench/ai.py [--katago CMD] [--positions 8] [--visits 16] [--annotate 8] [--threads 2]
                        [--compare 4] [--compare-visits 8] [--compare-only] [--cached 20000] [--lookups 2000]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
__import__("gtp_main").use_this_checkout()  # import fuseki from this checkout, installed or not

from sqlalchemy import create_engine, select  # noqa: E402

from fuseki.book.analysis.ai import AiJudge, AiValueStores  # noqa: E402
from fuseki.book.analysis.katago import KataGo, find_command  # noqa: E402
from fuseki.book.analysis.katago_config import (  # noqa: E402
    batch_command,
    config_value,
    queries_to_keep_in_flight,
    search_threads,
)
from fuseki.book.queries import ai_values  # noqa: E402
from fuseki.engine.core import base, coords, zobrist  # noqa: E402
from fuseki.engine.core.base import BLACK, WHITE  # noqa: E402
from fuseki.engine.core.board import Board  # noqa: E402


def random_opening(rng: random.Random, moves: int, size: int = 19) -> Board:
    board = Board(size)
    color = BLACK
    for _ in range(moves):
        free = [p for p in base.board_points(size) if board.is_legal(color, p)]
        board.play(color, rng.choice(free))
        color = WHITE if color == BLACK else BLACK
    return board


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def bench_katago(command: str, positions: int, visits: int, rng: random.Random) -> None:
    started = time.perf_counter()
    with KataGo(command, timeout=3600) as katago:
        print(f"KataGo {katago.version} ({katago.network}): ready in {time.perf_counter() - started:.1f} s")
        with tempfile.TemporaryDirectory() as folder:
            cache = create_engine(f"sqlite:///{folder}/ai.sqlite")
            for count, v in ((positions, 1), (max(1, positions // 4), visits)):
                judge = AiJudge(cache, katago, "japanese", 6.5, v)
                boards = [(b, b.to_move) for b in (random_opening(rng, rng.randint(2, 12)) for _ in range(count))]
                t0 = time.perf_counter()
                judge.values(boards, timeout=3600)
                spent = time.perf_counter() - t0
                print(f"  {count} positions at {v} visit(s): {spent:.1f} s, {count / spent:.2f} positions/s, "
                      f"{count * v / spent:.2f} visits/s")
            cache.dispose()


def bench_annotate(command: str, count: int, threads: int) -> None:
    from fuseki.book.analysis import annotate
    from fuseki.book.model import builtin
    from fuseki.book.storage.store import Book

    with Book.open(str(builtin.PATH)) as book, tempfile.TemporaryDirectory() as folder:
        every = annotate.popular_positions(book, 1)
        positions = every[:count]
        finder = annotate.BoardFinder(book, [p.key for p in positions], annotate.walk_through(every, positions))
        t0 = time.perf_counter()
        for p in positions:
            finder.find(p.key)
        walked = time.perf_counter() - t0
        cache = create_engine(f"sqlite:///{folder}/ai.sqlite")
        with KataGo(command, timeout=3600) as katago:
            judge = AiJudge(cache, katago, "japanese", 6.5, 1)
            report = annotate.annotate(judge, positions, finder, cache.begin, threads=threads, timeout=3600)
        cache.dispose()
        print(f"annotate: the built-in book's {report.done} most played positions at 1 visit, {threads} in flight: "
              f"{report.seconds:.1f} s, {report.done / report.seconds:.2f} positions/s "
              f"(their boards found first in {walked:.1f} s)")


def katago_settings(command: str) -> dict[str, int]:
    """The config's threads and batch size (KataGo's defaults where it names none)."""
    defaults = {"numAnalysisThreads": 2, "numSearchThreads": 1, "nnMaxBatchSize": 8}
    return {name: int(config_value(command, name) or default) for name, default in defaults.items()}


def katago_benchmark(command: str, visits: int, threads: int, positions: int) -> tuple[float, str]:
    """``katago benchmark``'s visits a second at ``threads`` search threads, and its line."""
    argv = shlex.split(command)
    where = {flag: argv[argv.index(flag) + 1] for flag in ("-model", "-config") if flag in argv[:-1]}
    run = [argv[0], "benchmark", *(x for item in where.items() for x in item), "-v", str(visits),
           "-t", str(threads), "-n", str(positions)]
    out = subprocess.run(run, capture_output=True, text=True, timeout=3600)
    text = (out.stdout + out.stderr).replace("\r", "\n")
    # its last progress entry for these threads: "numSearchThreads =  2: 4 / 4 positions, visits/s = 0.50 nnEvals/s ..."
    found = re.findall(rf"numSearchThreads = +{threads}: (\d+) / (\d+) positions, visits/s = ([0-9.]+) "
                       r"(nnEvals/s.*?)\(", text)
    done = [f for f in found if f[0] == f[1]]
    if out.returncode != 0 or not done:
        raise SystemExit(f"katago benchmark failed ({shlex.join(run)}): {text[-500:]}")
    return float(done[-1][2]), f"visits/s = {done[-1][2]} {done[-1][3].strip()}"


def bench_compare(command: str, count: int, visits: int, threads: int | None) -> None:
    from fuseki.book.analysis import annotate
    from fuseki.book.model import builtin
    from fuseki.book.storage.store import Book

    threads_in_all = search_threads(command)  # what katago benchmark gets: the same threads
    command = batch_command(command)  # as fuseki ai annotate starts it
    settings = katago_settings(command)
    in_flight = threads or queries_to_keep_in_flight(command)
    print(f"annotate against katago benchmark: {count} positions at {visits} visits; KataGo's config: "
          f"numAnalysisThreads {settings['numAnalysisThreads']}, numSearchThreads {settings['numSearchThreads']}, "
          f"nnMaxBatchSize {settings['nnMaxBatchSize']}; annotate keeps {in_flight} queries in flight")
    with Book.open(str(builtin.PATH)) as book, tempfile.TemporaryDirectory() as folder:
        every = annotate.popular_positions(book, 1)
        positions = every[:count]
        finder = annotate.BoardFinder(book, [p.key for p in positions], annotate.walk_through(every, positions))
        for p in positions:
            finder.find(p.key)  # found before the clock starts, as the command's progress counts
        cache = create_engine(f"sqlite:///{folder}/ai.sqlite")
        load = os.getloadavg()[0]
        with KataGo(command, timeout=3600) as katago:
            judge = AiJudge(cache, katago, "japanese", 6.5, visits)
            report = annotate.annotate(judge, positions, finder, cache.begin, threads=in_flight, timeout=3600)
        with cache.connect() as conn:
            searched = conn.execute(select(ai_values.ai_values.c.root_visits)).scalars().all()
        cache.dispose()
    ours = sum(searched) / report.seconds
    print(f"  fuseki ai annotate: {report.done} positions, {sum(searched)} visits in {report.seconds:.1f} s: "
          f"{ours:.2f} visits/s (load average {load:.2f} before)")
    load = os.getloadavg()[0]
    theirs, line = katago_benchmark(command, visits, threads_in_all, count)
    print(f"  katago benchmark -v {visits} -t {threads_in_all} -n {count}: {line} (load average {load:.2f} before)")
    print(f"  annotate / benchmark: {100 * ours / theirs:.0f}% (target: 80% or more)")


def bench_cache(cached: int, lookups: int, rng: random.Random) -> None:
    with tempfile.TemporaryDirectory() as folder:
        cache = create_engine(f"sqlite:///{folder}/ai.sqlite")
        judge = AiJudge(cache, None, "japanese", 6.5, 32, network="bench-net")
        boards = []
        t0 = time.perf_counter()
        with cache.begin() as conn:
            for i in range(cached):
                board = random_opening(rng, 2 + i % 10)
                free = [p for p in base.board_points(19) if board.color_at(p) == 0]
                moves = [(p, 40 - j, rng.random(), rng.uniform(-5, 5), j * 0.3, rng.random())
                         for j, p in enumerate(rng.sample(free, 40))]
                ai_values.put(conn, board.symmetric_keys(), 19, judge.settings, (32, 0.5, 0.0), moves)
                if i < lookups:
                    boards.append(board)
        print(f"cache: {cached:,} positions stored in {time.perf_counter() - t0:.1f} s, "
              f"{os.path.getsize(f'{folder}/ai.sqlite') / cached:,.0f} bytes each")
        asked = []
        for board in boards:
            n = rng.randrange(8)
            turned = Board(19)
            for color in (BLACK, WHITE):
                turned.set_stones(color, [coords.transform_point(n, p, 19) for p in board.stones(color)])
            asked.append((turned, board.to_move))
        times, raw, best, anyone = [], [], [], []
        named = AiValueStores(None, cache, "japanese", 6.5, "bench-net")
        unnamed = AiValueStores(None, cache, "japanese", 6.5, None)
        for board, side in asked:
            t = time.perf_counter()
            assert judge.cached(board, side) is not None
            times.append(time.perf_counter() - t)
            t = time.perf_counter()
            assert named.values(board, side) is not None
            best.append(time.perf_counter() - t)
            t = time.perf_counter()
            assert unnamed.values(board, side) is not None
            anyone.append(time.perf_counter() - t)
            key = zobrist.to_signed(min(board.symmetric_keys(side)))
            t = time.perf_counter()
            with cache.connect() as conn:
                conn.execute(select(ai_values.ai_values.c.moves).where(ai_values.ai_values.c.key == key)).first()
            raw.append(time.perf_counter() - t)
        print(f"  look-up (keys, read, map to the orientation): p50 {1000 * statistics.median(times):.2f} ms, "
              f"p99 {1000 * percentile(times, 0.99):.2f} ms")
        for name, spent in (("AiValueStores, the network's most visits", best), ("AiValueStores, any network", anyone)):
            print(f"  {name + ':':<45} p50 {1000 * statistics.median(spent):.2f} ms, "
                  f"p99 {1000 * percentile(spent, 0.99):.2f} ms")
        print(f"  baseline, the same rows read by key alone:    p50 {1000 * statistics.median(raw):.2f} ms, "
              f"p99 {1000 * percentile(raw, 0.99):.2f} ms")
        cache.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--katago", help="KataGo's analysis command (default: $FUSEKI_KATAGO or .ci/katago's)")
    parser.add_argument("--positions", type=int, default=8)
    parser.add_argument("--visits", type=int, default=16)
    parser.add_argument("--annotate", type=int, default=8, help="positions fuseki ai annotate's loop asks for")
    parser.add_argument("--threads", type=int, default=None,
                        help="its queries in flight (default: as fuseki ai annotate keeps them)")
    parser.add_argument("--compare", type=int, default=4, help="positions annotate and katago benchmark search")
    parser.add_argument("--compare-visits", type=int, default=8, help="their visits a position")
    parser.add_argument("--compare-only", action="store_true", help="only annotate against katago benchmark")
    parser.add_argument("--cached", type=int, default=20000)
    parser.add_argument("--lookups", type=int, default=2000)
    parser.add_argument("--no-katago", action="store_true")
    args = parser.parse_args()
    rng = random.Random(30)
    command = None if args.no_katago else (args.katago or find_command())
    if command and args.compare_only:
        bench_compare(command, args.compare, args.compare_visits, args.threads)
        return
    if command:
        bench_katago(command, args.positions, args.visits, rng)
        if args.annotate:
            bench_annotate(command, args.annotate, args.threads or queries_to_keep_in_flight(command))
        if args.compare:
            bench_compare(command, args.compare, args.compare_visits, args.threads)
    elif not args.no_katago:
        print("no KataGo (bash .ci/katago gets one): its speed is not measured")
    bench_cache(args.cached, args.lookups, rng)


if __name__ == "__main__":
    main()
