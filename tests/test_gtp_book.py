"""The book's GTP extensions on a real SQLite book (tests/bookgames.py): Fuego's book_moves, GoGui's
analyze commands and gfx overlays, Leela Zero / KataGo analysis lines as Sabaki and Lizzie parse
them, and the analysis stream ending at the next command, in-process and over a real pipe."""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from fuseki.book.play.book_chooser import from_settings
from fuseki.engine.config import BookSettings, Settings
from fuseki.engine.core.base import point_to_vertex, vertex_to_point
from fuseki.engine.core.coords import transform_point
from fuseki.engine.gtp.cli import serve
from fuseki.engine.gtp.commands import new_engine

from bookgames import build_book
from bookgtp import analyze, ok, parse_info
from gtpsession import book_chain

ROOT = Path(__file__).resolve().parent.parent
GOGUI_TYPES = {"bwboard", "cboard", "dboard", "eplist", "gfx", "hstring", "hpstring", "none", "param",
               "plist", "pspairs", "pstring", "sboard", "string", "var", "varb", "varc", "varp",
               "varpo", "varw"}
VERTEX = re.compile(r"[A-HJ-T](1[0-9]|[1-9])")


@pytest.fixture(scope="module")
def book_path(tmp_path_factory):
    folder = tmp_path_factory.mktemp("book")
    return build_book(folder / "book.sqlite", folder / "sgf")


def engine_on(path, **book):
    settings = Settings(seed=2, book=BookSettings(path=str(path), **book))
    return new_engine(settings, book_chain(from_settings(settings, log=lambda text: None)), log=lambda text: None)


@pytest.fixture
def eng(book_path):
    return engine_on(book_path)


@pytest.fixture
def bookless(tmp_path):
    return engine_on(tmp_path / "no-book.sqlite")


# --- Fuego's book_moves ----------------------------------------------------------------------

def test_book_moves_lists_the_side_to_move_book_moves_most_played_first(eng):
    assert ok(eng, "play B R16") == ""
    assert ok(eng, "book_moves") == "D4 D16 Q4"
    ok(eng, "play W D4")
    assert ok(eng, "book_moves") == "Q3 C16"
    ok(eng, "play B C16")
    assert ok(eng, "book_moves") == ""  # the game C16 ended there


def test_book_moves_lists_every_point_of_an_orbit(eng):
    words = ok(eng, "book_moves").split()
    assert set(words[:8]) == {"C4", "D3", "C16", "D17", "Q3", "R4", "Q17", "R16"}
    assert set(words[8:]) == {"D4", "D16", "Q4", "Q16"}


def test_book_moves_in_a_mirrored_game(eng):
    ok(eng, "play B C16")  # R16 mirrored left-right
    assert ok(eng, "book_moves") == "Q4 Q16 D4"


def test_book_moves_honours_min_games(book_path):
    eng = engine_on(book_path, min_games=2)
    ok(eng, "play B R16")
    assert ok(eng, "book_moves") == "D4 D16"


# --- GoGui ------------------------------------------------------------------------------------

def test_gogui_analyze_commands_are_well_formed_and_known(eng):
    lines = ok(eng, "gogui-analyze_commands").split("\n")
    assert any(ln.startswith("gfx/Book Moves/") for ln in lines)
    for line in lines:
        kind, label, cmd = line.split("/", 2)
        assert kind in GOGUI_TYPES and label
        assert ok(eng, f"known_command {cmd.split()[0]}") == "true"
        assert eng.handle_line(cmd).startswith("=")  # every one runs on the empty board


def test_book_gfx_labels_letters_and_gives_counts(eng):
    ok(eng, "play B R16")
    gfx = dict(line.split(" ", 1) for line in ok(eng, "book-gfx").split("\n"))
    assert set(gfx) == {"LABEL", "INFLUENCE", "TEXT"}
    words = gfx["LABEL"].split()
    assert dict(zip(words[::2], words[1::2])) == {"D4": "A", "D16": "B", "Q4": "C"}
    words = gfx["INFLUENCE"].split()
    shares = {p: float(s) for p, s in zip(words[::2], words[1::2])}
    assert shares == pytest.approx({"D4": 4 / 7, "D16": 2 / 7, "Q4": 1 / 7}, abs=1e-3)
    assert gfx["TEXT"] == "book: 7 games; A 4 25%, B 2 100%, C 1 100%"


