"""KataGo's stored judgement in the engine: ``--policy sound`` and the analysis commands' AI fields.

A real book (tests/bookgames.py) with values stored through ``ai_values.put`` (storage, no mock)
in its own ``ai_values`` table, or in the AI value cache file (``$FUSEKI_AI_CACHE``).  After
``R16`` white has D4 (4 games), D16 (2) and Q4 (1); the stored values say D4 loses 3.0 points and
D16 0.2 (KataGo's search of the position), Q4 2.5 (from the stored position after it, KaTrain's
way: the position's lead 0.0 minus the move's -2.5).  The engine never asks KataGo.
"""

from __future__ import annotations

import inspect

import pytest
from sqlalchemy import create_engine

from fuseki.book.play.book_chooser import BookChooser, from_settings
from fuseki.book.queries import ai_values
from fuseki.book.queries.ai_values import AiSettings
from fuseki.engine.config import BookSettings, Settings
from fuseki.engine.core.base import BLACK, WHITE, point_to_vertex, vertex_to_point
from fuseki.engine.core.board import Board
from fuseki.engine.core.coords import transform_point
from fuseki.engine.gtp.commands import new_engine

from bookgames import build_book
from bookgtp import analyze, ok
from gtpsession import book_chain


def after(*moves):
    board = Board(19)
    for n, move in enumerate(moves):
        board.play(BLACK if n % 2 == 0 else WHITE, vertex_to_point(move, 19))
    return board


DEEP = 400  # the built-in book's visits: deep enough for KataGo's figures (MARK_VISITS, 100)


def put(path, moves, root, candidates=(), komi=6.5, rules="japanese", pvs=None, move_visits=DEEP):
    """Store values of the position after ``moves``: ``root`` (visits, win rate, lead), searched at
    its visits; ``candidates``: (vertex, win rate, lead, loss[, visits]), of ``move_visits`` visits
    unless they say;
    ``pvs``: each candidate's line as vertices (stored only where ``ai_values.put`` keeps lines)."""
    board = after(*moves)
    rows = [(vertex_to_point(m, 19), *(visits or (move_visits,)), w, lead, loss, 0.1)
            for m, w, lead, loss, *visits in candidates]
    lines = {} if pvs is None else {"pvs": [[vertex_to_point(v, 19) for v in line] for line in pvs]}
    db = create_engine(f"sqlite:///{path}")
    try:
        with db.begin() as conn:
            ai_values.create(conn)
            ai_values.put(conn, board.symmetric_keys(board.to_move), 19, AiSettings(rules, komi, "net", root[0]),
                          root, rows, **lines)
    finally:
        db.dispose()


def store_judgement(path):
    put(path, ["R16"], (DEEP, 0.5, 0.0), [("D4", 0.40, -3.0, 3.0), ("D16", 0.49, -0.2, 0.2),
                                        ("C3", 0.52, 0.0, 0.0)])  # C3: KataGo's, nobody played it
    put(path, ["R16", "Q4"], (DEEP, 0.6, 2.5))  # the position after Q4, black to move: Q4 loses 2.5


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
    eng = new_engine(settings, book_chain(from_settings(settings, verbose=logged is not None, log=log)), log=log)
    if logged is not None:
        eng.game.log_source = log  # --verbose: each choice's comment and source
    return eng


def chosen(path, board, color, **options):
    choice = BookChooser(path, seed=1, **options).choose(board, color)
    return None if choice is None else point_to_vertex(choice.move, 19)


# --- --policy sound ------------------------------------------------------------------------------

def test_a_popular_move_that_loses_3_points_is_never_played_under_sound(judged):
    assert chosen(judged, after("R16"), WHITE, policy="best") == "D4"  # the most played move plays it
    assert {chosen(judged, after("R16"), WHITE, policy="sound") for _ in range(5)} == {"D16"}
    # 2.8 points under the best book move (D16) is far more than the noise, whatever max_loss says
    assert chosen(judged, after("R16"), WHITE, policy="sound", max_loss=5.0) == "D16"
    # Q4's lead comes from the position after it: -2.5, so with D4 gone only D16 is left
    assert chosen(judged, after("R16"), WHITE, policy="sound", max_loss=1.0) == "D16"


