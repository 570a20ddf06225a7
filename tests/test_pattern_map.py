"""The pattern index beside a SQLite book (book.storage.pattern_files, book.analysis.patterns.index_map):
stored once, in files the import appends to; a process maps them and answers as the brute force.

Each check opens the book again (a new ``Book``: nothing cached in the process), so the
answer comes from the files; the arrays are compared with ones computed here from the stored
games themselves (``patterncount.expected_index``: their records replayed, the bit sets set
point by point, the winners read with sqlite3), and the search's answers with the brute force
of the pattern tests (tests/patterncount.py).
"""

from __future__ import annotations

import os
import sqlite3

import numpy as np
import pytest

from fuseki.book.analysis.patterns import index_map
from fuseki.book.analysis.patterns.search import search
from fuseki.book.analysis.pipeline import importer
from fuseki.book.storage import dialect, index_state, pattern_events, pattern_files, scheme
from fuseki.book.storage.connect import BookError
from fuseki.book.storage.store import Book

from patterncount import check, expected_index, make_games, pattern_of

SUFFIXES = ("ids", "offsets", "events", "held", "winners")


def assert_equal_arrays(found, want):
    for got, expected, name in zip(found[:5], want, pattern_files.IndexedGames._fields):
        assert np.array_equal(np.asarray(got), expected), name


def loaded(path: str, size: int, readonly: bool = True):
    """What a new process's search scans, and what the files alone hold (None: no files)."""
    with Book.open(path, readonly=readonly) as book:
        games = index_map.load(book, size)
        with book.db.connect() as conn:
            return games, pattern_files.read(conn, size)


def table_rows(path: str) -> int:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT count(*) FROM pattern_events").fetchone()[0]


def files_of(path: str, size: int) -> list[str]:
    return [os.path.join(path + "-patterns", f"{size}.{suffix}") for suffix in SUFFIXES]


def to_table(path: str) -> None:
    """Put the files' entries into the table and forget the files, as ``Book.compact`` does:
    the layout of a book whose entries are waiting in the table."""
    with Book.open(path) as book, book.writing() as conn:
        gone = pattern_events.move_to_table(conn)
    for name in gone:
        os.remove(name)


