"""fuseki serve: explore the book in a web browser (read-only, on this machine only by default).

Example: fuseki serve --book games.sqlite --port 8000, then open http://127.0.0.1:8000/
"""

from __future__ import annotations


def default_book() -> str:
    """The book used when --book is not given: the engine's (``engine.config.book_location``).

    $FUSEKI_BOOK, else ``[book] path`` of configs/fuseki.toml, else
    ~/.local/share/fuseki/book.sqlite, so the CLI, the shell, the web page and
    the engine all use one book unless told otherwise.
    """
    from engine import config

    return config.book_location(config.load(), create=True)


def open_book(url: str, readonly: bool):
    """``Book.open``, with a database the driver cannot open raised as a one-line BookError."""
    from sqlalchemy.exc import SQLAlchemyError

    from .store import Book, BookError

    try:
        return Book.open(url, readonly=readonly)
    except SQLAlchemyError as exc:
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        raise BookError(f"cannot open the book {url}: {reason}") from None


def add_commands(subparsers) -> None:
    p = subparsers.add_parser("serve", help="explore the book in a web browser (read-only)",
                              description=__doc__.strip())
    p.add_argument("--book", default=None, metavar="URL",
                   help="book database: a path or SQLAlchemy URL (default: $FUSEKI_BOOK, else configs/fuseki.toml's [book] path, else ~/.local/share/fuseki/book.sqlite)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=5000, help="port (default 5000; 0 picks a free one)")
    p.set_defaults(run=run_serve)


def run_serve(args) -> int:
    from werkzeug.serving import make_server

    from .web import create_app
    from .web.app import LOOPBACK_NAMES

    url = args.book or default_book()
    book = open_book(url, readonly=True)
    try:
        stats = book.stats()
        trusted = LOOPBACK_NAMES if args.host in LOOPBACK_NAMES else None
        server = make_server(args.host, args.port, create_app(book, trusted_hosts=trusted), threaded=True)
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