def test_sound_over_gtp_says_what_it_skipped(judged):
    logged: list[str] = []
    eng = engine_on(judged, logged, policy="sound")
    ok(eng, "play B R16")
    assert ok(eng, "genmove W") == "D16"
    assert any("book move D4 skipped (AI lead -3.0, under the best book move's -0.2 by more than the noise)"
               in line for line in logged), logged
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

def test_book_gfx_gives_each_letters_ai_loss(judged):
    eng = engine_on(judged)
    ok(eng, "play B R16")
    ok(eng, "komi 6.5")  # the komi the values are stored for
    text = [line for line in ok(eng, "book-gfx").split("\n") if line.startswith("TEXT")]
    assert text == ["TEXT book: 7 games; A 4 25% AI loss 3.0, B 2 100% AI loss 0.2, C 1 100% AI loss 2.5"]
    ok(eng, "komi 7.5")  # none stored for 7.5
    assert "AI loss" not in ok(eng, "book-gfx")


def test_positions_without_values_show_no_ai_fields(judged, plain):
    for path, moves in ((judged, ["R16", "D4"]), (plain, ["R16"])):
        eng = engine_on(path)
        ok(eng, "komi 6.5")
        for n, move in enumerate(moves):
            ok(eng, f"play {'BW'[n % 2]} {move}")
        entries, _ = analyze(eng, "kata-analyze 10")
        assert entries and all("scoreLead" not in e for e in entries)
        assert "AI loss" not in ok(eng, "book-gfx")


# --- the analysis lines in KataGo's voice (docs/clients.md) ---------------------------------------

def expected_entries(book_moves, total, judged, kata=True):
    """The entries the documentation promises, written out from the stored rows: ``book_moves``
    (vertex, games), ``judged``: vertex -> (win rate, lead, line) for the mover; moves without
    values are left out."""
    out = []
    for vertex, games in book_moves:
        if vertex not in judged:
            continue
        winrate, lead, line = judged[vertex]
        if kata:
            fields = {"move": vertex, "visits": str(games), "winrate": f"{winrate:.6f}",
                      "scoreMean": f"{lead:.6f}", "scoreLead": f"{lead:.6f}", "prior": f"{games / total:.6f}",
                      "lcb": f"{winrate:.6f}", "order": str(len(out))}
        else:
            fields = {"move": vertex, "visits": str(games), "winrate": str(round(winrate * 10000)),
                      "prior": str(round(games / total * 10000)), "lcb": str(round(winrate * 10000)),
                      "order": str(len(out))}
        out.append({**fields, "pv": list(line)})
    return out


@pytest.fixture(scope="module")
def two_komis(tmp_path_factory):
    """After R16: at komi 6.5 D4 and D16 from KataGo's search, Q4 from the position after it
    (whose best reply is C16); no line stored, so D16's is the best reply after it (Q3) and D4's
    the move alone (nothing stored after it); at 7.5 other numbers, D4 only; for chinese rules
    nothing."""
    folder = tmp_path_factory.mktemp("two_komis")
    path = build_book(folder / "book.sqlite", folder / "sgf")
    put(path, ["R16"], (DEEP, 0.5, 0.0), [("D4", 0.40, -3.0, 3.0), ("D16", 0.49, -0.2, 0.2),
                                        ("C3", 0.52, 0.1, -0.1)])
    put(path, ["R16", "Q4"], (DEEP, 0.6, 2.5), [("C16", 0.6, 2.5, 0.0)])
    put(path, ["R16", "D16"], (DEEP, 0.51, 0.2), [("Q3", 0.51, 0.2, 0.0)])  # D16's line: no line stored with it
    put(path, ["R16"], (DEEP, 0.45, -0.5), [("D4", 0.35, -4.0, 3.5)], komi=7.5)
    return path


