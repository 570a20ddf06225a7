"""What ``fuseki search`` and ``fuseki pattern`` import: only what the command needs (issue 61).

No timing here: bench/cli.py measures the start-up (docs/benchmarks.md, "Start-up ... issue 61");
these tests hold what makes it short, by the modules a command leaves out of ``sys.modules``:

- ``fuseki search`` on the built-in book (a statistics book) reads it through ``sqlite3``
  (``book.storage.position_index.statbook_file``): no SQLAlchemy, and its four moves played as Python
  (``engine/core/lazy_jit.py``): no numba;
- ``fuseki pattern`` on a SQLite book whose index is ready (``fuseki import`` leaves it so), with no
  filter, reads the index's state and files through ``sqlite3`` alone (``pattern_files.read_ready``):
  no SQLAlchemy, no ``Book``; it needs numba (the scan), but not the SGF parser
  (``book.formats.sgf_reader``, sgfmill: only to index games an older import left out), and numba
  comes with the scan, after the position's moves were played as Python.  With a filter it opens
  the ``Book`` (SQLAlchemy) and prints the same answer when the filter keeps every game;
- both end the process once they have answered, without the interpreter's teardown
  (``fuseki_command.ENDS_AT_ONCE``): an atexit handler never runs, and the answer is whole.
- a command whose reader went away (``| head -1``) ends without a word, with SIGPIPE's status.

Each command runs in a fresh interpreter (``fuseki_command.main``, as the ``fuseki`` script runs it), which
then prints the modules it holds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from fuseki.book.model import builtin

RUN = """
import json, sys
from fuseki.book.ui import fuseki_command
from fuseki.engine.core import lazy_jit
code = fuseki_command.main({argv!r})
print(json.dumps([code, sorted(m for m in sys.modules if m.split(".")[0] in {heavy!r}
                               or m in {project!r}), lazy_jit.is_compiled("fuseki.engine.core._kernels")]))
"""
HEAVY = ("sqlalchemy", "numba", "llvmlite", "sgfmill")
PROJECT = ("fuseki.book.formats.sgf_reader", "fuseki.book.analysis.patterns.scan", "fuseki.book.storage.schema")


def run_command(argv: list[str], home) -> tuple[str, list[str], bool]:
    """(what it printed, the heavy and project modules it imported, whether the board's kernels
    were numba's) of ``fuseki ARGV`` in a fresh interpreter."""
    env = {k: v for k, v in os.environ.items() if k != "FUSEKI_BOOK"} | {"HOME": str(home)}
    done = subprocess.run([sys.executable, "-c", RUN.format(argv=argv, heavy=HEAVY, project=PROJECT)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    *printed, last = done.stdout.splitlines()
    code, modules, compiled = json.loads(last)
    assert code == 0, done.stdout + done.stderr
    return "\n".join(printed), modules, compiled


@pytest.mark.skipif(not builtin.available(), reason="the built-in book is not built in this checkout")
def test_search_on_the_built_in_book_imports_no_sqlalchemy_and_no_numba(tmp_path):
    printed, modules, compiled = run_command(["search", "--moves", "Q16 D4 Q3 D16"], tmp_path)
    assert "total" in printed and "games" in printed  # it answered, from the built-in book
    assert modules == [] and not compiled


@pytest.fixture(scope="module")
def games_book(small_games_book) -> str:
    return small_games_book


def pattern_argv(book: str) -> list[str]:
    return ["pattern", "--book", book, "--moves", "Q16 R14 O17", "--region", "N19:T13"]


def test_pattern_imports_no_sqlalchemy_no_sgf_parser_and_plays_the_position_without_numba(games_book, tmp_path):
    printed, modules, compiled = run_command(pattern_argv(games_book), tmp_path)
    assert "total" in printed
    assert not any(m == "sqlalchemy" or m.startswith("sqlalchemy.") for m in modules)
    assert "fuseki.book.storage.schema" not in modules
    assert "sgfmill" not in modules and "fuseki.book.formats.sgf_reader" not in modules
    assert {"numba", "fuseki.book.analysis.patterns.scan"} <= set(modules)  # what it does need
    assert not compiled  # numba came with the scan, after the moves were played
    # through the Book (a filter that keeps every game): SQLAlchemy, and the same answer
    through_book, modules, _compiled = run_command(pattern_argv(games_book) + ["--year", "1900-"], tmp_path)
    assert "sqlalchemy" in modules and "fuseki.book.storage.schema" in modules
    assert through_book == printed


AS_THE_SCRIPT = """
import atexit, sys
atexit.register(lambda: print("the teardown ran", file=sys.stderr))
sys.argv = ["fuseki"] + {argv!r}
from fuseki.book.ui.fuseki_command import main
raise SystemExit(main())
"""


def run_as_the_script(argv: list[str], home) -> subprocess.CompletedProcess:
    """``fuseki ARGV`` as the console script runs it (``main()`` without arguments), with an
    atexit handler that says whether the interpreter's teardown ran."""
    env = {k: v for k, v in os.environ.items() if k != "FUSEKI_BOOK"} | {"HOME": str(home)}
    return subprocess.run([sys.executable, "-c", AS_THE_SCRIPT.format(argv=argv)], capture_output=True,
                          text=True, env=env, timeout=300)


@pytest.mark.parametrize("command", ["search", "pattern"])
def test_search_and_pattern_end_once_answered_without_the_teardown(command, games_book, tmp_path):
    argv = pattern_argv(games_book) if command == "pattern" else ["search", "--moves", "Q16 D4", "--book", games_book]
    done = run_as_the_script(argv, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().splitlines()[-1].startswith("total ")  # the whole answer, flushed
    assert "the teardown ran" not in done.stderr


def test_other_commands_and_callers_in_python_keep_the_teardown(games_book, tmp_path):
    done = run_as_the_script(["stats", "--book", games_book], tmp_path)  # not in fuseki_command.ENDS_AT_ONCE
    assert done.returncode == 0 and "the teardown ran" in done.stderr, done.stderr
    # main(argv) from Python returns its code (run_command prints after it): the tests above rely on it
    printed, _modules, _compiled = run_command(["search", "--moves", "Q16 D4", "--book", games_book], tmp_path)
    assert "total" in printed


def into_a_closed_pipe(argv: list[str], home) -> subprocess.CompletedProcess:
    """``fuseki ARGV`` (``python -m fuseki``, as a shell runs it) writing into a pipe whose reader
    has already gone, as ``fuseki search ... | head -1``'s does once head has its line: the read
    end is closed before the command starts, so its first write finds no reader, every time."""
    env = {k: v for k, v in os.environ.items() if k != "FUSEKI_BOOK"} | {"HOME": str(home)}
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run([sys.executable, "-m", "fuseki", *argv], stdout=write_end, stderr=subprocess.PIPE,
                              text=True, env=env, timeout=300)
    finally:
        os.close(write_end)


# one that ends at once (fuseki_command.ENDS_AT_ONCE), one that ends with the teardown
@pytest.mark.parametrize("command", ["search", "stats"])
def test_a_reader_that_went_away_ends_the_command_quietly(command, games_book, tmp_path):
    """``fuseki search ... | head -1`` ended with "fuseki search: [Errno 32] Broken pipe" on stderr
    and status 1; as a Unix tool does, it ends without a word, with SIGPIPE's status (141, what a
    shell shows for a writer the signal ended)."""
    argv = ["search", "--moves", "Q16 D4"] if command == "search" else ["stats"]
    done = into_a_closed_pipe([*argv, "--book", games_book], tmp_path)
    assert done.returncode in (0, 141, -13) and done.stderr == "", (done.returncode, done.stderr)
