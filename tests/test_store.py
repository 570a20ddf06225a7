"""Book queries against an independent count.

Games are generated (random legal play after a few shared openings, each game in a
random orientation), written as SGF files, imported, and the answers of ``Book``
are compared with what replaying the games with ``Board`` says: which games reach a
position in any orientation, what they played next, who won.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import numpy as np
import pytest

from fuseki.book.analysis.pipeline import importer
from fuseki.book.model.filters import Filters
from fuseki.book.storage import schema, scheme
from fuseki.book.storage.connect import BookError
from fuseki.book.storage.position_index import busy_rows, segment_index
from fuseki.book.storage.store import Book
from fuseki.engine.core import base, coords
from fuseki.engine.core.base import BLACK, EMPTY, WHITE
from fuseki.engine.core.board import Board

from conftest import missing_service
from games import import_forty, sgf_text, write_games
from replay import as_dict, board_after, expected, sample_positions, signature, transformed

# The generated games are tests/games.py's (write_games, import_forty), the independent count
# tests/replay.py's (expected: replaying the games with Board).


# --- fixtures ----------------------------------------------------------------------------

def next_stats_settings(monkeypatch, layout: str) -> None:
    """"rows": no key reaches next-move statistics (book.storage.position_index.nextmoves); "next_stats": every
    key of 2 games or more of a batch is counted and 3 segments of a level merge, so the queries
    read next-move statistics, merged next-move statistics and rows together."""
    from fuseki.book.storage.position_index import nextmoves, segments

    if layout == "next_stats":
        monkeypatch.setattr(nextmoves, "GAMES", 2)
        monkeypatch.setattr(segments, "FANOUT", 3)


@pytest.fixture(params=["rows", "next_stats"])
def imported(request, tmp_path, book_url, monkeypatch):
    """40 games in batches of 7, in a book of the test's own: for the tests that write to it."""
    next_stats_settings(monkeypatch, request.param)
    book, games, folder = import_forty(tmp_path, book_url)
    yield book, games, folder
    book.close()


@pytest.fixture(scope="module", params=[(layout, backend) for layout in ("rows", "next_stats")
                                        for backend in ("sqlite", "postgresql")],
                ids=lambda param: "-".join(param))
def imported_once(request, tmp_path_factory):
    """``imported``'s book made once a module for the tests that only read it (the same 40 games,
    batches and settings): (layout, location, games, folder)."""
    layout, backend = request.param
    folder = tmp_path_factory.mktemp(f"store-{layout}")
    server = None
    if backend == "sqlite":
        location = str(folder / "book.sqlite")
    else:
        server = request.getfixturevalue("_postgres")
        if isinstance(server, str):
            missing_service(server)
        location = server.create()
    with pytest.MonkeyPatch.context() as monkeypatch:  # set while a test runs, not between (read_only)
        next_stats_settings(monkeypatch, layout)
        book, games, games_folder = import_forty(folder, location)
        book.close()
    yield layout, location, games, games_folder
    if server is not None:
        server.drop_later(urlsplit(location).path.lstrip("/"))


@pytest.fixture
def read_only(imported_once, monkeypatch):
    """(book, games, folder) as ``imported`` gives them, with its settings, the book
    ``imported_once``'s opened anew for the test (its own connection and caches): for the tests
    that only read it (44 imports of the 40 games fewer)."""
    layout, location, games, folder = imported_once
    next_stats_settings(monkeypatch, layout)
    with Book.open(location) as book:
        yield book, games, folder


# --- properties --------------------------------------------------------------------------

def test_next_moves_commute_with_the_eight_symmetries(read_only):
    book, games, _ = read_only
    for board in sample_positions(games, np.random.default_rng(5)):
        base = book.next_moves(board)
        assert base.total > 0
        for t in range(8):
            image = book.next_moves(transformed(board, t))
            mapped = {frozenset(coords.transform_point(t, p, 19) for p in points): counts
                      for points, counts in as_dict(base).items()}
            assert as_dict(image) == mapped, f"symmetry {t}"
            assert (image.total, image.ended) == (base.total, base.ended)


def test_totals_and_next_moves_match_an_independent_replay(read_only):
    book, games, _ = read_only
    for board in sample_positions(games, np.random.default_rng(9), count=20):
        total, ended, moves = expected(board, games)
        found = book.next_moves(board)
        assert (found.total, found.ended) == (total, ended)
        assert as_dict(found) == moves
        assert sum(m.games for m in found.moves) == found.total - found.ended


