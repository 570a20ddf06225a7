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
2-process, 2-thread server.  Here a worker's poller gathers each whole request itself, head and
body, without a thread, and only a whole request reaches a thread.  A request must be whole within
``REQUEST_WAIT`` seconds of its connection's opening (or of its first byte, on a kept-alive
connection), or its connection is closed: a deadline for the whole request, since a time-out for
each byte let a client that sends a byte every 20 s keep a connection for ever.  A head longer than
``HEAD_BYTES`` is answered 431 and a body longer than ``BODY_BYTES`` 413 (every route is a GET,
which reads none), a body without a length 411, by the poller, without a thread: before, a head
past ``HEAD_BYTES`` went to a thread, which waited 30 s for each byte (four such connections froze
the server), and a thread drained a trickling body for 5 s after its answer (16 of them froze it
for 20 s).  Where gunicorn's parser would read more than the poller gathered, its reads end at the
same deadline (``_Reader``).  A thread waits at most ``SLOW_CLIENT`` seconds for a client to take
bytes of its answer (``SO_SNDTIMEO``).  For the internet, put it behind nginx or Caddy anyway, with
a limit of connections for each address (docs/limits.md, docs/exploring.md).

Each worker process opens the book read-only itself, after the fork (a SQLite or PostgreSQL
connection must not cross a fork), and warms its caches before it takes a connection.  The master
process only listens and watches the workers; a worker whose master dies (SIGKILL) exits
within a second, so a killed server leaves no process behind.
"""

from __future__ import annotations

import errno
import math
import multiprocessing
import os
import select
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

from fuseki.book.ui.web import admission

THREADS = 2  # threads per worker process (see the module docstring)
GRACEFUL_STOP = 5  # seconds a stopping worker may finish its requests (gunicorn's default: 30)
CONNECTIONS = 4096  # open connections per worker process (gunicorn's default 1,000 each)
# seconds a request may take to arrive whole, head and body, from its connection's opening (or, on a
# kept-alive connection, its first byte); FUSEKI_REQUEST_WAIT sets another (the tests: a few seconds)
REQUEST_WAIT = float(os.environ.get("FUSEKI_REQUEST_WAIT", 30))
HEAD_BYTES = 32768  # the longest head taken (nginx's default too: 4 buffers of 8 KB); longer: 431
BODY_BYTES = 16384  # the longest body taken (every route is a GET and reads none); longer: 413
SLOW_CLIENT = 30  # seconds a thread waits for a client to take any byte of its answer
REFUSED = {  # what the poller answers, without a thread, before it closes the connection
    431: f"Request Header Fields Too Large: a request's head is at most {HEAD_BYTES} bytes",
    413: f"Content Too Large: a request's body is at most {BODY_BYTES} bytes",
    411: "Length Required: a request's body needs a Content-Length",
}


class RequestTooSlow(ConnectionResetError):
    """A request not whole by its deadline while a thread reads it.  A ``ConnectionResetError``:
    gunicorn's thread closes the connection without logging a traceback."""


class _Reader:
    """The connection's socket as a thread's request parser reads it: each read waits no later
    than the request's deadline (``deadline``, set as each request goes to a thread).  The poller
    hands over whole requests, so a thread reads the socket only where gunicorn's parser reads a
    request otherwise than ``_request_end`` does (it asks for more before refusing)."""

    def __init__(self, sock):
        self.sock = sock
        self.deadline = 0.0

    def recv(self, size: int) -> bytes:
        left = self.deadline - time.monotonic()
        if left > 0:
            poller = select.poll()
            poller.register(self.sock, select.POLLIN)
            if poller.poll(math.ceil(left * 1000)):
                return self.sock.recv(size)
        raise RequestTooSlow(errno.ECONNRESET, f"request not whole within {REQUEST_WAIT:g} s")


def _request_end(data, searched: int = 0) -> int | None:
    """The length of the request at the start of ``data`` (its head and its body) once its head is
    there, None while it is not (``searched``: bytes of ``data`` already searched for the head's
    end); ``-status`` (``REFUSED``'s) for a request the server does not take.  A head gunicorn
    refuses (a bare line feed, two Content-Lengths, a bad one) ends at its blank line: gunicorn
    answers it 400 without reading on."""
    ends = [at for at in (data.find(b"\r\n\r\n", max(0, searched - 3)), data.find(b"\n\n", max(0, searched - 1)))
            if at >= 0]
    if not ends:
        return -431 if len(data) > HEAD_BYTES else None
    head_end = min(ends)
    if head_end > HEAD_BYTES:
        return -431
    head_end += 4 if data[head_end:head_end + 4] == b"\r\n\r\n" else 2
    lengths = []
    for line in bytes(data[:head_end]).split(b"\n")[1:]:
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"transfer-encoding":
            return -411
        if name == b"content-length":
            lengths.append(value.strip())
    if len(lengths) != 1 or not lengths[0].isdigit() or len(lengths[0]) > 18:
        return head_end  # no body, or one gunicorn refuses
    length = int(lengths[0])
    return -413 if length > BODY_BYTES else head_end + length


