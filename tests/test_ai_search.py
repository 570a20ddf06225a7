"""``fuseki search --ai``: KataGo's columns beside the human next moves, through the cache.

KataGo here is the fake of tests/services.py in its ``values`` mode (its candidates are the
first free points of D4, Q16, K10, C3, R17, leads 3, 2, 1): what is tested is the command's
plumbing and table, the cache making a second search a lookup, and a missing KataGo one line.
"""

from __future__ import annotations

import shlex
import sys

import pytest

from fuseki.book.ui.fuseki_command import main
from fuseki.engine.core import base, coords
from fuseki.engine.core.base import BLACK, WHITE

from services import FAKE_KATAGO

PD, DP, DD, PP, QC = (base.sgf_to_point(p, 19) for p in ("pd", "dp", "dd", "pp", "qc"))


@pytest.fixture
def book(ai_test_book):
    games = [[(BLACK, PD), (WHITE, DP), (BLACK, PP)], [(BLACK, PD), (WHITE, DP), (BLACK, DD)],
             [(BLACK, PD), (WHITE, DP), (BLACK, PP)], [(BLACK, PD), (WHITE, DD), (BLACK, QC)]]
    return ai_test_book(games)


@pytest.fixture
def fake_katago(tmp_path):
    script = tmp_path / "fake_katago.py"
    script.write_text(FAKE_KATAGO)
    return shlex.join([sys.executable, str(script), "values"])


def test_search_ai_puts_katagos_values_beside_the_human_moves(book, fake_katago, capsys):
    assert main(["search", "--moves", "pd dp", "--book", book, "--ai", "--katago", fake_katago]) == 0
    captured = capsys.readouterr()
    assert "asking KataGo" in captured.err
    lines = captured.out.splitlines()
    head = lines.index("    move   games  win % |  AI win %   lead   loss visits")
    rows = lines[head + 1:]
    # the human move (Q4 and D16 are one point under the position's symmetry; the repeated
    # game counts once) with KataGo's columns: not a fake candidate, so dashes; then the
    # fake's candidates (D4 and Q16 hold stones): K10, C3, R17, marked AI, loss against K10
    # (the fake answers a forced query with its usual candidates: D16 stays without values, and says why)
    assert rows[0].split()[:4] == ["a", "-", "D16", "2"] and rows[0].split()[-8:] == \
        ["-", "-", "-", "-", "no", "value:", "not", "evaluated", "yet"][-8:]
    ai_rows = [r.split() for r in rows if r.startswith("AI ")]
    assert [(r[1], r[-4], r[-3], r[-2:]) for r in ai_rows] == [  # under MARK_VISITS: "AI, shallow"
        ("K10", "0.0", "10", ["AI,", "shallow"]), ("C3", "1.0", "9", ["AI,", "shallow"]),
        ("R17", "2.0", "8", ["AI,", "shallow"])]
    assert "japanese rules, komi 6.5, 30 visits" in captured.out
    assert rows[-1] == "total 2 games"
    # a second look, in another orientation, is a lookup: no KataGo named, none found
    # (D16 is asked again with the move forced: that KataGo cannot start, the cell says so)
    assert main(["search", "--moves", "dp pd", "--book", book, "--ai", "--katago", "/nowhere/katago"]) == 0
    again = capsys.readouterr()
    assert "for this position" not in again.err and "AI  " in again.out
    assert "no value: KataGo failed: cannot start KataGo" in again.out


