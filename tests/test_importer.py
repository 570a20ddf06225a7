"""The import pipeline: batches, the worker process, duplicates, skipped files, interruption."""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import func, select

from fuseki.book.analysis.pipeline import batches, importer
from fuseki.book.analysis.pipeline.report import ImportReport
from fuseki.book.formats.positions import board_after_record
from fuseki.book.formats.sgf_reader import read_games
from fuseki.book.formats.sources import SourceFile
from fuseki.book.storage import games_table, schema, scheme
from fuseki.book.storage.position_index import segment_files, segments, sqlite_image, sqlite_stage
from fuseki.book.storage.store import Book
from fuseki.engine.core import base
from fuseki.engine.core.base import BLACK, WHITE
from fuseki.engine.core.board import Board

from bookrows import games_with_copies, ids, next_stats_rows, rows
from games import sgf_text, write_games


def count(book, table):
    with book.db.connect() as conn:
        return conn.execute(select(func.count()).select_from(table)).scalar()


def position_rows(book):
    """Rows found in the segment tables, checked against what the segment list says."""
    with book.db.connect() as conn:
        found = len(segments.all_rows(conn)[0])
        assert found == segments.row_count(conn)
    return found


def test_parser_processes_and_in_process_give_the_same_book(tmp_path):
    folder = tmp_path / "games"
    folder.mkdir()
    write_games(folder, count=30, seed=2)
    (folder / "broken.sgf").write_bytes(b"(;SZ[19];B[pd]")
    books, reports = [], []
    for workers in (0, 1, 2, 3):  # three parsers take groups of 1, 1, 1, 2, 4, 4, ... games in turn
        book = Book.open(str(tmp_path / f"{workers}.sqlite"))
        reports.append(importer.import_paths(book, [str(folder)], workers=workers, batch_games=4))
        books.append(book)
    assert reports[0].added + reports[0].duplicates == 30
    for book, report in zip(books[1:], reports[1:]):
        assert rows(book) == rows(books[0])  # same games, same positions
        assert ids(book) == ids(books[0])  # and numbered in the same (source) order
        assert (report.added, report.duplicates, report.skipped) == \
            (reports[0].added, reports[0].duplicates, reports[0].skipped)
    assert [note.name for note in reports[0].skipped] == [str(folder / "broken.sgf")]
    for book in books:
        book.close()


def test_the_import_forks_with_no_thread_of_its_own_alive(tmp_path, monkeypatch):
    """A forked child has only the thread that forked it: a lock another thread held at that
    instant stays held in the child for ever.  The book's WAL checkpointer (book.storage.wal) is
    inside SQLite, whose allocator holds a process-wide mutex on every malloc, right after each
    commit, which is when a merge process starts; one forked then hung in its first
    sqlite3.connect (the rare hang of test_concurrency).  Every fork of an import, the reader's,
    the parser's and each merge's, of a second import into the same open book too, finds no
    thread alive but those that were there before the import."""
    import multiprocessing.process
    import os
    import threading

    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    write_games(first, count=40, seed=61)
    write_games(second, count=40, seed=62)
    monkeypatch.setattr(segment_files, "ENABLED", True)  # merges of segment files: in a process of their own
    monkeypatch.setattr(segments, "FANOUT", 2)  # a merge after every other batch
    before = set(threading.enumerate())
    tasks = len(os.listdir("/proc/self/task"))  # every thread, Python's and native (numba's pool, say)
    forks = []
    real_start = multiprocessing.process.BaseProcess.start

    def start(process):  # the real start, noting which threads were alive at the fork
        alive = sorted(thread.name for thread in set(threading.enumerate()) - before)
        native = len(os.listdir("/proc/self/task")) - tasks - len(alive)  # threads Python does not list
        forks.append((process.name, alive + [f"{native} native"] * (native > 0)))
        real_start(process)

    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", start)
    with Book.open(str(tmp_path / "book.sqlite")) as book:
        for folder in (first, second):
            assert importer.import_paths(book, [str(folder)], workers=1, batch_games=5).added == 40
    names = [name for name, _alive in forks]
    assert names.count("import reader") == 2 and names.count("import merge") >= 4, names
    assert [(name, alive) for name, alive in forks if alive] == []  # the forks that found a thread alive


