"""Kombilo's pattern options on the explorer page, in a real browser.

The page's pattern controls set who moves next, the move range, the colour wildcards ("empty
or black" drawn x, "empty or white" drawn o, beside "any points") and fixed colour or swap;
each search's continuation table must be what ``/api/pattern`` answers the test for the same
parameters, the options go into the address and the summary line, and the address opened in
a new browser session restores them.  Chromium, chromedriver and the fixtures are
tests/browsing.py's; every wait is on a condition.  The years chart under the
next-move table has a bar per dated year of ``/api/position?by_year=1``, and none for a book
without dates (the built-in one).
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

from browsing import Page, chromium, serving

pytestmark = pytest.mark.slow

REGION = "N19:T13"


def api(url, path, **params):
    """The API's answer; asked again after a 503 "server busy" (the page's own search may be scanning:
    one request's scans at a time, book.ui.web.admission), as the page does."""
    for _ in range(10):
        try:
            with urllib.request.urlopen(f"{url}api/{path}?{urllib.parse.urlencode(params)}", timeout=30) as reply:
                return json.load(reply)
        except urllib.error.HTTPError as error:
            if error.code != 503 or not json.load(error).get("busy"):
                raise
        time.sleep(1)
    raise AssertionError(f"api/{path}: the server stayed busy")


def expected_rows(answer):
    """The first three cells the page shows for each continuation of a /api/pattern answer."""
    rows = []
    for row in answer["next"]:
        games = f"{row['games']} ({row['after_tenuki']} after tenuki)" if row["after_tenuki"] else str(row["games"])
        rows.append([row["letter"] or "", f"{row['vertex']} {'Black' if row['colour'] == 'B' else 'White'}", games])
    return rows


def shown_rows(page):
    return [row[:3] for row in page.rows("#next-table")]


def address_options(driver):
    """The pattern's wildcards and options in the page's address."""
    fragment = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(driver.current_url).fragment))
    keys = ("any", "empty_or_black", "empty_or_white", "swap", "to_move", "moves_from", "moves_to")
    return {key: value for key, value in fragment.items() if key in keys}


def set_options(page, to_move="", moves_from="", moves_to="", swap=False):
    from selenium.webdriver.support.ui import Select

    Select(page.driver.find_element("id", "pattern-to-move")).select_by_value(to_move)
    for element_id, value in (("pattern-from", moves_from), ("pattern-to", moves_to)):
        field = page.driver.find_element("id", element_id)
        field.clear()
        field.send_keys(value)
    if page.driver.find_element("id", "pattern-swap").is_selected() != swap:
        page.click("#pattern-swap")


