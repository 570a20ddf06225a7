"""``fuseki COMMAND`` loads only what COMMAND needs (issue 42: a shell command answers at once).

``book/ui/cli.py`` names the commands each subcommand module adds, so that ``fuseki search``
imports ``book_cli`` alone; these tests prove the names right, and that ``fuseki search`` on the
built-in book leaves the other commands' modules (and what they import) unloaded.  No timing
here: bench/cli.py measures the whole process beside ``python3 -c pass``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys

import pytest

from fuseki.book.model import builtin
from fuseki.book.ui import cli


def added_commands(module: str) -> set[str]:
    """The commands ``module``'s ``add_commands`` adds to a fresh parser."""
    parser = argparse.ArgumentParser()
    subparsers = parser.add_subparsers()
    importlib.import_module(module).add_commands(subparsers)
    return set(subparsers.choices)


@pytest.mark.parametrize("module", list(cli.COMMAND_MODULES))
def test_each_module_adds_the_commands_the_registry_names(module):
    assert added_commands(module) == set(cli.COMMAND_MODULES[module])


def test_a_command_builds_the_parser_of_its_modules_only():
    assert set(cli.build_parser("search")._subparsers._group_actions[0].choices) == {"import", "search", "stats"}
    # "book" is added to by three modules; all three come
    book = cli.build_parser("book")._subparsers._group_actions[0].choices["book"]
    assert set(book._subparsers._group_actions[0].choices) == {"export", "build-builtin", "tree"}
    # no command, or one nobody adds: every command (the help and argparse's error list them)
    every = {name for commands in cli.COMMAND_MODULES.values() for name in commands}
    for command in (None, "no-such-command"):
        assert set(cli.build_parser(command)._subparsers._group_actions[0].choices) == every


# Loaded by other commands, never by ``fuseki search`` on the built-in book: the match runner (and its GTP client),
# the Fuego export, the book tree, the years' profile (only --by-year and --trends need it), the
# games of an answer (only --save-games), the pattern index, the web page, and numba: two moves are
# played by the rules core's kernels as Python (engine.core.lazy_jit), the book's kernels never run.
NOT_FOR_SEARCH = ("fuseki.engine.players.match", "fuseki.book.formats.fuego", "fuseki.book.analysis.tree",
                  "fuseki.book.queries.years", "fuseki.book.queries.gamesets", "fuseki.book.analysis.patterns",
                  "fuseki.book.ui.pattern_cli", "fuseki.engine.players.gtp_client", "flask",
                  "numba", "llvmlite")


@pytest.mark.skipif(not builtin.available(), reason="no built-in book in this checkout")
def test_search_on_the_builtin_book_loads_no_other_commands_modules():
    script = f"""
import contextlib, io, json, sys
from fuseki.book.ui import cli
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = cli.main(["search", "--moves", "Q16 D4", "--book", "builtin"])
loaded = sorted(m for m in sys.modules if m.startswith({NOT_FOR_SEARCH!r}))
print(json.dumps([code, out.getvalue(), loaded]))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    code, text, loaded = json.loads(done.stdout.splitlines()[-1])
    assert code == 0 and "C16" in text  # it did answer: the built-in book's moves after Q16 D4
    assert loaded == []


def test_search_on_a_book_of_games_starts_no_numba(tmp_path):
    """A small position's first visits are counted by numpy (book.storage.nextmoves.NUMPY_CODES):
    ``fuseki search`` on a book of games imports no numba either, and answers from the games."""
    from bookgames import build_book

    book = build_book(tmp_path / "games.sqlite", tmp_path / "sgf")  # the import compiles, in this process
    script = f"""
import contextlib, io, json, sys
from fuseki.book.ui import cli
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = cli.main(["search", "--moves", "R16 D4", "--winner", "B", "--book", {book!r}])  # every row read
    code += cli.main(["search", "--moves", "R16", "--book", {book!r}])
print(json.dumps([code, out.getvalue(), sorted(m for m in sys.modules if m.startswith(("numba", "llvmlite")))]))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    code, text, loaded = json.loads(done.stdout.splitlines()[-1])
    assert code == 0 and "Q3         3" in text and "D16        2" in text  # Black won the 3 Q3 games; R16 D16: 2
    assert loaded == []
