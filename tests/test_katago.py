"""KataGo's analysis-engine client: golden answers of a real KataGo, faults, and the real one.

- Golden files (``tests/golden/katago/*.jsonl``, recorded by ``record.py`` beside them from a
  real KataGo v1.17.1 with the b18c384nbt network): the parser reads the recorded answers,
  errors and warnings; a replaying program plays them back through the whole client, out of
  order.  No KataGo runs.
- Faults, with tiny fake programs (``FAKE_KATAGO``): KataGo missing, exiting at start,
  answering garbage, hanging, not reading, crashing mid-query; ``close`` leaves no process
  behind.  And ``book.analysis.ai.AiJudge`` with the fake: one query per position whatever the
  orientation, and a run stopped half-way keeps what it got.
- The real KataGo (slow; needs ``bash .ci/katago``): a wrong model path, and one position
  entered in all 8 orientations gives the same values mapped onto the right points.
  Skipped, with the reason, when ``.ci/katago`` has not run; a failure under
  ``FUSEKI_REQUIRE_SERVICES=1``, since ``.ci/setup`` runs it.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from fuseki.book.analysis.katago import (
    KataGo,
    KataGoError,
    KataGoQueryError,
    KataGoTimeout,
    make_query,
    parse_analysis,
)
from fuseki.engine.core import base, coords

from services import FAKE_KATAGO, GOLDEN, real_katago_command


def events(name: str) -> list[dict]:
    return [json.loads(line) for line in (GOLDEN / name).read_text().splitlines()]


def sent_queries(name: str) -> dict[str, dict]:
    out = {}
    for e in events(name):
        if "sent" in e:
            try:
                q = json.loads(e["sent"])
            except ValueError:
                continue
            out[q["id"]] = q
    return out


def received(name: str) -> list[dict]:
    return [json.loads(e["received"]) for e in events(name) if "received" in e]


# --- the parser against recorded answers -------------------------------------------------------

def test_golden_answers_parse_into_values_for_the_player_who_moves():
    queries = sent_queries("positions.jsonl")
    answers = [a for a in received("positions.jsonl") if "moveInfos" in a]
    assert sorted((a["id"], a["turnNumber"]) for a in answers) == [("empty", 0), ("opening", 3), ("opening", 4)]
    for answer in answers:
        analysis = parse_analysis(answer, queries[answer["id"]])
        assert analysis.to_play == {0: "B", 3: "W", 4: "B"}[analysis.turn]
        assert [m.order for m in analysis.moves] == list(range(len(analysis.moves)))
        best = analysis.best()
        assert best.loss == 0.0
        for m in analysis.moves:
            info = next(i for i in answer["moveInfos"] if i["move"] == m.move)
            assert m.visits == info["visits"] and m.winrate == info["winrate"]
            assert m.loss == pytest.approx(best.score_lead - info["scoreLead"])
            assert 0.0 <= m.winrate <= 1.0
        assert analysis.visits == answer["rootInfo"]["visits"] >= 8
        assert len(analysis.policy) == 19 * 19 + 1
        top = max(range(362), key=lambda i: answer["policy"][i])
        assert analysis.policy_best() == analysis.policy_vertex(top)
        assert analysis.policy_of(analysis.policy_best()) == answer["policy"][top]
        # a stone already on the board is illegal: policy -1 there
        for _color, vertex in queries[answer["id"]]["moves"][:analysis.turn]:
            assert analysis.policy_of(vertex) == -1


def test_golden_values_are_for_the_side_to_move():
    """White to move after 3 moves, then Black after White's reply: from one side's view each,
    the two win rates add to about 1 (from Black's view both they would be about equal)."""
    queries = sent_queries("positions.jsonl")
    turns = {a["turnNumber"]: parse_analysis(a, queries["opening"])
             for a in received("positions.jsonl") if a.get("id") == "opening"}
    assert (turns[3].to_play, turns[4].to_play) == ("W", "B")
    assert turns[3].winrate + turns[4].winrate == pytest.approx(1.0, abs=0.05)
    assert turns[3].winrate - turns[4].winrate > 0.1  # komi 7.5: White is ahead here


def test_policy_indices_name_the_points_katago_means():
    analysis = parse_analysis(
        {"id": "x", "turnNumber": 0, "moveInfos": [], "policy": [0.0] * 362,
         "rootInfo": {"visits": 1, "winrate": 0.5, "scoreLead": 0.0}},
        make_query("x", []))
    assert analysis.policy_vertex(0) == "A19"
    assert analysis.policy_vertex(18) == "T19"
    assert analysis.policy_vertex(19) == "A18"
    assert analysis.policy_vertex(360) == "T1"
    assert analysis.policy_vertex(361) == "pass"


def test_golden_error_answers_are_recorded_with_their_fields():
    errors = {a.get("id"): a for a in received("errors.jsonl") if "error" in a}
    assert "illegal" in errors and "badkomi" in errors and errors["badkomi"]["field"] == "komi"
    assert None in errors  # the line that is not JSON: a general error without an id
    warnings = [a for a in received("errors.jsonl") if "warning" in a]
    assert any(w["id"] == "unknownfield" for w in warnings)


def test_the_parser_names_an_answer_that_is_not_an_analysis():
    with pytest.raises(KataGoError, match="lacks an analysis field"):
        parse_analysis({"id": "x", "turnNumber": 0}, make_query("x", []))


# --- the whole client against a replay of the recording, and against faults -------------------

@pytest.fixture
def fake(tmp_path):
    script = tmp_path / "fake_katago.py"
    script.write_text(FAKE_KATAGO)

    def command(*args: str) -> str:
        return shlex.join([sys.executable, str(script), *args])
    return command


def test_replayed_answers_come_back_to_their_queries_out_of_order(fake):
    queries = sent_queries("positions.jsonl")
    with KataGo(fake("replay", str(GOLDEN / "positions.jsonl"), "2"), timeout=30) as katago:
        assert katago.version == "1.17.1"
        empty, opening = katago.send(queries["empty"]), katago.send(queries["opening"])
        got = opening.result()
        assert [a.turn for a in got] == [3, 4] and {a.id for a in got} == {"opening"}
        assert [a.id for a in empty.result()] == ["empty"]


def test_replayed_errors_raise_for_their_query_and_warnings_ride_along(fake):
    queries = sent_queries("errors.jsonl")
    with KataGo(fake("replay", str(GOLDEN / "errors.jsonl"), "1"), timeout=30) as katago:
        with pytest.raises(KataGoQueryError) as caught:
            katago.send(queries["badkomi"]).result()
        assert caught.value.field == "komi" and "komi" in str(caught.value)
        with pytest.raises(KataGoQueryError, match="(?i)illegal"):
            katago.send(queries["illegal"]).result()
        [analysis] = katago.send(queries["unknownfield"]).result()  # still usable
        assert any("noSuchField" in w for w in analysis.warnings)


def test_missing_katago_says_how_to_get_one():
    with pytest.raises(KataGoError, match="cannot start KataGo.*docs/katago.md"):
        KataGo("/nowhere/katago analysis -model m -config c")


def test_katago_exiting_at_start_says_why(fake):
    with pytest.raises(KataGoError, match="exit code 1.*could not open model file.*-model"):
        KataGo(fake("exit"), start_timeout=60)


def test_gtp_instead_of_analysis_is_named(fake):
    with pytest.raises(KataGoError, match="not JSON.*katago analysis"):
        KataGo(fake("garbage"), start_timeout=60)


def test_a_hanging_katago_times_out_and_the_client_stays_usable(fake):
    with KataGo(fake("hang"), timeout=60) as katago:
        with pytest.raises(KataGoTimeout, match="within 0.3s"):
            katago.analyze([("B", "Q16")], max_visits=1, timeout=0.3)
        assert katago.alive()
        with pytest.raises(KataGoTimeout):
            katago.analyze([], max_visits=1, timeout=0.3)


def test_terminate_all_ends_every_query_in_flight_at_once_and_the_client_stays_usable(fake):
    """``terminate_all`` (the web page's positions left): each waiter is told at once, however
    long KataGo would take (this one never answers), and the client still takes queries."""
    from fuseki.book.analysis.katago import KataGoTerminated

    with KataGo(fake("hang"), timeout=60) as katago:
        first, second = katago.submit([], max_visits=1), katago.submit([("B", "Q16")], max_visits=1)
        assert katago.in_flight() == 2
        assert katago.terminate_all() == 2 and katago.in_flight() == 0
        for pending in (first, second):
            with pytest.raises(KataGoTerminated):
                pending.result(timeout=60)  # at once: KataGo never answers
        assert katago.alive() and katago.terminate_all() == 0
        later = katago.submit([], max_visits=1)
        assert katago.in_flight() == 1 and not later.done.is_set()


def test_a_katago_that_stops_reading_never_blocks_the_caller(fake):
    with KataGo(fake("deaf"), timeout=60) as katago:
        sent = []
        caller = threading.Thread(target=lambda: sent.append(  # 1 MB: far over a pipe's buffer
            katago.submit([], max_visits=1, override={"padding": "x" * (1 << 20)})))
        caller.start()
        caller.join(timeout=30)  # generous: submitting only queues the line
        assert not caller.is_alive() and len(sent) == 1
        with pytest.raises(KataGoTimeout):
            sent[0].result(timeout=0.3)


def test_a_crash_fails_the_query_and_every_later_one(fake):
    with KataGo(fake("crash"), timeout=60) as katago:
        with pytest.raises(KataGoError, match="exit code 3.*segfault-ish"):
            katago.analyze([], max_visits=1)
        started = time.monotonic()
        with pytest.raises(KataGoError, match="exit code 3"):
            katago.analyze([], max_visits=1)
        assert time.monotonic() - started < 30  # at once, not after a time-out (generous)


def _gone(pid: int, deadline: float = 30.0) -> bool:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:  # a zombie child of ours counts as gone once reaped by init; check its state
            if Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
                return True
        except OSError:
            return True
        time.sleep(0.05)
    return False


def test_close_leaves_no_process_behind(fake):
    katago = KataGo(fake("spawn"), timeout=60)
    deadline = time.monotonic() + 30
    while not katago.stderr_lines() and time.monotonic() < deadline:
        time.sleep(0.05)
    child = int(katago.stderr_lines()[0])
    katago.close()
    assert katago.proc.poll() is not None
    try:
        assert _gone(child)
    finally:  # a failure must not leave the child behind either
        try:
            os.kill(child, signal.SIGKILL)
        except ProcessLookupError:
            pass
    with pytest.raises(KataGoError, match="closed"):
        katago.analyze([])


# --- the real KataGo -----------------------------------------------------------------------------

@pytest.mark.slow
def test_real_katago_with_a_wrong_model_says_so():
    command = shlex.split(real_katago_command())
    command[command.index("-model") + 1] = "/nowhere/model.bin.gz"
    with pytest.raises(KataGoError, match="KataGo exited.*-model"):
        KataGo(command, start_timeout=300)


def orient(moves, n: int, size: int = 19):
    return [(c, base.point_to_vertex(coords.transform_point(n, base.vertex_to_point(v, size), size), size))
            for c, v in moves]


POSITIONS = [
    [("B", "Q16"), ("W", "D4"), ("B", "R4")],
    [("B", "R16"), ("W", "D17"), ("B", "C4"), ("W", "Q3"), ("B", "E3")],
]


def image(vertex: str, n: int, size: int = 19) -> str:
    return orient([("B", vertex)], n, size)[0][1]


ORIENTATIONS = (0, 1, 3)  # the identity, then two generators of the 8 symmetries (transform_xy's numbers)


@pytest.mark.slow
def test_real_katago_gives_the_same_values_in_the_orientations_that_generate_the_8(real_katago):
    """KataGo's values of a position entered in three orientations.  The root's network
    evaluation averaged over the 8 symmetries (``rootNumSymmetriesToSample``) makes the policy
    and the raw values independent of the orientation up to rounding: they must land on the
    mapped points.  Two visits: the second goes to the policy-best move, which must be the
    candidate KataGo names; its searched values come from one network evaluation in a random
    symmetry, so they agree only roughly.  One position; the cache test below evaluates the
    other.  The session's KataGo searches the queries at once (its analysis threads), so their
    evaluations go in batches.  Three orientations, not eight: beside the identity, a
    reflection (1) and a quarter turn (3) generate the dihedral group, whose other points
    ``coords.transform_point`` maps by the same table (tests/test_coords.py checks all eight
    against their table and the group laws); each further orientation costs about 16 s of the
    suite on 2 cores (8 evaluations and a visit)."""
    moves, size = POSITIONS[0], 19
    pendings = [real_katago.submit(orient(moves, n), max_visits=2, include_policy=True,
                                   override={"rootNumSymmetriesToSample": 8}) for n in ORIENTATIONS]
    results = [p.result()[-1] for p in pendings]
    base = results[0]
    assert base.to_play == ("W" if moves[-1][0] == "B" else "B")
    legal = [i for i in range(size * size) if base.policy[i] >= 0]
    assert len(legal) == size * size - len(moves)
    for n, analysis in zip(ORIENTATIONS, results):
        raw, raw0 = analysis.raw["rootInfo"], base.raw["rootInfo"]
        assert raw["rawWinrate"] == pytest.approx(raw0["rawWinrate"], abs=2e-3)
        assert raw["rawLead"] == pytest.approx(raw0["rawLead"], abs=0.05)
        for i in legal:
            vertex = base.policy_vertex(i)
            assert analysis.policy_of(image(vertex, n)) == pytest.approx(base.policy[i], abs=2e-3), (n, vertex)
        assert analysis.policy_best() == image(base.policy_best(), n)
        assert [m.move for m in analysis.moves] == [analysis.policy_best()]
        assert analysis.winrate == pytest.approx(base.winrate, abs=0.05)
        assert analysis.score_lead == pytest.approx(base.score_lead, abs=1.5)


@pytest.mark.slow
def test_real_katago_values_through_the_cache_are_the_same_numbers_in_every_orientation(tmp_path, real_katago):
    """What fuseki shows comes from the AI value cache: KataGo asked once, in one orientation;
    every orientation then reads the very same numbers, on the points KataGo's moves map to."""
    from sqlalchemy import create_engine

    from fuseki.book.analysis.ai import AiJudge
    from fuseki.engine.core.base import BLACK, WHITE
    from fuseki.engine.core.board import Board

    moves = POSITIONS[1]
    cache = create_engine(f"sqlite:///{tmp_path / 'ai.sqlite'}")

    def board_in(n: int) -> Board:
        board = Board(19)
        for color, vertex in orient(moves, n):
            board.play(BLACK if color == "B" else WHITE, base.vertex_to_point(vertex, 19))
        return board

    judge = AiJudge(cache, real_katago, rules="japanese", komi=6.5, visits=6)
    [first] = judge.values([(board_in(3), WHITE)])  # read back in orientation 3
    assert first.settings.network.startswith("kata1-b18c384nbt")
    # loss against the best move evaluated (book.analysis.ai): 0 for the move of the highest lead, which
    # need not be KataGo's first (most visited) at a few visits, and never negative
    assert first.moves and min(m.loss for m in first.moves) == 0.0 and all(m.loss >= 0 for m in first.moves)
    assert board_in(3).color_at(first.moves[0].point) == 0  # an empty point
    for n in range(8):
        values = judge.cached(board_in(n), WHITE)
        assert (values.visits, values.winrate, values.score_lead) == (first.visits, first.winrate, first.score_lead)
        assert len(values.moves) == len(first.moves)
        for got, mine in zip(values.moves, first.moves):
            assert (got.visits, got.winrate, got.score_lead, got.loss, got.prior) == (
                mine.visits, mine.winrate, mine.score_lead, mine.loss, mine.prior)
            # orientation 3's points taken back to the base position, then to orientation n
            expected = {p if p == base.PASS else coords.transform_point(n, coords.transform_point(
                coords.INVERSE[3], p, 19), 19) for p in mine.points}
            assert set(got.points) == expected, n
    cache.dispose()


def test_a_judge_stopped_half_way_keeps_what_it_got_and_a_rerun_completes(fake, tmp_path):
    from sqlalchemy import create_engine

    from fuseki.book.analysis.ai import AiJudge
    from fuseki.engine.core.base import BLACK, WHITE
    from fuseki.engine.core.board import Board

    cache = create_engine(f"sqlite:///{tmp_path / 'ai.sqlite'}")
    boards = []
    for vertex in ("D4", "C3"):
        board = Board(19)
        board.play(BLACK, base.vertex_to_point(vertex, 19))
        boards.append((board, WHITE))
    with KataGo(fake("values", "2"), timeout=30) as katago:  # dies at the second position
        judge = AiJudge(cache, katago, rules="japanese", komi=6.5, visits=10, network="fake-net")
        with pytest.raises(KataGoError, match="exit code 3"):
            judge.values(boards)
    assert judge.cached(*boards[0]) is not None and judge.cached(*boards[1]) is None
    with KataGo(fake("values"), timeout=30) as katago:
        judge = AiJudge(cache, katago, rules="japanese", komi=6.5, visits=10, network="fake-net")
        assert all(v is not None for v in judge.values(boards))
        deadline = time.monotonic() + 30
        while katago.stderr_lines()[-1:] != ["query 1"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert katago.stderr_lines() == ["query 1"]  # only the position the first run lacked
    cache.dispose()


def test_the_judge_asks_katago_once_per_position_and_maps_cached_values(fake, tmp_path):
    from sqlalchemy import create_engine

    from fuseki.book.analysis.ai import AiJudge
    from fuseki.engine.core.base import BLACK, WHITE
    from fuseki.engine.core.board import Board

    cache = create_engine(f"sqlite:///{tmp_path / 'ai.sqlite'}")
    with KataGo(fake("values"), timeout=30) as katago:
        judge = AiJudge(cache, katago, rules="japanese", komi=6.5, visits=10, network="fake-net")
        board = Board(19)
        board.play(BLACK, base.vertex_to_point("D4", 19))
        [values] = judge.values([(board, WHITE)])
        assert [base.point_to_vertex(m.point, 19) for m in values.moves] == ["Q16", "K10", "C3"]
        assert [m.loss for m in values.moves] == [0.0, 1.0, 2.0]
        assert (values.visits, values.settings.network) == (30, "fake-net")
        for n in range(8):
            turned = Board(19)
            turned.play(BLACK, coords.transform_point(n, base.vertex_to_point("D4", 19), 19))
            [again] = judge.values([(turned, WHITE)])
            assert [m.points for m in again.moves] == [
                tuple(sorted({coords.transform_point(n, p, 19) for p in m.points})) for m in values.moves]
        assert judge.cached(Board(19), BLACK) is None
        deadline = time.monotonic() + 30
        while katago.stderr_lines()[-1:] != ["query 1"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert katago.stderr_lines() == ["query 1"]  # one query; the 8 orientations came from the cache
    cache.dispose()


def test_katago_is_found_by_flag_then_environment_then_settings_then_cache(tmp_path, monkeypatch):
    from fuseki.book.analysis import katago

    monkeypatch.setattr(katago, "cache_folder", lambda: tmp_path / "none")  # nothing installed
    monkeypatch.delenv("FUSEKI_KATAGO", raising=False)
    assert katago.find_command() is None and katago.find_command("") is None
    assert katago.find_command("katago analysis -model s.bin.gz") == "katago analysis -model s.bin.gz"
    monkeypatch.setenv("FUSEKI_KATAGO", "katago analysis -model e.bin.gz")
    assert katago.find_command("katago analysis -model s.bin.gz") == "katago analysis -model e.bin.gz"


def test_the_clients_threads_leave_the_stop_signals_to_the_main_thread(fake):
    """Ctrl-C on ``fuseki search --ai`` under load was lost about once in five: the kernel handed
    the SIGINT to one of the client's pipe threads, where Python's handler only sets a flag, and
    the main thread slept on in its wait for the answer.  Each of the client's threads blocks
    SIGINT, SIGTERM and SIGHUP (the kernel's own record of the thread: SigBlk), so the kernel
    hands them to the main thread of a command; and a wait looks at the signals every
    SIGNAL_LOOK seconds."""
    from fuseki.book.analysis import katago as client

    with KataGo(fake("hang"), timeout=60) as katago:
        katago.submit([("B", "Q16")], max_visits=1)
        assert len(katago._threads) == 3
        for thread in katago._threads:
            if not thread.is_alive():
                continue  # the stderr reader may have read its end already
            status = Path(f"/proc/self/task/{thread.native_id}/status").read_text()
            blocked = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigBlk:")), 16)
            assert all(blocked >> (int(s) - 1) & 1 for s in client.STOP_SIGNALS), (thread.name, hex(blocked))
        assert client._wait_looking_at_signals(lambda seconds: False, 0.6) is False  # ends at its timeout
