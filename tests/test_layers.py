"""The layers point one way: every module of book/ and engine/ imports only from its own layer
or below, no two modules import each other (directly or round a circle), the engine never
imports the book, the book uses only the engine's public core, and no module outgrows the
reading budget.

``docs/architecture.md`` draws the layers.  An AST scan of every module finds its imports, at
the top or inside functions, absolute (``fuseki.book...``) or relative, and the modules that
``book/ui/cli.py`` loads by name (its strings naming a project module).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 600

# Bottom to top: a module may import its own layer and the layers below.  A module belongs to the
# layer of the longest prefix naming it.  The engine and the book are two stacks on the engine core:
# the book reaches into the engine only as BOOK_MAY_IMPORT says.
LAYERS = [
    ("engine core", ["fuseki.engine.core", "fuseki.engine.config"]),
    ("engine players", ["fuseki.engine.players"]),
    ("engine GTP", ["fuseki.engine.gtp"]),
    ("book model", ["fuseki.book.model", "fuseki.book.builtin"]),
    ("book formats", ["fuseki.book.formats"]),
    ("book storage", ["fuseki.book.storage"]),
    ("book pipeline, patterns and the AI", ["fuseki.book.pipeline", "fuseki.book.patterns", "fuseki.book.ai",
                                             "fuseki.book.ai_lines", "fuseki.book.annotate", "fuseki.book.mistakes",
                                             "fuseki.book.tree"]),
    ("book builders", ["fuseki.book.statbook_build"]),
    ("book choosers", ["fuseki.book.policies", "fuseki.book.chooser", "fuseki.book.corner_chooser",
                       "fuseki.book.practice"]),
    ("book ways in", ["fuseki.book.ui"]),
]
# What the book may take from the engine: the core's public modules, the settings reader, the
# players' chooser interface, and the match command (which the fuseki command loads by name).
BOOK_MAY_IMPORT = ("fuseki.engine.core.base", "fuseki.engine.core.coords", "fuseki.engine.core.board",
                   "fuseki.engine.core.zobrist", "fuseki.engine.players.chooser",
                   "fuseki.engine.config", "fuseki.engine.core", "fuseki.engine.players.match_cli",
                   "fuseki.engine.players.katago")  # the AI value cache asks KataGo (book.ai)
LOADS_BY_NAME = ("book/ui/cli.py",)  # modules that import others by their names (importlib)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["fuseki", *parts])


def imports(source: str, name: str, is_package: bool = False, by_name: bool = False) -> list[str]:
    """Every module ``source`` (the module ``name``) imports, relative imports resolved;
    ``from X import y`` counts as ``X.y``, so that importing a submodule by name is seen.
    With ``by_name``, every string constant naming a ``fuseki.`` module counts too."""
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
        elif by_name and isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and node.value.startswith("fuseki.") and node.value.replace(".", "").replace("_", "").isalnum():
            found.append(node.value)
    return found


def project_modules(*folders: str) -> list[Path]:
    return sorted(p for folder in folders for p in (ROOT / folder).rglob("*.py"))


def _ids(path: Path) -> str:
    return str(path.relative_to(ROOT))


def module_imports(path: Path) -> list[str]:
    return imports(path.read_text(encoding="utf-8"), module_name(path), path.name == "__init__.py",
                   by_name=_ids(path) in LOADS_BY_NAME)


def resolve(name: str, modules) -> str | None:
    """The project module an import names: ``fuseki.book.storage.store.Book`` -> ``...store``."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def import_graph(sources: dict[str, tuple[str, bool, bool]]) -> dict[str, set[str]]:
    """module -> the project modules it imports, from {module: (source, is_package, by_name)}."""
    return {name: {found for imported in imports(source, name, is_package, by_name)
                   if (found := resolve(imported, sources)) not in (None, name)}
            for name, (source, is_package, by_name) in sources.items()}


def project_graph() -> dict[str, set[str]]:
    return import_graph({module_name(p): (p.read_text(encoding="utf-8"), p.name == "__init__.py",
                                          _ids(p) in LOADS_BY_NAME)
                         for p in project_modules("book", "engine")})


def layer_of(module: str, layers=LAYERS) -> int | None:
    """The index in ``layers`` of the longest prefix naming ``module``; None when none does."""
    best, depth = None, -1
    for index, (_title, prefixes) in enumerate(layers):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > depth:
                best, depth = index, len(prefix)
    return best


