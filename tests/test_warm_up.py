"""The GTP loop warms the choosers up after its first answer: the book is open before the
first ``genmove`` asks for it, and opening it twice at once (warm-up and genmove) is safe."""

from __future__ import annotations

import os
import threading
import time

import gtp_main
from fuseki.book import builtin
from fuseki.engine.config import BookSettings, Settings
from fuseki.engine.gtp.cli import serve


def test_the_book_opens_on_the_warm_up_thread_after_the_first_answer():
    engine = gtp_main.build_engine(Settings(seed=1, book=BookSettings(path=str(builtin.PATH))), log=lambda text: None)
    chooser = engine.game.advisor
    assert chooser is not None and chooser.opener._book is None  # nothing opened at start
    read_end, write_end = os.pipe()
    stdin, stdout = os.fdopen(read_end, "rb"), open(os.devnull, "wb")
    loop = threading.Thread(target=serve, args=(engine, stdin, stdout), kwargs={"warm": True})
    loop.start()
    os.write(write_end, b"name\n")
    deadline = time.monotonic() + 60
    while chooser.opener._book is None and time.monotonic() < deadline:
        time.sleep(0.05)
    os.write(write_end, b"quit\n")
    loop.join(30)
    assert chooser.opener._book is not None, "the warm-up thread opened the book"
    chooser.opener.close()


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
