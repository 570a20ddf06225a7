"""The book at the scale of a big corpus: ``python3 bench/book.py --corpus PATH [PATH ...]``.

What issue "The book at 1.5 million games" asks to print, on the Tygem archives
(``../shared/data/tygem-2005-2009/`` plus ``tygem-2016-07.tgz``, 378,000 games):

- the import: games/s of each tenth of the games (the last tenth as fast as the first?),
  then what ``fuseki import`` does after the batches to leave the book complete (the pattern
  index was written with the games; the corner book is built: ``import_command.complete_book``), its
  seconds and the games/s of the two together,
  overall games/s and the share it reaches of the parse-bound ceiling (the cores over the parsers'
  CPU a game: every core parsing, nothing else), CPU per game of each stage (this process writes; its children read
  and parse), peak memory (all the import's processes together, and each one's max resident
  set), bytes/game and free pages after it;
- the engine's first book query in a fresh process (open read-only, empty board);
- ``next_moves`` p50/p99/max over the hot openings (each in 8 orientations), positions of the
  book's own games and positions of held-out games (``ai-games.tgz``), with no filter, a year
  filter and a player filter; and the same queries answered from the rows alone (the
  segments' next-move statistics ignored): the baseline of the same run;
- ``games`` first and second pages and the player-name filter (``bench/book.py --query-book``).

``--into PATH`` keeps the book (default: a temporary file); ``--reuse`` skips the import when
PATH exists.  Big-corpus figures run outside CI (minutes, gigabytes).
"""

from __future__ import annotations

import os
import random
import resource
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from fuseki.book.analysis.pipeline import batches, importer
from fuseki.book.model.filters import Filters
from fuseki.book.storage import segment_files, segments
from fuseki.book.storage.store import Book
from fuseki.book.ui.commands import import_command

ROOT = Path(__file__).resolve().parents[1]  # the checkout the fresh process must import

class Tenths:
    """An import progress that notes when each tenth of the games was written."""

    def __init__(self):
        self.marks: list[tuple[int, float]] = []  # (games written, seconds) after each batch
        self.began = time.perf_counter()

    def start(self, total: int) -> None:
        self.began = time.perf_counter()

    def update(self, report, read: int, force: bool = False) -> None:
        games = report.added + report.duplicates
        self.marks.append((games, time.perf_counter() - self.began))
        if len(self.marks) % 20 == 0:
            print(f"    ... {games:,} games, {games / self.marks[-1][1]:,.0f} games/s", file=sys.stderr)

    def done(self) -> None:
        pass

    def rates(self) -> list[float]:
        """games/s of each tenth of the games (the batches that ended in it)."""
        rates, last = [], (0, 0.0)
        total = self.marks[-1][0] if self.marks else 0
        for tenth in range(1, 11):
            goal = total * tenth / 10
            mark = next((m for m in self.marks if m[0] >= goal), self.marks[-1])
            if mark[1] > last[1]:
                rates.append((mark[0] - last[0]) / (mark[1] - last[1]))
            last = mark
        return rates


class TreeMemory:
    """The peak, over the import, of the memory of this process and its descendants together.

    Each process's max resident set counts the pages the parsers share with this process
    (forked after the kernels were loaded) once in every process, and the mapped book's
    pages in each reader; the proportional set size (Linux's ``smaps_rollup``) shares them
    out, so the sum of it is what the import takes from the machine.  Sampled every 0.2 s."""

    def __init__(self):
        self.peak_pss = self.peak_rss = 0  # kB
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    @staticmethod
    def _tree(pid: int) -> list[int]:
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as found:
                children = [int(child) for child in found.read().split()]
        except OSError:
            return [pid]
        return [pid] + [p for child in children for p in TreeMemory._tree(child)]

    def _sample(self) -> None:
        while not self._stop.wait(0.2):
            pss = rss = 0
            for pid in self._tree(os.getpid()):
                try:
                    with open(f"/proc/{pid}/smaps_rollup") as rollup:
                        for line in rollup:
                            if line.startswith("Pss:"):
                                pss += int(line.split()[1])
                            elif line.startswith("Rss:"):
                                rss += int(line.split()[1])
                except OSError:  # ended meanwhile, or not Linux
                    continue
            self.peak_pss, self.peak_rss = max(self.peak_pss, pss), max(self.peak_rss, rss)


