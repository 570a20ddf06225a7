"""Docstrings and comments name modules that exist: every ``fuseki.…``, ``book.…`` or ``engine.…``
path they give (``book.storage.store.Book``, ``engine.core.coords``) imports, and its attributes
are there, and every file of the project they name (``book/storage/store.py``) exists.  A path
from before a move fails, named with the file that gives it.
"""

from __future__ import annotations

import ast
import importlib
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("book", "engine", "tests", "bench")
# A file of the project's folders, as comments give them (book/storage/store.py).
FILE = re.compile(r"(?<![\w/])(?:\.\./)?((?:book|engine|tests|bench)/[\w/]+\.py)\b")
# A dotted name starting at one of the project's roots (not inside a path such as book/book.dat).
PATH = re.compile(r"(?<![\w./-])((?:fuseki|book|engine)(?:\.[A-Za-z_]\w*)+)")
FILE_SUFFIXES = {"db", "sqlite", "dat", "json", "toml", "sgf", "txt", "py", "md"}  # fuseki.db: a file
# Dotted names that are no module paths: a Book's method on a variable named book, and the
# settings key ``[book] path`` (also ``Book.path``).
NOT_PATHS = {"book.next_moves", "book.path"}


def texts(source: str):
    """The docstrings and comments of a module's source."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                yield doc
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.string


def named_paths(source: str) -> set[str]:
    """The dotted project paths named in ``source``'s docstrings and comments."""
    found = {m.group(1) for text in texts(source) for m in PATH.finditer(text)}
    return {p for p in found if p not in NOT_PATHS and p.rpartition(".")[2] not in FILE_SUFFIXES}


def is_module(name: str) -> bool:
    parts = name.split(".")[1:]  # below fuseki
    base = ROOT.joinpath(*parts)
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file() if parts else True


def resolves(path: str) -> bool:
    """True when ``path`` (below ``fuseki``, ``book`` or ``engine``) names a module, or an
    attribute chain of one."""
    name = path if path.startswith("fuseki.") else f"fuseki.{path}"
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        if is_module(module):
            break
    value = importlib.import_module(module)
    for attribute in parts[cut:]:
        if not hasattr(value, attribute):
            return False
        value = getattr(value, attribute)
    return True


def project_files() -> list[Path]:
    return sorted(p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py"))


@pytest.mark.parametrize("path", project_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_docstrings_and_comments_name_paths_that_import(path):
    stale = sorted(p for p in named_paths(path.read_text(encoding="utf-8")) if not resolves(p))
    assert stale == []


@pytest.mark.parametrize("path", project_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_docstrings_and_comments_name_files_that_exist(path):
    named = {m.group(1) for text in texts(path.read_text(encoding="utf-8")) for m in FILE.finditer(text)}
    assert sorted(f for f in named if not (ROOT / f).is_file()) == []


def test_the_scan_finds_paths_in_docstrings_and_comments_only():
    source = ('"""See ``book.records.GameRecord`` and book/book.dat."""\n'
              'x = "engine.colors"  # as engine.core.base.BLACK\n'
              'def f():\n    """Opens fuseki.db; book.next_moves(board)."""\n')
    assert named_paths(source) == {"book.records.GameRecord", "engine.core.base.BLACK"}


@pytest.mark.parametrize("path, ok", [
    ("book.storage.store.Book", True), ("engine.core.coords", True), ("fuseki.gtp_main", True),
    ("book.model.records.GameRecord", True), ("engine.core.board.Board.play", True),
    ("book.records", False), ("engine.colors", False), ("engine.gtp.commands.state.Nothing", False),
])
def test_a_path_resolves_only_when_it_imports(path, ok):
    assert resolves(path) is ok
