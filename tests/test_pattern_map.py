"""The pattern index's map (book.analysis.patterns.index_map): a process that opens the book maps the
arrays a search scans instead of reading and computing them, and answers exactly as before.

Each check opens the book again (a new ``Book``: nothing cached in the process), so the
answer comes from the map; the arrays are compared with ones computed here from the stored
games themselves (their records replayed, the bit sets set point by point, the winners read
with sqlite3), and the search's answers with the brute force of the pattern tests (tests/patterncount.py).
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

import numpy as np
import pytest

from fuseki.book.analysis.patterns import index, index_map
from fuseki.book.analysis.patterns.search import search
from fuseki.book.analysis.pipeline import importer
from fuseki.book.storage import schema
from fuseki.book.storage.pattern_events import indexed_through
from fuseki.book.storage.store import Book
from fuseki.engine.core.replay import EVENT_MOVE, EVENT_REMOVE, EVENT_SETUP

from patterncount import check, make_games, pattern_of

EVENT_KIND, POINT_MASK = 12, 4095


def expected_arrays(path: str, size: int):
    """(ids, events, offsets, held, winners) of the book's games of ``size``, computed from
    each stored record and the games table, without the index or its map."""
    book = Book.open(path, readonly=True)
    ids = [i for i in book.game_ids(size)]
    pieces = [index.game_events(book.game(i)) for i in ids]
    book.close()
    words = ((size + 2) ** 2 + 63) // 64
    held = np.zeros((len(ids), 2, words), dtype=np.uint64)
    for g, events in enumerate(pieces):
        for event in events.tolist():
            kind, point = event >> EVENT_KIND, event & POINT_MASK
            if kind == EVENT_REMOVE or point == 0:  # a capture's removal, or a pass
                continue
            colour = kind - EVENT_SETUP if kind >= EVENT_SETUP else kind - EVENT_MOVE  # black 0, white 1
            held[g, colour, point >> 6] |= np.uint64(1) << np.uint64(point & 63)
    with sqlite3.connect(path) as conn:
        winner = dict(conn.execute("SELECT id, coalesce(winner, 0) FROM games").fetchall())
    offsets = np.concatenate([[0], np.cumsum([len(p) for p in pieces])]).astype(np.int64)
    events = np.concatenate(pieces) if pieces else np.empty(0, dtype=np.uint16)
    return (np.array(ids, dtype=np.int64), events, offsets, held,
            np.array([winner[i] for i in ids], dtype=np.int8))


def assert_equal_arrays(found, want):
    for got, expected, name in zip(found[:5], want, index_map.IndexedGames._fields):
        assert np.array_equal(np.asarray(got), expected), name


def mapped(path: str, size: int):
    """The arrays a new read-only process's search would scan, and whether they were mapped."""
    book = Book.open(path, readonly=True)
    try:
        with book.db.connect() as conn:
            through = indexed_through(conn)
            token = index_map._token(conn, size)
        from_map = index_map._read(index_map.map_path(book, size), size, through, token) if token else None
        return index_map.load(book, size), from_map is not None
    finally:
        book.close()


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A SQLite book of 60 generated 19x19 games and 30 9x9 ones, searched once with write
    access (which indexes it and writes the maps); and the games of each size."""
    folder = tmp_path_factory.mktemp("patternmap")
    games = {19: make_games(folder, 19, 60, seed=5), 9: make_games(folder, 9, 30, seed=6)}
    path = str(folder / "book.sqlite")
    book = Book.open(path)
    importer.import_paths(book, [str(folder)], workers=0)
    rng = np.random.default_rng(1)
    for size in (19, 9):
        search(book, pattern_of(games[size], rng, "corner", size, any_points=0, swap=False)[0])
    book.close()
    return path, games, folder


@pytest.mark.parametrize("size", [19, 9])
def test_a_new_process_maps_exactly_what_the_table_gives(made, size):
    path, _games, _folder = made
    assert os.path.exists(index_map.map_path(Book.open(path, readonly=True), size))
    found, from_map = mapped(path, size)
    assert from_map
    assert_equal_arrays(found, expected_arrays(path, size))


@pytest.mark.parametrize("size", [19, 9])
def test_searches_from_the_map_equal_the_brute_force(made, size):
    path, games, _folder = made
    order = {s: [i for i in Book.open(path, readonly=True).game_ids(s)] for s in (19, 9)}
    rng = np.random.default_rng(size)
    for i, kind in enumerate(["corner", "side", "anywhere"] * 3):
        book = Book.open(path, readonly=True)  # a new book: the search maps the file again
        pattern, want = pattern_of(games[size], rng, kind, size, any_points=i % 2, swap=i % 3 == 0)
        check(book, games[size], pattern, want, ids=order[size])
        book.close()


def test_games_added_later_are_mapped_again_with_only_them_read(tmp_path):
    first, more = tmp_path / "first", tmp_path / "more"
    first.mkdir()
    more.mkdir()
    games = make_games(first, 19, 30, seed=76)
    make_games(more, 19, 12, seed=77)
    path = str(tmp_path / "book.sqlite")
    rng = np.random.default_rng(3)
    book = Book.open(path)
    importer.import_paths(book, [str(first)], workers=0)
    search(book, pattern_of(games, rng, "corner", 19, any_points=0, swap=False)[0])
    importer.import_paths(book, [str(more)], workers=0)
    index.update(book)
    before = os.stat(index_map.map_path(book, 19)).st_ino
    stale, from_map = mapped(path, 19)  # read-only: the map is older than the index, the table answers
    assert not from_map
    with book.db.connect() as conn:
        old = index_map._read_any(index_map.map_path(book, 19), 19, index_map._token(conn, 19))
    assert old is not None and len(old.game_ids) == 30 and old.through < book.max_game_id()
    search(book, pattern_of(games, rng, "corner", 19, any_points=0, swap=False)[0])
    book.close()
    assert os.stat(index_map.map_path(Book.open(path, readonly=True), 19)).st_ino != before
    found, from_map = mapped(path, 19)
    assert from_map
    want = expected_arrays(path, 19)
    assert len(want[0]) == 42
    assert_equal_arrays(found, want)
    assert_equal_arrays(stale, want)


def test_a_map_left_by_another_book_at_the_same_path_is_not_used(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    games = make_games(first, 19, 20, seed=8)
    other = make_games(second, 19, 20, seed=9)
    path = str(tmp_path / "book.sqlite")
    rng = np.random.default_rng(4)
    book = Book.open(path)
    importer.import_paths(book, [str(first)], workers=0)
    search(book, pattern_of(games, rng, "corner", 19, any_points=0, swap=False)[0])
    book.close()
    for name in os.listdir(tmp_path):
        if name.startswith("book.sqlite") and not name.endswith("-patterns"):
            target = tmp_path / name
            if target.is_dir():
                for inner in target.iterdir():
                    inner.unlink()
                target.rmdir()
            else:
                target.unlink()
    assert (tmp_path / "book.sqlite-patterns" / "19.map").exists()  # left behind
    book = Book.open(path)
    importer.import_paths(book, [str(second)], workers=0)
    for kind in ["corner", "side", "anywhere"]:
        pattern, want = pattern_of(other, rng, kind, 19, any_points=0, swap=False)
        check(book, other, pattern, want)
    book.close()
    found, from_map = mapped(path, 19)
    assert from_map  # the search wrote this book's own map over the old one
    assert_equal_arrays(found, expected_arrays(path, 19))


def test_a_killed_writers_temporary_map_is_removed_by_the_next_writer(made):
    path, games, _folder = made
    folder = os.path.dirname(index_map.map_path(Book.open(path, readonly=True), 19))
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True).stdout.strip()
    leftover = os.path.join(folder, f"{dead}-19.map.tmp")
    mine = os.path.join(folder, f"{os.getpid()}-9.map.tmp")  # a live writer's: kept
    for name in (leftover, mine):
        with open(name, "wb") as out:
            out.write(b"partial")
    book = Book.open(path)
    with book.writing() as conn:  # the map is stale: the next search writes it again
        conn.execute(schema.meta.delete().where(schema.meta.c.name == "pattern_map_19"))
    rng = np.random.default_rng(6)
    pattern, want = pattern_of(games[19], rng, "corner", 19, any_points=0, swap=False)
    check(book, games[19], pattern, want, ids=book.game_ids(19))
    book.close()
    assert not os.path.exists(leftover)
    assert os.path.exists(mine)
    os.remove(mine)


def test_a_read_only_book_never_writes_a_map(tmp_path):
    games = make_games(tmp_path, 19, 10, seed=10)
    path = str(tmp_path / "book.sqlite")
    book = Book.open(path)
    importer.import_paths(book, [str(tmp_path)], workers=0)
    index.update(book)
    book.close()
    book = Book.open(path, readonly=True)
    pattern, want = pattern_of(games, np.random.default_rng(7), "corner", 19, any_points=0, swap=False)
    check(book, games, pattern, want)
    book.close()
    assert not os.path.exists(str(tmp_path / "book.sqlite-patterns"))
