"""A fresh import is complete: ``fuseki import`` leaves the pattern index and the corner book
holding every game it added, on SQLite and PostgreSQL, with ``--workers 0`` and ``--workers N``.

Checked against what the test recomputes on its own:

- the pattern index: every stored game has its entry, once (beside a SQLite book in the
  files of ``book.storage.pattern_files`` only, in a PostgreSQL book in its table), equal to
  ``index.game_events`` of the game read back from its stored SGF (the way the index was built
  before the import wrote it), no row of a game that is not there, and the mark
  (``pattern_events_through``) at the largest game id;
- the corner book: the table equals a ``fuseki corners`` build from scratch on the same games,
  in a second book imported apart, whose import-written index and corner book are dropped first
  (so it is rebuilt from the stored SGF, as before this change);
- a second import adds to both; an import killed (SIGKILL) after some batches leaves the index
  complete up to its largest game id, and ``fuseki import`` run again completes both;
- the engine (``gtp_main.py --book``) plays a corner-book move right after the import.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from fuseki.book.analysis.patterns import corner_build, corners, index
from fuseki.book.analysis.pipeline.importer import import_paths
from fuseki.book.formats.sgf_reader import read_games
from fuseki.book.storage import games_table, pattern_files, schema
from fuseki.book.storage.index_state import THROUGH as INDEX_THROUGH
from fuseki.book.storage.index_state import indexed_through
from fuseki.book.storage.pattern_events import pattern_events
from fuseki.book.storage.store import Book
from fuseki.book.ui.fuseki_command import main

from conftest import ROOT, import_command, write_archive

pytestmark = pytest.mark.slow  # imports of a real archive: seconds each
ENV = dict(os.environ)  # conftest put this checkout first on PYTHONPATH: the subprocesses run it
FIRST, SECOND = slice(0, 400), slice(400, 700)  # of the archive's games: two imports


def check_index(location: str) -> int:
    """The pattern index is complete, right and stored once (see the module docstring); returns
    the games."""
    with Book.open(location, readonly=True) as book, book.db.connect() as conn:
        top = book.max_game_id(conn)
        assert indexed_through(conn) == top
        rows = dict(conn.execute(pattern_events.select().with_only_columns(
            pattern_events.c.game_id, pattern_events.c.events)).all())
        games = conn.execute(schema.games.select().with_only_columns(
            schema.games.c.id, schema.games.c.size, schema.games.c.sgf, schema.games.c.source)).all()
        in_files = {}
        for size in pattern_files.sizes(conn):
            stored = pattern_files.read(conn, size)
            ends = stored.offsets.tolist()
            for i, game_id in enumerate(stored.game_ids.tolist()):
                in_files[game_id] = stored.events[ends[i]:ends[i + 1]].tobytes()
    if pattern_files.folder_of_book(book) is not None:  # a SQLite book: the files only
        assert not rows
    else:
        assert not in_files
    assert not set(rows) & set(in_files)
    rows.update(in_files)
    assert set(rows) == {game_id for game_id, *_ in games}
    for game_id, size, blob, source in games:
        record = read_games(games_table.decompress_sgf(blob), source or "?")[0]
        assert record.size == size
        assert bytes(rows[game_id]) == index.game_events(record).tobytes(), f"game {game_id}"
    return len(games)


def corner_table(location: str) -> list[tuple]:
    """The corner book's rows, in key order; and it was built at the index's mark."""
    with Book.open(location, readonly=True) as book, book.db.connect() as conn:
        assert corners.has_table(conn), "no corner book"
        through, settings = corner_build.built_through(conn)
        assert through == indexed_through(conn) == book.max_game_id(conn)
        assert settings == corner_build.settings_text(corner_build.DEPTH, corner_build.PRUNE)
        return [tuple(row) for row in conn.exec_driver_sql(
            f"SELECT key, move, played, wins FROM {corners.TABLE} ORDER BY key, move")]


def scratch_corners(location: str, archives: list) -> list[tuple]:
    """``fuseki corners``'s table built from scratch on the games of ``archives``, in the new
    book at ``location``: the import's own index rows and corner book dropped, so that the
    index is rebuilt from the stored SGF before the corner book is."""
    with Book.open(location) as book:
        import_paths(book, [str(a) for a in archives], workers=0)
        with book.writing() as conn:
            conn.execute(pattern_events.delete())
            for size in pattern_files.sizes(conn):
                pattern_files.forget(conn, size)
            conn.execute(schema.meta.delete().where(schema.meta.c.name.in_(
                (INDEX_THROUGH, corner_build.THROUGH, corner_build.SETTINGS))))
            conn.exec_driver_sql(f"DROP TABLE IF EXISTS {corners.TABLE}")
    assert main(["corners", "--book", location]) == 0
    check_index(location)
    return corner_table(location)


def fuseki_import(location: str, archive, workers: int) -> None:
    """``fuseki import`` in a process of its own, as a user runs it."""
    done = subprocess.run([sys.executable, "-m", "fuseki", "import", str(archive), "--book", location,
                           "--workers", str(workers)], cwd=ROOT, env=ENV, capture_output=True, timeout=600)
    err = done.stderr.decode(errors="replace")
    assert done.returncode == 0, err[-3000:]
    assert "corner book: " in err and "Traceback" not in err, err[-3000:]


@pytest.mark.parametrize("workers", [0, 2])
def test_an_import_leaves_the_index_and_the_corner_book_complete(tmp_path, tygem_games, new_book, workers):
    first = write_archive(tmp_path / "first.tgz", tygem_games[FIRST])
    second = write_archive(tmp_path / "second.tgz", tygem_games[SECOND])
    book = new_book()
    fuseki_import(book, first, workers)
    assert check_index(book) == FIRST.stop - FIRST.start
    after_first = corner_table(book)
    assert after_first == scratch_corners(new_book(), [first])

    fuseki_import(book, second, workers)  # a second import adds to both
    assert check_index(book) == SECOND.stop
    after_second = corner_table(book)
    assert after_second != after_first
    assert after_second == scratch_corners(new_book(), [first, second])


def test_a_killed_import_run_again_completes_both(tmp_path, tygem_games, new_book):
    archive = write_archive(tmp_path / "games.tgz", tygem_games[:1000])
    book = new_book()
    process = subprocess.Popen(import_command(book, [archive], batch_games=100, workers=1,
                                              announce_batches="paced"),
                               cwd=ROOT, env=ENV, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        assert process.stdout.readline() == b"open\n"
        for batch in range(3):  # three batches committed; it waits after the third, however slow the test
            assert process.stdout.readline().startswith(b"batch ")
            if batch < 2:
                process.stdin.write(b"go on\n")
                process.stdin.flush()
    finally:
        os.killpg(process.pid, signal.SIGKILL)  # the import and its workers
        process.wait()
        process.stdout.close()
        process.stdin.close()
    partial = check_index(book)  # the index is complete up to the last batch that committed
    assert 0 < partial < 1000

    fuseki_import(book, archive, 1)
    assert check_index(book) == 1000
    assert corner_table(book) == scratch_corners(new_book(), [archive])


def test_the_engine_plays_a_corner_book_move_right_after_the_import(tmp_path, tygem_games):
    book = str(tmp_path / "book.sqlite")
    fuseki_import(book, write_archive(tmp_path / "games.tgz", tygem_games[:2000]), 2)
    # B Q16, W J11 (a second move no game of the book has), B D4: the whole board is out of
    # book, the upper right corner is not
    commands = "play B Q16\nplay W J11\nplay B D4\ngenmove W\nquit\n"
    done = subprocess.run([sys.executable, str(ROOT / "gtp_main.py"), "--book", book, "--verbose", "--seed", "1"],
                          input=commands.encode(), cwd=ROOT, env=ENV, capture_output=True, timeout=120)
    err = done.stderr.decode(errors="replace")
    assert done.returncode == 0, err[-3000:]
    assert "genmove W" in err and ": corner book" in err, err[-3000:]
