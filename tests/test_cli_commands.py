"""``fuseki COMMAND`` loads only what COMMAND needs (issue 42: a shell command answers at once).

``book/ui/fuseki_command.py`` names the module of each command, one module a command in
``book/ui/commands/``, so that ``fuseki search`` imports ``search_command`` alone; these tests
prove the names right, and that ``fuseki search`` on the built-in book leaves the other commands'
modules (and what they import) unloaded.  No timing here: bench/cli.py measures the whole process
beside ``python3 -c pass``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fuseki.book.model import builtin
from fuseki.book.ui import fuseki_command


def added_commands(module: str) -> set[str]:
    """The commands ``module``'s ``add_command`` adds to a fresh parser."""
    parser = argparse.ArgumentParser()
    subparsers = parser.add_subparsers()
    importlib.import_module(module).add_command(subparsers)
    return set(subparsers.choices)


@pytest.mark.parametrize("command", list(fuseki_command.COMMANDS))
def test_each_module_adds_the_one_command_the_registry_names(command):
    assert added_commands(fuseki_command.COMMANDS[command]) == {command}


def test_every_module_of_the_commands_folder_is_a_command_of_the_registry():
    folder = Path(fuseki_command.__file__).parent / "commands"
    modules = {f"fuseki.book.ui.commands.{path.stem}" for path in folder.glob("*.py") if path.stem != "__init__"}
    assert modules == set(fuseki_command.COMMANDS.values())


def test_a_command_builds_the_parser_of_its_module_only():
    assert set(fuseki_command.build_parser("search")._subparsers._group_actions[0].choices) == {"search"}
    book = fuseki_command.build_parser("book")._subparsers._group_actions[0].choices["book"]
    assert set(book._subparsers._group_actions[0].choices) == {"export", "build-builtin", "tree"}
    # no command, or a name that is none: every command (the help and argparse's error list them)
    for command in (None, "no-such-command"):
        assert list(fuseki_command.build_parser(command)._subparsers._group_actions[0].choices) \
            == list(fuseki_command.COMMANDS)


# Loaded by other commands, never by ``fuseki search`` on the built-in book: the other commands' modules,
# the match runner (and its GTP client), the Fuego export, the book tree, the years' profile (only
# --by-year and --trends need it), the games of an answer (only --save-games), the pattern index,
# the web page, and numba: two moves are played by the rules core's kernels as Python
# (engine.core.lazy_jit), the book's kernels never run.
NOT_FOR_SEARCH = ("fuseki.engine.players.match", "fuseki.book.formats.fuego", "fuseki.book.analysis.tree",
                  "fuseki.book.queries.years", "fuseki.book.queries.gamesets", "fuseki.book.analysis.patterns",
                  "fuseki.engine.players.gtp_client", "flask", "numba", "llvmlite",
                  *(module for command, module in fuseki_command.COMMANDS.items() if command != "search"))


@pytest.mark.skipif(not builtin.available(), reason="no built-in book in this checkout")
def test_search_on_the_builtin_book_loads_no_other_commands_modules():
    script = f"""
import contextlib, io, json, sys
from fuseki.book.ui import fuseki_command
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = fuseki_command.main(["search", "--moves", "Q16 D4", "--book", "builtin"])
loaded = sorted(m for m in sys.modules if m.startswith({NOT_FOR_SEARCH!r}))
print(json.dumps([code, out.getvalue(), loaded]))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    code, text, loaded = json.loads(done.stdout.splitlines()[-1])
    assert code == 0 and "C16" in text  # it did answer: the built-in book's moves after Q16 D4
    assert loaded == []


def test_search_on_a_book_of_games_starts_no_numba(tmp_path):
    """A small position's first visits are counted by numpy (book.storage.position_index.nextmoves.NUMPY_CODES):
    ``fuseki search`` on a book of games imports no numba either, and answers from the games."""
    from bookgames import build_book

    book = build_book(tmp_path / "games.sqlite", tmp_path / "sgf")  # the import compiles, in this process
    script = f"""
import contextlib, io, json, sys
from fuseki.book.ui import fuseki_command
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = fuseki_command.main(["search", "--moves", "R16 D4", "--winner", "B", "--book", {book!r}])  # every row read
    code += fuseki_command.main(["search", "--moves", "R16", "--book", {book!r}])
print(json.dumps([code, out.getvalue(), sorted(m for m in sys.modules if m.startswith(("numba", "llvmlite")))]))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    code, text, loaded = json.loads(done.stdout.splitlines()[-1])
    assert code == 0 and "Q3         3" in text and "D16        2" in text  # Black won the 3 Q3 games; R16 D16: 2
    assert loaded == []



@pytest.mark.skipif(not builtin.available(), reason="no built-in book in this checkout")
def test_corners_with_no_book_shows_the_builtin_corner_book_and_makes_no_empty_book(tmp_path):
    """``fuseki corners`` with no ``--book`` and nothing at the default location reads the built-in
    book's corners, as ``--book builtin`` does; it used to make an empty book there, which then hid
    the built-in book from the engine and from every other command."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("FUSEKI_")}
    env["HOME"] = str(tmp_path)  # no default book there; PYTHONPATH (conftest) keeps this checkout

    def corners(*book: str) -> str:
        done = subprocess.run([sys.executable, "-m", "fuseki", "corners", "--moves", "Q16 D4", *book], env=env,
                              cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout

    unnamed = corners()
    assert "tenuki" in unnamed and unnamed == corners("--book", "builtin")
    assert not (tmp_path / ".local" / "share" / "fuseki" / "book.sqlite").exists()
