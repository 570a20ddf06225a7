"""A fuseki that stops takes its KataGo with it, and a KataGo that dies is named as dead.

The real KataGo (slow; needs ``bash .ci/katago``): ``fuseki search --ai`` waiting on a
long search is stopped by SIGTERM, SIGHUP and SIGINT, and by a kill -9, and so are ``fuseki
ai annotate`` and ``fuseki serve --ai`` (its master alone); no KataGo of theirs is left
(KataGo runs in a process group of its own, which none of these signals reaches:
``book.analysis.katago`` asks the kernel to kill it with its parent).  KataGo killed by
SIGKILL mid-query: the client, and the command, say it died of signal 9, not "check the
-model and -config paths"."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from fuseki.book.analysis.katago import KataGo, KataGoError
from fuseki.engine.core import base
from fuseki.engine.core.base import BLACK, WHITE

from services import real_katago_command

DEADLINE = 120.0  # seconds: generous, KataGo loads a 100 MB network on a busy CPU
# a search of hours on a CPU: KataGo whose stdin closes finishes its queries before it exits,
# so an orphaned KataGo would outlive the deadline (at 400 visits it may end by itself)
VISITS = 100_000


def _signals_as_in_a_terminal() -> None:
    """A ``preexec_fn``: the signals a test sends take their default action in fuseki, as for a
    command typed in a terminal, even when the suite itself runs with SIGINT or SIGHUP ignored
    (``nohup``, a background job of a script: Python then installs no Ctrl-C handler)."""
    for signum in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after "(comm)": state, ppid, ...
        if int(fields[1]) == pid:
            found.append(int(entry.name))
    return found


def _cmdline(pid: int) -> str:
    try:
        return (Path(f"/proc/{pid}/cmdline").read_bytes()).replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    """Running (a zombie is dead: only its parent's wait is missing)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def _descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        children = _children(todo.pop())
        found += children
        todo += children
    return found


def _wait_for_katago(process: subprocess.Popen) -> int:
    """KataGo's pid: a child of ``process``, or a grandchild (a server's worker process starts it)."""
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        assert process.poll() is None, process.communicate()
        found = [pid for pid in _descendants(process.pid) if "analysis" in _cmdline(pid)]
        if found:
            return found[0]
        time.sleep(0.1)
    raise AssertionError(f"no KataGo started within {DEADLINE:g}s")


def _stop_and_check(process: subprocess.Popen, katago: int, signum: int) -> None:
    """Send ``signum`` to ``process`` alone, as `kill` does (KataGo's own group gets nothing),
    and check that KataGo is gone within the deadline."""
    process.send_signal(signum)
    process.communicate(timeout=DEADLINE)
    end = time.monotonic() + DEADLINE
    while _alive(katago) and time.monotonic() < end:
        time.sleep(0.1)
    assert not _alive(katago), f"KataGo {katago} outlived fuseki stopped by {signal.Signals(signum).name}"


def _cleanup(process: subprocess.Popen, katago: int | None) -> None:
    process.kill()
    process.communicate()
    if katago is not None and _alive(katago):
        os.kill(katago, signal.SIGKILL)


@pytest.fixture
def book(ai_test_book):
    """A book of two games, and an empty AI value cache: KataGo must be asked."""
    pd, dp, dd = (base.sgf_to_point(p, 19) for p in ("pd", "dp", "dd"))
    return ai_test_book([[(BLACK, pd), (WHITE, dp)], [(BLACK, pd), (WHITE, dd)]])


def _logged(command: str, log: Path) -> str:
    """``command`` with KataGo's log (every request it reads included) sent to stderr and
    appended to ``log`` (bash execs KataGo: one process), so that a test sees the moment KataGo
    has read fuseki's query and searches it."""
    argv = [*shlex.split(command), "-override-config", "logToStderr=true,logAllRequests=true"]
    return shlex.join(["bash", "-c", f'exec "$@" 2>>{shlex.quote(str(log))}', "katago", *argv])


def _wait_until_searching(log: Path, process: subprocess.Popen) -> None:
    """Until KataGo has read a query of fuseki's (``Request: {"id": ...``, logged as it takes it;
    fuseki's ``query_version`` comes first and is not one): from then on it is searching, and a
    KataGo with a query goes on after its stdin's end."""
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        assert process.poll() is None, process.communicate()
        text = log.read_text(errors="replace") if log.exists() else ""
        if any('"maxVisits"' in line for line in text.splitlines() if "Request: " in line):
            return
        time.sleep(0.1)
    raise AssertionError(f"KataGo took no query within {DEADLINE:g}s: {log.read_text(errors='replace')[-300:]}")


def _search(book: str, command: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "fuseki", "search", "--moves", "pd", "--book", book, "--ai", "--visits", str(VISITS),
         "--katago", command], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ),
        preexec_fn=_signals_as_in_a_terminal)


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGKILL])
def test_a_stopped_search_leaves_no_katago(book, signum, tmp_path):
    log = tmp_path / "katago.log"
    process = _search(book, _logged(real_katago_command(), log))
    katago = None
    try:
        katago = _wait_for_katago(process)
        _wait_until_searching(log, process)
        _stop_and_check(process, katago, signum)
    finally:
        _cleanup(process, katago)


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGKILL])
def test_a_stopped_annotate_leaves_no_katago(book, signum, tmp_path):
    log = tmp_path / "katago.log"
    process = subprocess.Popen(
        [sys.executable, "-m", "fuseki", "ai", "annotate", "--book", book, "--min-games", "1", "--visits", str(VISITS),
         "--katago", _logged(real_katago_command(), log)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        preexec_fn=_signals_as_in_a_terminal)
    katago = None
    try:
        katago = _wait_for_katago(process)
        _wait_until_searching(log, process)
        _stop_and_check(process, katago, signum)
    finally:
        _cleanup(process, katago)


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL])
def test_a_stopped_server_leaves_no_katago(book, signum, tmp_path):
    """The server's master alone is signalled: its worker process, which started KataGo, ends
    (gunicorn's stop, or the worker noticing its master is gone) and KataGo with it."""
    log = tmp_path / "katago.log"
    process = subprocess.Popen(
        [sys.executable, "-m", "fuseki", "serve", "--book", book, "--port", "0", "--ai", "--visits", str(VISITS),
         "--katago", _logged(real_katago_command(), log)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=_signals_as_in_a_terminal)
    katago = None
    try:
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", process.stdout.readline())
        assert match, "no address"
        with urllib.request.urlopen(f"{match.group(0)}api/position?moves=pd,dp", timeout=DEADLINE) as answer:
            assert json.load(answer)["ai"]["status"] == "pending"  # the worker starts KataGo for it
        katago = _wait_for_katago(process)
        _wait_until_searching(log, process)
        _stop_and_check(process, katago, signum)
    finally:
        _cleanup(process, katago)


@pytest.mark.slow
def test_katago_killed_mid_query_is_named_as_dead_not_misconfigured():
    with KataGo(real_katago_command(), timeout=DEADLINE) as katago:
        pending = katago.submit([("B", "Q16")], max_visits=VISITS)
        time.sleep(1.0)
        os.kill(katago.proc.pid, signal.SIGKILL)
        with pytest.raises(KataGoError) as caught:
            pending.result()
        text = str(caught.value)
        assert "died while answering: signal 9, SIGKILL (killed)" in text and "-model" not in text
        with pytest.raises(KataGoError, match="died while answering"):  # and every later query
            katago.analyze([], max_visits=1)


@pytest.mark.slow
def test_search_whose_katago_is_killed_says_so_in_one_line(book, tmp_path):
    log = tmp_path / "katago.log"
    process = _search(book, _logged(real_katago_command(), log))
    try:
        katago = _wait_for_katago(process)
        _wait_until_searching(log, process)  # mid-query
        os.kill(katago, signal.SIGKILL)
        out, err = process.communicate(timeout=DEADLINE)
    finally:
        process.kill()
        process.communicate()
    lines = err.decode().strip().splitlines()
    assert process.returncode == 1 and "Traceback" not in err.decode()
    assert lines[0].startswith("asking KataGo") and len(lines) == 2, lines
    assert "KataGo died while answering: signal 9, SIGKILL (killed)" in lines[1] and "-model" not in lines[1]


@pytest.mark.parametrize("signum, said", [
    (signal.SIGKILL, "KataGo died while starting: signal 9, SIGKILL (killed)"),  # from outside: no hint
    # its own abort, as a missing model file makes it: the hint at the paths
    (signal.SIGABRT, "KataGo exited (signal 6, SIGABRT; last stderr: cannot open model): check its -model"),
])
def test_a_katago_dying_before_it_is_ready_is_told_from_a_bad_command(tmp_path, signum, said):
    script = tmp_path / "dies.py"  # a KataGo that fails while it loads, as a missing model makes it abort
    script.write_text(f"import os, sys\nprint('cannot open model', file=sys.stderr, flush=True)\n"
                      f"os.kill(os.getpid(), {int(signum)})\n")
    with pytest.raises(KataGoError, match=re.escape(said)) as caught:
        KataGo([sys.executable, str(script)], start_timeout=60)
    assert ("-model" in str(caught.value)) == (signum == signal.SIGABRT)
