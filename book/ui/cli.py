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

# Modules that add subcommands (each has add_commands(subparsers)).
COMMAND_MODULES = [
    "fuseki.book.ui.book_cli",
    "fuseki.book.ui.pos9_cli",
    "fuseki.book.ui.web_cli",
    "fuseki.book.ui.shell_cli",
    "fuseki.engine.players.match_cli",
    "fuseki.book.ui.export_cli",
    "fuseki.book.ui.builtin_cli",
    "fuseki.book.ui.pattern_cli",
    "fuseki.book.ui.corners_cli",
    "fuseki.book.ui.ai_cli",
    "fuseki.book.ui.tree_cli",
    "fuseki.book.ui.player_cli",
]


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