def test_an_interrupted_import_leaves_whole_batches_and_a_rerun_completes(tmp_path, book_url, monkeypatch):
    folder = tmp_path / "games"
    folder.mkdir()
    games = write_games(folder, count=25, seed=6)
    distinct = len({tuple(g[0]) for g in games})
    real = importer.write_batch
    calls = []

    def interrupted(book, batch, report, *rest):
        calls.append(len(batch.games))
        if len(calls) == 3:
            # die in the middle of the third batch's transaction: its games are written
            with book.db.begin() as conn:
                conn.execute(schema.games.insert(), [dict(zip(batches.GAME_COLUMNS, (10 ** 6,) + batch.games[0]))])
                raise KeyboardInterrupt
        real(book, batch, report, *rest)

    monkeypatch.setattr(importer, "write_batch", interrupted)
    with Book.open(book_url) as book:
        with pytest.raises(KeyboardInterrupt):
            importer.import_paths(book, [str(folder)], workers=0, batch_games=5)
        kept = count(book, schema.games)
        assert 0 < kept <= sum(calls[:2]) < distinct
        with book.db.connect() as conn:
            assert conn.execute(select(func.max(schema.games.c.id))).scalar() < 10 ** 6
        with book.db.connect() as conn:
            lengths = conn.execute(select(schema.games.c.move_count)).scalars().all()
        assert position_rows(book) == sum(n + 1 for n in lengths)
        monkeypatch.setattr(importer, "write_batch", real)
        report = importer.import_paths(book, [str(folder)], workers=0, batch_games=5)
        assert report.added == distinct - kept
        assert count(book, schema.games) == distinct
        assert book.next_moves(Board(19)).total == distinct


def test_duplicates_inside_one_batch_and_across_imports(tmp_path, book_url):
    moves = [(BLACK, base.sgf_to_point("pd", 19)), (WHITE, base.sgf_to_point("dd", 19))]
    for name in ("a.sgf", "b.sgf"):
        (tmp_path / name).write_bytes(sgf_text(19, moves, black=name))
    with Book.open(book_url) as book:
        report = importer.import_paths(book, [str(tmp_path / "a.sgf"), str(tmp_path / "b.sgf")], workers=0)
        assert (report.added, report.duplicates) == (1, 1)
        report = importer.import_paths(book, [str(tmp_path / "b.sgf")], workers=0)
        assert (report.added, report.duplicates) == (0, 1)
        assert book.next_moves(Board(19)).total == 1


def test_unreadable_files_are_skipped_with_reasons(tmp_path, book_url):
    (tmp_path / "broken.sgf").write_bytes(b"(;GM[1]SZ[19];B[pd];W[")
    (tmp_path / "empty.sgf").write_bytes(b"not a game at all")
    (tmp_path / "notes.txt").write_text("ignored in folders")
    (tmp_path / "ok.sgf").write_bytes(sgf_text(19, [(BLACK, base.sgf_to_point("qd", 19))]))
    with Book.open(book_url) as book:
        report = importer.import_paths(book, [str(tmp_path), str(tmp_path / "missing.sgf")], workers=0)
    assert report.added == 1
    names = sorted(note.name.rsplit("/", 1)[-1] for note in report.skipped)
    assert names == ["broken.sgf", "empty.sgf", "missing.sgf"]
    assert all(note.reason and note.kind == "skipped" and note.member is None for note in report.skipped)
    text = str(report)
    assert "1 games added" in text and "3 files skipped" in text and "broken.sgf" in text


@pytest.mark.parametrize("workers", [0, 1])
def test_each_anomaly_is_named_with_its_file_game_and_move(tmp_path, book_url, workers):
    pd, dd = base.sgf_to_point("pd", 19), base.sgf_to_point("dd", 19)
    (tmp_path / "a_ok.sgf").write_bytes(sgf_text(19, [(BLACK, pd)]))
    (tmp_path / "b_bad.sgf").write_bytes(sgf_text(19, [(BLACK, pd), (WHITE, dd), (BLACK, dd)]))
    with Book.open(book_url) as book:
        report = importer.import_paths(book, [str(tmp_path)], workers=workers)
        assert report.added == 2
        [note] = report.anomalies
        name, game_id, reason = note.name, note.game, note.reason
        assert name == str(tmp_path / "b_bad.sgf") and book.game(game_id).source == name
        assert reason.startswith("move 3 (B D16) is illegal") and (note.move, note.member) == (3, None)
    text = str(report)
    assert f"1 anomalies ({name} game {game_id}: move 3 (B D16) is illegal" in text


