"""KataGo beside the web page's next moves (``fuseki serve --ai``, book/ui/web/ai_service.py), through the API.

The book is test_web_api's five games.  The values of a position are written into the AI
value cache file with ``ai_values.put`` (storage, as KataGo's answers are stored), so the
mapping tests need no KataGo: the values must land on the right points in two orientations
of one position, next to the human moves they belong to, with ``book.analysis.ai.marks``' marks.
What asks KataGo runs behind the requests: a request answers ``pending`` at once and a later
poll finds the values; KataGo missing answers ``unavailable`` with a reason while the human
statistics keep answering; over KataGo's budget (a client's rate, the queue, the cache file's
size) a position is ``busy`` while another client is served (slow: a real ``fuseki serve``
with the real KataGo, two client addresses).  ``--visits`` is a minimum: a shallower stored row
is shown and asked again; the played moves a row lacks, and a clicked move, are asked with the
move forced, within the same budget (the fake "forced" honours ``allowMoves``; slow: the real KataGo at
2 visits deepens a 1-visit row and gives both played moves values of their own).  KataGo
itself is test_katago.py's fake (a hanging one; one that answers) and, in the slow test, the real one at 1 visit.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import subprocess
import sys
import time

import pytest
from sqlalchemy import create_engine

from fuseki.book.analysis.ai import MARK_VISITS, MISTAKE
from fuseki.book.formats.positions import board_after_moves
from fuseki.book.queries import ai_values
from fuseki.book.queries.ai_values import AiSettings
from fuseki.book.ui.web.ai_service import NO_KATAGO, ClientBudget, JobQueue
from fuseki.engine.core import base

from browsing import stop_serve
from services import real_katago_command
from webbook import MISSING, build_book, ok, put_values


@pytest.fixture(scope="module")
def book_path(tmp_path_factory):
    return build_book(tmp_path_factory.mktemp("book") / "book.sqlite")


def poll(client, url, until, deadline=60.0):
    """The first answer of ``url`` for which ``until(answer)`` holds; fails after ``deadline`` s."""
    end = time.monotonic() + deadline
    while True:
        answer = ok(client, url)
        if until(answer):
            return answer
        assert time.monotonic() < end, f"still {answer.get('ai')} after {deadline:g} s"
        time.sleep(0.05)


def row_with(answer, sgf):
    return next(row for row in answer["next"] if sgf in row["points"] or row["sgf"] == sgf)


def test_the_queue_takes_the_newest_first_folds_duplicates_and_refuses_when_full():
    jobs = JobQueue(limit=3)
    assert jobs.put(1, "a") and jobs.put(2, "b") and not jobs.put(1, "a again")
    assert jobs.put(3, "c") and jobs.full() and not jobs.put(4, "d") and len(jobs) == 3  # full: 4 is refused
    assert jobs.take(0) == (3, "c") and 3 in jobs
    jobs.done(3)
    assert 3 not in jobs and not jobs.full()
    assert [jobs.take(0), jobs.done(2), jobs.take(0), jobs.done(1), jobs.take(0)] == [(2, "b"), None, (1, "a"),
                                                                                       None, None]


def test_the_client_budget_counts_each_address_in_a_sliding_window():
    now = [0.0]
    budget = ClientBudget(rate=3, window=60.0, clock=lambda: now[0])
    assert [budget.take("a") for _ in range(4)] == [True, True, True, False]
    assert budget.take("b")  # another address has its own budget
    now[0] = 59.9
    assert not budget.take("a")
    now[0] = 60.0  # the first three are a minute old: room for three more
    assert [budget.take("a") for _ in range(4)] == [True, True, True, False]


def test_a_client_over_its_budget_is_busy_another_is_served_and_the_statistics_answer(make_app, fake):
    app = make_app(fake("hang"), client_rate=3)  # KataGo never answers: every position stays queued
    greedy = app.test_client()
    greedy.environ_base["REMOTE_ADDR"] = "10.0.0.1"
    urls = [f"/api/position?moves={m}" for m in ("pd", "pd,dp", "pd,dd", "qd")]  # four positions, not one
    assert [ok(greedy, url)["ai"]["status"] for url in urls[:3]] == ["pending"] * 3
    over = ok(greedy, urls[3])
    assert over["ai"]["status"] == "busy" and over["ai"]["reason"].startswith("AI busy: 3 new positions")
    assert "\n" not in over["ai"]["reason"]
    assert over["total"] > 0 and over["next"]  # the human statistics as before
    assert ok(greedy, urls[2])["ai"]["status"] == "pending"  # a poll of a queued position is free
    # (urls[0]'s job was dropped: the client's two newest views are urls[2] and urls[3])
    other = app.test_client()
    other.environ_base["REMOTE_ADDR"] = "10.0.0.2"
    assert ok(other, urls[3])["ai"]["status"] == "pending"
    assert ok(greedy, urls[3])["ai"]["status"] == "pending"  # queued now, by the other: polls are free


def test_a_full_queue_or_a_full_cache_is_busy(make_app, fake, tmp_path):
    app = make_app(fake("hang"), queue=2)
    clients = [app.test_client() for _ in range(3)]  # three visitors: one keeps only its newest two views
    for n, client in enumerate(clients):
        client.environ_base["REMOTE_ADDR"] = f"10.0.0.{n + 1}"
    assert [ok(client, f"/api/position?moves={m}")["ai"]["status"]
            for client, m in zip(clients, ("pd", "qd", "pd,dp"))] == ["pending", "pending", "busy"]
    assert "2 positions are waiting" in ok(clients[2], "/api/position?moves=pd,dp")["ai"]["reason"]
    put_values(app, "qd", {"dp": (0.5, 0.3, 0.0)})  # the cache file holds one position
    full = make_app(fake("hang"), cache_rows=1).test_client()
    answer = ok(full, "/api/position?moves=pd")
    assert answer["ai"]["status"] == "busy" and "holds 1 positions" in answer["ai"]["reason"]
    assert ok(full, "/api/position?moves=qd")["ai"]["status"] == "ready"  # stored positions still answer


@pytest.mark.parametrize("moves, mapping", [
    ("pd", {"dp": "dp", "dd": "dd", "qp": "qp"}),
    ("dd", {"dp": "pp", "dd": "pd", "qp": "cp"}),  # the same position flipped left-right
])
def test_cached_values_sit_beside_the_human_moves_in_any_orientation(make_app, moves, mapping):
    app = make_app(MISSING)
    put_values(app, "pd", {"dp": (0.55, 1.5, 0.0), "dd": (0.40, -1.5, 3.0), "qp": (0.53, 1.2, 0.3)},
               root=(MARK_VISITS, 0.45, -1.0), move_visits=MARK_VISITS, lines=[["dp", "pp"], ["dd"], ["qp", "qo"]])
    answer = ok(app.test_client(), f"/api/position?moves={moves}")
    ai = answer["ai"]
    assert ai["status"] == "ready" and (ai["winrate"], ai["score_lead"], ai["visits"]) == (0.45, -1.0, MARK_VISITS)
    assert ai["settings"] == {"network": "test-net", "rules": "japanese", "komi": 6.5, "visits": 2}
    # after B Q16: W dp in 3 games (seigen, takemiya, mirror), W dd in 1 (cho): 25% of the games
    # losing 3 points is a popular mistake; the 3-3 point's neighbour qp, unplayed, is the AI's
    best, worse = row_with(answer, mapping["dp"]), row_with(answer, mapping["dd"])
    assert (best["games"], best["ai"]["loss"], best["ai"]["mark"]) == (3, 0.0, None)
    assert best["ai"]["winrate"] == 0.55 and best["ai"]["score_lead"] == 1.5
    assert (worse["games"], worse["ai"]["loss"], worse["ai"]["mark"]) == (1, 3.0, MISTAKE)
    assert worse["ai"]["mark_text"] == "? popular mistake"
    # each move's line, in the position's orientation, the move first (the second move up to the
    # position's own symmetry: test_ai_values checks the mapping)
    assert best["ai"]["pv"][0] == mapping["dp"] and len(best["ai"]["pv"]) == 2
    assert worse["ai"]["pv"] == [mapping["dd"]]
    own = [m for m in ai["moves"] if m["mark"] == "ai"]
    assert len(own) == 1 and mapping["qp"] in own[0]["points"] and own[0]["loss"] == 0.3
    assert own[0]["pv"][0] in own[0]["points"] and len(own[0]["pv"]) == 2
    assert {m["sgf"] for m in ai["moves"] if m["played"]} <= set(best["points"]) | set(worse["points"])
    info = ok(app.test_client(), "/api/info")
    assert info["ai"]["network"] == "test-net"


@pytest.mark.parametrize("moves, dd", [("pd", "dd"), ("dd", "pd")])  # the second: flipped left-right
def test_a_move_katago_did_not_search_gets_the_values_of_the_position_after_it(make_app, moves, dd):
    app = make_app(MISSING)
    put_values(app, "pd", {"dp": (0.55, 1.5, 0.0)}, root=(20, 0.52, 1.2))  # the search visited D4 only
    put_values(app, "pd,dd", {}, visits=1, root=(1, 0.61, 1.9))  # after W D16: Black 1.9 ahead
    answer = ok(app.test_client(), f"/api/position?moves={moves}")
    assert answer["ai"]["settings"]["visits"] == 2  # the position's own values
    searched = [row for row in answer["next"] if row["ai"] and row["ai"]["source"] == "search"]
    assert len(searched) == 1 and searched[0]["ai"]["loss"] == 0.0
    after = row_with(answer, dd)["ai"]
    # KaTrain's points lost: the parent's lead (1.2) minus the move's (-1.9), for White who plays it
    assert after["source"] == "child" and after["visits"] == 1
    # the loss against the best move evaluated, D4's 1.5: 1.5 - (-1.9)
    assert (after["winrate"], after["score_lead"], after["loss"]) == (0.39, -1.9, 3.4)
    assert after["mark"] is None  # 1 of 4 games, 3.4 points, but from 1 and 20 visits: shallow, no mark


def test_a_pending_answer_is_not_kept_and_a_poll_finds_the_values(make_app, fake):
    app = make_app(fake("hang"))  # KataGo takes the query and never answers
    client = app.test_client()
    url = "/api/position?moves=pd,dp"
    started = time.monotonic()
    first = ok(client, url)
    assert first["ai"]["status"] == "pending" and time.monotonic() - started < 30  # never waits for KataGo
    assert [row["ai"] for row in first["next"]] == [None] * len(first["next"]) and first["total"] == 3
    assert ok(client, url)["ai"]["status"] == "pending"  # asked again: still queued once, still not kept
    assert len(app.extensions["fuseki_ai"].queue) == 1
    put_values(app, "pd,dp", {"pp": (0.5, 0.5, 0.0)}, network="")  # the fake names no network
    ready = ok(client, url)
    assert ready["ai"]["status"] == "ready" and "pp" in ready["ai"]["moves"][0]["points"]
    assert ok(client, url) == ready  # a final answer may be kept


def test_the_worker_asks_katago_and_writes_the_cache_file(make_app, fake):
    app = make_app(fake("forced"))  # answers D4, Q16, K10, C3, R17 (the free ones of them; a forced move alone)
    client = app.test_client()
    url = "/api/position?moves=pd"
    assert ok(client, url)["ai"]["status"] == "pending"
    ready = poll(client, url, settled)  # the position, then D16 (1 of 4 games) with the move forced
    assert ready["ai"]["status"] == "ready", ready["ai"]
    assert sorted(m["vertex"] for m in ready["ai"]["moves"]) == ["C3", "D16", "D4", "K10"]
    row = stored(app, "pd")
    assert row is not None and len(row.moves) == 4


def test_a_missing_katago_is_unavailable_with_its_reason_and_the_statistics_answer(make_app):
    client = make_app(MISSING).test_client()
    answer = poll(client, "/api/position?moves=pd", lambda a: a["ai"]["status"] != "pending")
    assert answer["ai"]["status"] == "unavailable"
    assert "cannot start KataGo" in answer["ai"]["reason"] and "\n" not in answer["ai"]["reason"]
    assert answer["total"] == 4 and [row["games"] for row in answer["next"]] == [3, 1]
    other = ok(client, "/api/position?moves=qd")  # every later position at once
    assert other["ai"]["status"] == "unavailable" and other["next"]
    none = ok(make_app(None).test_client(), "/api/position")
    assert none["ai"] == {"status": "unavailable", "settings": none["ai"]["settings"], "reason": NO_KATAGO,
                          "asking": None}


@pytest.mark.slow
def test_the_real_katago_answers_a_poll_after_a_pending_answer(make_app):
    client = make_app(real_katago_command(), visits=2).test_client()  # at 1 visit KataGo lists no move
    url = "/api/position?moves=pd,dp"
    assert ok(client, url)["ai"]["status"] == "pending"
    ready = poll(client, url, lambda a: a["ai"]["status"] != "pending", deadline=900.0)
    ai = ready["ai"]
    assert ai["status"] == "ready", ai
    assert ai["moves"] and ai["settings"]["network"].startswith("kata1-") and ai["visits"] >= 2
    assert all(0.0 <= m["winrate"] <= 1.0 for m in ai["moves"])


def test_a_row_without_values_says_why_and_the_answer_names_the_mark_visits(make_app):
    app = make_app(MISSING)
    put_values(app, "pd", {}, root=(20, 0.52, 1.2))  # the position's root only: no move evaluated
    answer = ok(app.test_client(), "/api/position?moves=pd")
    assert answer["ai"]["status"] == "ready" and answer["ai"]["mark_visits"] == MARK_VISITS
    assert answer["next"] and all(row["ai"] is None and row["ai_missing"] == "not evaluated yet"
                                  for row in answer["next"])


def _get(port: int, path: str, source: str) -> dict:
    """GET ``path`` from the server on 127.0.0.1:``port`` as the client address ``source``
    (the whole 127.0.0.0/8 is this machine: each source is another visitor to the server)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120, source_address=(source, 0))
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        body = response.read()
        assert response.status == 200, (path, response.status, body[:200])
        return json.loads(body)
    finally:
        connection.close()


