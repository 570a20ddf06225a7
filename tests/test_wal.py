"""book.storage.wal: a SQLite book's log is checkpointed on a thread, and stays bounded while it is written."""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from contextlib import closing
from types import SimpleNamespace

import numpy as np

from fuseki.book.storage import wal
from fuseki.book.storage.store import Book

FRAME = 16384 + 24  # a frame of the log: a 16 KB page (book.storage.connect) and its header


def write_back_to_back(book: Book, writes: int, rows: int, seed: int) -> list[int]:
    """Writes of ``rows`` random rows each, one right after another; the log file's size after each."""
    rng = np.random.default_rng(seed)
    sizes = []
    with book.writing() as conn:  # keys all over one B-tree: each write changes most of its pages
        conn.exec_driver_sql("CREATE TABLE IF NOT EXISTS scratch (key INTEGER, code INTEGER, "
                             "PRIMARY KEY (key, code)) WITHOUT ROWID")
    for _ in range(writes):
        keys = rng.integers(-2**62, 2**62, rows)
        with book.writing() as conn:
            conn.exec_driver_sql("INSERT INTO scratch VALUES (?, ?)", [(int(k), i) for i, k in enumerate(keys)])
        sizes.append(os.path.getsize(book.path + "-wal"))
    return sizes


def checkpoints_through(monkeypatch, before) -> None:
    """The Checkpointer's connections call ``before(sql)`` ahead of each statement (its
    checkpoints made late, or held inside SQLite); the rest of the process's SQLite is untouched."""
    class Connection:
        def __init__(self, conn):
            self._conn = conn

        def execute(self, sql):
            before(sql)
            return self._conn.execute(sql)

        def close(self):
            self._conn.close()

    monkeypatch.setattr(wal, "sqlite3", SimpleNamespace(
        connect=lambda *args, **kwargs: Connection(sqlite3.connect(*args, **kwargs)), Error=sqlite3.Error))


def test_the_log_restarts_once_it_passes_its_bound_however_late_the_checkpoints_run(tmp_path, monkeypatch):
    """Bounded, the log is at most the bound and one write, whenever the checkpoint thread
    gets the CPU; here it gets it late: each checkpoint starts after a pause as long as the
    next write, the schedule under which a report from the checkpoint came too late."""
    def late(sql):
        if "wal_checkpoint" in sql:
            time.sleep(0.05)

    def never(sql):
        if "wal_checkpoint" in sql:
            raise sqlite3.OperationalError("no checkpoint in this test's baseline")

    sizes = {}
    for frames, before in ((40, late), (10**6, never)):  # 10**6: no bound
        checkpoints_through(monkeypatch, before)
        monkeypatch.setattr(wal, "MAX_LOG_BYTES", 32 + frames * FRAME)
        with Book.open(str(tmp_path / f"{frames}.sqlite")) as book:
            sizes[frames] = write_back_to_back(book, writes=60, rows=3000, seed=1)
    # With no checkpoint the log grows by each write's pages (the same pages bounded: same rows,
    # same B-tree).  A checkpoint there, however late, could copy every frame before the next
    # write on a loaded machine, and that write restarted the log: the baseline read 0 frames.
    grown = np.diff([32] + sizes[10**6]) // FRAME
    assert (grown > 0).all() and grown.sum() > 1000
    assert max(sizes[40]) <= 32 + (40 + grown.max()) * FRAME, (max(sizes[40]) // FRAME, grown.max())
def test_closing_the_book_leaves_every_row_in_the_file(tmp_path):
    path = str(tmp_path / "b.sqlite")
    with Book.open(path) as book:
        write_back_to_back(book, writes=5, rows=500, seed=2)
    assert not os.path.exists(path + "-wal") or os.path.getsize(path + "-wal") == 0
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM scratch").fetchone()[0] == 2500


def checkpoint_threads() -> list:
    import threading

    return [thread for thread in threading.enumerate() if thread.name == "fuseki-wal-checkpoint"]


def test_ending_the_books_threads_runs_the_asked_checkpoint_and_a_write_starts_it_again(tmp_path):
    """``Book.end_threads`` (called before a fork: workers.start_forked) returns with no
    checkpoint thread alive, after the checkpoint the last write asked for; the next write starts one."""
    path = str(tmp_path / "b.sqlite")
    with Book.open(path) as book:
        write_back_to_back(book, writes=3, rows=500, seed=3)
        assert checkpoint_threads()  # the writes started it
        book.end_threads()
        assert not checkpoint_threads()
        shutil.copyfile(path, tmp_path / "file-alone.sqlite")  # the asked checkpoint ran: the file alone,
        with closing(sqlite3.connect(tmp_path / "file-alone.sqlite")) as conn:  # without its log, has every row
            assert conn.execute("SELECT count(*) FROM scratch").fetchone()[0] == 1500
        write_back_to_back(book, writes=2, rows=500, seed=4)
        assert checkpoint_threads()
    assert not checkpoint_threads()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM scratch").fetchone()[0] == 2500


def test_a_fork_waits_while_another_books_checkpoint_is_inside_sqlite(tmp_path, monkeypatch):
    """``workers.start_forked`` forks the import's stages after ending the threads of the book it
    writes; a checkpoint of another book the process has open must not be inside SQLite at that
    instant either (its child inherited SQLite's allocator mutex held and hung in its first
    connect: about one fork in 40-100 mid-checkpoint).  Here the other book's checkpoint is held
    inside SQLite until the test lets it go: the fork waits for it, and then happens."""
    import multiprocessing
    import threading

    from fuseki.book.analysis.pipeline.workers import start_forked

    inside, leave = threading.Event(), threading.Event()

    def held_inside(sql):  # the checkpoint stays in SQLite until ``leave``
        inside.set()
        assert leave.wait(60)

    checkpoints_through(monkeypatch, held_inside)
    other = wal.Checkpointer(str(tmp_path / "other.sqlite"))
    other.kick()
    assert inside.wait(60)
    child = multiprocessing.get_context("fork").Process(target=os._exit, args=(0,))
    forking = threading.Thread(target=start_forked, args=([child],))
    forking.start()
    forking.join(0.5)
    assert forking.is_alive() and child.pid is None  # not forked while the checkpoint is inside SQLite
    leave.set()
    forking.join(60)
    assert not forking.is_alive() and child.pid is not None
    child.join(60)
    assert child.exitcode == 0
    other.close()
