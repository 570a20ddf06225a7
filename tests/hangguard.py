"""A hung test fails instead of holding the suite (a support module; tests/conftest.py registers
its fixture for every test, tests/test_suite_guard.py plants a hang).

A CI run once sat in one test of processes until CI's 90-minute limit and said nothing.  Each
test now has ``HUNG_AFTER`` seconds; past them every thread's stack is printed and the test's
processes are killed, so that a read waiting on one ends and the test fails, naming where it
waited, while the suite goes on.
"""

from __future__ import annotations

import os
import sys

import pytest

# seconds: ten times the slowest test on 2 loaded cores (148 s), never a speed target
HUNG_AFTER = float(os.environ.get("FUSEKI_TEST_HUNG_AFTER", "1800"))


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (children first found through /proc's parent ids)."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as stat:
                    ppid = int(stat.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            parents.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def end_processes(pids: list[int]) -> None:
    """Say where each of ``pids`` waits (the kernel's wchan), send it SIGABRT (a Python process run
    with PYTHONFAULTHANDLER=1 writes its threads' stacks to its stderr), then SIGKILL: every read
    waiting on one of them gets its end of file."""
    import signal
    import time

    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmd, open(f"/proc/{pid}/wchan") as wchan:
                words = cmd.read().replace(b"\0", b" ")[:160]
                print(f"  {pid} waiting in {wchan.read() or '-'}: {words!r}", file=sys.stderr, flush=True)
            os.kill(pid, signal.SIGABRT)
        except OSError:
            pass
    time.sleep(3)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _end_a_hung_test(nodeid: str) -> None:
    """Print every thread's stack, then end the test's processes: a read waiting on one of them
    gets its end of file, and the test fails (naming where it waited) instead of holding the
    suite until CI's time limit (a run of the suite hung once, unseen, in a test of processes)."""
    import faulthandler

    print(f"\n{nodeid}: still running after {HUNG_AFTER} s; its threads:", file=sys.stderr, flush=True)
    faulthandler.dump_traceback(file=sys.stderr)
    print("its processes:", file=sys.stderr)
    end_processes(_descendants(os.getpid()))


@pytest.fixture(autouse=True)
def _hung_test_ends(request):
    import threading

    timer = threading.Timer(HUNG_AFTER, _end_a_hung_test, args=(request.node.nodeid,))
    timer.daemon = True
    timer.start()
    yield
    timer.cancel()