@pytest.mark.slow
def test_a_real_server_tells_a_client_over_its_budget_ai_busy_and_serves_another(book_path, tmp_path):
    from fuseki.book.ui.web.ai_service import CLIENT_RATE

    process = subprocess.Popen(
        [sys.executable, "-m", "fuseki", "serve", "--book", str(book_path), "--port", "0", "--workers", "1", "--ai",
         "--katago", real_katago_command(), "--visits", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "FUSEKI_AI_CACHE": str(tmp_path / "ai-cache.sqlite")})
    try:
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", process.stdout.readline())
        assert match, process.stderr.read()[-2000:] if process.poll() is not None else "no address"
        port = int(match.group(1))
        # CLIENT_RATE + 1 positions, none the same under a symmetry (Q16, then a point of the C column)
        paths = [f"/api/position?moves=pd,c{'abcdefghijkl'[i]}" for i in range(CLIENT_RATE + 1)]
        answers = [_get(port, path, "127.0.0.2") for path in paths]
        assert [a["ai"]["status"] for a in answers[:-1]] == ["pending"] * CLIENT_RATE, [a["ai"] for a in answers]
        busy = answers[-1]
        assert busy["ai"]["status"] == "busy" and busy["ai"]["reason"].startswith("AI busy")
        human = _get(port, "/api/position?moves=pd", "127.0.0.2")  # the human statistics answer as before
        assert human["ai"]["status"] == "busy"
        assert human["total"] == 4 and [row["games"] for row in human["next"]] == [3, 1]
        served = "/api/position?moves=pd,dp,qp"  # another visitor's position: queued, then answered
        assert _get(port, served, "127.0.0.3")["ai"]["status"] == "pending"
        end = time.monotonic() + 900.0  # KataGo's start and a few 2-visit searches on a busy CPU
        while (answer := _get(port, served, "127.0.0.3"))["ai"]["status"] == "pending":
            assert time.monotonic() < end, answer["ai"]
            time.sleep(0.5)
        assert answer["ai"]["status"] == "ready" and answer["ai"]["visits"] >= 2, answer["ai"]
    finally:
        stop_serve(process)


