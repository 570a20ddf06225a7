"""The ``sound`` policy (the engine's default) and KataGo's stored line past the book.

A real book (tests/bookgames.py: after R16, white has D4 in 4 games, D16 in 2, Q4 in 1; no
corner book) and KataGo's values written by each test into a cache file of its own
(``ai_values.put``, storage, no mock): the rule is worked out here from the figures written.
"""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine

from fuseki.book.play.book_chooser import LINE_MOVES, BookChooser
from fuseki.book.queries import ai_values
from fuseki.book.queries.ai_values import AiSettings
from fuseki.engine.config import Settings
from fuseki.engine.core.base import BLACK, WHITE, point_to_vertex, vertex_to_point
from fuseki.engine.core.board import Board

from bookgames import build_book

DEEP, SHALLOW = 400, 20


def after(*moves):
    board = Board(19)
    for n, move in enumerate(moves):
        board.play(BLACK if n % 2 == 0 else WHITE, vertex_to_point(move, 19))
    return board


def put(path, moves, candidates, lines=None):
    """Values of the position after ``moves``, a 400-visit search: ``candidates`` are (vertex,
    lead, visits) best first; ``lines`` each one's line as vertices (the move first)."""
    board = after(*moves)
    best = max(lead for _, lead, visits in candidates if visits >= 100)
    rows = [(vertex_to_point(v, 19), visits, 0.5, lead, best - lead, 0.1) for v, lead, visits in candidates]
    pvs = None if lines is None else [[vertex_to_point(v, 19) for v in line] for line in lines]
    db = create_engine(f"sqlite:///{path}")
    with db.begin() as conn:
        ai_values.create(conn)
        ai_values.put(conn, board.symmetric_keys(board.to_move), 19, AiSettings("japanese", 6.5, "net", DEEP),
                      (DEEP, 0.5, best), rows, pvs)
    db.dispose()


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sound")
    return build_book(folder / "book.sqlite", folder / "sgf")


def chosen(book, cache, board, color, policy="sound", seed=1):
    chooser = BookChooser(book, policy=policy, seed=seed, ai_cache=cache, log=lambda line: None)
    choice = chooser.choose(board, color)
    return (None, "") if choice is None else (point_to_vertex(choice.move, 19), choice.source)


def test_sound_is_the_engines_default():
    assert Settings().book.policy == "sound"


def test_the_most_played_move_within_the_noise_of_the_best_book_move_is_played(book, tmp_path):
    cache = tmp_path / "cache.sqlite"
    # D4 (4 games) 0.05 under D16 (2 games): within the noise of two 400-visit leads (0.099)
    put(cache, ["R16"], [("D16", 0.30, DEEP), ("D4", 0.25, DEEP), ("Q4", -1.0, DEEP)])
    assert chosen(book, cache, after("R16"), WHITE) == ("D4", "book")


def test_a_popular_move_that_loses_more_than_the_noise_gives_way_to_a_sounder_rarer_one(book, tmp_path):
    cache = tmp_path / "cache.sqlite"
    # D4 (4 games) 0.3 under D16 (2 games): more than the noise; Q4 (1 game) is the best by 0.05
    put(cache, ["R16"], [("Q4", 0.35, DEEP), ("D16", 0.30, DEEP), ("D4", 0.0, DEEP)])
    assert {chosen(book, cache, after("R16"), WHITE, seed=s) for s in range(4)} == {("D16", "book")}
    assert chosen(book, cache, after("R16"), WHITE, policy="best") == ("D4", "book")  # best still plays it


def test_shallow_values_judge_nothing(book, tmp_path):
    cache = tmp_path / "cache.sqlite"
    # D16 and Q4 look better but from 20 visits each: only D4's deep value counts, and D4 is played
    put(cache, ["R16"], [("D4", 0.0, DEEP), ("D16", 2.0, SHALLOW), ("Q4", 3.0, SHALLOW)])
    assert chosen(book, cache, after("R16"), WHITE) == ("D4", "book")


def test_a_position_without_values_plays_the_human_book(book, tmp_path):
    cache = tmp_path / "cache.sqlite"
    put(cache, ["Q16"], [("D4", 0.0, DEEP)])  # another position's values only
    assert chosen(book, cache, after("R16", "D4"), BLACK) == chosen(book, cache, after("R16", "D4"), BLACK, "best")
    assert chosen(book, cache, after("R16", "D4"), BLACK)[1] == "book"


LINE = ["C3", "D16", "C15", "E17", "D14", "R4"]  # KataGo's line from C3, a move nobody played after R16


def test_the_stored_line_is_followed_while_the_opponent_stays_on_it(book, tmp_path):
    cache = tmp_path / "cache.sqlite"
    put(cache, ["R16"], [("C3", 0.5, DEEP), ("D4", 0.4, DEEP)], lines=[LINE, ["D4", "Q3"]])
    # white left the book with KataGo's C3; black has no book move there: the line's D16
    assert chosen(book, cache, after("R16", "C3"), BLACK) == ("D16", "ai line")
    # white answered with the line's C15: the line goes on
    assert chosen(book, cache, after("R16", "C3", "D16", "C15"), BLACK) == ("E17", "ai line")
    # white left the line (D15 where it said C15): no line, and this book has no corner book
    assert chosen(book, cache, after("R16", "C3", "D16", "D15"), BLACK) == (None, "")
    # only sound follows lines
    assert chosen(book, cache, after("R16", "C3"), BLACK, policy="best") == (None, "")


def test_the_line_is_not_followed_from_a_shallow_value_nor_past_its_length(book, tmp_path):
    cache = tmp_path / "cache.sqlite"
    put(cache, ["R16"], [("D4", 0.4, DEEP), ("C3", 0.5, SHALLOW)], lines=[["D4", "Q3"], LINE])
    assert chosen(book, cache, after("R16", "C3"), BLACK) == (None, "")  # C3's value is 20 visits
    cache2 = tmp_path / "cache2.sqlite"
    put(cache2, ["R16"], [("C3", 0.5, DEEP), ("D4", 0.4, DEEP)], lines=[LINE, ["D4", "Q3"]])
    assert chosen(book, cache2, after("R16", *LINE), BLACK) == (None, "")  # the line has no seventh move
    assert len(LINE) < LINE_MOVES


def test_with_a_fallback_engine_sound_hands_it_the_move_before_the_corner_book(book):
    from fuseki.book.play.book_chooser import from_settings
    from fuseki.engine.config import BookSettings

    def chooser(policy, fallback):
        settings = Settings(fallback_engine=fallback, book=BookSettings(path=str(book), policy=policy))
        return from_settings(settings, log=lambda line: None)

    assert not chooser("sound", "gnugo --mode gtp").corner_book  # the engine, not the joseki
    assert chooser("sound", None).corner_book  # no engine behind it: the corner book, not random moves
    assert chooser("best", "gnugo --mode gtp").corner_book  # the other policies keep it
