"""Load test of the book explorer, from this process against a server on loopback.

Each of ``--clients`` threads walks through the book as a visitor does: it asks
``/api/position`` for the empty board, plays one of the next moves the answer lists
(chosen at random), asks again, and starts over after ``--depth`` moves or when the
position has no next move.  At a ``--browse`` share of the positions it also lists the
games (``/api/games``) and opens one of them (``/api/game/<id>``); at a ``--players`` share of
those it also opens the page of one of that game's players (``/api/player``; half of them with
``vs=`` the other player; a fifth of those with more games than a page ask the second page too);
at a ``--practice`` share of them it practises too: a guess-the-move question on that game and
one guess (``/api/practice/guess``, a random empty point), and a joseki quiz line and one answer
(``/api/practice/joseki``, a random empty point of the quiz's corner).  After ``--duration``
seconds every client stops; the run is bounded (each request times out after 10 s, the
whole run after duration + 60 s) and reports requests, errors, throughput and latency
percentiles, in all and per endpoint.  ``--downloaders`` more threads meanwhile fetch the
SGF of the newest 1,000 games of a random opening move (``/api/games.sgf``) again and again:
slow requests, which under one lock held every other visitor up.

``--slowloris N`` runs the load again with N more connections open that have each sent one
byte of a request and wait (the slowloris attack), then a third time without them (the same
walks, on caches as warm as the second run's): it prints the other clients' p99 with and
without them (``fuseki serve`` gathers a request's head without a thread:
book/ui/web/server.py).  It raises this process's open-file limit to its hard limit for them.

``--think`` makes each client pause after each answer (exponential, that mean), as a person
reading the board does; without it (the default) every client asks again at once, which
measures the server at saturation, where the load generator's own threads take their share
of the same cores.

The baseline printed next to them is a walk by one client alone for
``--baseline`` seconds before the load: what a visitor waits with nobody else there.
The target (the issue "The book at 1.5 million games") is 50 clients, no error, p99 at
most 100 ms.

Examples::

    python3 bench/web_load.py --book fuseki.db                     # starts fuseki serve itself, 30 s
    python3 bench/web_load.py --url http://127.0.0.1:5000/ --clients 50 --duration 30
    python3 bench/web_load.py --book fuseki.db --players 0 --practice 0   # the mix before player pages and practice
    python3 bench/web_load.py --book fuseki.db --clients 10 --duration 10 --slowloris 1000

Only loopback addresses are accepted.  The last line of the output is JSON (for tests and
scripts); the exit code is 1 when any request failed.
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import resource
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlencode, urlsplit

ROOT = Path(__file__).resolve().parents[1]
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
REQUEST_TIMEOUT = 10.0
START_TIMEOUT = 300  # seconds for fuseki serve to say its address (its workers warm up first)


class Client(threading.Thread):
    """One simulated user: random walks through the book until ``deadline`` (or until ``until`` is
    set, when given), and at least ``least`` requests whatever the clock says: a test asks for a
    number of requests, never for what a busy machine manages in a time."""

    def __init__(self, host: str, port: int, deadline: float, depth: int, seed: int, browse: float = 0.0,
                 think: float = 0.0, least: int = 0, until: threading.Event | None = None, players: float = 0.0,
                 practice: float = 0.0):
        super().__init__(daemon=True)
        self.host, self.port, self.deadline, self.depth = host, port, deadline, depth
        self.browse, self.think, self.players, self.practice = browse, think, players, practice
        self.least, self.until, self.asked = least, until, 0
        self.rng = random.Random(seed)
        self.pauses = random.Random(-seed)  # its own: the walks are the same with or without pauses
        self.latencies: dict[str, list[float]] = {}  # endpoint -> seconds
        self.errors: list[str] = []
        self.conn: http.client.HTTPConnection | None = None

    def more(self) -> bool:
        """Whether to make another request."""
        if self.asked < self.least:
            return True
        return not self.until.is_set() if self.until is not None else time.monotonic() < self.deadline

    def get(self, path: str, endpoint: str) -> dict | None:
        started = time.perf_counter()
        self.asked += 1
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
        self.latencies.setdefault(endpoint, []).append(time.perf_counter() - started)
        if self.think:  # a person looks at the answer before the next click
            time.sleep(min(self.pauses.expovariate(1 / self.think), max(0.0, self.deadline - time.monotonic())))
        if response.status != 200:
            self.errors.append(f"{path}: HTTP {response.status}: {body[:200]!r}")
            return None
        return json.loads(body)

    def run(self) -> None:
        while self.more():
            moves: list[str] = []
            for _ in range(self.depth + 1):
                if not self.more():
                    break
                query = urlencode({"moves": ",".join(moves)})
                answer = self.get("/api/position?" + query, "position")
                if answer and moves and self.rng.random() < self.browse:
                    self.open_a_game(query)
                if not answer or not answer.get("next"):
                    break
                move = self.rng.choice(answer["next"])
                moves.append(move["sgf"] or "pass")
        if self.conn is not None:
            self.conn.close()

    def open_a_game(self, query: str) -> None:
        listed = self.get("/api/games?" + query, "games")
        if listed and listed["rows"]:
            row = self.rng.choice(listed["rows"])
            self.get(f"/api/game/{row['id']}?{query}&at={row['move_number']}", "game")
            if self.players and row["black"] and row["white"] and self.rng.random() < self.players:
                self.open_a_player(row)
            if self.practice and self.rng.random() < self.practice:
                self.practise(row)

    def empty_point(self, position: dict, xs: range, ys: range) -> str | None:
        taken = set(position["stones"]["B"]) | set(position["stones"]["W"])
        free = [f"{LETTERS[x]}{LETTERS[y]}" for x in xs for y in ys if f"{LETTERS[x]}{LETTERS[y]}" not in taken]
        return self.rng.choice(free) if free else None

    def practise(self, row: dict) -> None:
        """Guess one move of the game, then answer one joseki quiz question."""
        asked = {"game": row["id"], "move": row["move_number"]}
        question = self.get("/api/practice/guess?" + urlencode(asked), "practice guess")
        if question and question.get("move") is not None:
            size = question["position"]["size"]
            point = self.empty_point(question["position"], range(size), range(size))
            if point:
                self.get("/api/practice/guess?" + urlencode({**asked, "move": question["move"], "point": point}),
                         "practice guess")
        quiz = self.get("/api/practice/joseki?" + urlencode({"min_games": 10, "seed": self.rng.randrange(1 << 30)}),
                        "practice joseki")
        if quiz:
            size, corner, width = quiz["size"], quiz["corner"], quiz["size"] // 2
            xs = range(size - width, size) if corner & 1 else range(width)
            ys = range(size - width, size) if corner & 2 else range(width)
            point = self.empty_point(quiz["position"], xs, ys)
            if point:
                line = ",".join(move["sgf"] for move in quiz["line"])
                self.get("/api/practice/joseki?" + urlencode({"line": line, "corner": corner, "point": point,
                                                             "min_games": 10, "seed": 1}), "practice joseki")

    def open_a_player(self, row: dict) -> None:
        """The page of one of the game's players, half the time against the other one, and a
        fifth of the time its next page of games too."""
        name, other = (row["black"], row["white"]) if self.rng.random() < 0.5 else (row["white"], row["black"])
        asked = {"name": name, **({"vs": other} if self.rng.random() < 0.5 else {})}
        answer = self.get("/api/player?" + urlencode(asked), "player")
        if answer and answer["games"]["pages"] > 1 and self.rng.random() < 0.2:
            self.get("/api/player?" + urlencode({**asked, "page": 2}), "player")


class Downloader(Client):
    """A visitor downloading the games of openings, one slow request after another."""

    def run(self) -> None:
        while self.more():
            move = self.rng.choice(["pd", "dd", "qd", "dc", "pp"])
            self.get_sgf(f"/api/games.sgf?moves={move}")
        if self.conn is not None:
            self.conn.close()

    def get_sgf(self, path: str) -> None:
        started = time.perf_counter()
        self.asked += 1
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=REQUEST_TIMEOUT)
            self.conn.request("GET", path)
            response = self.conn.getresponse()
            response.read()
        except (OSError, http.client.HTTPException) as exc:
            self.errors.append(f"{path}: {type(exc).__name__}: {exc}")
            if self.conn is not None:
                self.conn.close()
            self.conn = None
            return
        self.latencies.setdefault("games.sgf", []).append(time.perf_counter() - started)
        if response.status != 200:
            self.errors.append(f"{path}: HTTP {response.status}")


LETTERS = "abcdefghijklmnopqrstuvwxy"  # SGF coordinates


def percentile(values: list[float], fraction: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def latency_figures(latencies: list[float]) -> dict:
    """Requests, p50, p99 and max (ms) of one set of latencies."""
    return {"requests": len(latencies),
            "p50_ms": round(1000 * percentile(latencies, 0.50), 1),
            "p99_ms": round(1000 * percentile(latencies, 0.99), 1),
            "max_ms": round(1000 * max(latencies, default=0.0), 1)}


def run_load(url: str, clients: int, duration: float, depth: int = 12, seed: int = 1,
             browse: float = 0.0, downloaders: int = 0, think: float = 0.0, least: int = 0,
             until: threading.Event | None = None, players: float = 0.0, practice: float = 0.0) -> dict:
    """Run the load and return the figures (see the module docstring); ``endpoints``: per endpoint.

    ``least``: requests each client makes at least, past the duration if need be; ``until``: an
    event that ends the load instead of the duration (a test's: "while the import runs")."""
    parts = urlsplit(url)
    if parts.hostname not in LOOPBACK:
        raise SystemExit(f"web_load: only loopback servers ({', '.join(sorted(LOOPBACK))}), not {parts.hostname}")
    started = time.monotonic()
    deadline = started + duration
    threads = [Client(parts.hostname, parts.port or 80, deadline, depth, seed + i, browse, think, least, until,
                      players, practice) for i in range(clients)]
    threads += [Downloader(parts.hostname, parts.port or 80, deadline, depth, seed - 1 - i, least=least, until=until)
                for i in range(downloaders)]
    for thread in threads:
        thread.start()
    if until is not None:
        until.wait()
    for thread in threads:  # a client that makes its ``least`` requests past the deadline is not stuck
        thread.join(max(0.0, deadline + REQUEST_TIMEOUT + 50 - time.monotonic()) + least * REQUEST_TIMEOUT)
    elapsed = time.monotonic() - started
    endpoints = sorted({name for thread in threads for name in thread.latencies})
    per_endpoint = {name: [t for thread in threads for t in thread.latencies.get(name, ())] for name in endpoints}
    latencies = [t for times in per_endpoint.values() for t in times]
    errors = [e for thread in threads for e in thread.errors]
    return {
        "clients": clients, "downloaders": downloaders, "think_s": think, "duration_s": round(elapsed, 2),
        "requests": len(latencies) + len(errors),
        "errors": len(errors), "first_errors": errors[:5], "still_running": sum(t.is_alive() for t in threads),
        "throughput_rps": round(len(latencies) / elapsed, 1) if elapsed else 0.0,
        "p50_ms": round(1000 * percentile(latencies, 0.50), 1),
        "p99_ms": round(1000 * percentile(latencies, 0.99), 1),
        "max_ms": round(1000 * max(latencies, default=0.0), 1),
        "endpoints": {name: latency_figures(times) for name, times in per_endpoint.items()},
    }


def idle_connections(url: str, count: int) -> list[socket.socket]:
    """``count`` connections to ``url`` that have each sent one byte of a request, and wait."""
    need = count + 256
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (need if hard == resource.RLIM_INFINITY else min(need, hard), hard))
    parts = urlsplit(url)
    sockets = []
    try:
        for _ in range(count):
            sock = socket.create_connection((parts.hostname, parts.port or 80), timeout=REQUEST_TIMEOUT)
            sock.sendall(b"G")
            sockets.append(sock)
    except OSError as exc:
        for sock in sockets:
            sock.close()
        raise SystemExit(f"web_load: {len(sockets)} idle connections opened, then: {exc}") from None
    return sockets