# --- --visits a minimum, and the moves KataGo's search left out asked with the move forced ---


def stored(app, moves: str, network="", visits=2):
    """The row the cache file holds for the position after ``moves`` at ``visits``, or None."""
    board = board_after_moves([m for m in moves.split(",") if m], 19)
    db = create_engine(f"sqlite:///{app.cache_path}")
    with db.connect() as conn:
        found = ai_values.get(conn, board.symmetric_keys(board.to_move), 19,
                              AiSettings("japanese", 6.5, network, visits))
    db.dispose()
    return found


def settled(answer) -> bool:
    return answer["ai"]["status"] != "pending" and answer["ai"]["asking"] != "pending"


def test_visits_is_a_minimum_a_shallower_stored_row_is_asked_again_and_served(make_app, fake):
    app = make_app(fake("forced"), visits=8, minimum=True)
    put_values(app, "pd", {"dp": (0.55, 1.5, 0.0), "dd": (0.40, -1.5, 3.0)}, network="", visits=2)
    client = app.test_client()
    first = ok(client, "/api/position?moves=pd")
    ai = first["ai"]  # the stored 2 visits are shown meanwhile, and said to be shallower than asked
    assert ai["status"] == "ready" and ai["settings"]["visits"] == 2 and ai["asking"] == "pending"
    assert ai["deeper"] == {"visits": 8, "status": "pending"}
    assert row_with(first, "dp")["ai"]["winrate"] == 0.55
    deep = poll(client, "/api/position?moves=pd", settled)["ai"]
    assert deep["settings"]["visits"] == 8 and deep["deeper"] is None and deep["visits"] == 30  # the fake's root
    assert stored(app, "pd", visits=8) is not None and stored(app, "pd", visits=2) is not None