def test_a_collection_file_gives_every_game(tmp_path, book_url):
    one = sgf_text(19, [(BLACK, base.sgf_to_point("pd", 19))])
    two = sgf_text(19, [(BLACK, base.sgf_to_point("qd", 19))])
    (tmp_path / "c.sgf").write_bytes(one + two)
    with Book.open(book_url) as book:
        report = importer.import_paths(book, [str(tmp_path / "c.sgf")], workers=0)
        assert report.added == 2
        assert len(book.next_moves(Board(19)).moves) == 2


def test_a_game_past_the_move_limit_keeps_the_limit_and_says_so(tmp_path, book_url):
    moves = [(BLACK if i % 2 == 0 else WHITE, base.PASS) for i in range(4100)]
    (tmp_path / "long.sgf").write_bytes(sgf_text(9, moves))
    with Book.open(book_url) as book:
        report = importer.import_paths(book, [str(tmp_path / "long.sgf")], workers=0)
        assert (report.added, len(report.anomalies)) == (1, 1)
        assert book.stats().positions == 324 + 1  # 9x9: 4 x 81 moves, and the empty board
        assert report.anomalies[0].reason.startswith("game has 4100 moves; kept the first 324")
        found = book.next_moves(Board(9))
        assert found.total == 1 and found.moves[0].point == base.PASS


def test_positions_after_move_4095_are_not_stored():
    """No record read from SGF has that many moves (25x25's limit is 2,500): one built here."""
    record = read_games(sgf_text(25, []), "long.sgf")[0]
    record.moves = [(BLACK if i % 2 == 0 else WHITE, base.PASS) for i in range(4100)]
    keys, _, anomaly, _ = batches.replay_record(record)
    assert len(keys) == scheme.MAX_MOVE_NUMBER + 1  # before moves 1..4096
    assert anomaly == (4096, "positions after move 4095 are not stored")


def test_codes_round_trip_their_fields():
    record = read_games(sgf_text(19, [(BLACK, base.sgf_to_point("pd", 19)),
                                               (WHITE, base.PASS)], result="W+R"), "x")[0]
    keys, lows, anomaly, _ = batches.replay_record(record)
    assert anomaly is None and len(keys) == 3
    assert ((lows >> scheme.MOVE_SHIFT) & scheme.MOVE_MASK).tolist() == [0, 1, 2]
    nexts = (((lows >> scheme.NEXT_SHIFT) & scheme.NEXT_MASK) - 2).tolist()
    assert nexts[1:] == [base.PASS, -2]
    assert set((lows & scheme.WINNER_MASK).tolist()) == {WHITE}
    board = Board(19)
    assert np.uint64(keys[0]) == min(board.symmetric_keys())


