"""Benchmark of the rules core (a script that prints figures, not a test).

In one run, with the baseline measured alongside:

(a) replay with captures of real games (the Tygem archive, parsed with sgfmill
    *before* the clock starts): the numba kernel ``_kernels.replay_moves``, the
    Python-level ``Board.play`` loop, and ``sgfmill.boards.Board`` (the baseline);
(b) random self-play games per second with ``_kernels.playout`` on 9x9 and 19x19;
(c) the GTP engine (``python3 gtp_main.py``): process start to the answer to
    ``name``, the first ``genmove`` and the median ``genmove`` on 19x19.

Every figure is the median over several repeats (machines are noisy), with the
range beside it.  Targets: replay >= 25x sgfmill (~1.2M moves/s), >= 5,000
9x9 playouts/s on one core, ``genmove`` median <= 2 ms.

Usage::

    python3 bench/rules.py [--quick] [--games N] [--repeats R]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "tygem-2016-07.tgz"
sys.path.insert(0, str(ROOT))
__import__("gtp_main").use_this_checkout()  # import fuseki from this checkout, installed or not

import numpy as np  # noqa: E402
from sgfmill import boards as sgf_boards  # noqa: E402
from sgfmill import sgf, sgf_moves  # noqa: E402

from fuseki.engine.core import _kernels as K  # noqa: E402
from fuseki.engine.core import base  # noqa: E402
from fuseki.engine.core.base import BLACK, WHITE  # noqa: E402
from fuseki.engine.core.board import Board, kernel_keys  # noqa: E402
from fuseki.engine.players.gtp_client import GtpClient, GtpFailure  # noqa: E402

SIZE = 19
COLOR = {"b": BLACK, "w": WHITE}


class Game:
    """One parsed game: the same moves as sgfmill tuples and as kernel arrays."""

    def __init__(self, sgf_moves_list):
        self.sgf = sgf_moves_list
        self.points = np.array([base.PASS if m is None else base.xy_to_point(m[1], SIZE - 1 - m[0], SIZE)
                                for _, m in sgf_moves_list], dtype=np.int64)
        self.colors = np.array([COLOR[c] for c, _ in sgf_moves_list], dtype=np.int64)

    def truncate(self, n):
        self.sgf = self.sgf[:n]
        self.points = self.points[:n]
        self.colors = self.colors[:n]


def load_games(path: Path, limit: int | None) -> tuple[list[Game], dict]:
    """Parse the archive's 19x19 games without setup stones into move lists.

    Games are cut at their first move illegal for fuseki, so that every
    contender replays exactly the same moves.
    """
    games, skipped = [], {"not 19x19 or unreadable": 0, "setup stones": 0, "cut at an illegal move": 0}
    keys = kernel_keys(SIZE)
    with tarfile.open(path) as archive:
        for member in archive:
            if not member.isfile() or not member.name.endswith(".sgf"):
                continue
            try:
                game = sgf.Sgf_game.from_bytes(archive.extractfile(member).read())
                board, moves = sgf_moves.get_setup_and_moves(game)
            except ValueError:
                skipped["not 19x19 or unreadable"] += 1
                continue
            if game.get_size() != SIZE:
                skipped["not 19x19 or unreadable"] += 1
                continue
            if not board.is_empty():
                skipped["setup stones"] += 1
                continue
            g = Game(moves)
            legal = K.replay_moves(SIZE, keys, g.points, g.colors)
            if legal < len(moves):
                skipped["cut at an illegal move"] += 1
                g.truncate(legal)
            games.append(g)
            if limit and len(games) >= limit:
                break
    return games, skipped


# --- (a) replay -------------------------------------------------------------------

def replay_kernel(games):
    keys = kernel_keys(SIZE)
    replay = K.replay_moves
    for g in games:
        replay(SIZE, keys, g.points, g.colors)


def replay_board(games):
    for g in games:
        board = Board(SIZE)
        play = board.play
        for p, c in zip(g.points.tolist(), g.colors.tolist()):
            play(c, p)


def replay_sgfmill(games):
    for g in games:
        board = sgf_boards.Board(SIZE)
        play = board.play
        for colour, move in g.sgf:
            if move is not None:
                play(move[0], move[1], colour)


def timed(function, *args, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        function(*args)
        times.append(time.perf_counter() - t0)
    return times


def rate_line(label, count, times, unit):
    rates = [count / t for t in times]
    med = statistics.median(rates)
    print(f"  {label:<34} {med:>12,.0f} {unit}   (range {min(rates):,.0f} .. {max(rates):,.0f}, "
          f"{len(times)} runs)")
    return med


def bench_replay(games, sample, repeats):
    moves = sum(len(g.points) for g in games)
    sample_moves = sum(len(g.points) for g in sample)
    print(f"(a) replay with captures: {len(games):,} games, {moves:,} moves "
          f"(baselines on {len(sample):,} games, {sample_moves:,} moves)")
    replay_kernel(games[:10])  # compile or load numba's cache outside the clock
    kernel = rate_line("fuseki _kernels.replay_moves", moves, timed(replay_kernel, games, repeats=repeats),
                       "moves/s")
    board = rate_line("fuseki Board.play (Python loop)", sample_moves,
                      timed(replay_board, sample, repeats=max(1, repeats // 2)), "moves/s")
    base = rate_line("sgfmill.boards.Board (baseline)", sample_moves,
                     timed(replay_sgfmill, sample, repeats=max(1, repeats // 2)), "moves/s")
    print(f"  ratio kernel / sgfmill: {kernel / base:.1f}x (target >= 25x);  "
          f"Board.play / sgfmill: {board / base:.2f}x")
    print(f"  kernel per game: {1e6 * moves / kernel / len(games):.1f} us (mean {moves / len(games):.0f} moves)")


# --- (b) playouts -------------------------------------------------------------------

def playouts(size, count):
    keys = kernel_keys(size)
    empty = K.new_state(size)
    limit = 3 * size * size
    moves = 0
    for _ in range(count):
        s = empty.copy()
        moves += K.playout(s, keys, size, BLACK, limit)
    return moves


def bench_playouts(counts, repeats):
    print("(b) random self-play with _kernels.playout (one core)")
    K.seed_rng(2026)
    for size, count in counts:
        playouts(size, 5)  # warm-up
        times, moves = [], 0
        for _ in range(repeats):
            t0 = time.perf_counter()
            moves = playouts(size, count)
            times.append(time.perf_counter() - t0)
        med = rate_line(f"{size}x{size} playouts", count, times, "games/s")
        print(f"  {'':<34} {med * moves / count:>12,.0f} moves/s   ({moves / count:.0f} moves a game)")
    print("  target: >= 5,000 9x9 games/s")


# --- (c) GTP ------------------------------------------------------------------------

class Gtp:
    """``python3 gtp_main.py`` through the project's GTP client, timed from process start."""

    def __init__(self):
        self.t0 = time.perf_counter()
        self.client = GtpClient([sys.executable, "gtp_main.py"], cwd=str(ROOT), timeout=60)

    def send(self, command):
        """(success, answer); a ``?`` answer is counted, not raised."""
        try:
            return True, self.client.send(command)
        except GtpFailure as failure:
            return False, failure.message

    def close(self):
        self.client.close()


