"""book.storage.position_index.segment_sweep: a read-only open removes what a killed import left, and nothing a
live import may still link."""

from __future__ import annotations

import logging
import os
import signal
import sqlite3
import subprocess
import sys

import pytest

from fuseki.book.analysis.pipeline import importer
from fuseki.book.storage.position_index import segment_files, segment_sweep
from fuseki.book.storage.store import Book

from conftest import PacedImport
from games import write_games


@pytest.fixture
def book_path(tmp_path, monkeypatch) -> str:
    """A book of 12 games in segment files (3 batches), the games' folder beside it."""
    monkeypatch.setattr(segment_files, "ENABLED", True)
    folder = tmp_path / "games"
    folder.mkdir()
    write_games(folder, count=12, seed=42)
    path = str(tmp_path / "book.sqlite")
    with Book.open(path) as book:
        importer.import_paths(book, [str(folder)], workers=0, batch_games=4)
    return path


GONE = (1 << 22) + 1  # above Linux's largest pid: no process has it


def files(path: str) -> set[str]:
    return set(os.listdir(segment_files.folder_of(path)))


def leave(path: str, owner: int) -> str:
    """A segment file no row names, as ``owner`` writes one before linking it."""
    name = segment_files.new_name(owner)
    with open(os.path.join(segment_files.folder_of(path), name), "wb") as out:
        out.write(b"left over")
    return name


def test_a_reader_keeps_a_live_imports_files_and_removes_them_once_it_is_killed(book_path, tmp_path):
    more = tmp_path / "more"
    more.mkdir()
    write_games(more, count=40, seed=7)
    linked = files(book_path)
    importing = PacedImport(book_path, [more], batch_games=20)
    try:
        batches = importing.batches()
        assert next(batches) > 0  # one batch committed; the import waits, alive
        live = leave(book_path, importing.process.pid)  # as its next batch's file, not linked yet
        ours = files(book_path)
        assert len(ours) > len(linked) + 1
        with Book.open(book_path, readonly=True) as book:
            assert files(book_path) == ours  # not one of a live import's files goes
            games = book.stats().games
        importing.process.send_signal(signal.SIGKILL)
        importing.process.wait(30)
        with Book.open(book_path, readonly=True) as book:
            assert files(book_path) == ours - {live}
            assert book.stats().games == games  # every linked file is there
    finally:
        importing.close()


def test_a_reader_removes_only_the_files_whose_owner_is_gone(book_path):
    linked = files(book_path)
    dead, ours = leave(book_path, GONE), leave(book_path, os.getpid())
    with open(os.path.join(segment_files.folder_of(book_path), "notes.seg"), "wb"):
        pass  # no owner named: nobody links it
    with Book.open(book_path, readonly=True) as book:
        assert files(book_path) == linked | {ours}
        assert book.stats().games == 12
    assert dead not in files(book_path)


def test_a_file_linked_by_an_owner_that_then_died_is_kept(book_path, monkeypatch):
    """The owner links its file after the reader first read the list, then dies: the list read
    again after the reader saw it gone names the file, so it stays."""
    name = leave(book_path, GONE)
    linked = files(book_path)
    alive = segment_sweep.owner_alive

    def links_then_dies(path):
        if os.path.basename(path) == name:  # linked as an importer links it (not through Book.open: it sweeps)
            with sqlite3.connect(book_path) as conn:
                segment = conn.execute("SELECT max(id) + 1 FROM segments").fetchone()[0]
                conn.execute("INSERT INTO segment_files (id, file, base) VALUES (?, ?, 0)", (segment, name))
                conn.execute("INSERT INTO segments (id, level, rows) VALUES (?, 0, 0)", (segment,))
            return False
        return alive(path)

    monkeypatch.setattr(segment_sweep, "owner_alive", links_then_dies)
    with Book.open(book_path, readonly=True):
        pass
    assert files(book_path) == linked


def test_a_reader_that_may_not_remove_files_opens_the_book_and_says_so_once(book_path, monkeypatch, caplog):
    name = leave(book_path, GONE)

    def refused(path):
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(segment_sweep.os, "unlink", refused)
    with caplog.at_level(logging.INFO, logger=segment_sweep.__name__):
        for _ in range(2):
            with Book.open(book_path, readonly=True) as book:
                assert book.stats().games == 12
    assert name in files(book_path)
    assert [record.getMessage() for record in caplog.records] == [
        f"cannot remove what a stopped import left in {segment_files.folder_of(book_path)}: Permission denied"]


def test_a_scratch_file_is_named_after_the_process_writing_it_so_another_process_spares_it(tmp_path):
    """compact, the upgrade to packed files and a dropped batch's rewrite write a scratch file
    beside the segment they replace: named after the old file, whose owner is long gone, another
    process's sweep (a reader opening the book) would remove it mid-write."""
    folder = tmp_path / "b.sqlite-segments"
    folder.mkdir()
    scratch = segment_files.scratch_path(str(folder), "folding")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    after_the_old_file = folder / f"{dead.pid}-{'0' * 32}.seg.folding"
    for path in (scratch, after_the_old_file):
        with open(path, "wb") as out:
            out.write(b"rows")
    code = ("from fuseki.book.storage.position_index import segment_sweep; "
            f"print(segment_sweep.sweep({str(folder)!r}, set()))")
    swept = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert swept.strip() == repr([after_the_old_file.name])
    assert os.path.exists(scratch) and not after_the_old_file.exists()
