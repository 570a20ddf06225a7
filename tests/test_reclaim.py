"""A SQLite book takes no more room after merges than before them (issue "book at 1.5 million
games": no free pages right after an import, whatever its size).

Real games (the first 780 Tygem files) are imported in batches of 100 with merges of 5, so
that the import ends with a merge; the book is compared with one of the same games that never
merged.  Two faults of the past must not come back: the pages a merge frees stayed in the file
(40% of a month's book ended so), and merged segments were written 88% full.
"""

from __future__ import annotations

import os
import sqlite3

import pytest

from fuseki.book.analysis.pipeline import importer
from fuseki.book.storage.position_index import segment_files, segments
from fuseki.book.storage.store import Book
from fuseki.engine.core.board import Board

from bookrows import segment_file
from conftest import write_archive

# batches of 12, 24, 48, 96 files (the first ones grow), then 100: 780 files make 10 batches
GAMES, BATCH = 780, 100


def pragmas(path) -> dict:
    with sqlite3.connect(path) as conn:
        return {name: conn.execute(f"PRAGMA {name}").fetchone()[0]
                for name in ("auto_vacuum", "freelist_count", "page_count")}


@pytest.fixture(scope="module")
def archive(tmp_path_factory, tygem_games):
    return write_archive(tmp_path_factory.mktemp("reclaim") / "games.tgz", tygem_games[:GAMES])


def build(path, archive, fanout, monkeypatch, reclaim=True, batch=BATCH, files=False):
    """Import the archive (segments in the book's own file unless ``files``)."""
    monkeypatch.setattr(segments, "FANOUT", fanout)
    monkeypatch.setattr(segment_files, "ENABLED", files)
    book = Book.open(str(path))
    if not reclaim:
        monkeypatch.setattr(book, "reclaim", lambda: 0)
    report = importer.import_paths(book, [str(archive)], workers=0, batch_games=batch)
    levels = sorted(segment.level for segment in book_segments(book))
    answer = book.next_moves(Board(19))
    book.close()
    return report, levels, answer


def book_segments(book):
    with book.db.connect() as conn:
        return segments.live(conn)


def test_an_import_ending_in_a_merge_leaves_no_free_page_and_packed_segments(tmp_path, archive, monkeypatch):
    # the same games in one batch: one segment, packed as the importer writes it
    report, levels, answer = build(tmp_path / "one.sqlite", archive, 5, monkeypatch, batch=10 * GAMES)
    merged_report, merged_levels, merged_answer = build(tmp_path / "merged.sqlite", archive, 5, monkeypatch)
    assert report.added == merged_report.added > 700
    assert levels == [0] and merged_levels == [1, 1]  # the last batch made the second merge
    one, merged = pragmas(tmp_path / "one.sqlite"), pragmas(tmp_path / "merged.sqlite")
    assert merged["auto_vacuum"] == 2 and merged["freelist_count"] == 0
    assert merged["page_count"] <= 1.03 * one["page_count"], (merged, one)  # 88% full pages: +11%
    assert merged_answer == answer


def test_a_rerun_gives_back_what_an_interrupted_import_left(tmp_path, archive, monkeypatch):
    path = tmp_path / "book.sqlite"
    build(path, archive, 5, monkeypatch, reclaim=False)  # as if stopped before the pages went back
    assert pragmas(path)["freelist_count"] > 100
    report, _levels, _answer = build(path, archive, 5, monkeypatch)
    assert report.added == 0 and pragmas(path)["freelist_count"] == 0


def test_an_older_book_keeps_its_free_pages_until_compact(tmp_path, archive, monkeypatch):
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:  # a book made before auto-vacuum: the file has a table already
        conn.execute("PRAGMA page_size=16384")
        conn.execute("CREATE TABLE unrelated (x)")
    build(path, archive, 5, monkeypatch)
    before = pragmas(path)
    assert before["auto_vacuum"] == 0 and before["freelist_count"] > 100
    with Book.open(str(path)) as book:
        assert book.reclaim() == 0
        book.compact()
    after = pragmas(path)
    assert after["auto_vacuum"] == 2 and after["freelist_count"] == 0 and after["page_count"] < before["page_count"]


def test_reclaim_moves_every_free_page_a_step_at_a_time(tmp_path, archive, monkeypatch):
    path = tmp_path / "book.sqlite"
    build(path, archive, 5, monkeypatch, reclaim=False)
    before = pragmas(path)
    with Book.open(str(path)) as book:
        assert book.reclaim(pages_per_step=50) == before["freelist_count"] > 100
        assert book.reclaim() == 0
        answer = book.next_moves(Board(19))
    after = pragmas(path)
    assert after["freelist_count"] == 0 and after["page_count"] == before["page_count"] - before["freelist_count"]
    monkeypatch.setattr(segments, "FANOUT", 1000)
    with Book.open(str(tmp_path / "reference.sqlite")) as reference:  # the same games, never merged
        importer.import_paths(reference, [str(archive)], workers=0, batch_games=BATCH)
        assert reference.next_moves(Board(19)) == answer


def test_segment_files_after_merges_are_packed_and_none_is_left_behind(tmp_path, archive, monkeypatch):
    """Segments as files (book.storage.position_index.segment_files): the merged files take no more room than one
    batch's file of the same games, no file is left that the book does not name, and the
    book's own file holds no positions."""
    sizes, answers = {}, {}
    for name, batch in (("one", 10 * GAMES), ("merged", BATCH)):
        path = tmp_path / f"{name}.sqlite"
        report, levels, answers[name] = build(path, archive, 5, monkeypatch, batch=batch, files=True)
        assert report.added > 700
        with Book.open(str(path), readonly=True) as book, book.db.connect() as conn:
            linked = {segment.name for segment in segment_files.in_files(conn)}
            assert len(linked) == len(segments.live(conn)) == len(levels)
            tables = conn.exec_driver_sql("SELECT count(*) FROM sqlite_master WHERE name GLOB 'positions_*'").scalar()
            assert tables == 0
        folder = segment_files.folder_of(str(path))
        assert set(os.listdir(folder)) == linked
        sizes[name] = sum(os.path.getsize(os.path.join(folder, file)) for file in linked)
        for file in linked:  # nothing in a file but its arrays (segment_file reads them to the last byte)
            keys, _codes, _stats = segment_file(os.path.join(folder, file))
            assert len(keys) > 0
    assert levels == [1, 1]  # the merged book's last batch made the second merge
    assert sizes["merged"] <= 1.03 * sizes["one"], sizes
    assert answers["merged"] == answers["one"]
