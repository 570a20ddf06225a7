"""``fuseki match``: real games between fuseki instances (and GNU Go, slow), fake engines for
every way an engine can lose by misbehaving, resuming, openings, and the table's arithmetic."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
from sgfmill import sgf

from fuseki.book.ui import fuseki_command
from fuseki.engine.core import base
from fuseki.engine.core.board import Board
from fuseki.engine.players.match import Match
from fuseki.engine.players.match_game import MatchConfig, MatchError, Player, parse_score, repeats
from fuseki.engine.players.match_report import elo, load_openings, results_table, wilson

from conftest import GNUGO, needs_gnugo
from services import fake_command

ROOT = Path(__file__).resolve().parent.parent
FUSEKI = f"{sys.executable} {ROOT / 'gtp_main.py'}"


def quiet_match(config: MatchConfig) -> tuple[list[dict], list[str]]:
    log: list[str] = []
    return Match(config, log=log.append).run(), log


def replay(path: Path, size: int) -> tuple[Board, sgf.Sgf_game]:
    """The SGF's main line replayed with the rules core; fails the test on an illegal move."""
    tree = sgf.Sgf_game.from_bytes(path.read_bytes())
    assert tree.get_size() == size
    board = Board(size, komi=tree.get_komi())
    for node in tree.get_main_sequence()[1:]:
        colour, move = node.get_move()
        point = base.PASS if move is None else base.xy_to_point(move[1], size - 1 - move[0], size)
        board.play(1 if colour == "b" else 2, point)
    return board, tree


def check_table_adds_up(results: list[dict], table: str) -> None:
    n = len(results)
    a_wins = sum(r["winner"] == "A" for r in results)
    b_wins = sum(r["winner"] == "B" for r in results)
    draws = sum(r["winner"] is None for r in results)
    assert a_wins + b_wins + draws == n
    black = sum(r["winner"] == r["black"] for r in results)
    white = sum(r["winner"] == r["white"] for r in results)
    assert black + white + draws == n
    assert f"{n} games" in table
    assert f"Black won {black}, White won {white}, drawn {draws}" in table
    rows = [line for line in table.splitlines() if line.startswith(("A: ", "B: "))]
    for row, wins, losses in zip(rows, (a_wins, b_wins), (b_wins, a_wins)):
        numbers = row[40:].split()
        assert numbers[:3] == [str(wins), str(draws), str(losses)]
        as_black, as_white = numbers[3], numbers[4]
        won = int(as_black.split("/")[0]) + int(as_white.split("/")[0])
        played = int(as_black.split("/")[1]) + int(as_white.split("/")[1])
        assert (won, played) == (wins, n)


def test_fuseki_against_fuseki(tmp_path):
    config = MatchConfig(black=f"{FUSEKI} --seed 1", white=f"{FUSEKI} --seed 2", games=4, size=5,
                         alternate=True, sgf_dir=str(tmp_path), parallel=2, stderr_comments=True)
    results, log = quiet_match(config)
    assert [r["game"] for r in results] == [0, 1, 2, 3]
    assert [r["black"] for r in results] == ["A", "B", "A", "B"]
    assert len(log) == 4
    for r in results:
        assert r["fault"] is None and r["reason"] == "two passes"
        board, tree = replay(tmp_path / r["sgf"], 5)
        assert len(board.moves) == r["moves"]
        assert board.moves[-2:] == [(1, base.PASS), (2, base.PASS)] or \
            board.moves[-2:] == [(2, base.PASS), (1, base.PASS)]
        root = tree.get_root()
        assert root.get("RE") == r["result"] and root.get("PB").startswith("fuseki")
        # fuseki's scores are area counts, so all three scorers agree here
        assert parse_score(r["result"]) == board.score()
    check_table_adds_up(results, results_table(results, config))
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    assert [json.loads(line)["game"] for line in lines] == [0, 1, 2, 3]


