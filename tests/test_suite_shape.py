"""The suite's shape (issue 41): no test module imports another.

Shared helpers live in support modules beside the tests (tests/games.py, replay.py, services.py,
...: names that do not start with ``test_``) and shared fixtures in tests/conftest.py.  A test
module imported by another is collected as a test module and loaded again as an import (two
copies of its globals, its tests run twice if the importer is collected with them), and a reader
cannot tell a helper from a test.  An AST scan of every tests/*.py finds the imports, at the
top or inside functions, plain (``test_store``) or through the package (``tests.test_store``),
and ``importlib.import_module``/``__import__`` calls with a literal name.  Support modules are
imported by their plain name (``games``, not ``tests.games``: under two names they would be
loaded twice too).

``PENDING`` lists the imports between the web tests that remain while those modules are being
rewritten (the "browsers" work); an entry that no longer occurs fails too, so the list only
shrinks.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
IMPORTING_CALLS = {"import_module", "__import__"}

# importer -> the test modules it still imports (none: the list stays for a move under way)
PENDING: dict[str, set[str]] = {}


def imported_modules(source: str) -> set[str]:
    """Every module name ``source`` imports, anywhere in it (absolute imports; a relative one names no test module)."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)
              and (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) in IMPORTING_CALLS):
            names.add(node.args[0].value)
    return names


def imported_test_modules(source: str) -> set[str]:
    """The test modules (``test_*``, plain or as ``tests.test_*``) that ``source`` imports."""
    found = set()
    for name in imported_modules(source):
        parts = name.split(".")
        if parts[0] == "tests" and len(parts) > 1:
            parts = parts[1:]
        if parts[0].startswith("test_"):
            found.add(parts[0])
    return found


def offences(folder: Path) -> dict[str, set[str]]:
    """{test module: the test modules it imports} for every module of ``folder`` that imports one."""
    out = {}
    for path in sorted(folder.glob("*.py")):
        found = imported_test_modules(path.read_text(encoding="utf-8"))
        if found:
            out[path.stem] = found
    return out


def package_imports(folder: Path) -> dict[str, set[str]]:
    """{module: the modules it imports through the package (``tests.games``)} for ``folder``'s modules.

    pytest puts tests/ itself on the path, so ``games`` and ``tests.games`` would be two modules,
    each with its own globals; the tests name their support modules one way, by the plain name."""
    out = {}
    for path in sorted(folder.glob("*.py")):
        found = {name for name in imported_modules(path.read_text(encoding="utf-8"))
                 if name.split(".")[0] == "tests"}
        if found:
            out[path.stem] = found
    return out


def test_no_test_module_imports_another():
    found = offences(TESTS)
    new = {module: sorted(names - PENDING.get(module, set())) for module, names in found.items()}
    new = {module: names for module, names in new.items() if names}
    assert not new, ("test modules import other test modules (move the helper into a support module of "
                     f"tests/ or the fixture into conftest.py): {new}")


def test_the_pending_imports_still_occur():
    found = offences(TESTS)
    gone = {module: sorted(names - found.get(module, set())) for module, names in PENDING.items()}
    gone = {module: names for module, names in gone.items() if names}
    assert not gone, f"these imports are gone: remove them from PENDING in {Path(__file__).name}: {gone}"


def test_support_modules_are_imported_by_their_plain_name():
    assert not package_imports(TESTS), f"import these by the plain name: {package_imports(TESTS)}"


def test_the_scan_finds_every_way_of_importing_a_test_module(tmp_path):
    """Planted imports, one per form, each found; support modules and conftest are not offences."""
    planted = {
        "test_from.py": "from test_store import sgf_text\n",
        "test_plain.py": "import test_store as ts\n",
        "test_package.py": "from tests.test_store import sgf_text\n",
        "test_package_plain.py": "import tests.test_store\n",
        "test_inside.py": "def f():\n    from test_store import sgf_text\n    return sgf_text\n",
        "test_by_name.py": "import importlib\nstore = importlib.import_module('test_store')\n",
        "test_dunder.py": "store = __import__('test_store')\n",
        "games.py": "from test_store import sgf_text\n",  # a support module importing a test module: also caught
    }
    clean = {
        "test_clean.py": "import conftest\nfrom games import sgf_text\nfrom tests.replay import as_dict\n"
                         "from fuseki.book.storage import store\nimport pytest\n",
        "conftest.py": "from games import sgf_text\n",
        "replay.py": "from . import test_store  # relative: not how tests/ imports\n",
    }
    for name, source in {**planted, **clean}.items():
        (tmp_path / name).write_text(source)
    assert offences(tmp_path) == {Path(name).stem: {"test_store"} for name in planted}
    assert package_imports(tmp_path) == {"test_package": {"tests.test_store"},
                                         "test_package_plain": {"tests.test_store"}, "test_clean": {"tests.replay"}}


def test_the_modules_started_first_are_test_modules():
    """conftest.LONGEST_FIRST names modules by file name: a renamed one would silently lose its place."""
    from conftest import LONGEST_FIRST

    assert len(set(LONGEST_FIRST)) == len(LONGEST_FIRST)
    assert [name for name in LONGEST_FIRST if not (TESTS / name).is_file()] == []
