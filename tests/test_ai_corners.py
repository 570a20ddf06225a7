"""KataGo's values beside the corner book's continuations and a whole-board pattern's
(``fuseki corners --ai``, ``fuseki pattern --ai``, the shell with ``ai on``, ``/api/corners``).

The book is conftest's corner_ways_book, test_corner_ways_in's five games; the values are stored with ``ai_values.put``
(storage, as KataGo's answers are) in the cache file ``$FUSEKI_AI_CACHE``, in an orientation
other than the one asked, and no KataGo is found: what is tested is that each continuation
gets the values of its own point, KataGo's search's when it visited it, else the position
after it's (``*``), and that a whole-board pattern shows what ``search --ai`` shows.
"""

from __future__ import annotations

import io

import pytest
from sqlalchemy import create_engine

from fuseki.book.analysis.ai import WHOLE_BOARD_ONLY
from fuseki.book.formats.positions import board_after_moves
from fuseki.book.queries import ai_values
from fuseki.book.queries.ai_values import AiSettings
from fuseki.book.ui.fuseki_command import main
from fuseki.engine.core import base, coords

from cornerways import ASKED
from webbook import ok, put_values


@pytest.fixture(scope="module")
def book_path(corner_ways_book):  # the name make_app asks for
    return corner_ways_book


TURN = 5  # the orientation the values are stored in (not the one asked)


def turned(vertices: str, turn: int = TURN) -> list[str]:
    return [base.point_to_vertex(coords.transform_point(turn, base.vertex_to_point(v, 19), 19), 19)
            for v in vertices.split()]


def store(path, moves: str, root, candidates, turn: int = TURN):
    """Values of the position after ``moves`` (vertices), stored turned by ``turn``;
    ``candidates``: (vertex, win rate, lead, loss) of KataGo's search."""
    board = board_after_moves(turned(moves, turn), 19)
    rows = [(base.vertex_to_point(turned(v, turn)[0], 19), 10, w, lead, loss, 0.2)
            for v, w, lead, loss in candidates]
    db = create_engine(f"sqlite:///{path}")
    with db.begin() as conn:
        ai_values.create(conn)
        ai_values.put(conn, board.symmetric_keys(board.to_move), 19, AiSettings("japanese", 6.5, "test-net", 20),
                      root, rows)
    db.dispose()


@pytest.fixture
def stored(tmp_path, monkeypatch):
    from fuseki.book.analysis import katago

    monkeypatch.setattr(katago, "find_command", lambda configured=None: None)  # none named, none installed
    cache = tmp_path / "ai-cache.sqlite"
    monkeypatch.setenv("FUSEKI_AI_CACHE", str(cache))
    assert coords.transform_point(TURN, base.vertex_to_point("Q14", 19), 19) != base.vertex_to_point("Q14", 19)
    store(cache, ASKED, (20, 0.55, 1.0), [("Q14", 0.56, 1.2, 0.0), ("D10", 0.5, 0.9, 0.3)])
    store(cache, ASKED + " R14", (3, 0.35, -0.4), [], turn=2)  # after R14, White to play
    store(cache, "Q16 D4 D16", (20, 0.47, -0.3), [("O17", 0.46, -0.5, 0.2), ("R17", 0.48, -0.3, 0.0)])
    return cache


def rows_of(out: str) -> dict[str, str]:
    """vertex -> the AI columns (from ``|``) of each lettered row."""
    return {line.split()[2]: line[line.index("|"):] for line in out.splitlines()
            if line[:4] in {f"{c} - " for c in "abcdefgh"} and "|" in line}


def test_corners_ai_shows_the_search_and_the_position_after_a_move(book_path, stored, capsys):  # noqa: F811
    assert main(["corners", "--book", book_path, "--moves", ASKED, "--ai"]) == 0
    out = capsys.readouterr().out
    top_right = out.split("\n\n")[1]
    rows = rows_of(top_right)
    assert "a - Q14         3  100.0% |" in top_right
    assert rows["Q14"].split() == ["|", "56.0%", "1.2", "0.0", "10"]  # KataGo's search visited it, 10 visits
    # 1 - 0.35; -(-0.4); against Q14's 1.2, the best evaluated; the child's 3 visits
    assert rows["R14"].split() == ["|", "65.0%", "0.4", "0.8*", "3"]
    assert "tenuki 0" in top_right  # no single point: no values
    assert out.rstrip().splitlines()[-1].startswith("KataGo: test-net, japanese rules, komi 6.5, 20 visits")
    assert rows_of(out.split("bottom right corner")[1])["Q4"].split() == \
        ["|", "-", "-", "-", "-", "no", "value:", "no", "KataGo"]


