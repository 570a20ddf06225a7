"""``fuseki shell``: the command's arguments, and the loop around ``book.ui.shell.BookShell``.

Apart from the shell itself so that building the ``fuseki`` parser (every ``--help``) does
not import what the shell needs (SQLAlchemy, the numba board): that waits for ``run_shell``.
"""

from __future__ import annotations

import os
import sys

from fuseki.book.ui.cli_shared import add_book_option, book_location, open_book
from fuseki.book.ui.present import ai_text

HISTORY_FILE = "~/.fuseki_history"


def add_command(subparsers) -> None:
    p = subparsers.add_parser("shell", help="explore the book from a command line",
                              description="A command line over the book: play moves, search, filter, "
                                          "list games, import. Example: fuseki shell --book games.sqlite")
    add_book_option(p)
    p.add_argument("--size", type=int, default=19, help="board size of the search position (default 19)")
    ai_text.add_ai_options(p)  # as fuseki search --ai; the shell's `ai on|off` switches it
    p.set_defaults(run=run_shell)


def run_shell(args) -> int:
    from fuseki.book.ui.shell import BookShell

    url = book_location(args)
    book = open_book(url, readonly=False)
    try:
        shell = BookShell(book, url, size=args.size, ai_options=args)
        shell.ai = args.ai
        shell.say(shell.greeting())
        interactive = sys.stdin.isatty()
        if not interactive:  # commands from a file or pipe: answers only, no prompts
            shell.prompt = ""
        history = _start_history() if interactive else None
        try:
            shell.cmdloop()
        except KeyboardInterrupt:
            shell.say()
        finally:
            if history:
                history()
    finally:
        book.close()
    return 0


def _start_history():
    """Load the readline history; return the function that saves it (None without readline)."""
    try:
        import readline
    except ImportError:
        return None
    path = os.path.expanduser(HISTORY_FILE)
    readline.set_completer_delims(" \t\n")
    try:
        readline.read_history_file(path)
    except OSError:
        pass
    readline.set_history_length(1000)

    def save():
        try:
            readline.write_history_file(path)
        except OSError:
            pass
    return save