SEVEN_PLAYED = [("D4", 4), ("D16", 2), ("Q4", 1)]  # after R16, analysis_min_games 1


def test_kata_analyze_speaks_for_katago_with_the_games_as_visits(two_komis):
    eng = engine_on(two_komis, analysis_min_games=1)
    ok(eng, "komi 6.5")
    ok(eng, "play B R16")
    entries, _ = analyze(eng, "kata-analyze W 10")
    judged = {"D4": (0.40, -3.0, ["D4"]), "D16": (0.49, -0.2, ["D16", "Q3"]),
              "Q4": (1 - 0.6, -2.5, ["Q4", "C16"])}  # Q4: the position after it, its best reply as the line
    assert entries == expected_entries(SEVEN_PLAYED, 7, judged)
    lz, _ = analyze(eng, "lz-analyze W 10")
    assert lz == expected_entries(SEVEN_PLAYED, 7, judged, kata=False)
    assert ok(eng, "book_moves") == "D4 D16 Q4"  # Fuego's plain list


def test_the_values_follow_the_games_komi_and_rules(two_komis):
    eng = engine_on(two_komis, analysis_min_games=1)
    ok(eng, "play B R16")
    ok(eng, "komi 7.5")
    entries, _ = analyze(eng, "kata-analyze W 10")
    # at 7.5 only D4 has values: KataGo's voice lists it alone, with its 7.5 figures
    assert entries == expected_entries([("D4", 4)], 4, {"D4": (0.35, -4.0, ["D4"])})
    ok(eng, "komi 6.5")
    entries, _ = analyze(eng, "kata-analyze W 10")
    assert [(e["move"], e["scoreLead"]) for e in entries] == [("D4", "-3.000000"), ("D16", "-0.200000"),
                                                             ("Q4", "-2.500000")]
    for komi, rules in ((5.5, None), (6.25, None), (6.5, "chinese")):  # nothing stored for these
        ok(eng, f"komi {komi}")
        if rules:
            ok(eng, f"kgs-rules {rules}")
        entries, _ = analyze(eng, "kata-analyze W 10")
        assert [e["move"] for e in entries] == ["D4", "D16", "Q4"]
        assert all("scoreLead" not in e and "scoreMean" not in e for e in entries)
        # the players' figures: 1 of 4 games won by D4's player, corrected towards 50% (module doc)
        assert entries[0]["winrate"] == f"{(1 + 1) / (4 + 2):.6f}"


def test_the_line_of_a_move_follows_every_orientation(two_komis):
    """The game played in each of the 8 orientations: the entries, their figures and lines are
    the stored ones turned the same way (Q4's line: the position after it, stored once)."""
    for t in range(8):
        def turn(vertex, t=t):
            return point_to_vertex(transform_point(t, vertex_to_point(vertex, 19), 19), 19)

        eng = engine_on(two_komis, analysis_min_games=1)
        ok(eng, "komi 6.5")
        ok(eng, f"play B {turn('R16')}")
        entries, _ = analyze(eng, "kata-analyze W 10")
        judged = {turn("D4"): (0.40, -3.0, [turn("D4")]), turn("D16"): (0.49, -0.2, [turn("D16"), turn("Q3")]),
                  turn("Q4"): (1 - 0.6, -2.5, [turn("Q4"), turn("C16")])}
        played = [(turn(v), games) for v, games in SEVEN_PLAYED]
        assert entries == expected_entries(played, 7, judged), t


