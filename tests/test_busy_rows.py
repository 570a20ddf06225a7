"""The stored rows of busy positions (``book.storage.busy_rows``): one blob of codes per position.

- Each stored blob is exactly the position's rows, read here with plain SQL from every
  segment (the book's own tables and, for SQLite, its segment files), and each stored
  position has at least the bar's games.
- The queries that read every row (filters, lists of games) answer from the blobs as they do
  from the segments, on both backends, and do read the blobs (counted).
- A blob of an older book version is never read: after games are added by an import that
  did not store them again, the answers count the new games; storing again brings them back.
- ``fuseki import`` stores them (its book's version is the meta row's).
- The brute force of ``tests/test_filters.py`` runs on a ``fuseki import`` of the real month,
  whose busy positions are answered from their blobs (asserted there).
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import text

from fuseki.book.analysis.pipeline import importer
from fuseki.book.model.filters import Filters
from fuseki.book.queries.gamesets import GameSet
from fuseki.book.storage import busy_rows, nextmoves, segments
from fuseki.book.storage.store import Book
from fuseki.engine.core.board import Board
from fuseki.engine.core.zobrist import to_signed

from bookrows import segment_file
from games import import_forty, write_games
from replay import as_dict, sample_positions

ROOT = Path(__file__).resolve().parent.parent
LEAST = 4  # the bar for these 40 games: the empty board and the popular openings pass it


@pytest.fixture
def busy_book(tmp_path, book_url, monkeypatch):
    """40 games in batches of 7, next-move statistics of 2 games and merges of 3 segments, the busy
    positions stored at ``LEAST`` games."""
    monkeypatch.setattr(nextmoves, "GAMES", 2)
    monkeypatch.setattr(segments, "FANOUT", 3)
    book, games, _folder = import_forty(tmp_path, book_url)
    assert busy_rows.store(book, least=LEAST) > 3
    yield book, games
    book.close()


def rows_in_sql(book, key: int) -> np.ndarray:
    """Every code of the signed ``key``, sorted, read with plain SQL: each segment table of the
    book, and each segment file of a SQLite book (its codes stored from the file's base)."""
    found = []
    with book.db.connect() as conn:
        ids = [int(i) for i in conn.execute(text("SELECT id FROM segments")).scalars()]
        files = []
        if "segment_files" in conn.dialect.get_table_names(conn):
            files = list(conn.execute(text("SELECT id, file, base FROM segment_files")))
        for segment in set(ids) - {int(i) for i, _name, _base in files}:  # a table (a view on PostgreSQL)
            found += conn.execute(text(f"SELECT code FROM positions_{segment} WHERE key = :k"), {"k": key}).scalars()
        for _id, name, base in files:
            keys, codes, _stats = segment_file(os.path.join(book.path + "-segments", name))
            found += [code + base for found_key, code in zip(keys, codes) if found_key == key]
    return np.sort(np.array(found, dtype=np.int64))


def stored(book) -> dict[int, np.ndarray]:
    with book.db.connect() as conn:
        return {int(key): np.frombuffer(bytes(blob), dtype="<i8")
                for key, blob in conn.execute(text("SELECT key, codes FROM busy_rows"))}


def test_each_blob_is_every_row_of_its_position(busy_book):
    book, games = busy_book
    blobs = stored(book)
    empty = to_signed(min(Board(19).symmetric_keys(Board(19).to_move)))
    assert empty in blobs
    for key, codes in blobs.items():
        expected = rows_in_sql(book, key)
        assert np.array_equal(codes, expected), key
        assert len(np.unique(codes >> 24)) >= LEAST  # games, each counted once (GAME_SHIFT)


FILTERS = [Filters(player="lee"), Filters(winner="B"), Filters(komi=(3.0, 4.0)),
           Filters(player="e", year_from=2012), Filters(within=GameSet(range(1, 41, 2)))]


def answers(book, boards):
    out = []
    for board in boards:
        for f in FILTERS:
            found = book.next_moves(board, filters=f)
            page = book.games(board, filters=f, page_size=100)
            out.append((as_dict(found), found.total, found.ended, [row.id for row in page.rows], page.total))
        out.append([row.id for row in book.games(board, page_size=100).rows])
    return out


def test_queries_answer_from_the_blobs_as_from_the_rows(busy_book, monkeypatch):
    book, games = busy_book
    boards = sample_positions(games, np.random.default_rng(7), count=10)
    read = []
    original = busy_rows.StoredRows.codes

    def counted(self, conn, snap, key):
        found = original(self, conn, snap, key)
        read.append(found is not None)
        return found

    monkeypatch.setattr(busy_rows.StoredRows, "codes", counted)
    from_blobs = answers(book, boards)
    assert sum(read) >= 2  # the empty board and a popular opening at least came from their blobs
    book.forget_caches()
    monkeypatch.setattr(busy_rows.StoredRows, "codes", lambda self, conn, snap, key: None)
    assert answers(book, boards) == from_blobs


def named(book, part: str) -> int:
    """The stored 19x19 games with ``part`` in a player's name (every one reached the empty board)."""
    with book.db.connect() as conn:
        return conn.execute(text("SELECT count(*) FROM games WHERE size = 19 AND (lower(black) LIKE :p "
                                 "OR lower(white) LIKE :p)"), {"p": f"%{part}%"}).scalar()


def test_a_blob_of_an_older_version_is_not_read(busy_book, tmp_path):
    book, _games = busy_book
    location = book.path or book.db.url.render_as_string(hide_password=False)
    reader = Book.open(location, readonly=True)  # another process's view, kept across the import
    board, lee = Board(19), Filters(player="e")
    key = to_signed(min(board.symmetric_keys(board.to_move)))
    assert reader.games(board, filters=lee).total == named(book, "e")
    folder = tmp_path / "more"
    folder.mkdir()
    write_games(folder, count=9, seed=5)
    before = named(book, "e")
    importer.import_paths(book, [str(folder)], workers=0)  # the library's import: the blobs stay as they were
    assert named(book, "e") > before
    with book.db.connect() as conn:
        assert book.source.stored_rows.codes(conn, segments.snapshot(conn), key) is None  # of the older version
    assert reader.games(board, filters=lee).total == named(book, "e")
    assert reader.next_moves(board, filters=lee).total == named(book, "e")
    busy_rows.store(book, least=LEAST)
    reader.forget_caches()
    with reader.db.connect() as conn:
        stored = reader.source.stored_rows.codes(conn, segments.snapshot(conn), key)
        assert np.array_equal(stored, rows_in_sql(reader, key))
    assert reader.next_moves(board, filters=lee).total == named(book, "e")
    reader.close()


def test_fuseki_import_stores_them(tmp_path):
    folder = tmp_path / "games"
    folder.mkdir()
    write_games(folder, count=30)
    path = tmp_path / "book.sqlite"
    run = subprocess.run([sys.executable, "-m", "fuseki", "import", str(folder), "--book", str(path), "--workers", "0"],
                         cwd=ROOT.parent, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    with sqlite3.connect(path) as conn:
        through = conn.execute("SELECT value FROM meta WHERE name = ?", (busy_rows.THROUGH,)).fetchone()
        assert through == (str(conn.execute("SELECT max(id) FROM games").fetchone()[0]),)
        assert conn.execute("SELECT count(*) FROM busy_rows").fetchone() == (0,)  # 30 games: nothing is busy
