"""The suite gives the same answer on every run: every random choice in the tests comes from
a seed written in the test.

- Statically, over every file of ``tests/``: each generator (``np.random.default_rng``,
  ``random.Random``, ``RandomState``, ``SeedSequence``) is made with a seed, and no seed is
  computed with ``hash()`` (salted per process by ``PYTHONHASHSEED``), the clock, the process
  id or the OS's entropy; nothing draws from the global generators (``random.choice(...)``,
  ``np.random.randint(...)``), whose state is whatever ran before.
- Hypothesis is derandomized, with no example database, no deadline and no timed health check (conftest.py).
- Dynamically: test_patterns' games and the patterns its tests draw (the test whose
  ``hash((kind, size))`` seed once made CI fail by luck) are drawn in three processes with
  ``PYTHONHASHSEED`` 1, 2 and 3, and are the same.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

TESTS = Path(__file__).resolve().parent
GENERATORS = {"default_rng", "Random", "RandomState", "SeedSequence", "seed", "Generator", "PCG64"}
GLOBAL_DRAWS = {"random", "choice", "choices", "randint", "randrange", "shuffle", "sample", "uniform",
                "getrandbits", "gauss", "rand", "randn", "permutation", "integers", "normal", "bytes"}
NOT_A_SEED = {"hash", "id", "time", "time_ns", "monotonic", "perf_counter", "getpid", "urandom", "uuid4",
              "token_hex", "randbits"}


def _name(node) -> str:
    """``a.b.c`` for an attribute chain or a name, '' otherwise."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _name(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""


def seeding_faults(source: str, filename: str) -> list[str]:
    """Each place in ``source`` where a random choice does not come from a seed written in the
    test: a generator made without a seed or from one of ``NOT_A_SEED``, or a draw from a
    module's global generator."""
    faults = []
    for node in ast.walk(ast.parse(source, filename)):
        if not isinstance(node, ast.Call):
            continue
        name = _name(node.func)
        where = f"{filename}:{node.lineno}: {ast.unparse(node)[:80]}"
        last = name.rsplit(".", 1)[-1]
        random_module = name.startswith(("random.", "np.random.", "numpy.random."))
        if last in GENERATORS and (random_module or name in GENERATORS):
            if not node.args and not node.keywords:
                faults.append(f"{where}: a generator without a seed")
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                for inner in ast.walk(arg):
                    if isinstance(inner, ast.Call) and _name(inner.func).rsplit(".", 1)[-1] in NOT_A_SEED:
                        faults.append(f"{where}: seeded from {ast.unparse(inner.func)}(), not a number written "
                                      f"in the test")
        elif random_module and last in GLOBAL_DRAWS and name.count(".") == (1 if name.startswith("random.") else 2):
            faults.append(f"{where}: a draw from the module's global generator")
    return faults


def test_every_generator_in_the_tests_has_a_seed_written_in_the_test():
    faults = [f for path in sorted(TESTS.rglob("*.py")) for f in seeding_faults(path.read_text(), path.name)]
    assert not faults, "\n".join(faults)


@pytest.mark.parametrize("source, fault", [
    ("rng = np.random.default_rng(hash((kind, size)) % 2**32)", "seeded from hash()"),
    ("rng = random.Random()", "without a seed"),
    ("rng = np.random.default_rng()", "without a seed"),
    ("rng = random.Random(time.time())", "seeded from time.time()"),
    ("rng = np.random.default_rng(seed=os.getpid())", "seeded from os.getpid()"),
    ("point = random.choice(points)", "global generator"),
    ("x = np.random.randint(9)", "global generator"),
    ("np.random.seed()", "without a seed"),
])
def test_the_seed_check_finds_each_kind_of_fault(source, fault):
    faults = seeding_faults(source, "planted.py")
    assert len(faults) == 1 and fault in faults[0]


def test_the_seed_check_passes_seeded_generators():
    source = ("rng = np.random.default_rng(7)\nr = random.Random(seed)\nrng.choice(points)\n"
              "r.shuffle(x)\nrng = np.random.default_rng(SEEDS[kind] + 100 * size)\n")
    assert seeding_faults(source, "fine.py") == []


def test_hypothesis_draws_the_same_examples_every_run():
    assert settings.default.derandomize and settings.default.database is None
    assert settings.default.deadline is None and HealthCheck.too_slow in settings.default.suppress_health_check


DRAW_PATTERNS = """
import hashlib, sys, tempfile
from pathlib import Path
sys.path.insert(0, {tests!r})
import patterncount as tp
out = hashlib.sha256()
folder = Path(tempfile.mkdtemp())
for size in (19, 9):
    games = tp.make_games(folder, size, 90, seed=size)
    out.update(repr(games).encode())
    for test in tp.SEEDS:
        for kind in ("corner", "side", "anywhere"):
            rng = tp.rng_for(test, kind, size)
            for i in range(12):
                pattern, want = tp.pattern_of(games, rng, kind, size, any_points=i % 3, swap=i % 2 == 1,
                                              wildcards=i % 3)
                out.update(repr((pattern, want.tolist())).encode())
print(out.hexdigest(), hash("salted"))
"""


def test_pattern_draws_are_the_same_under_three_hash_seeds(tmp_path):
    """test_patterns' games and patterns, drawn with PYTHONHASHSEED 1, 2 and 3: one digest.
    ``hash("salted")`` printed beside it shows the three processes did salt differently."""
    script = DRAW_PATTERNS.format(tests=str(TESTS))
    answers = []
    for seed in ("1", "2", "3"):
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600,
                              env={**os.environ, "PYTHONHASHSEED": seed}, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        answers.append(done.stdout.split())
    assert len({digest for digest, _salted in answers}) == 1
    assert len({salted for _digest, salted in answers}) == 3
