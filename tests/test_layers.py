"""The layers point one way: every module of book/ and engine/, gtp_main.py, __main__.py and
bench/ imports only from its own layer or below, no two modules import each other (directly or
round a circle), the engine never imports the book, the book uses only the engine's public core,
and inside a layer the orders docs/architecture.md states hold.

The rules are read from docs/architecture.md's ``layers`` blocks, so the page and the test cannot
disagree.  An AST scan of every module finds its imports: at the top or inside functions,
absolute (``fuseki.book...``) or relative, ``importlib.import_module``/``__import__`` calls with a
literal name anywhere, and the modules that ``book/ui/fuseki_command.py`` (the one registry) names as strings
and loads by name.  An import whose module name is built at run time, outside the registry, is
itself a failure: the scan could not follow it.
"""

from __future__ import annotations

import ast
import functools
from fnmatch import fnmatchcase
from pathlib import Path

import pytest

from layer_rules import ARCHITECTURE, BOOK_MAY_IMPORT, LAYERS, NEVER, architecture_rules, layer_of, module_name

ROOT = Path(__file__).resolve().parent.parent
LOADS_BY_NAME = ("book/ui/fuseki_command.py",)  # the registry: it imports its subcommands by their names
SCANNED = ("engine", "book", "bench")  # and the files of PROGRAMS
PROGRAMS = ("gtp_main.py", "__main__.py")
# Calls that import the module their first argument names.
IMPORTING_CALLS = {"import_module", "__import__", "spec_from_file_location"}
# A bare name that means a project module: bench/ loads the checkout's gtp_main from the root.
ROOT_MODULES = {"gtp_main": "fuseki.gtp_main"}


