"""A statistics book answers as the book of games it was counted from.

Games are imported with the real importer into a book of games; its statistics book
(``book.builders.statbook.write_statistics``) must give the same ``next_moves`` for every
position reached by at least ``min_games`` games, in all 8 orientations, and nothing for
the others; what needs games (lists, records, filters) it refuses in words.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from fuseki.book.analysis.pipeline import importer
from fuseki.book.builders.statbook import build, info_path, write_statistics
from fuseki.book.model import builtin
from fuseki.book.model.filters import Filters
from fuseki.book.storage.connect import BookError
from fuseki.book.storage.position_index import statbook_file
from fuseki.book.storage.position_index.statistics_book import StatisticsOnly, StatisticsTable
from fuseki.book.storage.store import Book
from fuseki.engine.core import base, coords
from fuseki.engine.core.base import BLACK, EMPTY, WHITE, opponent
from fuseki.engine.core.board import Board

from games import random_moves, sgf_text, write_games
from replay import transformed

MIN_GAMES = 3


def positions(moves):
    """Each position of a game (the board, whose to_move is the next mover), the last included."""
    board = Board(19)
    for colour, point in moves:
        board.to_move = colour
        yield board.copy()
        board.play(colour, point)
    board.to_move = WHITE if not moves or moves[-1][0] == BLACK else BLACK
    yield board


def check_every_position(full: Book, stats: Book, games, min_games: int) -> tuple[int, int]:
    """Compare the two books on every position of ``games``; (positions kept, left out)."""
    seen, kept, left = set(), 0, 0
    for moves in games:
        for board in positions(moves):
            key = min(board.symmetric_keys())
            if key in seen:
                continue
            seen.add(key)
            expected = full.next_moves(board)
            if expected.total < min_games:
                found = stats.next_moves(board)
                assert (found.total, found.moves) == (0, []), board.ascii()
                left += 1
                continue
            kept += 1
            for t in range(8):
                image = transformed(board, t)
                assert stats.next_moves(image) == full.next_moves(image), (t, board.ascii())
                assert stats.next_moves(image, filters=Filters(min_games=2)) == \
                    full.next_moves(image, filters=Filters(min_games=2))
    return kept, left


POPULAR = ["pd", "dp", "pp", "dd", "qc", "cq", "jj", "qf", "fq", "cd", "dc", "jd"]


def write_shared_games(folder, count: int, seed: int) -> list:
    """Games whose first 4-9 moves come from a few popular points (so that openings are shared,
    transposed and mirrored), in a random orientation, then random legal moves; written as SGF."""
    rng = np.random.default_rng(seed)
    games = []
    for i in range(count):
        board, t, colour = Board(19), int(rng.integers(8)), BLACK
        for _ in range(int(rng.integers(4, 10))):
            points = [coords.transform_point(t, base.sgf_to_point(p, 19), 19) for p in POPULAR]
            free = [p for p in points if board.color_at(p) == EMPTY]
            weights = np.array([0.5 ** k for k in range(len(free))])
            board.play(colour, free[int(rng.choice(len(free), p=weights / weights.sum()))])
            colour = opponent(colour)
        random_moves(board, colour, rng, int(rng.integers(0, 8)))
        moves = list(board.moves)
        result = ["B+R", "W+3.5", "Void"][i % 3]
        (folder / f"s{i:03d}.sgf").write_bytes(sgf_text(19, moves, date=f"{2010 + i % 7}-01-01", result=result))
        games.append(moves)
    return games


@pytest.fixture
def books(tmp_path):
    """(book of games, its statistics book, the games' moves) of generated games sharing openings."""
    folder = tmp_path / "games"
    folder.mkdir()
    games = write_shared_games(folder, count=80, seed=7)
    games += [moves for moves, *_ in write_games(folder, count=30, seed=7, length=14)]
    full = Book.open(str(tmp_path / "full.sqlite"))
    importer.import_paths(full, [str(folder)], workers=0)
    write_statistics(full, str(tmp_path / "stats.sqlite"), MIN_GAMES, title="the test book", description="generated")
    stats = Book.open(str(tmp_path / "stats.sqlite"), readonly=True)
    yield full, stats, games
    stats.close()
    full.close()


def test_next_moves_equal_the_full_books_above_the_threshold_in_all_orientations(books):
    full, stats, games = books
    assert isinstance(stats.index, StatisticsTable)
    kept, left = check_every_position(full, stats, games, MIN_GAMES)
    assert kept > 20 and left > 100  # both sides of the threshold were seen
    assert stats.next_moves(Board(19)).total == len(games)


def test_a_statistics_book_lists_no_games_and_says_why(books):
    _full, stats, _games = books
    with pytest.raises(StatisticsOnly, match="the test book holds next-move statistics, not games"):
        stats.games(Board(19))
    with pytest.raises(StatisticsOnly, match="cannot select games by year or player"):
        stats.next_moves(Board(19), filters=Filters(year_from=2012))
    with pytest.raises(StatisticsOnly, match="year or player"):
        stats.next_moves(Board(19), filters=Filters(player="Lee"))
    with pytest.raises(KeyError, match="statistics, not games"):
        stats.game(1)
    with pytest.raises(KeyError, match="statistics, not games"):
        stats.game_sgf(1)
    assert stats.game_ids() == [] and stats.max_game_id() == 0
    with pytest.raises(StatisticsOnly, match="statistics, not games"):
        stats.index.codes(min(Board(19).symmetric_keys(BLACK)), every_row=True)


def test_both_forms_hold_their_games_behind_one_face(books):
    full, stats, _games = books
    assert stats.stored_games.why_none == stats.index.info.no_games()
    assert full.stored_games.why_none is None
    counted = full.stats()
    assert stats.stored_games.of_size(19) == full.stored_games.of_size(19) == counted.sizes[19] > 0
    assert full.stored_games.of_size(9) == 0
    ids = full.game_ids()
    assert ids == sorted(ids) and len(ids) == counted.games > 0 and full.max_game_id() == ids[-1]
    assert full.game_ids(size=19) == ids  # the generated games are all 19x19


def test_stats_name_the_games_it_was_counted_from(books):
    full, stats, _games = books
    mine, theirs = stats.stats(), full.stats()
    assert (mine.games, mine.sizes, mine.years) == (theirs.games, theirs.sizes, theirs.years)
    assert mine.positions == stats.index.info.positions > 0
    assert mine.file_bytes == os.path.getsize(stats.path)
    assert stats.index.info.min_games == MIN_GAMES and stats.index.info.description == "generated"


def test_opened_for_writing_it_stays_read_only_and_unchanged(books):
    _full, stats, _games = books
    before = open(stats.path, "rb").read()
    book = Book.open(stats.path)  # as fuseki import or the shell would
    assert isinstance(book.index, StatisticsTable) and book.readonly
    with pytest.raises(BookError, match="read-only"):
        importer.import_paths(book, [])
    with pytest.raises(BookError, match="read-only"):
        book.compact()
    book.close()
    assert open(stats.path, "rb").read() == before
    assert not os.path.exists(stats.path + "-wal") and not os.path.exists(stats.path + "-journal")


def test_the_json_file_says_what_the_book_holds(books):
    _full, stats, games = books
    info = json.loads(open(info_path(stats.path)).read())
    assert info == {"title": "the test book", "description": "generated", "games": len(games),
                    "min_games": MIN_GAMES, "positions": stats.index.info.positions,
                    "rows": info["rows"]}
    assert info["rows"] >= info["positions"]


def test_the_same_games_give_the_same_bytes(tmp_path):
    folder = tmp_path / "games"
    folder.mkdir()
    write_shared_games(folder, count=30, seed=3)
    outputs = []
    for run in ("a", "b"):
        out = tmp_path / run / "book.sqlite"
        out.parent.mkdir()
        report = build([str(folder)], str(out), 2, description="x", work=str(tmp_path), workers=0)
        assert report.games > 25 and report.rows > 0
        outputs.append((out.read_bytes(), open(info_path(str(out)), "rb").read()))
    assert outputs[0] == outputs[1]
    assert statbook_file.is_statistics_file(str(tmp_path / "a" / "book.sqlite"))
    assert not any(name.startswith("fuseki-build-") for name in os.listdir(tmp_path))  # no leftovers


def test_a_book_of_games_is_not_a_statistics_book(tmp_path):
    path = str(tmp_path / "games.sqlite")
    Book.open(path).close()
    assert not statbook_file.is_statistics_file(path)
    assert not statbook_file.is_statistics_file(str(tmp_path / "missing.sqlite"))
    book = Book.open(path, readonly=True)
    assert book.stored_games.why_none is None
    book.close()


@pytest.mark.slow
def test_real_games_of_the_tygem_archive(tmp_path, shared_data):
    """The first 300 games of July 2016: every position of their first 24 moves reached by 3 games
    or more, and as many left out."""
    from fuseki.book.formats.sgf_reader import read_games
    from fuseki.book.formats.sources import SourceFile, iter_sources

    folder = tmp_path / "games"
    folder.mkdir()
    games = []
    for item in iter_sources([str(shared_data / "tygem-2016-07.tgz")]):
        if isinstance(item, SourceFile):
            (folder / f"{len(games):04d}.sgf").write_bytes(item.data)
            games.append([move for move in read_games(item.data, item.name)[0].moves])
            if len(games) == 300:
                break
    full = Book.open(str(tmp_path / "full.sqlite"))
    importer.import_paths(full, [str(folder)], workers=0)
    write_statistics(full, str(tmp_path / "stats.sqlite"), MIN_GAMES)
    with Book.open(str(tmp_path / "stats.sqlite"), readonly=True) as stats:
        kept_games = [moves[:24] for moves in games]  # the kept positions lie in the openings
        kept, _left = check_every_position(full, stats, kept_games, MIN_GAMES)
        seen_keys = {min(b.symmetric_keys()) for moves in kept_games for b in positions(moves)}
        assert kept == sum(1 for key in stored_keys(stats) if key in seen_keys) > 100
    full.close()


def stored_keys(stats: Book) -> set[int]:
    """The canonical keys (unsigned) of a statistics book's positions."""
    with stats.db.connect() as conn:
        keys = conn.exec_driver_sql("SELECT DISTINCT key FROM next_stats").scalars().all()
    return {key % (1 << 64) for key in keys}


# --- the plain sqlite3 reader (book.storage.position_index.statbook_file) against SQLAlchemy's query ---------------


def check_reader_against_sqlalchemy(stats: Book, sample: int, seed: int) -> int:
    """Every sampled position of ``stats`` (and keys it lacks) read both ways: the ``sqlite3``
    reader a Book uses, and ``statbook_table.lookup`` through the book's SQLAlchemy engine."""
    from fuseki.book.storage.position_index import statbook_table
    from fuseki.engine.core.zobrist import to_signed

    assert stats.db is stats.db  # made once, when first asked
    with stats.db.connect() as conn:
        keys = conn.exec_driver_sql("SELECT DISTINCT key FROM next_stats ORDER BY key").scalars().all()
        rng = np.random.default_rng(seed)
        chosen = [keys[i] for i in rng.choice(len(keys), min(sample, len(keys)), replace=False)]
        chosen += [keys[0], keys[-1], keys[0] - 1, keys[-1] + 1, to_signed(12345)]  # the ends, and keys not there
        compared = 0
        for key in chosen:
            plain = stats.index.reader.lookup(key)
            slow = statbook_table.lookup(conn, key)
            assert plain.keys.dtype == slow.keys.dtype and plain.counts.dtype == slow.counts.dtype
            assert np.array_equal(plain.keys, slow.keys) and np.array_equal(plain.counts, slow.counts), key
            compared += len(slow)
    return compared


def test_the_sqlite3_reader_reads_what_sqlalchemy_reads(books):
    _full, stats, _games = books
    assert stats._db is None  # the next moves above needed no engine
    assert check_reader_against_sqlalchemy(stats, 400, seed=3) > 100


@pytest.mark.skipif(not builtin.PATH.exists(), reason="the built-in book is not built in this checkout")
def test_the_sqlite3_reader_reads_the_built_in_book_as_sqlalchemy_does():
    stats = Book.open(str(builtin.PATH), readonly=True)
    try:
        assert check_reader_against_sqlalchemy(stats, 3000, seed=5) > 3000
    finally:
        stats.close()


def test_a_statistics_book_read_from_threads_and_closed_opens_again(books):
    """The web server's threads share one Book: each reads through its own connection; after
    close a read opens a new one (as SQLAlchemy's disposed pool would)."""
    from concurrent.futures import ThreadPoolExecutor

    _full, stats, games = books
    boards = [board for moves in games[:20] for board in positions(moves[:6])]
    alone = [stats.next_moves(board) for board in boards]
    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(stats.next_moves, boards)) == alone
    stats.close()
    assert [stats.next_moves(board) for board in boards[:5]] == alone[:5]
