"""Issue 59's attacks on ``fuseki serve`` (2 worker processes x 2 threads), each of which froze or
held up another visitor before its fix: heads and bodies that trickle (``book.ui.web.server``'s
whole-request deadline, ``REQUEST_WAIT``), and many clients repeating the worst pattern scan
(``book.ui.web.admission``: at most ``SCANS`` requests scan at once, across the processes).

Loopback only, a bounded number of connections, every wait with a deadline.  Nothing here asserts
a bare wall-clock figure: a probe must be answered before an event of the same run (a trickling
connection's deadline, the end of a scan), which the server cannot reach sooner.
"""

from __future__ import annotations

import re
import select
import socket
import subprocess
import sys
import threading
import time

import pytest

from browsing import ENV, ROOT

WAIT = 4  # the servers' whole-request deadline here (FUSEKI_REQUEST_WAIT), in seconds
TRICKLERS = 16  # connections of each kind (the issue: 4 froze the server, 16 slow bodies)
PAD = b"a" * 8000  # a header line under gunicorn's 8,190 bytes


@pytest.fixture(scope="module")
def small_book(tmp_path_factory):
    """tests/webbook.py's five games, imported."""
    from webbook import build_book

    return build_book(tmp_path_factory.mktemp("attacks") / "book.sqlite")


def _serve(book, env: dict) -> tuple[subprocess.Popen, int]:
    """``fuseki serve --workers 2`` of ``book`` with ``env``: (process, port); its log goes nowhere
    (a pipe nobody reads would fill)."""
    process = subprocess.Popen([sys.executable, "-m", "fuseki", "serve", "--book", str(book), "--port", "0",
                                "--workers", "2"], cwd=ROOT, env={**ENV, **env}, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    match = re.search(r"at http://127\.0\.0\.1:(\d+)/", process.stdout.readline())
    if not match:
        process.kill()
        pytest.fail("fuseki serve did not start")
    return process, int(match.group(1))


def _stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()


def _get(port: int, path: str, timeout: float) -> tuple[int | None, bytes]:
    """(status, body) of a GET on a connection of its own; (None, b"") if no answer within ``timeout``."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
    except OSError:  # socket.timeout included
        return None, b""
    status = re.match(rb"HTTP/1\.1 (\d{3})", answer)
    return (int(status.group(1)) if status else None), answer.partition(b"\r\n\r\n")[2]


class Trickler:
    """Connections that each sent ``start`` and then send one byte every half second, until the
    server closes them (``closed``: connection -> (seconds from its opening, the bytes it got))."""

    def __init__(self, port: int, starts: list[bytes]):
        self.opened, self.got, self.closed = {}, {}, {}
        for start in starts:
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            self.opened[sock], self.got[sock] = time.monotonic(), b""
            try:
                sock.sendall(start)
            except OSError:  # refused and closed while sending
                self._close(sock)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._trickle, daemon=True)
        self.thread.start()

    def _close(self, sock) -> None:
        self.closed[sock] = (time.monotonic() - self.opened[sock], self.got[sock])
        sock.close()

    def _trickle(self) -> None:
        while not self.stop.wait(0.5):
            for sock in [s for s in self.opened if s not in self.closed]:
                try:
                    if select.select([sock], [], [], 0)[0]:
                        got = sock.recv(65536)
                        if not got:  # the server closed it
                            self._close(sock)
                            continue
                        self.got[sock] += got  # an answer: the attacker sends on all the same
                    sock.send(b"a")
                except OSError:
                    self._close(sock)

    def all_closed(self, within: float) -> bool:
        deadline = time.monotonic() + within
        while len(self.closed) < len(self.opened) and time.monotonic() < deadline:
            time.sleep(0.1)
        return len(self.closed) == len(self.opened)

    def end(self) -> None:
        self.stop.set()
        self.thread.join(10)
        for sock in self.opened:
            sock.close()


HEAD = b"GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\n"
ATTACKS = {
    # (what each of the first TRICKLERS connections sends, what each of the next TRICKLERS sends)
    # a head past HEAD_BYTES, in lines under 8,190 bytes: before, it went to a thread, which waited
    # for each byte 30 s (4 such connections: 0 of 10 probes answered); and one under it
    "heads": (HEAD + b"".join(b"X-Pad-%d: %s\r\n" % (n, PAD) for n in range(5)) + b"X-Last: a",
              HEAD + b"X-Pad: " + PAD),
    # bodies that trickle, one too long to take at all and one that fits: before, the thread that
    # answered drained each for 5 s after the answer (16 such connections froze the first 20 s)
    "bodies": (HEAD + b"Content-Length: 1000000\r\n\r\nx", HEAD + b"Content-Length: 10000\r\n\r\nx"),
}


@pytest.mark.parametrize("attack", ATTACKS)
def test_trickling_requests_hold_no_thread_and_end_at_their_deadline(small_book, attack):
    """2 x 16 connections send a request by a byte every half second, and three probes come
    meanwhile: each probe is answered before any trickler's deadline (``WAIT``, from its opening),
    the first moment the server could drop one to free a thread for it.  The ones refused at once
    (a head past HEAD_BYTES: 431, a body past BODY_BYTES: 413) are answered so and ended (the
    server reads and drops the rest); the others are closed at their deadline, not before.
    Before: no probe answered within 4 s, heads or bodies (a head past HEAD_BYTES went to a thread
    that waited 30 s for each byte; a thread drained each trickling body for 5 s after its answer)."""
    too_long, fits = ATTACKS[attack]
    process, port = _serve(small_book, {"FUSEKI_REQUEST_WAIT": str(WAIT)})
    trickler = None
    try:
        assert _get(port, "/api/info", 60)[0] == 200  # a first request: the server is up
        trickler = Trickler(port, [too_long] * TRICKLERS + [fits] * TRICKLERS)
        first = min(trickler.opened.values())
        probes = []
        for _ in range(3):
            status, _body = _get(port, "/api/info", WAIT)
            probes.append((status, time.monotonic() - first))
            time.sleep(0.2)
        closed = trickler.all_closed(WAIT + 20)
        socks = list(trickler.opened)
        refused = [trickler.closed.get(sock) for sock in socks[:TRICKLERS]]
        held = [trickler.closed.get(sock) for sock in socks[TRICKLERS:]]
    finally:
        if trickler is not None:
            trickler.end()
        _stop(process)
    print(f"\n{attack}: probes (status, seconds after the first trickler) {probes}; "
          f"refused closed after {sorted(round(r[0], 1) for r in refused if r)}; "
          f"held closed after {sorted(round(h[0], 1) for h in held if h)}")
    assert all(status == 200 and at < WAIT for status, at in probes), probes
    assert closed, f"{len(trickler.opened) - len(trickler.closed)} trickling connections still open"
    code = b"431" if attack == "heads" else b"413"
    assert all(got.startswith(b"HTTP/1.1 " + code) for _, got in refused), refused
    assert all(after >= WAIT * 0.95 and got == b"" for after, got in held), held  # not before the deadline