def test_without_a_minimum_or_without_katago_the_deepest_stored_is_served_and_says_its_visits(make_app, fake):
    app = make_app(fake("hang"), visits=8)  # --visits not given: what is stored is shown, KataGo not asked
    put_values(app, "pd", {"dp": (0.55, 1.5, 0.0), "dd": (0.40, -1.5, 3.0)}, network="", visits=2)
    ai = ok(app.test_client(), "/api/position?moves=pd")["ai"]
    assert ai["settings"]["visits"] == 2 and ai["deeper"] is None and ai["asking"] is None
    assert len(app.extensions["fuseki_ai"].queue) == 0
    none = make_app(None, visits=8, minimum=True)
    put_values(none, "pd", {"dp": (0.55, 1.5, 0.0), "dd": (0.40, -1.5, 3.0)}, network="", visits=2)
    ai = ok(none.test_client(), "/api/position?moves=pd")["ai"]
    assert ai["status"] == "ready" and ai["settings"]["visits"] == 2 and ai["asking"] is None
    assert ai["deeper"]["status"] == "unavailable" and ai["deeper"]["visits"] == 8
    assert ai["deeper"]["reason"].endswith("the 2 visits stored are shown")


def test_a_played_move_the_row_lacks_is_asked_with_the_move_forced_and_its_cell_says_why_meanwhile(make_app, fake):
    app = make_app(fake("forced"))  # the fake answers a forced query with the forced move (its allowMoves)
    put_values(app, "pd", {"dp": (0.55, 1.5, 0.0)}, network="")  # D16 (1 of the 4 games) not evaluated
    client = app.test_client()
    assert ok(client, "/api/position?moves=pd")["ai"]["asking"] == "pending"  # (the cell meanwhile: below)
    answer = poll(client, "/api/position?moves=pd", settled)
    dd = row_with(answer, "dd")["ai"]
    assert answer["ai"]["asking"] is None and dd["source"] == "search" and dd["visits"] == 10  # the fake's
    assert dd["loss"] >= 0.0 and dd["pv"][0] == "dd"
    row = stored(app, "pd")
    assert row.move(base.sgf_to_point("dd", 19)) is not None and row.move(base.sgf_to_point("dp", 19))
    assert ok(client, "/api/position?moves=pd") == answer  # nothing more to ask: the answer may be kept


def test_a_clicked_move_the_position_before_lacks_is_asked_there_with_the_move_forced(make_app, fake):
    app = make_app(fake("forced"))
    put_values(app, "pd", {"dp": (0.55, 1.5, 0.0)}, network="")
    qp = base.sgf_to_point("qp", 19)  # R4: nobody played it, so only the click asks for it
    assert stored(app, "pd").move(qp) is None
    client = app.test_client()
    assert ok(client, "/api/position?moves=pd,qp")["ai"]["asking"] == "pending"
    poll(client, "/api/position?moves=pd,qp", settled)
    assert stored(app, "pd").move(qp).visits == 10  # the parent's row now holds the clicked move


