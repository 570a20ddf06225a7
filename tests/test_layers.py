"""The layers point one way: the engine never imports the book, the book uses only the
engine's public core, and no module outgrows the reading budget.

``../shared/docs/architecture.md`` draws the layers.  An AST scan of every module finds
its imports, at the top or inside functions, absolute (``fuseki.book...``) or relative.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 600
# What the book may take from the engine: the core's public modules, the players' chooser
# interface, and the settings (the book finds the engine's default book location there).
BOOK_MAY_IMPORT = ("fuseki.engine.core.base", "fuseki.engine.core.coords", "fuseki.engine.core.board",
                   "fuseki.engine.core.zobrist", "fuseki.engine.players.chooser",
                   "fuseki.engine.gtp.config", "fuseki.engine.core", "fuseki.engine.players.match_cli",
                   "fuseki.engine.players.katago")  # the AI value cache asks KataGo (book.ai)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["fuseki", *parts])


def imports(source: str, name: str, is_package: bool = False) -> list[str]:
    """Every module ``source`` (the module ``name``) imports, relative imports resolved;
    ``from X import y`` counts as ``X.y``, so that importing a submodule by name is seen."""
    found = []
    package = name if is_package else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found += [f"{module}.{alias.name}" for alias in node.names]
    return found


def project_modules(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


def _ids(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("path", project_modules("engine"), ids=_ids)
def test_the_engine_never_imports_the_book(path):
    found = imports(path.read_text(encoding="utf-8"), module_name(path), path.name == "__init__.py")
    assert [m for m in found if m == "fuseki.book" or m.startswith("fuseki.book.")] == []


@pytest.mark.parametrize("path", project_modules("book"), ids=_ids)
def test_the_book_uses_only_the_engines_public_core(path):
    found = imports(path.read_text(encoding="utf-8"), module_name(path), path.name == "__init__.py")
    engine = [m for m in found if m.startswith("fuseki.engine.")]
    private = [m for m in engine if not any(m == allowed or m.startswith(allowed + ".")
                                            for allowed in BOOK_MAY_IMPORT)
               or any(part.startswith("_") for part in m.split("."))]
    assert private == []


@pytest.mark.parametrize("source, expected", [
    ("from fuseki.book.storage.store import Book", ["fuseki.book.storage.store.Book"]),
    ("def f():\n    import fuseki.book.chooser", ["fuseki.book.chooser"]),
    ("from ...book import chooser", ["fuseki.book.chooser"]),
    ("from . import protocol", ["fuseki.engine.gtp.protocol"]),
])
def test_the_scan_sees_every_kind_of_import(source, expected):
    assert imports(source, "fuseki.engine.gtp.cli") == expected


def test_a_private_kernel_import_from_the_book_is_caught():
    found = imports("from fuseki.engine.core import _kernels as K", "fuseki.book.pipeline.importer")
    assert any(part.startswith("_") for m in found for part in m.split("."))


@pytest.mark.parametrize("path", sorted(p for folder in ("engine", "book", "tests", "bench")
                                        for p in (ROOT / folder).rglob("*.py")) + [ROOT / "gtp_main.py"],
                         ids=_ids)
def test_no_module_is_over_the_reading_budget(path):
    lines = path.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{lines} lines"