def run_import(path: str, sources: list[str], workers: int) -> None:
    batches.warm_up()
    progress = Tenths()
    book = Book.open(path)
    cpu, children = time.process_time(), resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with TreeMemory() as memory:
        report = importer.import_paths(book, sources, workers=workers, progress=progress)
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    child = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
    games = report.added + report.duplicates
    began = time.perf_counter()
    import_command.complete_book(book)
    after_batches = time.perf_counter() - began
    book.close()
    print(f"import: {report}")
    print(f"    after the batches, the corner book (the pattern index was written with the games): "
          f"{after_batches:.1f} s; batches and corner book together "
          f"{games / (elapsed + after_batches):,.0f} games/s")
    print(f"    {games / elapsed:,.0f} games/s end to end, {workers} parser processes; each tenth of the games: "
          + ", ".join(f"{r:,.0f}" for r in progress.rates()) + "   target >= 4,000 sustained")
    ceiling = parse_ceiling(report)
    if ceiling:
        whole = games / (elapsed + after_batches)
        print(f"    against the parse-bound ceiling ({os.cpu_count()} cores / the parsers' CPU a game): "
              f"{ceiling:,.0f} games/s; the batches reach {games / elapsed / ceiling:.0%} of it, the complete "
              f"import (corner book included) {whole / ceiling:.0%}   target >= 80% (issue 61)")
    print(f"    CPU per game: writer (this process, its checkpoint thread included) {1e6 * cpu / games:,.0f} us, "
          f"reader + parsers (children) {1e6 * child / games:,.0f} us")
    print("    " + stage_figures(report))
    print(f"    peak memory: all the import's processes together {memory.peak_pss / 1024:,.0f} MB (proportional "
          f"set size; the sum of resident sets {memory.peak_rss / 1024:,.0f} MB)   target <= 1,500 MB; "
          f"each process's max resident set: writer {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f}"
          f" MB, largest child {after.ru_maxrss / 1024:,.0f} MB")


def parse_ceiling(report) -> float:
    """The import's parse-bound ceiling in games/s: every core parsing, nothing else (the cores
    over the parsers' CPU a game); 0 when the import's report does not say its stages' CPU."""
    parsers = report.cpu.get("parsers", 0.0) / max(1, report.added + report.duplicates)
    return (os.cpu_count() or 1) / parsers if parsers > 0 else 0.0


def stage_figures(report) -> str:
    """Each stage's CPU per game (the import's report), and what the one-process stages allow."""
    games = report.added + report.duplicates
    cpu = {stage: 1e6 * seconds / max(1, games) for stage, seconds in report.cpu.items()}
    if not {"reader", "parsers", "writer"} <= set(cpu):
        return "CPU per stage: not known (the import was stopped)"
    serial = max(cpu["reader"], cpu["writer"])
    return (f"CPU per game by stage: reader {cpu['reader']:,.1f} us, parsers {cpu['parsers']:,.1f} us (all of "
            f"them), writer {cpu['writer']:,.1f} us (its thread) -> the one-process stages allow "
            f"{1e6 / serial:,.0f} games/s, which {cpu['parsers'] / serial:,.1f} busy parser processes reach")


def file_figures(path: str) -> None:
    if "://" in path:
        return database_figures(path)
    with sqlite3.connect(path) as conn:
        pages, free, size = (conn.execute(f"PRAGMA {p}").fetchone()[0]
                             for p in ("page_count", "freelist_count", "page_size"))
        games = conn.execute("SELECT count(*) FROM games").fetchone()[0]
        tables = conn.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table' "
                              "AND name GLOB 'next_stats_*'").fetchone()[0]
    with Book.open(path, readonly=True) as book, book.db.connect() as conn:
        live = segments.live(conn)
        files = segment_files.in_files(conn)
    folder = segment_files.folder_of(path)
    beside = sum(os.path.getsize(os.path.join(folder, segment.name)) for segment in files)
    patterns = path + "-patterns"  # the pattern index's files (book.storage.pattern_files)
    indexed = sum(os.path.getsize(os.path.join(patterns, name)) for name in os.listdir(patterns)) \
        if os.path.isdir(patterns) else 0
    total = pages * size + beside + indexed
    print(f"file: {total / 1e9:,.2f} GB for {games:,} games = {total / games:,.0f} bytes/game "
          f"(the book's file {pages * size / games:,.0f}, its {len(files)} segment files {beside / games:,.0f}, "
          f"its pattern index's files {indexed / games:,.0f}), "
          f"of which free pages {free * size / games:,.0f} bytes/game   target <= 5,000")
    with sqlite3.connect(path) as conn:
        try:  # what each byte a game is for: docs/storage.md's table
            by_table = conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC").fetchall()
        except sqlite3.OperationalError:  # an SQLite built without the dbstat table
            by_table = []
    if by_table:
        print("    in the book's file, bytes a game: " + ", ".join(
            f"{name} {pages_bytes / games:,.0f}" for name, pages_bytes in by_table if pages_bytes / games >= 1))
    print(f"    {len(live)} segments (levels {sorted(s.level for s in live)}), "
          f"{tables + len(files)} with next-move statistics, {len(files)} of them files")


def database_figures(url: str) -> None:
    """A PostgreSQL book: the database's size per game, its segments and their indexes."""
    with Book.open(url, readonly=True) as book, book.db.connect() as conn:
        size = conn.exec_driver_sql("SELECT pg_database_size(current_database())").scalar()
        games = conn.exec_driver_sql("SELECT count(*) FROM games").scalar()
        live = segments.live(conn)
        indexes = conn.exec_driver_sql("SELECT tablename, indexdef FROM pg_indexes WHERE schemaname = 'public' "
                                       "AND tablename NOT LIKE 'positions\\_%%' "
                                       "AND tablename NOT LIKE 'next_stats\\_%%' "
                                       "ORDER BY tablename").all()
        segment_index = conn.exec_driver_sql("SELECT indexdef FROM pg_indexes WHERE tablename LIKE 'positions\\_%%' "
                                             "LIMIT 1").scalar()
    print(f"database: {size / 1e9:,.2f} GB for {games:,} games = {size / games:,.0f} bytes/game "
          "(pg_database_size: tables, indexes, free space)   target <= 5,000")
    print(f"    {len(live)} segments (levels {sorted(s.level for s in live)}), each a table: {segment_index}")
    for table, definition in indexes:
        print(f"    index on {table}: {definition}")


