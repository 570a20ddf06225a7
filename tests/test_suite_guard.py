"""The suite's own guard: a test that hangs on a process fails, and the suite goes on.

``hangguard.py`` (registered by ``conftest.py``) gives every test ``HUNG_AFTER`` seconds
($FUSEKI_TEST_HUNG_AFTER); past them it prints every thread's stack and kills the test's
processes, so that a read waiting on one ends.  Here a planted test waits on a child that sleeps
for ten minutes, with the bound at 3 s: it must fail, name itself and where it waited, and the
test after it must still run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PLANTED = '''
import subprocess, sys

def test_waits_on_a_child_for_ten_minutes():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], stdout=subprocess.PIPE)
    assert child.stdout.read() == b"the child's answer"

def test_after_it():
    assert True
'''


def test_a_test_hung_on_a_process_fails_and_the_suite_goes_on(tmp_path):
    tests = Path(__file__).resolve().parent
    (tmp_path / "conftest.py").write_text(  # the suite's guard alone, as tests/conftest.py registers it
        f"import sys\nsys.path.insert(0, {str(tests)!r})\nfrom hangguard import _hung_test_ends  # noqa: F401\n")
    (tmp_path / "test_planted.py").write_text(PLANTED)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
                          str(tmp_path)], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "FUSEKI_TEST_HUNG_AFTER": "3"})
    out = run.stdout + run.stderr
    assert run.returncode == 1, out[-3000:]
    assert "1 failed, 1 passed" in out, out[-3000:]
    assert "test_waits_on_a_child_for_ten_minutes: still running after 3" in out, out[-3000:]
    assert "test_planted.py" in out and "in test_waits_on_a_child_for_ten_minutes" in out  # the stack says where
