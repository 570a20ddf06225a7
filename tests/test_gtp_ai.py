"""KataGo's stored judgement in the engine: ``--policy sound`` and the analysis commands' AI fields.

A real book (tests/bookgames.py) with values stored through ``ai_values.put`` (storage, no mock)
in its own ``ai_values`` table, or in the AI value cache file (``$FUSEKI_AI_CACHE``).  After
``R16`` white has D4 (4 games), D16 (2) and Q4 (1); the stored values say D4 loses 3.0 points and
D16 0.2 (KataGo's search of the position), Q4 2.5 (from the stored position after it, KaTrain's
way: the position's lead 0.0 minus the move's -2.5).  The engine never asks KataGo.
"""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine

from fuseki.book.chooser import BookChooser, from_settings
from fuseki.book.storage import ai_values
from fuseki.book.storage.ai_values import AiSettings
from fuseki.engine.config import BookSettings, Settings
from fuseki.engine.core.base import BLACK, WHITE
from fuseki.engine.core.board import Board
from fuseki.engine.core.coords import point_to_vertex, vertex_to_point
from fuseki.engine.gtp.commands import new_engine
from tests.bookgames import build_book
from tests.test_gtp_book import analyze, ok


def after(*moves):
    board = Board(19)
    for n, move in enumerate(moves):
        board.play(BLACK if n % 2 == 0 else WHITE, vertex_to_point(move, 19))
    return board


def put(path, moves, root, candidates=()):
    """Store values of the position after ``moves``; ``candidates``: (vertex, win rate, lead, loss)."""
    board = after(*moves)
    rows = [(vertex_to_point(m, 19), 5, w, lead, loss, 0.1) for m, w, lead, loss in candidates]
    db = create_engine(f"sqlite:///{path}")
    try:
        with db.begin() as conn:
            ai_values.create(conn)
            ai_values.put(conn, board.symmetric_keys(board.to_move), 19, AiSettings("japanese", 6.5, "net", 8),
                          root, rows)
    finally:
        db.dispose()


def store_judgement(path):
    put(path, ["R16"], (10, 0.5, 0.0), [("D4", 0.40, -3.0, 3.0), ("D16", 0.49, -0.2, 0.2),
                                        ("C3", 0.52, 0.0, 0.0)])  # C3: KataGo's, nobody played it
    put(path, ["R16", "Q4"], (5, 0.6, 2.5))  # the position after Q4, black to move: Q4 loses 2.5


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    folder = tmp_path_factory.mktemp("judged")
    path = build_book(folder / "book.sqlite", folder / "sgf")
    store_judgement(path)
    return path


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    folder = tmp_path_factory.mktemp("plain")
    return build_book(folder / "book.sqlite", folder / "sgf")


def engine_on(path, logged=None, max_loss=2.0, **book):
    settings = Settings(seed=2, max_loss=max_loss, book=BookSettings(path=str(path), **book))
    log = logged.append if logged is not None else (lambda text: None)
    return new_engine(settings, [from_settings(settings, verbose=logged is not None, log=log)], log=log)


def chosen(path, board, color, **options):
    point = BookChooser(path, seed=1, **options).choose(board, color)
    return None if point is None else point_to_vertex(point, 19)


# --- --policy sound ------------------------------------------------------------------------------

def test_a_popular_move_that_loses_3_points_is_never_played_under_sound(judged):
    assert chosen(judged, after("R16"), WHITE, policy="best") == "D4"  # the default policy plays it
    assert {chosen(judged, after("R16"), WHITE, policy="sound") for _ in range(5)} == {"D16"}
    assert chosen(judged, after("R16"), WHITE, policy="sound", max_loss=5.0) == "D4"
    # Q4's loss comes from the position after it: 2.5 > 1, so with D4 gone only D16 is left
    assert chosen(judged, after("R16"), WHITE, policy="sound", max_loss=1.0) == "D16"


def test_sound_over_gtp_says_what_it_skipped(judged):
    logged: list[str] = []
    eng = engine_on(judged, logged, policy="sound")
    ok(eng, "play B R16")
    assert ok(eng, "genmove W") == "D16"
    assert any("book move D4 skipped (AI loss 3.0 > 2 points)" in line for line in logged), logged
    assert any("book D16 (sound; 2 of 7 games" in line for line in logged), logged


