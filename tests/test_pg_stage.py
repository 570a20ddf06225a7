"""PostgreSQL: batches staged by the parsers and linked in by the writer (``book.storage.position_index.pg_stage``).

- a book whose parsers stage their rows (with parser processes, and in the importing
  process) equals one whose writer copies every row (``pg_stage.ENABLED`` off): the same
  games in the same order, the same position rows, the same next-move statistics, and each next-move statistics
  equal to a fresh count of its segment's rows; a game two batches brought is taken out of
  the second one's staged table (``pg_stage.drop_games``);
- staged segments are views over their rows' tables, and a merge of them drops both;
- staged tables whose import is gone are swept when a book is opened for writing, those of
  a running import are kept, and an import leaves none of its own behind.

Needs the loopback server of ``.ci/postgres`` (skips without it, fails in CI).
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from sqlalchemy import select, text

from fuseki.book.analysis.pipeline import importer
from fuseki.book.storage import schema, scheme
from fuseki.book.storage.position_index import nextmoves, pg_stage, segments
from fuseki.book.storage.store import Book
from fuseki.engine.core.board import Board

from bookrows import games_with_copies

pytestmark = pytest.mark.slow  # several imports into fresh databases


def book_rows(book) -> tuple[list, list, list]:
    """(sources in id order, position rows by fingerprint, (segment id, next_stats records)) of a book."""
    with book.db.connect() as conn:
        games = conn.execute(select(schema.games.c.id, schema.games.c.fingerprint, schema.games.c.source)
                             .order_by(schema.games.c.id)).all()
        fingerprint = {gid: fp for gid, fp, _ in games}
        keys, codes = segments.all_rows(conn)
        positions = sorted(zip(keys.tolist(), [fingerprint[c >> scheme.GAME_SHIFT] for c in codes.tolist()],
                               (codes & 0xFFFFFF).tolist()))
        stored = nextmoves.combine([segments.stats_of(conn, s.id) for s in segments.live(conn)])
    return [source for _, _, source in games], positions, (stored.keys.tolist(), stored.counts.tolist())


def fresh_counts_hold(book) -> int:
    """Check each level-0 segment's next-move statistics against a count of its own rows; returns how many.
    (A merge adds up its parts' next-move statistics: a key no part counted stays rows.)"""
    with book.db.connect() as conn:
        live = [segment for segment in segments.live(conn) if segment.level == 0]
        for segment in live:
            keys, codes = segments.rows_of(conn, segment.id)
            fresh = nextmoves.from_codes(keys, codes, lambda low, high: nextmoves.years_by_id(conn, low, high))
            stored = segments.stats_of(conn, segment.id)
            assert stored.keys.tolist() == fresh.keys.tolist(), f"segment {segment.id}"
            assert stored.counts.tolist() == fresh.counts.tolist(), f"segment {segment.id}"
    return len(live)


def catalogue(book) -> tuple[int, int, list[str]]:
    """(segment views, their rows' tables, staged tables) in the book's database."""
    with book.db.connect() as conn:
        views = conn.execute(text("SELECT count(*) FROM pg_views WHERE schemaname = current_schema() "
                                  "AND viewname LIKE 'positions!_%' ESCAPE '!'")).scalar()
        tables = conn.execute(text("SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() "
                                   "AND tablename LIKE 'positions!_%!_rows' ESCAPE '!'")).scalar()
        return views, tables, pg_stage.staged_tables(conn)


@pytest.fixture
def games_folder(tmp_path):
    return games_with_copies(tmp_path / "games", [(3, 4), (10, 17), (7, 58)])  # in one batch, two, far apart


def test_staged_batches_give_the_book_the_writer_writes(games_folder, pg_url_factory, monkeypatch):
    dropped = []
    drop_games = pg_stage.drop_games
    monkeypatch.setattr(pg_stage, "drop_games", lambda *args: dropped.append(drop_games(*args)) or dropped[-1])
    found = {}
    for name, staged, workers in [("copied", False, 0), ("staged", True, 0), ("staged2", True, 2)]:
        monkeypatch.setattr(pg_stage, "ENABLED", staged)
        with Book.open(pg_url_factory()) as book:
            report = importer.import_paths(book, [str(games_folder)], workers=workers, batch_games=8)
            found[name] = (report.added, report.duplicates, report.positions), book_rows(book)
            views, tables, left = catalogue(book)
            assert left == []  # every staged table linked or dropped
            with book.db.connect() as conn:
                assert views == tables == (len(segments.live(conn)) if staged else 0)
            assert fresh_counts_hold(book) > 3
    assert found["copied"][0][:2] == (57, 3)
    assert found["staged"] == found["copied"] and found["staged2"] == found["copied"]
    assert dropped and all(dropped)  # the game of two batches came out of a staged table


def test_a_merge_of_staged_segments_drops_their_views_and_tables(games_folder, pg_url, monkeypatch):
    with Book.open(pg_url) as book:
        importer.import_paths(book, [str(games_folder)], workers=0, batch_games=8)
        before, moves = book_rows(book), book.next_moves(Board(19))
        views, tables, _ = catalogue(book)
        assert views == tables > 3
        with book.writing() as conn:
            segments.merge_all(conn)
            assert len(segments.live(conn)) == 1
        assert catalogue(book) == (0, 0, [])
        assert book_rows(book)[:2] == before[:2]  # the rows, read through the views, with their ids
        assert book.next_moves(Board(19)) == moves


def test_staged_tables_of_a_gone_import_are_swept_and_a_running_ones_kept(games_folder, pg_url, monkeypatch):
    keys = np.array([1, 2, 2], dtype=np.int64)
    codes = np.array([5, 6, 1 << scheme.GAME_SHIFT], dtype=np.int64)
    with Book.open(pg_url) as book:
        running = pg_stage.hold(book.db)  # an import still at work
        gone = pg_stage.hold(book.db)
        stagers = [pg_stage.Stager(book.db.url, held.token) for held in (running, gone)]
        kept, lost = (stager(keys, codes, nextmoves.empty()) for stager in stagers)
        for stager in stagers:
            stager.close()
        gone.conn.invalidate()  # as a killed import's connection: the lock goes, not through release
        assert sorted(catalogue(book)[2]) == sorted([kept, f"{kept}_next_stats", lost, f"{lost}_next_stats"])
    with Book.open(pg_url) as book:
        assert sorted(catalogue(book)[2]) == [kept, f"{kept}_next_stats"]
        stop, write_batch = threading.Event(), importer.write_batch

        def write_then_stop(*args):  # the import ends after its first batch, the parsers' next ones staged
            write_batch(*args)
            stop.set()

        monkeypatch.setattr(importer, "write_batch", write_then_stop)
        report = importer.import_paths(book, [str(games_folder)], workers=2, batch_games=8, stop=stop)
        assert report.stopped and report.added
        assert sorted(catalogue(book)[2]) == [kept, f"{kept}_next_stats"]  # its own dropped, not another's
        pg_stage.release(running)
        assert catalogue(book)[2] == []  # release drops what its import left
