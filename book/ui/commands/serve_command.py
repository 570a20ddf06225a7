"""fuseki serve: explore the book in a web browser (read-only, on this machine only by default).

Example: fuseki serve --book games.sqlite --port 8000, then open http://127.0.0.1:8000/

The page puts KataGo's stored values beside the next moves wherever they exist (the book's
own, the built-in book's, the AI value cache file's; docs/katago.md), without a KataGo.  With
--ai, what is not stored is asked of KataGo in the background while the page waits for it.
"""

from __future__ import annotations

from fuseki.book.ui.cli_shared import add_book_option, book_location, open_book
from fuseki.book.ui.present import ai_text
from fuseki.engine.config import ai_cache_path


def add_command(subparsers) -> None:
    p = subparsers.add_parser("serve", help="explore the book in a web browser (read-only)",
                              description=__doc__.strip())
    add_book_option(p)
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=5000, help="port (default 5000; 0 picks a free one)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="server processes (default: one per core; one with --ai, each runs its own KataGo)")
    p.add_argument("--threads", type=int, default=None, metavar="N",
                   help="threads per server process (default 2)")
    p.add_argument("--trust-proxy", action="store_true",
                   help="behind a reverse proxy on this machine: KataGo's budget per visitor (--ai) is "
                        "keyed on the last address of X-Forwarded-For, the one the proxy appended "
                        "(without it the header is ignored: docs/limits.md)")
    ai_text.add_ai_options(p)
    p.set_defaults(run=run_serve)


def run_serve(args) -> int:
    from fuseki.book.ui.cli_shared import CommandError
    from fuseki.book.ui.web.hosts import LOOPBACK_NAMES
    from fuseki.book.ui.web.server import THREADS, BookServer, default_workers

    workers = (1 if args.ai else default_workers()) if args.workers is None else args.workers
    threads = THREADS if args.threads is None else args.threads
    if workers < 1 or threads < 1:
        raise CommandError("--workers and --threads must be at least 1")
    url = book_location(args)
    book = open_book(url, readonly=True)  # a missing or broken book: one line, before anything is made
    try:
        _check_address(args.host, args.port)
        if book.statistics is None:
            _update_pattern_index(url)
        games = book.stats().games
    finally:
        book.close()  # each server process opens its own (a connection must not cross a fork)
    host = f"[{args.host}]" if ":" in args.host else args.host

    ai = _ai_options(args)

    def announce(port: int) -> None:
        print(f"fuseki serve: book {url} ({games} games) at http://{host}:{port}/", flush=True)

    trusted = LOOPBACK_NAMES if args.host in LOOPBACK_NAMES else None
    BookServer(url, args.host, args.port, workers, threads, trusted, announce, ai, args.trust_proxy).run()
    return 0


def _ai_options(args):
    """``--ai``'s settings, KataGo found as ``fuseki search --ai`` finds it; without ``--ai`` the
    stored values only (``AiOptions.ask`` False: no KataGo looked for, none started, the cache
    file read when it exists).  No KataGo found is no error: the page says so and shows the
    values already cached."""
    import sys

    from fuseki.book.analysis.katago import find_command
    from fuseki.book.ui.cli_shared import CommandError
    from fuseki.book.ui.web.ai_service import AiOptions
    from fuseki.engine import config

    visits = ai_text.DEFAULT_VISITS if args.visits is None else args.visits  # the worker asks at these
    if visits < 1 or args.komi * 2 != int(args.komi * 2):
        raise CommandError("--visits must be at least 1 and --komi a whole or half number")
    if not args.ai:
        return AiOptions(command=None, rules=args.rules, komi=args.komi, visits=visits, cache=ai_cache_path(),
                         ask=False)
    command = args.katago or find_command(config.load().katago)
    print(f"fuseki serve: KataGo {command or 'not found (docs/katago.md)'}; values cached in "
          f"{ai_cache_path()}", file=sys.stderr, flush=True)
    return AiOptions(command=command, rules=args.rules, komi=args.komi, visits=visits,
                     cache=ai_cache_path(), minimum=args.visits is not None)


def _check_address(host: str, port: int) -> None:
    """One line now if the address cannot be listened on (gunicorn would retry it five times,
    logging each, and end without saying what to do)."""
    import errno
    import socket

    from fuseki.book.ui.cli_shared import CommandError

    if port == 0:
        return
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        with socket.socket(infos[0][0], socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds
            probe.bind(infos[0][4])
    except OSError as exc:
        hint = (" (another server there? --port picks another, --port 0 a free one)"
                if exc.errno == errno.EADDRINUSE else "")
        raise CommandError(f"cannot listen on {host} port {port}: {exc.strerror or exc}{hint}") from None


def _update_pattern_index(url: str) -> None:
    """Bring the pattern index and the corner book up to date where the book can be written
    (the page's pattern search and corners view read them; a read-only book without them
    answers with a message)."""
    import sys

    from fuseki.book.analysis.patterns import corner_build
    from fuseki.book.storage.connect import BookError
    from fuseki.book.storage.store import Book

    try:
        book = Book.open(url)
    except (BookError, OSError):
        return
    try:
        if getattr(book, "statistics", None) is None:
            corner_build.update(book, progress=sys.stderr)  # the pattern index first, then the corners
    except Exception as exc:  # noqa: BLE001  # serving the book matters more than its pattern index
        print(f"fuseki serve: no pattern index or corner book ({exc})", file=sys.stderr)
    finally:
        book.close()