def test_an_orbits_points_show_the_line_turned_by_the_boards_own_symmetry(tmp_path):
    """On the empty board R16 stands for its 8 points; the stored position after R16 (best reply
    D4) gives R16's line, and each other point's is that line turned by the symmetry taking R16
    there (the position after it is the same one)."""
    path = build_book(tmp_path / "book.sqlite", tmp_path / "sgf")
    put(path, [], (DEEP, 0.5, 0.0))  # the empty board: values stored, no candidate people played
    put(path, ["R16"], (DEEP, 0.5, 0.0), [("D4", 0.5, 0.0, 0.0)])
    eng = engine_on(path)
    ok(eng, "komi 6.5")
    entries, _ = analyze(eng, "kata-analyze B 10")
    lines = {e["move"]: e["pv"] for e in entries}
    r16 = vertex_to_point("R16", 19)
    for t in range(8):
        point = transform_point(t, r16, 19)
        expected = [point_to_vertex(point, 19), point_to_vertex(transform_point(t, vertex_to_point("D4", 19), 19), 19)]
        assert lines[point_to_vertex(point, 19)] == expected, t
    assert set(lines) == {point_to_vertex(transform_point(t, r16, 19), 19) for t in range(8)}  # star points: no value


STORES_LINES = "pvs" in inspect.signature(ai_values.put).parameters


@pytest.mark.skipif(not STORES_LINES, reason="ai_values.put keeps no lines (pvs) in this tree")
def test_a_stored_line_follows_every_orientation(tmp_path):
    path = build_book(tmp_path / "book.sqlite", tmp_path / "sgf")
    line = ["D4", "Q3", "C16", "pass"]
    put(path, ["R16"], (DEEP, 0.5, 0.0), [("D4", 0.40, -3.0, 3.0), ("D16", 0.49, -0.2, 0.2)],
        pvs=[line, ["D16", "C3"]])
    for t in range(8):
        def turn(vertex, t=t):
            if vertex == "pass":
                return vertex
            return point_to_vertex(transform_point(t, vertex_to_point(vertex, 19), 19), 19)

        eng = engine_on(path)
        ok(eng, "komi 6.5")
        ok(eng, f"play B {turn('R16')}")
        entries, _ = analyze(eng, "kata-analyze W 10")
        assert [e["pv"] for e in entries] == [[turn(v) for v in line], [turn("D16"), turn("C3")]], t


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


# --- only deep values speak for KataGo (MARK_VISITS: the move's own and the position's search) ----

def test_a_shallow_value_gives_the_players_figures(tmp_path):
    """A 3-visit value is noise: KataGo's figures come only from values of at least MARK_VISITS
    (100) visits, the move's own and the position's search; shallower ones leave the players'."""
    from fuseki.book.analysis.ai import MARK_VISITS

    players = [("D4", f"{(1 + 1) / (4 + 2):.6f}"), ("D16", f"{(2 + 1) / (2 + 2):.6f}"),
               ("Q4", f"{(1 + 1) / (1 + 2):.6f}")]
    cases = (((3, 0.5, 0.0), 3), ((3, 0.5, 0.0), DEEP), ((DEEP, 0.5, 0.0), MARK_VISITS - 1))
    for n, (root, move_visits) in enumerate(cases):  # the position's search, or the moves', too shallow
        path = build_book(tmp_path / f"book{n}.sqlite", tmp_path / f"sgf{n}")
        put(path, ["R16"], root, [("D4", 0.40, -3.0, 3.0), ("D16", 0.49, -0.2, 0.2)], move_visits=move_visits)
        eng = engine_on(path, analysis_min_games=1)
        ok(eng, "komi 6.5")
        ok(eng, "play B R16")
        entries, _ = analyze(eng, "kata-analyze W 10")
        assert [(e["move"], e["winrate"]) for e in entries] == players, (root, move_visits)
        assert all("scoreLead" not in e for e in entries)
        assert "AI loss" not in ok(eng, "book-gfx")
    # a deep position with one shallow move: the deep one speaks for KataGo, the shallow one is
    # left out as a move with no value (beside KataGo's figures its players' win rate would read as KataGo's)
    path = build_book(tmp_path / "mixed.sqlite", tmp_path / "sgf-mixed")
    put(path, ["R16"], (DEEP, 0.5, 0.0), [("D4", 0.40, -3.0, 3.0, 3), ("D16", 0.49, -0.2, 0.2, MARK_VISITS)])
    eng = engine_on(path, analysis_min_games=1)
    ok(eng, "komi 6.5")
    ok(eng, "play B R16")
    entries, _ = analyze(eng, "kata-analyze W 10")
    assert [(e["move"], e["winrate"], e["scoreLead"]) for e in entries] == [("D16", "0.490000", "-0.200000")]
    text = [line for line in ok(eng, "book-gfx").split("\n") if line.startswith("TEXT")]
    assert text == ["TEXT book: 7 games; A 4 25%, B 2 100% AI loss 0.0, C 1 100%"]  # no loss from 3 visits


