"""``fuseki shell`` (book/ui/shell.py) driven command by command on a small real book.

The book is the API tests' five games (``test_web_api.GAMES``), imported into a
temporary SQLite file.  Each test feeds lines to ``BookShell.onecmd`` and reads
what it printed.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fuseki.book.storage.store import Book
from fuseki.book.ui import shell as shell_module
from fuseki.book.ui.shell import BookShell

from webbook import CAPTURE_LINE, GAMES, build_book

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def book_path(tmp_path_factory):
    return build_book(tmp_path_factory.mktemp("shell") / "book.sqlite")


@pytest.fixture
def shell(book_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # rotations: four boards a row
    book = Book.open(str(book_path), readonly=True)
    shell = BookShell(book, str(book_path), stdout=io.StringIO())
    yield shell
    book.close()


def run(shell, line: str) -> str:
    """What one command printed."""
    out = shell.stdout
    out.seek(0)
    out.truncate()
    shell.onecmd(line)
    return out.getvalue()


def board_rows(text: str) -> dict[int, str]:
    """Row number -> the row's cells (one character each) of the first board in ``text``."""
    rows = {}
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0].isdigit() and len(parts) > 2 and int(parts[0]) not in rows:
            body = line[2:].rstrip()
            body = body[: len(body) - len(parts[-1])] if parts[-1].isdigit() else body
            rows[int(parts[0])] = body[1::2]
        elif rows and not parts[:1]:
            break
    return rows


def cell(text: str, vertex: str) -> str:
    column = "ABCDEFGHJKLMNOPQRST".index(vertex[0])
    return board_rows(text)[int(vertex[1:])][column]


def table_rows(text: str) -> list[list[str]]:
    """The next-move table's rows: letter, move, games, win rate (``a - Q16   4  50.0%``)."""
    return [line.replace(" - ", " ", 1).split() for line in text.splitlines()
            if len(line) > 4 and line[1:4] == " - "]


def test_greeting_names_the_book_and_its_games(shell, book_path):
    assert shell.greeting() == f"book {book_path}: 5 games, 37 positions"


def test_empty_board_search(shell):
    out = run(shell, "search")
    assert table_rows(out) == [["a", "D16", "4", "50.0%"], ["b", "D17", "1", "100.0%"]]
    assert "total 5 games" in out
    for vertex in ("D16", "Q16", "D4", "Q4"):
        assert cell(out, vertex) == "a"
    assert [cell(out, v) for v in ("C16", "D17", "Q17", "R16", "C4", "D3", "Q3", "R4")] == ["b"] * 8
    assert cell(out, "K10") == "+" and cell(out, "A1") == "."
    key_line = next(line for line in out.splitlines() if line.startswith("hash "))
    assert "Black to play" in key_line
    assert len(key_line.split()[1]) == 16


def test_play_in_every_form_and_letters(shell):
    run(shell, "search")
    assert "move 1, last Black D16; White to play" in run(shell, "play a")
    assert "move 3, last Black Q3" in run(shell, "play pd Q3")
    out = run(shell, "board")
    assert [cell(out, v) for v in ("D16", "Q16", "Q3")] == ["X", "O", "X"]
    assert "last Black Q3" in out.splitlines()[-1]
    assert "move 4, last White pass" in run(shell, "play pass")


def test_search_after_moves_finds_transpositions_and_symmetric_moves(shell):
    run(shell, "play pd dp pp dd")
    out = run(shell, "search")
    rows = table_rows(out)
    assert {r[1] for r in rows} in ({"F17", "K10"}, {"F3", "K10"})
    assert "total 2 games" in out
    letter = next(r[0] for r in rows if r[1] != "K10")
    assert cell(out, "F17") == cell(out, "F3") == letter  # one move, shown on both points


def test_captures_are_applied(shell):
    out = run(shell, "play " + CAPTURE_LINE.replace(",", " "))
    assert "captures Black 1 White 0" in out
    assert cell(run(shell, "board"), "R17") == "."  # qc is R17


