"""The ``fuseki`` command: one subcommand per job, each a thin layer over a library call.

Each feature module contributes its subcommands through an ``add_commands(subparsers)``
function; this module only wires them together and turns library errors into one-line
messages with a non-zero exit code.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# Modules that add subcommands (each has add_commands(subparsers)).
COMMAND_MODULES = [
    "fuseki.book.ui.book_cli",
    "fuseki.book.ui.pos9_cli",
    "fuseki.book.ui.web_cli",
    "fuseki.book.ui.shell_cli",
    "fuseki.engine.players.match_cli",
    "fuseki.book.formats.fuego",
    "fuseki.book.ui.builtin_cli",
    "fuseki.book.ui.pattern_cli",
    "fuseki.book.ui.corners_cli",
]


class CommandError(Exception):
    """An error the user can fix: printed as one line, exit code 1."""


BOOK_HELP = ("book database: a path or SQLAlchemy URL, or 'builtin' for the book built into fuseki "
             "(default: $FUSEKI_BOOK, else configs/fuseki.toml's [book] path, else "
             "~/.local/share/fuseki/book.sqlite; commands that only read use the built-in book "
             "when there is none there)")
BUILTIN = "builtin"  # --book builtin: the package's built-in book (book.builtin)
# Commands that fall back on the built-in book: they only read (the shell imports too, but an empty
# book made at the default location by a first look around would hide the built-in book from the engine).
READING_COMMANDS = ("search", "stats", "serve", "book", "shell")


def add_book_option(parser, help: str = BOOK_HELP) -> None:
    """The ``--book URL`` option every book command takes."""
    parser.add_argument("--book", default=None, metavar="URL", help=help)


# The commands that only group subcommands, which several modules add to (``subcommands``).
GROUPS = {
    "book": dict(help="book files: export for other engines, build the built-in book",
                 description="Write the book in other programs' formats; build the built-in book.",
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

    from fuseki.book import builtin

    if args.book:
        if args.book == BUILTIN and not os.path.exists(args.book):
            return str(builtin.PATH)
        return args.book
    from fuseki.engine.gtp import config

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


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose help is plain text: descriptions taken from docstrings quote names
    in reStructuredText's double backticks, which a terminal would show as they are.
    Its subcommands' parsers are of its class too (argparse makes them so)."""

    def format_help(self) -> str:
        return super().format_help().replace("``", "")

    def format_usage(self) -> str:
        return super().format_usage().replace("``", "")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="fuseki", description=__doc__.splitlines()[0],
                    epilog="Example: fuseki import games/ tygem.tgz --book games.sqlite, then fuseki search "
                           "--moves \"Q16 D4\" --book games.sqlite (fuseki COMMAND --help says more)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).add_commands(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``fuseki`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "run", None):
        parser.print_help()
        return 2
    try:
        return args.run(args) or 0
    except (CommandError, OSError, ValueError) as exc:
        from fuseki.book.ui.textboard import printable  # a message may name a file or a record

        print(f"fuseki {args.command}: {printable(str(exc))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"fuseki {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