def test_book_gfx_orbit_points_share_a_letter(eng):
    words = ok(eng, "book-gfx").split("\n")[0].split()[1:]
    labels = dict(zip(words[::2], words[1::2]))
    assert {labels[p] for p in ("C4", "D3", "Q17", "R16")} == {"A"}
    assert {labels[p] for p in ("D4", "Q16")} == {"B"}


def test_book_counts_and_main_line(eng):
    ok(eng, "play B R16")
    assert ok(eng, "book-counts") == "D4 4 D16 2 Q4 1"
    assert ok(eng, "book-mainline") == "VAR w D4 b Q3 w C17"


def test_gogui_commands_without_a_book(bookless):
    assert ok(bookless, "book_moves") == ""
    assert ok(bookless, "book-counts") == ""
    assert ok(bookless, "book-gfx") == "TEXT out of book"
    assert ok(bookless, "book-mainline") == "TEXT out of book"


# --- Leela Zero and KataGo analysis ------------------------------------------------------------

@pytest.mark.parametrize("command", ["lz-analyze 50", "lz-analyze W 50", "lz-analyze white 5",
                                     "analyze W 50", "lz-analyze", "lz-analyze interval 50"])
def test_lz_analyze_lines(eng, command):
    ok(eng, "play B R16")
    entries, _ = analyze(eng, command)
    assert [e["move"] for e in entries] == ["D4", "D16"]  # not Q4: one game
    d4 = entries[0]
    # win rates with 2 games at 50% added: (1 + 1) / (4 + 2), (2 + 1) / (2 + 2)
    assert d4["visits"] == "4" and d4["winrate"] == "3333" and d4["prior"] == str(round(4 / 6 * 10000))
    assert d4["order"] == "0" and d4["pv"] == ["D4", "Q3", "C17"]
    assert entries[1]["winrate"] == "7500" and entries[1]["pv"] == ["D16", "C17"]
    for e in entries:  # Leela Zero's integers: Sabaki tells the formats apart by the '.'
        for key in ("visits", "winrate", "prior", "lcb", "order"):
            assert e[key].isdigit(), (key, e)
        assert 0 <= int(e["lcb"]) <= int(e["winrate"])
        assert all(VERTEX.fullmatch(m) for m in e["pv"])


def test_kata_analyze_lines(eng):
    ok(eng, "play B R16")
    entries, _ = analyze(eng, "kata-analyze W interval 20 maxmoves 2 ownership true")
    assert [e["move"] for e in entries] == ["D4", "D16"]
    assert entries[0]["winrate"] == "0.333333" and entries[1]["winrate"] == "0.750000"
    assert float(entries[0]["prior"]) == pytest.approx(4 / 6, abs=1e-6)
    for e in entries:
        assert "." in e["winrate"] and "." in e["prior"]
        assert 0 <= float(e["lcb"]) <= float(e["winrate"]) <= 1


def test_kata_analyze_marks_symmetric_moves(eng):
    entries, _ = analyze(eng, "kata-analyze B 10")
    assert len(entries) == 12 and [e["order"] for e in entries] == [str(n) for n in range(12)]
    first = entries[0]["move"]
    assert [e.get("isSymmetryOf") for e in entries[1:8]] == [first] * 7
    assert len({e["visits"] for e in entries[:8]}) == 1 and entries[0]["visits"] == "7"
    # priors: 7 of 10 games for the 3-4 points' orbit, 3 for the star points', split per point
    assert float(entries[0]["prior"]) == pytest.approx(0.7 / 8, abs=1e-6)
    assert float(entries[8]["prior"]) == pytest.approx(0.3 / 4, abs=1e-6)
    assert sum(float(e["prior"]) for e in entries) == pytest.approx(1, abs=1e-5)
    for e in entries:  # each pv starts at its own point and stays in its orientation
        assert e["pv"][0] == e["move"]


@pytest.mark.parametrize("t", [1, 5, 6])
def test_analysis_in_a_rotated_game(eng, t):
    def image(vertex):
        return point_to_vertex(transform_point(t, vertex_to_point(vertex, 19), 19), 19)

    ok(eng, f"play B {image('R16')}")
    entries, _ = analyze(eng, "lz-analyze 10")
    assert [e["move"] for e in entries] == [image(m) for m in ("D4", "D16")]
    assert entries[0]["pv"][:2] == [image(m) for m in ("D4", "Q3")]
    # then C3, C17 and K10 (one game each): the tie goes by point order in this orientation
    assert entries[0]["pv"][2] in {image(m) for m in ("C3", "C17", "K10")}