@pytest.mark.parametrize("line, message", [
    ("play zz", "bad vertex 'zz'"),
    ("play Z99", "bad vertex 'Z99'"),
    ("play I5", "bad vertex 'I5'"),
    ("play", "play needs moves"),
    ("play m", "letters go from a to l"),
    ("play a", "needs a search of this position first"),
    ("play pd pd", "illegal move pd for White: occupied"),
    ("undo 5", "cannot undo 5 moves: 1 played"),
    ("undo x", "positive whole number"),
    ("undo 0", "positive whole number"),
    ("marks sometimes", "marks takes on or off"),
    ("year 1990-1980", "1990 is after 1980"),
    ("year nineties", "bad year range 'nineties'"),
    ("games 0", "positive whole number"),
    ("games 9", "page 9 is out of range"),
    ("frobnicate now", "unknown command 'frobnicate'"),
    ("help frobnicate", "no command 'frobnicate'"),
    ("import /no/such/file.sgf", "no such file or folder"),
    ("cd /no/such/folder", "not a folder"),
    ("ls /no/such/folder", "not a folder"),
    ("board now", "board takes no arguments"),
])
def test_bad_input_prints_one_line_and_changes_nothing(shell, line, message):
    run(shell, "play pd")
    before = (list(shell.board.moves), shell.board.ascii(), shell.filters)
    out = run(shell, line)
    assert out.count("\n") == 1 and out.startswith("error: ") and message in out, out
    assert (list(shell.board.moves), shell.board.ascii(), shell.filters) == before


def test_play_is_all_or_nothing(shell):
    run(shell, "play pd dp")
    assert "illegal move dp" in run(shell, "play pp dd dp")
    assert len(shell.board.moves) == 2


def test_a_letter_from_an_older_search_is_refused(shell):
    run(shell, "search")
    run(shell, "play a")
    assert "needs a search of this position first" in run(shell, "play a")
    run(shell, "undo")
    assert "move 1" in run(shell, "play b")  # the search was of this position again


def test_undo(shell):
    run(shell, "play pd dp pp dd")
    assert "move 1, last Black Q16" in run(shell, "undo 3")
    assert "move 0; Black to play" in run(shell, "undo")


def test_marks_off_hides_the_letters(shell):
    assert "marks off" in run(shell, "marks off")
    out = run(shell, "search")
    assert cell(out, "D16") == "+" and table_rows(out)[0][0] == "a"
    run(shell, "marks on")
    assert cell(run(shell, "board"), "D16") == "a"


def test_year_and_player_filters_apply_to_every_search(shell):
    assert run(shell, "year 1980-1999") == "filters: years 1980-1999\n"
    assert "total 2 games" in run(shell, "search")
    assert run(shell, "player kato") == "filters: years 1980-1999, player 'kato'\n"
    out = run(shell, "search")
    assert "total 1 game" in out and "filters: years 1980-1999, player 'kato'" in out
    assert "Takemiya" in run(shell, "games")
    run(shell, "year off")
    assert run(shell, "player off") == "no filters\n"
    assert "total 5 games" in run(shell, "search")
    assert run(shell, "year 2001") == "filters: year 2001\n"
    assert "total 1 game" in run(shell, "search")


def test_games_lists_players_date_result_and_move_number(shell):
    run(shell, "play pd dp pp dd")
    out = run(shell, "games")
    lines = out.splitlines()
    assert lines[0].split() == ["id", "Black", "White", "date", "result", "move"]
    takemiya = next(line for line in lines if "Takemiya" in line)
    assert "Kato Masao 9d" in takemiya and "1985-05-01" in takemiya and "B+R" in takemiya
    assert takemiya.split()[-1] == "4"
    assert lines[-1] == "page 1 of 1, 2 games"


