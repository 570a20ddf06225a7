"""fuseki serve: explore the book in a web browser (read-only, on this machine only by default).

Example: fuseki serve --book games.sqlite --port 8000, then open http://127.0.0.1:8000/
"""

from __future__ import annotations

from fuseki.book.ui.cli import add_book_option, book_location, open_book


def add_commands(subparsers) -> None:
    p = subparsers.add_parser("serve", help="explore the book in a web browser (read-only)",
                              description=__doc__.strip())
    add_book_option(p)
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=5000, help="port (default 5000; 0 picks a free one)")
    p.set_defaults(run=run_serve)


def run_serve(args) -> int:
    from werkzeug.serving import WSGIRequestHandler, make_server

    class KeepAlive(WSGIRequestHandler):
        # HTTP/1.1: a browser's (or bench/web_load.py's) next request reuses its connection and
        # its thread; werkzeug's HTTP/1.0 opened a connection and started a thread per request
        protocol_version = "HTTP/1.1"

    from fuseki.book.ui.web import create_app
    from fuseki.book.ui.web.app import LOOPBACK_NAMES

    url = book_location(args)
    book = open_book(url, readonly=True)  # a missing or broken book: one line, before anything is made
    if book.statistics is None:
        _update_pattern_index(url)
    try:
        stats = book.stats()
        trusted = LOOPBACK_NAMES if args.host in LOOPBACK_NAMES else None
        server = make_server(args.host, args.port, create_app(book, trusted_hosts=trusted), threaded=True,
                             request_handler=KeepAlive)
        host = f"[{args.host}]" if ":" in args.host else args.host
        print(f"fuseki serve: book {url} ({stats.games} games) at http://{host}:{server.port}/", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
    finally:
        book.close()
    return 0


def _update_pattern_index(url: str) -> None:
    """Bring the pattern index and the corner book up to date where the book can be written
    (the page's pattern search and corners view read them; a read-only book without them
    answers with a message)."""
    import sys

    from fuseki.book.patterns import corner_build
    from fuseki.book.storage.store import Book, BookError

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