def test_a_one_game_move_is_no_best_move_beside_a_many_game_move(book_path):
    # Q4 was played once and won: 100% beside D4's 4 games at 25%, Lizzie would ring it.
    eng = engine_on(book_path, analysis_min_games=1)
    ok(eng, "play B R16")
    entries, _ = analyze(eng, "kata-analyze W 10")
    assert [(e["move"], e["visits"], e["winrate"]) for e in entries] == [
        ("D4", "4", "0.333333"), ("D16", "2", "0.750000"), ("Q4", "1", "0.666667")]
    assert float(entries[2]["lcb"]) < float(entries[2]["winrate"])
    lz, _ = analyze(eng, "lz-analyze W 10")
    assert [e["winrate"] for e in lz] == ["3333", "7500", "6667"]


def test_analysis_min_games_leaves_moves_out_but_book_moves_keeps_min_games(book_path):
    eng = engine_on(book_path, analysis_min_games=3)
    ok(eng, "play B R16")
    entries, _ = analyze(eng, "lz-analyze W 10")
    assert [e["move"] for e in entries] == ["D4"] and entries[0]["prior"] == "10000"
    assert ok(eng, "book_moves") == "D4 D16 Q4"  # min_games (1), not analysis_min_games
    assert "Q4 1" in ok(eng, "book-counts")


def test_analysis_for_the_other_colour(eng):
    ok(eng, "play B R16")
    entries, _ = analyze(eng, "lz-analyze B 10")  # black to play again: not a book position
    assert entries == []


@pytest.mark.parametrize("command", ["lz-analyze", "kata-analyze B 50", "analyze 10"])
def test_analysis_without_a_book_opens_and_closes_an_empty_response(bookless, command):
    entries, text = analyze(bookless, command)
    assert entries == [] and text == "=\n\n= fuseki\n\n"


@pytest.mark.parametrize("command", ["lz-analyze B x", "lz-analyze 10 maxmoves", "kata-analyze B 5 maxmoves x",
                                     "lz-analyze purple 10", "kata-analyze B 5 avoid b D4"])
def test_analysis_syntax_errors_are_answered_and_closed(eng, command):
    assert eng.handle_line(command) == "? syntax error\n\n"
    assert eng.handle_line("name") == "= fuseki\n\n"  # nothing left open


def test_stream_keeps_the_id_and_any_line_ends_it(eng):
    assert eng.handle_line("7 lz-analyze 10").startswith("=7\ninfo move ")
    assert eng.handle_line("# a comment") == "\n"  # ended, even by a line with no answer
    assert eng.handle_line("8 name") == "=8 fuseki\n\n"


def test_stream_then_quit_and_end_of_input(book_path):
    import io

    eng = engine_on(book_path)
    out = io.BytesIO()
    serve(eng, io.BytesIO(b"lz-analyze 10\nquit\n"), out)
    text = out.getvalue().decode()
    assert text.startswith("=\ninfo move ") and text.endswith("\n\n=\n\n")
    eng = engine_on(book_path)
    out = io.BytesIO()
    serve(eng, io.BytesIO(b"kata-analyze 10\n"), out)  # input ends with the stream open
    assert out.getvalue().decode().endswith("\n\n") and out.getvalue().count(b"\n\n") == 1


def _reader(stream, lines: queue.Queue):
    for raw in iter(stream.readline, b""):
        lines.put(raw.decode())
    lines.put(None)


