"""Load test of the book explorer's next-move queries, from this process against a server on loopback.

Each of ``--clients`` threads walks through the book: it asks ``/api/position`` for the
empty board, plays one of the next moves the answer lists (chosen at random), asks again,
and starts over after ``--depth`` moves or when the position has no next move.  After
``--duration`` seconds every client stops; the run is bounded (each request times out
after 10 s, the whole run after duration + 60 s) and reports requests, errors,
throughput and latency percentiles.

Examples::

    python bench/web_load.py --book fuseki.db                     # starts fuseki serve itself, 30 s
    python bench/web_load.py --url http://127.0.0.1:5000/ --clients 50 --duration 30

Only loopback addresses are accepted.  The last line of the output is JSON (for tests and
scripts); the exit code is 1 when any request failed.
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlencode, urlsplit

ROOT = Path(__file__).resolve().parents[1]
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
REQUEST_TIMEOUT = 10.0


class Client(threading.Thread):
    """One simulated user: random walks through the book until ``deadline``."""

    def __init__(self, host: str, port: int, deadline: float, depth: int, seed: int):
        super().__init__(daemon=True)
        self.host, self.port, self.deadline, self.depth = host, port, deadline, depth
        self.rng = random.Random(seed)
        self.latencies: list[float] = []
        self.errors: list[str] = []
        self.conn: http.client.HTTPConnection | None = None

    def get(self, path: str) -> dict | None:
        started = time.perf_counter()
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=REQUEST_TIMEOUT)
            self.conn.request("GET", path)
            response = self.conn.getresponse()
            body = response.read()
            if response.getheader("Connection", "").lower() == "close" or response.version < 11:
                self.conn.close()
                self.conn = None
        except (OSError, http.client.HTTPException) as exc:
            self.errors.append(f"{path}: {type(exc).__name__}: {exc}")
            if self.conn is not None:
                self.conn.close()
            self.conn = None
            return None
        self.latencies.append(time.perf_counter() - started)
        if response.status != 200:
            self.errors.append(f"{path}: HTTP {response.status}: {body[:200]!r}")
            return None
        return json.loads(body)

    def run(self) -> None:
        while time.monotonic() < self.deadline:
            moves: list[str] = []
            for _ in range(self.depth + 1):
                if time.monotonic() >= self.deadline:
                    break
                answer = self.get("/api/position?" + urlencode({"moves": ",".join(moves)}))
                if not answer or not answer.get("next"):
                    break
                move = self.rng.choice(answer["next"])
                moves.append(move["sgf"] or "pass")
        if self.conn is not None:
            self.conn.close()


def percentile(values: list[float], fraction: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def run_load(url: str, clients: int, duration: float, depth: int = 12, seed: int = 1) -> dict:
    """Run the load and return the figures (see the module docstring)."""
    parts = urlsplit(url)
    if parts.hostname not in LOOPBACK:
        raise SystemExit(f"web_load: only loopback servers ({', '.join(sorted(LOOPBACK))}), not {parts.hostname}")
    started = time.monotonic()
    deadline = started + duration
    threads = [Client(parts.hostname, parts.port or 80, deadline, depth, seed + i) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(max(0.0, deadline + REQUEST_TIMEOUT + 50 - time.monotonic()))
    elapsed = time.monotonic() - started
    latencies = [t for thread in threads for t in thread.latencies]
    errors = [e for thread in threads for e in thread.errors]
    return {
        "clients": clients, "duration_s": round(elapsed, 2), "requests": len(latencies) + len(errors),
        "errors": len(errors), "first_errors": errors[:5], "still_running": sum(t.is_alive() for t in threads),
        "throughput_rps": round(len(latencies) / elapsed, 1) if elapsed else 0.0,
        "p50_ms": round(1000 * percentile(latencies, 0.50), 1),
        "p99_ms": round(1000 * percentile(latencies, 0.99), 1),
        "max_ms": round(1000 * max(latencies, default=0.0), 1),
    }


def start_server(book: str) -> tuple[subprocess.Popen, str]:
    """``fuseki serve --book BOOK`` on a free loopback port; (process, base URL)."""
    process = subprocess.Popen([sys.executable, "-m", "fuseki", "serve", "--book", book,
                                "--host", "127.0.0.1", "--port", "0"],
                               cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = process.stdout.readline()
    if " at http://" not in line:
        process.kill()
        raise SystemExit(f"web_load: fuseki serve did not start: {line!r}")
    return process, line.rsplit(" at ", 1)[1].strip()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--url", help="a running server, e.g. http://127.0.0.1:5000/")
    where.add_argument("--book", help="start fuseki serve on this book for the run")
    p.add_argument("--clients", type=int, default=50)
    p.add_argument("--duration", type=float, default=30.0, help="seconds (default 30)")
    p.add_argument("--depth", type=int, default=12, help="moves per walk before starting over")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    server = None
    url = args.url
    if args.book:
        server, url = start_server(args.book)
    try:
        figures = run_load(url, args.clients, args.duration, args.depth, args.seed)
    finally:
        if server is not None:
            server.terminate()
            server.wait(10)
    print(f"{figures['clients']} clients, {figures['duration_s']} s: {figures['requests']} next-move queries, "
          f"{figures['errors']} errors, {figures['throughput_rps']} req/s, p50 {figures['p50_ms']} ms, "
          f"p99 {figures['p99_ms']} ms, max {figures['max_ms']} ms", file=sys.stderr)
    print(json.dumps(figures))
    return 1 if figures["errors"] or figures["still_running"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
