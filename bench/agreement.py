"""How often the engine plays what strong players played, on games its book has not seen.

For every game of a held-out archive (default: Tygem December 2009, the month the
built-in book is built without), each of moves 1-20 is asked of the book chooser that
``fuseki-gtp`` uses (``BookChooser.choose`` with the default settings: policy ``best``,
min_games 1; the whole-board book, then the corner book) on the replayed board, and counted
as *agreeing* when the chosen point is the move the player played or one of its images
under the position's own symmetry.  A move neither book answers counts as not agreeing
(the engine would ask its fallback).  Printed: agreement and the share of moves from the
whole-board book, the corner book and the fallback, over moves 1-20 and per move number,
each book also without its corner book (the baseline of the same run); and the time of
each choice by where it came from.

Baseline, measured in the same run: a plain book of games built here from the Tygem
archive of July 2016 (11,364 games), with ``fuseki import``'s importer.

Also measured, each next to its baseline of the same run: ``Book.next_moves`` latency
(positions of the held-out games' first 20 moves in random orientations, no cache;
median and p99) on each book and on the plain book; and the first ``genmove`` of a fresh
``python3 gtp_main.py`` (process start to the answer of ``genmove b`` on 19x19, median of
``--starts`` processes) with the built-in book, next to ``--no-book``.

Usage::

    python3 bench/agreement.py [--book PATH ...] [--held-out ARCHIVE] [--games N] [--moves 20] [--no-baseline]
                              [--queries N] [--starts N]

``--book`` (repeatable): the books to measure (default: the built-in book).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
HELD_OUT = DATA / "tygem-2005-2009" / "tygem-2009-12.tgz"
BASELINE = DATA / "tygem-2016-07.tgz"
sys.path.insert(0, str(ROOT))
__import__("gtp_main").use_this_checkout()  # import fuseki from this checkout, installed or not

from fuseki.book.formats.positions import board_after_record  # noqa: E402
from fuseki.book.formats.sgf_reader import SgfError, read_games  # noqa: E402
from fuseki.book.formats.sources import SourceFile, iter_sources  # noqa: E402
from fuseki.book.model import builtin  # noqa: E402
from fuseki.book.play.book_chooser import BookChooser  # noqa: E402


def held_out_games(path: str, limit: int | None):
    """The 19x19 records of the archive without handicap, in archive order (the first ``limit``)."""
    found = []
    for item in iter_sources([path]):
        if not isinstance(item, SourceFile):
            continue
        try:
            records = read_games(item.data, item.name)
        except SgfError:
            continue
        found += [r for r in records if r.size == 19 and not r.handicap and not r.setup and r.moves]
        if limit and len(found) >= limit:
            return found[:limit]
    return found


class Tally:
    """Agreeing moves and where the engine's choices came from, per move number."""

    SOURCES = ("book", "corner book", "fallback")

    def __init__(self, moves: int):
        self.asked = [0] * (moves + 1)
        self.agreed = [0] * (moves + 1)
        self.by_source = {source: [0] * (moves + 1) for source in self.SOURCES}
        self.seconds = {source: [] for source in self.SOURCES}  # each genmove's choice, by source

    def add(self, number: int, source: str, agreed: bool, seconds: float) -> None:
        self.asked[number] += 1
        self.agreed[number] += agreed
        self.by_source[source][number] += 1
        self.seconds[source].append(seconds)

    def share(self, counts: list[int], number: int | None = None) -> float:
        if number is None:
            return sum(counts) / max(1, sum(self.asked))
        return counts[number] / max(1, self.asked[number])


def measure(location: str, games, moves: int, corner_book: bool = True) -> tuple[Tally, float]:
    """(the tally, seconds) of the book at ``location`` over ``games``' first ``moves`` moves.

    Each move is asked of ``BookChooser.choose`` as ``genmove`` asks it (whole-board book,
    then the corner book unless ``corner_book`` is False); a choice agrees when the move
    played is the chosen point or its image under a symmetry of the position.  None is the
    fallback's turn (counted as not agreeing).
    """
    from fuseki.engine.core.coords import transform_point

    chooser = BookChooser(location, seed=1, corner_book=corner_book)
    tally = Tally(moves)
    start = time.perf_counter()
    for record in games:
        board = board_after_record(record, 0)
        for number in range(1, min(moves, len(record.moves)) + 1):
            colour, played = record.moves[number - 1]
            began = time.perf_counter()
            choice = chooser.choose(board, colour)
            seconds = time.perf_counter() - began
            point = None if choice is None else choice.move
            agreed = False
            if point is not None:
                keys = board.symmetric_keys(colour)
                agreed = played in {transform_point(t, point, board.size) for t in range(8) if keys[t] == keys[0]}
            tally.add(number, choice.source if choice is not None else "fallback", agreed, seconds)
            if board.legal_reason(colour, played) is not None:
                break
            board.play(colour, played)
    return tally, time.perf_counter() - start


def latency(location: str, games, moves: int, queries: int) -> list[float]:
    """Seconds of ``Book.next_moves`` for ``queries`` positions of ``games`` (random orientations)."""
    from fuseki.book.storage.store import Book
    from fuseki.engine.core import coords
    from fuseki.engine.core.board import Board

    rng = random.Random(7)
    boards = []
    while len(boards) < queries:
        record = rng.choice(games)
        board = board_after_record(record, rng.randrange(min(moves, len(record.moves)) + 1))
        image, t = Board(19), rng.randrange(8)
        for colour in (1, 2):
            points = [coords.transform_point(t, p, 19) for p in board.stones(colour)]
            if points:
                image.set_stones(colour, points)
        image.to_move = board.to_move
        boards.append(image)
    times = []
    with Book.open(location, readonly=True) as book:
        book.next_moves(boards[0])  # the connection and the first page reads: not a query's cost
        for board in boards:
            start = time.perf_counter()
            book.next_moves(board)
            times.append(time.perf_counter() - start)
    return times


