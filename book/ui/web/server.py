"""``fuseki serve``'s HTTP server: gunicorn, one process per core, each with a few threads.

Why processes: the requests are CPU work in Python (the board's replay, numpy, JSON), so the
threads of one process share one core through the GIL; ``bench/web_load.py`` measures the
difference (docs/benchmarks.md has the figures: Werkzeug's thread per connection against these
processes).  Why few threads: a thread more per process only adds contention for its GIL; the
worker's poller keeps every idle keep-alive connection without a thread, and the second thread
lets a slow request (a long download, a pattern search) leave its process answering.

Each worker process opens the book read-only itself, after the fork (a SQLite or PostgreSQL
connection must not cross a fork), and warms its caches before it takes a connection.  The master
process only listens and watches the workers; a worker whose master dies (SIGKILL) exits
within a second, so a killed server leaves no process behind.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys

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
    """A gunicorn application serving ``create_app(book_url=url, ai=ai)`` from each worker.

    ``announce(port)`` runs once, in the first worker that is warm (``--port 0``: the port
    the system chose): a client that starts on that line finds a worker taking connections,
    and a worker takes none before it is warm."""

    def __init__(self, url: str, host: str, port: int, workers: int, threads: int,
                 trusted_hosts: list[str] | None, announce, ai=None):
        self.url, self.host, self.port, self.ai = url, host, port, ai
        self.workers, self.threads = workers, threads
        self.trusted_hosts, self.announce = trusted_hosts, announce
        self.announced = multiprocessing.Value("b", 0)  # shared with the forked workers
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
            "post_worker_init": self._worker_ready,
        }
        for name, value in settings.items():
            self.cfg.set(name, value)

    def load(self):
        from fuseki.book.ui.web import create_app

        return create_app(book_url=self.url, trusted_hosts=self.trusted_hosts, ai=self.ai)

    def _worker_ready(self, worker) -> None:
        """Warm the new worker before it takes a connection, then say the address once."""
        # Ctrl-C (SIGINT to the group) and the master's quick stop (SIGQUIT) made gunicorn raise
        # SystemExit wherever the worker was, also inside a finalizer (numba's llvmlite objects),
        # which Python prints as a traceback and ignores; the worker ends its loop instead (within
        # its poller's second), as on SIGTERM.
        for number in (signal.SIGINT, signal.SIGQUIT):
            signal.signal(number, lambda _number, _frame: setattr(worker, "alive", False))
        _warm_up(worker.wsgi)
        with self.announced.get_lock():
            if not self.announced.value:
                self.announced.value = 1
                self.announce(worker.sockets[0].getsockname()[1])


def _warm_up(app) -> None:
    """Ask what every visitor's first requests ask (the book's figures, the empty board): a
    cold process answers them in about half a second (the book's counts, the rules kernels'
    first call), a warm one in milliseconds."""
    client = app.test_client()
    try:
        for path in ("/api/info", "/api/position"):
            client.get(path, headers={"Host": "127.0.0.1"})
        # the player pages' arrays (book.storage.players): read during the load, they held the other
        # requests of their process up for seconds (bench/web_load.py --players, docs/benchmarks.md)
        from fuseki.book.storage import players

        players.warm(app.extensions["fuseki_book"])
    except Exception as exc:  # noqa: BLE001  # a cold cache is slower, never wrong
        print(f"fuseki serve: warm-up: {exc}", file=sys.stderr)
