"""Readers and a writer at once: the engine and the web server open the book read-only, and
keep answering while an import writes to it (SQLite in WAL mode).

- A book opened read-only (``Book.open(readonly=True)``, the engine's book chooser, the web
  application) refuses to import and refuses any write, on SQLite and on PostgreSQL.
- While another process imports 1,500 games in batches of 50 into a SQLite book, a
  ``gtp_main.py --book`` process plays book lines and answers ``genmove`` without an error,
  ``fuseki serve`` answers 10 web clients' next-move queries for 4 s without an error, and
  a read-only ``Book`` in this process asks ``next_moves``/``games``/``stats`` in a loop
  without an error, and sees the book grow.
"""

from __future__ import annotations

import importlib.util
import os
import random
import subprocess
import sys
import threading

import pytest
from sqlalchemy import text

from fuseki.book.formats.records import read_games
from fuseki.book.pipeline.importer import import_paths
from fuseki.book.storage.store import Book, BookError
from fuseki.engine.core.board import Board
from fuseki.engine.core.coords import point_to_vertex, vertex_to_point

from conftest import ROOT, import_command, write_archive

pytestmark = pytest.mark.slow  # imports a real archive while reading it: about 20 s
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
_spec = importlib.util.spec_from_file_location("web_load", ROOT / "bench" / "web_load.py")
web_load = importlib.util.module_from_spec(_spec)  # bench/web_load.py: the web clients and server start
_spec.loader.exec_module(web_load)


def test_read_only_books_refuse_every_write(tmp_path, tygem_games, book_url):
    archive = write_archive(tmp_path / "few.tgz", tygem_games[:20])
    with Book.open(book_url) as book:
        import_paths(book, [str(archive)], workers=0)

    from fuseki.book.chooser import BookChooser
    from fuseki.book.ui.web import create_app

    app = create_app(book_url=book_url)
    chooser = BookChooser(book_url)
    for book in (Book.open(book_url, readonly=True), app.extensions["fuseki_book"], chooser.book):
        assert book is not None and book.readonly
        with pytest.raises(BookError):
            import_paths(book, [str(archive)], workers=0)
        with pytest.raises(Exception) as refused:
            with book.engine.begin() as conn:
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
        self.process.stdin.write("quit\n")
        self.process.stdin.close()
        self.process.wait(30)
        return self.process.stderr.read()


def test_engine_and_book_readers_answer_while_an_import_writes(tmp_path, tygem_games):
    path = str(tmp_path / "book.sqlite")
    base, extra = tygem_games[:500], tygem_games[500:2000]
    with Book.open(path) as book:
        import_paths(book, [str(write_archive(tmp_path / "base.tgz", base))], workers=0)
    more = write_archive(tmp_path / "more.tgz", extra)

    server, url = web_load.start_server(path)
    writer = subprocess.Popen(import_command(path, [more], batch_games=50, workers=1), cwd=ROOT, env=ENV,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    gtp = GtpLoop(path, book_lines(base + extra, 60, seed=1))
    gtp.start()
    web: dict = {}
    browsing = threading.Thread(target=lambda: web.update(web_load.run_load(url, clients=10, duration=4)))
    browsing.start()
    boards = []
    for moves in book_lines(base + extra, 80, seed=2):
        board = Board(19)
        for command in moves:
            _, colour, vertex = command.split()
            board.play(1 if colour == "b" else 2, vertex_to_point(vertex, 19))
        boards.append(board)
    seen, queries, errors = set(), 0, []
    reader = Book.open(path, readonly=True)
    try:
        while writer.poll() is None:
            board = boards[queries % len(boards)]
            try:
                reader.next_moves(board)
                reader.games(board, page_size=5)
                seen.add(reader.stats().games)
            except Exception as exc:  # noqa: BLE001 - recorded, the loop goes on
                errors.append(f"{type(exc).__name__}: {exc}")
            queries += 1
    finally:
        reader.close()
        stderr = gtp.finish()
        browsing.join(60)
        server.terminate()
        server.wait(10)
    out, err = writer.communicate(timeout=60)
    assert writer.returncode == 0, err.decode(errors="replace")[-3000:]
    assert out.split()[-3] == b"1500"

    failed = [(command, answer) for command, answer in gtp.answers if not answer.startswith("=")]
    genmoves = sum(command.startswith("genmove") for command, _ in gtp.answers)
    print(f"\nduring the import: {queries} book queries in this process (book sizes seen: {len(seen)}), "
          f"{len(gtp.answers)} GTP answers ({genmoves} genmove), {web.get('requests')} web queries")
    assert not errors, errors[:5]
    assert web["errors"] == 0 and web["requests"] >= 10, web
    assert not failed, failed[:5]
    assert "internal error" not in stderr and "cannot open book" not in stderr, stderr[-2000:]
    assert len(seen) >= 3 and min(seen) >= 500, sorted(seen)  # the readers saw the book grow
    assert genmoves >= 20 and queries >= 20
