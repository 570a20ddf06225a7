"""Compiled kernels call only kernels of their own file.

numba's on-disk cache (``cache=True``) checks only the file of the function it
loads: a kernel calling a kernel of another file kept running the callee's old
code after that file changed (it happened to the importer's many-games replay).
So an njit function may call njit functions of its own module, numpy and math,
and nothing else of this project.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("engine", "book")   # where the project's modules are
PROJECT = ("fuseki",)          # the import name they are imported by


def _is_njit(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (isinstance(target, ast.Name) and target.id in ("njit", "jit")) or \
        (isinstance(target, ast.Attribute) and target.attr in ("njit", "jit"))


def _project_imports(tree: ast.Module) -> set[str]:
    """Names bound by imports of this project's modules (``from fuseki.engine import x``, ``from . import y``)."""
    names = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0] in PROJECT):
            names.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names
                         if alias.name.split(".")[0] in PROJECT)
    return names


def foreign_calls(source: str) -> list[str]:
    """``kernel -> callee`` for every call from an njit function to a name imported from the project."""
    tree = ast.parse(source)
    imported = _project_imports(tree)
    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and any(map(_is_njit, node.decorator_list)):
            # the body only: the decorator (engine.core.lazy_jit's njit, a project name) is no call of the kernel's
            for call in (inner for statement in node.body for inner in ast.walk(statement)):
                if not isinstance(call, ast.Call):
                    continue
                base = call.func
                while isinstance(base, ast.Attribute):
                    base = base.value
                if isinstance(base, ast.Name) and base.id in imported:
                    found.append(f"{node.name} -> {ast.unparse(call.func)}")
    return found


def kernel_files() -> list[Path]:
    return sorted(path for folder in FOLDERS for path in (ROOT / folder).rglob("*.py")
                  if "njit" in path.read_text(encoding="utf-8"))


def test_the_project_has_kernels_to_check():
    assert {path.name for path in kernel_files()} >= {"_kernels.py", "records.py", "sqlite_image.py"}


@pytest.mark.parametrize("path", kernel_files(), ids=lambda path: str(path.relative_to(ROOT)))
def test_kernels_call_only_kernels_of_their_own_file(path):
    assert foreign_calls(path.read_text(encoding="utf-8")) == []


def test_a_call_into_another_files_kernel_is_found():
    source = (
        "from numba import njit\n"
        "import numpy as np\n"
        "from fuseki.engine.core import _kernels as K\n"
        "from fuseki.engine.core._kernels import replay\n"
        "from .records import scan\n"
        "@njit(cache=True)\n"
        "def own(a):\n"
        "    return np.sort(a)\n"
        "@njit(cache=True)\n"
        "def many(a):\n"
        "    own(a)\n"
        "    K.replay(a)\n"
        "    replay(a)\n"
        "    return scan(a)\n"
        "def not_compiled(a):\n"
        "    return K.replay(a)\n")
    assert foreign_calls(source) == ["many -> K.replay", "many -> replay", "many -> scan"]


def test_the_kernels_copies_of_the_base_constants_equal_the_originals():
    """The kernels keep their own copies of the colour codes and PASS (their cache sees only
    their file); a copy that drifted from ``base`` would make the board and the book disagree."""
    from fuseki.engine.core import _kernels, base

    for name in ("EMPTY", "BLACK", "WHITE", "BORDER", "PASS", "END"):
        assert getattr(_kernels, name) == getattr(base, name), name
