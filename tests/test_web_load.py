"""The explorer's server under malformed input and under load, on a 500-game Tygem book.

- Every GET route of the application (read from its URL map, so new endpoints are
  covered without editing this file) gets every query parameter with malformed values
  (a seeded sample of: huge, negative, non-ASCII digits, NUL, invalid UTF-8 escapes,
  100 KB, SQL, repeated parameters) and odd path values: never a 500, and every /api error
  is JSON with a message.  (The web tests' property test draws random requests; this one
  is exhaustive over the routes.)
- A real ``fuseki serve`` on 127.0.0.1 gets broken HTTP over raw sockets (junk request
  lines, 64 KB headers, bad percent escapes, a half-sent request) and still answers.
- ``bench/web_load.py`` runs 50 clients for 5 s from a second process against it: no
  errors, and it reports throughput and p99 latency (the 30 s run is the bench's default).
- ``fuseki serve --workers 3`` answers from three processes, and Ctrl-C, SIGTERM or a SIGKILL
  of the master process leaves none of them behind.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import time

import pytest

from fuseki.book.analysis.pipeline.importer import import_paths
from fuseki.book.storage.store import Book

from browsing import ENV, start_serve
from conftest import ROOT, write_archive

pytestmark = pytest.mark.slow  # a 500-game book from the real archive, a server, a load run
PARAMS = ["moves", "size", "year_from", "year_to", "player", "page", "page_size", "at", "move", "sym",
          "name", "vs", "q", "x"]  # name, vs, q: the player page's (/api/player, /api/players)
MALFORMED = ["", " ", "-1", "0", "1" * 30, "-" + "9" * 30, "1e9", "1.5", "nan", "inf", "0x10", "\u0661\u0669",
             "\uff11\uff19", "%00", "\x00", "%ff%fe", "\ud7ff", "pd,,,dp", "pass," * 801, "zz,zz", "Q16,Q16",
             "a" * 100_000, "' OR 1=1 --", "%", "[]", "{}"]
PATH_VALUES = ["1", "0", "9" * 30, "-1", "%00", "x"]
PER_PARAMETER = 3  # malformed values tried per route and parameter (seeded sample of MALFORMED)


@pytest.fixture(scope="module")
def web_book(tmp_path_factory, tygem_games):
    folder = tmp_path_factory.mktemp("web")
    path = str(folder / "book.sqlite")
    with Book.open(path) as book:
        import_paths(book, [str(write_archive(folder / "games.tgz", tygem_games[:500]))], workers=0)
    return path


@pytest.fixture(scope="module")
def server(web_book, tmp_path_factory):
    """``fuseki serve`` on a free loopback port: (process, host, port).

    Its request log goes to a file: a pipe nobody reads fills up and blocks the server.
    """
    log = tmp_path_factory.mktemp("serve") / "stderr.txt"
    with open(log, "wb") as stderr:
        process = subprocess.Popen([sys.executable, "-m", "fuseki", "serve", "--book", web_book, "--port", "0"],
                                   cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=stderr, text=True)
    line = process.stdout.readline()
    match = re.search(r"at http://127\.0\.0\.1:(\d+)/", line)
    if not match:
        process.kill()
        pytest.fail(f"fuseki serve did not start: {line!r} {log.read_text(errors='replace')[-2000:]}")
    yield process, "127.0.0.1", int(match.group(1))
    process.terminate()
    process.wait(10)
    assert "Traceback" not in log.read_text(errors="replace"), log.read_text(errors="replace")[-3000:]


def routes(app) -> list[str]:
    """Every GET route with its converters filled with PATH_VALUES (static files left out)."""
    paths = []
    for rule in app.url_map.iter_rules():
        if "GET" not in rule.methods or rule.endpoint in ("static", "static_file"):
            continue
        if not rule.arguments:
            paths.append(rule.rule)
            continue
        for value in PATH_VALUES:
            paths.append(re.sub(r"<[^>]+>", value, rule.rule))
    return paths


def test_every_route_answers_malformed_parameters_without_a_500(web_book):
    from fuseki.book.ui.web.app import create_app

    app = create_app(book_url=web_book)
    client = app.test_client()
    paths = routes(app)
    assert any("/api/position" in p for p in paths) and any("/api/game/" in p for p in paths), paths
    checked = 0
    rng = random.Random(5)
    for path in paths:
        for name in PARAMS:
            for value in rng.sample(MALFORMED, PER_PARAMETER):
                response = client.get(path, query_string={name: value})
                checked += 1
                assert response.status_code < 500, (path, name, value[:50], response.data[:300])
                if response.status_code >= 400 and path.startswith("/api/"):
                    assert response.is_json and response.get_json().get("error"), (path, name, value[:50])
        response = client.get(path + "?" + "&".join(f"{n}=1&{n}=-1&{n}[]=x" for n in PARAMS))
        assert response.status_code < 500, path
    print(f"\nweb fuzz: {checked} malformed requests over {len(paths)} paths, no 500")


def raw_request(host: str, port: int, data: bytes, read: bool = True) -> bytes:
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(data)
        if not read:
            return b""
        sock.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
        return b"".join(chunks)


def test_broken_http_over_loopback_leaves_the_server_answering(server):
    _, host, port = server
    garbage = [
        b"\x00\xff\xfe junk\r\n\r\n",
        b"GET\r\n\r\n",
        b"GET / HTTP/9.9\r\n\r\n",
        b"GET /api/position?moves=%zz%%%G1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        b"GET /api/position?moves=" + b"pd," * 20000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        b"GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 65536 + b"\r\n\r\n",
        b"GET /api/info HTTP/1.1\r\nHost: evil.example\r\n\r\n",
        b"GET /../../etc/passwd HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        b"GET /static/../../../../etc/passwd HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        b"POST /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nhello",
        b"GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -1\r\n\r\n",
    ]
    for data in garbage:
        answer = raw_request(host, port, data)
        assert b"root:" not in answer
        status = re.match(rb"HTTP/1\.[01] (\d{3})", answer)
        assert status is None or int(status.group(1)) < 500, (data[:80], answer[:300])
    raw_request(host, port, b"GET /api/info HTTP/1.1\r\nHost: 127", read=False)  # half a request, then gone
    answer = raw_request(host, port, b"GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 200") and b'"games":500' in answer.replace(b" ", b""), answer[:300]


def test_fifty_clients_for_five_seconds_without_an_error(server):
    process, host, port = server
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "web_load.py"), "--url", f"http://{host}:{port}/",
                          "--clients", "50", "--duration", "5", "--least", "2"],
                         cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=120)
    figures = json.loads(run.stdout.strip().splitlines()[-1])
    print(f"\nweb load: {run.stderr.strip()}")
    assert run.returncode == 0 and figures["errors"] == 0, figures
    assert figures["still_running"] == 0
    assert figures["requests"] >= 100 and figures["p99_ms"] > 0  # each of the 50 clients asks at least twice
    assert process.poll() is None


def children(pid: int) -> set[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.add(int(entry))
    return found


def alive(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def gone(pids: set[int], within: float) -> bool:
    """Every one of ``pids`` has ended within ``within`` seconds."""
    deadline = time.monotonic() + within
    while any(alive(pid) for pid in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


@pytest.mark.parametrize("stop", ["SIGINT to the group (Ctrl-C)", "SIGTERM", "SIGKILL of the master"])
def test_the_server_processes_answer_and_stop_without_leaving_one_behind(web_book, stop):
    process, port = start_serve(web_book, "--workers", "3")
    try:
        workers = set()
        deadline = time.monotonic() + 30
        while len(workers) < 3 and time.monotonic() < deadline:
            workers = children(process.pid)
            time.sleep(0.1)
        assert len(workers) == 3, f"{len(workers)} worker processes, not 3"
        for _ in range(12):  # on fresh connections, so that the answers come from the workers in turn
            answer = raw_request("127.0.0.1", port, b"GET /api/position?moves=pd HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                                    b"Connection: close\r\n\r\n")
            assert answer.startswith(b"HTTP/1.1 200"), answer[:300]
        if stop.startswith("SIGINT"):
            os.killpg(process.pid, signal.SIGINT)
        else:
            process.send_signal(signal.SIGTERM if stop == "SIGTERM" else signal.SIGKILL)
        code = process.wait(15)
        err = process.stderr.read()
        assert gone(workers, 10), f"worker processes left after {stop}: {[p for p in workers if alive(p)]}"
        if stop != "SIGKILL of the master":
            assert code == 0 and "Traceback" not in err, (code, err[-3000:])
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