def test_when_every_book_move_is_skipped_the_next_chooser_plays(judged):
    assert chosen(judged, after("R16"), WHITE, policy="sound", max_loss=0.1) is None
    logged: list[str] = []
    eng = engine_on(judged, logged, max_loss=0.1, policy="sound")
    ok(eng, "play B R16")
    move = ok(eng, "genmove W")
    assert move not in ("D4", "D16", "Q4", "pass", "resign")  # this book has no corner book: random
    assert any("out of book (no legal book move with >= 1 games and an AI loss of at most 0.1 points)"
               in line for line in logged), logged


def test_a_move_with_no_stored_values_is_kept(judged):
    # after R16 D4 nothing is stored: sound plays what best plays
    board = after("R16", "D4")
    assert chosen(judged, board, BLACK, policy="sound", max_loss=0.0) == chosen(judged, board, BLACK) == "Q3"


def test_without_stored_values_sound_plays_as_best(plain):
    sound, best = engine_on(plain, policy="sound"), engine_on(plain)
    for eng in (sound, best):
        ok(eng, "play B R16")
    moves = [[ok(eng, f"genmove {c}") for c in "WBW"] for eng in (sound, best)]
    assert moves[0] == moves[1] == ["D4", "Q3", "C17"]
    assert BookChooser(plain).ai_stores() is None  # no ai_values table: nothing more is read


def test_the_cache_files_values_count_too(plain, tmp_path, monkeypatch):
    cache = tmp_path / "ai-cache.sqlite"
    store_judgement(cache)
    monkeypatch.setenv("FUSEKI_AI_CACHE", str(cache))
    eng = engine_on(plain, policy="sound")
    ok(eng, "play B R16")
    assert ok(eng, "genmove W") == "D16"


# --- the analysis commands -------------------------------------------------------------------------

def test_kata_analyze_gives_the_stored_score_lead_beside_the_human_figures(judged):
    eng = engine_on(judged)
    ok(eng, "play B R16")
    entries, _ = analyze(eng, "kata-analyze W 10")
    assert [e["move"] for e in entries] == ["D4", "D16"]  # not C3: KataGo's, nobody played it
    d4, d16 = entries
    assert (d4["scoreLead"], d4["scoreMean"], d16["scoreLead"]) == ("-3.000000", "-3.000000", "-0.200000")
    assert d4["visits"] == "4" and d4["winrate"] == "0.333333"  # the human figures, as documented
    lz, _ = analyze(eng, "lz-analyze W 10")
    assert all("scoreLead" not in e for e in lz)  # Leela Zero's format has no score
    assert ok(eng, "book_moves") == "D4 D16 Q4"  # Fuego's plain list


def test_book_gfx_gives_each_letters_ai_loss(judged):
    eng = engine_on(judged)
    ok(eng, "play B R16")
    text = [line for line in ok(eng, "book-gfx").split("\n") if line.startswith("TEXT")]
    assert text == ["TEXT book: 7 games; A 4 25% AI loss 3.0, B 2 100% AI loss 0.2, C 1 100% AI loss 2.5"]


def test_positions_without_values_show_no_ai_fields(judged, plain):
    for path, moves in ((judged, ["R16", "D4"]), (plain, ["R16"])):
        eng = engine_on(path)
        for n, move in enumerate(moves):
            ok(eng, f"play {'BW'[n % 2]} {move}")
        entries, _ = analyze(eng, "kata-analyze 10")
        assert entries and all("scoreLead" not in e for e in entries)
        assert "AI loss" not in ok(eng, "book-gfx")


# --- the settings ----------------------------------------------------------------------------------

def test_the_flag_and_the_settings(tmp_path):
    from fuseki.engine import config
    from fuseki.engine.gtp.cli import build_parser, settings_from

    settings = settings_from(build_parser().parse_args(["--policy", "sound", "--max-loss", "1.5"]))
    assert (settings.book.policy, settings.max_loss, settings.ai_rules, settings.ai_komi) == \
        ("sound", 1.5, "japanese", 6.5)
    for text, key in (("[ai]\nmax_loss = -1\n", "ai.max_loss"), ("[ai]\nkomi = 6.3\n", "ai.komi")):
        path = tmp_path / "bad.toml"
        path.write_text(text)
        with pytest.raises(config.ConfigError, match=key):
            config.load(path)
