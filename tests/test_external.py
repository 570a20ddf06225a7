"""The external-engine chooser (``--fallback-engine``): kept in step, and never trusted.

Fake engines (tests/services.py's FAKE_ENGINE) drive the error paths;
GNU Go (slow, skipped when missing) checks that the engine really holds
fuseki's position through handicap, undo and loadsgf.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from fuseki.engine.config import Settings
from fuseki.engine.core.base import BLACK, WHITE
from fuseki.engine.gtp.commands import new_engine
from fuseki.engine.players import engine_chain
from fuseki.engine.players.chooser import Chooser, MoveChoice
from fuseki.engine.players.gtp_client import GtpClient

from conftest import GNUGO, needs_gnugo
from services import fake_command

ROOT = Path(__file__).resolve().parent.parent


class Script(Chooser):
    """A chooser playing given points in turn, then None (like a book running out)."""

    name = "script"

    def __init__(self, *points):
        self.points = list(points)

    def choose(self, board, color):
        return MoveChoice(self.points.pop(0), self.name) if self.points else None


def run(engine, *lines):
    """The response texts (without '= ') of ``lines``; a '?' response fails the test."""
    out = []
    for line in lines:
        response = engine.handle_line(line)
        assert response.startswith("="), (line, response)
        out.append(response[1:].strip())
    return out


@pytest.fixture
def engines():
    made = []

    def make(command, chooser=None, size=5, timeout=None):
        settings = Settings(board_size=size, seed=1, fallback_engine=command)
        engine = new_engine(settings)  # the chain fuseki-gtp builds: [chooser,] engine, random
        engine.game.chain = engine_chain(settings, engine.game)
        if chooser is not None:
            engine.game.chain.choosers.insert(0, chooser)
        if timeout is not None:
            engine.game.referee.timeout = timeout
        made.append(engine)
        return engine

    yield make
    for e in made:
        e.game.referee.close()


def legal_answer(engine, colour="b"):
    """genmove's answer, checked to be a legal move that was played."""
    before = len(engine.game.record)
    (answer,) = run(engine, f"genmove {colour}")
    assert answer != "resign" and len(engine.game.record) == before + 1
    return answer


def test_answers_genmove_and_hears_book_moves(engines, tmp_path):
    from fuseki.engine.core import base

    engine = engines(fake_command(tmp_path), chooser=Script(base.vertex_to_point("A1", 5)))
    assert run(engine, "genmove b") == ["A1"]        # the "book"
    assert run(engine, "genmove w") == ["B1"]        # the engine, told A1 is taken
    assert run(engine, "play b C1", "genmove w") == ["", "D1"]
    assert [e[2] for e in engine.game.record] == [base.vertex_to_point(v, 5)
                                                   for v in ("A1", "B1", "C1", "D1")]


@pytest.mark.parametrize("what", ["resign", "pass"])
def test_resign_and_pass_pass_through(engines, tmp_path, what):
    engine = engines(fake_command(tmp_path, "fake", what, "1"))
    assert run(engine, "genmove b") == [what]
    assert len(engine.game.record) == (0 if what == "resign" else 1)
    assert engine.game.board.to_move == (BLACK if what == "resign" else WHITE)


@pytest.mark.parametrize("what, says", [("garbage", "not GTP"), ("crash", "exited"),
                                        ("hang", "within"), ("illegal", "illegal move"),
                                        ("error", "failed")])
def test_broken_engine_means_fuseki_plays_on(engines, tmp_path, capsys, what, says):
    engine = engines(fake_command(tmp_path, "fake", what, "2"))  # a minute for each good answer
    assert legal_answer(engine, "b") == "A1"
    engine.game.referee.timeout = 1.0  # and a second for the one that hangs
    legal_answer(engine, "w")  # the engine misbehaves: a random legal move instead
    err = capsys.readouterr().err
    assert "fallback engine" in err and says in err and "rest of this game" in err
    external = engine.game.referee
    assert external.disabled
    for colour in "bwb":  # not asked again in this game
        legal_answer(engine, colour)
    assert "fallback engine" not in capsys.readouterr().err
    external.timeout = 60.0
    run(engine, "clear_board")  # a new game gives it another chance (restarted if it died)
    assert legal_answer(engine, "b") == "A1"
    assert not external.disabled


def test_killed_engine_mid_game(engines, tmp_path, capsys):
    engine = engines(fake_command(tmp_path))
    run(engine, "genmove b", "genmove w")
    engine.game.referee.client.kill()
    legal_answer(engine, "b")
    assert "is gone" in capsys.readouterr().err
    assert engine.game.referee.disabled  # the random chooser for the rest of the game
    run(engine, "clear_board")
    assert run(engine, "genmove b") == ["A1"]  # restarted for the next game
    assert engine.game.referee.starts == 2


def test_missing_engine(engines, tmp_path, capsys):
    engine = engines(str(tmp_path / "no-such-engine --mode gtp"))
    legal_answer(engine, "b")
    assert "cannot start" in capsys.readouterr().err


def test_undo_and_reg_genmove_keep_it_in_step(engines, tmp_path):
    engine = engines(fake_command(tmp_path))
    assert run(engine, "genmove b", "genmove w", "genmove b", "genmove w", "undo", "undo") == \
        ["A1", "B1", "C1", "D1", "", ""]
    # the fake knows undo (as a no-op), so no restart was needed: it still has A1-D1 seen
    assert run(engine, "genmove b") == ["E1"]
    assert run(engine, "reg_genmove w") == ["A2"]
    assert len(engine.game.record) == 3
    # taking back the whole game is cheaper as a fresh start: the fake forgets what it saw
    assert run(engine, "undo", "undo", "undo", "genmove b") == ["", "", "", "A1"]