def bench_gtp(starts, genmoves):
    print("(c) GTP engine: python3 gtp_main.py")
    if not (ROOT / "gtp_main.py").exists():
        print("  skipped: gtp_main.py is missing")
        return
    startup = []
    for _ in range(starts):
        engine = Gtp()
        engine.send("name")
        startup.append(time.perf_counter() - engine.t0)
        engine.close()
    print(f"  start to answer of 'name': median {1e3 * statistics.median(startup):.0f} ms "
          f"(range {1e3 * min(startup):.0f} .. {1e3 * max(startup):.0f}, {starts} starts)")
    firsts, times, answers = [], [], {}
    for _ in range(3):
        engine = Gtp()
        engine.send("boardsize 19")
        engine.send("clear_board")
        color = "b"
        for i in range(genmoves):
            t0 = time.perf_counter()
            ok, answer = engine.send(f"genmove {color}")
            dt = time.perf_counter() - t0
            (firsts if i == 0 else times).append(dt)
            key = "error" if not ok else answer.lower() if answer.lower() in ("pass", "resign") else "move"
            answers[key] = answers.get(key, 0) + 1
            if key == "resign" or key == "error":
                engine.send("clear_board")
            color = "w" if color == "b" else "b"
        engine.close()
    times.sort()
    print(f"  first genmove (fresh process): median {1e3 * statistics.median(firsts):.1f} ms "
          f"(range {1e3 * min(firsts):.1f} .. {1e3 * max(firsts):.1f})")
    print(f"  genmove on 19x19, {len(times)} in 3 processes: median {1e3 * statistics.median(times):.2f} ms, "
          f"p90 {1e3 * times[int(0.9 * len(times))]:.2f} ms, max {1e3 * times[-1]:.2f} ms (target <= 2 ms)")
    print(f"  answers: {answers}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a sample of 500 games and fewer repeats")
    parser.add_argument("--games", type=int, metavar="N", help="use only the first N games of the archive")
    parser.add_argument("--repeats", type=int, metavar="R", help="timed repeats per figure (default 5, quick 3)")
    parser.add_argument("--archive", type=Path, default=DATA, help="a .tgz of SGF games (default: Tygem 2016-07)")
    args = parser.parse_args(argv)
    repeats = args.repeats or (3 if args.quick else 5)
    limit = args.games or (500 if args.quick else None)

    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, numba {__import__('numba').__version__}")
    t0 = time.perf_counter()
    games, skipped = load_games(args.archive, limit)
    print(f"parsed {len(games):,} games from {args.archive.name} in {time.perf_counter() - t0:.1f} s "
          f"(untimed); skipped or cut: {skipped}")
    sample = games[: min(len(games), 300 if args.quick else 1500)]
    bench_replay(games, sample, repeats)
    bench_playouts([(9, 2000 if args.quick else 20000), (19, 200 if args.quick else 2000)], repeats)
    bench_gtp(3 if args.quick else 5, 50 if args.quick else 200)


if __name__ == "__main__":
    main()