FIRST_QUERY = """
import sys, time
began = time.perf_counter()
sys.path.insert(0, sys.argv[2])
__import__("gtp_main").use_this_checkout()  # this checkout's fuseki, not whichever is installed
from fuseki.book.storage.store import Book
from fuseki.engine.core.board import Board
board = Board(19)
board.symmetric_keys(board.to_move)  # the engine has its board kernels loaded before it asks its book
imported = time.perf_counter()
book = Book.open(sys.argv[1], readonly=True)
opened = time.perf_counter()
moves = book.next_moves(board)
done = time.perf_counter()
print(f"{1000 * (imported - began):.0f} {1000 * (opened - imported):.0f} {1000 * (done - opened):.0f} {moves.total}")
"""


def first_query(path: str) -> None:
    runs = []
    for _ in range(5):
        out = subprocess.run([sys.executable, "-c", FIRST_QUERY, path, str(ROOT)], capture_output=True, text=True,
                             check=True)
        runs.append([float(x) for x in out.stdout.split()])
    runs.sort(key=lambda r: r[2])
    imports, opened, query, total = runs[len(runs) // 2]
    print(f"engine's first book query, fresh process (median of 5): empty board, {total:,.0f} games, "
          f"{query:.1f} ms (open {opened:.1f} ms; before it: imports and board kernels {imports:.0f} ms)"
          "   target <= 50 ms")


def forget_answers(book: Book) -> None:
    """Empty the cache of big answers (SegmentIndex.busy), keeping the filters' masks."""
    book.source.forget()


def next_moves_figures(bench_book, book: Book, sets, player: str) -> None:
    cases = [("no filter", Filters()), ("years 2006-2007", Filters(year_from=2006, year_to=2007)),
             (f"player '{player}'", Filters(player=player))]
    plain = segments.key_stats

    def rows_only(conn, snap, key):  # the baseline: every segment read as rows
        return plain(conn, snap._replace(with_stats=frozenset()), key)

    for label, boards in sets:
        for name, filters in cases:
            bench_book.time_calls(lambda b, f=filters: book.next_moves(b, filters=f), boards)  # warm
            forget_answers(book)
            fast = bench_book.time_calls(lambda b, f=filters: book.next_moves(b, filters=f), boards)
            segments.key_stats = rows_only
            book.forget_caches()
            try:
                bench_book.time_calls(lambda b, f=filters: book.next_moves(b, filters=f), boards)
                forget_answers(book)
                rows = bench_book.time_calls(lambda b, f=filters: book.next_moves(b, filters=f), boards)
            finally:
                segments.key_stats = plain
                book.forget_caches()
            print(f"    next_moves {label:<32} {name:<18} {bench_book.ms(fast)}   rows only: "
                  f"{bench_book.ms(rows)}")
    print("    (each set timed on its second pass, its answers' cache emptied first: the first pass opens the\n"
          "     connections; the engine's first query above is the cold case)   targets: p99 <= 5 ms")


def run(bench_book, paths: list[str], into: str | None, reuse: bool, workers: int, queries: int, seed: int) -> int:
    """Import the corpus (unless reused) and print the figures; ``bench_book``: bench/book.py's helpers."""
    sources = []
    for path in paths:
        found = Path(path)
        sources += sorted(str(p) for p in found.glob("*.tgz")) if found.is_dir() else [str(found)]
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start; "
          f"{len(sources)} archives")
    with tempfile.TemporaryDirectory() as tmp:
        path = into or str(Path(tmp) / "book.sqlite")
        if "://" in path:  # PostgreSQL: an empty database to fill (or one to --reuse)
            with Book.open(path) as book:
                games = book.stats().games
            if games and not reuse:
                raise SystemExit(f"{path} holds {games:,} games: give an empty database, or --reuse it")
            if not games:
                run_import(path, sources, workers)
        elif not (reuse and os.path.exists(path)):
            for old in (path, path + "-wal", path + "-shm"):
                if os.path.exists(old):
                    os.remove(old)
            run_import(path, sources, workers)
        file_figures(path)
        first_query(path)
        rng = random.Random(seed)
        book = Book.open(path, readonly=True)
        sets = [("hot openings x 8", bench_book.opening_boards()),
                ("book's games", bench_book.sample_boards(book, queries, rng)),
                ("held-out games", bench_book.held_out_boards(queries, rng))]
        player = (book.game(1).black or "a")[:4]
        next_moves_figures(bench_book, book, sets, player)
        book.close()
        return bench_book.query_book(path, queries, 40, rng)
