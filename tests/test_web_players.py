"""The player page (player.js, /api/player) in a real browser, and its API's refusals.

A real ``fuseki serve`` over six games written here (three players, four years, a draw):
a name in the games list opens the player's page (by a click and by the keyboard), whose record
is the API's; the address holds the page (opened in a new browser session it shows the same),
the browser's back button returns to the search, an opponent gives the head-to-head, a game
opens in the replay column, a first move sets the search board; no console error on the way; on
a phone (390×844) no horizontal scroll and every control a 40 px target.

Chromium, the ``serving`` helper, ``chromium`` (a second browser session) and ``Page`` are
tests/browsing.py's.  No fixed sleeps: every wait is on a condition.
"""

from __future__ import annotations

import json
import urllib.parse
import urllib.request

import pytest

from browsing import Page, chromium, emulate, serving, show_tab_of
from webbook import build_book

pytestmark = pytest.mark.slow

LEE, GU, CHO = "Lee Sedol", "Gu Li", "Cho U"


def sgf(black, white, date, result, moves):
    return (f"(;GM[1]FF[4]SZ[19]PB[{black}]BR[9d]PW[{white}]WR[9d]DT[{date}]RE[{result}]KM[6.5]"
            + "".join(f";{'BW'[i % 2]}[{m}]" for i, m in enumerate(moves.split())) + ")").encode()


GAMES = {  # Lee: Black in 1, 3, 5; White in 2, 4 (a draw)
    "g1": sgf(LEE, GU, "2008-01-01", "B+R", "pd dp pp dd"),
    "g2": sgf(GU, LEE, "2008-05-02", "W+1.5", "qd dd dp pp"),
    "g3": sgf(LEE, CHO, "2009-02-03", "W+R", "dp pd dd pp"),
    "g4": sgf(CHO, LEE, "2009-06-06", "Draw", "pd dd pp dp"),
    "g5": sgf(LEE, GU, "2010-03-03", "B+0.5", "qd dp pp dd"),
    "g6": sgf(GU, CHO, "2010-04-04", "B+R", "pd dp qp dd"),
}

RECORD_ROWS = ("return [...document.querySelectorAll(arguments[0] + ' tbody tr')]"
               ".map(r => [...r.cells].map(c => c.textContent))")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with serving(build_book(tmp_path_factory.mktemp("players") / "book.sqlite", GAMES)) as url:
        yield url


def api(server, **params):
    with urllib.request.urlopen(f"{server}api/player?{urllib.parse.urlencode(params)}", timeout=30) as reply:
        return json.loads(reply.read())


def expected_rows(years, total) -> list[list[str]]:
    def row(label, r):
        pct = f"{100 * r['wins'] / r['games']:.1f}%" if r["games"] else "–"
        return [label, str(r["games"]), str(r["wins"]), str(r["losses"]), pct,
                f"{r['black_games']} ({r['black_wins']}–{r['black_losses']})",
                f"{r['white_games']} ({r['white_wins']}–{r['white_losses']})"]
    return [row(str(y["year"]) if y["year"] is not None else "no date", y) for y in years] + [row("total", total)]


def shown(page) -> bool:
    return page.js("return !document.getElementById('player-view').hidden && "
                   "getComputedStyle(document.getElementById('search')).display === 'none'")


def wait_for_player(page, heading):
    page.wait(lambda _: shown(page) and page.text("player-heading") == heading
              and page.js(RECORD_ROWS, "#player-years"))