def test_forced_moves_are_within_the_client_budget_over_it_the_cell_says_ai_busy(make_app, fake):
    app = make_app(fake("hang"), client_rate=1)  # KataGo never answers: the first job stays queued
    put_values(app, "pd", {"dp": (0.55, 1.5, 0.0)}, network="")  # D16 lacking
    put_values(app, "pd,dp", {"pp": (0.5, 0.5, 0.0)}, network="")  # Q3 lacking
    greedy = app.test_client()
    greedy.environ_base["REMOTE_ADDR"] = "10.0.0.1"
    assert ok(greedy, "/api/position?moves=pd")["ai"]["asking"] == "pending"  # its one job
    over = ok(greedy, "/api/position?moves=pd,dp")
    assert over["ai"]["status"] == "ready" and over["ai"]["asking"] == "busy"
    assert row_with(over, "pq")["ai_missing"].startswith("AI busy: 1 new positions")
    assert row_with(over, "pp")["ai"]["source"] == "search"  # the stored values answer as before
    assert ok(greedy, "/api/position?moves=pd")["ai"]["asking"] == "pending"  # a poll of its job is free
    other = app.test_client()
    other.environ_base["REMOTE_ADDR"] = "10.0.0.2"
    answer = ok(other, "/api/position?moves=pd,dp")
    assert answer["ai"]["asking"] == "pending" and row_with(answer, "pq")["ai_missing"] == "not evaluated yet"


@pytest.mark.slow
def test_the_real_katago_deepens_a_shallower_stored_row_and_evaluates_the_played_moves_forced(make_app):
    from fuseki.book.analysis.katago import network_name

    command = real_katago_command()
    network = network_name(command)
    app = make_app(command, visits=2, minimum=True)  # --visits 2: the stored 1-visit row is too shallow
    put_values(app, "pd", {"qp": (0.5, 0.2, 0.0)}, network=network, visits=1, root=(1, 0.5, 0.2))
    client = app.test_client()
    first = ok(client, "/api/position?moves=pd")["ai"]
    assert first["settings"]["visits"] == 1 and first["deeper"] == {"visits": 2, "status": "pending"}
    answer = poll(client, "/api/position?moves=pd", settled, deadline=900.0)
    ai = answer["ai"]
    assert ai["status"] == "ready" and ai["settings"] == {"network": network, "rules": "japanese", "komi": 6.5,
                                                          "visits": 2}, ai
    row = stored(app, "pd", network=network, visits=2)
    for sgf in ("dp", "dd"):  # 3 and 1 of the 4 games: both >= 1%, each KataGo's own value
        values = row_with(answer, sgf)["ai"]
        assert values["source"] == "search" and values["visits"] >= 1 and values["loss"] >= -0.1, values
        assert 0.0 <= values["winrate"] <= 1.0 and row.move(base.sgf_to_point(sgf, 19)) is not None


def test_a_rarer_move_without_values_says_it_is_asked_when_played(make_app, fake):
    from types import SimpleNamespace

    from fuseki.book.analysis.ai import MOVES_SHARE
    from fuseki.book.ui.web.ai_service import UNDER_SHARE, ai_json

    app = make_app(fake("hang"))
    put_values(app, "pd", {"dp": (0.55, 1.5, 0.0)}, network="")
    board = board_after_moves(["pd"], 19)
    point = lambda sgf: base.sgf_to_point(sgf, 19)  # noqa: E731
    # of 300 games, D4 in 296, D16 in 3 (1%: asked with the move forced), Q3 in 1 (under 1%)
    moves = [SimpleNamespace(point=point(sgf), points=(point(sgf),), games=games)
             for sgf, games in (("dp", 296), ("dd", 3), ("pq", 1))]
    assert 3 >= MOVES_SHARE * 300 > 1
    rows = [{} for _ in moves]
    ai = ai_json(app.extensions["fuseki_ai"], board, rows, SimpleNamespace(total=300, moves=moves))
    assert ai["asking"] == "pending" and rows[0]["ai"]["source"] == "search"
    assert [row.get("ai_missing") for row in rows] == [None, "not evaluated yet", UNDER_SHARE]
    assert list(app.extensions["fuseki_ai"].queue.take(0)[1][3]) == [point("dd")]  # the forced job: D16 alone


def test_serve_visits_given_is_a_minimum_not_given_the_default_without_one(tmp_path, monkeypatch):
    from fuseki.book.ui.commands.serve_command import _ai_options
    from fuseki.book.ui.fuseki_command import build_parser

    monkeypatch.setenv("FUSEKI_AI_CACHE", str(tmp_path / "ai-cache.sqlite"))
    given = _ai_options(build_parser().parse_args(["serve", "--ai", "--katago", MISSING, "--visits", "64"]))
    default = _ai_options(build_parser().parse_args(["serve", "--ai", "--katago", MISSING]))
    assert (given.visits, given.minimum) == (64, True)
    assert (default.visits, default.minimum) == (32, False)


