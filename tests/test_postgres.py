"""The book on PostgreSQL: the same code and answers as on SQLite, and imports from several
processes at once.

- one subset of the Tygem archive imported into SQLite and into PostgreSQL gives the same
  statistics, the same next moves (every position of a sample of games, in random
  orientations, with and without filters) and the same game pages;
- two processes importing overlapping archives into one PostgreSQL book at the same time
  end with exactly the games and position rows of a single-process import of both;
- ``fuseki import``/``fuseki stats`` take ``--book postgresql://...``;
- every segment, written by an import or by a merge, has its primary key ``(key, code)``
  (PostgreSQL builds it once the rows are in).

Needs the loopback server of ``.ci/postgres`` (skips without it, fails in CI).
"""

from __future__ import annotations

import os
import random
import subprocess
import sys

import pytest
from sqlalchemy import func, select, text

from fuseki.book.analysis.pipeline.importer import import_paths
from fuseki.book.formats.sgf_reader import read_games
from fuseki.book.model.filters import Filters
from fuseki.book.storage import schema
from fuseki.book.storage.position_index import segments
from fuseki.book.storage.store import Book
from fuseki.engine.core.board import Board
from fuseki.engine.core.coords import transform_point

from conftest import ROOT, import_command, write_archive

pytestmark = pytest.mark.slow  # imports a real archive: seconds
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def book_contents(url: str) -> tuple[int, int, set[int], int]:
    """(games, position rows, fingerprints, sum of move counts) of a book."""
    with Book.open(url, readonly=True) as book, book.db.connect() as conn:
        games = conn.execute(select(func.count()).select_from(schema.games)).scalar()
        rows = len(segments.all_rows(conn)[0])
        prints = set(conn.execute(select(schema.games.c.fingerprint)).scalars())
        moves = conn.execute(select(func.sum(schema.games.c.move_count))).scalar() or 0
    return games, rows, prints, int(moves)