def console_errors(driver) -> list:
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def test_the_api_counts_and_refusals(server):
    answer = api(server, name="lee SEDOL")
    assert answer["name"] == LEE and answer["total"]["games"] == 5
    assert (answer["total"]["wins"], answer["total"]["losses"]) == (3, 1)  # the draw is neither
    assert [(y["year"], y["games"]) for y in answer["years"]] == [(2008, 2), (2009, 2), (2010, 1)]
    assert [(m["vertex"], m["games"], m["wins"]) for m in answer["as_black"]] == [("Q16", 2, 1), ("R16", 1, 1)]
    assert sorted((a["first"]["vertex"], [(r["vertex"], r["games"]) for r in a["replies"]])
                  for a in answer["as_white"]) == [("Q16", [("D16", 1)]), ("R16", [("D16", 1)])]
    assert answer["games"]["total"] == 5 and [r["date"] for r in answer["games"]["rows"]][0] == "2010-03-03"
    versus = api(server, name=LEE, vs="gu li", page_size=1, page=2)
    assert versus["vs"] == GU and versus["vs_total"]["games"] == 3 and versus["games"]["pages"] == 3
    assert versus["games"]["rows"][0]["date"] == "2008-05-02"
    for query, status, words in (({"name": "Lee"}, 404, "names containing it: lee sedol"),
                                 ({}, 400, "name is required"),
                                 ({"name": LEE, "vs": "nobody"}, 404, "Lee Sedol never met 'nobody'"),
                                 ({"name": LEE, "vs": "LI"}, 404, "(opponents containing it: gu li)"),
                                 ({"name": LEE, "page": "9"}, 404, "out of range"),
                                 ({"name": "x" * 101}, 400, "longer than 100"), ({"name": "a\x01"}, 400, "control")):
        with pytest.raises(urllib.error.HTTPError) as refused:
            api(server, **query)
        assert refused.value.code == status and words in json.loads(refused.value.read())["error"]
    with urllib.request.urlopen(f"{server}api/players?q=LI", timeout=30) as reply:
        assert json.loads(reply.read())["players"] == [{"name": "gu li", "games": 4}]


def test_a_statistics_book_has_no_players():
    from fuseki.book.model import builtin
    from fuseki.book.ui.web.app import create_app

    app = create_app(book_url=str(builtin.PATH))
    try:
        for path in ("/api/player?name=joonki", "/api/players?q=joon"):
            answer = app.test_client().get(path)
            assert answer.status_code == 409 and "without players" in answer.get_json()["error"]
    finally:
        app.extensions["fuseki_book"].close()