def test_repeated_games_are_found_and_seeds_make_games_differ(tmp_path):
    # deterministic engines replay one game (and one with colours swapped)
    same = MatchConfig(black=fake_command(tmp_path, "one"), white=fake_command(tmp_path, "two"), games=4, size=5,
                       alternate=True, max_moves=8)
    results, log = quiet_match(same)
    assert repeats(results) == {2: 0, 3: 1}
    table = results_table(results, same)
    assert "Distinct games: 2 of 4 (game 3 = game 1, game 4 = game 2 repeat an earlier game's moves)" in table
    assert "A over the distinct games:" in table and "of 2" in table
    assert any("the same moves as game 1" in line for line in log)
    # {seed}: each game starts its engines with seed + game number
    seeded = MatchConfig(black=f"{FUSEKI} --seed {{seed}}", white=f"{FUSEKI} --seed {{seed}}", games=4, size=5,
                         alternate=True, seed=10)
    results, _ = quiet_match(seeded)
    assert [r["seed"] for r in results] == [10, 11, 12, 13]
    assert repeats(results) == {} and len({r["fingerprint"] for r in results}) == 4
    assert "Distinct games: 4 of 4" in results_table(results, seeded)


def test_resume_plays_only_missing_games(tmp_path):
    config = MatchConfig(black=fake_command(tmp_path, "one"), white=fake_command(tmp_path, "two"),
                         games=2, size=5, max_moves=6, sgf_dir=str(tmp_path / "m"))
    first, _ = quiet_match(config)
    path = tmp_path / "m" / "results.jsonl"
    path.write_text(path.read_text() + '{"game": 3, "truncated by a cra')  # a torn last line
    config.games = 4
    results, log = quiet_match(config)
    assert results[:2] == first
    assert [r["game"] for r in results] == [0, 1, 2, 3]
    assert log[0].startswith("fuseki match: resuming, 2 games")
    assert len(log) == 3  # the resume note and two games
    assert all(r["reason"] == "move cap" and r["moves"] == 6 for r in results)
    _, log = quiet_match(config)
    assert len(log) == 1  # nothing left to play
    other = MatchConfig(black=config.black, white=config.white, games=4, size=7, sgf_dir=config.sgf_dir)
    with pytest.raises(MatchError, match="another match"):
        Match(other)
    running = Match(config, log=log.append)  # holds the folder until its run() ends
    with pytest.raises(MatchError, match="another match is running"):
        Match(config)
    running.run()
    Match(config).run()


@pytest.mark.parametrize("what, kind, result", [
    ("illegal", "illegal move", "B+F"), ("garbage", "protocol error", "B+F"),
    ("crash", "crash", "B+F"), ("hang", "timeout", "B+T"), ("error", "protocol error", "B+F")])
def test_faults_lose_and_are_named(tmp_path, what, kind, result):
    config = MatchConfig(black=fake_command(tmp_path, "good"),
                         white=fake_command(tmp_path, "bad", what, "2"),
                         games=2, size=5, sgf_dir=str(tmp_path / "m"), max_moves=8,
                         timeout=3.0 if what == "hang" else 60.0)  # every good answer has its time, loaded
    results, _ = quiet_match(config)
    r = results[0]
    assert (r["winner"], r["result"], r["reason"]) == ("A", result, kind)
    assert r["fault"]["engine"] == "B" and r["moves"] == 3
    # game 2 was played: a dead or babbling B was restarted (and misbehaves again on its 2nd genmove)
    assert results[1]["moves"] >= 3 and results[1]["reason"] in ("move cap", kind)
    table = results_table(results, config)
    assert f"{kind} by B" in table and f"game 1: B {kind}" in table
    board, tree = replay(tmp_path / "m" / r["sgf"], 5)
    assert tree.get_root().get("RE") == result
    assert kind in tree.get_last_node().get("C")


def test_an_engine_that_loads_longer_than_the_timeout_for_a_move_starts(tmp_path):
    """An engine's first answers (name, version, list_commands) wait ``START_WAIT``, not the
    match's --timeout: a network that takes longer to load than a move may take is no fault."""
    slow = Player("A", fake_command(tmp_path, "slow", "slow-start", "0"), timeout=0.5)
    try:
        slow.start()  # 1.5 s before its first answer
        assert slow.name == "slow 1.0" and "genmove" in slow.client.list_commands()
    finally:
        slow.stop()


def test_engine_that_cannot_start_loses(tmp_path):
    config = MatchConfig(black=str(tmp_path / "missing"), white=fake_command(tmp_path),
                         games=1, size=5, max_moves=4)
    (r,), _ = quiet_match(config)
    assert (r["winner"], r["reason"], r["moves"]) == ("B", "crash", 0)