def _call_name(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def imports(source: str, name: str, is_package: bool = False, by_name: bool = False) -> list[str]:
    """Every module ``source`` (the module ``name``) imports, relative imports resolved;
    ``from X import y`` counts as ``X.y``, so that importing a submodule by name is seen.
    A call of ``import_module``/``__import__`` with a literal counts as an import of it, one whose
    name is built at run time as ``"<run time>"``.  With ``by_name``, every string constant naming
    a ``fuseki.`` module counts too, and its run-time imports are allowed (it is the registry)."""
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
        elif isinstance(node, ast.Call) and _call_name(node) in IMPORTING_CALLS and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                found.append(ROOT_MODULES.get(first.value, first.value))
            elif not by_name:
                found.append(RUN_TIME)
        elif by_name and isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and node.value.startswith("fuseki.") and node.value.replace(".", "").replace("_", "").isalnum():
            found.append(node.value)
    return found


RUN_TIME = "<run time>"  # an import whose module name the scan cannot read


def project_modules(*folders: str, programs: bool = False) -> list[Path]:
    found = [p for folder in folders for p in (ROOT / folder).rglob("*.py")]
    return sorted(found + ([ROOT / name for name in PROGRAMS] if programs else []))


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


@functools.cache
def _project_graph() -> dict[str, frozenset[str]]:
    return {name: frozenset(found) for name, found in import_graph(
        {module_name(p): (p.read_text(encoding="utf-8"), p.name == "__init__.py", _ids(p) in LOADS_BY_NAME)
         for p in project_modules(*SCANNED, programs=True)}).items()}


def project_graph() -> dict[str, set[str]]:
    """The project's import graph, read once a run (six tests ask it; a test gets its own copy)."""
    return {name: set(found) for name, found in _project_graph().items()}


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


def test_no_module_imports_a_name_built_at_run_time():
    graph_input = {module_name(p): module_imports(p) for p in project_modules(*SCANNED, programs=True)}
    assert [m for m, found in sorted(graph_input.items()) if RUN_TIME in found] == []


def order_breaches(graph: dict[str, set[str]], never=NEVER) -> list[str]:
    """``"a imports b (through c...)"`` for each module under a rule's lower prefix that reaches a
    module under its higher prefix, directly or through other modules."""
    def under(module, prefix):  # a prefix may hold shell-style wildcards: fuseki.book.ui.*cli*
        return fnmatchcase(module, prefix) or fnmatchcase(module, prefix + ".*")

    found = []
    for low, high in never:
        for start in sorted(m for m in graph if under(m, low)):
            seen, stack = {start: [start]}, [start]
            while stack:
                node = stack.pop()
                for nxt in sorted(graph.get(node, ())):
                    if nxt not in seen:
                        seen[nxt] = seen[node] + [nxt]
                        stack.append(nxt)
            # a module is not its own breach: "commands never import commands" means other commands
            found += [" -> ".join(path) for m, path in sorted(seen.items()) if m != start and under(m, high)]
    return found


def test_the_orders_inside_a_layer_hold():
    assert NEVER, "docs/architecture.md states at least the pipeline's order"
    assert order_breaches(project_graph()) == []


def test_the_programs_and_the_benchmarks_are_scanned():
    graph = project_graph()
    assert "fuseki.gtp_main" in graph["fuseki.bench.book"]  # __import__("gtp_main")
    assert "fuseki.book.ui.fuseki_command" in graph["fuseki.__main__"]
    assert "fuseki.book.play.book_chooser" in graph["fuseki.gtp_main"]
    assert layer_of("fuseki.bench.book") == layer_of("fuseki.gtp_main") == len(LAYERS) - 1


def test_the_rules_are_the_ones_the_architecture_page_states():
    text = ARCHITECTURE.read_text(encoding="utf-8")
    layers, may_import, never = architecture_rules(text)
    assert [title for title, _ in layers][:3] == ["engine core", "engine players", "engine GTP"]
    assert not any("katago" in name for name in may_import)  # KataGo's client is the book's own
    assert ("fuseki.book.analysis.pipeline", "fuseki.book.analysis.patterns") in never
    assert "book/analysis/katago.py" in text  # where it sits, and the prose says why
    assert architecture_rules("# no rules here") == ([], (), [])


def test_no_modules_import_each_other_round_a_circle():
    cycle = find_cycle(project_graph())
    assert cycle is None, " -> ".join(cycle or [])


# --- the scanner finds what it must -----------------------------------------------------------------

@pytest.mark.parametrize("source, expected", [
    ("from fuseki.book.storage.store import Book", ["fuseki.book.storage.store.Book"]),
    ("def f():\n    import fuseki.book.play.book_chooser", ["fuseki.book.play.book_chooser"]),
    ("from ...book.play import book_chooser", ["fuseki.book.play.book_chooser"]),
    ("from . import protocol", ["fuseki.engine.gtp.protocol"]),
])
def test_the_scan_sees_every_kind_of_import(source, expected):
    assert imports(source, "fuseki.engine.gtp.cli") == expected


def test_the_scan_sees_modules_loaded_by_name_where_told():
    source = 'MODULES = ["fuseki.book.ui.shell", "not a module", "fuseki. two words"]'
    assert imports(source, "fuseki.book.ui.fuseki_command", by_name=True) == ["fuseki.book.ui.shell"]
    assert imports(source, "fuseki.book.ui.fuseki_command") == []


def test_the_fuseki_command_loads_its_subcommands_by_name():
    registry = ROOT / LOADS_BY_NAME[0]
    assert "fuseki.book.ui.commands.shell_command" in project_graph()[module_name(registry)]


def test_a_private_kernel_import_from_the_book_is_caught():
    found = imports("from fuseki.engine.core import _kernels as K", "fuseki.book.analysis.pipeline.importer")
    assert any(part.startswith("_") for m in found for part in m.split("."))


def test_a_planted_upward_import_is_caught():
    graph = import_graph({
        "fuseki.book.storage.store": ("def f():\n    from fuseki.book.ui import fuseki_command\n", False, False),
        "fuseki.book.ui.fuseki_command": ('M = ["fuseki.book.storage.store"]\n', False, True),
        "fuseki.book.stray": ("from fuseki.book.storage import store\n", False, False),
    })
    assert upward_imports(graph) == [
        "fuseki.book.storage.store (book storage) imports fuseki.book.ui.fuseki_command (book ways in)",
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


def test_a_module_name_built_at_run_time_is_caught_outside_the_registry():
    source = "import importlib\ndef f(name):\n    return importlib.import_module('fuseki.book.' + name)\n"
    assert imports(source, "fuseki.book.storage.store") == ["importlib", RUN_TIME]
    assert imports("def f(n):\n    return __import__(n)\n", "fuseki.bench.book") == [RUN_TIME]
    # the registry's run-time import is allowed (its modules are the strings it names)
    assert RUN_TIME not in imports(source, "fuseki.book.ui.fuseki_command", by_name=True)


def test_a_literal_import_call_anywhere_is_followed():
    graph = import_graph({
        "fuseki.book.storage.store": ("import importlib\ndef f():\n    return importlib.import_module("
                                      "'fuseki.book.ui.fuseki_command')\n", False, False),
        "fuseki.book.ui.fuseki_command": ("x = 1\n", False, True),
        "fuseki.engine.core.board": ("def f():\n    return __import__('fuseki.book.storage.store')\n", False, False),
        "fuseki.bench.book": ("__import__('gtp_main').use_this_checkout()\n", False, False),
        "fuseki.gtp_main": ("x = 1\n", False, False),
    })
    assert upward_imports(graph) == [
        "fuseki.book.storage.store (book storage) imports fuseki.book.ui.fuseki_command (book ways in)",
        "fuseki.engine.core.board (engine core) imports fuseki.book.storage.store (book storage)"]
    assert graph["fuseki.bench.book"] == {"fuseki.gtp_main"}


def test_a_planted_breach_of_an_order_inside_a_layer_is_caught():
    graph = import_graph({
        "fuseki.book.analysis.pipeline.importer": ("from fuseki.book.analysis import tree\n", False, False),
        "fuseki.book.analysis.tree": ("def f():\n    from fuseki.book.analysis.patterns import search\n", False, False),
        "fuseki.book.analysis.patterns.search": ("x = 1\n", False, False),
        "fuseki.book.analysis.patterns.index": ("from fuseki.book.analysis.pipeline import importer\n", False, False),
    })
    assert upward_imports(graph) == []  # one layer: the layer order alone cannot see it
    assert order_breaches(graph) == [
        "fuseki.book.analysis.pipeline.importer -> fuseki.book.analysis.tree -> fuseki.book.analysis.patterns.search"]


def test_a_planted_command_import_from_the_page_the_shell_or_another_command_is_caught():
    graph = import_graph({
        "fuseki.book.ui.web.app": ("from fuseki.book.ui import reading\n"
                                   "from fuseki.book.ui.present import ai_text\n", False, False),
        "fuseki.book.ui.reading": ("x = 1\n", False, False),
        "fuseki.book.ui.present.ai_text": ("def f():\n    from fuseki.book.ui.cli_shared import open_book\n",
                                           False, False),
        "fuseki.book.ui.cli_shared": ("x = 1\n", False, False),
        "fuseki.book.ui.shell": ("def f():\n    from fuseki.book.ui.commands.pattern_command import result_text\n",
                                 False, False),
        "fuseki.book.ui.commands.pattern_command": ("from fuseki.book.ui.present import ai_text\n", False, False),
        "fuseki.book.ui.commands.serve_command": ("from fuseki.book.ui.web import app\n"
                                                  "from fuseki.book.ui.commands import search_command\n",
                                                  False, False),
        "fuseki.book.ui.commands.search_command": ("x = 1\n", False, False),
    })
    assert order_breaches(graph) == [
        "fuseki.book.ui.web.app -> fuseki.book.ui.present.ai_text -> fuseki.book.ui.cli_shared",
        "fuseki.book.ui.shell -> fuseki.book.ui.commands.pattern_command",
        "fuseki.book.ui.commands.serve_command -> fuseki.book.ui.commands.search_command"]


def test_a_planted_import_in_a_program_or_a_benchmark_is_caught():
    graph = import_graph({
        "fuseki.gtp_main": ("x = 1\n", False, False),
        "fuseki.book.play.book_chooser": ("import fuseki.gtp_main\n", False, False),
        "fuseki.engine.gtp.cli": ("from fuseki.bench import book\n", False, False),
        "fuseki.bench.book": ("x = 1\n", False, False),
    })
    assert upward_imports(graph) == [
        "fuseki.book.play.book_chooser (book play) imports fuseki.gtp_main (programs)",
        "fuseki.engine.gtp.cli (engine GTP) imports fuseki.bench.book (programs)"]


# --- one import path per public name ----------------------------------------------------------------

def _bound_by_import(tree: ast.Module, imports: list[ast.ImportFrom]) -> set[str]:
    """The names a module binds by ``from fuseki... import name`` (another module's names it
    holds, not ones it defines), of its ``imports``.  Imports inside functions count too: the
    scan errs on the side of seeing a second path."""
    names = set()
    for node in imports:
        if node.level or (node.module or "").startswith("fuseki"):
            names.update(alias.asname or alias.name for alias in node.names)
    return names - _defined(tree)


def _defined(tree: ast.Module) -> set[str]:
    found = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                found.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return found


def second_paths(sources: dict[str, tuple[str, bool]]) -> list[str]:
    """Each place that takes a project name through a module that only imports it: ``from A import
    n`` or ``A.n`` where A got ``n`` from elsewhere (a re-export), from {module: (source, is_package)}.
    A submodule taken from its package (``from fuseki.engine.core import board``) is its own path."""
    trees = {name: ast.parse(source) for name, (source, _) in sources.items()}
    # each tree walked once (three walks of the project and its tests were most of this check's time)
    imports, attributes = {}, {}
    for name, tree in trees.items():
        nodes = list(ast.walk(tree))
        imports[name] = [node for node in nodes if isinstance(node, ast.ImportFrom)]
        attributes[name] = [node for node in nodes if isinstance(node, ast.Attribute)]
    borrowed = {name: _bound_by_import(tree, imports[name]) for name, tree in trees.items()}
    found = []
    for name in sorted(trees):
        local_modules = {}
        for node in imports[name]:
            if node.level or node.module not in sources:
                continue
            for alias in node.names:
                if f"{node.module}.{alias.name}" in sources:
                    local_modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                elif alias.name in borrowed[node.module]:
                    found.append(f"{name}: from {node.module} import {alias.name}")
        for node in attributes[name]:
            if isinstance(node.value, ast.Name) \
                    and (module := local_modules.get(node.value.id)) and node.attr in borrowed[module] \
                    and f"{module}.{node.attr}" not in sources:
                found.append(f"{name}: {node.value.id}.{node.attr} (of {module})")
    return sorted(set(found))


@pytest.mark.slow  # every module and test parsed and walked: 11 s of the quick suite on two loaded cores
def test_each_name_is_imported_from_the_module_that_defines_it():
    sources = {module_name(p): (p.read_text(encoding="utf-8"), p.name == "__init__.py")
               for p in project_modules(*SCANNED, "tests", programs=True)}
    assert second_paths(sources) == []


def test_a_planted_second_path_is_caught():
    sources = {
        "fuseki.engine.core.base": ("class IllegalMove(Exception):\n    pass\n", False),
        "fuseki.engine.core.board": ("import os\nfrom fuseki.engine.core.base import IllegalMove\n", False),
        "fuseki.engine.core": ("", True),
        "fuseki.book.analysis.ai": ("from fuseki.engine.core.board import IllegalMove\n", False),
        "fuseki.book.analysis.tree": ("from fuseki.engine.core import board\nboard.IllegalMove\nboard.os\n", False),
        "fuseki.book.play.book_chooser": ("from fuseki.engine.core.base import IllegalMove\n"
                                "from fuseki.engine.core import board\n", False),
    }
    assert second_paths(sources) == ["fuseki.book.analysis.ai: from fuseki.engine.core.board import IllegalMove",
                                     "fuseki.book.analysis.tree: board.IllegalMove (of fuseki.engine.core.board)"]


def test_importing_the_web_package_loads_no_flask():
    import subprocess
    import sys

    code = "import sys, fuseki.book.ui.web; print(sorted(m for m in sys.modules if m.split('.')[0] == 'flask'))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_each_folder_of_the_book_is_one_layer():
    """A module's path says its layer: book/ holds no module of its own, each of its folders is
    one layer and each book layer one folder."""
    book = ROOT / "book"
    assert sorted(p.name for p in book.glob("*.py")) == ["__init__.py"]
    folders = sorted(f"fuseki.book.{p.parent.name}" for p in book.glob("*/__init__.py"))
    book_layers = sorted(prefix for _, prefixes in LAYERS for prefix in prefixes if prefix.startswith("fuseki.book"))
    assert book_layers == folders
    assert all(len(prefixes) == 1 for _, prefixes in LAYERS if prefixes[0].startswith("fuseki.book"))
