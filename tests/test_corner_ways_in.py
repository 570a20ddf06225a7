"""The corner book through every way in: genmove and its --verbose source, the analysis
commands, ``fuseki corners``, the shell's ``corners`` and the web API.

The book: five games whose top-right corner goes Black Q16, White O17, then Black Q14 (three
games) or R14 (two); the rest of the board is D4 and D16.  The position asked about has C4
and C16 instead: the whole board is in no game, its top-right corner is in all five.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from fuseki.book.analysis.patterns import corner_build
from fuseki.book.storage.store import Book
from fuseki.book.ui.fuseki_command import main
from fuseki.book.ui.shell import BookShell
from fuseki.engine.config import BookSettings, Settings
from fuseki.engine.core import base

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import gtp_main  # noqa: E402

from cornerways import ASKED, GAMES, moves_of
from games import sgf_text  # noqa: E402


@pytest.fixture(scope="module")
def book_path(corner_ways_book):
    return corner_ways_book


def engine(book_path, logged, **book_options):
    settings = Settings(seed=1, book=BookSettings(path=book_path, **book_options))
    eng = gtp_main.build_engine(settings, verbose=True, log=logged.append)
    for i, vertex in enumerate(ASKED.split()):
        assert eng.handle_line(f"play {'B' if i % 2 == 0 else 'W'} {vertex}") == "=\n\n"
    return eng


def test_genmove_plays_the_corner_book_and_says_so(book_path):
    logged = []
    eng = engine(book_path, logged)
    assert eng.handle_line("genmove B") == "= Q14\n\n"
    assert "fuseki: genmove B Q14: corner book" in logged
    assert any("corner book Q14 (out of the whole-board book; corner 1: played 3 times in a corner" in line
               for line in logged)
    # White: players left the top right after Q14 (tenuki in 3 games); the one empty corner's
    # continuation is the 4-4 point (15 times in the games' empty corners)
    assert eng.handle_line("genmove W") == "= Q4\n\n"
    assert logged[-1] == "fuseki: genmove W Q4: corner book"


def test_sources_book_then_corner_book(book_path):
    logged = []
    settings = Settings(seed=1, book=BookSettings(path=book_path))
    eng = gtp_main.build_engine(settings, verbose=True, log=logged.append)
    assert eng.handle_line("genmove B") == "= Q16\n\n"
    assert logged[-1] == "fuseki: genmove B Q16: book"


def test_no_corner_book_flag_leaves_it_to_the_next_chooser(book_path):
    logged = []
    eng = engine(book_path, logged, corner_book=False)
    eng.handle_line("genmove B")
    assert logged[-1].endswith(": random") and not any("corner book" in line for line in logged)


def test_analysis_shows_the_corner_book_when_the_whole_board_is_out(book_path):
    eng = engine(book_path, [])
    # the last move's corner first, then the empty corner's 4-4 point
    assert eng.handle_line("book_moves") == "= Q14 R14 Q4\n\n"
    gfx = eng.handle_line("book-gfx")
    # the empty corner's 4-4 point was played 15 times in the five games (three empty corners a
    # game): scaled to the book's 5 games, a count of four corners' is no number of games
    assert "LABEL Q14 A R14 B Q4 C" in gfx and "TEXT corner book, games: A 3 100%, B 2 100%, C 5 67%" in gfx
    lines = eng.handle_line("lz-analyze 50")
    eng.handle_line("name")  # ends the stream
    assert "info move Q14 visits 3 " in lines and "info move R14 visits 2 " in lines
    assert "info move Q4 visits 5 " in lines
    assert lines.index("info move Q14") < lines.index("info move R14") < lines.index("info move Q4")
    assert "pv Q14 Q4" in lines  # the main line goes on in the corner book
    assert eng.handle_line("kata-analyze B maxmoves 1").count("info move") == 1
    eng.handle_line("name")


def test_fuseki_corners_builds_and_shows(tmp_path, capsys):
    folder = tmp_path / "sgf"
    folder.mkdir()
    for i, game in enumerate(GAMES):
        (folder / f"g{i}.sgf").write_bytes(sgf_text(19, moves_of(game), result="B+R"))
    book = str(tmp_path / "b.sqlite")
    assert main(["import", str(folder), "--book", book, "--workers", "0"]) == 0
    err = capsys.readouterr().err
    assert "corner book: 7 continuations" in err and "fuseki corners" not in err  # the import built it
    assert main(["corners", "--book", book, "--moves", ASKED]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Black to play")
    first = out.split("\n\n")[1]
    assert first.startswith("top right corner (the last move's): 5 continuations")
    assert "a - Q14         3  100.0%" in first and "b - R14         2  100.0%" in first
    assert "\n16 . . . . . X . . . 16" in first and "14 . . . . . a b . . 14" in first
    assert "bottom left corner: not in the corner book" in out
    assert "bottom right corner: 15 continuations" in out
    assert main(["import", str(folder), "--book", book, "--workers", "0"]) == 0  # nothing new: not rebuilt
    assert "corner book" not in capsys.readouterr().err


def test_an_import_keeps_an_existing_corner_book_up_to_date(tmp_path, capsys):
    """A read-only server or engine answers from the corner book as built: the import that adds
    games rebuilds it, where there is one, to what a build from scratch on all the games gives."""
    from fuseki.book.analysis.patterns import corners

    first, second = tmp_path / "first", tmp_path / "second"
    for folder, games in ((first, GAMES[:2]), (second, GAMES[2:])):
        folder.mkdir()
        for i, game in enumerate(games):
            (folder / f"{folder.name}{i}.sgf").write_bytes(sgf_text(19, moves_of(game), result="B+R"))
    kept, fresh = str(tmp_path / "kept.sqlite"), str(tmp_path / "fresh.sqlite")
    assert main(["import", str(first), "--book", kept, "--workers", "0"]) == 0
    assert main(["corners", "--book", kept, "--moves", ASKED]) == 0  # builds it from the first games
    capsys.readouterr()
    assert main(["import", str(second), "--book", kept, "--workers", "0"]) == 0
    err = capsys.readouterr().err
    assert "corner book: " in err and "fuseki corners --book" not in err
    assert main(["import", str(first), str(second), "--book", fresh, "--workers", "0"]) == 0
    assert main(["corners", "--book", fresh, "--moves", ASKED]) == 0

    def table(path):
        book = Book.open(path, readonly=True)
        try:
            with book.db.connect() as conn:
                rows = sorted(tuple(r) for r in conn.exec_driver_sql(f"SELECT * FROM {corners.TABLE}"))
                return rows, corner_build.built_through(conn)[0], book.max_game_id(conn)
        finally:
            book.close()

    kept_rows, kept_through, kept_last = table(kept)
    fresh_rows, _, _ = table(fresh)
    assert kept_through == kept_last and kept_rows == fresh_rows and kept_rows


def test_shell_and_web_show_the_same(book_path):
    from fuseki.book.ui.web.app import create_app

    book = Book.open(book_path, readonly=True)
    try:
        shell = BookShell(book, book_path, stdout=io.StringIO())
        for vertex in ASKED.split():
            shell.onecmd(f"play {vertex}")
        shell.stdout.seek(0)
        shell.stdout.truncate()
        shell.onecmd("corners")
        text = shell.stdout.getvalue()
        assert "top right corner (the last move's): 5 continuations" in text and "a - Q14" in text
        client = create_app(book).test_client()
        sgf = ",".join(base.point_to_sgf(p, 19) for _, p in moves_of(ASKED))
        answer = client.get(f"/api/corners?moves={sgf}").json
        first = answer["corners"][0]
        assert first["corner"] == 1 and first["last"] and first["total"] == 5
        assert [(r["vertex"], r["games"]) for r in first["next"]] == [("Q14", 3), ("R14", 2)]
    finally:
        book.close()