def test_a_whole_board_pattern_shows_what_search_shows(book_path, stored, capsys):  # noqa: F811
    assert main(["search", "--moves", "Q16 D4 D16", "--book", book_path, "--ai"]) == 0
    searched = rows_of(capsys.readouterr().out)
    assert main(["pattern", "--moves", "Q16 D4 D16", "--region", "A1:T19", "--book", book_path, "--ai"]) == 0
    out = capsys.readouterr().out
    assert rows_of(out)["O17"].split()[:5] == searched["O17"].split() == ["|", "46.0%", "-0.5", "0.2", "10"]
    head = next(line for line in out.splitlines() if line.startswith("    move  colour"))
    rows = [line for line in out.splitlines() if line[:4] in {f"{c} - " for c in "abcdefgh"}]
    assert rows and all(line.index("|") == head.index("|") for line in rows)  # the AI columns under their head
    assert "KataGo: test-net, japanese rules, komi 6.5, 20 visits" in out


def test_a_smaller_pattern_says_so_once(book_path, stored, capsys):  # noqa: F811
    assert main(["pattern", "--moves", "Q16 D4 D16", "--region", "K10:T19", "--book", book_path, "--ai"]) == 0
    out = capsys.readouterr().out
    assert out.count(WHOLE_BOARD_ONLY) == 1 and "AI win %" not in out and "KataGo:" not in out


def test_the_shell_with_ai_on(book_path, stored):  # noqa: F811
    from fuseki.book.storage.store import Book
    from fuseki.book.ui.shell import BookShell

    book = Book.open(book_path, readonly=True)
    try:
        shell = BookShell(book, book_path, stdout=io.StringIO())
        for vertex in ASKED.split():
            shell.onecmd(f"play {vertex}")
        shell.onecmd("ai on")
        shell.onecmd("corners")
        assert rows_of(shell.stdout.getvalue())["R14"].split() == ["|", "65.0%", "0.4", "0.8*", "3"]
        shell.onecmd("undo 4")
        shell.onecmd("play Q16 D4 D16")
        shell.onecmd("pattern A1:T19")
        assert rows_of(shell.stdout.getvalue())["O17"].split()[:4] == ["|", "46.0%", "-0.5", "0.2"]
        shell.onecmd("play O17")
        shell.onecmd("corners")  # nothing stored, no KataGo: one line
        assert "no stored AI values for this position" in shell.stdout.getvalue()
    finally:
        book.close()


def sgf_moves(vertices: str) -> str:
    return ",".join(base.point_to_sgf(base.vertex_to_point(v, 19), 19) for v in vertices.split())


def test_the_web_corner_rows_carry_the_values_when_ready(make_app):  # noqa: F811
    from webbook import MISSING

    app = make_app(MISSING)
    asked = sgf_moves(ASKED)
    put_values(app, asked, {sgf_moves("Q14"): (0.56, 1.2, 0.0)}, root=(20, 0.55, 1.0))
    put_values(app, asked + "," + sgf_moves("R14"), {}, visits=1, root=(3, 0.35, -0.4))
    answer = ok(app.test_client(), f"/api/corners?moves={asked}")
    assert answer["ai"]["status"] == "ready" and answer["ai"]["settings"]["network"] == "test-net"
    first = answer["corners"][0]
    q14, r14 = first["next"]
    assert (q14["vertex"], q14["ai"]["winrate"], q14["ai"]["loss"], q14["ai"]["source"]) == ("Q14", 0.56, 0.0, "search")
    assert (r14["vertex"], r14["ai"]["winrate"], r14["ai"]["score_lead"], r14["ai"]["loss"], r14["ai"]["source"]) \
        == ("R14", 0.65, 0.4, 0.8, "child")
    whole = sgf_moves("Q16 D4 D16")
    put_values(app, whole, {sgf_moves("O17"): (0.46, -0.5, 0.2)})
    pattern = ok(app.test_client(), f"/api/pattern?moves={whole}&region=A1:T19")
    o17 = next(row for row in pattern["next"] if row["vertex"] == "O17")
    # O17 is the only move evaluated there: the best, loss 0 (its stored 0.2 was against another)
    assert pattern["ai"]["status"] == "ready" and (o17["ai"]["winrate"], o17["ai"]["loss"]) == (0.46, 0.0)


def test_the_web_corner_rows_wait_while_katago_works(make_app, fake):  # noqa: F811
    app = make_app(fake("hang"))
    answer = ok(app.test_client(), f"/api/corners?moves={sgf_moves(ASKED)}")
    assert answer["ai"]["status"] == "pending"
    rows = [row for corner in answer["corners"] for row in corner["next"]]
    assert rows and all(row["ai"] is None for row in rows)
    pattern = ok(app.test_client(), f"/api/pattern?moves={sgf_moves('Q16 D4 D16')}&region=K10:T19")
    assert pattern["ai"]["status"] == "note" and pattern["ai"]["reason"] == WHOLE_BOARD_ONLY