def test_stream_over_a_pipe_stops_at_the_next_command(book_path):
    """The controller's view (Sabaki, Lizzie): '=' and info lines arrive before the next command is
    sent, and the next command's answer comes after the empty line that ends the stream."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, str(ROOT / "gtp_main.py"), "--book", book_path, "--seed", "1",
                             "--analysis-min-games", "1"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=_reader, args=(proc.stdout, lines), daemon=True).start()
    try:
        proc.stdin.write(b"play B R16\n1 lz-analyze W 10\n")
        proc.stdin.flush()
        assert lines.get(timeout=30) == "=\n" and lines.get(timeout=5) == "\n"
        assert lines.get(timeout=30) == "=1\n"
        info = lines.get(timeout=30)
        assert [e["move"] for e in parse_info(info)] == ["D4", "D16", "Q4"]  # the flag lets Q4 in
        with pytest.raises(queue.Empty):
            lines.get(timeout=0.5)  # the stream stays open while the controller is silent
        proc.stdin.write(b"2 genmove W\n")
        proc.stdin.flush()
        assert [lines.get(timeout=30) for _ in range(3)] == ["\n", "=2 D4\n", "\n"]
        proc.stdin.write(b"quit\n")
        proc.stdin.flush()
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()


def test_analysis_lines_of_a_symmetric_position_follow_the_most_played_moves():
    """On the built-in book's empty board (8-fold symmetric) each line plays, after its first move,
    at every move the whole-board book knows, a move of the most games among the legal ones (ties:
    any); the lines
    of one orbit's points are the first point's line turned by the symmetry between them."""
    from fuseki.book.model import builtin
    from fuseki.engine.core.board import Board
    from fuseki.engine.core.coords import symmetry_table

    if not builtin.available():
        pytest.skip("no built-in book in this checkout")
    eng = engine_on(builtin.PATH, analysis_min_games=50)
    chooser = eng.game.advisor
    entries, _ = analyze(eng, "kata-analyze B 10")
    assert len(entries) > 8
    tables = symmetry_table(19).tolist()
    point = {e["move"]: vertex_to_point(e["move"], 19) for e in entries}
    for e in entries:
        board, colour = Board(19), 1
        for n, vertex in enumerate(e["pv"]):
            p = vertex_to_point(vertex, 19)
            found = chooser.next_moves(board, colour)
            legal = [m for m in (found.moves if found else []) if m.point >= 0 and m.games >= chooser.min_games
                     and any(board.legal_reason(colour, q) is None for q in m.points)]
            # after the entry's own first move, the whole-board book's most played move (or the corner book's)
            if legal and n:
                best = max(m.games for m in legal)
                assert any(p in m.points and m.games == best for m in legal), (e["move"], e["pv"], vertex)
            board.play(colour, p)
            colour = 3 - colour
        if "isSymmetryOf" in e:
            first = next(f for f in entries if f["move"] == e["isSymmetryOf"])
            turns = [t for t in tables if t[point[first["move"]]] == point[e["move"]]]
            assert any([point_to_vertex(t[vertex_to_point(v, 19)], 19) for v in first["pv"]] == e["pv"]
                       for t in turns), (first["pv"], e["pv"])


class _PausingAdvisor:
    """The engine's book, whose look-ups on the analysis thread wait, from the third on, until the
    GTP loop has asked that thread to stop: what the loop does meanwhile is what a controller sees."""

    def __init__(self, chooser, send_next):
        self.chooser, self.send_next, self.calls = chooser, send_next, 0

    def __getattr__(self, name):
        return getattr(self.chooser, name)

    def next_moves(self, board, to_move):
        thread = threading.current_thread()
        if thread.name == "analysis":
            self.calls += 1
            if self.calls == 3:
                self.send_next()
                assert thread.stopping.wait(60), "the loop did not read the next command"
        return self.chooser.next_moves(board, to_move)


def test_the_next_command_is_answered_while_the_analysis_is_still_running(book_path):
    import io

    full, _ = analyze(engine_on(book_path), "kata-analyze B 10")
    read_end, write_end = os.pipe()
    settings = Settings(seed=2, book=BookSettings(path=str(book_path)))
    book = _PausingAdvisor(from_settings(settings, log=lambda text: None),
                           lambda: os.write(write_end, b"name\nquit\n"))
    eng = new_engine(settings, book_chain(book), log=lambda text: None)
    os.write(write_end, b"kata-analyze B 10\n")
    out = io.BytesIO()
    with open(read_end, "rb", buffering=0) as stdin:
        serve(eng, stdin, out)
    os.close(write_end)
    head, info, closing, answer = out.getvalue().decode().split("\n", 3)
    entries = parse_info(info)
    assert (head, closing, answer) == ("=", "", "= fuseki\n\n=\n\n")
    # stopped after the entry in hand: the first ones, as the whole analysis gives them
    assert 1 <= len(entries) < len(full) == 12 and entries == full[: len(entries)]
