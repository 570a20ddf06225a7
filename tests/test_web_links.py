"""The explorer page's address holds its view, and its rough edges, in a real browser.

The address's fragment names the search moves, filters, searched pattern and replayed game in
the API's own parameters: opened in a new browser session it shows the same view; the
browser's back and forward buttons walk the search moves.  Then: a new position clears the
old pattern region, an occupied point is refused in the page (named as the board's labels
name it, with no request the API would refuse), the download says how many games it holds
when the position has more than the cap, and the empty board is drawn before the API answers.

Chromium, chromedriver, the ``server``/``browser`` fixtures, ``Page``, ``chromium`` (a second
browser session) and ``in_process`` are tests/browsing.py's; two tests serve the book in this
process (Werkzeug in a thread) to lower the download cap or hold the API's answers.  No fixed
sleeps: every wait is on a condition.
"""

from __future__ import annotations

import json
import threading
import urllib.request

import pytest

from browsing import Page, chromium, in_process
from webbook import build_book

pytestmark = pytest.mark.slow


def test_a_link_opens_the_same_view_in_a_new_browser(server, browser, tmp_path):
    page = Page(browser)
    page.open(server)
    page.play("pd", "dp", "pq")
    page.wait(lambda _: len(page.rows("#games-table")) == 2)
    browser.find_element("id", "year-to").send_keys("1999")
    page.click("#filters button[type=submit]")
    page.wait(lambda _: len(page.rows("#games-table")) == 1)
    page.click("#games-table tbody tr td:nth-child(3)")  # the date: the names link to the players' pages
    page.wait(lambda _: page.text("move-number").startswith("move 3 / "))
    page.click("#next")
    page.wait(lambda _: page.text("move-number").startswith("move 4 / "))
    page.wait(lambda _: "move=4" in browser.current_url)
    address = browser.current_url
    assert "moves=pd%2Cdp%2Cpq" in address and "year_to=1999" in address and "at=3" in address
    seen = page.view()
    assert seen["filters"] == ["", "1999", ""] and len(seen["replay"]) == 4 and seen["selected"]

    with chromium(tmp_path / "second-profile") as other:
        again = Page(other)
        other.get(address)
        again.wait(lambda _: again.text("move-number").startswith("move 4 / "))
        again.wait(lambda _: again.view() == seen)
        assert other.current_url == address


def test_a_searched_pattern_is_in_the_address(server, browser):
    page = Page(browser)
    page.open(f"{server}#size=19&moves=pd&region=T13:N19&any=R17&swap=1")
    page.wait(lambda _: "pattern" in page.text("next-summary"))
    assert page.text("pattern-region") == "region T13:N19 · any R17"
    assert browser.find_element("id", "pattern-swap").is_selected()
    asked = f"{server}api/pattern?size=19&moves=pd&region=T13:N19&any=R17&swap=1"
    with urllib.request.urlopen(asked, timeout=30) as reply:
        expected = json.load(reply)
    assert page.text("next-summary").startswith(f"{expected['total']} game")
    page.wait(lambda _: "region=T13%3AN19" in browser.current_url and "any=R17" in browser.current_url)


def test_back_and_forward_walk_the_search_moves(server, browser):
    page = Page(browser)
    page.open(server)
    page.play("pd", "dp", "pq")
    browser.back()
    page.at(2)
    assert page.stones("search-board") == ["dp", "pd"] and "moves=pd%2Cdp&" in browser.current_url + "&"
    browser.back()
    page.at(1)
    assert page.stones("search-board") == ["pd"]
    browser.forward()
    page.at(2)
    assert page.stones("search-board") == ["dp", "pd"]
    assert page.rows("#next-table") and page.js("return !document.getElementById('forward').disabled")
    page.click("#forward")  # the page's own forward replays the move the browser went back from
    page.at(3)
    assert page.stones("search-board") == ["dp", "pd", "pq"]


