"""The GTP loop warms the choosers up from its start: the book is open, and has answered the
empty board, before the first ``book_moves`` or ``genmove`` asks for it; opening it twice at
once (warm-up and genmove) is safe; ``quit`` ends the process at once."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import threading
from pathlib import Path

import gtp_main
from fuseki.book.model import builtin
from fuseki.engine.config import BookSettings, Settings
from fuseki.engine.gtp.cli import serve
from fuseki.engine.players.chooser import Chooser


def test_the_book_opens_and_answers_the_empty_board_on_the_warm_up_thread_before_any_line():
    engine = gtp_main.build_engine(Settings(seed=1, book=BookSettings(path=str(builtin.PATH))), log=lambda text: None)
    chooser = engine.game.advisor
    assert chooser is not None and chooser.opener._book is None  # nothing opened at start
    read_end, write_end = os.pipe()
    stdin, stdout = os.fdopen(read_end, "rb"), open(os.devnull, "wb")
    warmed = threading.Event()
    loop = threading.Thread(target=serve, args=(engine, stdin, stdout), kwargs={"warm": True, "warmed": warmed})
    loop.start()
    try:
        assert warmed.wait(120), "the warm-up ended"  # no line sent: it does not wait for one
        assert chooser.opener._book is not None, "the warm-up thread opened the book"
        assert chooser.warmed is not None and chooser.warmed.total > 0  # the empty board was asked
    finally:
        os.write(write_end, b"quit\n")
        loop.join(30)
        chooser.opener.close()


def test_quit_is_answered_and_the_process_ends_with_its_input_still_open():
    process = subprocess.Popen([sys.executable, str(Path(gtp_main.__file__)), "--no-book"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        process.stdin.write(b"name\nquit\n")
        process.stdin.flush()  # and left open: the engine must not wait for its end
        assert process.wait(120) == 0
        assert process.stdout.read() == b"= fuseki\n\n=\n\n"
    finally:
        process.kill()
        process.stdin.close()


def test_the_book_is_opened_once_by_racing_threads():
    engine = gtp_main.build_engine(Settings(seed=1, book=BookSettings(path=str(builtin.PATH))), log=lambda text: None)
    source = engine.game.advisor.opener
    books = []
    threads = [threading.Thread(target=lambda: books.append(source.get())) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(book) for book in books}) == 1 and books[0] is not None
    source.close()


class HeldWarmUp(Chooser):
    """A chooser whose warm-up waits until the test lets it end."""

    name = "held"

    def __init__(self):
        self.started, self.release = threading.Event(), threading.Event()

    def warm_up(self):
        self.started.set()
        assert self.release.wait(60)

    def choose(self, board, colour):
        return None


def serve_with(chooser, lines: bytes) -> tuple[threading.Thread, io.BytesIO]:
    engine = gtp_main.build_engine(Settings(seed=1, book=BookSettings(path="")), log=lambda text: None)
    engine.game.chain.choosers.insert(0, chooser)
    stdout = io.BytesIO()
    loop = threading.Thread(target=serve, args=(engine, io.BytesIO(lines), stdout), kwargs={"warm": True})
    loop.start()
    assert chooser.started.wait(60)
    return loop, stdout


def test_the_first_answer_waits_for_the_warm_up_and_later_ones_do_not():
    chooser = HeldWarmUp()
    loop, stdout = serve_with(chooser, b"name\nprotocol_version\n")
    loop.join(0.5)  # the loop is waiting for the warm-up, not answering (a slower loop would only wait longer)
    assert loop.is_alive() and stdout.getvalue() == b""
    chooser.release.set()
    loop.join(60)
    assert stdout.getvalue() == b"= fuseki\n\n= 2\n\n"


def test_quit_never_waits_for_the_warm_up():
    chooser = HeldWarmUp()
    loop, stdout = serve_with(chooser, b"7 quit\n")
    try:
        loop.join(60)  # answered while the warm-up is still held
        assert not loop.is_alive() and stdout.getvalue() == b"=7\n\n"
    finally:
        chooser.release.set()
