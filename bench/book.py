"""Benchmark of the opening book (a script that prints figures, not a test).

In one run, on the Tygem archive (11,365 19x19 games):

(a) import: end to end (archive -> fresh book) with ``book.analysis.pipeline.importer.import_paths``,
    games/s; and two baselines on a sample (default 500 games), in the same run: the
    issue's (sgfmill parses, ``sgfmill.boards.Board`` replays: the import must be 20x
    that), and the same plus what a book needs, done straightforwardly (Python computes
    the 8 symmetric Zobrist keys per position, rows go in one per ``executemany``);
(b) database bytes per game (the file after the import, WAL checkpointed);
(c) ``Book.next_moves`` latency, median and p99, over positions sampled from the
    games in random orientations (the empty board and the common openings included),
    with no filter, a year filter and a player filter; and ``Book.games`` first page.

Targets: import >= 20x the issue's baseline (>= 3,000 games/s), <= 5 KB/game,
next_moves median <= 1 ms and p99 <= 5 ms (<= 50 ms with filters), games first page <= 20 ms.

(d) with ``--query-book PATH``: no import; an existing book (a big one) opened read-only, and
    ``Book.games`` timed: the first page of 20 (newest first) for the hot openings (empty
    board, Q16, Q16 D4, ... in each orientation), for positions of the book's own games and
    for positions of held-out games (``ai-games.tgz``, not in the book), the next page by
    keyset (``after=``) where the code has it, and player-name filters (each name new, so no
    filter cache helps).  Run it with this checkout and with an older one on the same book:
    the figures are the before/after.  Targets (the issue "The book at 1.5 million games", at
    378,000 games, 2 cores): first page p99 <= 50 ms, name filter p99 <= 100 ms.

(e) with ``--query-book PATH --caches``: what each cache on the next-move path saves
    (docs/book-api.md, "Caches"), each query timed with it and without it in the same run:
    ``SegmentIndex.busy`` (the hot openings' next moves, plain and with a player filter, and
    their first page of games; each query once with the busy rows kept and once with them
    dropped just before, interleaved) and the web page's ``ResponseCache`` (50 seeded walks of
    12 moves through ``/api/position`` and ``/api/games`` by Flask's test client, ten walkers
    each walking five times as visitors share openings; answers kept, then none kept).

Usage::

    python3 bench/book.py [--book URL] [--games N] [--queries N] [--baseline N] [--workers W] [--repeats R] [--compact]
    python3 bench/book.py --query-book PATH [--queries N] [--names N] [--filters] [--caches]
    python3 bench/book.py --corpus PATH [PATH ...] [--into BOOK [--reuse]] [--workers W]   (bench/corpus.py)

``--book``: a SQLAlchemy URL or path to import into (default: a fresh SQLite file in a
temporary folder; a PostgreSQL URL must name an empty database).  ``--games N``:
import only the first N games (a folder of N files is written first, untimed).
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "tygem-2016-07.tgz"
sys.path.insert(0, str(ROOT))
__import__("gtp_main").use_this_checkout()  # import fuseki from this checkout, installed or not

from sgfmill import sgf, sgf_moves  # noqa: E402

from fuseki.book.analysis.pipeline import batches, importer  # noqa: E402
from fuseki.book.formats.sources import SourceFile, iter_sources  # noqa: E402
from fuseki.book.model.filters import Filters  # noqa: E402
from fuseki.book.storage import schema  # noqa: E402
from fuseki.book.storage.position_index import nextmoves, segment_files, segments  # noqa: E402
from fuseki.book.storage.store import Book  # noqa: E402
from fuseki.engine.core import base, coords, zobrist  # noqa: E402
from fuseki.engine.core.base import BLACK, WHITE, vertex_to_point  # noqa: E402
from fuseki.engine.core.board import Board  # noqa: E402


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def ms(values) -> str:
    if not values:
        return "(no positions to time)"
    return (f"median {1000 * statistics.median(values):7.3f} ms   p99 {1000 * percentile(values, 0.99):7.3f} ms"
            f"   max {1000 * max(values):7.2f} ms")


# --- (a) import ------------------------------------------------------------------------------

def source_paths(args, workdir: Path) -> list[str]:
    if not args.games:
        return [str(DATA)]
    folder = workdir / "games"
    folder.mkdir()
    for i, item in enumerate(s for s in iter_sources([str(DATA)]) if isinstance(s, SourceFile)):
        if i >= args.games:
            break
        (folder / f"{i:06d}.sgf").write_bytes(item.data)
    return [str(folder)]


def run_import(url: str, paths: list[str], workers: int):
    """(book, report, wall seconds, CPU seconds of this process, CPU seconds of its child processes)."""
    book = Book.open(url)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = time.process_time()
    start = time.perf_counter()
    report = importer.import_paths(book, paths, workers=workers)
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    worker = (after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime)
    return book, report, elapsed, cpu, worker


def parse_replay_baseline(sample: list[bytes]) -> float:
    """games/s of the issue's baseline: sgfmill parses each game and sgfmill.boards.Board replays it."""
    start = time.perf_counter()
    for data in sample:
        game = sgf.Sgf_game.from_bytes(data)
        board, plays = sgf_moves.get_setup_and_moves(game)
        for colour, move in plays:
            if move is not None:
                try:
                    board.play(move[0], move[1], colour)
                except ValueError:
                    break
    return len(sample) / (time.perf_counter() - start)


