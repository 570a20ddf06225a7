"""book.storage.position_index.segments: every batch a segment, full levels merged, the answers never change."""

from __future__ import annotations

import sqlite3

import numpy as np

from fuseki.book.analysis.pipeline import importer
from fuseki.book.storage import schema
from fuseki.book.storage.position_index import segment_files, segments, sqlite_stage
from fuseki.book.storage.store import Book

from bookrows import answers
from games import write_games
from replay import sample_positions


def position_rows(book):
    with book.db.connect() as conn:
        return len(segments.all_rows(conn)[0])


def test_full_levels_are_merged_and_the_answers_stay_the_same(tmp_path, book_url, monkeypatch):
    folder = tmp_path / "games"
    folder.mkdir()
    games = write_games(folder, count=60, seed=31)
    boards = sample_positions(games, np.random.default_rng(3), count=20)
    with Book.open(str(tmp_path / "reference.sqlite")) as reference:
        importer.import_paths(reference, [str(folder)], workers=0, batch_games=1000)
        with reference.db.connect() as conn:
            assert len(segments.live(conn)) == 1
        expected = answers(reference, boards)
        expected_rows = position_rows(reference)

    monkeypatch.setattr(segments, "FANOUT", 3)
    with Book.open(book_url) as book:
        # batches of 1, 2, 2, 2, ... games: 30 segments written, merged 3 at a time
        importer.import_paths(book, [str(folder)], workers=0, batch_games=2)
        with book.db.connect() as conn:
            live = segments.live(conn)
            assert segments.row_count(conn) == expected_rows
        levels = [segment.level for segment in live]
        assert max(levels) >= 2  # merges of merged segments happened
        assert all(levels.count(level) < 3 for level in set(levels))
        assert position_rows(book) == expected_rows
        assert answers(book, boards) == expected

        book.compact()
        with book.db.connect() as conn:
            assert [segment.rows for segment in segments.live(conn)] == [expected_rows]
        assert position_rows(book) == expected_rows
        assert answers(book, boards) == expected


def test_a_batch_is_written_packed_so_the_book_needs_no_rewrite(tmp_path, monkeypatch):
    """Both ways rows reach SQLite (a database image, or INSERTs where the sqlite3 module
    cannot deserialize) give the same segments, in key order, packed."""
    folder = tmp_path / "games"
    folder.mkdir()
    write_games(folder, count=400, seed=32, length=200)
    monkeypatch.setattr(segment_files, "ENABLED", False)  # the segments in the book's own file
    found = {}
    for images in (True, False):
        monkeypatch.setattr(sqlite_stage, "IMAGES", images)
        path = tmp_path / f"book-{images}.sqlite"
        with Book.open(str(path)) as book:
            report = importer.import_paths(book, [str(folder)], workers=0, batch_games=1000)
            with book.db.connect() as conn:
                ids = [segment.id for segment in segments.live(conn)]
        assert report.positions > 30_000 and len(ids) > 1
        with sqlite3.connect(path) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            found[images] = [conn.execute(f"SELECT key, code FROM positions_{i}").fetchall() for i in ids]
            size, unused, pages = conn.execute(
                "SELECT sum(pgsize), sum(unused), count(*) FROM dbstat "
                "WHERE name LIKE 'positions_%' AND pagetype = 'leaf'").fetchone()
        # Rows inserted one by one leave index pages about 88% full; a whole-table transfer
        # into an empty table fills them (the last page of each segment may be part empty).
        assert pages > 20 and unused / size < 0.04, (images, pages, unused / size)
        assert sum(map(len, found[images])) == report.positions
        for rows in found[images]:
            keys = [key for key, _ in rows]
            assert rows == sorted(rows) and len(set(keys)) < len(keys)  # equal keys of several games
    assert found[True] == found[False]


def test_the_staged_rows_are_let_go_after_each_write_and_a_reader_stages_nothing(tmp_path):
    folder = tmp_path / "games"
    folder.mkdir()
    write_games(folder, count=30, seed=34)
    path = str(tmp_path / "book.sqlite")
    with Book.open(path) as book:
        importer.import_paths(book, [str(folder)], workers=0, batch_games=10)
        with book.db.connect() as conn:
            dbapi = conn.connection.dbapi_connection
            staged = f"{sqlite_stage.STAGE}.{schema.staging_table.name}"
            assert dbapi.execute(f"SELECT count(*) FROM {staged}").fetchone() == (0,)
            assert dbapi.execute(f"PRAGMA {sqlite_stage.STAGE}.page_count").fetchone() == (2,)
    with Book.open(path, readonly=True) as book, book.db.connect() as conn:
        names = [row[1] for row in conn.connection.dbapi_connection.execute("PRAGMA database_list")]
        assert sqlite_stage.STAGE not in names


def test_a_merge_between_two_reads_makes_a_reader_start_again(tmp_path, book_url, monkeypatch):
    """The reader's segment list and codes must come from one state of the book."""
    folder = tmp_path / "games"
    folder.mkdir()
    games = write_games(folder, count=12, seed=33)
    with Book.open(book_url) as book:
        importer.import_paths(book, [str(folder)], workers=0, batch_games=2)
        boards = sample_positions(games, np.random.default_rng(4), count=6)
        expected = answers(book, boards)
        real_codes = segments.codes
        merged = []

        def merge_first(conn, snap, key, games=None):
            # another writer merges every segment just after this reader listed them
            if not merged:
                merged.append(True)
                if snap.files:  # and removes their files before this reader opened them
                    segment_files.forget(snap.folder, [])
                book.merge_all()
            return real_codes(conn, snap, key, games)

        monkeypatch.setattr(segments, "codes", merge_first)
        book.forget_caches()
        assert answers(book, boards) == expected
        assert merged
        with book.db.connect() as conn:
            assert len(segments.live(conn)) == 1 and not segment_files.in_files(conn)
