"""Crash safety: an import killed with SIGKILL at random moments leaves a sound book.

A 1,000-game subset of the Tygem archive is imported (batches of 50 games, one worker
process, as ``fuseki import`` runs) and the import's process group is killed at a random
moment, at least ten times.  After every kill:

- the book opens (``Book.open``) and SQLite's ``PRAGMA integrity_check`` says ``ok``;
- every game has all its positions and nothing else: move numbers 0..n-1 with n =
  ``move_count + 1``, or as many as its anomaly says (an illegal move N: N positions),
  and no position row belongs to a game that is not there;

and the import run again to the end holds exactly the games (fingerprints) and position
rows of a clean import.  When a run finishes before its kill, or is killed after its last
batch, the book is checked against the clean import and started afresh, so that the kills
keep landing while it is written (a third of them at least must find a partial book).
"""

from __future__ import annotations

import os
import random
import re
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from book.store import Book
from conftest import ROOT, import_command, write_archive

pytestmark = pytest.mark.slow  # ten imports of a real archive, killed: about a minute
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
KILLS = 10
SEED = 1107
GAMES = 1000


def run_import(book: Path, archive: Path) -> subprocess.Popen:
    """The import in its own process group; returns once it says the book is open."""
    process = subprocess.Popen(import_command(book, [archive], batch_games=50, workers=1), cwd=ROOT,
                               env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    assert process.stdout.readline() == b"open\n", process.communicate()[1].decode(errors="replace")[-3000:]
    return process


def finish(process: subprocess.Popen) -> None:
    _, err = process.communicate(timeout=120)
    assert process.returncode == 0, err.decode(errors="replace")[-3000:]


def expected_positions(move_count: int, anomaly: str | None) -> int:
    if anomaly is None:
        return move_count + 1
    illegal = re.match(r"move (\d+) ", anomaly)
    if illegal:
        return int(illegal.group(1))
    if "not stored" in anomaly:
        return 4096
    raise AssertionError(f"unknown anomaly {anomaly!r}: cannot tell how many positions it keeps")


def check_book(path: Path) -> tuple[frozenset, int]:
    """Sound after a kill (see the module docstring); returns (fingerprints, position rows).

    A kill while the book is being created may leave it without its version stamps (SQLite
    runs CREATE TABLE outside the transaction); then it must hold no game, and the next
    import completes it.
    """
    db = sqlite3.connect(path)
    try:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "meta" not in tables or not db.execute("SELECT count(*) FROM meta").fetchone()[0]:
            assert "games" not in tables or not db.execute("SELECT count(*) FROM games").fetchone()[0]
            return frozenset(), 0
        with Book.open(str(path), readonly=True) as book:
            stats = book.stats()
        per_game = dict(((gid, (n, lo, hi)) for gid, n, lo, hi in db.execute(
            "SELECT code >> 24, count(*), min((code >> 12) & 4095), max((code >> 12) & 4095) "
            "FROM positions GROUP BY code >> 24")))
        games = db.execute("SELECT id, move_count, anomaly, fingerprint FROM games").fetchall()
    finally:
        db.close()
    ids = {gid for gid, _, _, _ in games}
    orphans = set(per_game) - ids
    assert not orphans, f"position rows of {len(orphans)} games that are not in the book"
    for gid, move_count, anomaly, _ in games:
        n = expected_positions(move_count, anomaly)
        assert per_game.get(gid) == (n, 0, n - 1), (
            f"game {gid} ({move_count} moves, anomaly {anomaly}) should have positions 0..{n - 1}, "
            f"has (count, first, last) = {per_game.get(gid)}")
    assert stats.games == len(games) and stats.positions == sum(n for n, _, _ in per_game.values())
    return frozenset(fp for _, _, _, fp in games), stats.positions


def fresh(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def test_sigkilled_imports_leave_a_sound_book_and_resume_exactly(tmp_path, tygem_games):
    archive = write_archive(tmp_path / "games.tgz", tygem_games[:GAMES])
    clean = tmp_path / "clean.sqlite"
    process = run_import(clean, archive)
    started = time.monotonic()
    finish(process)
    full = time.monotonic() - started  # from the book open to the end
    expected = check_book(clean)
    assert len(expected[0]) == GAMES

    rng = random.Random(SEED)
    book = tmp_path / "killed.sqlite"
    kills, completed, seen = 0, 0, []
    while kills < KILLS:
        assert kills + completed < 3 * KILLS, "the imports keep finishing before their kill"
        process = run_import(book, archive)
        try:
            process.wait(timeout=rng.uniform(0.05, 0.8 * full))
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # the import and its worker
            process.wait()
            kills += 1
            found = check_book(book)
            seen.append(len(found[0]))
            if len(found[0]) == GAMES:  # killed after its last batch: start over, to kill mid-import
                assert found == expected
                fresh(book)
            continue
        finish(process)
        completed += 1
        assert check_book(book) == expected
        fresh(book)

    finish(run_import(book, archive))
    assert check_book(book) == expected
    partial = [n for n in seen if 0 < n < GAMES]
    print(f"\ncrash test: {kills} kills (books of {seen} games after them), "
          f"{completed} runs finished first; clean import {full:.1f} s")
    assert len(partial) >= KILLS // 3, f"too few kills landed while games were written: {seen}"
