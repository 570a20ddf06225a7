"""``fuseki ai annotate``: which positions, from which board, skipping what is stored; KataGo for real.

- Without KataGo: the positions of at least N games, most played first, against a slow
  count written here (each test game replayed with the engine's ``Board``, its distinct
  canonical positions counted once per game), in a book of games and in the statistics book
  made from it; the board found for each key is that position with the side to move the key
  says; a cache holding some positions makes ``annotate`` ask only for the others (KataGo
  stands in as a recorder answering with a golden answer of the real one, no process).
- The real KataGo (slow, skipped without ``bash .ci/katago``): a small book annotated through
  the command at 1 visit, then ``fuseki search --ai`` showing the stored values with a
  KataGo command that cannot start; a run killed with SIGKILL half-way, then re-run, ends
  with every position stored once.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from fuseki.book.analysis import annotate
from fuseki.book.analysis.ai import AiJudge
from fuseki.book.analysis.katago import parse_analysis
from fuseki.book.queries import ai_values
from fuseki.book.storage.position_index.statistics_book import StatisticsTable
from fuseki.book.storage.store import Book
from fuseki.book.ui.fuseki_command import main
from fuseki.engine.core import base
from fuseki.engine.core.base import BLACK, WHITE, opponent
from fuseki.engine.core.board import Board

from games import import_games, random_games
from services import GOLDEN, gated_katago_command, real_katago_command


def slow_counts(games) -> Counter:
    """Canonical key -> games that reached it (each game once), by replaying every game."""
    reached = defaultdict(set)
    for index, moves in enumerate(games):
        board = Board(19)
        reached[min(board.symmetric_keys(BLACK))].add(index)
        for color, point in moves:
            board.play(color, point)
            reached[min(board.symmetric_keys(opponent(color)))].add(index)
    return Counter({key: len(ids) for key, ids in reached.items()})


@pytest.fixture(scope="module")
def games():
    return random_games(40)


@pytest.fixture
def book_path(tmp_path, games, capsys):
    """A SQLite book of ``games``."""
    path = import_games(tmp_path / "games", games, str(tmp_path / "book.sqlite"))
    capsys.readouterr()
    return path


@pytest.fixture
def any_book(tmp_path, games, capsys, book_url):
    """The book of ``games`` in SQLite, then in PostgreSQL (the values are kept in either)."""
    location = import_games(tmp_path / "games", games, book_url)
    capsys.readouterr()
    return location


def expected(games, min_games: int) -> list[tuple[int, int]]:
    counts = slow_counts(games)
    return sorted(((k, n) for k, n in counts.items() if n >= min_games), key=lambda kn: (-kn[1], kn[0]))


@pytest.mark.parametrize("min_games", [1, 2, 5])
def test_popular_positions_are_the_slow_counts_most_played_first(book_path, games, min_games):
    with Book.open(book_path, readonly=True) as book:
        found = annotate.popular_positions(book, min_games)
        assert [(p.key, p.games) for p in found] == expected(games, min_games)
        assert [(p.key, p.games) for p in annotate.popular_positions(book, min_games, limit=3)] == \
            expected(games, min_games)[:3]
        finder = annotate.BoardFinder(book, [p.key for p in found])
        for p in found:
            board, side = finder.find(p.key)
            assert min(board.symmetric_keys(side)) == p.key
            assert len(board.stones(BLACK)) - len(board.stones(WHITE)) == (1 if side == WHITE else 0)


def test_a_statistics_book_gives_the_same_positions_and_finds_their_boards(book_path, games, tmp_path):
    from fuseki.book.builders.statbook import write_statistics

    out = str(tmp_path / "stats.sqlite")
    with Book.open(book_path, readonly=True) as book:
        write_statistics(book, out, min_games=1)
    with Book.open(out) as stats:
        assert isinstance(stats.index, StatisticsTable)
        found = annotate.popular_positions(stats, 2)
        assert [(p.key, p.games) for p in found] == expected(games, 2)
        finder = annotate.BoardFinder(stats, [p.key for p in found])
        for p in found:  # the games share their openings: every position of 2+ games is reached through such
            board, side = finder.find(p.key)
            assert min(board.symmetric_keys(side)) == p.key
        for limit in (1, 4, 7):  # the most played few: the walk may pass positions played as often
            chosen = found[:limit]
            finder = annotate.BoardFinder(stats, [p.key for p in chosen], annotate.walk_through(found, chosen))
            assert finder.prepare() == limit
            for p in chosen:
                board, side = finder.find(p.key)
                assert min(board.symmetric_keys(side)) == p.key


class RecordingKataGo:
    """Stands in for ``KataGo`` in-process: records each position asked, answers at once with the
    golden answer to the empty board recorded from the real KataGo."""

    network = "recorded"

    def __init__(self):
        queries = {json.loads(e["sent"])["id"]: json.loads(e["sent"])
                   for e in map(json.loads, (GOLDEN / "positions.jsonl").read_text().splitlines())
                   if "sent" in e and e["sent"].startswith("{")}
        answer = next(json.loads(e["received"]) for e in map(json.loads, (GOLDEN / "positions.jsonl")
                                                                .read_text().splitlines())
                      if "received" in e and '"id":"empty"' in e["received"].replace(" ", "")
                      and "moveInfos" in e["received"])
        self.analysis = parse_analysis(answer, queries["empty"])
        self.asked: list[frozenset] = []

    def submit(self, **settings):
        import threading

        self.asked.append(frozenset(map(tuple, settings["initial_stones"])))
        done = threading.Event()
        done.set()
        analysis = self.analysis
        return type("Answered", (), {"done": done, "result": lambda self, timeout=None: [analysis]})()


def test_a_cache_holding_some_positions_asks_only_for_the_others(any_book):
    with Book.open(any_book) as book:
        positions = annotate.popular_positions(book, 2)
        finder = annotate.BoardFinder(book, [p.key for p in positions])
        katago = RecordingKataGo()
        judge = AiJudge(book.db, katago, "japanese", 6.5, 1)
        stored_before = positions[::3]
        boards = [finder.find(p.key) for p in stored_before]
        with book.writing() as conn:
            for board, side in boards:
                ai_values.put(conn, board.symmetric_keys(side), 19, judge.settings, (1, 0.5, 0.0), [])
        report = annotate.annotate(judge, positions, finder, book.writing, threads=3)
        assert (report.total, report.cached, report.done) == (len(positions), len(stored_before),
                                                              len(positions) - len(stored_before))
        asked = []
        for p in positions:
            board, side = finder.find(p.key)
            if p not in stored_before:
                asked.append(frozenset((("B" if c == BLACK else "W"), base.point_to_vertex(pt, 19))
                                       for c in (BLACK, WHITE) for pt in board.stones(c)))
        assert sorted(map(sorted, katago.asked)) == sorted(map(sorted, asked))
        with book.db.connect() as conn:
            assert annotate.cached_keys(conn, judge.settings) == {p.key for p in positions}
        again = annotate.annotate(judge, positions, finder, book.writing)  # all stored: nothing asked
        assert (again.cached, again.done, len(katago.asked)) == (len(positions), 0, len(asked))


def test_the_moves_forced_are_the_human_moves_the_search_left_shallow(book_path):
    """annotate's second pass asks for each human move of the share or more that the position's
    row lacks or holds from under a quarter of the row's visits (``book.analysis.ai.deep_enough``: 100 of
    400, what a mark needs); a move the search gave a quarter or more is left as it is."""
    with Book.open(book_path) as book:
        positions = annotate.popular_positions(book, 2)
        finder = annotate.BoardFinder(book, [p.key for p in positions])
        judge = AiJudge(book.db, None, "japanese", 6.5, 400)
        for p in positions:  # a position whose games went on with three moves or more
            board, side = finder.find(p.key)
            human = [m.point for m in book.next_moves(board, side).moves
                     if 0 <= m.point < 19 * 19 and board.color_at(m.point) == 0]
            if len(human) >= 3:
                break
        else:
            pytest.fail("no position of 2+ games with three moves played")
        deep, shallow, missing = human[:3]
        with book.writing() as conn:
            ai_values.put(conn, board.symmetric_keys(side), 19, judge.settings, (400, 0.5, 0.0),
                          [(deep, 100, 0.5, 0.1, 0.0, 0.3), (shallow, 99, 0.5, 0.0, 0.0, 0.2)])
        wanted = annotate.moves_wanted(judge, [p], finder, share=0.0)
        assert {point for _, _, point in wanted} == set(human) - {deep}
        order = [point for _, _, point in wanted]
        assert order.index(missing) < order.index(shallow)  # a blank cell is filled before a shallow one


def test_everything_stored_completes_without_katago_and_search_shows_it(any_book, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("FUSEKI_AI_CACHE", str(tmp_path / "ai-cache.sqlite"))  # not the user's
    with Book.open(any_book) as book:
        positions = annotate.popular_positions(book, 5)
        finder = annotate.BoardFinder(book, [p.key for p in positions])
        settings = ai_values.AiSettings("japanese", 6.5, "model", 1)
        boards = [finder.find(p.key) for p in positions]
        with book.writing() as conn:
            ai_values.create(conn)
            for board, side in boards:
                ai_values.put(conn, board.symmetric_keys(side), 19, settings, (1, 0.5, 0.0), [])
    # the network is the -model file's name: a command that cannot start, naming the same network
    # (--moves-share 0: no human move asked with the move forced either; the values stored have none)
    assert main(["ai", "annotate", "--book", any_book, "--min-games", "5", "--visits", "1", "--moves-share", "0",
                 "--katago", "/nowhere/katago analysis -model /nowhere/model.bin.gz"]) == 0
    err = capsys.readouterr().err
    assert re.search(f"; {len(positions)} already stored in the book [^,]*, 0 to ask KataGo", err), err
    # search --ai shows the book's own values (network "model"), KataGo never started
    assert main(["search", "--moves", "pd", "--book", any_book, "--ai", "--visits", "1",
                 "--katago", "/nowhere/katago analysis -model /nowhere/model.bin.gz"]) == 0
    shown = capsys.readouterr()  # (the moves of 1% of the games are asked with the move forced: it cannot start)
    assert "for this position" not in shown.err and "KataGo: model, japanese rules, komi 6.5, 1 visits" in shown.out


def test_katago_that_cannot_start_is_one_line(book_path, capsys):
    assert main(["ai", "annotate", "--book", book_path, "--min-games", "5", "--katago", "/nowhere/katago"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("fuseki ai: cannot start KataGo") and "docs/katago.md" in err[-1]


def test_a_missing_book_is_not_created(tmp_path, capsys):
    path = tmp_path / "none.sqlite"
    assert main(["ai", "annotate", "--book", str(path), "--min-games", "5", "--katago", "/nowhere/k"]) == 1
    assert "no book" in capsys.readouterr().err and not path.exists()


# --- the real KataGo ---------------------------------------------------------------------------

def rows(path: str) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT key, visits FROM ai_values").fetchall()


@pytest.mark.slow
def test_real_annotate_then_search_reads_the_book_and_a_killed_run_resumes(book_path, games, tmp_path, capsys,
                                                                           monkeypatch):
    command = real_katago_command()
    monkeypatch.setenv("FUSEKI_AI_CACHE", str(tmp_path / "ai-cache.sqlite"))  # not the user's
    assert main(["ai", "annotate", "--book", book_path, "--min-games", "5", "--limit", "3", "--visits", "1",
                 "--katago", command]) == 0
    err = capsys.readouterr().err
    assert "3 of 3 stored in the book" in err
    assert len(rows(book_path)) == 3 and not (tmp_path / "ai-cache.sqlite").exists()
    # the most played position is the empty board: search shows its stored values without KataGo
    argv = command.split()
    argv[0] = "/nowhere/katago"
    assert main(["search", "--moves", "", "--book", book_path, "--ai", "--visits", "1",
                 "--katago", " ".join(argv)]) == 0
    shown = capsys.readouterr()
    assert "asking KataGo" not in shown.err  # (a KataGo that does not exist: none was needed)
    assert "AI win %" in shown.out and "1 visits" in shown.out
    # a run at 2 visits (other values) killed once its first answer is stored, then re-run
    # (--moves-share 0: the positions' resume is tested here, the forced moves' in test_ai_deep);
    # KataGo's answers after its second are held, so the run cannot end before the kill
    argv = [sys.executable, "-m", "fuseki", "ai", "annotate", "--book", book_path, "--min-games", "2",
            "--limit", "5", "--visits", "2", "--threads", "2", "--moves-share", "0",
            "--katago", gated_katago_command(command, 2)]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            cwd=str(tmp_path))
    katago_pid = None
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
            if katago_pid is None and children.exists() and children.read_text().split():
                katago_pid = int(children.read_text().split()[0])
            if any(v == 2 for _k, v in rows(book_path)):
                break
            time.sleep(0.2)
        assert proc.poll() is None, proc.stderr.read().decode()
        proc.kill()  # SIGKILL: no handler runs
        proc.wait()
    finally:
        if katago_pid is not None:  # KataGo runs in a session of its own: end it by its id
            try:
                os.killpg(katago_pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
    first = [k for k, v in rows(book_path) if v == 2]
    assert 1 <= len(first) <= 2
    assert main(["ai", "annotate", "--book", book_path, "--min-games", "2", "--limit", "5", "--visits", "2",
                 "--moves-share", "0", "--katago", command]) == 0
    err = capsys.readouterr().err
    assert re.search(f"; {len(first)} already stored in the book [^,]*, {5 - len(first)} to ask KataGo", err), err
    stored = [k for k, v in rows(book_path) if v == 2]
    assert len(stored) == len(set(stored)) == 5 and set(first) <= set(stored)


@pytest.mark.slow
def test_real_annotate_stopped_by_ctrl_c_says_what_is_cached_and_exits_130(book_path, tmp_path):
    command = real_katago_command()
    argv = [sys.executable, "-m", "fuseki", "ai", "annotate", "--book", book_path, "--min-games", "2",
            "--limit", "6", "--visits", "1", "--katago", gated_katago_command(command, 1)]  # then it holds
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=str(tmp_path))
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None and not rows_or_none(book_path):
            time.sleep(0.2)
        assert proc.poll() is None
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=60)  # close() ends KataGo's process group before it exits
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = proc.stderr.read().decode()
    proc.stderr.close()
    cached = len(rows(book_path))
    assert code == 130, err
    assert f"stopped by SIGINT; {cached} positions cached, re-run to go on" in err.splitlines()[-1]


def rows_or_none(path: str) -> list[tuple]:
    try:
        return rows(path)
    except sqlite3.OperationalError:  # no ai_values table yet
        return []


def test_a_moves_share_out_of_range_is_one_line(book_path, capsys):
    assert main(["ai", "annotate", "--book", book_path, "--min-games", "5", "--moves-share", "1.5",
                 "--katago", "/nowhere/k"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--moves-share 1.5: a share of the games, from 0 to 1" in err[0]


@pytest.mark.slow
def test_the_gpu_script_rehearsed_on_the_cpu_stores_values_and_goes_on_from_a_values_file(tmp_path):
    """``.ci/katago-gpu`` as docs/katago.md runs it on a lent GPU, here with the CPU's KataGo
    (``KATAGO_GPU_KATAGO``) at 2 visits on the built-in book's most played position: the values
    file it brings back holds that position with lines; given that file in PACK, a second run
    asks KataGo for nothing more and keeps the same row."""
    repo = Path(__file__).resolve().parents[1]
    env = {**os.environ, "KATAGO_GPU_KATAGO": real_katago_command(), "KATAGO_GPU_LIMIT": "1",
           "KATAGO_GPU_WORK": str(tmp_path / "work"),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    (tmp_path / "pack").mkdir()

    def run(out: str) -> sqlite3.Connection:
        done = subprocess.run(["bash", str(repo / ".ci" / "katago-gpu"), str(tmp_path / "pack"),
                               str(tmp_path / out), "900", "2"], env=env, capture_output=True, text=True,
                              timeout=1200)
        assert done.returncode == 0, done.stdout + done.stderr
        return sqlite3.connect(tmp_path / out / "values.sqlite")

    first = run("out1")
    rows = first.execute("SELECT key, visits, root_visits, moves, pvs FROM ai_values").fetchall()
    assert len(rows) == 1 and rows[0][1] == 2 and rows[0][4]
    first.close()
    (tmp_path / "out1" / "values.sqlite").replace(tmp_path / "pack" / "values.sqlite")
    (tmp_path / "work" / "values.sqlite").unlink()
    second = run("out2")
    assert second.execute("SELECT key, visits, root_visits, moves, pvs FROM ai_values").fetchall() == rows
    log = (tmp_path / "out2" / "annotate.log").read_text()
    assert "1 already stored" in log and "0 to ask KataGo" in log and "forced" not in log, log
