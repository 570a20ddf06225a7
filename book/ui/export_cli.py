"""``fuseki book export --fuego FILE [--min-games N] [--max-moves N] [--book URL]``: the book as a
Fuego/Pachi opening book file (``book.formats.fuego``)."""

from __future__ import annotations

import os
import sys

from fuseki.book.formats.fuego import DEFAULT_MIN_GAMES, write_fuego_book


def add_commands(subparsers) -> None:
    from fuseki.book.ui.cli_shared import subcommands

    sub = subcommands(subparsers, "book")
    p = sub.add_parser(
        "export", help="write the book as a Fuego/Pachi opening book (book.dat)",
        description="One line per position ('19 Q4 D16 | C4 D3'), for the moves played in at least "
                    "--min-games games. Example: fuseki book export --fuego book.dat --min-games 20")
    p.add_argument("--fuego", required=True, metavar="FILE", help="the file to write ('-': stdout)")
    p.add_argument("--min-games", type=int, default=DEFAULT_MIN_GAMES, metavar="N",
                   help=f"leave out moves played in fewer games (default {DEFAULT_MIN_GAMES})")
    p.add_argument("--max-moves", type=int, default=None, metavar="N",
                   help="no lines for positions after more than N moves (default: no limit)")
    from fuseki.book.ui.cli_shared import add_book_option

    add_book_option(p)
    p.set_defaults(run=run_export)


def run_export(args) -> int:
    from fuseki.book.storage.store import Book
    from fuseki.book.ui.cli_shared import CommandError, book_location

    if args.min_games < 1:
        raise CommandError("--min-games must be at least 1")
    if args.max_moves is not None and args.max_moves < 0:
        raise CommandError("--max-moves must be at least 0")
    with Book.open(book_location(args), readonly=True) as book:
        if args.fuego == "-":
            count = write_fuego_book(book, sys.stdout, args.min_games, args.max_moves)
        else:
            temp = f"{args.fuego}.tmp{os.getpid()}"
            try:
                with open(temp, "w", encoding="ascii", newline="\n") as out:
                    count = write_fuego_book(book, out, args.min_games, args.max_moves)
                os.replace(temp, args.fuego)  # a reader never sees half a book
            finally:
                if os.path.exists(temp):
                    os.remove(temp)
    print(f"fuseki book export: {count} positions written to {args.fuego}", file=sys.stderr)
    return 0