def baseline(sample: list[bytes], path: Path) -> float:
    """games/s of the straightforward pipeline (sgfmill + Python keys + row-at-a-time inserts)."""
    table = zobrist.table()
    start = time.perf_counter()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("CREATE TABLE positions (key INTEGER, code INTEGER, PRIMARY KEY (key, code)) WITHOUT ROWID")
    size = 19
    syms = [[[coords.transform_xy(t, x, y, size) for x in range(size)] for y in range(size)] for t in range(8)]
    side = {BLACK: table.size[size], WHITE: table.size[size] ^ table.white_to_move}
    rows = []
    for game_id, data in enumerate(sample, 1):
        game = sgf.Sgf_game.from_bytes(data)
        board, plays = sgf_moves.get_setup_and_moves(game)
        hashes = [0] * 8
        stones: dict[tuple[int, int], str] = {}
        for number in range(len(plays) + 1):
            colour = plays[number][0] if number < len(plays) else ("w" if plays and plays[-1][0] == "b" else "b")
            keys = [h ^ side[BLACK if colour == "b" else WHITE] for h in hashes]
            best = min(range(8), key=lambda t: keys[t])
            if number == len(plays):
                nxt = -2
            else:
                move = plays[number][1]
                if move is None:
                    nxt = -1
                else:
                    x, y = syms[best][size - 1 - move[0]][move[1]]
                    nxt = base.xy_to_point(x, y, size)
            rows.append((zobrist.to_signed(keys[best]), (game_id << 24) | (number << 12) | ((nxt + 2) << 2)))
            if number == len(plays) or plays[number][1] is None:
                continue
            try:
                board.play(plays[number][1][0], plays[number][1][1], plays[number][0])
            except ValueError:
                break
            now = {(r, c): col for col, (r, c) in board.list_occupied_points()}
            for point in set(stones) | set(now):
                before, after = stones.get(point), now.get(point)
                if before != after:
                    y, x = size - 1 - point[0], point[1]
                    for t in range(8):
                        tx, ty = syms[t][y][x]
                        for col in (before, after):
                            if col:
                                hashes[t] ^= int(table.stone[0 if col == "b" else 1, ty, tx])
            stones = now
    with conn:
        conn.executemany("INSERT OR IGNORE INTO positions VALUES (?, ?)", rows)
    conn.close()
    return len(sample) / (time.perf_counter() - start)


# --- (c) queries ------------------------------------------------------------------------------