def test_games_next_goes_on_from_the_page_shown(shell, monkeypatch):
    monkeypatch.setattr(shell_module, "PAGE_SIZE", 2)
    assert "'games' first" in run(shell, "games next")
    pages = [run(shell, f"games {n}") for n in (1, 2, 3)]
    run(shell, "games")
    assert [run(shell, "games next"), run(shell, "games next")] == pages[1:]
    assert "last page" in run(shell, "games next")
    run(shell, "play pd")  # another position: its own pages
    assert "'games' first" in run(shell, "games next")


def test_rotations_agree(shell):
    run(shell, "play pd dp pq")
    out = run(shell, "rotations")
    titles = [word for word in out.split() if len(word) == 2 and word[0] == "T" and word[1].isdigit()]
    assert titles == [f"T{n}" for n in range(8)]
    assert out.rstrip().endswith("all 8 orientations: same canonical key and same next moves")
    # four boards side by side on a 200-column terminal
    assert max(len(line) for line in out.splitlines()) > 4 * 40


def test_listcommands_and_help(shell):
    names = run(shell, "listcommands").split()
    assert names == sorted(["ai", "board", "cd", "corners", "cwd", "exit", "filter", "games", "help", "import",
                            "listcommands",
                            "ls", "pattern", "marks", "play", "player", "quit", "rotations", "search", "undo",
                            "within", "year", "years"])
    assert run(shell, "help undo").startswith("undo [N]:")
    assert run(shell, "help exit").startswith("exit:") and run(shell, "help quit").startswith("quit:")
    everything = run(shell, "help")
    assert all(name in everything for name in names)


def test_exit_quit_and_eof_end_the_loop(shell):
    assert shell.onecmd("exit") is True
    assert shell.onecmd("quit") is True
    assert shell.onecmd("EOF") is True
    assert shell.onecmd("") is False  # an empty line does not repeat the last command


def test_completion(shell):
    assert shell.completenames("ro") == ["rotations "]
    assert shell.complete_marks("o", "marks o", 6, 7) == ["on", "off"]
    run(shell, "search")
    assert {"a", "b"} <= set(shell.complete_play("", "play ", 5, 5))
    assert shell.complete_help("ye") == ["year", "years"]


