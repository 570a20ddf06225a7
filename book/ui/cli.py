"""The ``fuseki`` command: one subcommand per job, each a thin layer over a library call.

Each feature module contributes its subcommands through an ``add_commands(subparsers)``
function; this module only wires them together and turns library errors into one-line
messages with a non-zero exit code.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from fuseki.book.ui.cli_shared import CommandError

# Modules that add subcommands (each has add_commands(subparsers)), with the commands each adds:
# ``fuseki COMMAND ...`` imports only the modules adding COMMAND (``build_parser``), so a command
# never pays for the imports of the others (``match``'s alone took 60 ms of every ``fuseki search``);
# tests/test_cli_commands.py checks that each module adds exactly the commands named here.
COMMAND_MODULES = {
    "fuseki.book.ui.book_cli": ("import", "search", "stats"),
    "fuseki.book.ui.pos9_cli": ("pos9",),
    "fuseki.book.ui.web_cli": ("serve",),
    "fuseki.book.ui.shell_cli": ("shell",),
    "fuseki.engine.players.match_cli": ("match",),
    "fuseki.book.ui.export_cli": ("book",),
    "fuseki.book.ui.builtin_cli": ("book",),
    "fuseki.book.ui.pattern_cli": ("pattern",),
    "fuseki.book.ui.corners_cli": ("corners",),
    "fuseki.book.ui.ai_cli": ("ai",),
    "fuseki.book.ui.tree_cli": ("book",),
    "fuseki.book.ui.player_cli": ("player",),
}


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose help is plain text: descriptions taken from docstrings quote names
    in reStructuredText's double backticks, which a terminal would show as they are.
    Its subcommands' parsers are of its class too (argparse makes them so)."""

    def format_help(self) -> str:
        return super().format_help().replace("``", "")

    def format_usage(self) -> str:
        return super().format_usage().replace("``", "")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``fuseki`` parser; given ``command`` (the first argument), only the subcommands of the
    modules adding it, all of them for None or a name none adds (the help and argparse's error
    list every command)."""
    parser = Parser(prog="fuseki", description=__doc__.splitlines()[0],
                    epilog="Example: fuseki import games/ tygem.tgz --book games.sqlite, then fuseki search "
                           "--moves \"Q16 D4\" --book games.sqlite (fuseki COMMAND --help says more)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    wanted = [name for name, commands in COMMAND_MODULES.items() if command in commands] or COMMAND_MODULES
    for name in wanted:
        importlib.import_module(name).add_commands(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``fuseki`` console script."""
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv[0] if argv else None)
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