@pytest.mark.slow
def test_the_real_katago_forces_a_clicked_move_and_a_client_over_its_budget_is_told_ai_busy(make_app):
    from fuseki.book.analysis.katago import network_name

    command = real_katago_command()
    network = network_name(command)
    app = make_app(command, visits=2, client_rate=1)
    put_values(app, "pd", {"dp": (0.55, 1.5, 0.0)}, network=network, root=(2, 0.5, 0.2))  # D16 lacking
    put_values(app, "pd,dp", {"pp": (0.5, 0.5, 0.0)}, network=network, root=(2, 0.5, 0.2))  # Q3 lacking
    greedy = app.test_client()
    greedy.environ_base["REMOTE_ADDR"] = "10.0.0.1"
    assert ok(greedy, "/api/position?moves=pd")["ai"]["asking"] == "pending"  # its one new job a minute
    over = ok(greedy, "/api/position?moves=pd,dp")  # at once after: the same minute
    assert over["ai"]["asking"] == "busy" and row_with(over, "pq")["ai_missing"].startswith("AI busy")
    other = app.test_client()
    other.environ_base["REMOTE_ADDR"] = "10.0.0.2"
    answer = poll(other, "/api/position?moves=pd,dp,pq", settled, deadline=900.0)  # plays Q3 on the board
    assert answer["ai"]["asking"] is None
    clicked = stored(app, "pd,dp", network=network).move(base.sgf_to_point("pq", 19))
    assert clicked is not None and clicked.visits >= 1 and 0.0 <= clicked.winrate <= 1.0
    done = poll(greedy, "/api/position?moves=pd", settled, deadline=900.0)  # the greedy one's job, answered
    assert row_with(done, "dd")["ai"]["source"] == "search"


# --- issue 55: the stored values on by default, the warm-up free, the budget behind a proxy ---


@pytest.fixture
def plain_app(book_path, tmp_path):
    """``plain_app(book_url=...)``: the application as plain ``fuseki serve`` makes it (no --ai:
    the stored values only, ``AiOptions.ask`` False); ``app.cache_path``: its cache file."""
    from fuseki.book.ui.web.ai_service import AiOptions
    from fuseki.book.ui.web.app import create_app

    apps = []

    def make(book_url=None):
        cache = tmp_path / "ai-cache.sqlite"
        app = create_app(book_url=book_url or str(book_path), cache_bytes=0,
                         ai=AiOptions(command=None, cache=cache, ask=False))
        app.cache_path = cache
        apps.append(app)
        return app
    yield make
    for app in apps:
        if "fuseki_ai" in app.extensions:
            app.extensions["fuseki_ai"].close()
        app.extensions["fuseki_book"].close()


def test_plain_serve_shows_the_stored_values_and_says_when_none_are_stored_without_katago(plain_app):
    from fuseki.book.ui.web.ai_service import NOT_STORED, NOT_STORED_MOVE

    app = plain_app()
    assert not app.cache_path.exists()  # plain serve reads the cache file, never makes it
    assert ok(app.test_client(), "/api/info")["ai"] is None  # no store anywhere: no AI columns, as before
    put_values(app, "pd", {"dp": (0.55, 1.5, 0.0)}, network="kata1-test", visits=400, move_visits=400,
               root=(400, 0.45, -1.0))
    app = plain_app()  # a server started with the user's cache file there
    client = app.test_client()
    info = ok(client, "/api/info")["ai"]
    assert info["asks"] is False and info["rules"] == "japanese"
    answer = ok(client, "/api/position?moves=pd")
    assert answer["ai"]["status"] == "ready" and answer["ai"]["settings"]["network"] == "kata1-test"
    assert row_with(answer, "dp")["ai"]["visits"] == 400
    assert row_with(answer, "dd")["ai_missing"] == NOT_STORED_MOVE  # no KataGo to ask, and it says so
    assert answer["ai"]["asking"] is None
    none = ok(client, "/api/position?moves=qd")
    assert none["ai"] == {"status": "none", "settings": none["ai"]["settings"], "reason": NOT_STORED,
                          "asking": None}
    assert none["next"]  # the human statistics as ever
    service = app.extensions["fuseki_ai"]
    assert service._worker is None and service._katago is None and not len(service.queue)  # nothing asked


def test_plain_serve_on_the_built_in_book_gives_the_shipped_values_c15_among_them(plain_app):
    from fuseki.book.model import builtin

    client = plain_app(f"sqlite:///{builtin.PATH}").test_client()
    assert ok(client, "/api/info")["ai"]["asks"] is False
    answer = ok(client, "/api/position?moves=Q16,D4")
    assert answer["ai"]["status"] == "ready" and answer["ai"]["visits"] >= MARK_VISITS
    c15 = row_with(answer, "ce")
    # under the page's 1% (hidden by the games alone), with deep values of its own: the page lists it
    assert c15["games"] < 0.01 * answer["total"] and c15["ai"]["visits"] >= MARK_VISITS
    shallow = [m for m in answer["ai"]["moves"] if m["mark"] == "ai" and m["visits"] < MARK_VISITS]
    assert shallow  # KataGo's own moves the page shows only with the rarer ones (tests/test_web_browser.py)