def sample_boards(book: Book, count: int, rng: random.Random) -> list[Board]:
    """Positions from stored games, each in a random orientation; 5% are the empty board and
    a third come from the first 12 moves (the common openings)."""
    top = book.max_game_id()
    boards = [Board(19) for _ in range(count // 20)]
    while len(boards) < count:
        try:
            record = book.game(rng.randint(1, top))
        except KeyError:
            continue
        if record.size != 19 or record.setup:
            continue
        t = rng.randrange(8)
        wanted = sorted({rng.randint(0, min(12, len(record.moves))) if rng.random() < 0.34
                         else rng.randint(0, len(record.moves)) for _ in range(5)})
        board = Board(19)
        number = 0
        for colour, point in record.moves:
            if number in wanted:
                boards.append(board.copy())
            if number >= wanted[-1]:
                break
            try:
                board.play(colour, coords.transform_point(t, point, 19))
            except Exception:  # an anomaly: stop there
                break
            number += 1
        else:
            if number in wanted:
                boards.append(board.copy())
    return boards[:count]


HOT_OPENINGS = ["", "Q16", "Q16 D4", "Q16 D4 Q3", "Q16 D4 Q3 D16", "Q16 D16", "R16", "R16 D4", "Q16 D4 R4"]
HELD_OUT = ROOT.parent / "shared" / "data" / "ai-games.tgz"


def opening_boards() -> list[Board]:
    """The hot openings, each in the 8 orientations."""
    boards = []
    for line in HOT_OPENINGS:
        for t in range(8):
            board = Board(19)
            for i, vertex in enumerate(line.split()):
                board.play(BLACK if i % 2 == 0 else WHITE, coords.transform_point(t, vertex_to_point(vertex, 19), 19))
            boards.append(board)
    return boards


def held_out_boards(count: int, rng: random.Random) -> list[Board]:
    """Positions of games not in the book (the AI games archive), at random move numbers."""
    from fuseki.book.formats.sgf_reader import read_games

    boards = []
    if not HELD_OUT.exists():
        print(f"    {HELD_OUT} not found: no held-out positions", file=sys.stderr)
    for item in iter_sources([str(HELD_OUT)] if HELD_OUT.exists() else []):
        if len(boards) >= count:
            break
        if not isinstance(item, SourceFile):
            continue
        for record in read_games(item.data, item.name):
            if record.size != 19 or record.setup or not record.moves:
                continue
            board = Board(19)
            stop = rng.randint(0, min(len(record.moves), 60))
            try:
                for colour, point in record.moves[:stop]:
                    board.play(colour, point)
            except Exception:  # an anomaly: the position before it
                pass
            boards.append(board)
    return boards[:count]


def query_book(path: str, count: int, names_count: int, rng: random.Random, filters: bool = False) -> int:
    """(d): Book.games on an existing book, read-only (``filters``: then ``filter_latency``)."""
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start")
    start = time.perf_counter()
    book = Book.open(path, readonly=True)
    games = book.stats().games
    print(f"(d) {path}: {games:,} games, opened in {time.perf_counter() - start:.2f} s")
    start = time.perf_counter()
    book.games(Board(19), page_size=20)  # the first call also builds the caches (date ranks)
    print(f"    first call of the process (empty board, caches built): {1000 * (time.perf_counter() - start):.0f} ms")
    sets = [("hot openings x 8 orientations", opening_boards()),
            ("positions of the book's games", sample_boards(book, count, rng)),
            ("positions of held-out games", held_out_boards(count, rng))]
    keyset = "after" in Book.games.__code__.co_varnames
    for name, boards in sets:
        found = [book.games(b, page_size=20).total for b in boards[:200]]
        times = time_calls(lambda b: book.games(b, page_size=20), boards)
        print(f"    games, first page of 20, {name:<30} {ms(times)}   ({len(boards):,} positions, "
              f"median {statistics.median(found):,.0f} games)")
        if keyset:
            nexts = [(b, book.games(b, page_size=20).after) for b in boards]
            nexts = [(b, after) for b, after in nexts if after]
            times = []
            for board, after in nexts:
                began = time.perf_counter()
                book.games(board, page_size=20, after=after)
                times.append(time.perf_counter() - began)
            if times:
                print(f"    games, second page by after=, {name:<26} {ms(times)}")
    names = []
    for i in rng.sample(range(1, book.max_game_id() + 1), 300):
        record = book.game(i)
        names += [n for n in (record.black, record.white) if n]
    for label, make in [("whole name", lambda n: n), ("first 3 letters", lambda n: n[:3]),
                        ("3 letters from the middle", lambda n: n[1:4])]:
        # a new value each time: the masks of earlier names are dropped (Book._masks), so
        # every call finds its games as a first visitor asking for that name would
        values = list(dict.fromkeys(make(n) for n in names if make(n).strip()))[:names_count]
        times, hits = [], []
        for value in values:
            book._masks.clear()
            began = time.perf_counter()
            hits.append(book.games(Board(19), filters=Filters(player=value), page_size=20).total)
            times.append(time.perf_counter() - began)
        print(f"    games, empty board, player ({label:<25}) {ms(times)}   ({len(values)} values, "
              f"median {statistics.median(hits):,.0f} games)")
    print("    targets: first page p99 <= 50 ms (any position); player filter p99 <= 100 ms")
    if filters:
        filter_latency(book, count, rng)
    book.close()
    return 0


def cache_worth(path: str, rounds: int = 40) -> int:
    """(e): each cache on the next-move path timed kept and not kept, in the same run."""
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start")
    book = Book.open(path, readonly=True)
    boards = opening_boards()[::8][:6]  # the hot openings, one orientation each
    player = Filters(player="a")
    cases = [("next_moves", lambda b: book.next_moves(b)),
             ("next_moves, player 'a'", lambda b: book.next_moves(b, filters=player)),
             ("games, first page of 20", lambda b: book.games(b, page_size=20))]
    print(f"(e) SegmentIndex.busy on {path}: {len(boards)} hot openings x {rounds} rounds")
    for label, ask in cases:
        for board in boards:
            ask(board)  # the mask and the date ranks built, apart
        kept, dropped = [], []
        for _ in range(rounds):
            for board in boards:
                ask(board)  # kept again, if the last query dropped it
                kept += time_calls(ask, [board])
                book.source.forget()
                dropped += time_calls(ask, [board])
        print(f"    {label:<26} busy kept    {ms(kept)}")
        print(f"    {'':<26} busy dropped {ms(dropped)}")
    book.close()
    from fuseki.book.ui.web.app import create_app

    print("(e) the web page's ResponseCache: 50 walks of 12 moves, /api/position and /api/games")
    for label, cache_bytes in (("answers kept", None), ("none kept", 0)):
        client = create_app(book_url=path, cache_bytes=cache_bytes).test_client()
        times = []
        for walk in range(50):
            walker = random.Random(walk % 10)
            moves: list[str] = []
            for _ in range(12):
                query = f"moves={','.join(moves)}" if moves else ""
                for url in (f"/api/position?{query}", f"/api/games?{query}"):
                    began = time.perf_counter()
                    client.get(url, headers={"Host": "localhost"})
                    times.append(time.perf_counter() - began)
                found = client.get(f"/api/position?{query}", headers={"Host": "localhost"}).get_json()
                nexts = [m for m in found.get("next", []) if m.get("sgf")]
                if not nexts:
                    break
                moves.append(walker.choices(nexts, weights=[m["games"] for m in nexts])[0]["sgf"])
        print(f"    {label:<12} {ms(times)}   ({len(times):,} requests)")
    return 0


def filter_latency(book: Book, count: int, rng: random.Random) -> None:
    """(d) with --filters: next_moves under each game filter, no filter and a player filter.

    Each case starts without the kept rows of busy positions (``SegmentIndex.busy``), so no filter
    is timed on rows an earlier one read; its first call (the mask, and for the header filters
    every game's headers, read) is printed apart from the timed positions."""
    boards = opening_boards() + held_out_boards(count, rng)
    record = book.game(rng.randint(1, book.max_game_id()))
    player = (record.black or "a")[:4]
    cases = [("no filter", Filters()), (f"player '{player}'", Filters(player=player)),
             ("event 'cup'", Filters(event="cup")), ("winner B", Filters(winner="B")),
             ("won by resign", Filters(won_by="resign")), ("won by points, margin 0.5-5", Filters(margin=(0.5, 5.0))),
             ("rank at least 9d", Filters(min_rank=9)), ("rank at most 5k", Filters(max_rank=-4)),
             ("handicap 2-4", Filters(handicap=(2, 4))), ("komi 6.5", Filters(komi=(6.5, 6.5))),
             ("winner W, time, komi 5.5-7.5", Filters(winner="W", won_by="time", komi=(5.5, 7.5)))]
    print(f"    next_moves with filters: {len(boards)} positions (the hot openings x 8, then held-out games)")
    for label, filters in cases:
        book.forget_caches()
        began = time.perf_counter()
        kept = book.next_moves(Board(19), filters=filters).total  # every 19x19 game the filter keeps
        first = time.perf_counter() - began
        book.forget_caches()
        book.mask(filters, book.max_game_id()) if filters.selects_games() else None  # built apart: `first`
        times = time_calls(lambda b, f=filters: book.next_moves(b, filters=f), boards)
        print(f"    next_moves, {label:<30} {ms(times)}   (first call {1000 * first:5.0f} ms; {kept:,} games)")
    print("    target: p99 <= 100 ms with any game filter")


def time_calls(call, boards) -> list[float]:
    times = []
    for board in boards:
        start = time.perf_counter()
        call(board)
        times.append(time.perf_counter() - start)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--book", help="SQLAlchemy URL or path to import into (default: a fresh temp SQLite file)")
    parser.add_argument("--games", type=int, default=0, help="import only the first N games (default: all)")
    parser.add_argument("--queries", type=int, default=10_000, help="positions to query (default 10,000)")
    parser.add_argument("--baseline", type=int, default=500, help="games in the baseline sample (default 500)")
    parser.add_argument("--workers", type=int, default=importer.WORKERS,
                        help=f"importer parser processes (default {importer.WORKERS})")
    parser.add_argument("--repeats", type=int, default=3, help="imports into fresh books (default 3)")
    parser.add_argument("--compact", action="store_true",
                        help="compact the book (one segment, VACUUM) before the queries")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--query-book", metavar="PATH",
                        help="time Book.games on this existing book (read-only), no import: (d)")
    parser.add_argument("--names", type=int, default=60, help="(d): player filter values of each kind (default 60)")
    parser.add_argument("--filters", action="store_true",
                        help="(d): also next_moves under each game filter (event, result, rank, handicap, komi)")
    parser.add_argument("--caches", action="store_true",
                        help="(e): with --query-book, each cache on the next-move path timed kept and not kept")
    parser.add_argument("--corpus", nargs="+", metavar="PATH",
                        help="a big corpus (folders of .tgz archives, archives): bench/corpus.py's figures")
    parser.add_argument("--into", metavar="PATH", help="--corpus: the book file to make (default: a temporary one)")
    parser.add_argument("--reuse", action="store_true", help="--corpus: query the --into book if it exists")
    args = parser.parse_args()
    if args.corpus:
        import corpus

        return corpus.run(sys.modules[__name__], args.corpus, args.into, args.reuse, args.workers,
                          min(args.queries, 2000), args.seed)
    if args.query_book and args.caches:
        return cache_worth(args.query_book)
    if args.query_book:
        return query_book(args.query_book, min(args.queries, 2000), args.names, random.Random(args.seed), args.filters)
    if not DATA.exists():
        print(f"no archive at {DATA}", file=sys.stderr)
        return 1
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        url = args.book or str(workdir / "book.sqlite")
        paths = source_paths(args, workdir)
        print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start")

        batches.warm_up()  # numba's compile/cache load is not the pipeline's cost
        book = None
        runs = []
        for repeat in range(args.repeats):
            if repeat:  # a fresh book each time (SQLite: a new file; PostgreSQL: emptied)
                book.close()
                if args.book:
                    with Book.open(url) as old, old.writing() as conn:
                        files = {segment.id: segment.name for segment in segment_files.in_files(conn)}
                        for segment in segments.live(conn):
                            if segment.id not in files:
                                segments.drop_table(conn, segment.id)
                                nextmoves.drop(conn, segment.id)
                        segment_files.remove(segment_files.book_folder(conn) or "", files.values())
                        conn.execute(schema.segment_files.delete())
                        conn.execute(schema.segments.delete())
                        conn.execute(schema.games.delete())
                else:
                    url = str(workdir / f"book{repeat}.sqlite")
            book, report, elapsed, cpu, worker = run_import(url, paths, args.workers)
            runs.append((elapsed, cpu, worker, os.getloadavg()[0]))
        games = report.added + report.duplicates
        elapsed = statistics.median(r[0] for r in runs)
        print(f"(a) import: {report}")
        print(f"    end to end, median of {len(runs)}: {elapsed:.2f} s = {games / elapsed:,.0f} games/s "
              f"(runs: {', '.join(f'{games / r[0]:,.0f}' for r in runs)}; {report.positions:,} position rows)"
              f"   target >= 3,000")
        cpu = statistics.median(r[1] for r in runs)
        worker = statistics.median(r[2] for r in runs)
        print(f"    CPU, medians: this process (writer, WAL checkpoints) {cpu:.2f} s, child processes "
              f"(reader, {args.workers} parser{'s' if args.workers != 1 else ''}) {worker:.2f} s; "
              f"load averages {', '.join(f'{r[3]:.1f}' for r in runs)}")
        import corpus
        print(f"    last run: {corpus.stage_figures(report)}")

        sample = [item.data for item, _ in zip(
            (s for s in iter_sources(paths) if isinstance(s, SourceFile)), range(args.baseline))]
        plain = statistics.median(parse_replay_baseline(sample) for _ in range(3))
        print(f"    baseline as the issue defines it (sgfmill parses, sgfmill.boards.Board replays), "
              f"{len(sample)} games, median of 3: {plain:,.0f} games/s -> the import is "
              f"{games / elapsed / plain:,.1f}x that   target >= 20x")
        rate = baseline(sample, workdir / "baseline.sqlite")
        print(f"    the same plus what a book needs (Python keys of the 8 orientations, row-at-a-time "
              f"inserts): {rate:,.0f} games/s -> the import is {games / elapsed / rate:,.0f}x that")

        stats = book.stats()
        size = stats.file_bytes or 0
        print(f"(b) database after the import: {size / 1e6:,.1f} MB for {stats.games:,} games = "
              f"{size / max(stats.games, 1):,.0f} bytes/game   target <= 5,000 (no rewrite needed)")
        if book.path:
            with sqlite3.connect(book.path) as conn:
                try:
                    parts = conn.execute("SELECT CASE WHEN name LIKE 'positions_%' THEN 'positions (all segments)' "
                                         "ELSE name END AS part, SUM(pgsize) FROM dbstat GROUP BY part").fetchall()
                    print("    " + ", ".join(f"{name} {b / max(stats.games, 1):,.0f}" for name, b in parts
                                            if b > 100_000) + " bytes/game")
                except sqlite3.Error:
                    pass
        if not args.compact:
            with book.db.connect() as conn:
                print(f"    {len(segments.live(conn))} segments (queries below read each)")
        else:
            start = time.perf_counter()
            book.compact()
            took = time.perf_counter() - start
            size = book.stats().file_bytes or 0
            print(f"    after Book.compact() (fuseki import --compact: one segment, VACUUM; {took:.1f} s): "
                  f"{size / 1e6:,.1f} MB = {size / max(stats.games, 1):,.0f} bytes/game")
        if book.path:
            book.close()
            book = Book.open(url, readonly=True)
        start = time.perf_counter()
        boards = sample_boards(book, args.queries, rng)
        print(f"(c) {len(boards):,} positions sampled in random orientations "
              f"({sum(1 for b in boards if not b.moves):,} empty boards) in {time.perf_counter() - start:.1f} s")
        players = [book.game(i).black for i in (1, 2, 3)]
        player = players[0][:4] if players[0] else "a"
        cases = [("next_moves, no filter", Filters()),
                 ("next_moves, year 2016-2016", Filters(year_from=2016, year_to=2016)),
                 (f"next_moves, player '{player}'", Filters(player=player))]
        for name, filters in cases:
            book.next_moves(boards[0], filters=filters)  # builds the filter's mask once
            times = time_calls(lambda b, filters=filters: book.next_moves(b, filters=filters), boards)
            print(f"    {name:<34} {ms(times)}")
        empty = time_calls(lambda b: book.next_moves(b), [Board(19)] * 200)
        print(f"    {'next_moves, empty board only':<34} {ms(empty)}")
        page_boards = boards[: max(1, len(boards) // 10)]
        times = time_calls(lambda b: book.games(b, page=1, page_size=20), page_boards)
        print(f"    {'games, first page of 20':<34} {ms(times)}   ({len(page_boards):,} positions)")
        empty = time_calls(lambda b: book.games(b, page=1, page_size=20), [Board(19)] * 100)
        print(f"    {'games, first page, empty board':<34} {ms(empty)}")
        print("    targets: median <= 1 ms, p99 <= 5 ms (<= 50 ms filtered); first page <= 20 ms")
        book.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
