"""The explorer's JSON API (book/ui/web/app.py) through Flask's test client, on a small real book.

The book is tests/webbook.py's five short games (its docstring says what each holds); the
browser tests use them too.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuseki.book.formats.sgf_reader import read_games
from fuseki.engine.core import base, coords

from webbook import CAPTURE_LINE, GAMES, build_book, import_games, ok  # noqa: F401


@pytest.fixture(scope="module")
def book_path(tmp_path_factory):
    return build_book(tmp_path_factory.mktemp("book") / "book.sqlite")


@pytest.fixture(scope="module")
def app(book_path):
    from fuseki.book.ui.web.app import create_app

    app = create_app(book_url=str(book_path))
    app.config["TESTING"] = False  # errors must be answered as a user would see them
    yield app
    app.extensions["fuseki_book"].close()


@pytest.fixture
def client(app):
    return app.test_client()


def error(client, url, status):
    response = client.get(url)
    assert response.status_code == status, (url, response.status_code, response.data[:200])
    assert response.is_json
    message = response.get_json()["error"]
    assert message and "\n" not in message
    return message


def game_ids(client, moves=""):
    return {row["black"].split()[0].lower(): row["id"]
            for row in ok(client, f"/api/games?moves={moves}&page_size=100")["rows"]}


def test_the_api_on_both_backends(book_url, tmp_path):
    """The same answers from a SQLite file and a PostgreSQL database (``book_url`` runs both)."""
    from fuseki.book.ui.web.app import create_app

    import_games(book_url, tmp_path / "sgf")
    app = create_app(book_url=book_url)
    try:
        client = app.test_client()
        assert ok(client, "/api/info")["games"] == 5
        answer = ok(client, "/api/position?moves=pd,dp,pp,dd")
        assert answer["total"] == 2 and len(answer["next"]) == 2
        page = ok(client, "/api/games?moves=pd,dp,pp,dd&player=takemiya")
        assert [row["black"] for row in page["rows"]] == ["Takemiya Masaki"]
        game = ok(client, f"/api/game/{page['rows'][0]['id']}")
        assert len(game["moves"]) == 6
        error(client, "/api/game/99999999999999999999", 404)
        error(client, "/api/game/999999", 404)
        error(client, "/api/game/9999999999", 404)  # beyond a 32-bit integer column
        error(client, "/api/game/9999999999.sgf", 404)
    finally:
        app.extensions["fuseki_book"].close()


# --- /api/info and the page -----------------------------------------------------------------


def test_info_counts_the_book(client):
    info = ok(client, "/api/info")
    assert info["games"] == 5
    assert info["sizes"] == {"19": 5}
    assert info["default_size"] == 19
    assert info["years"] == [1933, 2010]
    assert info["max_download"] == 1000  # the page says when a download holds only the newest


def test_the_pages_address_is_made_of_the_apis_parameters(client):
    """Each parameter the page puts in its address (docs/exploring.md's table) is one the route
    that shows that part of the view answers: a wrong value of it is refused by name."""
    ids = game_ids(client, "pd,dp,pq")
    view = {"size": "19", "moves": "pd,dp,pq", "year_from": "1900", "year_to": "1999", "player": "Go"}
    search = "&".join(f"{key}={value}" for key, value in view.items())
    for route in ("/api/position", "/api/games", "/api/pattern"):
        extra = "&region=T13:N19&any=R17&swap=1" if route == "/api/pattern" else ""
        # the read-only book has no pattern index: the pattern search itself is test_pattern_search_and_its_games'
        assert client.get(f"{route}?{search}{extra}").status_code in ((200, 409) if extra else (200,))
        for key in ("size", "year_from", "year_to"):
            assert key in error(client, f"{route}?{search.replace(f'{key}={view[key]}', f'{key}=x')}{extra}", 400)
    assert "region" in error(client, f"/api/pattern?{search}&region=T13", 400).lower()
    game = ok(client, f"/api/game/{ids['go']}?moves=pd,dp,pq&at=3")
    assert game["at"] == 3 and "at" in error(client, f"/api/game/{ids['go']}?moves=pd,dp,pq&at=x", 400)
    assert "sym" in error(client, f"/api/game/{ids['go']}?sym=x", 400)
    # a link's orientation (sym=) wins over the search's; the page steps through the moves itself
    turned = ok(client, f"/api/game/{ids['go']}?moves=pd,dp,pq&at=3&sym=5")
    plain = ok(client, f"/api/game/{ids['go']}")
    assert turned["symmetry"] == 5 and plain["symmetry"] == 0 and plain["setup"] == {"B": [], "W": [], "E": []}
    assert [m["sgf"] for m in turned["moves"]] == [
        base.point_to_sgf(coords.transform_point(5, base.sgf_to_point(m["sgf"], 19), 19), 19)
        for m in plain["moves"]]
    assert "sym" in error(client, f"/api/game/{ids['go']}?sym=8", 400)


def test_page_and_static_files_are_served(client):
    page = client.get("/")
    assert page.status_code == 200 and b"<svg" in page.data and b"/static/app.js" in page.data
    for name in ("app.js", "style.css", "index.html", "tabs.js"):
        assert client.get(f"/static/{name}").status_code == 200
    from fuseki.book.ui.web.app import STATIC

    # works offline: no CDN, no remote fonts, in any of the page's files (each of its ES modules)
    for name in sorted(path.name for path in STATIC.iterdir() if path.is_file()):
        text = client.get(f"/static/{name}").data.replace(b"http://www.w3.org/2000/svg", b"")
        assert b"http:" not in text and b"https:" not in text and b"//cdn" not in text, name
    assert client.get("/static/../app.py").status_code == 404
    assert client.get("/static/%2e%2e/app.py").status_code == 404


# --- /api/position ----------------------------------------------------------------------------


def test_empty_board_next_moves_merge_symmetric_openings(client):
    answer = ok(client, "/api/position")
    assert answer["total"] == 5 and answer["move_number"] == 0 and answer["to_move"] == "B"
    assert answer["stones"] == {"B": [], "W": []} and answer["last"] is None
    first, second = answer["next"]
    assert (first["letter"], first["games"], first["winrate"]) == ("a", 4, 0.5)
    assert sorted(first["points"]) == ["dd", "dp", "pd", "pp"]
    assert first["sgf"] in first["points"]
    assert (second["letter"], second["games"], second["winrate"]) == ("b", 1, 1.0)
    assert len(second["points"]) == 8


def test_position_after_moves_in_sgf_and_gtp_form(client):
    sgf = ok(client, "/api/position?moves=pd,dp,pq,dd")
    gtp = ok(client, "/api/position?moves=Q16,D4,q3,D16")
    assert sgf == gtp
    assert sgf["stones"] == {"B": ["pd", "pq"], "W": ["dd", "dp"]}
    assert sgf["last"] == {"color": "W", "sgf": "dd", "vertex": "D16"}
    assert sgf["to_move"] == "B" and sgf["total"] == 2  # seigen, and mirror seen flipped
    assert [(m["vertex"], m["games"]) for m in sgf["next"]] == [("F3", 2)]


def test_rotated_search_finds_the_mirrored_game(client):
    # seigen after 4 moves, seen from the mirror game's orientation: both games match.
    answer = ok(client, "/api/position?moves=dd,pp,dq,pd")
    assert answer["total"] == 2
    assert [(m["sgf"], m["games"]) for m in answer["next"]] == [("nq", 2)]


def test_transposition_and_symmetric_next_moves(client):
    answer = ok(client, "/api/position?moves=pd,dp,pp,dd")
    assert answer["total"] == 2
    moves = {m["sgf"]: m for m in answer["next"]}
    assert set(moves) in ({"jj", "fc"}, {"jj", "fq"})
    fc = moves.get("fc") or moves["fq"]
    assert sorted(fc["points"]) == ["fc", "fq"]


def test_captures_are_applied(client):
    answer = ok(client, f"/api/position?moves={CAPTURE_LINE}")
    assert answer["captures"] == {"B": 1, "W": 0}
    assert "qc" not in answer["stones"]["W"]
    assert answer["stones"]["B"] == ["pc", "qb", "qd", "rc"]


def test_filters_by_year_and_player(client):
    assert ok(client, "/api/position?year_from=1980&year_to=1995")["total"] == 2
    assert ok(client, "/api/position?year_from=2000")["total"] == 2
    assert ok(client, "/api/position?player=kato")["total"] == 1
    assert ok(client, "/api/position?player=CHO&year_to=1989")["total"] == 0


def test_passes_are_moves(client):
    answer = ok(client, "/api/position?moves=pd,pass,pass")
    assert answer["last"] == {"color": "B", "sgf": "", "vertex": "pass"}
    # the key is stones and the player to move: the same position as after pd alone
    assert answer["to_move"] == "W" and answer["total"] == ok(client, "/api/position?moves=pd")["total"] == 4


@pytest.mark.parametrize("query, words", [
    ("moves=zz", ["move 1", "zz"]),
    ("moves=pd,Z99", ["move 2", "Z99"]),
    ("moves=I5", ["move 1", "I5"]),
    ("moves=pd,dp,pd", ["move 3", "occupied"]),
    ("moves=" + CAPTURE_LINE + ",qc", ["move 8", "suicide"]),
    ("moves=pd;drop", ["move 1"]),
    ("size=1", ["size"]),
    ("size=26", ["size"]),
    ("size=abc", ["size"]),
    ("year_from=x", ["year_from"]),
    ("year_from=2000&year_to=1990", ["2000", "1990"]),
    ("year_to=99999999999999999999", ["year_to"]),
    ("player=" + "x" * 101, ["player"]),
    ("moves=" + ",".join(["pass"] * 801), ["800"]),
])
def test_position_errors_are_400_with_a_message(client, query, words):
    message = error(client, f"/api/position?{query}", 400)
    for word in words:
        assert word in message


def test_suicide_is_refused_with_the_reason(client):
    # White surrounds aa on the edge: Black's aa would have no liberty.
    message = error(client, "/api/position?moves=pd,ba,pp,ab,aa", 400)
    assert "suicide" in message


def test_sql_in_the_filters_is_only_text(client):
    for player in ("'; DROP TABLE games; --", "%", "_", "\\", "' OR '1'='1", "\"", "[a-z]*"):
        response = client.get("/api/position", query_string={"player": player})
        assert response.status_code == 200 and response.get_json()["total"] == 0, player
    for player in ("\x00", "Cho\x00", "a\tb"):  # SQLite would end a LIKE pattern at the NUL
        response = client.get("/api/position", query_string={"player": player})
        assert response.status_code == 400 and "control" in response.get_json()["error"]
    assert ok(client, "/api/info")["games"] == 5


# --- /api/games and the SGF download -----------------------------------------------------------


def test_games_page_lists_the_games_and_where_the_position_occurred(client):
    page = ok(client, "/api/games?moves=pd,dp,pp,dd")
    assert (page["total"], page["page"], page["pages"]) == (2, 1, 1)
    rows = {row["black"]: row for row in page["rows"]}
    assert set(rows) == {"Takemiya Masaki", "Cho Chikun"}
    takemiya = rows["Takemiya Masaki"]
    assert (takemiya["white"], takemiya["black_rank"], takemiya["date"], takemiya["result"],
            takemiya["winner"], takemiya["move_number"], takemiya["move_count"]) == (
        "Kato Masao", "9d", "1985-05-01", "B+R", "B", 4, 6)


def test_games_are_paged(client):
    sizes = [len(ok(client, f"/api/games?page={n}&page_size=2")["rows"]) for n in (1, 2, 3)]
    assert sizes == [2, 2, 1]
    assert ok(client, "/api/games?page_size=2")["pages"] == 3


def test_games_pages_by_keyset_give_the_numbered_pages(client):
    numbered = [[row["id"] for row in ok(client, f"/api/games?page={n}&page_size=2")["rows"]] for n in (1, 2, 3)]
    pages, after = [], ""
    while True:
        page = ok(client, f"/api/games?page_size=2{after}")
        assert page["page"] == len(pages) + 1
        pages.append([row["id"] for row in page["rows"]])
        if page["after"] is None:
            break
        assert page["after"] == page["rows"][-1]["id"]
        after = f"&after={page['after']}"
    assert pages == numbered


@pytest.mark.parametrize("query, status", [
    ("after=999", 404), ("after=0", 400), ("after=x", 400),
    ("page=4&page_size=2", 404), ("page=0", 400), ("page=-1", 400), ("page=x", 400),
    ("page_size=0", 400), ("page_size=101", 400), ("moves=pd,pd", 400), ("moves=pd&page=2", 404),
])
def test_games_errors(client, query, status):
    error(client, f"/api/games?{query}", status)


def test_games_download_is_an_sgf_collection(client):
    response = client.get("/api/games.sgf?moves=pd,dp,pp,dd")
    assert response.status_code == 200
    assert "attachment" in response.headers["Content-Disposition"]
    names = {record.black for record in read_games(response.data, "download.sgf")}
    assert names == {"Takemiya Masaki", "Cho Chikun"}
    assert error(client, "/api/games.sgf?moves=tt,zz", 400)


def test_games_download_is_capped_at_the_newest(client, monkeypatch):
    from fuseki.book.ui.web import app as web_app

    monkeypatch.setattr(web_app, "MAX_DOWNLOAD", 2)
    records = read_games(client.get("/api/games.sgf").data, "download.sgf")
    assert [r.year for r in records] == [2010, 2001]


def test_empty_result_is_a_page_not_an_error(client):
    page = ok(client, "/api/games?moves=aa")
    assert page["total"] == 0 and page["rows"] == []


# --- /api/game ----------------------------------------------------------------------------------


def test_game_record(client):
    ids = game_ids(client)
    game = ok(client, f"/api/game/{ids['go']}")
    assert game["info"]["black"] == "Go Seigen" and game["info"]["white_rank"] == "9d"
    assert game["info"]["move_count"] == 7 and game["symmetry"] == 0
    assert [m["sgf"] for m in game["moves"]] == ["pd", "dp", "pq", "dd", "fq", "hq", "cn"]
    assert game["moves"][0] == {"color": "B", "sgf": "pd", "vertex": "Q16"}


def test_game_is_shown_in_the_search_orientation(client):
    search = "pd,dp,pq,dd"
    rows = ok(client, f"/api/games?moves={search}")["rows"]
    mirror = next(row for row in rows if row["black"] == "Mirror Black")
    game = ok(client, f"/api/game/{mirror['id']}?moves={search}&at={mirror['move_number']}")
    assert game["symmetry"] != 0
    assert [m["sgf"] for m in game["moves"][:5]] == ["pd", "dp", "pq", "dd", "fq"]


def test_game_sgf_download(client):
    ids = game_ids(client)
    response = client.get(f"/api/game/{ids['cho']}.sgf")
    assert response.status_code == 200 and "attachment" in response.headers["Content-Disposition"]
    (record,) = read_games(response.data, "cho.sgf")
    assert record.black == "Cho Chikun" and len(record.moves) == 6


@pytest.mark.parametrize("path, status", [
    ("/api/game/999999", 404), ("/api/game/0", 404), ("/api/game/99999999999999999999999", 404),
    ("/api/game/999999.sgf", 404), ("/api/game/1/position", 404), ("/api/game/abc", 404),
    ("/api/game/-1", 404), ("/api/nothing", 404), ("/nothing", 404),
])
def test_unknown_games_and_paths_are_404(client, path, status):
    error(client, path, status)


def test_game_argument_errors(client):
    gid = game_ids(client)["go"]
    for query in ("at=-1", "at=x", "sym=8", "sym=x"):
        error(client, f"/api/game/{gid}?{query}", 400)
    error(client, f"/api/game/{gid}?at=99", 400)
    error(client, f"/api/game/{gid}?moves=zz&at=1", 400)


def test_only_get_is_allowed(client):
    response = client.post("/api/position")
    assert response.status_code == 405 and response.is_json


def test_no_query_makes_it_answer_500(client):
    weird = ["", "%00", "pd,,dp", ",,,", "PD", "pD", "tt", "pass,pass,pass", "q", "Q", "Q0", "Q-1", "Ⅸ1",
             "١٦", "pd\x00", " pd , dp ", "a" * 5000, "%ff%fe"]
    for value in weird:
        for name in ("moves", "player", "year_from", "page", "size", "page_size"):
            for path in ("/api/position", "/api/games", "/api/games.sgf"):
                status = client.get(path, query_string={name: value}).status_code
                assert status in (200, 400, 404), (path, name, value, status)


def test_point_names_round_trip():
    from fuseki.engine.core.base import parse_point

    for point in base.board_points(19):
        assert parse_point(base.point_to_sgf(point, 19), 19) == point
        assert parse_point(base.point_to_vertex(point, 19), 19) == point


# --- property: nothing a client sends gets a 500 ------------------------------------------------

_TOKENS = st.one_of(st.sampled_from(["pd", "dp", "pp", "dd", "Q16", "D4", "pass", "tt", "", "zz", "T19",
                                     "A1", "aa", "ss", "I9", "Z0", "q", "0"]),
                    st.text(max_size=6))
_PARAMS = st.dictionaries(
    st.sampled_from(["moves", "size", "year_from", "year_to", "player", "page", "page_size", "at", "move",
                     "sym"]),
    st.one_of(st.lists(_TOKENS, max_size=12).map(",".join), st.integers(-10**20, 10**20).map(str),
              st.text(max_size=20)),
    max_size=5)
_PATHS = st.one_of(st.sampled_from(["/api/position", "/api/games", "/api/games.sgf", "/api/info"]),
                   st.integers(-3, 10**20).map(lambda n: f"/api/game/{n}"),
                   st.integers(0, 7).map(lambda n: f"/api/game/{n}.sgf"))


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(path=_PATHS, params=_PARAMS)
def test_property_any_request_gets_json_and_no_500(client, path, params):
    response = client.get(path, query_string=params)
    assert response.status_code < 500, (path, params, response.data[:300])
    if response.status_code >= 400:
        assert response.is_json and response.get_json()["error"]


def test_fuseki_serve_without_a_book_is_one_line(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    result = subprocess.run([sys.executable, "-m", "fuseki", "serve", "--book", str(tmp_path / "none.sqlite")],
                            capture_output=True, text=True, timeout=120,
                            cwd=Path(__file__).resolve().parents[1])
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == f"fuseki serve: no book at {tmp_path / 'none.sqlite'}\n"


def test_security_headers_and_trusted_hosts(book_path):
    from fuseki.book.ui.web.app import create_app
    from fuseki.book.ui.web.hosts import LOOPBACK_NAMES

    app = create_app(book_url=str(book_path), trusted_hosts=LOOPBACK_NAMES)
    try:
        client = app.test_client()
        for host in ("localhost", "127.0.0.1:5000", "[::1]:8000"):
            assert client.get("/api/info", headers={"Host": host}).status_code == 200
        for host in ("evil.example", "127.0.0.1.nip.io:5000"):  # DNS rebinding to loopback
            response = client.get("/api/info", headers={"Host": host})
            assert response.status_code == 400 and "not trusted" in response.get_json()["error"]
        page = client.get("/")
        assert "default-src 'self'" in page.headers["Content-Security-Policy"]
        assert page.headers["X-Content-Type-Options"] == "nosniff"
    finally:
        app.extensions["fuseki_book"].close()


# --- pattern search -------------------------------------------------------------------------

def test_pattern_search_and_its_games(book_path):
    """/api/pattern: the upper-right corner after pd, as a pattern; /api/pattern/games lists the games
    at their matching move; a bad region is a 400 with one line."""
    from fuseki.book.analysis.patterns import index
    from fuseki.book.analysis.patterns.pattern import Pattern
    from fuseki.book.analysis.patterns.search import search
    from fuseki.book.storage.store import Book
    from fuseki.book.ui.web.app import create_app
    from fuseki.engine.core.base import xy_to_point

    with Book.open(str(book_path)) as book:  # the server reads the index; fuseki serve builds it
        index.update(book, progress=None)
        cells = {xy_to_point(x, y, 19): 0 for x in range(12, 19) for y in range(7)}  # empty
        cells[base.sgf_to_point("pd", 19)] = 1
        expected = search(book, Pattern(19, (12, 0, 18, 6), cells))
    app = create_app(book_url=str(book_path))
    try:
        client = app.test_client()
        answer = ok(client, "/api/pattern?moves=pd&region=N19:T13")
        assert answer["kind"] == "corner" and answer["total"] == expected.total > 0
        assert [(r["sgf"], r["colour"], r["games"], r["at_once"], r["after_tenuki"], r["wins"])
                for r in answer["next"]] == [
            (base.point_to_sgf(c.point, 19), "B" if c.colour == 1 else "W", c.games, c.at_once, c.after_tenuki,
             c.wins) for c in expected.continuations]
        letters = {}  # a point's Black and White rows share its letter
        for r in answer["next"]:
            assert letters.setdefault(r["sgf"], r["letter"]) == r["letter"]
        named = [letter for letter in letters.values() if letter]
        assert len(set(named)) == len(named)
        assert answer["tenuki"]["games"] == expected.tenuki.games
        page = ok(client, "/api/pattern/games?moves=pd&region=N19:T13&page_size=100")
        assert page["total"] == expected.total
        assert {row["id"]: row["move_number"] for row in page["rows"]} == expected.matches
        assert "one point" in error(client, "/api/pattern?moves=pd&region=N19:N19", 400)
        assert "outside the region" in error(client, "/api/pattern?moves=pd&region=N19:T13&any=A1", 400)
        assert "bad region" in error(client, "/api/pattern?region=Z99", 400)
        # Kombilo's options: the same answer as the library's for the same Pattern
        from fuseki.book.analysis.patterns.pattern import EMPTY_OR_BLACK

        cells[base.sgf_to_point("pd", 19)] = EMPTY_OR_BLACK
        with Book.open(str(book_path)) as book:
            expected = search(book, Pattern(19, (12, 0, 18, 6), cells, True, 2, 0, 20))
        answer = ok(client, "/api/pattern?moves=pd&region=N19:T13&empty_or_black=Q16&fixed_colour=0&to_move=white"
                            "&moves_to=20")
        assert answer["total"] == expected.total
        assert answer["options"] == "colours also exchanged, White to move, moves 0-20"
        assert [(r["sgf"], r["games"]) for r in answer["next"]] == [
            (base.point_to_sgf(c.point, 19), c.games) for c in expected.continuations]
        assert "to_move is black" in error(client, "/api/pattern?moves=pd&region=N19:T13&to_move=red", 400)
        assert "to_move is black" in error(client, "/api/pattern?moves=pd&region=N19:T13&moves_to=x", 400)
    finally:
        app.extensions["fuseki_book"].close()


def test_fuseki_serve_on_a_port_in_use_is_one_line(book_path):
    import socket
    import subprocess
    import sys
    from pathlib import Path

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run([sys.executable, "-m", "fuseki", "serve", "--book", str(book_path),
                                 "--port", str(port)],
                                capture_output=True, text=True, timeout=120, cwd=Path(__file__).resolve().parents[1])
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == (f"fuseki serve: cannot listen on 127.0.0.1 port {port}: Address already in use "
                             "(another server there? --port picks another, --port 0 a free one)\n")