def test_files_ls_cd_cwd_and_import(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "games"
    folder.mkdir()
    (folder / "seigen.sgf").write_bytes(GAMES["seigen"])
    (folder / "broken.sgf").write_bytes(b"(;GM[1]SZ[19];B[zz")
    (tmp_path / "db").mkdir()
    book = Book.open(str(tmp_path / "db" / "new.sqlite"))
    try:
        shell = BookShell(book, "new.sqlite", stdout=io.StringIO())
        shell.import_workers = 0
        assert run(shell, "cwd") == f"{tmp_path}\n"
        assert run(shell, "ls") == "db/\ngames/\n"
        assert run(shell, "cd games") == f"{folder}\n"
        assert run(shell, "ls") == "broken.sgf\nseigen.sgf\n"
        assert shell.complete_import("se", "import se", 7, 9) == ["seigen.sgf"]
        out = run(shell, "import seigen.sgf broken.sgf")
        assert out.count("\n") == 1 and "1 games added" in out and "1 files skipped" in out
        assert "total 1 game" in run(shell, "search")
        assert "1 duplicates" in run(shell, "import seigen.sgf")
    finally:
        book.close()


def test_import_into_a_read_only_book_is_one_line(shell, tmp_path):
    game = tmp_path / "g.sgf"
    game.write_bytes(GAMES["cho"])
    out = run(shell, f"import {game}")
    assert out.startswith("error: ") and "read-only" in out and out.count("\n") == 1


def test_fuseki_shell_reads_commands_from_stdin(book_path):
    script = "search\nplay a\nplay zz\nquit\n"
    result = subprocess.run([sys.executable, "-m", "fuseki", "shell", "--book", str(book_path)],
                            input=script, capture_output=True, text=True, cwd=ROOT, timeout=120,
                            env={**os.environ, "HOME": str(book_path.parent)})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"book {book_path}: 5 games, 37 positions"
    assert "total 5 games" in result.stdout
    assert "error: bad vertex 'zz'" in result.stdout
    assert "fuseki>" not in result.stdout  # no prompts when the commands come from a pipe
    assert not (book_path.parent / ".fuseki_history").exists()


def test_a_book_that_cannot_be_opened_is_one_line(tmp_path):
    result = subprocess.run([sys.executable, "-m", "fuseki", "shell", "--book",
                             str(tmp_path / "no" / "such" / "folder" / "b.sqlite")],
                            input="", capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 1
    assert result.stderr.startswith("fuseki shell: cannot open the book") and result.stderr.count("\n") == 1


def test_pattern_then_games_lists_the_pattern_games(book_path, monkeypatch):
    """pattern REGION searches the shell's board; games then lists the pattern's games at their
    match; a search makes games list the position's games again; a bad region is one line."""
    from fuseki.book.analysis.patterns import index

    with Book.open(str(book_path)) as writable:
        index.update(writable, progress=None)
    book = Book.open(str(book_path), readonly=True)
    try:
        shell = BookShell(book, str(book_path), stdout=io.StringIO())
        run(shell, "play pd")
        text = run(shell, "pattern N19:T13")
        assert "corner pattern" in text and "total" in text
        total = int(text.split("total ")[1].split()[0])
        assert total > 0
        listed = run(shell, "games")
        assert f"{total} game" in listed
        assert all(line.split()[-1] == "0" or line.split()[-1].isdigit() for line in listed.splitlines()[1:-1])
        run(shell, "search")
        assert f"{book.games(shell.board).total} game" in run(shell, "games")
        assert "one point" in run(shell, "pattern N19:N19")
        assert "pattern needs a region" in run(shell, "pattern")
        text = run(shell, "pattern N19:T13 x Q16 o R17 swap next black from 0 to 30")
        assert "corner pattern, colours also exchanged, Black to move, moves 0-30" in text
        assert "fixed colour" in run(shell, "pattern N19:T13 fixed")
        assert "unknown word" in run(shell, "pattern N19:T13 sideways")
        assert "needs a value" in run(shell, "pattern N19:T13 to")
        assert "to_move is black" in run(shell, "pattern N19:T13 next red")
    finally:
        book.close()


# --- ai on|off: KataGo's stored values beside the human moves -------------------------------------

@pytest.fixture
def no_katago(tmp_path, monkeypatch):
    """No KataGo named or installed, and an AI value cache file of the test's own."""
    monkeypatch.delenv("FUSEKI_KATAGO", raising=False)
    monkeypatch.setenv("FUSEKI_KATAGO_DIR", str(tmp_path / "no-katago"))
    cache = tmp_path / "ai-cache.sqlite"
    monkeypatch.setenv("FUSEKI_AI_CACHE", str(cache))
    return cache


def store_empty_board(cache) -> None:
    """Values of the empty board, black to play, through ai_values.put: KataGo's search visited
    the star point (loss 0.3) and a point nobody played (K10); the 3-4 point (D17) gets its values
    from the stored position after it (loss 0.5 - (-1.5) = 2.0)."""
    from sqlalchemy import create_engine

    from fuseki.book.formats.positions import board_after_moves
    from fuseki.book.queries import ai_values
    from fuseki.book.queries.ai_values import AiSettings
    from fuseki.engine.core import base

    settings = AiSettings("japanese", 6.5, "net-x", 8)
    db = create_engine(f"sqlite:///{cache}")
    with db.begin() as conn:
        ai_values.create(conn)
        for moves, root, rows in (([], (9, 0.52, 0.5), [("pd", 0.51, 0.2, 0.3), ("jj", 0.50, 0.1, 0.4)]),
                                  (["dc"], (4, 0.55, 1.5), [])):
            board = board_after_moves(moves, 19)
            ai_values.put(conn, board.symmetric_keys(board.to_move), 19, settings, root,
                          [(base.sgf_to_point(p, 19), 5, w, lead, loss, 0.1) for p, w, lead, loss in rows])
    db.dispose()


def test_ai_on_shows_the_stored_values_beside_the_human_moves(shell, no_katago):
    store_empty_board(no_katago)
    assert run(shell, "ai on") == "ai on\n"
    out = run(shell, "search")
    lines = out.splitlines()
    head = lines.index("    move   games  win % |  AI win %   lead   loss visits")
    # D16 is the best evaluated (loss 0), its 5 visits; D17 from the position after it (4 visits):
    # 1 of 5 games losing 1.7 points against D16's lead, no mark from 4 and 9 visits
    assert lines[head + 1].split() == ["a", "-", "D16", "4", "50.0%", "|", "51.0%", "0.2", "0.0", "5"]
    assert lines[head + 2].split() == ["b", "-", "D17", "1", "100.0%", "|", "45.0%", "-1.5", "1.7*", "4"]
    assert "shallow values: 9 visits, under the 100 a mark needs" in out
    assert lines[head + 3].split()[:2] == ["AI", "K10"]  # KataGo's, nobody played it
    assert "KataGo: net-x, japanese rules, komi 6.5, 9 visits" in out and lines[-1] == "total 5 games"
    assert "asking KataGo" not in out
    assert run(shell, "ai off") == "ai off\n"
    assert "AI win %" not in run(shell, "search")


def test_ai_on_with_nothing_stored_and_no_katago_still_shows_the_human_table(shell, no_katago):
    run(shell, "ai on")
    run(shell, "play pd")
    out = run(shell, "search")
    assert "no stored AI values for this position" in out and "AI win %" not in out
    assert table_rows(out) and "total" in out


def test_ai_on_asks_a_configured_katago_and_says_so(book_path, no_katago, tmp_path, capfd):
    import shlex

    from fuseki.book.ui.shell import _default_ai_options

    from services import FAKE_KATAGO

    script = tmp_path / "fake_katago.py"
    script.write_text(FAKE_KATAGO)
    options = _default_ai_options()
    options.katago = shlex.join([sys.executable, str(script), "values"])
    book = Book.open(str(book_path), readonly=True)
    try:
        shell = BookShell(book, str(book_path), stdout=io.StringIO(), ai_options=options)
        run(shell, "ai on")
        out = run(shell, "search")
    finally:
        book.close()
    assert "asking KataGo" in capfd.readouterr().err
    assert "AI win %" in out and "AI  " in out and "total 5 games" in out


def test_ai_pv_on_shows_each_moves_line_under_its_row(shell, no_katago):
    """``ai pv on``: the stored line of each move under its row, in GTP vertices, the move first."""
    from sqlalchemy import create_engine

    from fuseki.book.formats.positions import board_after_moves
    from fuseki.book.queries import ai_values
    from fuseki.book.queries.ai_values import AiSettings
    from fuseki.engine.core import base

    db = create_engine(f"sqlite:///{no_katago}")
    with db.begin() as conn:
        ai_values.create(conn)
        board = board_after_moves([], 19)
        points = [base.sgf_to_point(p, 19) for p in ("pd", "dp", "qq")]
        ai_values.put(conn, board.symmetric_keys(board.to_move), 19, AiSettings("japanese", 6.5, "net-x", 8),
                      (9, 0.52, 0.5), [(points[0], 5, 0.51, 0.2, 0.0, 0.1)], [points])
    db.dispose()
    run(shell, "ai on")
    assert "line:" not in run(shell, "search")
    assert run(shell, "ai pv on") == "ai pv on\n"
    lines = run(shell, "search").splitlines()
    row = next(i for i, line in enumerate(lines) if line.startswith("a - "))
    first = lines[row].split()[2]  # the 4-4 point the table shows: the line turned with it
    assert lines[row + 1].split()[0] == "line:" and lines[row + 1].split()[1] == first
    assert len(lines[row + 1].split()) == 4
    run(shell, "ai pv off")
    assert "line:" not in run(shell, "search")


def test_ai_takes_on_or_off(shell):
    assert run(shell, "ai maybe") == "error: ai takes on, off, pv on or pv off\n"
    assert shell.complete_ai("o", "ai o", 3, 4) == ["on", "off"]