def upward_imports(graph: dict[str, set[str]], layers=LAYERS) -> list[str]:
    """``"a (layer) imports b (higher layer)"`` for each import that points up, and ``"a: no
    layer"`` for a module that imports project modules but no layer names."""
    found = []
    for module, imported in sorted(graph.items()):
        mine = layer_of(module, layers)
        if mine is None:
            if imported:
                found.append(f"{module}: no layer")
            continue
        for other in sorted(imported):
            theirs = layer_of(other, layers)
            if theirs is not None and theirs > mine:
                found.append(f"{module} ({layers[mine][0]}) imports {other} ({layers[theirs][0]})")
    return found


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle of imports (``[a, b, ..., a]``), or None: a depth-first search."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return None


# --- the rules --------------------------------------------------------------------------------------

@pytest.mark.parametrize("path", project_modules("engine"), ids=_ids)
def test_the_engine_never_imports_the_book(path):
    found = module_imports(path)
    assert [m for m in found if m == "fuseki.book" or m.startswith("fuseki.book.")] == []


@pytest.mark.parametrize("path", project_modules("book"), ids=_ids)
def test_the_book_uses_only_the_engines_public_core(path):
    engine = [m for m in module_imports(path) if m.startswith("fuseki.engine.")]
    private = [m for m in engine if not any(m == allowed or m.startswith(allowed + ".")
                                            for allowed in BOOK_MAY_IMPORT)
               or any(part.startswith("_") for part in m.split("."))]
    assert private == []


def test_every_module_imports_only_its_own_layer_or_below():
    assert upward_imports(project_graph()) == []


def test_every_module_that_imports_the_project_has_a_layer():
    graph = project_graph()
    assert [m for m in sorted(graph) if graph[m] and layer_of(m) is None] == []


def test_no_modules_import_each_other_round_a_circle():
    cycle = find_cycle(project_graph())
    assert cycle is None, " -> ".join(cycle or [])


# --- the scanner finds what it must -----------------------------------------------------------------

@pytest.mark.parametrize("source, expected", [
    ("from fuseki.book.storage.store import Book", ["fuseki.book.storage.store.Book"]),
    ("def f():\n    import fuseki.book.chooser", ["fuseki.book.chooser"]),
    ("from ...book import chooser", ["fuseki.book.chooser"]),
    ("from . import protocol", ["fuseki.engine.gtp.protocol"]),
])
def test_the_scan_sees_every_kind_of_import(source, expected):
    assert imports(source, "fuseki.engine.gtp.cli") == expected


def test_the_scan_sees_modules_loaded_by_name_where_told():
    source = 'MODULES = ["fuseki.book.ui.shell", "not a module", "fuseki. two words"]'
    assert imports(source, "fuseki.book.ui.cli", by_name=True) == ["fuseki.book.ui.shell"]
    assert imports(source, "fuseki.book.ui.cli") == []


def test_the_fuseki_command_loads_its_subcommands_by_name():
    cli = ROOT / "book" / "ui" / "cli.py"
    assert "fuseki.book.ui.shell_cli" in project_graph()[module_name(cli)]


def test_a_private_kernel_import_from_the_book_is_caught():
    found = imports("from fuseki.engine.core import _kernels as K", "fuseki.book.pipeline.importer")
    assert any(part.startswith("_") for m in found for part in m.split("."))


def test_a_planted_upward_import_is_caught():
    graph = import_graph({
        "fuseki.book.storage.store": ("def f():\n    from fuseki.book.ui import cli\n", False, False),
        "fuseki.book.ui.cli": ('M = ["fuseki.book.storage.store"]\n', False, True),
        "fuseki.book.stray": ("from fuseki.book.storage import store\n", False, False),
    })
    assert upward_imports(graph) == [
        "fuseki.book.storage.store (book storage) imports fuseki.book.ui.cli (book ways in)",
        "fuseki.book.stray: no layer"]


def test_a_planted_cycle_is_found():
    graph = import_graph({
        "fuseki.book.storage.a": ("from fuseki.book.storage import b\n", False, False),
        "fuseki.book.storage.b": ("def f():\n    from fuseki.book.storage.c import x\n", False, False),
        "fuseki.book.storage.c": ("from . import a\n", False, False),
        "fuseki.book.storage.d": ("from fuseki.book.storage import a\n", False, False),
    })
    assert find_cycle(graph) == ["fuseki.book.storage.a", "fuseki.book.storage.b", "fuseki.book.storage.c",
                                 "fuseki.book.storage.a"]
    del graph["fuseki.book.storage.c"]
    assert find_cycle(graph) is None


@pytest.mark.parametrize("path", project_modules("engine", "book", "tests", "bench") + [ROOT / "gtp_main.py"],
                         ids=_ids)
def test_no_module_is_over_the_reading_budget(path):
    lines = path.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{lines} lines"