def test_a_new_position_clears_the_pattern_region(server, browser):
    page = Page(browser)
    page.open(server)
    page.play("pd")
    for new_position in ("#reset", "play"):
        page.click("#pattern-mode")
        page.click('#search-board rect[data-sgf="ma"]')
        page.click('#search-board rect[data-sgf="sg"]')
        page.wait(lambda _: "N19:T13" in page.text("pattern-region"))
        if new_position == "play":
            page.play("dp")
        else:
            page.click(new_position)
            page.at(0)
            page.play("pd")
        assert page.text("pattern-region") == ""
        assert not page.js("return document.querySelectorAll('#search-board .region').length")
        assert page.js("return document.getElementById('pattern-search').disabled")


def test_an_occupied_point_is_named_and_never_asked(server, browser):
    driver = browser
    page = Page(driver)
    page.open(server)
    page.play("pd")
    page.click('#search-board rect[data-sgf="pd"]')
    page.wait(lambda _: page.text("message") == "Q16 is occupied")
    assert page.move_number() == 1
    asked = page.js("return performance.getEntriesByType('resource').map(e => e.name)"
                    ".filter(n => n.includes('/api/position'))")
    assert asked and not any("pd%2Cpd" in name for name in asked)
    page.js("console.error('probe: the log is read')")  # the log is there to read
    log = driver.get_log("browser")
    assert any("probe: the log is read" in entry["message"] for entry in log)
    errors = [e for e in log if e["level"] == "SEVERE" and "probe" not in e["message"]]
    assert not errors, errors


def test_the_download_says_it_holds_the_newest_games_only(tmp_path, browser, monkeypatch):
    from fuseki.book.ui.web import app as web_app

    monkeypatch.setattr(web_app, "MAX_DOWNLOAD", 2)
    with in_process(build_book(tmp_path / "book.sqlite")) as url:
        page = Page(browser)
        page.open(url)
        page.wait(lambda _: page.text("games-download") == "download SGF (newest 2 of 5)")
        href = browser.find_element("id", "games-download").get_attribute("href")
        with urllib.request.urlopen(href, timeout=30) as reply:
            assert reply.read().count(b"(;") == 2
        page.play("pd", "dp", "pq")  # two games: all of them
        page.wait(lambda _: page.text("games-download") == "download SGF")


def test_the_empty_board_is_drawn_before_the_api_answers(tmp_path, browser):
    hold = threading.Event()
    hold.asked = 0
    with in_process(build_book(tmp_path / "book.sqlite"), hold) as url:
        page = Page(browser)
        browser.get(url)  # the page and its files load; every /api/ answer waits for the hold
        page.wait(lambda _: hold.asked >= 1)
        drawn = page.js("return document.querySelectorAll('#search-board .lines line').length")
        assert drawn == 38 and page.text("book-info") == "loading…" and not page.rows("#next-table")
        hold.set()
        page.wait(lambda _: page.rows("#next-table"))
        assert page.js("return document.querySelectorAll('#search-board .targets rect').length") == 361


def test_copy_link_copies_the_address_or_selects_it(server, browser):
    page = Page(browser)
    page.open(server)
    page.play("pd")
    page.wait(lambda _: "moves=pd" in browser.current_url)
    page.click("#copy-link")
    page.wait(lambda _: page.text("link-status"))
    assert page.text("link-status") == "link copied"  # a loopback page is a secure one: it may write
    browser.execute_cdp_cmd("Browser.grantPermissions", {"origin": server.rstrip("/"),
                                                          "permissions": ["clipboardReadWrite"]})
    assert page.js("return navigator.clipboard.readText()") == browser.current_url
    page.js("Object.defineProperty(navigator, 'clipboard', {value: undefined})")  # no clipboard: the field
    page.click("#copy-link")
    page.wait(lambda _: page.js("return !document.getElementById('link-text').hidden"))
    assert page.js("return document.getElementById('link-text').value") == browser.current_url
    assert page.js("const f = document.getElementById('link-text');"
                   "return f.value.substring(f.selectionStart, f.selectionEnd)") == browser.current_url