def test_pattern_options_search_as_the_api_and_round_trip(server, browser, tmp_path):
    page = Page(browser)
    page.open(server)
    page.play("pd")
    page.click("#pattern-mode")
    page.click('#search-board rect[data-sgf="ma"]')  # N19
    page.click('#search-board rect[data-sgf="sg"]')  # T13
    page.wait(lambda _: f"region {REGION}" in page.text("pattern-region"))
    page.click("#pattern-x")
    page.click('#search-board rect[data-sgf="qc"]')  # R17: empty or black
    page.click('#search-board rect[data-sgf="dd"]')  # D16, outside the region: nothing
    page.click("#pattern-o")
    page.click('#search-board rect[data-sgf="rc"]')  # S17: empty or white
    page.click("#pattern-any")
    page.click('#search-board rect[data-sgf="qe"]')  # R15: any
    page.wait(lambda _: page.text("pattern-region")
              == f"region {REGION} · any R15 · empty or black R17 · empty or white S17")
    drawn = ("return [...document.querySelectorAll('#search-board :is(.any, .empty-or-black, .empty-or-white)')]"
             ".map(t => [t.dataset.sgf, t.textContent])")
    assert sorted(page.js(drawn)) == [["qc", "x"], ["qe", "?"], ["rc", "o"]]
    assert page.move_number() == 1  # marking played no move
    page.click('#search-board rect[data-sgf="qe"]')  # again: R15 back to an exact point
    page.wait(lambda _: "any" not in page.text("pattern-region"))
    page.click("#pattern-any")  # marking off
    wild = {"empty_or_black": "R17", "empty_or_white": "S17"}

    cases = [({}, "fixed colour"),
             ({"to_move": "black"}, "fixed colour, Black to move"),
             ({"to_move": "white", "moves_from": "1", "moves_to": "40"}, "fixed colour, White to move, moves 1-40"),
             ({"moves_from": "2"}, "fixed colour, moves 2-"),
             ({"swap": "1", "to_move": "white"}, "colours also exchanged, White to move")]
    answers = []
    for options, words in cases:
        set_options(page, options.get("to_move", ""), options.get("moves_from", ""), options.get("moves_to", ""),
                    options.get("swap") == "1")
        page.click("#pattern-search")
        answer = api(server, "pattern", size=19, moves="pd", region=REGION, **wild, **options)
        assert answer["options"] == words
        page.wait(lambda _, words=words: f"pattern ({words})" in page.text("next-summary"))
        page.wait(lambda _, answer=answer: shown_rows(page) == expected_rows(answer))
        summary = page.text("next-summary")
        assert summary.startswith(f"{answer['total']} game") or (not answer["total"] and summary.startswith("No game"))
        page.wait(lambda _, options=options: address_options(browser) == {**wild, **options})
        answers.append(answer)
    assert len({json.dumps(a["next"]) + str(a["total"]) for a in answers}) > 1  # the options change the answer

    address = browser.current_url
    seen = {"rows": shown_rows(page), "summary": page.text("next-summary"), "region": page.text("pattern-region")}
    with chromium(tmp_path / "second-profile") as other:
        again = Page(other)
        other.get(address)
        again.wait(lambda _: "pattern (" in again.text("next-summary"))
        again.wait(lambda _: {"rows": shown_rows(again), "summary": again.text("next-summary"),
                              "region": again.text("pattern-region")} == seen)
        assert again.js("return ['pattern-to-move', 'pattern-from', 'pattern-to']"
                        ".map(id => document.getElementById(id).value)") == ["white", "", ""]
        assert other.find_element("id", "pattern-swap").is_selected()
        assert again.js("return document.querySelectorAll('#search-board text.empty-or-black, "
                        "#search-board text.empty-or-white').length") == 2


def bars(page):
    return page.js("return [...document.querySelectorAll('#years-svg rect.year-bar')]"
                   ".map(bar => [Number(bar.dataset.year), Number(bar.dataset.games)])")


def test_the_years_chart_has_a_bar_per_year_of_the_api(server, browser):
    page = Page(browser)
    page.open(server)
    for moves in ("", "pd", "pd,dp"):
        if moves:
            page.play(moves.split(",")[-1])
        answer = api(server, "position", size=19, by_year=1, **({"moves": moves} if moves else {}))
        years = [[row["year"], row["games"]] for row in answer["years"]["rows"] if row["year"] is not None]
        assert years
        page.wait(lambda _, years=years: bars(page) == years)
        assert page.js("return !document.getElementById('years-chart').hidden")
        assert page.text("years-caption").startswith(f"games per year, {years[0][0]}–{years[-1][0]}")


def test_no_years_chart_for_a_book_without_dates(browser):

    from fuseki.book.model.builtin import PATH as BUILTIN

    with serving(BUILTIN) as url:
        answer = api(url, "position", size=19, moves="pd", by_year=1)  # 200: no request fails on the page
        assert answer["years"] is None and "no dates" in answer["years_note"] and answer["next"]
        with pytest.raises(urllib.error.HTTPError) as refused:  # comparing periods is asked of dates
            api(url, "position", size=19, moves="pd", trends="2005-2007:2008-2009")
        assert refused.value.code == 409
        page = Page(browser)
        page.open(url)
        page.play("pd")
        page.wait(lambda _: "moves=pd" in browser.current_url)  # the search shown, its years asked
        assert page.js("return document.getElementById('years-chart').hidden") and not bars(page)
        severe = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
        assert not severe, severe  # a failed request is a console error
