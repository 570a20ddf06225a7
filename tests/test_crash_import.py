"""Crash safety: an import killed with SIGKILL at random moments leaves a sound book.

On SQLite and on PostgreSQL, a 400-game subset of the Tygem archive is imported (batches of 20 games, one worker
process, as ``fuseki import`` runs) and the import's process group is killed at a random
moment, ten times: after a random number of the batches it says it committed, and a random
part of the time between two commits later.  After every kill:

- the book opens (``Book.open``) and, on SQLite, ``PRAGMA integrity_check`` says ``ok``;
- every game has all its positions and nothing else: move numbers 0..n-1 with n =
  ``move_count + 1``, or as many as its anomaly says (an illegal move N: N positions),
  and no position row belongs to a game that is not there;

and the import run again to the end holds exactly the games (fingerprints) and position
rows of a clean import, and on PostgreSQL no table the killed imports' parsers staged.
When a run finishes before its kill, or is killed after its last batch, the book is
checked against the clean import and started afresh, so that the kills keep landing
while it is written (half of them at least must find a partial book).
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from fuseki.book.storage.position_index import pg_stage
from fuseki.book.storage.store import Book

from conftest import ROOT, import_command, is_sqlite, write_archive
from soundness import check_book

pytestmark = pytest.mark.slow  # ten imports of a real archive, killed: about a minute
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
KILLS = 10
SEED = 1107
GAMES = 400  # 20 batches of 20: as many commits to land between as 1,000 games in 50s, at 2/5 of the writing
BATCH = 20


def run_import(book: str, archive: Path) -> subprocess.Popen:
    """The import in its own process group; returns once it says the book is open."""
    process = subprocess.Popen(import_command(book, [archive], batch_games=BATCH, workers=1, announce_batches=True),
                               cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True)
    assert process.stdout.readline() == b"open\n", process.communicate()[1].decode(errors="replace")[-3000:]
    return process


def batches_then(process: subprocess.Popen, count: int) -> bool:
    """Waits until the import has committed ``count`` batches that added games; False if it ended first.

    A re-run into a partial book first finds the games it holds (batches that add none), so
    those do not count: the kill must land where games are still being written.
    """
    added = b"0"
    while count:
        line = process.stdout.readline()
        if not line.startswith(b"batch "):
            return False
        if line.split()[1] != added:
            added, count = line.split()[1], count - 1
    return True


def finish(process: subprocess.Popen) -> None:
    _, err = process.communicate(timeout=120)
    assert process.returncode == 0, err.decode(errors="replace")[-3000:]


def leftovers(location: str) -> set[str]:
    """The segment files of a SQLite book that no row names (PostgreSQL: none)."""
    folder = location + "-segments"
    if not is_sqlite(location) or not os.path.isdir(folder):
        return set()
    db = sqlite3.connect(f"file:{location}?mode=ro", uri=True)
    try:
        listed = {name for (name,) in db.execute("SELECT file FROM segment_files")}
    except sqlite3.OperationalError:  # killed before the table was made
        listed = set()
    finally:
        db.close()
    return set(os.listdir(folder)) - listed


def test_sigkilled_imports_leave_a_sound_book_and_resume_exactly(tmp_path, tygem_games, new_book):
    archive = write_archive(tmp_path / "games.tgz", tygem_games[:GAMES])
    clean = new_book()
    process = run_import(clean, archive)
    commits = [time.monotonic()]  # the book open, then each batch's commit
    while process.stdout.readline().startswith(b"batch "):
        commits.append(time.monotonic())
    finish(process)
    expected = check_book(clean)
    assert len(expected[0]) == GAMES
    batches = len(commits) - 2  # the last line repeats the last batch: every input is read
    between = sorted(b - a for a, b in zip(commits, commits[1:]))[len(commits) // 2]

    # A kill lands after a random number of commits and a random part of the time between two,
    # wherever in the import that is: in the book's creation, a batch's write, its commit.
    rng = random.Random(SEED)
    book = new_book()
    kills, completed, seen, swept = 0, 0, [], []
    while kills < KILLS:
        assert kills + completed < 3 * KILLS, "the imports keep finishing before their kill"
        process = run_import(book, archive)
        if batches_then(process, rng.randrange(batches - 1)):
            try:
                process.wait(timeout=rng.uniform(0.0, 1.5 * between))
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)  # the import and its worker
                process.wait()
                kills += 1
                left = leftovers(book)
                found = check_book(book)  # its read-only open removes what the killed import left
                seen.append(len(found[0]))
                swept.append(len(left))
                assert not found[0] or not leftovers(book), "a read-only open left a killed import's files"
                if len(found[0]) == GAMES:  # killed after its last batch: start over, to kill mid-import
                    assert found == expected
                    book = new_book()
                continue
        finish(process)
        completed += 1
        assert check_book(book) == expected
        book = new_book()

    finish(run_import(book, archive))
    assert check_book(book) == expected
    if not is_sqlite(book):  # the tables the killed imports staged went when the book was opened again
        with Book.open(book, readonly=True) as opened, opened.db.connect() as conn:
            assert pg_stage.staged_tables(conn) == []
    partial = [n for n in seen if 0 < n < GAMES]
    print(f"\ncrash test: {kills} kills (books of {seen} games after them; segment files left {swept}), "
          f"{completed} runs finished first; {batches} batches, {between:.2f} s apart")
    assert len(partial) >= KILLS // 2, f"too few kills landed while games were written: {seen}"


def _silent_stage(end) -> None:
    """A pipeline stage that lives on and sends nothing (a parser stuck in a loop)."""
    time.sleep(120)


def test_a_silent_stage_is_given_up_after_its_stall_limit():
    """The writer's wait for a parser ends when the parser dies (tested above) and also when it
    lives on silently: ``take`` gives up after ``stall`` seconds, naming the worker, instead of
    keeping the import waiting for ever."""
    import multiprocessing

    from fuseki.book.analysis.pipeline.workers import take

    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    stage = context.Process(target=_silent_stage, args=(send,), daemon=True)
    stage.start()
    try:
        with pytest.raises(RuntimeError, match=rf"{stage.name} \(process {stage.pid}\) sent nothing for 1 s"):
            take(receive, stage, stall=1.0)
        assert stage.is_alive()  # given up on while alive: not the death the other path reports
    finally:
        stage.kill()
        stage.join()