def test_two_processes_importing_into_one_sqlite_book_take_turns(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    folders = [tmp_path / "a", tmp_path / "b"]
    for folder in folders:
        folder.mkdir()
    games = write_games(folders[0], count=40, seed=31)
    for path in sorted(folders[0].iterdir())[20:]:  # the second folder overlaps the first by half
        (folders[1] / path.name).write_bytes(path.read_bytes())
    book = str(tmp_path / "book.sqlite")  # both processes create it: the first one does
    script = ("import sys; from fuseki.book.analysis.pipeline.importer import import_paths; "
              "from fuseki.book.storage.store import Book; "
              "b = Book.open(sys.argv[1]); r = import_paths(b, [sys.argv[2]], workers=0, batch_games=3); "
              "print(r.added, r.duplicates)")
    runs = [subprocess.Popen([sys.executable, "-c", script, book, str(folder)], cwd=root,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for folder in folders]
    outs = [run.communicate(timeout=120) for run in runs]
    assert all(run.returncode == 0 for run in runs), [err[-1500:] for _, err in outs]
    added = sum(int(out.split()[0]) for out, _ in outs)
    distinct = {tuple(g[0]) for g in games}
    with Book.open(book) as opened:
        assert added == count(opened, schema.games) == len(distinct)
        assert position_rows(opened) == sum(len(m) + 1 for m in distinct)


@pytest.mark.slow  # 24 interpreters started (49 s of the not-slow loop beside two hogs)
def test_processes_creating_one_new_book_at_once_all_open_it(tmp_path):
    """Two processes that open (and so create) the same new book at once both get it: turning
    the new file to WAL waits for the other's lock (SQLite answered "database is locked" at
    once, without its busy handler: a pair failed 6 times in 30, and CI's two importers once).
    Started together, each pair meets within a few milliseconds; 12 pairs."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    script = "import sys; from fuseki.book.storage.store import Book; Book.open(sys.argv[1]).close()"
    for pair in range(12):
        book = str(tmp_path / f"book{pair}.sqlite")
        runs = [subprocess.Popen([sys.executable, "-c", script, book], cwd=root, stderr=subprocess.PIPE, text=True)
                for _ in range(2)]
        errors = [run.communicate(timeout=120)[1] for run in runs]
        assert [run.returncode for run in runs] == [0, 0], [error[-500:] for error in errors]


def test_replaying_many_games_at_once_equals_one_at_a_time(tmp_path):
    write_games(tmp_path, count=12, seed=41, size=19)
    write_games(tmp_path, count=6, seed=42, size=9, length=20)
    pd, dd = base.sgf_to_point("pd", 19), base.sgf_to_point("dd", 19)
    (tmp_path / "bad.sgf").write_bytes(sgf_text(19, [(BLACK, pd), (WHITE, pd), (BLACK, dd)]))
    (tmp_path / "setup.sgf").write_bytes(sgf_text(19, [(WHITE, dd)], setup=[(BLACK, pd)], handicap=1))
    (tmp_path / "long.sgf").write_bytes(sgf_text(9, [(BLACK if i % 2 == 0 else WHITE, base.PASS)
                                                     for i in range(4200)]))
    records = [r for path in sorted(tmp_path.iterdir()) for r in read_games(path.read_bytes(), path.name)]
    long = next(r for r in records if r.source == "long.sgf")
    long.moves = [(BLACK if i % 2 == 0 else WHITE, base.PASS) for i in range(4200)]  # past what SGF gives
    one = {r.source: batches.replay_record(r) for r in records}
    many = batches.replay_records(records)
    assert len(many) == len(one)
    for record, keys, lows, anomaly, fp, events in many:
        expected = one[record.source]
        assert keys.tolist() == expected[0].tolist() and lows.tolist() == expected[1].tolist()
        assert (anomaly, fp) == expected[2:]
        assert events == batches.game_events(record)  # from the replay, as replay_events alone gives them
    assert sum(1 for *_, anomaly, _, _ in many if anomaly) == 2


def test_records_without_moves_are_found_with_the_side_that_plays_next(tmp_path):
    """White plays after handicap stones; Black in a diagram: the stored key must say so."""
    (tmp_path / "handicap.sgf").write_bytes(b"(;SZ[9]HA[2]AB[cc][gg])")
    (tmp_path / "diagram.sgf").write_bytes(b"(;SZ[9]AB[cg][gc]AW[ee])")
    (tmp_path / "played.sgf").write_bytes(b"(;SZ[9]HA[2]AB[cc][gg];W[ee])")  # one move: White's
    for workers in (0, 1):
        with Book.open(str(tmp_path / f"{workers}.sqlite")) as book:
            importer.import_paths(book, [str(tmp_path)], workers=workers)
            for name, to_move in (("handicap", WHITE), ("diagram", BLACK), ("played", WHITE)):
                record = read_games((tmp_path / f"{name}.sgf").read_bytes(), name)[0]
                board = board_after_record(record, 0)
                assert board.to_move == to_move
                found = book.next_moves(board)
                assert found.total >= 1, name
                assert book.next_moves(board, to_move=BLACK + WHITE - to_move).total == 0, name


def test_stored_sgf_is_each_games_own_bytes_whoever_compressed_it(tmp_path):
    """A file that is one game, text around a game, a collection: each game's own bytes, compressed."""
    files = {"one.sgf": b"\n(;SZ[9];B[ee];W[cc])\r\n\n",  # one game: the reader's blob is used
             "junk.sgf": b"saved by a client\n(;SZ[9];B[cg])",  # text before the game: the parser's
             "two.sgf": b"(;SZ[9];B[gc])\n(;SZ[9];B[gg];W[ee])\n"}  # a collection: the parser's
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    expected = {record.sgf for name, data in files.items() for record in read_games(data, name)}
    for workers in (0, 1):
        with Book.open(str(tmp_path / f"{workers}.sqlite")) as book:
            importer.import_paths(book, [str(tmp_path)], workers=workers)
            with book.db.connect() as conn:
                blobs = conn.execute(select(schema.games.c.sgf)).scalars().all()
            assert {games_table.decompress_sgf(blob) for blob in blobs} == expected
            assert sorted(blobs) == sorted(games_table.compress_sgf(sgf) for sgf in expected)


def test_rows_sent_as_images_give_the_same_book_as_rows_written_by_the_writer(tmp_path, monkeypatch):
    folder = games_with_copies(tmp_path / "games", [(3, 4), (10, 40), (7, 58)])  # in one batch, two, far apart
    numbered = []  # (first id, whether the writer numbered a worker's image)
    add_to_codes = sqlite_image.add_to_codes

    def counting(image, delta):
        try:
            add_to_codes(image, delta)
        except ValueError:
            numbered.append(False)
            raise
        numbered.append(True)

    monkeypatch.setattr(sqlite_image, "add_to_codes", counting)
    books = {}
    ways = [("rows", False, 0, False), ("images", True, 0, False), ("images2", True, 2, False),
            ("files", True, 0, True), ("files2", True, 2, True)]
    for name, images, workers, files in ways:
        monkeypatch.setattr(sqlite_stage, "IMAGES", images)
        monkeypatch.setattr(segment_files, "ENABLED", files)
        book = Book.open(str(tmp_path / f"{name}.sqlite"))
        report = importer.import_paths(book, [str(folder)], workers=workers, batch_games=8)
        books[name] = (book, report)
    assert numbered.count(True) >= 6  # the image path was taken, not only the rows path
    for name in ("files", "files2"):  # the segments are files, and no position table is in the book
        with books[name][0].db.connect() as conn:
            assert len(segment_files.in_files(conn)) == len(segments.live(conn)) > 1
    base, base_report = books["rows"]
    assert (base_report.added, base_report.duplicates) == (57, 3)
    for name, (book, report) in list(books.items())[1:]:
        assert (report.added, report.duplicates, report.positions) == \
            (base_report.added, base_report.duplicates, base_report.positions)
        # in the same (source) order; with files a game another batch brought leaves a gap in the ids
        assert [source for _id, source in ids(book)] == [source for _id, source in ids(base)]
        assert rows(book) == rows(base) and next_stats_rows(book) == next_stats_rows(base)
        if not name.startswith("files"):
            assert ids(book) == ids(base)
        with book.db.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"
    for book, _ in books.values():
        book.close()


def test_game_ids_too_large_for_an_images_codes_are_written_as_rows(tmp_path, monkeypatch):
    folder = tmp_path / "games"
    folder.mkdir()
    write_games(folder, count=12, seed=6)
    top = (sqlite_image.WIDE_CODES >> scheme.GAME_SHIFT) - 5  # ids from here on do not fit in 6 bytes
    monkeypatch.setattr(segment_files, "ENABLED", False)  # the images written into the book's own file
    found = []
    for images in (False, True):
        monkeypatch.setattr(sqlite_stage, "IMAGES", images)
        with Book.open(str(tmp_path / f"{images}.sqlite")) as book:
            importer.import_paths(book, [str(folder / "g19_000.sgf")], workers=0)
            with book.writing() as conn:  # as if the book held millions of games
                conn.execute(schema.games.update().values(id=top))
                for segment in segments.live(conn):
                    conn.exec_driver_sql(f"UPDATE positions_{segment.id} SET code = code + {(top - 1) << 24}")
            report = importer.import_paths(book, [str(folder)], workers=0, batch_games=8)
            assert (report.added, report.duplicates) == (11, 1)
            with book.db.connect() as conn:
                codes = sorted(zip(*(column.tolist() for column in segments.all_rows(conn))))
                assert max(code >> scheme.GAME_SHIFT for _, code in codes) == top + 11
            found.append((ids(book), codes))
    assert found[0] == found[1]


def test_a_parser_leaves_out_the_games_the_book_holds(tmp_path):
    folder = tmp_path / "games"
    folder.mkdir()
    write_games(folder, count=6, seed=8)
    files = sorted(folder.iterdir())
    with Book.open(str(tmp_path / "book.sqlite")) as book:
        importer.import_paths(book, [str(files[1]), str(files[4])], workers=0)
        group = [SourceFile(path.name, path.read_bytes()) for path in files]
        known = games_table.KnownGames(book.db.url)
        batch = batches.prepare_group(group, image=True, known=known)
        plain = batches.prepare_group(group, image=True)
        assert (len(batch.games), batch.duplicates) == (4, 2) and (len(plain.games), plain.duplicates) == (6, 0)
        assert [game[batches.ROW_FINGERPRINT] for game in batch.games] == \
            [game[batches.ROW_FINGERPRINT] for i, game in enumerate(plain.games) if i not in (1, 4)]
        report = ImportReport()
        importer.write_batch(book, batch, report)  # all new: the image, numbered in place
        assert (report.added, report.duplicates) == (4, 2)
        assert book.stats().games == 6