class HeadFirstWorker(ThreadWorker):
    """gunicorn's ``gthread`` worker that hands a connection to a thread only once a whole request
    has come (the module docstring); gathering costs a buffer, not a thread."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.gathering: dict = {}  # connection -> deadline, in deadline order (a constant wait from now)

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
        conn.reader = _Reader(client_sock)
        conn.parser = gunicorn_http.get_parser(self.cfg, conn.reader, conn.client)
        conn.whole = False
        self._gather(conn)

    def on_client_socket_readable(self, conn, client):
        """A kept-alive connection's next request began: gather it too."""
        self.poller.unregister(client)
        self.keepalived_conns.remove(conn)
        self._gather(conn)

    def enqueue_req(self, conn):
        """A whole request goes to a thread; gunicorn's ``finish_request`` hands back a kept-alive
        connection whose parser read ahead (a pipelined request): that one is gathered first."""
        if conn.whole:
            conn.whole = False
            super().enqueue_req(conn)
        else:
            self._gather(conn, conn.parser.unreader.take_buffered())

    def _gather(self, conn, read: bytes = b"") -> None:
        conn.sock.setblocking(False)
        conn.buffer = bytearray(read)
        conn.searched, conn.length = 0, None
        self.gathering[conn] = time.monotonic() + REQUEST_WAIT
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self._readable, conn))
        if read:
            self._look(conn)

    def _readable(self, conn, client) -> None:
        try:
            data = conn.sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:  # the client went away
            self._drop(conn)
            return
        if conn.buffer is None:  # the rest of a refused request: dropped as it comes (see _refuse)
            return
        conn.buffer += data
        self._look(conn)

    def _look(self, conn) -> None:
        """Hand the request to a thread once whole; answer and close one the server does not take."""
        if conn.length is None:
            conn.length = _request_end(conn.buffer, conn.searched)
            conn.searched = len(conn.buffer)
            if conn.length is None:
                return
        if conn.length < 0:
            self._refuse(conn, -conn.length)
            return
        if len(conn.buffer) < conn.length:
            return
        self.poller.unregister(conn.sock)
        conn.reader.deadline = self.gathering.pop(conn)
        conn.parser.unreader.unread(bytes(conn.buffer))  # a pipelined request's start too: see enqueue_req
        conn.buffer = bytearray()
        conn.data_ready = conn.whole = True
        self.enqueue_req(conn)

    def _refuse(self, conn, status: int) -> None:
        body = REFUSED[status].encode()
        head = (f"HTTP/1.1 {status} {REFUSED[status].split(':')[0]}\r\nContent-Type: text/plain; charset=utf-8\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n")
        try:
            conn.sock.send(head.encode() + body)  # what the socket takes at once (all, but for a full one)
            conn.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        # the rest of the request is read and dropped until the client closes or the deadline: closed
        # with bytes unread, the connection would be reset, and the client could lose the answer
        conn.buffer = None

    def _drop(self, conn) -> None:
        self.poller.unregister(conn.sock)
        del self.gathering[conn]
        self.nr_conns -= 1
        conn.close()

    def murder_pending(self):
        """Also close the connections whose request did not come whole in time (all of them when stopping)."""
        super().murder_pending()
        now = time.monotonic()
        for conn, deadline in list(self.gathering.items()):
            if deadline > now and self.alive:
                break
            self._drop(conn)


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
        # the scan slot of every worker (book.ui.web.admission), made before the fork; each process
        # keeps a thread that no scan holds or waits on
        admission.configure(waiting=max(1, threads - 1))
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
    (``book.ui.web.ai_service.WARM_UP``): what they give KataGo spends no visitor's budget (they come
    from 127.0.0.1, as a visitor on this machine does)."""
    from fuseki.book.ui.web.ai_service import WARM_UP

    client = app.test_client()
    client.environ_base[WARM_UP] = True
    try:
        for path in ("/api/info", "/api/position"):
            client.get(path, headers={"Host": "127.0.0.1"})
        # the player pages' arrays (book.queries.players): read during the load, they held the other
        # requests of their process up for seconds (bench/web_load.py --players, docs/benchmarks.md)
        from fuseki.book.queries import players

        players.warm(app.extensions["fuseki_book"])
    except Exception as exc:  # noqa: BLE001  # a cold cache is slower, never wrong
        print(f"fuseki serve: warm-up: {exc}", file=sys.stderr)