def test_empty_board_counts_every_game_once(read_only):
    book, games, _ = read_only
    found = book.next_moves(Board(19))
    distinct = {tuple(g[0]) for g in games}
    assert found.total == len(distinct)
    assert found.ended == sum(1 for moves in distinct if not moves)
    assert sum(m.games for m in found.moves) == found.total - found.ended
    # the 4-4 points are one move on the empty board, listed once with its 4 points
    star = [m for m in found.moves if base.sgf_to_point("pd", 19) in m.points]
    assert len(star) == 1 and len(star[0].points) == 4


def test_a_symmetric_opening_merges_equivalent_moves(read_only):
    book, games, _ = read_only
    tengen = board_after([(BLACK, base.sgf_to_point("jj", 19))])
    found = book.next_moves(tengen)
    starting = [g for g in games if g[0][:1] == [(BLACK, base.sgf_to_point("jj", 19))]]
    assert found.total == len({tuple(g[0]) for g in starting}) > 0
    for move in found.moves:  # tengen is symmetric under all 8: orbits of 4 or 8 points
        assert move.point == min(move.points)
        assert len(move.points) in (4, 8) or move.points == (base.PASS,)
    points = [p for m in found.moves for p in m.points]
    assert len(points) == len(set(points))


def test_winrate_is_for_the_player_to_move(read_only):
    book, games, _ = read_only
    black_to_move = book.next_moves(Board(19))
    for move in black_to_move.moves:
        assert move.winrate == pytest.approx(move.stats.black_wins / move.games)
    after = board_after([(BLACK, base.sgf_to_point("pd", 19))])
    for move in book.next_moves(after).moves:
        assert move.winrate == pytest.approx(move.stats.white_wins / move.games)


def test_moves_are_sorted_most_played_first(read_only):
    book, _, _ = read_only
    moves = book.next_moves(Board(19)).moves
    assert [(-m.games, m.point) for m in moves] == sorted((-m.games, m.point) for m in moves)


# --- filters and games -------------------------------------------------------------------

def test_year_and_player_filters_keep_only_matching_games(read_only, monkeypatch):
    book, games, _ = read_only
    board = Board(19)
    filters = Filters(year_from=2012, year_to=2014)
    total, ended, moves = expected(board, games, keep=lambda g: 2012 <= g[2] <= 2014)
    found = book.next_moves(board, filters=filters)
    assert (found.total, found.ended, as_dict(found)) == (total, ended, moves)
    total, _, moves = expected(board, games, keep=lambda g: "ke jie" in (g[3] + "|" + g[4]).lower())
    for busy in (segment_index.PLAYER_READ_ROWS, 1):  # 1: PostgreSQL picks the player's rows itself
        monkeypatch.setattr(segment_index, "PLAYER_READ_ROWS", busy)
        book.forget_caches()
        found = book.next_moves(board, filters=Filters(player="KE J"))
        assert (found.total, as_dict(found)) == (total, moves)
        assert book.next_moves(board, filters=Filters(player="nobody%")).total == 0
    found = book.next_moves(board, filters=Filters(min_games=3))
    assert all(m.games >= 3 for m in found.moves)
    assert found.total == book.next_moves(board).total


