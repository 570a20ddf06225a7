"""How ``fuseki import`` ends when it is stopped: no worker outlives it, the book stays sound.

Real ``python -m fuseki import`` processes (two parser processes and the reader) import
the Tygem archive (else 6,000 generated games):

- killed with SIGKILL at random moments while their workers run (what the OOM killer
  does), each run taking up the book the killed one left: 5 s later no process of
  theirs is left, the book passes the crash test's checks
  (``soundness.check_book``), and the same import run again completes it to
  exactly the book of a clean import;
- stopped with SIGTERM (to the import alone, as ``kill`` does) or SIGINT (to its whole
  process group, as Ctrl-C on a terminal does) once it has committed games: it exits
  with 143 or 130 and no traceback, says how many games it committed, and the book holds
  exactly those; no process of its is left.

And in this process, on 3,000 generated games: a worker killed (by the OOM killer, say)
makes the import raise instead of waiting forever; a stop request ends it between
batches with exact counts; Ctrl-C in the shell stops the import, not the shell.
"""

from __future__ import annotations

import io
import multiprocessing
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from fuseki.book.analysis.pipeline import importer
from fuseki.book.analysis.pipeline.progress import Progress
from fuseki.book.storage.store import Book
from fuseki.book.ui.shell import BookShell

from conftest import ROOT, SHARED_DATA, write_archive
from games import archive_games
from soundness import check_book

KILLS = 4
SEED = 2016


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> Path:
    tygem = SHARED_DATA / "tygem-2016-07.tgz"
    if tygem.is_file():
        return tygem
    return write_archive(tmp_path_factory.mktemp("archive") / "games.tgz", archive_games(6000))


@pytest.fixture(scope="module")
def clean(archive, tmp_path_factory) -> tuple[frozenset, int]:
    """What a clean import of the archive holds (check_book's fingerprints, position rows)."""
    book = str(tmp_path_factory.mktemp("clean") / "book.sqlite")
    process = start_import(book, archive)
    _, err = process.communicate(timeout=300)
    assert process.returncode == 0, err[-3000:]
    return check_book(book)


