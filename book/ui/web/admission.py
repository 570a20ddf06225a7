"""Admission for the web page's heavy work: at most ``SCANS`` requests scan patterns at once in the
whole server, its worker processes together (docs/limits.md).

A request's scans are bounded one by one (``api_args.SCAN_SECONDS``), not together: eight clients
repeating the worst ``within=`` request (each answered 503 within its budget) held every thread of
``fuseki serve`` (2 processes x 2 threads), and another visitor's position waited a median 5.4-9.7 s.
A scan already uses every core (numba's threads), so two at once only share them.  Now a request
takes the scan slot when its first pattern scan is about to run (a ``within=`` search the
``within.StageCache`` does not hold, or the pattern search itself: ``admit``), and keeps it until
its answer is made; a request that cannot have it waits up to ``ADMIT_WAIT`` seconds, then is
answered 503 (``ScansBusy``: ``{"error": "server busy: ...", "busy": true}``).  Only so many of a
process's requests may hold or wait for the slot (``fuseki serve``: one fewer than its threads),
so a process always keeps a thread for every other request: the others are answered 503 at once.

The slots are bytes of a file without a name, locked with ``fcntl`` (POSIX record locks): such a
lock is its process's, so the processes exclude each other, and the kernel drops the locks of a
process that dies (a worker killed mid-scan leaves no slot taken); a lock of each slot in the
process keeps its threads apart.  ``fuseki serve``'s master process opens the file before it forks
its workers (``configure``), and nothing is left on disk whatever ends the server; an application
without it (``create_app`` in the tests, the CLI's shell) opens its own on its first scan, for its
process.
"""

from __future__ import annotations

import fcntl
import tempfile
import threading
import time

from flask import g, has_request_context, jsonify

SCANS = 1  # requests whose pattern scans run at once, in the whole server
ADMIT_WAIT = 2.0  # seconds a request waits for the scan slot before its 503
POLL = 0.02  # seconds between two looks at a taken slot
WAITING = 64  # a process's requests holding or waiting for the slot, without configure


class ScansBusy(Exception):
    """The scan slot was taken for all of ``ADMIT_WAIT`` (or this process has as many requests
    scanning or waiting as it may): answered 503, the request unchanged to ask again."""


class Slots:
    """``scans`` slots: bytes of the file ``fd`` (None: a new one, unnamed); ``waiting``: this
    process's requests that may hold or wait for one at once; ``wait``: the seconds one waits."""

    def __init__(self, scans: int = SCANS, waiting: int = WAITING, wait: float = ADMIT_WAIT, fd: int | None = None):
        if fd is None:
            self.file = tempfile.TemporaryFile()  # kept open: the processes forked later share it
            fd = self.file.fileno()
        self.fd = fd
        self.threads = [threading.Lock() for _ in range(scans)]  # this process's holder of each slot
        self.waiting = threading.BoundedSemaphore(waiting)
        self.wait = wait

    def take(self) -> int | None:
        """A slot (``give_back`` it), or None when none came free in time."""
        if not self.waiting.acquire(blocking=False):
            return None
        try:
            deadline = time.monotonic() + self.wait
            while True:
                for slot, lock in enumerate(self.threads):
                    if lock.acquire(blocking=False):
                        try:
                            fcntl.lockf(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, slot)
                            return slot
                        except OSError:  # another process holds it
                            lock.release()
                if time.monotonic() >= deadline:
                    break
                time.sleep(POLL)
        except BaseException:
            self.waiting.release()
            raise
        self.waiting.release()
        return None

    def give_back(self, slot: int) -> None:
        fcntl.lockf(self.fd, fcntl.LOCK_UN, 1, slot)
        self.threads[slot].release()
        self.waiting.release()


_slots: Slots | None = None
_made = threading.Lock()


def configure(waiting: int) -> None:
    """The server's slots (``fuseki serve``'s master process, before the fork)."""
    global _slots
    _slots = Slots(SCANS, waiting)


def _own_slots() -> Slots:
    global _slots
    with _made:
        if _slots is None:
            _slots = Slots()
        return _slots


def admit() -> None:
    """Take the scan slot for the request being answered, once (it is given back with its answer);
    ``ScansBusy`` if it cannot have it.  Outside a request (a scan of the CLI's shell): nothing."""
    if not has_request_context() or "fuseki_scan_slot" in g:
        return
    slots = _slots or _own_slots()
    slot = slots.take()
    if slot is None:
        raise ScansBusy(f"server busy: {SCANS} pattern search{'es' if SCANS > 1 else ''} at a time, and another "
                        f"is running; ask again in a moment")
    g.fuseki_scan_slot = (slots, slot)


def add_admission(app) -> None:
    """Give the slot back once a request's answer is made, and answer ``ScansBusy`` 503."""

    @app.teardown_request
    def give_back_scan_slot(_error):
        held = g.pop("fuseki_scan_slot", None)
        if held is not None:
            held[0].give_back(held[1])

    @app.errorhandler(ScansBusy)
    def scans_busy(exc: ScansBusy):
        return jsonify(error=str(exc), busy=True), 503, {"Retry-After": "2"}
