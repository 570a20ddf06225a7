"""The page's "more filters" in a real browser: two header filters set on the page change the
next-move table and the games list as the JSON API answers them, and the address holds them, so
a new browser session opened on it shows the same fields and tables.

The book: tests/test_filters.py's generated games (varied RE, ranks, komi, events), imported by
the importer; ``fuseki serve``, Chromium and the page reader are tests/browsing.py's.  Every
wait is on a condition.
"""

from __future__ import annotations

import json
import urllib.request

import pytest

from browsing import Page, chromium, serving
from games import generated_games
from webbook import build_book

pytestmark = pytest.mark.slow


def api(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=30) as answer:
        return json.load(answer)


def shown(page: Page) -> dict:
    """What the page shows of the search: next moves (vertex, games), the games' total, the filters."""
    return page.js("""
        const cells = (s) => [...document.querySelectorAll(s + ' tbody tr')].map(r => r.dataset.vertex);
        const games = (s) => [...document.querySelectorAll(s + ' tbody tr')].length;
        return {next: cells('#next-table'), games: games('#games-table'),
                summary: document.getElementById('next-summary').textContent,
                games_summary: document.getElementById('games-summary').textContent,
                winner: document.getElementById('winner').value, komi: document.getElementById('komi').value,
                open: document.getElementById('more-filters').open};""")


def test_two_header_filters_change_the_tables_and_travel_in_the_address(tmp_path, browser):
    from selenium.webdriver.support.ui import Select

    book = build_book(tmp_path / "book.sqlite", games=generated_games())
    with serving(book) as url:
        page = Page(browser)
        page.open(url)
        page.ready()
        every = api(f"{url}api/position?size=19")
        page.wait(lambda _: f"{every['total']:,} games reached" in shown(page)["summary"])
        assert not shown(page)["open"]

        page.click("#more-filters summary")
        Select(browser.find_element("id", "winner")).select_by_value("W")
        browser.find_element("id", "komi").send_keys("5.5-7.5")
        page.click("#filters button[type=submit]")
        filtered = api(f"{url}api/position?size=19&winner=W&komi=5.5-7.5")
        games = api(f"{url}api/games?size=19&winner=W&komi=5.5-7.5&page_size=20")
        assert 0 < filtered["total"] < every["total"]  # the filters keep some games and drop some
        page.wait(lambda _: f"{filtered['total']} game" in shown(page)["summary"]
                  and shown(page)["games_summary"].startswith(f"{games['total']} game"))
        seen = shown(page)
        assert seen["next"] == [row["vertex"] for row in filtered["next"]]
        assert seen["games"] == len(games["rows"])
        page.wait(lambda _: "winner=W" in browser.current_url and "komi=5.5-7.5" in browser.current_url)
        address = browser.current_url

        with chromium(tmp_path / "second-profile") as other:
            again = Page(other)
            other.get(address)
            again.wait(lambda _: f"{filtered['total']} game" in shown(again)["summary"]
                       and shown(again)["games"] == len(games["rows"]))
            assert shown(again) == {**seen, "open": True}

        page.click("#clear-filters")
        page.wait(lambda _: f"{every['total']:,} games reached" in shown(page)["summary"])
        page.wait(lambda _: "winner=" not in browser.current_url)
        assert shown(page)["winner"] == "" and shown(page)["komi"] == ""