def test_cleanup_asks_the_engine_for_its_cleanup_move(engines, tmp_path):
    engine = engines(fake_command(tmp_path, "fake", "pass", "1"))
    # its kgs-genmove_cleanup (the last free point), not its genmove (which passes)
    assert run(engine, "play b A1", "kgs-genmove_cleanup w") == ["", "E5"]
    assert run(engine, "genmove b") == ["pass"]
    assert run(engine, "kgs-genmove_cleanup w") == ["D5"]  # in step: it knows E5 was played
    assert len(engine.game.record) == 4


def test_cleanup_without_the_engine_command_is_fuseki_own_move(engines, tmp_path):
    engine = engines(fake_command(tmp_path, "fake", "no-cleanup", "0", "pass", "1"))
    for colour in "bwb":
        (answer,) = run(engine, f"kgs-genmove_cleanup {colour}")
        assert answer != "pass"
    # its plain genmove was not asked in the cleanup: the first one still passes
    assert run(engine, "genmove w") == ["pass"]


def test_setup_removal_costs_one_question(engines, tmp_path, capsys):
    sgf = tmp_path / "ae.sgf"
    sgf.write_text("(;SZ[5]AB[aa][bb];AE[aa];B[cc])")
    engine = engines(fake_command(tmp_path))
    run(engine, f"loadsgf {sgf}")
    legal_answer(engine, "w")
    assert "cannot follow" in capsys.readouterr().err
    assert not engine.game.referee.disabled


# --- GNU Go ---------------------------------------------------------------------------------

def gnugo_stones(engine):
    client = engine.game.referee.client
    return [sorted(client.send(f"list_stones {c}").upper().split()) for c in ("black", "white")]


def our_stones(engine):
    return [sorted(run(engine, f"list_stones {c}")[0].upper().split()) for c in ("black", "white")]


def empty_point(engine):
    taken = {v for colour in our_stones(engine) for v in colour}
    return next(v for v in ("E5", "D2", "F3", "B8", "H2") if v not in taken)


@pytest.mark.slow
@needs_gnugo
def test_gnugo_in_step_through_handicap_undo_and_loadsgf(engines, tmp_path):
    engine = engines(f"{GNUGO} --mode gtp --level 0", size=9)
    run(engine, "komi 0.5", "fixed_handicap 2", "genmove w")
    run(engine, f"play b {empty_point(engine)}", "genmove w")  # (GNU Go's moves vary from run to run)
    assert gnugo_stones(engine) == our_stones(engine)
    run(engine, "undo", "undo", f"play w {empty_point(engine)}", "genmove b")
    assert gnugo_stones(engine) == our_stones(engine)
    assert float(engine.game.referee.client.send("get_komi")) == 0.5
    sgf = tmp_path / "g.sgf"
    sgf.write_text("(;SZ[9]KM[6.5]AB[cc][gg]AW[cg];W[ee];B[ec];W[ce])")
    run(engine, f"loadsgf {sgf}", "genmove b")
    assert gnugo_stones(engine) == our_stones(engine)
    run(engine, "time_settings 300 30 5", "time_left b 250 0", "boardsize 7", "genmove b")
    assert gnugo_stones(engine) == our_stones(engine)
    for _ in range(60):
        if run(engine, "genmove w", "genmove b")[-1] == "resign":
            break
    assert gnugo_stones(engine) == our_stones(engine)
    client = engine.game.referee.client
    assert run(engine, "final_score") == [client.send("final_score")]
    assert run(engine, "final_status_list dead") == [client.send("final_status_list dead")]
    run(engine, "clear_board", "genmove b")
    client.kill()  # GNU Go killed mid-game: fuseki still answers, with a legal move
    for colour in "wbw":
        legal_answer(engine, colour)


# 9x9, komi 0.5: a black wall on column E, a white wall on column F, and a dead black
# stone at H3 inside White's area.  GNU Go's genmove passes as White; its cleanup does not.
CLEANUP_POSITION = ([f"play b E{row}" for row in range(1, 10)] + [f"play w F{row}" for row in range(1, 10)]
                    + ["play b H3"])


@pytest.mark.slow
@needs_gnugo
def test_gnugo_cleans_up_dead_stones_instead_of_passing(engines):
    engine = engines(f"{GNUGO} --mode gtp --level 0", size=9)
    run(engine, "komi 0.5", *CLEANUP_POSITION)
    assert run(engine, "reg_genmove w") == ["pass"]  # why plain genmove is not enough
    moves = []
    for colour in "wb" * 30:
        moves += run(engine, f"kgs-genmove_cleanup {colour}")
        if moves[-2:] == ["pass", "pass"]:
            break
    assert moves[0] != "pass"
    assert "H3" not in our_stones(engine)[0]  # the dead stone was captured
    assert gnugo_stones(engine) == our_stones(engine)


@pytest.mark.slow
@needs_gnugo
def test_fuseki_gtp_with_gnugo_behind(tmp_path):
    command = [sys.executable, str(ROOT / "gtp_main.py"), "--seed", "3", "--size", "9",
               "--fallback-engine", f"{GNUGO} --mode gtp --level 0"]
    with GtpClient(command, cwd=str(ROOT), timeout=60) as c:
        moves = [c.send("genmove b"), c.send("genmove w")]
        assert all(m and m != "resign" for m in moves)
        # gnugo opens on the star points or the centre, never on the first line like random moves
        assert moves[0][0] in "CDEFG" and moves[0][1:] in "34567"
        assert c.send("final_score")
