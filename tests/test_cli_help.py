"""The ``fuseki`` command's help: it comes at once (building the parser imports none of the
heavy libraries: they wait for the command that runs) and reads as plain text with an example.

No timing here: bench/cli.py measures the start-up; these tests prove what makes it short.
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys

import pytest

from fuseki.book.ui import fuseki_command
from fuseki.book.ui.shell import BookShell

HEAVY = ("numba", "numpy", "sqlalchemy", "flask", "werkzeug", "gunicorn", "sgfmill", "tqdm", "llvmlite")


def command_lines(parser=None, prefix=()) -> list[list[str]]:
    """Every command and subcommand of the parser, as argv ([] for ``fuseki`` itself)."""
    parser = parser or fuseki_command.build_parser()
    found = [list(prefix)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += command_lines(sub, (*prefix, name))
    return found


def help_text(argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as stop:
        fuseki_command.main([*argv, "--help"])
    assert stop.value.code == 0
    return capsys.readouterr().out


def test_there_are_commands_to_check():
    commands = {" ".join(argv) for argv in command_lines()}
    assert {"", "import", "search", "pattern", "shell", "serve", "book", "book export", "pos9 view"} <= commands


def test_the_parser_and_every_help_load_no_heavy_library():
    script = f"""
import json, sys, contextlib, io
from fuseki.book.ui import fuseki_command
fuseki_command.build_parser()
for argv in {json.dumps(command_lines())}:
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            fuseki_command.main(argv + ["--help"])
        except SystemExit:
            pass
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in {HEAVY!r})))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == []


@pytest.mark.parametrize("argv", command_lines(), ids=lambda argv: " ".join(argv) or "fuseki")
def test_help_is_plain_text_with_an_example(argv, capsys):
    text = help_text(argv, capsys)
    assert "`" not in text
    assert "%%" not in text  # argparse formats help= strings, not a description's
    assert "example" in text.lower()
    assert text.startswith("usage: fuseki")


def test_search_help_offers_verbose(capsys):
    assert "--verbose" in help_text(["search"], capsys)


def test_the_shells_help_is_plain_text():
    out = io.StringIO()
    shell = BookShell(book=None, stdout=out)  # help reads no book
    shell.onecmd("help")
    for name in shell.command_names():
        shell.onecmd(f"help {name}")
    text = out.getvalue()
    assert "games [PAGE|next]" in text and "next: the page after" in text
    assert "`" not in text
    assert not any(line.startswith(" ") for line in text.splitlines())  # no docstring indentation


def test_the_mistakes_help_names_the_marks_own_figures(capsys):
    from fuseki.book.analysis.ai import MARK_VISITS, MISTAKE_POINTS, POPULAR

    text = " ".join(help_text(["ai", "mistakes"], capsys).split())
    assert f"at least {POPULAR:.0%} of a position's games" in text
    assert f"at least {MISTAKE_POINTS:g} points clear of the noise" in text and f"default {MARK_VISITS}" in text