# --- the built-in book: its values are for japanese rules at komi 6.5, 400 visits ------------------

@pytest.fixture(scope="module")
def builtin_book():
    from fuseki.book.model import builtin

    if not builtin.available():
        pytest.skip("no built-in book in this checkout")
    return builtin.PATH


def test_no_komi_and_komi_7_5_give_the_players_figures_and_say_why_6_5_gives_katagos(builtin_book):
    """The engine's komi is 7.5 until the controller sends ``komi`` (docs/clients.md): nothing is
    stored for it, so the players' figures, and ``--verbose`` says so once; at 6.5, KataGo's."""
    from fuseki.book.analysis.ai import MARK_VISITS

    logged: list[str] = []
    eng = engine_on(builtin_book, logged)
    said = ("fuseki: no KataGo values stored for komi 7.5 and japanese rules (the book has them for komi 6.5 "
            "and japanese rules): the analysis lines give the players' figures; send komi 6.5 for KataGo's")
    for komi in (None, "7.5"):
        if komi:
            ok(eng, f"komi {komi}")
        entries, _ = analyze(eng, "kata-analyze B 10 maxmoves 8")
        assert len(entries) == 8 and all("scoreLead" not in e for e in entries)
        assert entries[0]["lcb"] != entries[0]["winrate"]  # the Wilson bound of the players' win rate
        assert logged.count(said) == 1, logged  # said once, not at every command
    ok(eng, "komi 6.5")
    entries, _ = analyze(eng, "kata-analyze B 10 maxmoves 8")
    assert len(entries) == 8 and all("scoreLead" in e and e["lcb"] == e["winrate"] for e in entries)
    board = Board(19)
    moves = eng.game.advisor.next_moves(board, BLACK).moves[:2]
    assert all(line.deep and line.visits >= MARK_VISITS
               for line in eng.game.advisor.ai_lines(board, BLACK, moves, komi=6.5))
    assert logged.count(said) == 1


def test_the_corner_books_counts_never_exceed_the_books_games(builtin_book):
    """Out of the whole-board book, the corner book answers; the built-in book's corner book counts
    times, four corners a game (the empty corner's 4-4 point: 730,043 times in 369,210 games): its
    games are estimated within the book's games (a corner book that counts games: test_corner_games)."""
    from fuseki.book.storage.store import Book

    with Book.open(str(builtin_book), readonly=True) as book:
        games = book.stats().games
    eng = engine_on(builtin_book)
    for n, move in enumerate(["K10", "K9", "J10", "L10"]):  # the centre: out of the whole-board book
        ok(eng, f"play {'BW'[n % 2]} {move}")
    gfx = ok(eng, "book-gfx")
    assert "TEXT corner book, games: " in gfx
    counts = [int(word) for word in gfx.split("games: ")[1].replace(",", "").split()[1::3]]
    assert counts and max(counts) <= games
    for command in ("kata-analyze B 10", "lz-analyze B 10"):
        entries, _ = analyze(eng, command)
        assert entries and max(int(e["visits"]) for e in entries) <= games, command
    assert max(int(word) for word in ok(eng, "book-counts").split()[1::2]) <= games
