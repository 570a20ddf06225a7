"""``fuseki serve``'s HTTP server: gunicorn, one process per core, each with a few threads.

Why processes: the requests are CPU work in Python (the board's replay, numpy, JSON), so the
threads of one process share one core through the GIL; ``bench/web_load.py`` measures the
difference (docs/benchmarks.md has the figures: Werkzeug's thread per connection against these
processes).  Why few threads: a thread more per process only adds contention for its GIL; the
worker's poller keeps every idle keep-alive connection without a thread, and the second thread
lets a slow request (a long download, a pattern search) leave its process answering.

A slow or idle connection holds no thread (:class:`HeadFirstWorker`): gunicorn's ``gthread``
worker handed a connection to a thread as soon as one byte came, and the thread waited for the
rest of the request with no time-out, so 40 connections that sent one byte each froze a
2-process, 2-thread server.  Here a worker's poller gathers each request's head (up to the blank
line) itself, without a thread, and only a whole head reaches a thread; a head not whole within
``HEAD_WAIT`` seconds is closed, and a thread waits at most ``SLOW_CLIENT`` seconds for a client
to send or take bytes (``SO_RCVTIMEO``/``SO_SNDTIMEO``: a body that trickles, an answer nobody
reads).  For the internet, put it behind nginx or Caddy anyway (docs/exploring.md).

Each worker process opens the book read-only itself, after the fork (a SQLite or PostgreSQL
connection must not cross a fork), and warms its caches before it takes a connection.  The master
process only listens and watches the workers; a worker whose master dies (SIGKILL) exits
within a second, so a killed server leaves no process behind.
"""

from __future__ import annotations

import errno
import multiprocessing
import os
import selectors
import signal
import socket
import struct
import sys
import time
from functools import partial

from gunicorn import http as gunicorn_http
from gunicorn.app.base import BaseApplication
from gunicorn.workers.gthread import TConn, ThreadWorker

THREADS = 2  # threads per worker process (see the module docstring)
GRACEFUL_STOP = 5  # seconds a stopping worker may finish its requests (gunicorn's default: 30)
CONNECTIONS = 4096  # open connections per worker process (gunicorn's default 1,000 each)
# seconds a request's head may take to arrive once its connection is open or its next request's
# first byte came; FUSEKI_HEAD_WAIT sets another (the tests: 1 s)
HEAD_WAIT = float(os.environ.get("FUSEKI_HEAD_WAIT", 30))
HEAD_BYTES = 32768  # a head gathered beyond this goes to a thread as it is (which answers 400/431 if it is bad)
SLOW_CLIENT = 30  # seconds a thread waits for a client to send or take any byte


class HeadFirstWorker(ThreadWorker):
    """gunicorn's ``gthread`` worker that hands a connection to a thread only once a request's
    whole head has come (the module docstring); gathering costs a buffer, not a thread."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.heads: dict = {}  # connection -> deadline, in deadline order (a constant wait from now)

    def accept(self, listener):
        try:
            client_sock, client_addr = listener.accept()
        except BlockingIOError:
            return  # another worker took it
        except OSError as exc:
            if exc.errno in (errno.ECONNABORTED, errno.EMFILE, errno.ENFILE):
                return
            raise
        self.nr_conns += 1
        timeout = struct.pack("ll", SLOW_CLIENT, 0)
        client_sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, timeout)
        client_sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, timeout)
        conn = TConn(self.cfg, client_sock, client_addr, listener.getsockname())
        self._gather(conn)

    def on_client_socket_readable(self, conn, client):
        """A kept-alive connection's next request began: gather its head too."""
        self.poller.unregister(client)
        self.keepalived_conns.remove(conn)
        self._gather(conn)

    def _gather(self, conn) -> None:
        conn.sock.setblocking(False)
        conn.head = b""
        self.heads[conn] = time.monotonic() + HEAD_WAIT
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self._head_readable, conn))

    def _head_readable(self, conn, client) -> None:
        try:
            data = conn.sock.recv(HEAD_BYTES)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:  # the client went away
            self._drop_head(conn)
            return
        conn.head += data
        if b"\r\n\r\n" not in conn.head and b"\n\n" not in conn.head and len(conn.head) < HEAD_BYTES:
            return
        self.poller.unregister(conn.sock)
        del self.heads[conn]
        if conn.parser is None:
            conn.parser = gunicorn_http.get_parser(self.cfg, conn.sock, conn.client)
        conn.parser.unreader.unread(conn.head)
        conn.head = b""
        conn.data_ready = True
        self.enqueue_req(conn)

    def _drop_head(self, conn) -> None:
        self.poller.unregister(conn.sock)
        del self.heads[conn]
        self.nr_conns -= 1
        conn.close()

    def murder_pending(self):
        """Also close the connections whose head did not come in time (all of them when stopping)."""
        super().murder_pending()
        now = time.monotonic()
        for conn, deadline in list(self.heads.items()):
            if deadline > now and self.alive:
                break
            self._drop_head(conn)


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
                 trusted_hosts: list[str] | None, announce, ai=None, trust_proxy: bool = False):
        self.url, self.host, self.port, self.ai, self.trust_proxy = url, host, port, ai, trust_proxy
        self.workers, self.threads = workers, threads
        self.trusted_hosts, self.announce = trusted_hosts, announce
        self.announced = multiprocessing.Value("b", 0)  # shared with the forked workers
        super().__init__(prog="fuseki serve")

    def load_config(self) -> None:
        _more_files()
        host = f"[{self.host}]" if ":" in self.host else self.host
        settings = {
            "bind": f"{host}:{self.port}",
            "workers": self.workers,
            "worker_class": "fuseki.book.ui.web.server.HeadFirstWorker",
            "worker_connections": CONNECTIONS,
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
        from fuseki.book.ui.web.app import create_app

        return create_app(book_url=self.url, trusted_hosts=self.trusted_hosts, ai=self.ai,
                          trust_proxy=self.trust_proxy)

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


def _more_files() -> None:
    """Raise this process's (and so its workers') open-file limit to the hard one: each connection
    is a file, and the usual soft limit (1,024) is less than ``CONNECTIONS`` idle clients."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard if hard == resource.RLIM_INFINITY else min(hard, 2 * CONNECTIONS + 1024)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


def _warm_up(app) -> None:
    """Ask what every visitor's first requests ask (the book's figures, the empty board): a
    cold process answers them in about half a second (the book's counts, the rules kernels'
    first call), a warm one in milliseconds.  The requests are marked as the warm-up's
    (``book.ui.web.ai.WARM_UP``): what they give KataGo spends no visitor's budget (they come
    from 127.0.0.1, as a visitor on this machine does)."""
    from fuseki.book.ui.web.ai import WARM_UP

    client = app.test_client()
    client.environ_base[WARM_UP] = True
    try:
        for path in ("/api/info", "/api/position"):
            client.get(path, headers={"Host": "127.0.0.1"})
        # the player pages' arrays (book.storage.players): read during the load, they held the other
        # requests of their process up for seconds (bench/web_load.py --players, docs/benchmarks.md)
        from fuseki.book.storage import players

        players.warm(app.extensions["fuseki_book"])
    except Exception as exc:  # noqa: BLE001  # a cold cache is slower, never wrong
        print(f"fuseki serve: warm-up: {exc}", file=sys.stderr)
