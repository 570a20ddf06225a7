"""What the ``fuseki`` command (``cli``) and its subcommand modules share: the error a user
can fix, the ``--book`` option and the book it leads to, and command groups that several
modules add to (``fuseki book export``, ``fuseki book build-builtin``).

Below ``cli``, which loads the subcommand modules by name: they import this, never ``cli``.
"""

from __future__ import annotations


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
READING_COMMANDS = ("search", "stats", "serve", "book", "shell", "ai", "player")


def add_book_option(parser, help: str = BOOK_HELP) -> None:
    """The ``--book URL`` option every book command takes."""
    parser.add_argument("--book", default=None, metavar="URL", help=help)


# The commands that only group subcommands, which several modules add to (``subcommands``).
GROUPS = {
    "book": dict(help="book files: export for other engines, an SGF tree, build the built-in book",
                 description="Write the book in other programs' formats or as one SGF game tree; build "
                             "the built-in book.",
                 epilog="Example: fuseki book export --fuego book.dat --min-games 20 (fuseki book "
                        "SUBCOMMAND --help says more)"),
}


def subcommands(subparsers, name: str):
    """The subcommands of command ``name`` of ``GROUPS`` (``fuseki book export``, ``fuseki book
    build-builtin``): the first module that asks adds the command, the others add to it."""
    groups = vars(subparsers).setdefault("_fuseki_groups", {})
    if name not in groups:
        parser = subparsers.add_parser(name, **GROUPS[name])
        groups[name] = parser.add_subparsers(dest=f"{name}_command", metavar="SUBCOMMAND", required=True)
    return groups[name]


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

    from fuseki.book.storage.store import Book, BookError

    try:
        return Book.open(location, readonly=readonly)
    except SQLAlchemyError as exc:
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        raise BookError(f"cannot open the book {location}: {reason}") from None
