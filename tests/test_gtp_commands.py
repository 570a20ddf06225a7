"""GTP commands beyond playing moves, driven in-process through ``GtpEngine.handle_line``:
handicap, scoring, time, KGS, loadsgf/printsgf, and the ``gtp_main.py`` process itself.

The helpers are test_gtp.py's (tests/gtpsession.py): transcripts written as GTP sessions, every failing command
checked to leave the board as it was.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fuseki.engine.config import Settings
from fuseki.engine.gtp.commands import new_engine

from gtpsession import diagram_stones, err, ok, session, snapshot

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def eng():
    return new_engine(Settings(seed=1), log=lambda text: None)


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