def test_plain_serve_reads_the_stored_values_and_keeps_one_worker_per_core(tmp_path, monkeypatch):
    from fuseki.book.ui.commands import serve_command
    from fuseki.book.ui.fuseki_command import build_parser
    from fuseki.book.ui.web import server

    monkeypatch.setenv("FUSEKI_AI_CACHE", str(tmp_path / "ai-cache.sqlite"))
    plain = serve_command._ai_options(build_parser().parse_args(["serve", "--komi", "7.5", "--rules", "chinese"]))
    assert plain is not None and not plain.ask and plain.command is None
    assert (plain.rules, plain.komi, plain.cache) == ("chinese", 7.5, tmp_path / "ai-cache.sqlite")
    started = {}

    class Server:
        def __init__(self, url, host, port, workers, threads, trusted, announce, ai, trust_proxy=False):
            started.update(workers=workers, ai=ai, trust_proxy=trust_proxy)

        def run(self):
            pass

    monkeypatch.setattr(server, "BookServer", Server)
    monkeypatch.setattr(server, "default_workers", lambda: 7)
    from fuseki.book.model import builtin

    args = build_parser().parse_args(["serve", "--book", str(builtin.PATH), "--port", "0"])
    assert serve_command.run_serve(args) == 0
    assert started["workers"] == 7 and started["ai"].ask is False and started["trust_proxy"] is False
    args = build_parser().parse_args(["serve", "--book", str(builtin.PATH), "--port", "0", "--trust-proxy"])
    serve_command.run_serve(args)
    assert started["trust_proxy"] is True


def test_the_serve_warm_up_spends_no_visitors_budget(make_app, fake):
    from fuseki.book.ui.web.server import _warm_up

    app = make_app(fake("hang"), client_rate=1)  # KataGo never answers: what is queued stays
    _warm_up(app)  # asks the empty board, which nothing stores: queued for KataGo
    assert len(app.extensions["fuseki_ai"].queue) == 1
    client = app.test_client()  # a visitor on this machine: 127.0.0.1, as the warm-up's requests
    assert client.environ_base.get("REMOTE_ADDR", "127.0.0.1") == "127.0.0.1"
    assert ok(client, "/api/position?moves=pd")["ai"]["status"] == "pending"  # its one new position
    assert ok(client, "/api/position?moves=qd")["ai"]["status"] == "busy"  # the budget still counts


@pytest.mark.parametrize("trust", [False, True])
def test_the_budget_is_keyed_on_the_proxys_address_only_with_trust_proxy(book_path, tmp_path, fake, trust):
    from fuseki.book.ui.web.ai_service import AiOptions
    from fuseki.book.ui.web.app import create_app

    app = create_app(book_url=str(book_path), cache_bytes=0, trust_proxy=trust,
                     ai=AiOptions(command=fake("hang"), visits=2, cache=tmp_path / "ai-cache.sqlite", client_rate=1))
    try:
        client = app.test_client()  # every request from the proxy's socket, 127.0.0.1
        # the visitor writes the first address, the proxy appends the one it saw last
        first = client.get("/api/position?moves=pd", headers={"X-Forwarded-For": "6.6.6.6, 10.0.0.1"}).get_json()
        assert first["ai"]["status"] == "pending"
        spoofed = client.get("/api/position?moves=qd", headers={"X-Forwarded-For": "7.7.7.7, 10.0.0.1"}).get_json()
        assert spoofed["ai"]["status"] == "busy"  # the same visitor whatever it writes first
        other = client.get("/api/position?moves=pd,dp", headers={"X-Forwarded-For": "10.0.0.2"}).get_json()
        assert other["ai"]["status"] == ("pending" if trust else "busy")  # without --trust-proxy: one socket
    finally:
        app.extensions["fuseki_ai"].close()
        app.extensions["fuseki_book"].close()


def test_serve_help_names_trust_proxy():
    result = subprocess.run([sys.executable, "-m", "fuseki", "serve", "--help"], capture_output=True, text=True,
                            check=True)
    text = " ".join(result.stdout.split())  # argparse wraps the lines
    assert "[--trust-proxy]" in text and "last address of X-Forwarded-" in text


def test_each_server_process_gets_trust_proxy(book_path):
    from fuseki.book.ui.web.server import BookServer

    for trust in (False, True):
        app = BookServer(str(book_path), "127.0.0.1", 0, 1, 1, None, print, None, trust).load()
        try:
            assert app.config["FUSEKI_TRUST_PROXY"] is trust
        finally:
            app.extensions["fuseki_book"].close()


# --- issue 57: KataGo's queue drops the positions a visitor has left ---

WALK = ["pd", "dp", "pq", "dd", "fq", "hq", "cn", "qf", "jj", "cf"]  # ten clicks, each a legal move


def walk_key(clicks: int) -> tuple:
    """The key of the values job of the position after the walk's first ``clicks`` moves."""
    board = board_after_moves(WALK[:clicks], 19)
    return ("values", min(board.symmetric_keys(board.to_move)))


def walk_url(clicks: int) -> str:
    return f"/api/position?moves={','.join(WALK[:clicks])}"


def until(check, deadline=120.0):
    """Wait until ``check()`` holds; fails after ``deadline`` s (generous: the machine may be loaded)."""
    end = time.monotonic() + deadline
    while not check():
        assert time.monotonic() < end, f"not so after {deadline:g} s"
        time.sleep(0.02)


