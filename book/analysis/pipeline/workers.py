"""Worker processes that never outlive the process that started them, and the pipes between them.

Killed (SIGKILL, the OOM killer), an importer used to leave its workers waiting forever
on queues no one read.  Now:

- each worker asks Linux to SIGKILL it when its parent dies (``start_worker``), and
  checks that the parent is still there once it has asked;
- the stages talk through pipes (``multiprocessing.Pipe``) of which every process keeps
  only the ends it uses, so a stage that dies leaves whoever talks to it an end of file
  or a broken pipe, even halfway through a message, instead of a wait: the writer's
  ``take`` raises, a worker's ``Sender`` raises BrokenPipeError;
- Ctrl-C, which the terminal sends to the whole process group, is the parent's to
  handle; the workers ignore it, and die of the SIGTERM ``stop_all`` sends.

This module knows nothing of games: ``book.analysis.pipeline.importer`` builds its stages on it.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time

from fuseki.book.storage import wal

POLL = 0.5  # seconds between looks at ``stop`` while the writer waits for a batch
# Seconds a parser may stay silent, alive, before the import gives up on it: its longest
# legitimate work is one group (``book.analysis.pipeline.groups.GROUP_BYTES`` of files) or passing over
# an archive's members, seconds; a parser stuck in a loop must not keep the import waiting for ever.
STALL_LIMIT = 600.0
_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def start_worker(parent: int, unused) -> None:
    """First thing in a worker process: die with ``parent`` (its pid), close the ``unused`` pipe ends.

    Exits at once if the parent is already gone.  Does not raise.
    """
    # The parent stops the pipeline on Ctrl-C; its terminate() (SIGTERM) must kill us,
    # not run the handlers we inherited from it through fork.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass  # no prctl: a dead parent still shows as a broken pipe
    if os.getppid() != parent:  # it died before prctl: no signal will come
        os._exit(1)
    for end in unused:
        end.close()


class Sender:
    """A pipe's sending end that sends on a thread, one item in flight, so that a worker
    makes its next item while the last one is taken (a pipe holds 64 kB, a batch megabytes).
    """

    def __init__(self, end):
        self.end, self.thread, self.error = end, None, None

    def send(self, item) -> None:
        """Send ``item`` once the previous one is taken.

        Raises BrokenPipeError if the process that reads the pipe is gone, or what
        sending the previous item raised.
        """
        self.wait()
        # A daemon thread: a worker whose reader is gone must not wait for it to exit.
        self.thread = threading.Thread(target=self._send, args=(item,), daemon=True)
        self.thread.start()

    def _send(self, item) -> None:
        try:
            self.end.send(item)
        except BaseException as exc:  # noqa: BLE001 - raised in the worker's own thread by wait()
            self.error = exc

    def wait(self) -> None:
        """Until the last item is taken; raises as ``send`` does."""
        if self.thread is not None:
            self.thread.join()
            self.thread = None
        if self.error is not None:
            error, self.error = self.error, None
            raise error


class StageFailed(RuntimeError):
    """A process of the import (its reader, a parser, a merge) died, was killed, fell silent or
    raised; ``str()`` names which and how.  What the import committed before is kept: ``fuseki
    import`` says so in one line (``book.ui.cli_shared.failed_text``), and the same import again
    adds the rest."""


def how_it_ended(stage) -> str:
    """How the process ``stage`` ended: "killed by signal 9", "exit code 1" (waiting 5 s at most)."""
    stage.join(timeout=5)
    code = stage.exitcode
    return f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"


def take(end, stage, stop=None, stall: float | None = None):
    """The next item from the pipe ``end`` that the process ``stage`` sends on; None once
    ``stop`` (a threading.Event) is set.

    Raises StageFailed if ``stage`` died (the OOM killer, say), even halfway through
    sending, or sent nothing for ``stall`` seconds (None: waits while it lives).
    """
    deadline = None if stall is None else time.monotonic() + stall
    while True:
        if stop is not None and stop.is_set():  # first: after a stop, not one batch more
            return None
        if end.poll(POLL):
            break
        if deadline is not None and time.monotonic() > deadline:
            raise StageFailed(f"{stage.name} (process {stage.pid}) sent nothing for {stall:.0f} s: stopped "
                              "waiting (see docs/limits.md)")
    try:
        return end.recv()
    except (EOFError, OSError):  # OSError: "got end of file during message"
        raise StageFailed(f"{stage.name} (process {stage.pid}) died ({how_it_ended(stage)})") from None


def start_forked(processes, end_threads=None) -> None:
    """Start ``processes`` (of the fork context) once ``end_threads()`` has ended the threads
    this process runs beside the one forking (a SQLite book's checkpointer: ``Book.end_threads``).

    A forked child has only the thread that forked it; a lock another thread held at that
    instant stays held in the child for ever.  A merge process forked while the book's
    checkpointer copied a batch's pages inherited the mutex of the book's WAL index held, and
    hung in its first read of the book (about one import in 25 beside readers:
    tests/test_concurrency.py).  So every fork of the import goes through here, with no
    thread of the import's alive, and with no checkpoint of another book this process has
    open inside SQLite (``wal.outside_sqlite``: a parser forked mid-checkpoint of another book
    hung in its first ``sqlite3.connect``).
    """
    if end_threads is not None:
        end_threads()
    with wal.outside_sqlite():  # and the checkpoints of any other book this process has open
        for process in processes:
            process.start()


def stop_all(stages, ends) -> None:
    """End the ``stages`` (processes) however far they are, and close the pipe ``ends``."""
    for stage in stages:
        if stage.is_alive():
            stage.terminate()  # SIGTERM, whose default action is death (start_worker)
    for stage in stages:
        if stage.pid is not None:
            stage.join(timeout=5)
            if stage.is_alive():  # signalled before start_worker set SIGTERM's default
                stage.kill()
                stage.join()
    for end in ends:
        end.close()
