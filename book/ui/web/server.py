"""``fuseki serve``'s HTTP server: gunicorn, one process per core, each with a few threads.

Why processes: the requests are CPU work in Python (the board's replay, numpy, JSON), so the
threads of one process share one core through the GIL; ``bench/web_load.py`` (50 clients, the
377,899-game book, 2 cores) answered 148 requests/s with Werkzeug's thread-per-connection
server, timing some out, and about 2.5 times as many with two processes of gunicorn's
``gthread`` workers.  Why few threads: a thread more per process only adds contention for its
GIL (the same bench: 1 thread 380 requests/s, 4 threads 300, 8 threads 277); the worker's
poller keeps every idle keep-alive connection without a thread.

Each worker process opens the book read-only itself, after the fork (a SQLite or PostgreSQL
connection must not cross a fork), and warms its caches on a thread of its own.  The master
process only listens and watches the workers; a worker whose master dies (SIGKILL) exits
within a second, so a killed server leaves no process behind.
"""

from __future__ import annotations

import os
import sys
import threading

from gunicorn.app.base import BaseApplication

THREADS = 2  # threads per worker process (see the module docstring)
GRACEFUL_STOP = 5  # seconds a stopping worker may finish its requests (gunicorn's default: 30)


def default_workers() -> int:
    """One worker process per core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


class BookServer(BaseApplication):
    """A gunicorn application serving ``create_app(book_url=url)`` from each worker.

    ``announce(port)`` runs in the master once the socket listens (``--port 0``: the port
    the system chose)."""

    def __init__(self, url: str, host: str, port: int, workers: int, threads: int,
                 trusted_hosts: list[str] | None, announce):
        self.url, self.host, self.port = url, host, port
        self.workers, self.threads = workers, threads
        self.trusted_hosts, self.announce = trusted_hosts, announce
        super().__init__(prog="fuseki serve")

    def load_config(self) -> None:
        host = f"[{self.host}]" if ":" in self.host else self.host
        settings = {
            "bind": f"{host}:{self.port}",
            "workers": self.workers,
            "worker_class": "gthread",
            "threads": self.threads,
            "keepalive": 60,  # a browser's (or the bench's) next request reuses its connection
            "graceful_timeout": GRACEFUL_STOP,
            "timeout": 300,  # the worker's heartbeat; long requests run on its threads meanwhile
            "loglevel": "warning",
            "accesslog": None,
            "when_ready": lambda arbiter: self.announce(arbiter.LISTENERS[0].sock.getsockname()[1]),
            "post_worker_init": _warm_up,
        }
        for name, value in settings.items():
            self.cfg.set(name, value)

    def load(self):
        from fuseki.book.ui.web import create_app

        return create_app(book_url=self.url, trusted_hosts=self.trusted_hosts)


def _warm_up(worker) -> None:
    """Read what every visitor's first requests need (the book's figures, the empty board's next
    moves) on a thread of the new worker, so that they do not wait for a cold process."""
    book = worker.wsgi.extensions.get("fuseki_book")
    if book is None:
        return

    def warm() -> None:
        from fuseki.engine.core.board import Board

        try:
            sizes = book.stats().sizes
            for size in sorted(sizes, key=sizes.get, reverse=True)[:1]:
                book.next_moves(Board(size))
        except Exception as exc:  # noqa: BLE001  # a cold cache is slower, never wrong
            print(f"fuseki serve: warm-up: {exc}", file=sys.stderr)

    threading.Thread(target=warm, name="fuseki-warm-up", daemon=True).start()
