"""docs/layout.md names every module of the tree, and no file that is not there.

The layout's table: each row's first column names a file or a folder (backticked, a folder
ending in ``/``); in its last column, the backticked names ending in a file suffix are files
of that folder (``commands/state.py``, globs such as ``*_cli.py`` allowed).  Every tracked
``.py`` under engine/, book/ and bench/ (``__init__.py`` aside), the two ways in at the root and the
page's ES modules (book/ui/web/static/*.js) must be named so; every name must be a file.
A row's layer is the one docs/architecture.md gives each module it names (its longest prefix
in the ``layers`` block, which tests/test_layers.py holds the imports to), so the two pages
cannot place a module differently.  No two modules of engine/ and book/ share a file name, so
a name (in the table, a docstring, a traceback) says which module it is.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
import subprocess

from conftest import ROOT
from layer_rules import LAYERS, layer_of, module_name

FILE_NAME = re.compile(r"`([^`\s]+\.(?:py|js|txt|toml|html|css))`")


def _tracked() -> list[str]:
    done = subprocess.run(["git", "ls-files", "engine", "book", "bench", "gtp_main.py", "__main__.py", "configs"],
                          cwd=ROOT, capture_output=True, text=True, check=True)
    return done.stdout.split()


def _rows(files: list[str]) -> list[tuple[str, list[str], list[str]]]:
    """Each row of the table: its layer, the files it names, and its names that match no file."""
    rows = [line for line in (ROOT / "docs" / "layout.md").read_text().splitlines() if line.startswith("| `")]
    assert len(rows) > 10, "docs/layout.md's table not found"
    table = []
    for row in rows:
        cells = row.strip().strip("|").split("|")
        first, layer, holds = cells[0], cells[1].strip(), cells[-1]
        named, unknown = [], []
        for head in re.findall(r"`([^`]+)`", first):
            patterns = [head + name for name in FILE_NAME.findall(holds)] if head.endswith("/") else [head]
            for pattern in patterns:
                found = [f for f in files if fnmatch.fnmatchcase(f, pattern)]
                if not found and (head.endswith("/") or not (ROOT / pattern).exists()):
                    unknown.append(pattern)
                named += found
        table.append((layer, named, unknown))
    return table


def test_layout_names_every_module_and_only_files_that_exist():
    files = _tracked()
    wanted = [f for f in files if (f.endswith(".py") and not f.endswith("__init__.py"))
              or re.fullmatch(r"book/ui/web/static/[^/]+\.js", f)]
    assert len(wanted) > 100
    table = _rows(files)
    named = {f for _layer, found, _unknown in table for f in found}
    unknown = [pattern for _layer, _found, missing in table for pattern in missing]
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


def test_each_row_names_the_layer_the_architecture_gives_its_modules():
    misplaced = []
    for layer, found, _unknown in _rows(_tracked()):
        for path in found:
            if path.endswith(".py"):
                index = layer_of(module_name(ROOT / path))
                title = "no layer" if index is None else LAYERS[index][0]
                if title != layer:
                    misplaced.append(f"{path}: layout.md says {layer or 'no layer'}, architecture.md {title}")
    assert misplaced == []
