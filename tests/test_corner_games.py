"""The corner book's games on a real book: /api/corners and the engine's corner candidates against
a count written here (issue 57: the empty board of the 11,364-game month showed the 4-4 point
"played" 22,553 times, a count of corners, four a game, not of games).

The book is an import of the first 300 19x19 Tygem games of tygem-2016-07.tgz; the independent
count (tests/cornercount.py: the corners read as tuples of cells, no hashes, no numba) replays
each game's SGF moves, read by sgfmill, with the rules core and counts each continuation's times
and the distinct games it was played in.
"""

from __future__ import annotations

import pytest

from fuseki.book.analysis.patterns import corner_build
from fuseki.book.analysis.pipeline import importer
from fuseki.book.play.book_chooser import BookChooser
from fuseki.book.storage.store import Book
from fuseki.engine.core import base
from fuseki.engine.core.base import BLACK, WHITE
from fuseki.engine.core.board import Board

from conftest import sgfmill_main_line, write_archive
from cornercount import count_games, expected

GAMES = 300


@pytest.fixture(scope="module")
def month(tmp_path_factory, tygem_games):
    """(the book's path, [(moves, winner)], the independent count)."""
    from sgfmill import sgf

    members, games = [], []
    for name, data in tygem_games:
        game = sgf.Sgf_game.from_bytes(data)
        if game.get_size() != 19 or game.get_root().has_setup_stones():
            continue
        moves = sgfmill_main_line(game)
        board = Board(19)
        try:
            for colour, point in moves:
                board.play(colour, point)
        except Exception:  # an illegal move: not a game the count can follow
            continue
        if not moves:
            continue
        members.append((name, data))
        games.append((moves, {"b": BLACK, "w": WHITE}.get(game.get_winner())))
        if len(games) == GAMES:
            break
    folder = tmp_path_factory.mktemp("cornergames")
    path = str(folder / "book.sqlite")
    with Book.open(path) as book:
        importer.import_paths(book, [str(write_archive(folder / "games.tgz", members))], workers=0)
        corner_build.update(book, progress=None)
        assert book.stats().games == len(games)
    return path, games, count_games(games, 19)


def api_corners(path, moves: list[int]) -> dict:
    from fuseki.book.ui.web.app import create_app

    with Book.open(path, readonly=True) as book:
        client = create_app(book=book, cache_bytes=0).test_client()
        text = ",".join(base.point_to_sgf(p, 19) for p in moves)
        answer = client.get(f"/api/corners?moves={text}&size=19")
        assert answer.status_code == 200
        return answer.get_json()


def board_of(moves: list[int]) -> Board:
    board = Board(19)
    for point in moves:
        board.play(board.to_move, point)
    return board


def positions(games) -> list[list[int]]:
    """The empty board, and early positions of a few games (a corner of a few stones and empty ones)."""
    return [[]] + [[p for _, p in moves[:upto]] for moves, _ in games[:12:3] for upto in (1, 4, 9)]


def test_the_empty_boards_corner_counts_are_games(month):
    path, games, table = month
    answer = api_corners(path, [])
    first = answer["corners"][0]
    assert first["same"] == [1, 2, 3]  # four empty corners: one list
    moves, tenuki, corner_games = expected(table, Board(19), BLACK, corner_build.PRUNE)[0]  # the top left
    assert first["games"] == corner_games <= len(games)
    assert tenuki == (0, 0) and first["tenuki"] == 0  # nobody leaves an empty corner
    four_four = next(row for row in first["next"] if row["vertex"] == "D16")
    times, _wins, played_in = next(v for points, v in moves.items() if base.vertex_to_point("D16", 19) in points)
    # the 4-4 point is played in two or more corners of most games: its times were the old figure
    assert played_in < times and (four_four["games"], four_four["times"]) == (played_in, times)
    assert first["total"] > len(games)  # times, as it says: the continuations of four corners a game


@pytest.mark.parametrize("index", range(13))
def test_every_row_equals_the_independent_count_and_never_exceeds_the_books_games(month, index):
    path, games, table = month
    moves = positions(games)[index]
    board = board_of(moves)
    answer = api_corners(path, moves)
    want = expected(table, board, board.to_move, corner_build.PRUNE)
    for corner in answer["corners"]:
        rows, (tenuki, tenuki_games), corner_games = want[corner["corner"]]
        got = {frozenset(base.parse_point(p, 19) for p in row["points"]): (row["times"], row["games"])
               for row in corner["next"]}
        assert got == {points: (times, in_games) for points, (times, _, in_games) in rows.items()}
        assert (corner["games"], corner["tenuki"], corner["tenuki_games"]) == (corner_games, tenuki, tenuki_games)
        assert corner["games"] <= len(games) and all(row["games"] <= corner["games"] for row in corner["next"])


def test_the_engine_shows_the_same_games_as_the_page(month):
    """One source: GTP's corner candidates (the analysis commands' visits) are the page's games."""
    path, games, _table = month
    chooser = BookChooser(path)
    for moves in positions(games):
        board = board_of(moves)
        page = {(corner["corner"], row["sgf"]): row["games"] for corner in api_corners(path, moves)["corners"]
                for row in corner["next"]}
        engine = {(m.corner, base.point_to_sgf(m.point, 19)): m.games
                  for m in chooser.corner_candidates(board, board.to_move)}
        assert engine == page and max(engine.values(), default=0) <= len(games)