def start_server(book: str) -> tuple[subprocess.Popen, str]:
    """``fuseki serve --book BOOK`` on a free loopback port; (process, base URL)."""
    process = subprocess.Popen([sys.executable, "-m", "fuseki", "serve", "--book", book,
                                "--host", "127.0.0.1", "--port", "0"],
                               cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    lines: list[str] = []  # read on a thread: a server that never says its address must not block the caller
    reader = threading.Thread(target=lambda: lines.append(process.stdout.readline()), daemon=True)
    reader.start()
    reader.join(START_TIMEOUT)
    line = lines[0] if lines else ""
    if " at http://" not in line:
        process.kill()
        process.wait()
        raise SystemExit(f"web_load: fuseki serve did not say its address in {START_TIMEOUT} s: {line!r}")
    return process, line.rsplit(" at ", 1)[1].strip()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--url", help="a running server, e.g. http://127.0.0.1:5000/")
    where.add_argument("--book", help="start fuseki serve on this book for the run")
    p.add_argument("--clients", type=int, default=50)
    p.add_argument("--duration", type=float, default=30.0, help="seconds (default 30)")
    p.add_argument("--least", type=int, default=0,
                   help="requests each client makes at least, past the duration if need be (tests)")
    p.add_argument("--depth", type=int, default=12, help="moves per walk before starting over")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--browse", type=float, default=0.25,
                   help="share of the positions whose games a client lists and opens one (default 0.25)")
    p.add_argument("--players", type=float, default=0.5,
                   help="share of the games opened whose player's page a client opens too (default 0.5; "
                        "0: none, the mix before the player page)")
    p.add_argument("--practice", type=float, default=0.1,
                   help="share of the games opened that a client practises on: a guess and a joseki quiz answer "
                        "(default 0.1; 0: none)")
    p.add_argument("--downloaders", type=int, default=0,
                   help="more clients downloading 1,000 games' SGF at a time (default 0)")
    p.add_argument("--think", type=float, default=0.0,
                   help="mean seconds a client pauses after each answer, as a person reading the board "
                        "(exponential; default 0: the next request at once, the server's saturation)")
    p.add_argument("--slowloris", type=int, default=0, metavar="N",
                   help="run the load again with N more connections that sent one byte and wait; print both p99s")
    p.add_argument("--baseline", type=float, default=5.0,
                   help="seconds of one client alone before the load (default 5; 0: none)")
    args = p.parse_args(argv)
    server = None
    url = args.url
    if args.book:
        server, url = start_server(args.book)
    try:
        # the lone client walks other lines than the load's clients: its answers are not kept for them
        alone = run_load(url, 1, args.baseline, args.depth, args.seed + 10_000, args.browse,
                         players=args.players, practice=args.practice) if args.baseline else None
        figures = run_load(url, args.clients, args.duration, args.depth, args.seed, args.browse, args.downloaders,
                           args.think, args.least, players=args.players, practice=args.practice)
        if args.slowloris:
            idle = idle_connections(url, args.slowloris)
            try:
                beset = run_load(url, args.clients, args.duration, args.depth, args.seed, args.browse,
                                 args.downloaders, args.think, args.least, players=args.players,
                                 practice=args.practice)
            finally:
                for sock in idle:
                    sock.close()
            # the same walks again without them: the beset run met the caches the first run filled
            quiet = run_load(url, args.clients, args.duration, args.depth, args.seed, args.browse,
                             args.downloaders, args.think, args.least, players=args.players, practice=args.practice)
            figures["slowloris"] = {"connections": args.slowloris, "p99_ms": beset["p99_ms"],
                                    "p50_ms": beset["p50_ms"], "errors": beset["errors"],
                                    "requests": beset["requests"], "quiet_p99_ms": quiet["p99_ms"],
                                    "quiet_p50_ms": quiet["p50_ms"], "quiet_requests": quiet["requests"]}
    finally:
        if server is not None:
            server.terminate()
            server.wait(10)
    figures["baseline"] = alone
    pausing = f" pausing {args.think} s on average" if args.think else ""
    print(f"{figures['clients']} clients{pausing} and {figures['downloaders']} downloaders, "
          f"{figures['duration_s']} s: "
          f"{figures['requests']} requests, "
          f"{figures['errors']} errors, {figures['throughput_rps']} req/s, p50 {figures['p50_ms']} ms, "
          f"p99 {figures['p99_ms']} ms, max {figures['max_ms']} ms (target: 0 errors, p99 <= 100 ms)",
          file=sys.stderr)
    for name, load in figures["endpoints"].items():
        one = (alone or {}).get("endpoints", {}).get(name)
        beside = f"; 1 client alone: p50 {one['p50_ms']} ms, p99 {one['p99_ms']} ms ({one['requests']})" if one else ""
        print(f"  {name:9} {load['requests']:6} requests, p50 {load['p50_ms']} ms, p99 {load['p99_ms']} ms, "
              f"max {load['max_ms']} ms{beside}", file=sys.stderr)
    beset = figures.get("slowloris")
    if beset:
        print(f"with {beset['connections']} idle one-byte connections: {beset['requests']} requests, "
              f"{beset['errors']} errors, p50 {beset['p50_ms']} ms, p99 {beset['p99_ms']} ms "
              f"(the same walks again without them: {beset['quiet_requests']} requests, p50 "
              f"{beset['quiet_p50_ms']} ms, p99 {beset['quiet_p99_ms']} ms; target: p99 within 2x)", file=sys.stderr)
    print(json.dumps(figures))
    failed = figures["errors"] or figures["still_running"] or (alone and alone["errors"])
    return 1 if failed or (beset or {}).get("errors") else 0

if __name__ == "__main__":
    raise SystemExit(main())
