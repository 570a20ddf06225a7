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
from urllib.parse import quote

import pytest

from browsing import ENV, ROOT, stop_serve

WAIT = 4  # the servers' whole-request deadline here (FUSEKI_REQUEST_WAIT), in seconds
TRICKLERS = 16  # connections of each kind (the issue: 4 froze the server, 16 slow bodies)
PAD = b"a" * 8000  # a header line under gunicorn's 8,190 bytes


@pytest.fixture(scope="module")
def small_book(tmp_path_factory):
    """tests/webbook.py's five games, imported."""
    from webbook import build_book

    return build_book(tmp_path_factory.mktemp("attacks") / "book.sqlite")


def _serve(book, env: dict, workers: int = 2) -> tuple[subprocess.Popen, int]:
    """``fuseki serve --workers N`` of ``book`` with ``env``: (process, port); its log goes nowhere
    (a pipe nobody reads would fill)."""
    process = subprocess.Popen([sys.executable, "-m", "fuseki", "serve", "--book", str(book), "--port", "0",
                                "--workers", str(workers)], cwd=ROOT, env={**ENV, **env}, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    match = re.search(r"at http://127\.0\.0\.1:(\d+)/", process.stdout.readline())
    if not match:
        process.kill()
        pytest.fail("fuseki serve did not start")
    return process, int(match.group(1))


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


@pytest.mark.slow  # a load test: it waits out the connections' deadlines (docs/testing.md)
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
        stop_serve(process)
    print(f"\n{attack}: probes (status, seconds after the first trickler) {probes}; "
          f"refused closed after {sorted(round(r[0], 1) for r in refused if r)}; "
          f"held closed after {sorted(round(h[0], 1) for h in held if h)}")
    assert all(status == 200 and at < WAIT for status, at in probes), probes
    assert closed, f"{len(trickler.opened) - len(trickler.closed)} trickling connections still open"
    code = b"431" if attack == "heads" else b"413"
    assert all(got.startswith(b"HTTP/1.1 " + code) for _, got in refused), refused
    assert all(after >= WAIT * 0.95 and got == b"" for after, got in held), held  # not before the deadline


# --- many clients repeating the worst scan ---------------------------------------------------------

# The worst request of issue 40 (tests/test_web_budget.py): 8 within= searches, each a small anywhere
# pattern with colours swapped (a scan of every game with hundreds of placements each): 7 s alone on
# the Tygem month, here with a budget of 60 s so that it runs to its end
WORST = "/api/position?moves=pd&" + "&".join(
    "within=" + quote(f"size=19&moves={moves}&region=H12:M8&swap=1", safe="")
    for moves in ("jj,kk", "jj,kj", "jj,jk", "jk,kj", "jj,kk,kj", "jj", "kk,jj,jk", "jk,kk"))
CLIENTS = 8


@pytest.mark.slow
def test_another_visitor_is_answered_while_eight_clients_repeat_the_worst_scan(month_book):
    """A real ``fuseki serve`` of the Tygem month, one process of 2 threads (with two processes the
    8 may land unevenly and leave a visitor a free thread; that the slot is one for all processes
    is the test below): 8 clients send the worst request again and again; meanwhile three other
    visitors ask a position each.  Each visitor is answered before the first request that scanned
    is: the position does not wait for a scan (its own time, milliseconds, against a scan's
    seconds: an order, not a figure).  The scans run one at a time (admission.SCANS), the other
    requests answered 503 "server busy".  Before: the 8 took every thread, and a visitor waited
    for them (the issue: a median 5.4-9.7 s with 2 processes)."""
    process, port = _serve(month_book, {"FUSEKI_SCAN_SECONDS": "60"}, workers=1)
    answers: list[tuple[float, int | None, bytes]] = []  # (when, status, body) of the worst requests
    stop = threading.Event()
    sent = threading.Semaphore(0)

    def client() -> None:
        while not stop.is_set():
            sent.release()
            status, body = _get(port, WORST, 120)
            answers.append((time.monotonic(), status, body))

    clients = [threading.Thread(target=client, daemon=True) for _ in range(CLIENTS)]
    try:
        alone = time.monotonic()
        assert _get(port, "/api/position?moves=cc", 60)[0] == 200
        alone = time.monotonic() - alone
        for thread in clients:
            thread.start()
        for _ in range(CLIENTS):
            assert sent.acquire(timeout=60)
        time.sleep(1)  # the 8 are taken by the server's threads (before: every one of them)
        visitors = []
        for moves in ("dd", "dp", "pp"):
            started = time.monotonic()
            status, _body = _get(port, f"/api/position?moves={moves}", 120)
            visitors.append((status, time.monotonic() - started, time.monotonic()))
            if any(status != 503 for _, status, _ in answers):  # a scan ended first: no need to wait on
                break
    finally:
        stop.set()
        stop_serve(process)
        for thread in clients:
            thread.join(30)
    busy = [answer for answer in answers if answer[1] == 503 and b'"busy":true' in answer[2].replace(b" ", b"")]
    scanned = [answer for answer in answers if answer not in busy and answer[1] is not None]
    print(f"\nposition alone {alone:.3f} s; the visitors' (status, seconds): "
          f"{[(status, round(took, 3)) for status, took, _ in visitors]}; {len(busy)} answered busy, "
          f"{len(scanned)} scanned")
    first_scan = min((when for when, _, _ in scanned), default=float("inf"))
    assert all(status == 200 and done < first_scan for status, _, done in visitors), (visitors, first_scan)
    assert busy, "no request was answered busy"


TAKE = """
import sys
from fuseki.book.ui.web.admission import Slots
print(Slots(scans=1, wait=0, fd=int(sys.argv[1])).take() is not None)
"""


def test_the_scan_slot_is_one_for_every_process_and_thread():
    """The slot taken here (a byte of a file without a name, locked with fcntl) cannot be taken by
    another thread of this process nor by another process that shares the file (a worker, forked
    after the master opened it), until it is given back or its holder ends; a process's own cap
    (``waiting``) answers at once."""
    from fuseki.book.ui.web.admission import Slots

    slots = Slots(scans=1, waiting=2, wait=0)

    def other_process() -> bool:
        run = subprocess.run([sys.executable, "-c", TAKE, str(slots.fd)], cwd=ROOT, env=ENV, pass_fds=[slots.fd],
                             capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stderr[-2000:]
        return run.stdout.strip() == "True"

    held = slots.take()
    assert held is not None
    got = []
    thread = threading.Thread(target=lambda: got.append(slots.take()))
    thread.start()
    thread.join(30)
    assert got == [None]  # another thread of this process: the slot is taken (waits 0 s)
    assert not other_process()
    slots.give_back(held)
    assert other_process()  # and its lock went with its process
    capped = Slots(scans=1, waiting=1, wait=60)
    first = capped.take()
    started = time.monotonic()
    assert capped.take() is None and time.monotonic() - started < 30  # over the cap: at once, not in 60 s
    capped.give_back(first)


def test_a_request_that_finds_the_slot_taken_is_503_busy_and_the_slot_comes_back(small_book, monkeypatch):
    """/api/pattern and a within= pattern search wait for the slot (here 0 s) and are answered 503
    ``busy``; a position, with no scan, is answered; once the slot is free the same requests are
    answered, one after the other (each gave the slot back)."""
    from fuseki.book.ui.web import admission
    from fuseki.book.ui.web.app import create_app

    slots = admission.Slots(scans=1, wait=0)
    monkeypatch.setattr(admission, "_slots", slots)
    app = create_app(book_url=str(small_book))
    pattern, within = "/api/pattern?moves=pd&region=N19:T13", "/api/position?within=moves%3Dpd%26region%3DN19%3AT13"
    try:
        client = app.test_client()
        held = slots.take()
        for path in (pattern, within, "/api/within?within=moves%3Dpd%26region%3DN19%3AT13"):
            answer = client.get(path)
            assert answer.status_code == 503 and answer.get_json()["busy"] is True, (path, answer.data[:200])
            assert answer.get_json()["error"].startswith("server busy") and answer.headers["Retry-After"]
        assert client.get("/api/position?moves=pd").status_code == 200
        slots.give_back(held)
        for path in (pattern, pattern.replace("pd", "dp"), within):
            assert client.get(path).status_code == 200, path
        again = slots.take()
        assert again is not None  # given back by each
        slots.give_back(again)
    finally:
        app.extensions["fuseki_book"].close()