def start_import(book: str, archive: Path) -> subprocess.Popen:
    """``fuseki import`` in a session (process group) of its own, stderr piped (not a terminal)."""
    return subprocess.Popen([sys.executable, "-m", "fuseki", "import", str(archive), "--book", book,
                             "--workers", "2"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def processes() -> dict[int, tuple[int, int, str]]:
    """pid -> (parent pid, process group, state) of every process, from /proc."""
    found = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except OSError:  # gone meanwhile
                continue
            found[int(name)] = (int(fields[1]), int(fields[2]), fields[0])
    return found


def workers_of(pid: int) -> list[int]:
    return [child for child, (parent, _, state) in processes().items() if parent == pid and state != "Z"]


def left_in_group(group: int) -> list[int]:
    """Live (not zombie) processes of a process group."""
    return [pid for pid, (_, pgid, state) in processes().items() if pgid == group and state != "Z"]


def wait_for_workers(process: subprocess.Popen, count: int = 3, timeout: float = 60) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        found = workers_of(process.pid)
        if len(found) >= count:
            return found
        time.sleep(0.01)
    raise AssertionError(f"the import started no {count} workers (exit code {process.poll()})")


def assert_all_gone(group: int, workers: list[int], within: float = 5.0) -> None:
    """Within ``within`` s no process of the group is left, the ``workers`` included.

    A worker re-parented (to init or a subreaper) stays in its process group; the workers
    are also looked for by pid in case one made a group of its own.
    """
    def left() -> list[int]:
        live = {pid for pid, (_, _, state) in processes().items() if state != "Z"}
        return sorted(set(left_in_group(group)) | (set(workers) & live))

    deadline = time.monotonic() + within
    while left() and time.monotonic() < deadline:
        time.sleep(0.05)
    stragglers = left()
    for pid in stragglers:  # this test's processes: they must not outlive it either
        os.kill(pid, signal.SIGKILL)
    assert not stragglers, f"processes left {within} s after the import ended: {stragglers}"


def committed(book: str) -> int:
    """Games in the book, read while the import writes (-1 before its tables exist)."""
    try:
        db = sqlite3.connect(f"file:{book}?mode=ro", uri=True, timeout=5)
    except sqlite3.OperationalError:
        return -1
    try:
        return db.execute("SELECT count(*) FROM games").fetchone()[0]
    except sqlite3.OperationalError:
        return -1
    finally:
        db.close()


@pytest.mark.slow  # about six imports of an 11,000-game archive: half a minute
def test_sigkilled_import_leaves_no_worker_and_a_rerun_completes_the_book(tmp_path, archive, clean):
    rng = random.Random(SEED)
    process = start_import(str(tmp_path / "timing.sqlite"), archive)
    wait_for_workers(process)
    with_workers = time.monotonic()
    process.communicate(timeout=300)
    assert process.returncode == 0
    full = time.monotonic() - with_workers  # from the workers' start to the end

    # Each kill lands on the book the earlier ones left, as a user re-running a killed
    # import would; a book an import completed before its kill is started afresh.
    kills, runs, partial = 0, 0, []
    book = str(tmp_path / "book0.sqlite")
    while kills < KILLS:
        assert runs < 3 * KILLS, "the imports keep finishing before their kill"
        runs += 1
        process = start_import(book, archive)
        children = wait_for_workers(process)
        time.sleep(rng.uniform(0, 0.7 * full))
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)  # the import alone, as the OOM killer does
            kills += 1
        process.wait(timeout=300)  # not communicate(): a worker left behind would hold stderr open
        assert_all_gone(process.pid, children)
        process.stderr.close()
        found = check_book(book)
        assert found[0] <= clean[0]
        if found == clean:
            book = str(tmp_path / f"book{runs}.sqlite")
        else:
            partial.append(len(found[0]))

    rerun = start_import(book, archive)
    _, err = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, err[-3000:]
    assert check_book(book) == clean
    assert partial, "no kill landed while games were written"


@pytest.mark.slow  # two imports and their re-runs: half a minute
@pytest.mark.parametrize("signum, to_group", [(signal.SIGTERM, False), (signal.SIGINT, True)])
def test_a_stopped_import_says_what_it_committed_and_leaves_nothing_running(tmp_path, archive, clean, signum,
                                                                            to_group):
    book = str(tmp_path / "book.sqlite")
    process = start_import(book, archive)
    children = wait_for_workers(process)
    while committed(book) <= 0:  # the first batch (250 games) is in
        assert process.poll() is None, process.communicate()[1][-3000:]
        time.sleep(0.01)
    if to_group:
        os.killpg(process.pid, signum)
    else:
        os.kill(process.pid, signum)
    process.wait(timeout=60)
    assert_all_gone(process.pid, children)  # before reading: a worker left behind would hold stderr open
    err = process.stderr.read()
    assert process.returncode == 128 + signum, err[-3000:]
    assert "Traceback" not in err
    name = signal.Signals(signum).name
    said = re.search(rf"fuseki import: stopped by {name}; committed: ([\d,]+) games added, ([\d,]+) duplicates",
                     err)
    assert said, err[-3000:]
    added = int(said.group(1).replace(",", ""))
    assert 0 < added == committed(book) < len(clean[0])

    rerun = start_import(book, archive)
    _, err = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, err[-3000:]
    assert check_book(book) == clean


# --- in this process ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def small_archive(tmp_path_factory) -> Path:
    return write_archive(tmp_path_factory.mktemp("small") / "games.tgz", archive_games(3000))


class AtBatch(Progress):
    """A Progress that runs ``action()`` once, after the ``at``-th batch is committed."""

    def __init__(self, at: int, action):
        super().__init__(io.StringIO(), every=3600)
        self.at, self.action, self.batches = at, action, 0

    def update(self, report, read, force=False):
        super().update(report, read, force)
        self.batches += 1
        if self.batches == self.at:
            self.action()


def games_in(book: Book) -> int:
    return book.stats().games


@pytest.mark.parametrize("victim", ["import reader", "import parser 1"])
def test_a_worker_that_dies_makes_the_import_raise_not_hang(tmp_path, small_archive, victim):
    killed = []

    def kill_a_worker():
        killed.extend(child for child in multiprocessing.active_children() if child.name == victim)
        os.kill(killed[0].pid, signal.SIGKILL)

    with Book.open(str(tmp_path / "book.sqlite")) as book:
        started = time.monotonic()
        with pytest.raises(RuntimeError) as raised:
            importer.import_paths(book, [str(small_archive)], workers=2, batch_games=250,
                                  progress=AtBatch(1, kill_a_worker))
        assert time.monotonic() - started < 60
        expected = f"{victim} (process {killed[0].pid}) died (killed by signal 9)"
        assert str(raised.value) == expected
        assert not multiprocessing.active_children()
        assert 0 < games_in(book) < 3000  # the batches before the death are kept


def test_a_stop_request_ends_the_import_between_batches_with_exact_counts(tmp_path, small_archive):
    stop = threading.Event()
    with Book.open(str(tmp_path / "book.sqlite")) as book:
        report = importer.import_paths(book, [str(small_archive)], workers=2, batch_games=250,
                                       progress=AtBatch(3, stop.set), stop=stop)
        assert report.stopped and not multiprocessing.active_children()
        assert report.added == games_in(book) == 31 + 62 + 124  # the first three batches: 250//8, doubling
        report = importer.import_paths(book, [str(small_archive)], workers=0, batch_games=250)
        assert not report.stopped and (report.added, report.duplicates) == (3000 - 217, 217)


def test_ctrl_c_in_the_shell_stops_the_import_not_the_shell(tmp_path, small_archive, monkeypatch):
    from fuseki.book.analysis.pipeline import progress

    # The shell draws its own progress (on a terminal): this one presses Ctrl-C after the
    # second batch, as a user would, with the shell's own signal handlers in place.
    monkeypatch.setattr(progress, "Progress",
                        lambda **_options: AtBatch(2, lambda: os.kill(os.getpid(), signal.SIGINT)))
    monkeypatch.setattr(importer, "BATCH_GAMES", 2000)  # batches of 250 and 500 games, then 1,000
    before = signal.getsignal(signal.SIGINT)
    with Book.open(str(tmp_path / "book.sqlite")) as book:
        out = io.StringIO()
        shell = BookShell(book, "book", stdout=out)
        shell.use_rawinput = True  # as at a terminal: the shell shows progress
        shell.onecmd(f"import {small_archive}")
        assert out.getvalue().startswith("stopped by SIGINT; committed: 750 games added, 0 duplicates")
        assert games_in(book) == 250 + 500  # two batches of 2,000 games' size (2,000/8, doubling)
        assert signal.getsignal(signal.SIGINT) is before  # Ctrl-C is the shell's again
