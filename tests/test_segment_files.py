"""book.storage.position_index.segment_files: a SQLite book's segments as files beside it -- the same answers as
segments in the book's own file, no file left behind, one file again after compact."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np

from fuseki.book.analysis.pipeline import importer
from fuseki.book.storage.position_index import nextmoves, packed_segment, segment_files, segments
from fuseki.book.storage.store import Book

from bookrows import answers
from games import write_games
from replay import sample_positions


def in_book_file(path, batch_games, monkeypatch, folder, files):
    monkeypatch.setattr(segment_files, "ENABLED", files)
    with Book.open(str(path)) as book:
        importer.import_paths(book, [str(folder)], workers=0, batch_games=batch_games)


def listing(book):
    with book.db.connect() as conn:
        return segments.live(conn), segment_files.in_files(conn)


def test_files_answer_as_tables_do_through_mixed_merges_and_compact(tmp_path, monkeypatch):
    """A book made with its segments in its own file goes on with files (as a book made
    before them would): merges mix both kinds, and compact brings all back into one file."""
    folder = tmp_path / "games"
    folder.mkdir()
    games = write_games(folder, count=80, seed=41)
    boards = sample_positions(games, np.random.default_rng(5), count=20)
    in_file_book = tmp_path / "tables.sqlite"
    in_book_file(in_file_book, 8, monkeypatch, folder, files=False)
    with Book.open(str(in_file_book)) as book:
        expected = answers(book, boards)

    monkeypatch.setattr(segments, "FANOUT", 3)
    mixed = tmp_path / "mixed.sqlite"
    first, rest = tmp_path / "first", tmp_path / "rest"
    first.mkdir()
    rest.mkdir()
    for name in sorted(os.listdir(folder)):
        (first if name < "g19_020" else rest).joinpath(name).write_bytes((folder / name).read_bytes())
    in_book_file(mixed, 8, monkeypatch, first, files=False)  # the first 20 games: 2 tables
    monkeypatch.setattr(segment_files, "ENABLED", True)
    with Book.open(str(mixed)) as book:
        importer.import_paths(book, [str(rest)], workers=0, batch_games=8)
        live, files = listing(book)
        assert files and all(segment.level >= 0 for segment in live)
        assert any(segment.level >= 1 for segment in live)  # merges happened
        assert answers(book, boards) == expected
        stats = book.stats()
        folder_bytes = sum(os.path.getsize(os.path.join(segment_files.folder_of(str(mixed)), f.name)) for f in files)
        assert stats.file_bytes >= folder_bytes > 0 and stats.positions == sum(s.rows for s in live)

        book.compact()
        live, files = listing(book)
        assert len(live) == 1 and not files
        assert not os.path.exists(segment_files.folder_of(str(mixed)))  # one file again
        assert answers(book, boards) == expected


def test_a_merged_files_statistics_count_every_row_of_each_key_any_part_counted(tmp_path, monkeypatch):
    """A merge of segment files adds up its parts' next-move statistics and counts, from the rows
    it reads, each part's rows under the keys that part did not count (``_Uncounted``).  Checked
    against the statistics of every row of the merged file counted again, key by key: a part
    that counted fewer keys than another (a low ``GAMES``, so that parts differ) must lose none."""
    folder = tmp_path / "games"
    folder.mkdir()
    write_games(folder, count=90, seed=43)
    monkeypatch.setattr(segments, "FANOUT", 3)
    monkeypatch.setattr(nextmoves, "GAMES", 3)
    path = tmp_path / "merged.sqlite"
    in_book_file(path, 6, monkeypatch, folder, files=True)
    with Book.open(str(path)) as book, book.db.connect() as conn:
        live = {segment.id: segment for segment in segments.live(conn)}
        merged = [file for file in segment_files.in_files(conn) if live[file.id].level >= 1]
        assert merged, "no merge of files happened"
        for file in merged:
            reader = packed_segment.Reader(os.path.join(segment_files.folder_of(str(path)), file.name))
            try:
                stats = reader.all_stats()
                keys, codes = reader.all_rows()
            finally:
                reader.close()
            counted = np.isin(keys, stats.keys)
            again = nextmoves.from_codes(keys[counted], codes[counted] + file.base,
                                         lambda low, high: nextmoves.years_by_id(conn, low, high), 1)
            assert np.array_equal(again.keys, stats.keys) and np.array_equal(again.counts, stats.counts), file.name


def test_a_writer_removes_the_files_of_importers_that_are_gone(tmp_path, monkeypatch):
    folder = tmp_path / "games"
    folder.mkdir()
    write_games(folder, count=12, seed=42)
    path = tmp_path / "book.sqlite"
    in_book_file(path, 4, monkeypatch, folder, files=True)
    files_folder = segment_files.folder_of(str(path))
    linked = set(os.listdir(files_folder))
    with Book.open(str(path), readonly=True) as book:
        assert {segment.name for segment in listing(book)[1]} == linked and len(linked) > 2

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        left = {"dead": segment_files.new_name(int(gone)), "live": segment_files.new_name(alive.pid),
                "ours": segment_files.new_name(os.getpid()), "odd": "notes.seg",
                "reused": segment_files.new_name(alive.pid)}
        for name in left.values():
            (tmp_path / "book.sqlite-segments" / name).write_bytes(b"left over")
        # written an hour before the live process started: its pid was another's then
        old = time.time() - 3600
        os.utime(tmp_path / "book.sqlite-segments" / left["reused"], (old, old))
        with Book.open(str(path), readonly=True) as book:  # a reader removes as a writer does (segment_sweep)
            assert set(os.listdir(files_folder)) == linked | {left["live"], left["ours"]}
            assert book.stats().games == 12
        for name in ("dead", "odd", "reused"):  # again, for the writer
            (tmp_path / "book.sqlite-segments" / left[name]).write_bytes(b"left over")
        os.utime(tmp_path / "book.sqlite-segments" / left["reused"], (old, old))
        with Book.open(str(path)) as book:
            found = set(os.listdir(files_folder))
            assert found == linked | {left["live"], left["ours"]}  # their processes may link them yet
            assert book.stats().games == 12
    finally:
        alive.kill()
        alive.wait()
    with Book.open(str(path)):
        assert set(os.listdir(files_folder)) == linked | {left["ours"]}


def test_games_the_book_has_leave_the_parsers_file_which_is_linked_as_it_is(tmp_path, monkeypatch):
    """The writer finds games the parser did not leave out (in this process it asks no one):
    their rows leave the parser's file and their counts its next-move statistics, the file is linked as
    it is (no copy), the other games keep their numbers (a gap where one was dropped), and
    the book answers as one made with its segments in tables."""
    from fuseki.book.storage.position_index import nextmoves

    from bookrows import rows

    folder = tmp_path / "games"
    folder.mkdir()
    games = write_games(folder, count=10, seed=43)
    boards = sample_positions(games, np.random.default_rng(6), count=12)
    monkeypatch.setattr(nextmoves, "GAMES", 2)  # next-move statistics hold keys of this small batch too
    dropped = []
    drop_games = segment_files.drop_games
    monkeypatch.setattr(segment_files, "drop_games", lambda path, *args: dropped.append(path) or
                        drop_games(path, *args))
    books = {}
    for files in (True, False):
        monkeypatch.setattr(segment_files, "ENABLED", files)
        path = tmp_path / f"book-{files}.sqlite"
        book = books[files] = Book.open(str(path))
        importer.import_paths(book, [str(folder / "g19_003.sgf")], workers=0)
        report = importer.import_paths(book, [str(folder)], workers=0, batch_games=100)
        assert (report.added, report.duplicates) == (9, 1)
    book = books[True]
    live, files = listing(book)
    assert len(files) == len(live) == 2 and os.path.basename(dropped[0]) == files[1].name
    assert set(os.listdir(segment_files.folder_of(str(tmp_path / "book-True.sqlite")))) == {f.name for f in files}
    assert rows(book) == rows(books[False])
    assert answers(book, boards)[:-1] == answers(books[False], boards)[:-1]  # the last: game ids
    with book.db.connect() as conn:
        years = {gid: nextmoves.NO_YEAR if year is None else year
                 for gid, year in conn.exec_driver_sql("SELECT id, year FROM games").all()}
        keys, codes = segments.all_rows(conn)
    assert set((codes >> 24).tolist()) == set(years) and 5 not in years and max(years) == 11
    # every key the file's next-move statistics holds counts exactly its rows' games (the dropped game's taken out)
    path = os.path.join(segment_files.folder_of(str(tmp_path / "book-True.sqlite")), files[1].name)
    file_keys, file_codes = segment_files.read_rows(path)
    stored = segment_files.read_stats(path)
    assert len(stored)
    owners = (file_codes >> 24) + 2  # the file numbers its games from 0; ids start at 2 here
    recount = nextmoves.from_rows(file_keys, owners, file_codes & 0xFFFFFF,
                                  np.array([years[o] for o in owners.tolist()], dtype=np.int64), min_games=1)
    games = np.bincount(np.unique(recount.keys, return_inverse=True)[1], weights=recount.counts[:, 2])
    popular = np.repeat(games >= nextmoves.GAMES, np.unique(recount.keys, return_counts=True)[1])
    assert np.array_equal(recount.keys[popular], stored.keys)
    assert np.array_equal(recount.counts[popular], stored.counts)
    for each in books.values():
        each.close()


def test_merges_in_a_process_of_their_own_give_the_same_book(tmp_path, monkeypatch):
    """With parser processes the writer hands merges to a process of its own (importer.Merger)
    and links them when done: the same answers as one segment, levels kept under FANOUT."""
    folder = tmp_path / "games"
    folder.mkdir()
    games = write_games(folder, count=90, seed=44)
    boards = sample_positions(games, np.random.default_rng(6), count=20)
    in_book_file(tmp_path / "one.sqlite", 1000, monkeypatch, folder, files=True)
    with Book.open(str(tmp_path / "one.sqlite")) as book:
        expected = answers(book, boards)
    monkeypatch.setattr(segments, "FANOUT", 3)
    started = []
    real_start = importer.Merger._start

    def start(self):
        real_start(self)
        if self.job is not None:
            started.append(self.job[0].pid)

    monkeypatch.setattr(importer.Merger, "_start", start)
    path = tmp_path / "merged.sqlite"
    with Book.open(str(path)) as book:
        report = importer.import_paths(book, [str(folder)], workers=2, batch_games=8)
        assert report.added == 90
        live, files = listing(book)
        assert len(started) >= 3 and os.getpid() not in started  # merges ran, in other processes
        levels = [segment.level for segment in live]
        assert max(levels) >= 2 and all(levels.count(level) < 3 for level in set(levels))
        assert len(files) == len(live)
        assert set(os.listdir(segment_files.folder_of(str(path)))) == {f.name for f in files}
        assert answers(book, boards) == expected


def test_a_book_without_its_folder_is_refused_by_name_and_compact_makes_one_file(tmp_path, monkeypatch):
    """A book copied without its -segments folder would answer from half its positions:
    opening it (read-only or to write) names the folder and the way out; ``fuseki import
    --compact`` alone, where both are, makes one file that opens anywhere."""
    import shutil

    from fuseki.book.storage.connect import BookError
    from fuseki.book.ui.fuseki_command import main

    folder = tmp_path / "games"
    folder.mkdir()
    games = write_games(folder, count=30, seed=47)
    boards = sample_positions(games, np.random.default_rng(9), count=10)
    monkeypatch.setattr(segment_files, "ENABLED", True)
    original = tmp_path / "book.sqlite"
    with Book.open(str(original)) as book:
        importer.import_paths(book, [str(folder)], workers=0, batch_games=8)
        expected = answers(book, boards)
        assert len(listing(book)[1]) >= 3
    alone = tmp_path / "copy" / "book.sqlite"
    alone.parent.mkdir()
    shutil.copy(original, alone)
    for readonly in (True, False):
        try:
            Book.open(str(alone), readonly=readonly).close()
        except BookError as exc:
            assert segment_files.folder_of(str(alone)) in str(exc) and "--compact" in str(exc)
        else:
            raise AssertionError("a book without its segment files opened")
    assert main(["search", "--book", str(alone), "--moves", "pd"]) != 0

    assert main(["import", "--compact", "--book", str(original)]) == 0
    assert not os.path.exists(segment_files.folder_of(str(original)))
    shutil.copy(original, alone)
    with Book.open(str(alone), readonly=True) as book:
        assert answers(book, boards) == expected


def test_a_merge_sorts_runs_and_overlapping_parts_by_key_then_code():
    """``sorted_rows`` (a stable sort by key of parts that each come sorted) against Python's sort
    of the (key, code) pairs: parts in the order of their codes, with many equal keys; parts whose
    codes overlap or come in reverse order (where a sort by key alone is wrong); thirty-two parts,
    a merge's most; empty parts among full ones; a part out of order."""
    rng = np.random.default_rng(7)

    def part(count, first_code, keys_from):
        keys = np.sort(rng.choice(keys_from, count))
        codes = first_code + np.arange(count) * 3
        order = np.lexsort((codes, keys))
        return keys[order], codes[order]

    hot = np.array([-(1 << 62), -5, 0, 1, 2, 7, 1 << 40, (1 << 62) + 9], dtype=np.int64)
    wide = rng.integers(-(1 << 63), (1 << 63) - 1, 5_000, dtype=np.int64)
    shuffled = part(300, 5_000_000, hot)
    shuffled = shuffled[0][::-1].copy(), shuffled[1]
    for name, parts in [("in code order", [part(800, 1_000_000 * i, np.concatenate([hot, wide[:50]]))
                                           for i in range(5)]),
                        ("overlapping codes", [part(600, 17 * i, hot) for i in range(4)]),
                        ("reverse code order", [part(700, 1_000_000 * (4 - i), hot) for i in range(4)]),
                        ("thirty-two parts", [part(int(rng.integers(0, 400)), 10_000 * i, np.concatenate([hot, wide]))
                                              for i in range(32)]),
                        ("empty parts among full ones", [part(0, 0, hot), part(500, 0, hot), part(0, 0, hot),
                                                         part(400, 1, wide), part(0, 0, hot)]),
                        ("a part out of order", [part(500, 0, hot), shuffled, part(200, 2, wide)]),
                        ("one part", [part(900, 0, wide)]), ("empty", [part(0, 0, hot)])]:
        keys = np.concatenate([k for k, _ in parts])
        codes = np.concatenate([c for _, c in parts])
        expected = sorted(zip(keys.tolist(), codes.tolist()))
        got_keys, got_codes = segment_files.sorted_rows(keys, codes)
        assert list(zip(got_keys.tolist(), got_codes.tolist())) == expected, name
