"""The book chooser on a real SQLite book (tests/bookgames.py): policies, min_games, orientation,
orbits, illegal book moves, fallback, lazy opening, and the answer cache against the store."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from fuseki.book.play.book_chooser import BookChooser, from_settings, pick
from fuseki.engine.config import BookSettings, Settings
from fuseki.engine.core.base import BLACK, WHITE, point_to_vertex, vertex_to_point
from fuseki.engine.core.board import Board
from fuseki.engine.core.coords import transform_point
from fuseki.engine.gtp.commands import new_engine
from fuseki.engine.players.chooser import point_of

from bookgames import KO_BEFORE, KO_OTHER, KO_TAKE, build_book
from gtpsession import book_chain

THREE_FOUR = {"C4", "D3", "C16", "D17", "Q3", "R4", "Q17", "R16"}
STARS = {"D4", "D16", "Q4", "Q16"}


@pytest.fixture(scope="module")
def book_path(tmp_path_factory):
    folder = tmp_path_factory.mktemp("book")
    return build_book(folder / "book.sqlite", folder / "sgf")


def v(text, size=19):
    return vertex_to_point(text, size)


def after(*moves, size=19):
    board = Board(size)
    color = BLACK
    for move in moves:
        board.play(color, v(move, size))
        color = WHITE if color == BLACK else BLACK
    return board


def chosen(book_path, board, color, **options):
    chooser = BookChooser(book_path, **{"seed": 1, **options})
    choice = chooser.choose(board, color)
    return None if choice is None else point_to_vertex(choice.move, board.size)


# --- policies ------------------------------------------------------------------------------

def test_best_plays_the_most_played_move(book_path):
    assert chosen(book_path, after("R16"), WHITE, policy="best") == "D4"
    assert chosen(book_path, after("R16", "D4"), BLACK, policy="best") == "Q3"


@pytest.mark.parametrize("min_games, expected", [(1, "D16"), (2, "D16"), (3, "D4"), (4, "D4"), (5, None)])
def test_winrate_best_for_the_mover_among_moves_with_min_games(book_path, min_games, expected):
    # white won D16 2/2 and Q4 1/1 (tie on 100%: more games first), D4 only 1/4
    assert chosen(book_path, after("R16"), WHITE, policy="winrate", min_games=min_games) == expected


@pytest.mark.parametrize("policy", ["best", "weighted", "winrate"])
def test_min_games_above_every_move_is_out_of_book(book_path, policy):
    assert chosen(book_path, after("R16"), WHITE, policy=policy, min_games=5) is None


def test_min_games_leaves_rare_moves_out_of_weighted(book_path):
    picks = {chosen(book_path, after("R16"), WHITE, policy="weighted", min_games=2, seed=s)
             for s in range(60)}
    assert picks == {"D4", "D16"}


def test_weighted_follows_the_games_at_temperature_one(book_path):
    chooser = BookChooser(book_path, policy="weighted", seed=7)
    board = after("R16")
    counts = Counter(point_to_vertex(point_of(chooser.choose(board, WHITE)), 19) for _ in range(1400))
    # 4 : 2 : 1 games -> 800 : 400 : 200 expected; 5 standard deviations of slack
    for move, expected in (("D4", 800), ("D16", 400), ("Q4", 200)):
        sd = (1400 * (expected / 1400) * (1 - expected / 1400)) ** 0.5
        assert abs(counts[move] - expected) < 5 * sd, counts


def test_weighted_temperature_sharpens_and_flattens(book_path):
    board = after("R16")
    cold = BookChooser(book_path, policy="weighted", temperature=0.05, seed=3)
    assert {point_of(cold.choose(board, WHITE)) for _ in range(200)} == {v("D4")}
    hot = BookChooser(book_path, policy="weighted", temperature=50.0, seed=3)
    counts = Counter(point_of(hot.choose(board, WHITE)) for _ in range(900))
    assert min(counts.values()) > 220, counts  # near uniform: 300 each


def test_same_seed_same_choices(book_path):
    board = after("R16")
    a = BookChooser(book_path, policy="weighted", seed=11)
    b = BookChooser(book_path, policy="weighted", seed=11)
    assert [point_of(a.choose(board, WHITE)) for _ in range(30)] \
        == [point_of(b.choose(board, WHITE)) for _ in range(30)]


# --- orientation and orbits ----------------------------------------------------------------

@pytest.mark.parametrize("t", range(8))
def test_book_move_in_a_rotated_orientation_comes_back_mapped(book_path, t):
    first = point_to_vertex(transform_point(t, v("R16"), 19), 19)
    expected = point_to_vertex(transform_point(t, v("D4"), 19), 19)
    assert chosen(book_path, after(first), WHITE) == expected
    reply = point_to_vertex(transform_point(t, v("D4"), 19), 19)
    assert chosen(book_path, after(first, reply), BLACK) == point_to_vertex(transform_point(t, v("Q3"), 19), 19)


def test_an_orbit_of_equivalent_moves_is_drawn_at_random(book_path):
    picks = {chosen(book_path, Board(19), BLACK, seed=s) for s in range(80)}
    assert picks <= THREE_FOUR and len(picks) >= 5, picks
    stars = {chosen(book_path, Board(19), BLACK, policy="winrate", seed=s) for s in range(60)}
    assert stars <= STARS and len(stars) >= 3, stars  # the star points won 3/3 for black


# --- legality, fallback, no book -----------------------------------------------------------

def test_illegal_book_move_is_skipped(book_path):
    board = Board.from_ascii(KO_BEFORE)
    board.play(BLACK, v(KO_TAKE, 7))  # now the book's most played reply (retake, 2 games) is ko
    logged = []
    chooser = BookChooser(book_path, seed=1, verbose=True, log=logged.append)
    assert point_to_vertex(point_of(chooser.choose(board, WHITE)), 7) == KO_OTHER
    assert any("skipped (ko)" in line for line in logged), logged
    only_retake = BookChooser(book_path, min_games=2, seed=1)
    assert point_of(only_retake.choose(board, WHITE)) is None  # the one legal move has 1 game


def test_the_same_stones_without_the_ko_play_the_retake(book_path):
    board = Board.from_ascii(KO_BEFORE)
    board.play(BLACK, v(KO_TAKE, 7))
    board.play(WHITE, v("G7", 7))
    board.play(BLACK, v("G1", 7))  # the ko is over; stones differ, so out of book
    assert point_of(BookChooser(book_path, seed=1).choose(board, WHITE)) is None


def test_pick_never_plays_a_pass_from_the_book():
    class Stat:
        def __init__(self, point, games):
            self.point, self.points, self.games, self.winrate = point, (point,), games, 0.5

    board = Board(9)
    assert pick([Stat(-1, 50)], board, BLACK) is None
    choice = pick([Stat(-1, 50), Stat(v("E5", 9), 1)], board, BLACK, rng=random.Random(1))
    assert choice.point == v("E5", 9)


def test_genmove_falls_back_when_out_of_book_and_says_so(book_path):
    logged = []
    settings = Settings(seed=5, book=BookSettings(path=book_path))
    eng = new_engine(settings, book_chain(from_settings(settings, verbose=True, log=logged.append)), log=logged.append)
    eng.game.log_source = logged.append  # --verbose: each choice's comment, then its source
    assert eng.handle_line("play B R16") == "=\n\n"
    assert eng.handle_line("genmove W") == "= D4\n\n"
    assert eng.handle_line("genmove B") == "= Q3\n\n"
    # C3, C17 and K10 were played once each: the tie goes to the book's first (point order)
    assert eng.handle_line("genmove W") == "= C17\n\n"
    fourth = eng.handle_line("genmove B")  # the games end there: out of book, the random fallback
    assert fourth.startswith("= ") and fourth.strip() != "= pass"
    assert "genmove W: book D4 (sound; 4 of 7 games" in logged[0] and logged[1] == "fuseki: genmove W D4: book"
    assert "book Q3" in logged[2] and "book C17" in logged[4] and logged[5] == "fuseki: genmove W C17: book"
    # this book has no corner book: said once, then the next chooser answers
    assert "has no corner book (fuseki corners --book BOOK builds it)" in logged[6], logged
    assert "genmove B: out of book (position not in book)" in logged[7], logged
    assert logged[8].startswith("fuseki: genmove B ") and logged[8].endswith(": random"), logged
    eng.handle_line("genmove W")
    assert sum("no corner book" in line for line in logged) == 1


def test_missing_book_is_reported_once_and_genmove_still_plays(tmp_path):
    logged = []
    settings = Settings(seed=5, book=BookSettings(path=str(tmp_path / "none.sqlite")))
    eng = new_engine(settings, book_chain(from_settings(settings, verbose=True, log=logged.append)))
    for color in "BWBW":
        assert eng.handle_line(f"genmove {color}").startswith("= ")
    assert sum("not found" in line for line in logged) == 1, logged
    assert not (tmp_path / "none.sqlite").exists()  # never created by opening read-only


def test_book_is_opened_lazily(book_path, monkeypatch):
    opened = []
    from fuseki.book.storage import store

    real = store.Book.open
    monkeypatch.setattr(store.Book, "open", classmethod(
        lambda cls, *a, **k: opened.append(k) or real(*a, **k)))
    settings = Settings(seed=5, book=BookSettings(path=book_path))
    eng = new_engine(settings, book_chain(from_settings(settings)))
    for line in ("name", "boardsize 19", "clear_board", "komi 6.5", "play B R16"):
        eng.handle_line(line)
    assert opened == []
    assert eng.handle_line("genmove W") == "= D4\n\n"
    assert opened == [{"readonly": True}]


def test_unknown_policy_is_refused(book_path):
    with pytest.raises(ValueError, match="policy"):
        BookChooser(book_path, policy="greedy")


def test_a_book_engine_answers_setup_commands_without_loading_the_book_stack(book_path):
    """Start-up budget (first answer <= 0.3 s): the chooser is built at start, the book opened later."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    code = ("import sys; from gtp_main import build_engine\n"
            "from fuseki.engine.config import BookSettings, Settings\n"
            f"s = Settings(book=BookSettings(path={book_path!r}))\n"
            "e = build_engine(s, verbose=True)\n"
            "for line in ('name', 'list_commands', 'boardsize 19', 'komi 6.5', 'clear_board'):\n"
            "    assert e.handle_line(line).startswith('=')\n"
            "print([m for m in ('numpy', 'sqlalchemy', 'fuseki.book.storage.store', 'fuseki.engine.core.board')\n"
            "       if m in sys.modules])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, cwd=root, timeout=60)
    assert done.stdout.decode().strip() == "[]", done.stderr
