"""The GTP front end, driven in-process through ``Engine.handle_line``.

Transcripts are written as GTP sessions: a line of input, then the expected
answer.  Every failing command is also checked to leave the board (seen
through ``showboard`` and ``list_stones``) exactly as it was.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseki.engine.gtp.cli import read_lines, serve
from fuseki.engine.gtp.commands import REGISTRY, new_engine
from fuseki.engine.gtp.config import Settings
from fuseki.engine.gtp.protocol import Engine, GtpError, Registry, _stderr_log

ROOT = Path(__file__).resolve().parent.parent
STANDARD = ["protocol_version", "name", "version", "known_command", "list_commands", "quit",
            "boardsize", "clear_board", "komi", "play", "genmove"]


@pytest.fixture
def eng():
    return new_engine(Settings(seed=1), log=lambda text: None)


def ask(eng, line):
    return eng.handle_line(line)


def ok(eng, line):
    """The text of a '=' answer (fails the test on '?')."""
    response = eng.handle_line(line)
    assert response.startswith("=") and response.endswith("\n\n"), (line, response)
    return response[1:].strip(" ").rstrip("\n").lstrip(" ")


def err(eng, line):
    """The message of a '?' answer (fails the test on '=')."""
    response = eng.handle_line(line)
    assert response.startswith("? ") and response.endswith("\n\n"), (line, response)
    return response[2:-2]


def snapshot(eng):
    return ok(eng, "showboard"), ok(eng, "list_stones black"), ok(eng, "list_stones white")


def session(eng, *lines):
    for line in lines:
        ok(eng, line)


def diagram_stones(eng):
    """(black, white) vertex sets read from list_stones."""
    return (set(ok(eng, "list_stones b").split()), set(ok(eng, "list_stones w").split()))


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
    engine = Engine(new_engine().game, registry, log=logged.append)
    assert engine.handle_line("4 boom") == "?4 internal error\n\n"
    assert "ZeroDivisionError" in logged[0] and logged[0].startswith("fuseki:")
    assert engine.handle_line("fail") == "? cannot score\n\n"


def test_registry_refuses_a_name_twice():
    registry = Registry()
    registry.command("x")(lambda game, args: "")
    with pytest.raises(ValueError):
        registry.command("x")(lambda game, args: "")


# --- a golden session: '> ' lines are sent, the rest is the engine's exact answer ----------

SESSION = """\
> 1 boardsize 7
=1

> # GoGui sends '# interrupt' comments; they get no answer

> 2 play black d4
=2

> 3 play W c5
=3

> 4 play b D4
?4 illegal move

> 5 play b H1
?5 invalid vertex

> 6 play red A1
?6 invalid color

> play b
? syntax error

> 7 undo
=7

> 8 fixed_handicap 2
?8 board not empty

> 9 list_stones white
=9

> 10\tshowboard
=10
   A B C D E F G
 7 . . . . . . . 7
 6 . . . . . . . 6
 5 . . + . + . . 5
 4 . . . X . . . 4
 3 . . + . + . . 3
 2 . . . . . . . 2     WHITE (O) has captured 0 stones
 1 . . . . . . . 1     BLACK (X) has captured 0 stones
   A B C D E F G

> 11 komi 0.5
=11

> 12 final_score
=12 B+48.5

> 13 frobnicate
?13 unknown command

> 14 quit
=14

