"""Readers and a writer at once: the engine and the web server open the book read-only, and
keep answering while an import writes to it (SQLite in WAL mode).

- A book opened read-only (``Book.open(readonly=True)``, the engine's book chooser, the web
  application) refuses to import and refuses any write, on SQLite and on PostgreSQL.
- While another process imports 1,500 games in batches of 50 into a SQLite book, a
  ``gtp_main.py --book`` process plays book lines and answers ``genmove`` without an error,
  ``fuseki serve`` answers 10 web clients' next-move queries without an error, and
  a read-only ``Book`` in this process asks ``next_moves``/``games``/``stats`` in a loop
  without an error, and sees the book grow.  The import waits after each batch until all
  three have answered since (``PacedImport``): the overlap is made, not left to speed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import random
import subprocess
import sys
import threading
import time
import urllib.request

import pytest
from sqlalchemy import text

from fuseki.book.analysis.pipeline.importer import import_paths
from fuseki.book.formats.sgf_reader import read_games
from fuseki.book.storage.connect import BookError
from fuseki.book.storage.store import Book
from fuseki.engine.core.base import point_to_vertex, vertex_to_point
from fuseki.engine.core.board import Board

from conftest import ROOT, PacedImport, write_archive
from hangguard import _descendants, end_processes

pytestmark = pytest.mark.slow  # imports a real archive while reading it: about 20 s
# PYTHONFAULTHANDLER: a process of this test sent SIGABRT writes its threads' stacks to its stderr
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONFAULTHANDLER": "1"}
WHOLE_TEST = 300  # seconds: 12 times its 25 s beside two hogs, a bound on a hang, not a speed target


def _abort_the_test_processes(fired: threading.Event) -> None:
    """The watchdog: every process below this one (the import and its worker, the engine, the
    server) says where it waits and writes its stacks (the import's go to its log, which the
    failure prints), then is killed, so that every read waiting on one ends.  The test hung once
    in about 25 runs here and once in CI, where nothing said where: the import's merge process,
    forked while the book's checkpoint thread was inside SQLite, waited on a lock no thread of
    it held (fixed: book.analysis.pipeline.workers.start_forked; test_importer proves every fork)."""
    print(f"\ntest_concurrency: still running after {WHOLE_TEST} s; its processes:", file=sys.stderr)
    fired.set()
    end_processes(_descendants(os.getpid()))


_spec = importlib.util.spec_from_file_location("web_load", ROOT / "bench" / "web_load.py")
web_load = importlib.util.module_from_spec(_spec)  # bench/web_load.py: the web clients and server start
_spec.loader.exec_module(web_load)


def test_read_only_books_refuse_every_write(tmp_path, tygem_games, book_url):
    archive = write_archive(tmp_path / "few.tgz", tygem_games[:20])
    with Book.open(book_url) as book:
        import_paths(book, [str(archive)], workers=0)

    from fuseki.book.play.book_chooser import BookChooser
    from fuseki.book.ui.web.app import create_app

    app = create_app(book_url=book_url)
    chooser = BookChooser(book_url)
    for book in (Book.open(book_url, readonly=True), app.extensions["fuseki_book"], chooser.book):
        assert book is not None and book.readonly
        with pytest.raises(BookError):
            import_paths(book, [str(archive)], workers=0)
        with pytest.raises(Exception) as refused:
            with book.db.begin() as conn:
                conn.execute(text("UPDATE games SET black = 'changed'"))
        assert "read" in str(refused.value).lower(), refused.value  # "readonly" / "read-only transaction"
        assert book.stats().games == 20
        book.close()


def book_lines(games: list[tuple[str, bytes]], count: int, seed: int) -> list[list[str]]:
    """GTP play commands of the first 4-16 moves of ``count`` games."""
    rng = random.Random(seed)
    lines = []
    for name, data in rng.sample(games, count):
        record = read_games(data, name)[0]
        moves = record.moves[:rng.randint(4, 16)]
        lines.append([f"play {'b' if c == 1 else 'w'} {point_to_vertex(p, 19)}" for c, p in moves])
    return lines


class GtpLoop(threading.Thread):
    """Plays book lines then ``genmove`` in a gtp_main.py process until stopped; records every answer."""

    def __init__(self, book: str, lines: list[list[str]]):
        super().__init__(daemon=True)
        self.lines = lines
        self.stop = threading.Event()
        self.answers: list[tuple[str, str]] = []
        self.process = subprocess.Popen(
            [sys.executable, str(ROOT / "gtp_main.py"), "--book", book, "--seed", "3", "--policy", "weighted"],
            cwd=ROOT, env=ENV, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, bufsize=1)

    def ask(self, command: str) -> str:
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        lines = []
        while (line := self.process.stdout.readline()) not in ("\n", ""):
            lines.append(line)
        answer = "".join(lines)
        self.answers.append((command, answer))
        return answer

    def run(self) -> None:
        n = 0
        while not self.stop.is_set():
            self.ask("clear_board")
            for command in self.lines[n % len(self.lines)]:
                self.ask(command)
            for colour in "bwbw":
                self.ask(f"genmove {colour}")
            n += 1

    def finish(self) -> str:
        self.stop.set()
        self.join(60)
        try:
            self.process.stdin.write("quit\n")
            self.process.stdin.close()
        except OSError:  # it died (the watchdog): its stderr says why
            pass
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        return self.process.stderr.read()


def genmoves(answers: list[tuple[str, str]]) -> int:
    return sum(command.startswith("genmove") for command, _ in answers)


def test_engine_and_book_readers_answer_while_an_import_writes(tmp_path, tygem_games):
    """The import stops after each batch until the engine has answered a genmove, the web server
    has shown the new size, and this process's reader has seen it (``PacedImport``): the readers
    and the writer overlap by construction, on a machine of any speed."""
    path = str(tmp_path / "book.sqlite")
    base, extra = tygem_games[:500], tygem_games[500:2000]
    with Book.open(path) as book:
        import_paths(book, [str(write_archive(tmp_path / "base.tgz", base))], workers=0)
    more = write_archive(tmp_path / "more.tgz", extra)

    server, url = web_load.start_server(path)
    importing = PacedImport(path, [more], batch_games=50, workers=1, env=ENV)
    gtp = GtpLoop(path, book_lines(base + extra, 60, seed=1))
    gtp.start()
    ended = threading.Event()
    web: dict = {}
    browsing = threading.Thread(target=lambda: web.update(web_load.run_load(url, clients=10, duration=0,
                                                                             least=5, until=ended)))
    browsing.start()
    boards = []
    for moves in book_lines(base + extra, 80, seed=2):
        board = Board(19)
        for command in moves:
            _, colour, vertex = command.split()
            board.play(1 if colour == "b" else 2, vertex_to_point(vertex, 19))
        boards.append(board)
    seen, served, queries, errors = set(), set(), 0, []
    reader = Book.open(path, readonly=True)

    def read_once() -> None:
        nonlocal queries
        board = boards[queries % len(boards)]
        try:
            reader.next_moves(board)
            reader.games(board, page_size=5)
            seen.add(reader.stats().games)
            with urllib.request.urlopen(url + "api/info", timeout=60) as response:
                served.add(json.load(response)["games"])
        except Exception as exc:  # noqa: BLE001 - recorded, the loop goes on
            errors.append(f"{type(exc).__name__}: {exc}")
        queries += 1

    # A bound on the whole test: past it, the three processes are killed, so that whatever read
    # waits on them gets its end of file and the test fails with what it saw instead of hanging.
    fired = threading.Event()
    watchdog = threading.Timer(WHOLE_TEST, _abort_the_test_processes, args=(fired,))
    watchdog.daemon = True
    watchdog.start()
    committed = []
    try:
        for added in importing.batches():
            committed.append(500 + added)
            answered, deadline = genmoves(gtp.answers), time.monotonic() + 120
            while not (committed[-1] in seen and committed[-1] in served and genmoves(gtp.answers) > answered):
                assert time.monotonic() < deadline and gtp.is_alive(), (
                    f"the readers did not see batch {len(committed)}: {sorted(seen)[-3:]} {sorted(served)[-3:]}")
                read_once()
            importing.release()
        summary = importing.finish()
    finally:
        watchdog.cancel()
        ended.set()
        importing.close()
        reader.close()
        try:
            stderr = gtp.finish()
            if fired.is_set():
                print(f"the engine's stderr:\n{stderr[-3000:]}", file=sys.stderr)
        finally:
            browsing.join(120)
            server.terminate()
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
    assert summary[0] == 1500

    failed = [(command, answer) for command, answer in gtp.answers if not answer.startswith("=")]
    print(f"\nduring the import: {queries} book queries in this process (book sizes seen: {len(seen)}), "
          f"{len(gtp.answers)} GTP answers ({genmoves(gtp.answers)} genmove), {web.get('requests')} web queries")
    assert not errors, errors[:5]
    assert web["errors"] == 0 and web["requests"] >= 50 and web["still_running"] == 0, web
    assert not failed, failed[:5]
    assert "internal error" not in stderr and "cannot open book" not in stderr, stderr[-2000:]
    assert len(committed) >= 3 and set(committed) <= seen and set(committed) <= served  # every batch, seen
    assert min(seen) >= 500 and genmoves(gtp.answers) >= len(committed)