def first_genmove(args: list[str], starts: int) -> list[float]:
    """Seconds from the start of ``python3 gtp_main.py ARGS`` to its answer of ``genmove b``."""
    env = {k: v for k, v in os.environ.items() if k != "FUSEKI_BOOK"}
    times = []
    with tempfile.TemporaryDirectory() as home:  # no book at the default location
        env["HOME"] = home
        for _ in range(starts):
            start = time.perf_counter()
            done = subprocess.run([sys.executable, str(ROOT / "gtp_main.py"), *args], cwd=str(ROOT), env=env,
                                  input="boardsize 19\nclear_board\ngenmove b\n", capture_output=True, text=True)
            if sum(line.startswith("=") for line in done.stdout.splitlines()) < 3:
                raise RuntimeError(f"gtp_main.py {args}: {done.stderr[-500:]}")
            times.append(time.perf_counter() - start)
    return times


def baseline_book(folder: str) -> tuple[str, int]:
    """A plain book of games of the July 2016 archive, imported here; (path, games)."""
    from fuseki.book.analysis.pipeline import importer
    from fuseki.book.storage.store import Book

    path = os.path.join(folder, "baseline.sqlite")
    with Book.open(path) as book:
        report = importer.import_paths(book, [str(BASELINE)])
    return path, report.added


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--book", action="append", metavar="PATH", help="a book to measure (repeatable)")
    parser.add_argument("--held-out", default=str(HELD_OUT), metavar="ARCHIVE")
    parser.add_argument("--games", type=int, default=None, metavar="N", help="only the first N games")
    parser.add_argument("--moves", type=int, default=20, metavar="N")
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--queries", type=int, default=5000, metavar="N", help="next_moves calls timed per book")
    parser.add_argument("--starts", type=int, default=5, metavar="N", help="fresh engines timed (0: none)")
    args = parser.parse_args()
    if not os.path.exists(args.held_out):
        print(f"skipped: {args.held_out} is missing")
        return 0
    books = [(path, path) for path in args.book or []] or [(str(builtin.PATH), builtin.label())]
    games = held_out_games(args.held_out, args.games)
    print(f"held-out games: {Path(args.held_out).name}, {len(games):,} games, moves 1-{args.moves}; "
          f"load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as folder:
        if not args.no_baseline and BASELINE.exists():
            path, count = baseline_book(folder)
            books.append((path, f"baseline: plain book of {count:,} games (Tygem 2016-07)"))
        results = []
        for path, label in books:
            results.append((label, *measure(path, games, args.moves)))
            results.append((f"{label[:60]}, without its corner book", *measure(path, games, args.moves, False)))
        report(results, args.moves)
        print(f"\nnext_moves, {args.queries:,} positions of moves 0-{args.moves} in random orientations, no cache")
        for path, label in books:
            times = latency(path, games, args.moves, args.queries)
            print(f"  {label[:90]:<90} median {1e3 * statistics.median(times):.3f} ms   "
                  f"p99 {1e3 * percentile(times, 0.99):.3f} ms")
    if args.starts:
        print(f"\nfirst genmove of a fresh python3 gtp_main.py (start to answer, median of {args.starts})")
        for flags, label in (([], "built-in book (no --book, no book at the default location)"),
                             (["--no-book"], "baseline: --no-book")):
            times = first_genmove(flags, args.starts)
            print(f"  {label:<60} median {statistics.median(times):.2f} s   "
                  f"range {min(times):.2f} .. {max(times):.2f} s")
    return 0


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def report(results, moves: int) -> None:
    print(f"\n{'book':<90} {'agree':>7} {'book':>7} {'corner':>7} {'fallback':>8} {'time':>6}")
    for label, tally, seconds in results:
        shares = (tally.share(tally.by_source[source]) for source in Tally.SOURCES)
        print(f"{label[:90]:<90} {tally.share(tally.agreed):>7.1%} " + " ".join(f"{s:>7.1%}" for s in shares)
              + f" {seconds:>6.0f}s")
    print("\nby move number: agree (from the book / the corner book / the fallback), books in the order above")
    for number in range(1, moves + 1):
        cells = "   ".join(
            f"{t.share(t.agreed, number):6.1%} ({t.share(t.by_source['book'], number):4.0%} / "
            f"{t.share(t.by_source['corner book'], number):4.0%} / {t.share(t.by_source['fallback'], number):4.0%})"
            for _label, t, _s in results)
        print(f"move {number:>2}   {cells}")
    print("\ngenmove's choice (book query and pick; ms), by where it came from: median / p99 / max")
    for label, tally, _seconds in results:
        parts = [f"{source} {1e3 * statistics.median(times):.2f} / {1e3 * percentile(times, 0.99):.2f} / "
                 f"{1e3 * max(times):.1f} ({len(times):,})"
                 for source, times in tally.seconds.items() if times]
        print(f"  {label[:70]:<70} " + "; ".join(parts))


if __name__ == "__main__":
    raise SystemExit(main())