def test_two_processes_importing_overlapping_archives_at_once(tmp_path, tygem_games, pg_url_factory):
    first = write_archive(tmp_path / "first.tgz", tygem_games[:900])
    second = write_archive(tmp_path / "second.tgz", tygem_games[450:1350])
    together, alone = pg_url_factory(), pg_url_factory()

    runs = [subprocess.Popen(import_command(together, [archive], batch_games=60), cwd=ROOT, env=ENV,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for archive in (first, second)]
    outcomes = [run.communicate(timeout=180) for run in runs]
    for run, (_, err) in zip(runs, outcomes):
        errors = [line[:500] for line in err.splitlines() if "Error" in line]
        assert run.returncode == 0, "an import process failed:\n" + "\n".join(errors or [err[-2000:]])
    added = [int(out.split()[-3]) for out, _ in outcomes]  # the last line: added duplicates skipped

    with Book.open(alone) as book:
        import_paths(book, [str(first), str(second)], workers=0)
    expected = book_contents(alone)
    found = book_contents(together)
    assert expected[0] == 1350
    assert found[0] == expected[0] and sum(added) == expected[0], (found[0], added)
    assert found[1:] == expected[1:]


def sample_boards(games: list[tuple[str, bytes]], count: int, seed: int) -> list[Board]:
    """Boards after 0-30 moves of ``count`` games, each in a random orientation."""
    rng = random.Random(seed)
    boards = []
    for name, data in rng.sample(games, count):
        record = read_games(data, name)[0]
        symmetry = rng.randrange(8)
        board = Board(record.size)
        for colour, point in record.moves[:rng.randint(0, 30)]:
            board.play(colour, transform_point(symmetry, point, record.size))
        boards.append(board)
    return boards


def test_postgresql_answers_as_sqlite(tmp_path, tygem_games, pg_url):
    games = tygem_games[:400]
    archive = write_archive(tmp_path / "games.tgz", games)
    lite = str(tmp_path / "book.sqlite")
    reports = []
    for url in (lite, pg_url):
        with Book.open(url) as book:
            reports.append(import_paths(book, [str(archive)], workers=0, batch_games=150))
    first = reports[0]
    counts = [(r.added, len(r.anomalies), r.positions) for r in reports]
    assert counts == [(400, len(first.anomalies), first.positions)] * 2

    with Book.open(lite, readonly=True) as a, Book.open(pg_url, readonly=True) as b:
        sa, sb = a.stats(), b.stats()
        assert (sa.games, sa.positions, sa.sizes, sa.years) == (sb.games, sb.positions, sb.sizes, sb.years)
        name = read_games(games[7][1], "x")[0].black
        filters = [None, Filters(year_from=2016), Filters(player=name[1:4]), Filters(min_games=2)]
        for board in sample_boards(games, 40, seed=5) + [Board(19)]:
            for chosen in filters:
                assert a.next_moves(board, filters=chosen) == b.next_moves(board, filters=chosen)
            page_a, page_b = a.games(board, page=1, page_size=7), b.games(board, page=1, page_size=7)
            assert page_a == page_b
        for game_id in (1, 200, 400):
            assert a.game_sgf(game_id) == b.game_sgf(game_id)


def test_cli_imports_into_postgresql_and_reports(tmp_path, tygem_games, pg_url):
    archive = write_archive(tmp_path / "games.tgz", tygem_games[:50])
    cli = [sys.executable, "-m", "fuseki"]
    run = subprocess.run(cli + ["import", str(archive), "--book", pg_url, "--workers", "0"],
                         cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "50 games added" in run.stderr, run.stderr
    stats = subprocess.run(cli + ["stats", "--book", pg_url], cwd=tmp_path, env=ENV,
                           capture_output=True, text=True, timeout=60)
    assert stats.returncode == 0 and "50" in stats.stdout, stats.stdout + stats.stderr
    assert not (tmp_path / "fuseki.db").exists()  # a URL never turns into a local file


def test_binary_copy_equals_struct_packing_and_reads_back(pg_url):
    """book.storage.pgcopy against the format packed row by row with struct, then through the server."""
    import struct

    import numpy as np

    from fuseki.book.storage import pgcopy

    rng = np.random.default_rng(1)
    keys = np.concatenate([[-(2**63), 2**63 - 1, 0, -1], rng.integers(-(2**63), 2**63 - 1, 200, dtype=np.int64)])
    small = rng.integers(-(2**15), 2**15 - 1, len(keys)).astype(np.int64)
    ints = rng.integers(-(2**31), 2**31 - 1, len(keys)).astype(np.int64)
    slow = b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0)
    for k, s, i in zip(keys.tolist(), small.tolist(), ints.tolist()):
        slow += struct.pack(">hiqihii", 3, 8, k, 2, s, 4, i)
    slow += struct.pack(">h", -1)

    def binary_rows(columns, rows_per_chunk=pgcopy.ROWS_PER_CHUNK) -> bytes:  # the whole stream, read as COPY does
        stream = pgcopy.BinaryRows(columns, rows_per_chunk)
        return b"".join(iter(lambda: stream.read(1 << 20), b""))

    assert binary_rows([(keys, 8), (small, 2), (ints, 4)]) == slow
    assert binary_rows([(keys, 8), (small, 2), (ints, 4)], rows_per_chunk=7) == slow  # chunks end mid-way
    assert binary_rows([(keys[:0], 8)]) == slow[:19] + slow[-2:]  # no row: the header and the end
    with Book.open(pg_url) as book, book.db.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE copied (k BIGINT, s SMALLINT, i INTEGER)")
        with conn.connection.dbapi_connection.cursor() as cursor:
            pgcopy.copy_in(cursor, "copied", ["k", "s", "i"], [(keys, 8), (small, 2), (ints, 4)])
        back = conn.exec_driver_sql("SELECT k, s, i FROM copied").all()
    assert sorted(back) == sorted(zip(keys.tolist(), small.tolist(), ints.tolist()))


def test_a_reader_answers_after_a_merge_drops_the_segments_it_prepared(tmp_path, tygem_games, pg_url_factory):
    """Readers keep one prepared statement per set of segments on each connection; a merge
    drops those tables, and the same reader (same pooled connections) must answer from the
    merged segment, unchanged, with no error."""
    url = pg_url_factory()
    archive = write_archive(tmp_path / "games.tgz", tygem_games[:600])
    with Book.open(url) as writer:
        import_paths(writer, [str(archive)], workers=0, batch_games=60)
        with writer.db.connect() as conn:
            assert len(segments.snapshot(conn).ids) > 1
        assert keyed_segments(writer) == segment_ids(writer)
        with Book.open(url, readonly=True) as reader:
            boards = [Board(19)]
            for colour, point in read_games(tygem_games[7][1], "g")[0].moves[:12]:
                boards.append(boards[-1].copy())
                boards[-1].play(colour, point)
            before = [reader.next_moves(board) for board in boards]
            before_player = reader.next_moves(boards[1], filters=Filters(player="a"))
            with reader.db.connect() as conn:
                prepared = conn.connection.info.get(segments._PREPARED, {})
                assert prepared, "the reader prepared no statement"
            writer.compact()
            with writer.db.connect() as conn:
                assert len(segments.snapshot(conn).ids) == 1
            reader.index.busy.clear()
            after = [reader.next_moves(board) for board in boards]
            assert [(a.total, a.moves) for a in after] == [(b.total, b.moves) for b in before]
            assert reader.next_moves(boards[1], filters=Filters(player="a")).moves == before_player.moves
            assert keyed_segments(writer) == segment_ids(writer)


def keyed_segments(book) -> tuple[int, ...]:
    """The segments whose table has its primary key ``(key, code)`` (PostgreSQL adds it after the rows)."""
    with book.db.connect() as conn:
        found = conn.execute(text(
            "SELECT c.relname FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid "
            "WHERE k.contype = 'p' AND c.relname LIKE 'positions!_%' ESCAPE '!' "
            "AND pg_get_constraintdef(k.oid) = 'PRIMARY KEY (key, code)'")).scalars().all()
    return tuple(sorted(int(name.split("_")[1]) for name in found))


def segment_ids(book) -> tuple[int, ...]:
    with book.db.connect() as conn:
        return segments.snapshot(conn).ids