def test_a_walk_of_clicks_leaves_katago_only_the_newest_two_positions_of_each_visitor(make_app, fake):
    """Ten clicks: after each, the queue holds the jobs of the visitor's two newest positions
    only, the older ones dropped and the one KataGo was searching terminated; another
    visitor's view of a position keeps its job."""
    app = make_app(fake("hang"), client_rate=100)  # KataGo takes each query and never answers
    service = app.extensions["fuseki_ai"]
    walker, other = app.test_client(), app.test_client()
    walker.environ_base["REMOTE_ADDR"] = "10.0.0.1"
    other.environ_base["REMOTE_ADDR"] = "10.0.0.2"
    assert ok(walker, walk_url(1))["ai"]["status"] == "pending"
    # KataGo searches the first position (its query sent): the walk will leave it under way
    until(lambda: service._katago is not None and service._katago.in_flight() == 1)
    for clicks in range(2, len(WALK) + 1):
        assert ok(walker, walk_url(clicks))["ai"]["status"] == "pending"
        if clicks == 2:
            assert ok(other, walk_url(2))["ai"]["status"] == "pending"  # another visitor looks at it too
        kept = {walk_key(clicks - 1), walk_key(clicks), walk_key(2)}
        assert set(service.queue.keys()) <= kept, clicks
        assert walk_key(clicks) in service.queue.keys()
    assert walk_key(2) in service.queue.keys()  # the other visitor still looks at it
    assert service.terminated_queries >= 1  # the first position's search, left under way
    # the positions left: the first terminated, 3 to 8 dropped or terminated (each at most once)
    assert 1 <= service.dropped_jobs <= 6 and service.dropped_jobs + service.terminated_queries <= 7
    assert ok(walker, walk_url(len(WALK)))["ai"]["status"] == "pending"  # a poll of the newest: still asked
    assert ok(walker, walk_url(len(WALK) - 1))["ai"]["status"] == "pending"  # going back one: still queued
    assert set(service.queue.keys()) <= {walk_key(len(WALK) - 1), walk_key(len(WALK)), walk_key(2)}


def test_after_a_search_left_katago_takes_the_position_shown_now_not_the_one_just_left(make_app, fake):
    """A click that leaves the position KataGo searches terminates that search only once the
    click's own position is queued: the freed worker takes the position shown now, not the one
    just left (the newest queued before the click's).  The interpreter switches threads every
    microsecond here, so that the worker, freed, runs before the request goes on."""
    app = make_app(fake("hang"), client_rate=100)
    service = app.extensions["fuseki_ai"]
    walker = app.test_client()
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        ok(walker, walk_url(1))
        until(lambda: service._katago is not None and service._katago.in_flight() == 1)
        searching, terminated = walk_key(1), 0
        for clicks in range(2, len(WALK) + 1):
            ok(walker, walk_url(clicks))
            if service.terminated_queries == terminated:
                continue
            terminated = service.terminated_queries
            until(lambda left=searching: service._running not in (None, left) and service._katago.in_flight() == 1)
            searching = service._running
            assert searching == walk_key(clicks), clicks
        assert terminated >= 3  # positions 1, 3, 5 and 7, each left while KataGo searched it
    finally:
        sys.setswitchinterval(switch)


WALK_VISITS = 4  # a search of seconds on a loaded CPU (a click: milliseconds): the walk leaves the first under way


@pytest.mark.slow
def test_the_real_katago_searches_only_the_newest_positions_after_a_walk_of_clicks(make_app):
    """The real KataGo: the first position's search, left two clicks later, is terminated and
    not stored; each position of the walk is searched and stored, dropped, or terminated, and
    once the newest is ready nothing else waits.  Generous deadlines, no timing asserted."""
    from fuseki.book.analysis.katago import network_name

    command = real_katago_command()
    app = make_app(command, visits=WALK_VISITS, client_rate=100)
    service = app.extensions["fuseki_ai"]
    walker = app.test_client()
    assert ok(walker, walk_url(1))["ai"]["status"] == "pending"
    until(lambda: service._katago is not None and service._katago.in_flight() == 1, deadline=900.0)  # its start
    for clicks in range(2, len(WALK) + 1):
        ok(walker, walk_url(clicks))
        assert set(service.queue.keys()) <= {walk_key(clicks - 1), walk_key(clicks)}, clicks
    assert service.terminated_queries >= 1
    ready = poll(walker, walk_url(len(WALK)), lambda a: a["ai"]["status"] != "pending", deadline=900.0)
    assert ready["ai"]["status"] == "ready", ready["ai"]
    until(lambda: len(service.queue) == 0, deadline=900.0)  # the position before it, then nothing
    network = network_name(command)
    rows = {n: stored(app, ",".join(WALK[:n]), network=network, visits=WALK_VISITS) for n in range(1, len(WALK) + 1)}
    searched = [n for n, row in rows.items() if row is not None]
    assert rows[1] is None and len(WALK) in searched  # the search cut short was not stored
    assert len(searched) + service.dropped_jobs + service.terminated_queries == len(WALK)  # each once
    assert all(row.visits >= WALK_VISITS for row in rows.values() if row is not None)  # whole searches only
