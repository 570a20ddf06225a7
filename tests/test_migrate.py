"""book.storage.migrate: a book written before the segments' next-move statistics were named
``next_stats`` (schema version 2, tables ``summary_<id>`` and each segment file's ``summary``),
before the pattern index was stored once (version 3: every entry in the table
``pattern_events`` and a whole-file map ``<size>.map`` beside it), or before segment files were
packed (version 4), is upgraded the first time it is opened, read-only or not, and answers as
before.

The old layouts are made here by hand from a new book (``make_old``, ``make_v3``: the old
names and rows written out, not taken from the code under test), on SQLite with segments both
in the book's file and in segment files, and on PostgreSQL.  Version 4's segment files were
SQLite databases (tables ``positions`` and ``next_stats``): ``make_v4_files`` writes them so
from what the packed files hold (read by ``bookrows.segment_file``).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from fuseki.book.analysis.pipeline import importer
from fuseki.book.storage import pattern_files, scheme
from fuseki.book.storage.position_index import nextmoves, segment_files
from fuseki.book.storage.position_index.statistics_book import StatisticsTable
from fuseki.book.storage.store import Book

from bookrows import answers, next_stats_rows, rows, segment_file
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


def segment_paths(book) -> list[str]:
    with book.db.connect() as conn:
        folder, files = segment_files.book_folder(conn), segment_files.in_files(conn)
    return [os.path.join(folder, segment.name) for segment in files]


def file_tables(book) -> list[list[str]]:
    """Each segment file's tables; ["packed"] for a packed file."""
    found = []
    for path in segment_paths(book):
        with open(path, "rb") as file:
            packed = file.read(8) == b"fsk-seg1"
        if packed:
            found.append(["packed"])
            continue
        with sqlite3.connect(path) as db:
            found.append(sorted(r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")))
    return found


V4_POSITIONS = ("CREATE TABLE positions (key INTEGER NOT NULL, code INTEGER NOT NULL, PRIMARY KEY (key, code)) "
                "WITHOUT ROWID")
V4_NEXT_STATS = "CREATE TABLE next_stats (key INTEGER PRIMARY KEY, stats BLOB NOT NULL) WITHOUT ROWID"


def make_v4_file(path: str) -> None:
    """A packed segment file written again as version 4 wrote it: a SQLite database of its rows
    and next-move statistics, in place."""
    keys, codes, stats = segment_file(path)
    scratch = path + ".v4"
    with sqlite3.connect(scratch) as db:
        db.execute(V4_POSITIONS)
        db.executemany("INSERT INTO positions (key, code) VALUES (?, ?)", zip(keys, codes))
        db.execute(V4_NEXT_STATS)
        db.executemany("INSERT INTO next_stats (key, stats) VALUES (?, ?)", stats)
    os.replace(scratch, path)


def make_v4_files(book) -> None:
    """Every segment file as version 4 wrote it, and the version row 4."""
    for path in segment_paths(book):
        make_v4_file(path)
    with book.db.connect() as conn, conn.begin():
        conn.exec_driver_sql("UPDATE meta SET value = '4' WHERE name = 'schema_version'")


def make_old(book) -> None:
    """What fuseki wrote before version 3: next_stats_<id> was summary_<id> (on PostgreSQL with
    its index summary_<id>_pkey), a segment file (a SQLite database) had the table summary, the version 2."""
    make_v4_files(book)
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
        assert version(book) == scheme.SCHEMA_VERSION
        assert tables(book) == before  # every summary_<id> is next_stats_<id> again
        assert all(names == ["packed"] for names in file_tables(book))
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
        assert version(book) == scheme.SCHEMA_VERSION
        assert all(name.startswith("next_stats_") for name in tables(book))
        assert all(names == ["packed"] for names in file_tables(book))
        assert answers(book, boards) == expected


@pytest.mark.parametrize("readonly", [True, False])
def test_a_version_4_book_gets_its_segment_files_packed(built, readonly):
    """Each SQLite segment file of a version-4 book is packed in its place, smaller, with the
    same rows and next-move statistics; the book answers as before."""
    url, boards, expected = built
    if url.startswith("postgresql"):
        pytest.skip("segment files are a SQLite book's")
    with Book.open(url) as book:
        before = rows(book), next_stats_rows(book)
        make_v4_files(book)
        sizes = [os.path.getsize(path) for path in segment_paths(book)]
        assert all("positions" in names for names in file_tables(book)) and version(book) == "4"
    with Book.open(url, readonly=readonly) as book:
        assert version(book) == scheme.SCHEMA_VERSION
        assert all(names == ["packed"] for names in file_tables(book))
        assert sum(os.path.getsize(path) for path in segment_paths(book)) < sum(sizes)
        assert (rows(book), next_stats_rows(book)) == before
        assert answers(book, boards) == expected


def test_a_version_4_upgrade_cut_short_is_finished_by_the_next_open(built):
    """Files are packed one by one before the version row moves: a version-4 book with some
    files packed already gets the others packed, and the packed ones are left as they are."""
    url, boards, expected = built
    if url.startswith("postgresql"):
        pytest.skip("segment files are a SQLite book's")
    with Book.open(url) as book:
        paths = segment_paths(book)
        packed = Path(paths[0]).read_bytes()
        make_v4_files(book)
    with open(paths[0], "wb") as out:  # as if the last upgrade died after this file
        out.write(packed)
    with Book.open(url, readonly=True) as book:
        assert version(book) == scheme.SCHEMA_VERSION
        assert all(names == ["packed"] for names in file_tables(book))
        assert Path(paths[0]).read_bytes() == packed
        assert answers(book, boards) == expected


def test_a_book_of_another_version_is_still_refused(tmp_path):
    path = str(tmp_path / "b.sqlite")
    Book.open(path).close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = '1' WHERE name = 'schema_version'")
    with pytest.raises(scheme.SchemeMismatch, match=f"schema_version is 1, this fuseki needs {scheme.SCHEMA_VERSION}"):
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
        assert isinstance(stats.index, StatisticsTable)
        found = stats.next_moves(Board(19))
        assert (found.total, found.moves) == (expected.total, expected.moves)
    assert open(stats_path, "rb").read() == before
    with sqlite3.connect(stats_path) as db:
        db.execute("UPDATE meta SET value = '1' WHERE name = 'schema_version'")
    with pytest.raises(scheme.SchemeMismatch):
        Book.open(stats_path, readonly=True)



def make_v3(path: str) -> None:
    """What fuseki wrote at version 3 beside a SQLite book: every game's pattern-index entry in
    the table (here replayed from its stored record, not read from the files), a whole-file map
    named by the meta row ``pattern_map_<size>``, no ``pattern_files_<size>`` row or files."""
    from fuseki.book.analysis.patterns import index

    with Book.open(path, readonly=True) as book:
        rows = [(i, book.game(i).size, index.game_events(book.game(i)).tobytes())
                for size in (19, 9) for i in book.game_ids(size)]
    folder = path + "-patterns"
    for name in os.listdir(folder):
        os.remove(os.path.join(folder, name))
    with open(os.path.join(folder, "19.map"), "wb") as out:
        out.write(b"fuseki pattern map 1\n" + b"\0" * 4000)
    with sqlite3.connect(path) as db:
        db.executemany("INSERT INTO pattern_events (game_id, size, events) VALUES (?, ?, ?)", rows)
        db.execute("DELETE FROM meta WHERE name LIKE 'pattern_files_%'")
        db.execute("INSERT INTO meta (name, value) VALUES ('pattern_map_19', '0123456789abcdef')")
        db.execute("UPDATE meta SET value = '3' WHERE name = 'schema_version'")


@pytest.fixture
def v3(tmp_path):
    """A version-3 SQLite book of 30 19x19 and 20 9x9 games, its games, and the search answers
    of its version-4 self (patterns cut from the games, the same for both)."""
    from patterncount import make_games, pattern_of

    folder = tmp_path / "games"
    folder.mkdir()
    games = {19: make_games(folder, 19, 30, seed=21), 9: make_games(folder, 9, 20, seed=22)}
    path = str(tmp_path / "b.sqlite")
    with Book.open(path) as book:
        importer.import_paths(book, [str(folder)], workers=0, batch_games=8)
    rng = np.random.default_rng(9)
    patterns = [pattern_of(games[size], rng, kind, size, any_points=0, swap=False)
                for size in (19, 9) for kind in ("corner", "side")]
    make_v3(path)
    return path, games, patterns


def pattern_rows(path: str) -> int:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT count(*) FROM pattern_events").fetchone()[0]


@pytest.mark.parametrize("readonly", [True, False])
def test_a_version_3_book_gets_its_pattern_index_stored_once(v3, readonly):
    from fuseki.book.analysis.patterns import index_map

    from patterncount import check, expected_index

    path, games, patterns = v3
    assert pattern_rows(path) == 50
    with Book.open(path, readonly=readonly) as book:
        assert version(book) == scheme.SCHEMA_VERSION
        for pattern, want in patterns:
            check(book, games[pattern.size], pattern, want, ids=list(book.game_ids(pattern.size)))
    assert pattern_rows(path) == 0
    assert not os.path.exists(path + "-patterns/19.map")
    with sqlite3.connect(path) as db:
        assert not db.execute("SELECT 1 FROM meta WHERE name LIKE 'pattern_map_%'").fetchall()
    for size in (19, 9):
        with Book.open(path, readonly=True) as book:
            found = index_map.load(book, size)
        for got, want, name in zip(found[:5], expected_index(path, size), pattern_files.IndexedGames._fields):
            assert np.array_equal(np.asarray(got), want), name


def test_a_version_3_upgrade_cut_short_leaves_version_3_and_the_next_open_finishes_it(v3, monkeypatch):
    from fuseki.book.storage import pattern_events

    from patterncount import check

    path, games, patterns = v3
    real = pattern_events.move_to_files

    def dies_after_the_files(conn):
        real(conn)  # the files are written ...
        raise OSError("killed")  # ... and the book's transaction never commits

    monkeypatch.setattr(pattern_events, "move_to_files", dies_after_the_files)
    with pytest.raises(OSError, match="killed"):
        Book.open(path)
    monkeypatch.setattr(pattern_events, "move_to_files", real)
    assert pattern_rows(path) == 50
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta WHERE name = 'schema_version'").fetchone()[0] == "3"
    assert scheme.MIGRATES_FROM == ("2", "3", "4")
    with Book.open(path, readonly=True) as book:
        assert version(book) == scheme.SCHEMA_VERSION
        for pattern, want in patterns:
            check(book, games[pattern.size], pattern, want, ids=list(book.game_ids(pattern.size)))
    assert pattern_rows(path) == 0
