"""What the ``fuseki`` command (``fuseki_command``), its subcommands (``commands/``) and the shell
share: the error a user can fix, the ``--book`` option and the book it leads to, the position and
filter options, and the signals that stop an import.

Below ``fuseki_command``, which loads the subcommand modules by name: they import this, never it.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from fuseki.book.ui.reading import board_from_sgf, parse_moves, parse_years


class CommandError(Exception):
    """An error the user can fix: printed as one line, exit code 1."""


BOOK_HELP = ("book database: a path or SQLAlchemy URL, or 'builtin' for the book built into fuseki "
             "(default: $FUSEKI_BOOK, else configs/fuseki.toml's [book] path, else "
             "~/.local/share/fuseki/book.sqlite; commands that only read use the built-in book "
             "when there is none there)")
BUILTIN = "builtin"  # --book builtin: the package's built-in book (book.model.builtin)
# Commands that fall back on the built-in book: they only read (the shell imports too, but an empty
# book made at the default location by a first look around would hide the built-in book from the engine;
# ``ai annotate`` writes its values into a book only when one is there, else into the AI value cache).
# ``corners`` builds a corner book only in a book of games: on none it shows the built-in one's.
READING_COMMANDS = ("search", "stats", "serve", "book", "shell", "ai", "player", "corners")


def add_book_option(parser, help: str = BOOK_HELP) -> None:
    """The ``--book URL`` option every book command takes."""
    parser.add_argument("--book", default=None, metavar="URL", help=help)


def book_location(args) -> str:
    """``--book``, else the engine's book (``engine.config.book_location``), so the CLI,
    the shell, the web page and the engine use one book unless told otherwise.

    As for the engine, the commands of ``READING_COMMANDS`` use the built-in book when none
    was named and none is at the default location; ``--book builtin`` names it (unless a
    file of that name is there).
    """
    import os

    from fuseki.book.model import builtin

    if args.book:
        if args.book == BUILTIN and not os.path.exists(args.book):
            return str(builtin.PATH)
        return args.book
    from fuseki.engine import config

    settings = config.load()
    location = config.book_location(settings, create=True)
    if (getattr(args, "command", None) in READING_COMMANDS and settings.book.path == config.DEFAULT_BOOK
            and not os.environ.get(config.BOOK_ENV) and not os.path.exists(location) and builtin.available()):
        return str(builtin.PATH)
    return location


def open_book(location: str, readonly: bool):
    """``Book.open``, with a database the driver cannot open raised as a one-line BookError."""
    from sqlalchemy.exc import SQLAlchemyError

    from fuseki.book.storage.connect import BookError
    from fuseki.book.storage.store import Book

    try:
        return Book.open(location, readonly=readonly)
    except SQLAlchemyError as exc:
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        raise BookError(f"cannot open the book {location}: {reason}") from None


def add_position_options(p) -> None:
    """--moves, or --sgf with --move; --size: the position a command asks about (position_of)."""
    where = p.add_mutually_exclusive_group()
    where.add_argument("--moves", default="", metavar="MOVES",
                       help="moves from the empty board, Black first: SGF (pd) or GTP (Q16) vertices")
    where.add_argument("--sgf", metavar="FILE", help="a game record: the position after --move N")
    p.add_argument("--move", type=int, default=0, metavar="N", help="with --sgf: moves played (default 0)")
    p.add_argument("--size", type=int, default=19, help="board size for --moves (default 19)")


CLI_NAMES = {"komi": "game_komi"}  # a filter's option where the API's name is taken (--komi: KataGo's)


def add_filter_options(p) -> None:
    """--year, --player and the header filters of ``book.model.filters`` (``filters_of`` reads them)."""
    p.add_argument("--year", metavar="FROM-TO", help="only games of these years (2010-2016, 2010-, -2016, 2014)")
    p.add_argument("--player", metavar="NAME",
                   help="only games NAME played (either colour, any part of the name, any case)")
    more = p.add_argument_group("more filters, from the games' headers (e.g. --winner B --won-by resign "
                                "--min-rank 7d --game-komi 6.5)")
    more.add_argument("--event", metavar="TEXT", help="only games whose event (EV) has TEXT in it, any case")
    more.add_argument("--winner", metavar="B|W", help="only games Black (B) or White (W) won (RE)")
    more.add_argument("--won-by", metavar="HOW", help="only games won by resign, points, time or forfeit (RE)")
    more.add_argument("--margin", metavar="A-B",
                      help="only games won on points by A to B points (3.5, 0.5-5, 10-, -2.5; RE B+3.5 is 3.5)")
    more.add_argument("--min-rank", metavar="RANK",
                      help="only games whose weaker player is RANK or stronger (5k, 1d, 7d, 1p; a pro is above "
                           "9d; a game with an unknown rank is left out)")
    more.add_argument("--max-rank", metavar="RANK", help="only games whose weaker player is RANK or weaker")
    more.add_argument("--handicap", metavar="N|A-B", help="only games of N handicap stones, or A to B (0, 2-4, 2-)")
    more.add_argument("--game-komi", metavar="K|A-B",
                      help="only games of komi K, or A to B (6.5, 5.5-7.5; the API's komi=: --komi is KataGo's)")


def filters_of(args, min_games: int = 1):
    """The ``Filters`` that ``add_filter_options``' arguments say; ValueError naming a bad value."""
    from fuseki.book.model.filters import FILTER_PARAMS, Filters, parse_filters

    low, high = parse_years(args.year)
    texts = {name: getattr(args, CLI_NAMES.get(name, name), None) for name in ("player", *FILTER_PARAMS)}
    fields = parse_filters(texts, label=lambda name: "--" + CLI_NAMES.get(name, name).replace("_", "-"))
    return Filters(year_from=low, year_to=high, min_games=min_games, **fields)


def position_of(args):
    """The Board that add_position_options' arguments name."""
    return board_from_sgf(args.sgf, args.move) if args.sgf else parse_moves(args.moves, args.size)


class StopRequest(threading.Event):
    """Set when the user asks a long import to stop; ``signum`` says how (None: not by a signal)."""

    signum: int | None = None


@contextmanager
def stop_on_signals() -> Iterator[StopRequest]:
    """While inside, SIGINT (Ctrl-C) and SIGTERM set the StopRequest it gives instead of stopping at once.

    Pass it as ``importer.import_paths``'s ``stop``: the import ends after the batch it is
    writing, with every committed game counted.  A second signal raises KeyboardInterrupt
    (the user insists: it stops where it is, a batch half written is rolled back).
    Outside the main thread (where Python runs no signal handler) nothing is installed.
    """
    stop = StopRequest()

    def handler(signum, frame):
        if stop.is_set():
            raise KeyboardInterrupt
        stop.signum = signum
        stop.set()

    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    previous = {signum: signal.signal(signum, handler) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


def failed_text(exc: BaseException, report) -> str:
    """What an import one of whose processes failed (``pipeline.workers.StageFailed``) says, in
    one line: which process and how, that what it committed is kept, and how to go on."""
    return (f"stopped: {exc}; nothing is lost: the {report.added:,} games committed before are in the book "
            "(the same import again adds the rest)")


def stopped_text(stop: StopRequest, report) -> str:
    """What a stopped import says: why, what it committed, and how to finish it."""
    name = signal.Signals(stop.signum).name if stop.signum else "request"
    return f"stopped by {name}; committed: {report} (the same import again adds the rest)"