def test_resignation_and_openings(tmp_path):
    folder = tmp_path / "openings"
    folder.mkdir()
    (folder / "o1.sgf").write_text("(;SZ[5];B[cc];W[bb])")
    config = MatchConfig(black=fake_command(tmp_path, "good"),
                         white=fake_command(tmp_path, "q", "resign", "1", "resign", "2"),
                         games=2, size=5, max_moves=20, openings=load_openings(str(folder), 5),
                         sgf_dir=str(tmp_path / "m"))
    results, _ = quiet_match(config)
    assert [r["black"] for r in results] == ["A", "B"]
    assert [r["opening"] for r in results] == ["o1.sgf", "o1.sgf"]
    # game 1: A (black) moves after the opening, B resigns at its first genmove
    assert results[0]["result"] == "B+R" and results[0]["winner"] == "A" and results[0]["moves"] == 3
    # game 2: B is Black and resigns at once
    assert results[1]["result"] == "W+R" and results[1]["winner"] == "A" and results[1]["moves"] == 2
    board, tree = replay(tmp_path / "m" / results[0]["sgf"], 5)
    first = tree.get_main_sequence()[1]
    assert first.get_move() == ("b", (2, 2)) and first.get("C") == "opening"
    (folder / "bad.sgf").write_text("(;SZ[5];B[cc];W[cc])")
    with pytest.raises(MatchError, match="illegal move 2"):
        load_openings(str(folder), 5)
    with pytest.raises(MatchError, match="board size"):
        load_openings(str(folder), 9)


def test_scores_and_statistics():
    assert [parse_score(t) for t in ("B+3.5", "W+2", "0", "Jigo", "B+R", "", None)] == \
        [3.5, -2.0, 0.0, 0.0, None, None, None]
    low, high = wilson(5, 10)
    assert math.isclose(low, 0.2366, abs_tol=1e-3) and math.isclose(high, 0.7634, abs_tol=1e-3)
    assert wilson(0, 10)[0] == 0 and wilson(10, 10)[1] == 1
    assert elo(0.5) == 0 and math.isclose(elo(0.75), 190.85, abs_tol=0.01)
    assert elo(1.0) == math.inf and elo(0.0) == -math.inf
    results = [{"game": i, "black": b, "white": "B" if b == "A" else "A", "winner": w,
                "result": "?", "reason": "two passes", "fault": None, "names": {}}
               for i, (b, w) in enumerate([("A", "A"), ("B", "A"), ("A", None), ("B", "B")])]
    config = MatchConfig(black="x", white="y", games=4, size=9)
    table = results_table(results, config)
    check_table_adds_up(results, table)
    assert "62.5%" in table and "37.5%" in table


def test_cli(tmp_path, capsys):
    code = fuseki_command.main(["match", "--black", fake_command(tmp_path), "--white", fake_command(tmp_path),
                     "--games", "2", "--size", "5", "--max-moves", "4", "--sgf-dir", str(tmp_path / "m")])
    assert code == 0
    out = capsys.readouterr().out
    assert "2 games, 5x5" in out and (tmp_path / "m" / "results.txt").read_text().strip() == out.strip()
    assert fuseki_command.main(["match", "--black", "x", "--white", "y", "--games", "0"]) == 1
    assert fuseki_command.main(["match", "--black", "x", "--white", "y", "--games", "1",
                     "--adjudicate-resign", "3"]) == 1


@pytest.mark.slow
@needs_gnugo
def test_fuseki_against_gnugo_with_referee(tmp_path):
    gnugo = f"{GNUGO} --mode gtp --level 0"
    config = MatchConfig(black=f"{FUSEKI} --seed 5", white=gnugo, games=2, size=9, alternate=True,
                         referee=f"{GNUGO} --mode gtp --chinese-rules --level 0", sgf_dir=str(tmp_path),
                         parallel=2, adjudicate_resign=2, adjudicate_margin=30, adjudicate_every=10)
    results, _ = quiet_match(config)
    for r in results:
        assert r["fault"] is None
        assert r["winner"] == "B"  # random play does not beat GNU Go
        assert r["reason"] == "adjudicated"  # random play falls far behind within 40 moves
        if r["reason"] == "two passes":
            assert r["scorer"] == "referee"
        board, tree = replay(tmp_path / r["sgf"], 9)
        assert len(board.moves) == r["moves"]
        assert "GNU Go" in tree.get_root().get("PW" if r["white"] == "B" else "PB")
    check_table_adds_up(results, results_table(results, config))
