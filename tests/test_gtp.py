"""The GTP front end, driven in-process through ``GtpEngine.handle_line``.

Transcripts are written as GTP sessions: a line of input, then the expected
answer.  Every failing command is also checked to leave the board (seen
through ``showboard`` and ``list_stones``) exactly as it was.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseki.engine.config import Settings
from fuseki.engine.gtp.cli import read_lines, serve
from fuseki.engine.gtp.commands import new_engine
from fuseki.engine.gtp.commands.registry import REGISTRY
from fuseki.engine.gtp.protocol import GtpEngine, GtpError, Registry, _stderr_log
from fuseki.engine.players.chooser import Chooser, ChooserChain, MoveChoice

from gtpsession import ask, diagram_stones, err, ok, session, snapshot

ROOT = Path(__file__).resolve().parent.parent
STANDARD = ["protocol_version", "name", "version", "known_command", "list_commands", "quit",
            "boardsize", "clear_board", "komi", "play", "genmove"]


@pytest.fixture
def eng():
    return new_engine(Settings(seed=1), log=lambda text: None)


# --- framing (GTP 3.1 - 3.4) --------------------------------------------------------

def test_ids_are_echoed_on_success_and_on_error(eng):
    assert ask(eng, "12 name") == "=12 fuseki\n\n"
    assert ask(eng, "0 protocol_version") == "=0 2\n\n"
    assert ask(eng, "13 xyzzy") == "?13 unknown command\n\n"
    assert ask(eng, "14 boardsize 99") == "?14 unacceptable size\n\n"


def test_answer_without_id_and_empty_answer(eng):
    assert ask(eng, "name") == "= fuseki\n\n"
    assert ask(eng, "clear_board") == "=\n\n"
    assert ask(eng, "7 clear_board") == "=7\n\n"


def test_id_alone_is_an_error_with_the_id(eng):
    assert ask(eng, "7") == "?7 unknown command\n\n"


@pytest.mark.parametrize("raw, answer", [
    (b"21 name\r\n", "=21 fuseki\n\n"),
    (b"22 known_command name\r\n", "=22 true\n\n"),
    (b"23\tknown_command\tname\t\n", "=23 true\n\n"),
    (b"24 name # a comment\n", "=24 fuseki\n\n"),
    (b"   name   \n", "= fuseki\n\n"),
    (b"na\x01m\x7fe\x1b\n", "= fuseki\n\n"),           # control characters dropped
    (b"name\rx\n", "? unknown command\n\n"),       # CR dropped: the command is 'namex'
])
def test_preprocessing(eng, raw, answer):
    assert eng.handle_bytes(raw) == answer


@pytest.mark.parametrize("raw", [b"", b"\n", b"   \t \r\n", b"# only a comment\n",
                                 b"   # indented comment", b"\x01\x02\n"])
def test_blank_and_comment_lines_get_no_answer(eng, raw):
    assert eng.handle_bytes(raw) is None


@pytest.mark.parametrize("raw, answer", [
    (b"\xff\xfe name\n", "? unknown command\n\n"),
    (b"5 play b \xc3\n", "?5 invalid vertex\n\n"),
    (b"play \xe2\x82\xac D4\n", "? invalid color\n\n"),
    (b"name\xc2\xa0x\n", "? unknown command\n\n"),      # NBSP is not a separator
    (b"\xef\xbc\x91 name\n", "? unknown command\n\n"),  # a full-width digit is no id
])
def test_invalid_utf8_and_unicode_never_crash(eng, raw, answer):
    assert eng.handle_bytes(raw) == answer


ANSWER = re.compile(r"[=?][0-9]*( [^\n]*)?(\n[^\n]*[^\n ][^\n]*)*\n\n")

WORDS = st.sampled_from(["play", "genmove", "boardsize", "komi", "b", "w", "D4", "pass", "9",
                         "-1", "#", "\t", " ", "\r", "\x00", "undo", "7", "\xff", "fixed_handicap"])


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.binary(max_size=120),
                 st.lists(WORDS, max_size=6).map(lambda ws: " ".join(ws).encode("latin-1"))))
def test_any_line_gets_no_answer_or_one_well_formed_answer(raw):
    engine = new_engine(Settings(seed=1, board_size=9), log=lambda text: None)
    answer = engine.handle_bytes(raw.split(b"\n")[0])
    assert answer is None or ANSWER.fullmatch(answer), answer
    if answer is not None and answer.startswith("?"):
        assert "internal error" not in answer


def test_diagnostics_never_look_like_answers(capsys):
    _stderr_log("= x\n? y\ninfo z\nfine")
    assert [line[:1] for line in capsys.readouterr().err.splitlines()] == [" ", " ", " ", "f"]


def test_one_megabyte_lines_get_one_error(eng):
    assert err(eng, "play b " + "x" * (1 << 20)) == "invalid vertex"
    assert err(eng, "x" * (1 << 20)) == "unknown command"
    assert err(eng, "boardsize 9" + "9" * (1 << 20)) == "unacceptable size"
    assert ask(eng, "name") == "= fuseki\n\n"


def test_serve_refuses_overlong_lines_and_goes_on():
    data = b"1 name\n2 play b " + b"x" * 5000 + b"\n3 name\n"
    lines = list(read_lines(io.BytesIO(data), limit=100))
    assert [complete for _, complete in lines] == [True, False, True]
    stdout = io.BytesIO()
    serve(new_engine(), io.BytesIO(data), stdout, limit=100)
    assert stdout.getvalue() == b"=1 fuseki\n\n?2 line too long\n\n=3 fuseki\n\n"


def test_serve_stops_at_quit_and_at_end_of_input():
    stdout = io.BytesIO()
    serve(new_engine(), io.BytesIO(b"name\n\nquit\nname\n"), stdout)
    assert stdout.getvalue() == b"= fuseki\n\n=\n\n"
    stdout = io.BytesIO()
    serve(new_engine(), io.BytesIO(b"1 name"), stdout)  # no final LF
    assert stdout.getvalue() == b"=1 fuseki\n\n"


def test_multi_line_answers_have_no_empty_line_inside(eng):
    for line in ("list_commands", "showboard", "final_status_list alive", "printsgf"):
        response = ask(eng, line)
        assert response.endswith("\n\n") and "\n\n" not in response[:-2], line


def test_quit(eng):
    assert not eng.finished
    assert ask(eng, "9 quit") == "=9\n\n"
    assert eng.finished


def test_internal_errors_become_one_answer_and_are_logged():
    registry = Registry()

    @registry.command("boom")
    def boom(game, args):
        raise ZeroDivisionError("bad")

    @registry.command("fail")
    def fail(game, args):
        raise GtpError("cannot score")

    logged = []
    engine = GtpEngine(new_engine().game, registry, log=logged.append)
    assert engine.handle_line("4 boom") == "?4 internal error\n\n"
    assert "ZeroDivisionError" in logged[0] and logged[0].startswith("fuseki:")
    assert engine.handle_line("fail") == "? cannot score\n\n"


def test_registry_refuses_a_name_twice():
    registry = Registry()
    registry.command("x")(lambda game, args: "")
    with pytest.raises(ValueError):
        registry.command("x")(lambda game, args: "")


# --- administrative commands --------------------------------------------------------

def test_admin_commands(eng):
    assert ok(eng, "protocol_version") == "2"
    assert ok(eng, "name") == "fuseki"
    assert ok(eng, "version")
    listed = ok(eng, "list_commands").split("\n")
    assert listed == REGISTRY.names()
    assert set(STANDARD) <= set(listed) and "list_stones" in listed
    assert all(ok(eng, "known_command " + c) == "true" for c in listed)
    assert ok(eng, "known_command xyzzy") == "false"
    assert ok(eng, "known_command NAME") == "false"  # names are case-sensitive
    assert err(eng, "known_command") == "syntax error"
    assert err(eng, "name extra") == "syntax error"


def test_command_names_are_case_sensitive(eng):
    assert err(eng, "NAME") == "unknown command"


# --- board size, clear_board, komi ---------------------------------------------------

@pytest.mark.parametrize("size", [2, 9, 13, 19, 25])
def test_boardsize_accepts_2_to_25(eng, size):
    ok(eng, f"boardsize {size}")
    assert ok(eng, "showboard").count("\n") == size + 2  # letters above and below


@pytest.mark.parametrize("line, message", [
    ("boardsize 1", "unacceptable size"), ("boardsize 26", "unacceptable size"),
    ("boardsize 0", "unacceptable size"), ("boardsize -1", "unacceptable size"),
    ("boardsize 99999999999999999999", "unacceptable size"),
    ("boardsize abc", "syntax error"), ("boardsize 9.0", "syntax error"),
    ("boardsize \u0669", "syntax error"), ("boardsize", "syntax error"),
    ("boardsize 9 9", "syntax error"),
])
def test_boardsize_failures(eng, line, message):
    assert err(eng, line) == message


def test_boardsize_clears_the_board(eng):
    session(eng, "boardsize 9", "play b E5", "boardsize 9")
    assert diagram_stones(eng) == (set(), set())
    assert err(eng, "undo") == "cannot undo"


def test_clear_board(eng):
    session(eng, "play b D4", "play w Q16", "clear_board")
    assert diagram_stones(eng) == (set(), set())
    assert err(eng, "undo") == "cannot undo"


@pytest.mark.parametrize("value, score", [("6.5", "W+6.5"), ("0", "0"), ("-7.5", "B+7.5"),
                                          ("7", "W+7"), (".5", "W+0.5"), ("1e1", "W+10")])
def test_komi(eng, value, score):
    ok(eng, "komi " + value)
    assert ok(eng, "final_score") == score


@pytest.mark.parametrize("value", ["x", "inf", "nan", "1_0", "\u0663", "", "7.5 1", "0x10"])
def test_komi_failures(eng, value):
    ok(eng, "komi 5.5")
    assert err(eng, ("komi " + value).strip()) == "syntax error"
    assert ok(eng, "final_score") == "W+5.5"


# --- play ---------------------------------------------------------------------------

@pytest.mark.parametrize("word, color", [("black", 0), ("white", 1), ("b", 0), ("w", 1),
                                         ("B", 0), ("W", 1), ("BLACK", 0), ("White", 1)])
def test_play_colours(eng, word, color):
    ok(eng, f"play {word} K10")
    assert diagram_stones(eng)[color] == {"K10"}


def test_play_vertices_any_case_and_pass(eng):
    session(eng, "play b A1", "play w T19", "play b a19", "play w t1", "play b J10",
            "play w h9", "play B k11", "play black d4", "play w PASS", "play B Pass")
    assert diagram_stones(eng) == ({"A1", "A19", "J10", "K11", "D4"}, {"T19", "T1", "H9"})


def test_play_captures(eng):
    ok(eng, "boardsize 9")
    session(eng, "play b A2", "play w A1", "play b B1")
    assert diagram_stones(eng) == ({"A2", "B1"}, set())
    assert "BLACK (X) has captured 1 stones" in ok(eng, "showboard")


# The position for the failure tests: Black has just taken a ko at C2.
#    A B C D E
#  3 . X O . .
#  2 X . X O .
#  1 . X O . .
KO_SETUP = ["boardsize 5", "play b B3", "play w C3", "play b A2", "play w B2", "play b B1",
            "play w D2", "play w C1", "play b C2"]


def ko_position(eng):
    ok(eng, "clear_board")
    for line in KO_SETUP:
        ok(eng, line)


FAILING = [
    ("play w C2", "illegal move"),     # occupied
    ("play b C2", "illegal move"),     # occupied by own stone
    ("play w B2", "illegal move"),     # ko: retakes at once
    ("play w A1", "illegal move"),     # suicide
    ("play b Z99", "invalid vertex"), ("play b I5", "invalid vertex"),
    ("play b A0", "invalid vertex"), ("play b A6", "invalid vertex"),
    ("play b F1", "invalid vertex"), ("play b 3C", "invalid vertex"),
    ("play b A1B", "invalid vertex"), ("play b A\u00b2", "invalid vertex"),
    ("play b A\u0661", "invalid vertex"), ("play b A99999999999999999999", "invalid vertex"),
    ("play x C3", "invalid color"), ("play blak C3", "invalid color"),
    ("play", "syntax error"), ("play b", "syntax error"), ("play b C3 D3", "syntax error"),
    ("genmove purple", "invalid color"), ("genmove", "syntax error"),
    ("reg_genmove x", "invalid color"),
    ("boardsize 26", "unacceptable size"), ("boardsize x", "syntax error"),
    ("komi x", "syntax error"),
    ("fixed_handicap 2", "board not empty"), ("fixed_handicap x", "syntax error"),
    ("place_free_handicap 2", "board not empty"), ("set_free_handicap A5 B5", "board not empty"),
    ("final_status_list foo", "syntax error"),
    ("list_stones purple", "invalid color"),
    ("time_settings x 0 0", "syntax error"), ("time_left b x 0", "syntax error"),
    ("kgs-time_settings foo", "syntax error"), ("kgs-rules go", "unknown rules"),
    ("loadsgf /nonexistent/missing.sgf", "cannot load file"),
    ("printsgf /nonexistent/dir/out.sgf", "cannot save file"),
    ("xyzzy", "unknown command"),
]


@pytest.mark.parametrize("line, message", FAILING)
def test_failing_commands_leave_the_board_as_it_was(eng, line, message):
    ko_position(eng)
    before = snapshot(eng)
    assert err(eng, line) == message
    assert snapshot(eng) == before
    ok(eng, "undo")  # the history is intact too: the last move (B C2) can be taken back
    assert "C2" not in ok(eng, "list_stones b")


def test_ko_position_is_what_the_diagram_says(eng):
    ko_position(eng)
    assert ok(eng, "showboard") == "\n".join([
        "",
        "   A B C D E",
        " 5 . . . . . 5",
        " 4 . . . . . 4",
        " 3 . X O . . 3",
        " 2 X . X O . 2     WHITE (O) has captured 0 stones",
        " 1 . X O . . 1     BLACK (X) has captured 1 stones",
        "   A B C D E"])


def test_showboard_diagram(eng):
    session(eng, "boardsize 7", "play b D4", "play w C5", "play b pass")
    assert ask(eng, "showboard") == "\n".join([
        "=",
        "   A B C D E F G",
        " 7 . . . . . . . 7",
        " 6 . . . . . . . 6",
        " 5 . . O . + . . 5",
        " 4 . . . X . . . 4",
        " 3 . . + . + . . 3",
        " 2 . . . . . . . 2     WHITE (O) has captured 0 stones",
        " 1 . . . . . . . 1     BLACK (X) has captured 0 stones",
        "   A B C D E F G",
        "", ""])


# --- genmove, reg_genmove, kgs-genmove_cleanup ------------------------------------------

def test_genmove_plays_a_legal_move_on_an_empty_point(eng):
    ok(eng, "boardsize 9")
    seen = set()
    for i in range(30):
        color = "bw"[i % 2]
        before = diagram_stones(eng)
        move = ok(eng, f"genmove {color}")
        after = diagram_stones(eng)
        if move == "pass":
            assert after == before
            continue
        assert move not in seen or move not in before[0] | before[1]
        assert move in after[i % 2]
        seen.add(move)


def test_genmove_is_reproducible_with_a_seed():
    def game(seed):
        e = new_engine(Settings(seed=seed))
        e.handle_line("boardsize 9")
        return [e.handle_line("genmove " + "bw"[i % 2]) for i in range(20)]
    assert game(5) == game(5)
    assert game(5) != game(6)


def test_genmove_passes_when_no_move_is_left(eng):
    #   A B
    # 2 . X
    # 1 X .     Black may only fill its own eyes, White may only commit suicide.
    session(eng, "boardsize 2", "play b A1", "play b B2")
    assert ok(eng, "genmove b") == "pass"
    assert ok(eng, "genmove w") == "pass"
    assert ok(eng, "reg_genmove w") == "pass"


class Fixed(Chooser):
    name = "fixed"

    def __init__(self, point):
        self.point = point

    def choose(self, board, color):
        return None if self.point is None else MoveChoice(self.point, self.name)


def test_genmove_never_answers_an_illegal_move_of_the_chooser():
    from fuseki.engine.core.base import vertex_to_point
    e = new_engine(Settings(seed=3, board_size=5), ChooserChain([Fixed(vertex_to_point("C3", 5))]))
    assert e.handle_line("genmove b") == "= C3\n\n"
    second = e.handle_line("genmove w")  # C3 is occupied now: the random chooser steps in
    assert second.startswith("= ") and second != "= C3\n\n" and second != "= pass\n\n"
    e = new_engine(Settings(seed=3), ChooserChain([Fixed(None)]))
    assert e.handle_line("genmove b") not in ("= pass\n\n",)
    e = new_engine(Settings(seed=3), ChooserChain([Fixed(-1)]))
    assert e.handle_line("genmove b") == "= pass\n\n"


def test_reg_genmove_does_not_play(eng):
    session(eng, "boardsize 9", "play b E5")
    before = snapshot(eng)
    move = ok(eng, "reg_genmove w")
    assert move != "E5"
    assert snapshot(eng) == before


def test_kgs_genmove_cleanup_plays_like_genmove(eng):
    ok(eng, "boardsize 9")
    move = ok(eng, "kgs-genmove_cleanup b")
    assert diagram_stones(eng) == ({move}, set())
    assert err(eng, "kgs-genmove_cleanup") == "syntax error"
    assert err(eng, "kgs-genmove_cleanup x") == "invalid color"


class Advisor(Fixed):
    """A book-like chooser (the chain's advisor) that counts the questions it gets."""

    asked = 0
    min_games = 1

    def choose(self, board, color):
        self.asked += 1
        return super().choose(board, color)

    def next_moves(self, board, color):
        return None

    def corner_candidates(self, board, color):
        return None

    def ai_lines(self, board, color, moves, rules=None, komi=None):
        return None


def test_kgs_genmove_cleanup_does_not_ask_the_book():
    # An opening move means nothing in the cleanup phase, where dead stones get captured.
    from fuseki.engine.core.base import vertex_to_point
    book = Advisor(vertex_to_point("E5", 9))
    e = new_engine(Settings(seed=3, board_size=9), ChooserChain([book], advisor=book))
    assert e.handle_line("genmove b") == "= E5\n\n" and book.asked == 1
    for colour in "wbw":
        answer = e.handle_line(f"kgs-genmove_cleanup {colour}")
        assert answer.startswith("= ") and answer != "= pass\n\n", answer
    assert book.asked == 1


# --- undo -----------------------------------------------------------------------------

def test_undo(eng):
    assert err(eng, "undo") == "cannot undo"
    session(eng, "play b D4", "play w Q16", "undo")
    assert diagram_stones(eng) == ({"D4"}, set())
    ok(eng, "undo")
    assert diagram_stones(eng) == (set(), set())
    assert err(eng, "undo") == "cannot undo"
    session(eng, "play b A2", "play w A1", "play b B1", "undo")  # B1 captured A1
    assert diagram_stones(eng) == ({"A2"}, {"A1"})


def test_undo_0_takes_back_one_move_as_qgo_expects(eng):
    # qGo sends 'undo 0'; GNU Go 3.8 takes back one move for it.
    session(eng, "play b D4", "play w Q16", "undo 0")
    assert diagram_stones(eng) == ({"D4"}, set())
    session(eng, "undo 1")
    assert diagram_stones(eng) == (set(), set())
    assert err(eng, "undo 0") == "cannot undo"


def test_undo_n_takes_back_n_moves_or_none(eng):
    session(eng, "fixed_handicap 2", "play w C3", "play b pass", "play w R3", "play b C17")
    assert err(eng, "undo 5") == "cannot undo"  # four moves since the handicap: nothing changes
    assert diagram_stones(eng) == ({"D4", "Q16", "C17"}, {"C3", "R3"})
    session(eng, "undo 3")
    assert diagram_stones(eng) == ({"D4", "Q16"}, {"C3"})
    session(eng, "undo 1", "play w K10")  # White is to move again after the handicap
    assert diagram_stones(eng) == ({"D4", "Q16"}, {"K10"})


@pytest.mark.parametrize("line", ["undo -1", "undo x", "undo 1.0", "undo 1 2", "undo +-1"])
def test_undo_refuses_a_bad_argument_and_keeps_the_board(eng, line):
    session(eng, "play b D4", "play w Q16")
    before = snapshot(eng)
    assert err(eng, line) == "syntax error"
    assert snapshot(eng) == before


def test_undo_takes_back_passes_but_not_handicap(eng):
    session(eng, "fixed_handicap 2", "play w pass", "undo")
    assert err(eng, "undo") == "cannot undo"
    assert diagram_stones(eng) == ({"D4", "Q16"}, set())


# --- list_stones ------------------------------------------------------------------------

def test_list_stones(eng):
    assert ok(eng, "list_stones black") == ""
    session(eng, "play b A1", "play w T19", "play b K10")
    assert set(ok(eng, "list_stones BLACK").split()) == {"A1", "K10"}
    assert ok(eng, "list_stones w") == "T19"
    assert err(eng, "list_stones") == "syntax error"