"""


def test_golden_session():
    engine = new_engine(Settings(seed=1), log=lambda text: None)
    transcript = []
    for line in SESSION.split("\n"):
        if line.startswith("> "):
            transcript.append(line)
            answer = engine.handle_line(line[2:])
            transcript.extend(answer.split("\n")[:-1] if answer else [""])
    assert "\n".join(transcript) + "\n" == SESSION
    assert engine.finished


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


class Fixed:
    def __init__(self, point):
        self.point = point

    def choose(self, board, color):
        return self.point


def test_genmove_never_answers_an_illegal_move_of_the_chooser():
    from fuseki.engine.core.coords import vertex_to_point
    e = new_engine(Settings(seed=3, board_size=5), choosers=[Fixed(vertex_to_point("C3", 5))])
    assert e.handle_line("genmove b") == "= C3\n\n"
    second = e.handle_line("genmove w")  # C3 is occupied now: the random chooser steps in
    assert second.startswith("= ") and second != "= C3\n\n" and second != "= pass\n\n"
    e = new_engine(Settings(seed=3), choosers=[Fixed(None)])
    assert e.handle_line("genmove b") not in ("= pass\n\n",)
    e = new_engine(Settings(seed=3), choosers=[Fixed(-1)])
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
    """A book-like chooser (it has ``next_moves``) that counts the questions it gets."""

    asked = 0

    def choose(self, board, color):
        self.asked += 1
        return self.point

    def next_moves(self, board, color):
        return None


def test_kgs_genmove_cleanup_does_not_ask_the_book():
    # An opening move means nothing in the cleanup phase, where dead stones get captured.
    from fuseki.engine.core.coords import vertex_to_point
    book = Advisor(vertex_to_point("E5", 9))
    e = new_engine(Settings(seed=3, board_size=9), choosers=[book])
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


# --- handicap ---------------------------------------------------------------------------

FIXED19 = {2: "D4 Q16", 3: "D4 Q16 D16", 4: "D4 Q16 D16 Q4", 5: "D4 Q16 D16 Q4 K10",
           6: "D4 Q16 D16 Q4 D10 Q10", 7: "D4 Q16 D16 Q4 D10 Q10 K10",
           8: "D4 Q16 D16 Q4 D10 Q10 K4 K16", 9: "D4 Q16 D16 Q4 D10 Q10 K4 K16 K10"}


@pytest.mark.parametrize("n", range(2, 10))
def test_fixed_handicap_19(eng, n):
    assert ok(eng, f"fixed_handicap {n}") == FIXED19[n]
    assert diagram_stones(eng) == (set(FIXED19[n].split()), set())


@pytest.mark.parametrize("size, n, points", [
    (9, 9, "C3 G7 C7 G3 C5 G5 E3 E7 E5"), (13, 5, "D4 K10 D10 K4 G7"),
    (7, 4, "C3 E5 C5 E3"), (8, 4, "C3 F6 C6 F3"), (25, 9, "D4 W22 D22 W4 D13 W13 N4 N22 N13"),
])
def test_fixed_handicap_other_sizes(eng, size, n, points):
    ok(eng, f"boardsize {size}")
    assert ok(eng, f"fixed_handicap {n}") == points


@pytest.mark.parametrize("size, n", [(19, 1), (19, 10), (19, 0), (19, -2), (9, 10), (7, 5),
                                     (8, 5), (6, 2), (2, 2)])
def test_fixed_handicap_invalid_number(eng, size, n):
    ok(eng, f"boardsize {size}")
    assert err(eng, f"fixed_handicap {n}") == "invalid number of stones"
    assert diagram_stones(eng) == (set(), set())


def test_fixed_handicap_syntax_and_white_to_play(eng):
    assert err(eng, "fixed_handicap two") == "syntax error"
    assert err(eng, "fixed_handicap") == "syntax error"
    ok(eng, "fixed_handicap 3")
    assert "HA[3]" in ok(eng, "printsgf")
    assert eng.game.board.to_move == 2


def test_place_free_handicap(eng):
    vertices = ok(eng, "place_free_handicap 5").split()
    assert len(set(vertices)) == 5
    assert diagram_stones(eng) == (set(vertices), set())
    assert err(eng, "place_free_handicap 2") == "board not empty"
    ok(eng, "clear_board")
    assert err(eng, "place_free_handicap 1") == "invalid number of stones"
    assert err(eng, "place_free_handicap 361") == "invalid number of stones"
    assert err(eng, "place_free_handicap x") == "syntax error"


@pytest.mark.parametrize("size, n", [(19, 12), (3, 8), (6, 4), (2, 3)])
def test_place_free_handicap_beyond_fixed(eng, size, n):
    ok(eng, f"boardsize {size}")
    vertices = ok(eng, f"place_free_handicap {n}").split()
    assert len(set(vertices)) == n
    assert diagram_stones(eng) == (set(vertices), set())


def test_set_free_handicap(eng):
    ok(eng, "set_free_handicap D4 q16 K10")
    assert diagram_stones(eng) == ({"D4", "Q16", "K10"}, set())
    assert err(eng, "set_free_handicap C3 R17") == "board not empty"


@pytest.mark.parametrize("args", ["D4 D4", "D4 Z99", "D4 pass", "D4", "", "D4 x"])
def test_set_free_handicap_bad_vertex_list(eng, args):
    assert err(eng, ("set_free_handicap " + args).strip()) == "bad vertex list"
    assert diagram_stones(eng) == (set(), set())


def test_set_free_handicap_fills_all_but_one_point(eng):
    ok(eng, "boardsize 2")
    ok(eng, "set_free_handicap A1 A2 B1")
    ok(eng, "clear_board")
    assert err(eng, "set_free_handicap A1 A2 B1 B2") == "bad vertex list"


# --- scoring ----------------------------------------------------------------------------

def wall(eng):
    """9x9: a black wall on column E, a white wall on column F: Black 45, White 36."""
    session(eng, "boardsize 9", "komi 7.5")
    for row in range(1, 10):
        session(eng, f"play b E{row}", f"play w F{row}")


def test_final_score(eng):
    assert ok(eng, "final_score") == "W+7.5"
    wall(eng)
    assert ok(eng, "final_score") == "B+1.5"
    ok(eng, "komi 9")
    assert ok(eng, "final_score") == "0"
    ok(eng, "komi 9.5")
    assert ok(eng, "final_score") == "W+0.5"


def test_final_status_list(eng):
    wall(eng)
    alive = ok(eng, "final_status_list alive")
    assert alive.split("\n") == [" ".join(f"E{r}" for r in range(9, 0, -1)),
                                 " ".join(f"F{r}" for r in range(9, 0, -1))]
    assert ok(eng, "final_status_list dead") == ""
    assert ok(eng, "final_status_list seki") == ""
    assert err(eng, "final_status_list") == "syntax error"
    assert err(eng, "final_status_list Alive") == "syntax error"


# --- time -------------------------------------------------------------------------------

@pytest.mark.parametrize("line, system", [
    ("time_settings 0 1 0", "none"), ("time_settings 300 30 5", "canadian"),
    ("time_settings 60 0 0", "absolute"), ("kgs-time_settings none", "none"),
    ("kgs-time_settings absolute 300", "absolute"),
    ("kgs-time_settings byoyomi 300 30 5", "byoyomi"),
    ("kgs-time_settings canadian 300 30 5", "canadian"),
])
def test_time_settings(eng, line, system):
    ok(eng, line)
    assert eng.game.clock.system == system


@pytest.mark.parametrize("line", [
    "time_settings x", "time_settings 1 2", "time_settings -1 0 0", "time_settings 1.5 0 0",
    "kgs-time_settings", "kgs-time_settings absolute", "kgs-time_settings byoyomi 300 30",
    "kgs-time_settings none 5", "kgs-time_settings canadian 1 2 x",
    "time_left b x 0", "time_left b 10", "time_left purple 10 0", "time_left b -1 0",
])
def test_time_failures(eng, line):
    ok(eng, "time_settings 300 30 5")
    assert err(eng, line) in ("syntax error", "invalid color")
    assert eng.game.clock.system == "canadian" and eng.game.clock.main_time == 300


def test_time_left(eng):
    session(eng, "time_settings 300 30 5", "time_left black 120 0", "time_left w 25 3",
            "time_left B 10 1")
    assert eng.game.clock.left == {1: (10, 1), 2: (25, 3)}


# --- KGS ---------------------------------------------------------------------------------

def test_kgs_commands(eng):
    for rules in ("japanese", "chinese", "aga", "new_zealand", "Chinese"):
        ok(eng, "kgs-rules " + rules)
    assert eng.game.rules == "chinese"
    assert err(eng, "kgs-rules tromp-taylor") == "unknown rules"
    assert err(eng, "kgs-rules") == "syntax error"
    assert ok(eng, "kgs-game_over") == ""


# --- loadsgf, printsgf -----------------------------------------------------------------

def write(tmp_path, text, name="game.sgf"):
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def test_loadsgf(eng, tmp_path):
    path = write(tmp_path, "(;GM[1]FF[4]SZ[9]KM[6.5];B[ah];W[ai];B[bi];W[ee])")  # B1 captures A1
    assert ok(eng, f"loadsgf {path}") == ""
    assert diagram_stones(eng) == ({"A2", "B1"}, {"E5"})
    assert ok(eng, "final_score").startswith("W+") and eng.game.komi == 6.5
    ok(eng, f"loadsgf {path} 3")
    assert diagram_stones(eng) == ({"A2"}, {"A1"})
    ok(eng, f"loadsgf {path} 1")
    assert diagram_stones(eng) == (set(), set())
    ok(eng, f"loadsgf {path} 99")
    assert diagram_stones(eng) == ({"A2", "B1"}, {"E5"})
    ok(eng, "undo")  # loaded moves can be taken back
    assert diagram_stones(eng) == ({"A2", "B1"}, set())


def test_loadsgf_handicap_setup_and_size(eng, tmp_path):
    path = write(tmp_path, "(;SZ[13]HA[2]KM[0.5]AB[dj][jd];W[cc];B[dd]AW[kk];W[])")
    ok(eng, f"loadsgf {path}")
    assert diagram_stones(eng) == ({"D4", "K10", "D10"}, {"C11", "L3"})
    assert eng.game.size == 13
    sgf = ok(eng, "printsgf")
    assert "HA[2]" in sgf and "SZ[13]" in sgf and "AW[kk]" in sgf and "KM[0.5]" in sgf
    ok(eng, f"loadsgf {path} 2")
    assert diagram_stones(eng) == ({"D4", "K10"}, {"C11"})
    ok(eng, "undo")
    assert err(eng, "undo") == "cannot undo"  # handicap stones are no move


@pytest.mark.parametrize("content", [
    "not an sgf", "(;SZ[30];B[aa])", "(;SZ[1])", "(;SZ[9];B[aa];W[aa])", "(;SZ[x])",
    b"\xff\xfe\x00",
])
def test_loadsgf_failures_leave_the_game_as_it_was(eng, tmp_path, content):
    session(eng, "boardsize 9", "komi 3", "play b E5")
    before = snapshot(eng)
    path = write(tmp_path, content)
    assert err(eng, f"loadsgf {path}") == "cannot load file"
    assert snapshot(eng) == before and eng.game.komi == 3 and eng.game.size == 9


def test_loadsgf_syntax(eng, tmp_path):
    path = write(tmp_path, "(;SZ[9];B[aa])")
    assert err(eng, "loadsgf") == "syntax error"
    assert err(eng, f"loadsgf {path} x") == "syntax error"
    assert err(eng, f"loadsgf {path} 0") == "syntax error"
    assert err(eng, f"loadsgf {path} 1 2") == "syntax error"
    assert err(eng, f"loadsgf {tmp_path}") == "cannot load file"  # a folder


def test_printsgf_round_trip(eng, tmp_path):
    session(eng, "boardsize 9", "komi 7.5", "play b E5", "play w D5", "play b pass")
    sgf = ok(eng, "printsgf")
    assert sgf.startswith("(;") and sgf.endswith(")")
    assert "SZ[9]" in sgf and "KM[7.5]" in sgf and ";B[ee]" in sgf and ";W[de]" in sgf
    before = snapshot(eng)
    path = tmp_path / "out.sgf"
    assert ok(eng, f"printsgf {path}") == ""
    session(eng, "clear_board", f"loadsgf {path}")
    assert snapshot(eng) == before
    assert ok(eng, "printsgf") == sgf


def test_printsgf_handicap(eng):
    session(eng, "boardsize 19", "fixed_handicap 2", "play w Q4")
    sgf = ok(eng, "printsgf")
    assert "HA[2]" in sgf and "AB[dp][pd]" in sgf and ";W[pp]" in sgf


# --- the process ------------------------------------------------------------------------

def test_gtp_main_round_trip():
    script = (b"1 name\r\n# comment\n\n2 boardsize 9\n3 play b e5\n\xff\xfe\n"
              b"4 list_stones black\n5 genmove w\n6 quit\n7 name\n")
    done = subprocess.run([sys.executable, "gtp_main.py", "--seed", "1"], input=script,
                          capture_output=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    answers = done.stdout.decode().split("\n\n")
    assert answers[:5] == ["=1 fuseki", "=2", "=3", "? unknown command", "=4 E5"]
    assert answers[5].startswith("=5 ") and answers[6:] == ["=6", ""]


def test_gtp_main_bad_config_is_one_line(tmp_path):
    bad = write(tmp_path, "[game]\nboard_size = 40\n", "bad.toml")
    done = subprocess.run([sys.executable, "gtp_main.py", "--config", str(bad)],
                          input=b"name\n", capture_output=True, cwd=ROOT, timeout=60)
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr.decode().count("\n") == 1 and "game.board_size" in done.stderr.decode()


def test_printsgf_keeps_setup_order(eng, tmp_path):
    path = write(tmp_path, "(;SZ[5]AB[aa][bb];AE[aa];AW[aa];B[cc])")
    ok(eng, f"loadsgf {path}")
    before = snapshot(eng)
    assert diagram_stones(eng) == ({"B4", "C3"}, {"A5"})
    sgf = ok(eng, "printsgf")
    again = write(tmp_path, sgf, "again.sgf")
    session(eng, "clear_board", f"loadsgf {again}")
    assert snapshot(eng) == before


def test_setup_commands_load_neither_numpy_nor_numba_nor_sgfmill():
    """The first answers must not wait for numba (start-up budget 0.3 s): the board comes lazily."""
    code = ("import sys; from fuseki.engine.gtp.commands import new_engine; e = new_engine()\n"
            "for line in ('name', 'list_commands', 'known_command play', 'boardsize 9', 'komi 6.5',\n"
            "             'clear_board', 'time_settings 1 1 1', 'kgs-rules chinese'):\n"
            "    assert e.handle_line(line).startswith('=')\n"
            "print([m for m in ('numpy', 'numba', 'sgfmill', 'fuseki.engine.core.board') if m in sys.modules])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, cwd=ROOT, timeout=60)
    assert done.stdout.decode().strip() == "[]", done.stderr


@pytest.mark.parametrize("size, stars", [(9, 5), (13, 5), (19, 9), (8, 4), (6, 0)])
def test_showboard_star_points(eng, size, stars):
    ok(eng, f"boardsize {size}")
    assert ok(eng, "showboard").count("+") == stars