def import_into(path: str, folder) -> None:
    with Book.open(path) as book:
        importer.import_paths(book, [str(folder)], workers=0, batch_games=16)


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A SQLite book of 60 generated 19x19 games and 30 9x9 ones, imported in batches of 16
    (so the files grew by several appends); and the games of each size."""
    folder = tmp_path_factory.mktemp("patternmap")
    games = {19: make_games(folder, 19, 60, seed=5), 9: make_games(folder, 9, 30, seed=6)}
    path = str(folder / "book.sqlite")
    import_into(path, folder)
    return path, games


@pytest.mark.parametrize("size", [19, 9])
def test_the_import_stores_the_index_once_in_files_a_new_process_maps(made, size):
    path, _games = made
    assert table_rows(path) == 0  # not in the table as well
    assert all(os.path.exists(name) for name in files_of(path, size))
    found, stored = loaded(path, size)
    assert stored is not None and len(stored.game_ids) == len(found.game_ids)
    assert_equal_arrays(found, expected_index(path, size))


@pytest.mark.parametrize("size", [19, 9])
def test_searches_from_the_files_equal_the_brute_force(made, size):
    path, games = made
    order = {s: [i for i in Book.open(path, readonly=True).game_ids(s)] for s in (19, 9)}
    rng = np.random.default_rng(size)
    for i, kind in enumerate(["corner", "side", "anywhere"] * 3):
        book = Book.open(path, readonly=True)  # a new book: the search maps the files again
        pattern, want = pattern_of(games[size], rng, kind, size, any_points=i % 2, swap=i % 3 == 0)
        check(book, games[size], pattern, want, ids=order[size])
        book.close()


def test_games_added_later_are_appended_and_the_bytes_before_them_never_change(tmp_path):
    first, more = tmp_path / "first", tmp_path / "more"
    first.mkdir()
    more.mkdir()
    games = make_games(first, 19, 30, seed=76) + make_games(more, 19, 12, seed=77)
    path = str(tmp_path / "book.sqlite")
    import_into(path, first)
    before = {name: (os.stat(name).st_ino, open(name, "rb").read()) for name in files_of(path, 19)}
    import_into(path, more)
    for name, (inode, content) in before.items():
        assert os.stat(name).st_ino == inode  # the same file, grown: a reader's map stays valid
        assert open(name, "rb").read()[:len(content)] == content, name
    found, _stored = loaded(path, 19)
    want = expected_index(path, 19)
    assert len(want[0]) == 42
    assert_equal_arrays(found, want)
    assert table_rows(path) == 0
    rng = np.random.default_rng(3)
    with Book.open(path, readonly=True) as book:
        pattern, expected = pattern_of(games, rng, "corner", 19, any_points=0, swap=False)
        check(book, games, pattern, expected)


def test_bytes_past_the_last_commit_are_never_read_and_the_next_append_cuts_them(tmp_path):
    first, more = tmp_path / "first", tmp_path / "more"
    first.mkdir()
    more.mkdir()
    make_games(first, 19, 20, seed=81)
    make_games(more, 19, 10, seed=82)
    path = str(tmp_path / "book.sqlite")
    import_into(path, first)
    for name in files_of(path, 19):  # as a batch that wrote its bytes and then rolled back leaves them
        with open(name, "ab") as out:
            out.write(b"\xff" * 1000)
    found, _stored = loaded(path, 19)
    assert_equal_arrays(found, expected_index(path, 19))
    import_into(path, more)
    found, stored = loaded(path, 19)
    want = expected_index(path, 19)
    assert_equal_arrays(found, want)
    words = ((19 + 2) ** 2 + 63) // 64
    items = {"ids": 8 * 30, "offsets": 8 * 31, "events": 2 * len(want[1]), "held": 8 * 2 * words * 30, "winners": 30}
    for suffix, name in zip(SUFFIXES, files_of(path, 19)):
        assert os.path.getsize(name) == pattern_files.HEADER + items[suffix], name


def test_entries_waiting_in_the_table_are_read_then_moved_by_a_writer(tmp_path):
    """A book whose entries are in the table (an older fuseki's, or a compacted book): a
    read-only process reads them and writes nothing; one that may write moves them into the
    files in one transaction, and the index is stored once again."""
    games = {19: make_games(tmp_path, 19, 40, seed=15), 9: make_games(tmp_path, 9, 20, seed=16)}
    path = str(tmp_path / "book.sqlite")
    import_into(path, tmp_path)
    to_table(path)
    rows = table_rows(path)
    assert rows == 60 and not any(os.path.exists(n) for n in files_of(path, 19) + files_of(path, 9))
    found, stored = loaded(path, 19, readonly=True)
    assert stored is None and table_rows(path) == rows  # read, not moved
    assert_equal_arrays(found, expected_index(path, 19))
    found, _stored = loaded(path, 19, readonly=False)
    assert table_rows(path) == 0  # moved, every size at once
    for size in (19, 9):
        found, stored = loaded(path, size)
        assert stored is not None and len(stored.game_ids) == len(found.game_ids)
        assert_equal_arrays(found, expected_index(path, size))
    rng = np.random.default_rng(12)
    with Book.open(path, readonly=True) as book:
        pattern, want = pattern_of(games[9], rng, "side", 9, any_points=1, swap=True)
        check(book, games[9], pattern, want, ids=list(book.game_ids(9)))


def test_files_of_another_book_at_the_same_path_are_never_used(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    make_games(first, 19, 20, seed=8)
    other = make_games(second, 19, 20, seed=9)
    path = str(tmp_path / "book.sqlite")
    import_into(path, first)
    for name in os.listdir(tmp_path):
        target = tmp_path / name
        if name.startswith("book.sqlite") and not name.endswith("-patterns"):
            if target.is_dir():
                for inner in target.iterdir():
                    inner.unlink()
                target.rmdir()
            else:
                target.unlink()
    old = open(files_of(path, 19)[2], "rb").read()  # left behind: the first book's events
    import_into(path, second)
    assert open(files_of(path, 19)[2], "rb").read()[:200] != old[:200]  # started again: a new token
    found, _stored = loaded(path, 19)
    assert_equal_arrays(found, expected_index(path, 19))
    rng = np.random.default_rng(4)
    with Book.open(path, readonly=True) as book:
        for kind in ["corner", "side", "anywhere"]:
            pattern, want = pattern_of(other, rng, kind, 19, any_points=0, swap=False)
            check(book, other, pattern, want)


def test_missing_files_are_refused_read_only_and_written_again_by_a_writer(tmp_path, capsys):
    games = make_games(tmp_path, 19, 15, seed=10)
    path = str(tmp_path / "book.sqlite")
    import_into(path, tmp_path)
    os.remove(files_of(path, 19)[2])
    with Book.open(path, readonly=True) as book, pytest.raises(BookError, match=r"19\.events: missing"):
        index_map.load(book, 19)
    with Book.open(path) as book:
        pattern, want = pattern_of(games, np.random.default_rng(7), "corner", 19, any_points=0, swap=False)
        check(book, games, pattern, want)
    assert "indexing the book's games again" in capsys.readouterr().err
    found, stored = loaded(path, 19)
    assert stored is not None and table_rows(path) == 0
    assert_equal_arrays(found, expected_index(path, 19))


def test_a_compacted_book_is_one_file_and_answers_the_same(tmp_path):
    games = make_games(tmp_path, 19, 25, seed=13)
    path = str(tmp_path / "book.sqlite")
    import_into(path, tmp_path)
    with Book.open(path) as book:
        book.compact()
    assert not os.path.exists(path + "-patterns") and table_rows(path) == 25
    rng = np.random.default_rng(5)
    with Book.open(path, readonly=True) as book:
        pattern, want = pattern_of(games, rng, "corner", 19, any_points=0, swap=False)
        check(book, games, pattern, want)
    with Book.open(path) as book:  # a writer's first search moves them out again
        search(book, pattern)
    assert table_rows(path) == 0
    found, _stored = loaded(path, 19)
    assert_equal_arrays(found, expected_index(path, 19))


# --- the same index read through sqlite3 alone (fuseki pattern's start: issue 61) -------------------

def same_answer(found, want) -> None:
    """Two PatternResults answer the same: every count, every matched game and its move."""
    assert found is not None
    assert (found.total, found.continuations, found.tenuki) == (want.total, want.continuations, want.tenuki)
    assert np.array_equal(found.match_ids, want.match_ids) and np.array_equal(found.match_moves, want.match_moves)


@pytest.mark.parametrize("size", [19, 9])
def test_the_sqlite3_reader_reads_what_the_book_reads(made, size):
    """``pattern_files.read_ready`` (sqlite3 alone) maps the arrays ``index_map.load`` gives a ``Book``,
    and ``index_state``'s queries answer the same on a bare sqlite3 connection as on the book's own."""
    path, _games = made
    ready = pattern_files.read_ready(path, size)
    assert ready is not None
    games, top = ready
    with Book.open(path, readonly=True) as book:
        want = index_map.load(book, size)
        assert top == book.max_game_id() > 0
        with book.db.connect() as conn:
            through_book = [index_state.indexed_through(conn), index_state.max_game_id(conn),
                            index_state.waiting(conn), index_state.meta_names(conn, "pattern_files_"),
                            pattern_files.state(conn, size), dialect.book_file(conn)]
    assert_equal_arrays(games, want[:5])
    assert games.through == want.through
    with sqlite3.connect(path) as conn:
        alone = [index_state.indexed_through(conn), index_state.max_game_id(conn), index_state.waiting(conn),
                 index_state.meta_names(conn, "pattern_files_"), pattern_files.state(conn, size),
                 dialect.book_file(conn)]
    assert alone == through_book
    assert alone[:4] == [top, top, False, ["pattern_files_19", "pattern_files_9"]]
    assert alone[5] == os.path.realpath(path)


@pytest.mark.parametrize("size", [19, 9])
def test_a_search_through_sqlite3_alone_answers_as_the_book(made, size):
    """``search.search_file`` (no ``Book``, no SQLAlchemy) against ``search`` on the opened book, for
    corner, side and anywhere patterns with any points, wildcards, swapped colours and Kombilo's options."""
    from fuseki.book.analysis.patterns.search import search_file

    path, games = made
    rng = np.random.default_rng(100 + size)
    with Book.open(path, readonly=True) as book:
        for i, kind in enumerate(["corner", "side", "anywhere"] * 3):
            options = [{}, {"to_move": 1 + i % 2}, {"moves_from": 3, "moves_to": 30}][i // 3]
            pattern, _want = pattern_of(games[size], rng, kind, size, any_points=i % 2, swap=i % 3 == 0,
                                        wildcards=i % 2, **options)
            want = search(book, pattern)
            assert want.total > 0 or i  # at least the first pattern matches some game
            same_answer(search_file(path, pattern), want)


def wait_in_table(path: str, kept: int) -> None:
    """Leave the first ``kept`` 19x19 games in the files and put the others' entries in the table: the
    layout of a book whose later games ``index.update`` replayed (their entries wait to be moved)."""
    import json

    with sqlite3.connect(path) as db:
        stored = pattern_files.read(db, 19)
        ends = stored.offsets.tolist()
        rows = [(int(stored.game_ids[i]), 19, stored.events[ends[i]:ends[i + 1]].tobytes())
                for i in range(kept, len(stored.game_ids))]
        db.executemany("INSERT INTO pattern_events (game_id, size, events) VALUES (?, ?, ?)", rows)
        info = pattern_files.state(db, 19)
        info.update(games=kept, events=ends[kept], through=int(stored.game_ids[kept - 1]))
        db.execute("UPDATE meta SET value = ? WHERE name = ?", (json.dumps(info), pattern_files.meta_name(19)))


def test_the_sqlite3_reader_leaves_a_book_that_needs_work_to_the_book(tmp_path):
    """Where the index cannot be scanned as it stands (entries waiting in the table, games not indexed
    yet, files missing, another schema version, a statistics book, no file), ``read_ready`` answers None,
    so that ``fuseki pattern`` opens the ``Book``, which does the work (or says why not) and answers."""
    from fuseki.book.analysis.patterns.search import search_file

    games = make_games(tmp_path, 19, 20, seed=31)
    path = str(tmp_path / "book.sqlite")
    import_into(path, tmp_path)
    pattern, _want = pattern_of(games, np.random.default_rng(2), "corner", 19, any_points=0, swap=False)
    with Book.open(path, readonly=True) as book:
        want = search(book, pattern)
    same_answer(search_file(path, pattern), want)
    assert pattern_files.read_ready(path, 9) is None  # no game of that size: no files

    to_table(path)  # waiting in the table, no files
    assert pattern_files.read_ready(path, 19) is None
    with Book.open(path) as book:  # a writer moves them
        same_answer(search(book, pattern), want)
    same_answer(search_file(path, pattern), want)

    wait_in_table(path, 15)  # the files hold 15 games, the table the other 5 (an older import's, replayed)
    assert pattern_files.read_ready(path, 19) is None
    with Book.open(path, readonly=True) as book:  # read from both places, moved by no one
        same_answer(search(book, pattern), want)
    assert table_rows(path) == 5
    with Book.open(path) as book:
        same_answer(search(book, pattern), want)
    assert table_rows(path) == 0
    same_answer(search_file(path, pattern), want)

    with sqlite3.connect(path) as db:  # games the index does not hold yet (an older import's)
        through = db.execute("SELECT value FROM meta WHERE name = 'pattern_events_through'").fetchone()[0]
        db.execute("UPDATE meta SET value = ? WHERE name = 'pattern_events_through'", (str(int(through) - 1),))
    assert pattern_files.read_ready(path, 19) is None
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = ? WHERE name = 'pattern_events_through'", (through,))
    assert pattern_files.read_ready(path, 19) is not None

    with sqlite3.connect(path) as db:  # an older schema: Book.open upgrades it (or says why)
        db.execute("UPDATE meta SET value = 'x' WHERE name = 'hash_scheme'")
    assert pattern_files.read_ready(path, 19) is None
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = ? WHERE name = 'hash_scheme'", (scheme.hash_scheme(),))

    os.remove(files_of(path, 19)[3])  # files missing: the book indexes the games again
    assert pattern_files.read_ready(path, 19) is None
    with Book.open(path) as book:
        same_answer(search(book, pattern), want)
    same_answer(search_file(path, pattern), want)

    assert pattern_files.read_ready(str(tmp_path / "none.sqlite"), 19) is None
    assert not os.path.exists(tmp_path / "none.sqlite")  # nothing created
    from fuseki.book.model import builtin

    if builtin.available():
        assert pattern_files.read_ready(str(builtin.PATH), 19) is None


def test_postgresql_answers_as_the_sqlite3_reader_of_the_same_games(tmp_path, pg_url):
    """The same games in a PostgreSQL book (SQLAlchemy: the index's state read by ``index_state``'s
    same queries, the entries from the table) and in a SQLite book read through sqlite3 alone."""
    from fuseki.book.analysis.patterns.search import search_file

    games = make_games(tmp_path, 19, 30, seed=41)
    path = str(tmp_path / "book.sqlite")
    import_into(path, tmp_path)
    import_into(pg_url, tmp_path)
    files, top = pattern_files.read_ready(path, 19)
    with Book.open(pg_url, readonly=True) as book:
        with book.db.connect() as conn:
            assert [index_state.indexed_through(conn), index_state.max_game_id(conn), index_state.waiting(conn),
                    index_state.meta_names(conn, "pattern_files_"), dialect.book_file(conn)] == \
                [top, top, True, [], None]  # PostgreSQL keeps every entry in the table
        assert_equal_arrays(index_map.load(book, 19), files[:5])
        rng = np.random.default_rng(6)
        for i, kind in enumerate(["corner", "side", "anywhere"]):
            pattern, _want = pattern_of(games, rng, kind, 19, any_points=i % 2, swap=i == 0)
            same_answer(search_file(path, pattern), search(book, pattern))
