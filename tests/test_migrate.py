"""book.storage.migrate: a book written before the segments' next-move statistics were named
``next_stats`` (schema version 2, tables ``summary_<id>`` and each segment file's ``summary``)
is upgraded the first time it is opened, read-only or not, and answers as before.

The old layout is made here by hand from a new book (``make_old``: the old names written out,
not taken from the code under test), on SQLite with segments both in the book's file and in
segment files, and on PostgreSQL.
"""

from __future__ import annotations

import os
import sqlite3

import numpy as np
import pytest

from fuseki.book.analysis.pipeline import importer
from fuseki.book.storage import nextmoves, schema, segment_files
from fuseki.book.storage.store import Book

from bookrows import answers
from games import write_games
from replay import sample_positions


def tables(book) -> list[str]:
    """The book's own tables whose names start with summary_ or next_stats_."""
    with book.db.connect() as conn:
        if book.db.dialect.name == "sqlite":
            found = conn.exec_driver_sql("SELECT name FROM sqlite_master WHERE type = 'table'").scalars()
        else:
            found = conn.exec_driver_sql("SELECT tablename FROM pg_tables "
                                         "WHERE schemaname = current_schema()").scalars()
        return sorted(n for n in found if n.startswith(("summary_", "next_stats_")))


def file_tables(book) -> list[list[str]]:
    """Each segment file's tables."""
    with book.db.connect() as conn:
        folder, files = segment_files.book_folder(conn), segment_files.in_files(conn)
    found = []
    for segment in files:
        with sqlite3.connect(os.path.join(folder, segment.name)) as db:
            found.append(sorted(r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")))
    return found


def make_old(book) -> None:
    """What fuseki wrote before version 3: next_stats_<id> was summary_<id> (on PostgreSQL with
    its index summary_<id>_pkey), a segment file's next_stats was summary, the version 2."""
    with book.db.connect() as conn, conn.begin():
        for name in tables(book):
            old = "summary_" + name.removeprefix("next_stats_")
            conn.exec_driver_sql(f"ALTER TABLE {name} RENAME TO {old}")
            if book.db.dialect.name == "postgresql":
                conn.exec_driver_sql(f"ALTER INDEX {name}_pkey RENAME TO {old}_pkey")
        conn.exec_driver_sql("UPDATE meta SET value = '2' WHERE name = 'schema_version'")
        folder, files = segment_files.book_folder(conn), segment_files.in_files(conn)
    for segment in files:
        with sqlite3.connect(os.path.join(folder, segment.name)) as db:
            db.execute("ALTER TABLE next_stats RENAME TO summary")


def version(book) -> str:
    with book.db.connect() as conn:
        return conn.exec_driver_sql("SELECT value FROM meta WHERE name = 'schema_version'").scalar()


@pytest.fixture
def built(tmp_path, book_url, monkeypatch):
    """A book of 60 games in batches of 8, each key of 2 games of a batch counted ahead; on SQLite
    the first 24 games' segments in the book's file and the rest in segment files.  (url, sample
    boards, answers)."""
    folder, first, rest = tmp_path / "games", tmp_path / "first", tmp_path / "rest"
    for path in (folder, first, rest):
        path.mkdir()
    games = write_games(folder, count=60, seed=71)
    for name in sorted(os.listdir(folder)):
        (first if name < "g19_024" else rest).joinpath(name).write_bytes((folder / name).read_bytes())
    monkeypatch.setattr(nextmoves, "GAMES", 2)
    monkeypatch.setattr(segment_files, "ENABLED", False)
    with Book.open(book_url) as book:
        importer.import_paths(book, [str(first)], workers=0, batch_games=8)
    monkeypatch.setattr(segment_files, "ENABLED", True)
    boards = sample_positions(games, np.random.default_rng(7), count=25)
    with Book.open(book_url) as book:
        importer.import_paths(book, [str(rest)], workers=0, batch_games=8)
        expected = answers(book, boards)
        assert tables(book)
        if book.db.dialect.name == "sqlite":
            assert file_tables(book)  # both forms are there to rename
    return book_url, boards, expected


@pytest.mark.parametrize("readonly", [True, False])
def test_an_old_book_is_upgraded_when_opened_and_answers_as_before(built, readonly):
    url, boards, expected = built
    with Book.open(url) as book:
        before = tables(book)
        make_old(book)
        assert all(name.startswith("summary_") for name in tables(book)) and version(book) == "2"
        assert all("summary" in names and "next_stats" not in names for names in file_tables(book))
    with Book.open(url, readonly=readonly) as book:
        assert version(book) == schema.SCHEMA_VERSION
        assert tables(book) == before  # every summary_<id> is next_stats_<id> again
        assert all("next_stats" in names and "summary" not in names for names in file_tables(book))
        assert answers(book, boards) == expected


def test_an_upgrade_cut_short_is_finished_by_the_next_open(built):
    """The files are renamed first and the version row last: a book that still says 2 with some
    files renamed is finished, not refused."""
    url, boards, expected = built
    with Book.open(url) as book:
        make_old(book)
        with book.db.connect() as conn:
            folder, files = segment_files.book_folder(conn), segment_files.in_files(conn)
    for segment in files[:1]:  # as if the last upgrade died after this file
        with sqlite3.connect(os.path.join(folder, segment.name)) as db:
            db.execute("ALTER TABLE summary RENAME TO next_stats")
    with Book.open(url, readonly=True) as book:
        assert version(book) == schema.SCHEMA_VERSION
        assert all(name.startswith("next_stats_") for name in tables(book))
        assert all("next_stats" in names and "summary" not in names for names in file_tables(book))
        assert answers(book, boards) == expected


def test_a_book_of_another_version_is_still_refused(tmp_path):
    path = str(tmp_path / "b.sqlite")
    Book.open(path).close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = '1' WHERE name = 'schema_version'")
    with pytest.raises(schema.SchemeMismatch, match="schema_version is 1, this fuseki needs 3"):
        Book.open(path, readonly=True)


def test_an_old_statistics_book_is_read_as_it_is(tmp_path):
    """A statistics book has no segments (version 3 changed nothing in it) and is never
    written: the built-in book says 2 and opens, read-only, unchanged."""
    from fuseki.book.builders.statbook import write_statistics
    from fuseki.engine.core.board import Board

    folder = tmp_path / "games"
    folder.mkdir()
    write_games(folder, count=20, seed=3)
    full_path, stats_path = str(tmp_path / "full.sqlite"), str(tmp_path / "stats.sqlite")
    with Book.open(full_path) as full:
        importer.import_paths(full, [str(folder)], workers=0)
        write_statistics(full, stats_path, 2)
        expected = full.next_moves(Board(19))
    with sqlite3.connect(stats_path) as db:
        db.execute("UPDATE meta SET value = '2' WHERE name = 'schema_version'")
    before = open(stats_path, "rb").read()
    with Book.open(stats_path, readonly=True) as stats:
        assert stats.statistics is not None
        found = stats.next_moves(Board(19))
        assert (found.total, found.moves) == (expected.total, expected.moves)
    assert open(stats_path, "rb").read() == before
    with sqlite3.connect(stats_path) as db:
        db.execute("UPDATE meta SET value = '1' WHERE name = 'schema_version'")
    with pytest.raises(schema.SchemeMismatch):
        Book.open(stats_path, readonly=True)

