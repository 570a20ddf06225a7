"""docs/layout.md names every module of the tree, and no file that is not there.

The layout's table: each row's first column names a file or a folder (backticked, a folder
ending in ``/``); in its last column, the backticked names ending in a file suffix are files
of that folder (``commands/state.py``, globs such as ``*_cli.py`` allowed).  Every tracked
``.py`` under engine/ and book/ (``__init__.py`` aside), the two ways in at the root and the
page's ES modules (book/ui/web/static/*.js) must be named so; every name must be a file.
No two modules of engine/ and book/ share a file name, so a name (in the table, a docstring,
a traceback) says which module it is.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
import subprocess

from conftest import ROOT

FILE_NAME = re.compile(r"`([^`\s]+\.(?:py|js|txt|toml|html|css))`")


def _tracked() -> list[str]:
    done = subprocess.run(["git", "ls-files", "engine", "book", "gtp_main.py", "__main__.py", "configs"],
                          cwd=ROOT, capture_output=True, text=True, check=True)
    return done.stdout.split()


def _named(files: list[str]) -> tuple[set[str], list[str]]:
    """The files the table names, and the names that match no file."""
    named, unknown = set(), []
    rows = [line for line in (ROOT / "docs" / "layout.md").read_text().splitlines() if line.startswith("| `")]
    assert len(rows) > 10, "docs/layout.md's table not found"
    for row in rows:
        cells = row.strip().strip("|").split("|")
        first, holds = cells[0], cells[-1]
        for head in re.findall(r"`([^`]+)`", first):
            patterns = [head + name for name in FILE_NAME.findall(holds)] if head.endswith("/") else [head]
            for pattern in patterns:
                found = [f for f in files if fnmatch.fnmatchcase(f, pattern)]
                if not found and (head.endswith("/") or not (ROOT / pattern).exists()):
                    unknown.append(pattern)
                named.update(found)
    return named, unknown


def test_layout_names_every_module_and_only_files_that_exist():
    files = _tracked()
    wanted = [f for f in files if (f.endswith(".py") and not f.endswith("__init__.py"))
              or re.fullmatch(r"book/ui/web/static/[^/]+\.js", f)]
    assert len(wanted) > 100
    named, unknown = _named(files)
    assert [f for f in wanted if f not in named] == [], "docs/layout.md does not name these"
    assert unknown == [], "docs/layout.md names files that are not there"


def test_no_two_modules_share_a_name():
    by_name: dict[str, list[str]] = {}
    for path in _tracked():
        name = posixpath.basename(path)
        if path.startswith(("engine/", "book/")) and name.endswith(".py") and name != "__init__.py":
            by_name.setdefault(name, []).append(path)
    assert len(by_name) > 100
    assert {name: paths for name, paths in by_name.items() if len(paths) > 1} == {}, \
        "modules of engine/ and book/ that share a name: rename one to say what it is"
