"""The import's scaling with its parser processes: ``python3 bench/scaling.py --corpus PATH [PATH ...]``.

For each count of parser processes (``--workers 1,2,4,8,16``) and each batch size
(``--batch-games 16000,auto``: ``auto`` is what ``fuseki import`` does, ``groups.sized_batch``),
a fresh SQLite book in a temporary folder gets the whole corpus the way ``fuseki import``
makes it: the batches (games, positions, pattern index), then ``import_command.complete_book``
(busy rows and the corner book).  Printed for each run: games/s of the batches and of the
complete import, the efficiency against N times the one-parser run of the same batch size
(the baseline of the same run: issue 42 asks for at least 0.6 at 16), the CPU per game of
each stage, the import's peak memory, the batches' count and bytes a game.

Run it on an otherwise idle machine: one import at a time, in the order given.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus  # noqa: E402  (bench/corpus.py: TreeMemory, stage_figures)

from fuseki.book.analysis.pipeline import batches, importer  # noqa: E402
from fuseki.book.analysis.pipeline.groups import sized_batch  # noqa: E402
from fuseki.book.storage.store import Book  # noqa: E402
from fuseki.book.ui.commands import import_command  # noqa: E402


class Count:
    """A progress that counts the batches the writer wrote."""

    def __init__(self):
        self.batches = 0

    def start(self, total: int) -> None:
        pass

    def update(self, report, read: int, force: bool = False) -> None:
        self.batches += 1

    def done(self) -> None:
        pass


def book_bytes(path: str) -> int:
    """Everything the book keeps: its file, its segment files, its pattern index's files."""
    folder = Path(path).parent
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def one_import(sources: list[str], workers: int, batch_games: int | None) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "book.sqlite")
        book = Book.open(path)
        progress = Count()
        start = time.perf_counter()
        with corpus.TreeMemory() as memory:
            report = importer.import_paths(book, sources, workers=workers, batch_games=batch_games,
                                           progress=progress)
            batches_s = time.perf_counter() - start
            began = time.perf_counter()
            import_command.complete_book(book)
            complete_s = time.perf_counter() - began
        book.close()
        games = report.added + report.duplicates
        return dict(games=games, batches_s=batches_s, complete_s=complete_s, batches=progress.batches - 1,
                    stages=corpus.stage_figures(report), pss=memory.peak_pss / 1024,
                    bytes=book_bytes(path) / max(1, report.added))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", nargs="+", required=True, metavar="PATH", help="archives or folders of them")
    parser.add_argument("--workers", default="1,2,4,8,16", help="parser processes, comma-separated")
    parser.add_argument("--batch-games", default="16000,auto",
                        help="games a batch, comma-separated; auto: what fuseki import chooses (default 16000,auto)")
    args = parser.parse_args()
    sources = []
    for path in args.corpus:
        found = Path(path)
        sources += sorted(str(p) for p in found.glob("*.tgz")) if found.is_dir() else [str(found)]
    counts = [int(n) for n in args.workers.split(",")]
    sizes = [None if size == "auto" else int(size) for size in args.batch_games.split(",")]
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start; "
          f"{len(sources)} archives; Python {sys.version.split()[0]}")
    batches.warm_up()
    one: dict[int, float] = {}  # batch size -> the one-parser rate, complete
    rows = []
    for size in sizes:
        for workers in counts:
            chosen = sized_batch(sources, workers, importer.BATCH_GAMES) if size is None else size
            if size is None and chosen in sizes:
                print(f"{workers:>2} parsers, auto = {chosen:,} games a batch: run above")
                continue
            run = one_import(sources, workers, size)
            total = run["batches_s"] + run["complete_s"]
            rate = run["games"] / total
            if workers == 1:
                one[chosen] = rate
            base = one.get(sized_batch(sources, 1, importer.BATCH_GAMES))  # one parser: full batches
            efficiency = rate / (workers * base) if base else None  # no one-parser run to compare
            rows.append((workers, size, chosen, run, rate, efficiency))
            against = "" if efficiency is None else f" = {efficiency:.2f} x N x one parser"
            print(f"{workers:>2} parsers, {'auto' if size is None else size} = {chosen:,} games a batch: "
                  f"{run['games']:,} games; batches {run['games'] / run['batches_s']:,.0f} games/s "
                  f"({run['batches_s']:.1f} s, {run['batches']} batches), then busy rows and corner book "
                  f"{run['complete_s']:.1f} s; complete {rate:,.0f} games/s{against}; "
                  f"peak memory {run['pss']:,.0f} MB; {run['bytes']:,.0f} bytes a game", flush=True)
            print(f"    {run['stages']}", flush=True)
    print("\n| parsers | batch | games/s, batches | games/s, complete | efficiency | corner book | memory |")
    print("|---|---|---|---|---|---|---|")
    for workers, size, chosen, run, rate, efficiency in rows:
        print(f"| {workers} | {'auto ' if size is None else ''}{chosen:,} | {run['games'] / run['batches_s']:,.0f} | "
              f"{rate:,.0f} | {'-' if efficiency is None else f'{efficiency:.2f}'} | {run['complete_s']:.1f} s | "
              f"{run['pss']:,.0f} MB |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