def test_from_the_games_list_to_a_player_and_back(server, browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    driver = browser
    page = Page(driver)
    page.open(server)
    page.wait(lambda _: len(page.rows("#games-table")) == 6)
    search_status, search_url = page.text("search-status"), driver.current_url
    show_tab_of(driver, "#games-table")  # the games' tab beside the board
    links = driver.find_elements(By.CSS_SELECTOR, "#games-table a.player-link")
    next(link for link in links if link.text == f"{LEE} 9d").click()
    wait_for_player(page, f"{LEE}: 5 games")
    answer = api(server, name=LEE)
    assert page.js(RECORD_ROWS, "#player-years") == expected_rows(answer["years"], answer["total"])
    page.wait(lambda _: "name=Lee+Sedol" in driver.current_url or "name=Lee%20Sedol" in driver.current_url)
    assert [row[:2] for row in page.rows("#player-games")] == [[r["black"] + " 9d", r["white"] + " 9d"]
                                                              for r in answer["games"]["rows"]]
    address = driver.current_url

    driver.back()  # the search as it was
    page.wait(lambda _: not shown(page) and page.text("search-status") == search_status)
    assert driver.current_url == search_url

    # the keyboard reaches a name: Enter on the focused link opens its page
    show_tab_of(driver, "#games-table")
    links = driver.find_elements(By.CSS_SELECTOR, "#games-table a.player-link")
    link = next(a for a in links if a.text == f"{GU} 9d")
    link.send_keys(Keys.ENTER)
    wait_for_player(page, f"{GU}: 4 games")
    driver.back()
    page.wait(lambda _: not shown(page))

    driver.forward()  # and forward to the player again
    wait_for_player(page, f"{GU}: 4 games")

    # an opponent: the head-to-head, its own history entry
    driver.get(address)
    wait_for_player(page, f"{LEE}: 5 games")
    opponents = driver.find_elements(By.CSS_SELECTOR, "#player-opponents button")
    next(b for b in opponents if b.text.startswith(GU)).click()
    page.wait(lambda _: page.text("player-vs-heading") == f"against {GU}: 3 games")
    versus = api(server, name=LEE, vs=GU)
    assert page.js(RECORD_ROWS, "#player-vs-years") == expected_rows(versus["vs_years"], versus["vs_total"])
    page.wait(lambda _: "vs=Gu+Li" in driver.current_url and len(page.rows("#player-games")) == 3)
    driver.back()
    page.wait(lambda _: page.js("return document.getElementById('player-vs-block').hidden"))

    # a game of the list opens in the replay column, and the address keeps both
    page.click("#player-games tbody tr:first-child td:nth-child(3)")
    page.wait(lambda _: LEE in page.text("game-info") and "game=" in driver.current_url)
    assert shown(page) and "2010-03-03" in page.text("game-info")

    # a first move sets the search board to it
    first = driver.find_element(By.CSS_SELECTOR, "#player-black button")
    assert first.text.startswith("Q16 · 2 · ")
    first.click()
    page.wait(lambda _: not shown(page) and page.stones("search-board") == ["pd"])
    page.wait(lambda _: "moves=pd" in driver.current_url and "name=" not in driver.current_url)
    driver.back()
    wait_for_player(page, f"{LEE}: 5 games")

    def reply_clicked(_):
        """The moves of the first reply as White (after B R16... D16), clicked: the player's page is
        drawn again after its request, which the heading, the same as before, does not show, and a
        button read meanwhile may be replaced (page.wait tries again)."""
        reply = driver.find_element(By.CSS_SELECTOR, "#player-white button")
        moves = reply.get_attribute("data-moves").split(",")
        reply.click()
        return moves

    moves = page.wait(reply_clicked)
    page.wait(lambda _: not shown(page) and page.stones("search-board") == sorted(moves))
    assert console_errors(driver) == []

    # the address alone, in another browser session, shows the same page
    with chromium(tmp_path / "other") as other:
        again = Page(other)
        other.get(address)
        wait_for_player(again, f"{LEE}: 5 games")
        assert again.js(RECORD_ROWS, "#player-years") == expected_rows(answer["years"], answer["total"])
        assert console_errors(other) == []


def test_a_name_without_games_offers_the_names_containing_it(server, browser):
    from selenium.webdriver.common.by import By

    driver = browser
    page = Page(driver)
    page.open(server + "#name=lee")
    page.wait(lambda _: "no player named 'lee'" in page.text("player-heading"))
    # the names containing it come by a request of their own, after the heading
    page.wait(lambda _: driver.find_elements(By.CSS_SELECTOR, "#player-similar button"))
    choices = driver.find_elements(By.CSS_SELECTOR, "#player-similar button")
    assert [c.text for c in choices] == ["lee sedol (5)"]
    choices[0].click()
    wait_for_player(page, f"{LEE}: 5 games")
    # the one error in the console is the API's 404 for the name without games
    errors = console_errors(driver)
    assert all("/api/player?" in e["message"] and "404" in e["message"] for e in errors), errors


def test_on_a_phone_no_horizontal_scroll_and_40px_targets(server, browser):
    driver = browser
    emulate(driver, 390, 844, True)
    page = Page(driver)
    page.open(server)
    page.wait(lambda _: len(page.rows("#games-table")) == 6)
    show_tab_of(driver, "#games-table")  # its tab under the board: the names are measured too
    measure = """
const visible = (e) => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== "hidden";
const targets = "button, input:not([type=checkbox]), a.player-link, #player-games tbody tr, #games-table tbody tr";
const size = (e) => [Math.round(e.getBoundingClientRect().width), Math.round(e.getBoundingClientRect().height)];
const small = [...document.querySelectorAll(targets)]
  .filter(visible).map((e) => [e.id || e.className || e.tagName, e.textContent.trim().slice(0, 20), ...size(e)])
  .filter(([, , w, h]) => w < 40 || h < 40);
return {scroll: document.documentElement.scrollWidth, inner: window.innerWidth, small};"""
    found = page.js(measure)
    assert found["scroll"] <= found["inner"] and found["small"] == [], found
    page.js("document.querySelector('#games-table a.player-link').click()")
    page.wait(lambda _: shown(page) and page.js(RECORD_ROWS, "#player-years"))
    page.wait(lambda _: page.rows("#player-games"))
    found = page.js(measure)
    assert found["scroll"] <= found["inner"] and found["small"] == [], found
    assert console_errors(driver) == []