def test_games_pages_list_every_game_once_newest_first(read_only):
    book, games, _ = read_only
    board = Board(19)
    first = book.games(board, page=1, page_size=7)
    assert first.total == book.next_moves(board).total
    assert first.pages == -(-first.total // 7)
    rows = [row for page in range(1, first.pages + 1) for row in book.games(board, page=page, page_size=7).rows]
    assert len(rows) == first.total == len({row.id for row in rows})
    dates = [row.date for row in rows]
    assert dates == sorted(dates, reverse=True)
    assert all(row.move_number == 0 for row in rows)
    after = board_after(games[0][0], upto=2)
    for row in book.games(after, page_size=50).rows:
        record = book.game(row.id)
        assert transformed_reaches(record.moves, after, row.move_number)
    assert book.games(board, page=first.pages + 1, page_size=7).rows == []


def transformed_reaches(moves, board, number):
    replay = board_after(moves, upto=number)
    images = {signature(transformed(board, t), board.to_move) for t in range(8)}
    return signature(replay, replay.to_move) in images


def test_game_and_game_sgf_round_trip(read_only):
    book, games, folder = read_only
    row = book.games(Board(19), page_size=1).rows[0]
    record = book.game(row.id)
    assert len(record.moves) == row.move_count
    assert book.game_sgf(row.id).startswith(b"(;")
    with pytest.raises(KeyError):
        book.game(10 ** 6)


def test_stats(read_only):
    book, games, _ = read_only
    stats = book.stats()
    distinct = {tuple(g[0]): g for g in games}
    assert stats.games == len(distinct)
    assert stats.positions == sum(len(moves) + 1 for moves in distinct)
    assert stats.sizes == {19: len(distinct)}
    assert stats.years == (min(g[2] for g in distinct.values()), max(g[2] for g in distinct.values()))


# --- sizes, setup, anomalies -------------------------------------------------------------

def test_9x9_games_are_separate_from_19x19(tmp_path, book_url):
    folder = tmp_path / "games"
    folder.mkdir()
    nine = write_games(folder, count=10, seed=3, size=9, length=20)
    nineteen = write_games(folder, count=5, seed=4, size=19, length=10)
    with Book.open(book_url) as book:
        importer.import_paths(book, [str(folder)], workers=0)
        assert book.next_moves(Board(9)).total == len({tuple(g[0]) for g in nine})
        assert book.next_moves(Board(19)).total == len({tuple(g[0]) for g in nineteen})
        assert book.stats().sizes == {9: len({tuple(g[0]) for g in nine}),
                                      19: len({tuple(g[0]) for g in nineteen})}


def test_handicap_setup_and_passes(tmp_path, book_url):
    size = 19
    stones = [base.sgf_to_point(p, size) for p in ("pd", "dp")]
    dd, pp = base.sgf_to_point("dd", size), base.sgf_to_point("pp", size)
    moves = [(WHITE, dd), (BLACK, base.PASS), (WHITE, pp)]
    (tmp_path / "h.sgf").write_bytes(sgf_text(size, moves, setup=[(BLACK, p) for p in stones], handicap=2))
    with Book.open(book_url) as book:
        report = importer.import_paths(book, [str(tmp_path / "h.sgf")], workers=0)
        assert report.added == 1 and not report.anomalies
        board = Board(size)
        board.place_handicap(stones)
        found = book.next_moves(board)
        assert found.total == 1 and found.moves[0].points[0] == base.sgf_to_point("dd", size)
        assert book.next_moves(board, to_move=BLACK).total == 0  # the side to move is in the key
        board.play(WHITE, base.sgf_to_point("dd", size))
        assert [m.point for m in book.next_moves(board).moves] == [base.PASS]
        board.play(BLACK, base.PASS)
        assert book.next_moves(board).total == 1


def test_illegal_move_keeps_the_positions_before_it(tmp_path, book_url):
    size = 19
    pd, dd = base.sgf_to_point("pd", size), base.sgf_to_point("dd", size)
    moves = [(BLACK, pd), (WHITE, dd), (BLACK, dd), (WHITE, base.sgf_to_point("dp", size))]
    (tmp_path / "bad.sgf").write_bytes(sgf_text(size, moves))
    with Book.open(book_url) as book:
        report = importer.import_paths(book, [str(tmp_path / "bad.sgf")], workers=0)
        assert (report.added, len(report.anomalies)) == (1, 1)
        assert book.stats().positions == 3
        board = board_after(moves, upto=2)
        found = book.next_moves(board)
        assert (found.total, found.ended, found.moves) == (1, 1, [])
        row = book.games(board).rows[0]
        assert row.move_count == 4
        with book.db.connect() as conn:
            anomaly = conn.execute(schema.games.select()).one().anomaly
        assert "move 3" in anomaly and "occupied" in anomaly


def test_reimport_adds_nothing(imported):
    book, games, folder = imported
    before = book.stats()
    report = importer.import_paths(book, [str(folder)], workers=0)
    assert report.added == 0 and report.duplicates == len(games)
    after = book.stats()
    assert (after.games, after.positions) == (before.games, before.positions)


# --- opening -----------------------------------------------------------------------------

def test_a_book_with_another_hash_scheme_is_refused(tmp_path):
    path = tmp_path / "b.sqlite"
    Book.open(str(path)).close()
    book = Book.open(str(path))
    with book.db.begin() as conn:
        conn.execute(schema.meta.update().where(schema.meta.c.name == "hash_scheme").values(value="other"))
    book.close()
    for readonly in (False, True):
        with pytest.raises(scheme.SchemeMismatch, match="hash_scheme"):
            Book.open(str(path), readonly=readonly)


def test_read_only_books(tmp_path):
    with pytest.raises(BookError, match="no book"):
        Book.open(str(tmp_path / "missing.sqlite"), readonly=True)
    Book.open(str(tmp_path / "b.sqlite")).close()
    with Book.open(str(tmp_path / "b.sqlite"), readonly=True) as book:
        assert book.stats().games == 0
        with pytest.raises(BookError):
            importer.import_paths(book, [str(tmp_path)], workers=0)


def test_unknown_position_has_no_moves(read_only):
    book, _, _ = read_only
    board = Board.from_ascii("\n".join(["X" + "." * 18] + ["." * 19] * 18))
    found = book.next_moves(board, to_move=WHITE)
    assert (found.total, found.ended, found.moves) == (0, 0, [])
    assert book.games(board).total == 0
    assert EMPTY == 0


def test_row_fetch_fallback_and_compact_give_the_same_answers(imported, monkeypatch):
    book, games, _ = imported
    boards = sample_positions(games, np.random.default_rng(11), count=8)
    before = [(f.total, f.ended, as_dict(f)) for f in map(book.next_moves, boards)]
    from fuseki.book.storage.position_index import segments

    monkeypatch.setattr(segments, "_JOINED", set())  # the portable one-row-a-code query ...
    monkeypatch.setattr(segments, "_SNAPSHOT", {})  # ... and segment list
    assert [(f.total, f.ended, as_dict(f)) for f in map(book.next_moves, boards)] == before
    monkeypatch.undo()
    book.compact()
    assert [(f.total, f.ended, as_dict(f)) for f in map(book.next_moves, boards)] == before
    assert book.stats().file_bytes > 0


def test_cached_big_answers_follow_imports_by_another_connection(tmp_path, book_url, monkeypatch):
    monkeypatch.setattr(busy_rows, "BUSY_ROWS", 2)  # cache every answer of 2 rows or more
    folder = tmp_path / "one"
    folder.mkdir()
    first = write_games(folder, count=6, seed=21)
    reader = Book.open(book_url)
    writer = Book.open(book_url)
    importer.import_paths(writer, [str(folder)], workers=0)
    assert reader.next_moves(Board(19)).total == len({tuple(g[0]) for g in first})
    assert reader.index.busy  # the empty board's answer is cached now
    folder = tmp_path / "two"
    folder.mkdir()
    second = write_games(folder, count=5, seed=22)
    importer.import_paths(writer, [str(folder)], workers=0)  # the reader is not told
    distinct = {tuple(g[0]) for g in first + second}
    assert reader.next_moves(Board(19)).total == len(distinct)
    assert reader.games(Board(19), page_size=100).total == len(distinct)
    reader.close()
    writer.close()


def test_filtered_answers_follow_imports_by_another_connection(tmp_path, book_url):
    """The book keeps each filter's mask of games and hands it to its index; once another
    connection adds games, the index finds the mask too short (answers.MaskNeeded) and the book
    builds it again: the new games count, as an unfiltered question's do."""
    folder = tmp_path / "one"
    folder.mkdir()
    first = write_games(folder, count=6, seed=31)
    reader, writer = Book.open(book_url), Book.open(book_url)
    importer.import_paths(writer, [str(folder)], workers=0)
    player = first[0][3]  # every game of this Black player, either colour
    of_player = Filters(player=player)

    def playing(games):
        return len({tuple(g[0]) for g in games if player.lower() in (g[3].lower(), g[4].lower())})

    assert reader.next_moves(Board(19), filters=of_player).total == playing(first)
    assert reader.visits(min(Board(19).symmetric_keys(BLACK)), of_player, every_row=True).game_ids.size \
        == playing(first)
    folder = tmp_path / "two"
    folder.mkdir()
    second = write_games(folder, count=8, seed=32)
    importer.import_paths(writer, [str(folder)], workers=0)  # the reader is not told
    assert playing(first + second) > playing(first)
    assert reader.next_moves(Board(19), filters=of_player).total == playing(first + second)
    assert reader.games(Board(19), filters=of_player, page_size=100).total == playing(first + second)
    reader.close()
    writer.close()


def test_the_cache_of_big_answers_stays_within_its_budget(read_only, monkeypatch):
    book, games, _ = read_only
    boards = sample_positions(games, np.random.default_rng(13), count=10)
    expected = [as_dict(book.next_moves(b)) for b in boards]
    book.forget_caches()
    monkeypatch.setattr(busy_rows, "BUSY_ROWS", 1)
    monkeypatch.setattr(segment_index, "BUSY_CODES", 12)
    for _ in range(2):
        assert [as_dict(book.next_moves(b)) for b in boards] == expected
        kept = book.index
        assert kept.busy_codes == sum(len(codes) + len(records) for _, records, codes in kept.busy.values())
        assert kept.busy_codes <= 12 or len(kept.busy) == 1
