"""The ``fuseki`` command: one subcommand per job, each a thin layer over a library call.

Each subcommand is one module of ``book/ui/commands/``, which adds it through an
``add_command(subparsers)`` function; this module only wires them together and turns library
errors into one-line messages with a non-zero exit code.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import threading

from fuseki.book.ui.cli_shared import CommandError

# Each subcommand and the module that adds it (its ``add_command(subparsers)``), in the order the
# help lists them: ``fuseki COMMAND ...`` imports only COMMAND's module (``build_parser``), so a
# command never pays for the imports of the others (``match``'s alone took 60 ms of every
# ``fuseki search``); tests/test_cli_commands.py checks that each module adds exactly its command.
COMMANDS = {
    "import": "fuseki.book.ui.commands.import_command",
    "search": "fuseki.book.ui.commands.search_command",
    "stats": "fuseki.book.ui.commands.stats_command",
    "pos9": "fuseki.book.ui.commands.pos9_command",
    "serve": "fuseki.book.ui.commands.serve_command",
    "shell": "fuseki.book.ui.commands.shell_command",
    "match": "fuseki.book.ui.commands.match_command",
    "book": "fuseki.book.ui.commands.book_command",
    "pattern": "fuseki.book.ui.commands.pattern_command",
    "corners": "fuseki.book.ui.commands.corners_command",
    "ai": "fuseki.book.ui.commands.ai_command",
    "player": "fuseki.book.ui.commands.player_command",
}


# Commands whose process ends as soon as they have answered (``end_now``): they read, and once
# they return they have closed the book and hold no thread or process, so the interpreter's
# teardown, which unloads numba's kernels, llvmlite and SQLAlchemy module by module, is time a
# shell waits for and nothing else: 0.3-0.5 s of a 1-2 s fuseki pattern here, measured between
# main's return and the process's end (issue 61, bench/cli.py; fuseki-gtp's quit does the same,
# engine/gtp/cli.py exit_now).  Not with --ai: KataGo is a process of its own.
ENDS_AT_ONCE = ("search", "pattern")


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose help is plain text: descriptions taken from docstrings quote names
    in reStructuredText's double backticks, which a terminal would show as they are.
    Its subcommands' parsers are of its class too (argparse makes them so)."""

    def format_help(self) -> str:
        return super().format_help().replace("``", "")

    def format_usage(self) -> str:
        return super().format_usage().replace("``", "")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``fuseki`` parser; given ``command`` (the first argument), only that subcommand, all of
    them for None or a name that is no command (the help and argparse's error list every command)."""
    parser = Parser(prog="fuseki", description=__doc__.splitlines()[0],
                    epilog="Example: fuseki import games/ tygem.tgz --book games.sqlite, then fuseki search "
                           "--moves \"Q16 D4\" --book games.sqlite (fuseki COMMAND --help says more)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    wanted = [COMMANDS[command]] if command in COMMANDS else COMMANDS.values()
    for name in wanted:
        importlib.import_module(name).add_command(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``fuseki`` console script.  Called so, without ``argv``, the commands of
    ``ENDS_AT_ONCE`` end the process once they have answered (``end_now``); a caller in Python
    (the tests) passes ``argv`` and gets the exit code back."""
    as_process = argv is None
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv[0] if argv else None)
    args = parser.parse_args(argv)
    if not getattr(args, "run", None):
        parser.print_help()
        return 2
    try:
        code = args.run(args) or 0
        if as_process:
            sys.stdout.flush()  # a reader gone (| head) is found here, not in the interpreter's teardown
            if args.command in ENDS_AT_ONCE and not getattr(args, "ai", False):
                end_now(code)
        return code
    except BrokenPipeError as exc:
        if as_process and stdout_gone():
            return reader_gone()
        return failed(args.command, exc)
    except (CommandError, OSError, ValueError) as exc:
        return failed(args.command, exc)
    except KeyboardInterrupt:
        print(f"fuseki {args.command}: interrupted", file=sys.stderr)
        return 130


def failed(command: str, exc: Exception) -> int:
    """Say why ``command`` failed, in one line on stderr; its exit code, 1."""
    from fuseki.book.ui.present.textboard import printable  # a message may name a file or a record

    print(f"fuseki {command}: {printable(str(exc))}", file=sys.stderr)
    return 1


# The exit code of a command whose reader went away (``fuseki search ... | head -1``): a Unix tool
# is ended by SIGPIPE there, which a shell shows as 128 + 13; no message, as it prints none.
SIGPIPE_STATUS = 141


def stdout_gone() -> bool:
    """Whether standard output is a pipe or socket nobody reads any more (so that a BrokenPipeError
    of another pipe, a KataGo's or a GTP engine's, is still reported)."""
    import select

    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _fd, events in poller.poll(0))
    except (AttributeError, OSError, ValueError):  # no file descriptor (a caller's stream), no poll
        return False


def reader_gone() -> int:
    """End quietly once standard output's reader has gone: what is left in its buffer goes to
    /dev/null, so that the interpreter's last flush says nothing either; SIGPIPE_STATUS."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return SIGPIPE_STATUS


def end_now(code: int) -> None:
    """End the process with ``code`` without the interpreter's teardown (see ``ENDS_AT_ONCE``),
    once the output is flushed; returns instead if a thread besides this one is still alive."""
    if threading.active_count() > 1:
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that went away (| head): as the teardown would, say nothing
            pass
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