def test_search_ai_without_katago_is_one_line(book, capsys):
    assert main(["search", "--moves", "pd", "--book", book, "--ai", "--katago", "/nowhere/katago analysis"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("asking KataGo")  # the progress line, then one line of error
    assert len(err) == 2 and "cannot start KataGo" in err[1] and "docs/katago.md" in err[1]


def test_points_that_round_to_zero_print_without_a_sign():
    from fuseki.book.ui.present.ai_text import points

    assert [points(v) for v in (-0.04, 0.0, 0.04, -1.26, 2.0)] == ["   0.0", "   0.0", "   0.0", "  -1.3", "   2.0"]


def test_search_ai_with_nothing_stored_and_no_katago_answers_the_human_moves_and_says_why(book, capsys, monkeypatch):
    from fuseki.book.analysis import katago
    from fuseki.book.ui.present.ai_text import NO_VALUES

    monkeypatch.setattr(katago, "find_command", lambda configured=None: None)  # none named, none installed
    assert main(["search", "--moves", "pd", "--book", book, "--ai"]) == 0
    out = capsys.readouterr().out
    plain = main(["search", "--moves", "pd", "--book", book]) == 0 and capsys.readouterr().out
    assert out == plain + NO_VALUES + "\n"  # every human row, then the line saying why there are no AI columns
    assert "total " in plain and ".ci/katago" in NO_VALUES


def test_search_ai_without_katago_shows_stored_values_and_the_position_after_a_move(book, capsys, monkeypatch,
                                                                                    tmp_path):
    """No KataGo found: the stored values (any network's, the most visits) answer; D16, which
    the stored search did not visit, gets the values of the position after it (marked *)."""
    from sqlalchemy import create_engine

    from fuseki.book.analysis import katago
    from fuseki.book.formats.positions import board_after_moves
    from fuseki.book.queries import ai_values
    from fuseki.book.queries.ai_values import AiSettings

    monkeypatch.setattr(katago, "find_command", lambda configured=None: None)
    db = create_engine(f"sqlite:///{tmp_path / 'ai-cache.sqlite'}")
    with db.begin() as conn:
        ai_values.create(conn)
        for moves, visits, root, candidates in (("pd", 1, (1, 0.5, 0.0), []),
                                                ("pd", 16, (17, 0.52, 0.4), [(DP, 9, 0.53, 0.5, 0.0, 0.4)]),
                                                ("pd,dd", 2, (2, 0.7, -3.1), [])):
            board = board_after_moves(moves.split(","), 19)
            ai_values.put(conn, board.symmetric_keys(board.to_move), 19, AiSettings("japanese", 6.5, "shipped-net",
                          visits), root, candidates)
    db.dispose()
    assert main(["search", "--moves", "pd", "--book", book, "--ai"]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[2]: line.split() for line in out.splitlines() if line[:1] in "ab"}
    assert rows["D4"][-4:] == ["53.0%", "0.5", "0.0", "9"]  # KataGo's search visited it
    # 1 - 0.7; -(-3.1); better than D4, the best evaluated: loss 0, not -2.6; the child's 2 visits
    assert rows["D16"][-4:] == ["30.0%", "3.1", "0.0*", "2"]
    assert "shallow values: 17 visits, under the 100 a mark needs" in out
    assert "KataGo: shipped-net, japanese rules, komi 6.5, 17 visits" in out


def test_ai_copy_brings_values_computed_elsewhere_into_a_statistics_books_file(book, capsys, monkeypatch,
                                                                             tmp_path):
    """How the built-in book ships its values: an annotate run on a statistics book writes them
    to the cache file; ``fuseki ai copy`` puts them into the book's own file, where ``search
    --ai`` finds them with no cache and no KataGo.  A second copy adds nothing."""
    from sqlalchemy import create_engine

    from fuseki.book.analysis import katago
    from fuseki.book.builders.statbook import write_statistics
    from fuseki.book.formats.positions import board_after_moves
    from fuseki.book.queries import ai_values
    from fuseki.book.queries.ai_values import AiSettings
    from fuseki.book.storage.store import Book

    monkeypatch.setattr(katago, "find_command", lambda configured=None: None)
    stats = str(tmp_path / "stats.sqlite")
    with Book.open(book, readonly=True) as games:
        write_statistics(games, stats, min_games=1)
    elsewhere = tmp_path / "computed-elsewhere.sqlite"
    db = create_engine(f"sqlite:///{elsewhere}")
    with db.begin() as conn:
        ai_values.create(conn)
        for moves, root, candidates in (("pd", (9, 0.52, 0.4), [(DP, 5, 0.53, 0.5, 0.0, 0.4)]),
                                        ("pd,dp", (3, 0.45, -0.7), [])):
            board = board_after_moves(moves.split(","), 19)
            ai_values.put(conn, board.symmetric_keys(board.to_move), 19,
                          AiSettings("japanese", 6.5, "gpu-net", 8), root, candidates)
    db.dispose()
    capsys.readouterr()
    assert main(["ai", "copy", str(elsewhere), "--into", stats]) == 0
    assert "2 positions' values read" in (err := capsys.readouterr().err) and "2 added" in err
    assert main(["ai", "copy", str(elsewhere), "--into", stats]) == 0
    assert "0 added" in capsys.readouterr().err
    monkeypatch.setenv("FUSEKI_AI_CACHE", str(tmp_path / "no-cache.sqlite"))
    assert main(["search", "--moves", "dp", "--book", stats, "--ai"]) == 0  # the first move mirrored
    out = capsys.readouterr().out
    rows = {line.split()[2]: line.split() for line in out.splitlines() if line[:1] in "ab"}
    turn = next(t for t in range(8) if coords.transform_point(t, PD, 19) == DP)  # how the asked position lies
    searched = base.point_to_vertex(coords.transform_point(turn, DP, 19), 19)
    assert rows[searched][-4:] == ["53.0%", "0.5", "0.0", "5"], out
    assert "KataGo: gpu-net, japanese rules, komi 6.5, 9 visits" in out
    assert not (tmp_path / "no-cache.sqlite").exists()
    assert main(["ai", "copy", str(tmp_path / "nothing.sqlite"), "--into", stats]) == 1


def test_visits_under_one_is_one_line(book, capsys):
    assert main(["search", "--moves", "pd", "--book", book, "--ai", "--visits", "0", "--katago", "/nowhere/k"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--visits 0: at least 1" in err[0]
