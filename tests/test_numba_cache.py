"""numba's cache loaded without its compiler's registries (engine/core/numba_cache.py, issue 61).

Each check runs fresh interpreters, since what is tested is what a process imports and loads the
first time: ``fuseki pattern`` on a small book with the scan's kernels taken from numba's cache,
once as this project loads them and once numba's own way (``FUSEKI_NUMBA_FULL_LOAD=1``).  Both
print the same answers; only numba's way imports the compiler's registries; and a kernel that is
compiled after such a load (a function numba's cache does not hold) is compiled with every
registry and answers as its Python does.  No timing here: bench/cli.py measures the start-up.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

# modules numba's CPUContext.refresh imports (numba/core/cpu.py, load_additional_registries) that a
# kernel loaded from the cache never needs
REGISTRIES = ("numba.np.arraymath", "numba.np.linalg", "numba.np.random.legacy", "numba.typed.typeddict",
              "numba.np.polynomial.polynomial_core", "numba.experimental.jitclass.base")
PATTERNS = [["--moves", "Q16 R14 O17", "--region", "N19:T13"], ["--moves", "Q16 D4", "--region", "A19:T1"],
            ["--moves", "Q16 R14", "--region", "N19:T13", "--swap-colours", "--to-move", "white"]]

RUN = """
import json, sys
import numpy as np
from fuseki.book.ui import fuseki_command
for argv in {argvs!r}:
    assert fuseki_command.main(argv) == 0
from fuseki.book.analysis.patterns import scan
from fuseki.engine.core import numba_cache
report = {{"registries": sorted(m for m in {registries!r} if m in sys.modules),
          "hits": sum(scan.scan.stats.cache_hits.values()), "misses": sum(scan.scan.stats.cache_misses.values()),
          "installed": numba_cache.install()}}
if {compile_after!r}:
    import numba

    def counted(a, words):
        seen = {{a[0]: 0}}
        for x in a:
            seen[x] = seen.get(x, 0) + 1
        ordered = np.sort(a)
        return float(ordered[0] + len(seen) + np.median(ordered.astype(np.float64)) + len(" ".join(words)))

    a = np.array([5, 3, 5, 1, 9, 3], dtype=np.int64)
    words = numba.typed.List(["fuseki", "pattern"])
    report["compiled"] = [numba.njit(counted)(a, words), counted(a, list(words))]
    report["registries after"] = sorted(m for m in {registries!r} if m in sys.modules)
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def small_book(small_games_book) -> str:
    """The small book, with numba's cache of the scan filled (if this checkout's was not yet) by one
    search in a fresh interpreter: the tests' own runs then load the scan from the cache."""
    run(small_games_book, full_load=False)
    return small_games_book


def run(book: str, full_load: bool, compile_after: bool = False) -> tuple[str, dict]:
    """(what the searches printed, the report) of a fresh interpreter."""
    argvs = [["pattern", "--book", book] + argv for argv in PATTERNS]
    env = {k: v for k, v in os.environ.items() if k not in ("FUSEKI_BOOK", "FUSEKI_NUMBA_FULL_LOAD")}
    if full_load:
        env["FUSEKI_NUMBA_FULL_LOAD"] = "1"
    done = subprocess.run([sys.executable, "-c", RUN.format(argvs=argvs, registries=REGISTRIES,
                                                            compile_after=compile_after)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    *printed, last = done.stdout.splitlines()
    return "\n".join(printed), json.loads(last)


def test_the_scan_loads_from_the_cache_without_the_registries_and_answers_as_numbas_own_load(small_book):
    printed, report = run(small_book, full_load=False)
    assert report["installed"] and report["hits"] >= 1 and report["misses"] == 0  # from the cache
    assert report["registries"] == []
    full_printed, full_report = run(small_book, full_load=True)
    assert not full_report["installed"] and full_report["hits"] >= 1 and full_report["misses"] == 0
    assert full_report["registries"] == sorted(REGISTRIES)  # what numba's own load imports
    assert printed == full_printed and printed.count("total ") == len(PATTERNS)


@pytest.mark.slow  # numba compiles a kernel in a fresh interpreter: the quick suite's costliest test (16 s loaded)
def test_a_kernel_compiled_after_such_a_load_has_every_registry(small_book):
    _printed, report = run(small_book, full_load=False, compile_after=True)
    assert report["hits"] >= 1 and report["misses"] == 0
    compiled, python = report["compiled"]
    assert compiled == pytest.approx(python)
    assert report["registries"] == [] and report["registries after"] == sorted(REGISTRIES)  # the compiler's own
