"""Checkpoints of a SQLite book's write-ahead log, on a thread of their own.

SQLite's automatic checkpoint runs inside the COMMIT of the transaction that takes the
log over its threshold, so the writer itself copies every page it changed back into
the database file.  For an import that is most of the cost of a commit: 0.4-0.5 s of
the writer's ~2.9 s for the 11,365 Tygem games (bench/book.py's writer CPU), while the other core sits idle at the
start and the end of the import.  Python's sqlite3 releases the GIL while SQLite
works, so a thread with its own connection can do that copy instead: a writable
:class:`book.storage.store.Book` turns the automatic checkpoint off and kicks a
:class:`Checkpointer` after each write transaction.

The checkpoints are PASSIVE: they never wait for readers or writers, and copy what
they can.  The log restarts from its beginning only when a write begins after every
frame was copied, which a checkpoint running beside the writer seldom allows: left
alone the log grew to 161 MB for a 58 MB book, and would grow without end on a larger
import.  So once the log is longer than ``MAX_LOG_BYTES``, the next write waits for a
checkpoint of the whole log (``Checkpointer.bound``) and restarts it.  The writer sees
that from the log file's size: the book's connections set ``PRAGMA journal_size_limit``
to the same bound (book.storage.connect), so SQLite cuts the file back to it on the
first commit after each restart, and the file is longer only while the log is.  (A
checkpoint's own report of the log's length came too late under load: a checkpoint
thread starved of the CPU let four more writes in, tests/test_wal.py.)
If the process dies, the log stays and SQLite replays it the next time the book is
opened, as after any crash; closing the last connection checkpoints what is left.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

MAX_LOG_BYTES = 256 << 20  # a write waits for the checkpoint beyond this (16,384 frames of 16 KB pages)

# Held by every Checkpointer thread of the process while it is inside SQLite (connecting, a
# checkpoint, closing), and by a fork (``outside_sqlite``).  ``Book.end_threads`` ends the
# threads of the book being written; this covers the other books the process has open: a
# child forked while one of their checkpoints ran inherited SQLite's allocator mutex held and
# hung in its first ``sqlite3.connect`` (tests/test_wal.py; seen in tests/test_groups.py, whose
# test imports into a second book right after the first).
_IN_SQLITE = threading.Lock()


@contextmanager
def outside_sqlite() -> Iterator[None]:
    """While it holds, no Checkpointer thread of this process is inside SQLite: fork here."""
    with _IN_SQLITE:
        yield


class Checkpointer:
    """A thread that runs ``PRAGMA wal_checkpoint(PASSIVE)`` on a SQLite file when kicked."""

    def __init__(self, path: str):
        self._path = path
        self._state = threading.Condition()
        self._pending = False
        self._running = False
        self._closed = False
        self._ending = False  # end_thread: the thread returns once nothing is pending
        self._thread: threading.Thread | None = None

    def kick(self) -> None:
        """Ask for a checkpoint soon (several kicks before it runs make one checkpoint)."""
        with self._state:
            if self._closed:
                return
            self._pending = True
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="fuseki-wal-checkpoint", daemon=True)
                self._thread.start()
            self._state.notify_all()

    def bound(self) -> None:
        """Before a write: if the log has grown past MAX_LOG_BYTES, run a checkpoint of every
        committed frame and wait for it, so the write restarts the log from its beginning.
        (Waiting for the running one is not enough: it copies only the frames committed when
        it began, and with big batches the log then never restarts: 2 GB after 230,000 games.)
        The log is then at most the bound and one write, however late the checkpoints run (a
        reader's snapshot permitting: a checkpoint leaves the frames a reader may still read)."""
        try:
            size = os.path.getsize(self._path + "-wal")
        except OSError:
            return  # no log yet (or the book is gone: the write says so)
        if size > MAX_LOG_BYTES:
            self.kick()
            self.wait()

    def wait(self) -> None:
        """Return when no checkpoint is asked for or running."""
        with self._state:
            while (self._pending or self._running) and self._thread is not None and self._thread.is_alive():
                self._state.wait()

    def close(self) -> None:
        """Run what was asked for, then stop the thread."""
        with self._state:
            self._closed = True
        self.end_thread()

    def end_thread(self) -> None:
        """Run what was asked for, then end the thread; the next kick starts another.

        Called before a fork (``Book.end_threads``): a child has only the thread that forked,
        so a lock another thread held at that instant stays held in the child for ever.  This
        thread spends its time inside SQLite, holding the mutex of the book's WAL index (one
        for every connection of the process to the file) and, on every malloc, the allocator's:
        an import's merge process forked mid-checkpoint hung in its first read of the book,
        in ``sqlite3WalBeginReadTransaction`` (the rare hang of tests/test_concurrency.py).
        Returns with no thread alive unless another thread kicks meanwhile (the writer kicks
        and forks from one thread).
        """
        with self._state:
            self._ending = True
            self._state.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join()
            _task_gone(thread.native_id)
        with self._state:
            self._ending = False

    def _run(self) -> None:
        with _IN_SQLITE:
            conn = sqlite3.connect(self._path, timeout=60, isolation_level=None, check_same_thread=False)
        try:
            while True:
                with self._state:
                    while not self._pending and not self._closed and not self._ending:
                        self._state.wait()
                    if not self._pending:
                        self._thread = None  # under the lock: a kick from now on starts another
                        return
                    self._pending, self._running = False, True
                try:
                    with _IN_SQLITE:
                        conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                except sqlite3.Error:
                    pass  # locked or gone: the next kick, or closing the book, checkpoints
                finally:
                    with self._state:
                        self._running = False
                        self._state.notify_all()
        finally:
            with _IN_SQLITE:
                conn.close()


def _task_gone(native_id: int | None, wait: float = 10.0) -> None:
    """Wait (at most ``wait`` seconds) until the kernel has ended a joined thread's task
    (Linux: ``/proc/self/task/<id>``).  ``join`` returns once the thread's Python state is
    released, a moment before its task goes: a fork in that moment finds a task that is no
    Python thread (tests/test_importer.py counts them, and saw one about once in three runs
    of its module under load)."""
    path = f"/proc/self/task/{native_id}"
    deadline = time.monotonic() + wait
    while native_id is not None and os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.0002)
