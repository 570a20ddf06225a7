"""Search within results in the explorer page, in a real browser (book/ui/web/within.py, static/app.js).

A real ``fuseki serve`` of a book made by ``fuseki import`` of the Tygem archive's first 3,000
games (conftest's ``tygem_games``; ``fuseki pattern`` once, so the read-only server has the
pattern index).  The test searches a corner pattern in the page, clicks "search within these
games", plays a move: the next-move table is the API's answer within the pattern's games, and
the API's answer is checked against the plain searches' games intersected here.  The address
holds the restriction as the pattern search itself: opened in a new browser it shows the same
table; "back" shows every game's answer again.  Chromium and the fixtures are
tests/browsing.py's; the book is served once for the module (its tests only read it).
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from browsing import ROOT, Page, chromium, serving
from conftest import write_archive

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def book_path(tygem_games, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("web-within")
    archive = write_archive(folder / "tygem-3000.tgz", tygem_games)
    book = folder / "book.sqlite"
    for argv in (["import", str(archive), "--workers", "1"],
                 ["pattern", "--moves", "Q16", "--region", "N19:T13"]):  # builds the pattern index
        done = subprocess.run([sys.executable, "-m", "fuseki", *argv, "--book", str(book)], cwd=ROOT,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
    return book


@pytest.fixture(scope="module")
def server(book_path):
    """``fuseki serve`` of the book, one for the module: its tests only read it."""
    with serving(book_path) as url:
        yield url


def api(server: str, path: str, **params) -> dict:
    with urllib.request.urlopen(f"{server}api/{path}?{urllib.parse.urlencode(params, doseq=True)}",
                                timeout=60) as reply:
        return json.load(reply)


def all_games(server: str, path: str, **params) -> set[int]:
    """Every game id of a list (/api/games or /api/pattern/games), page by page."""
    found, after = set(), None
    while True:
        page = api(server, path, page_size=100, **params, **({"after": after} if after else {}))
        found |= {row["id"] for row in page["rows"]}
        if page["after"] is None:
            return found
        after = page["after"]


def table(answer: dict) -> list[list[str]]:
    """The next-move table as the page writes it, from the API's answer."""
    return [[row["letter"] or "", row["vertex"], str(row["games"]), f"{round(row['winrate'] * 1000) / 10:.1f}%"]
            for row in answer["next"]]


def test_search_within_a_pattern_play_share_and_go_back(server, browser, tmp_path):
    page = Page(browser, timeout=60)
    page.open(server)
    page.play("pd", "qf")  # Q16, R14
    page.click("#pattern-mode")
    page.click('#search-board rect[data-sgf="ma"]')  # N19
    page.click('#search-board rect[data-sgf="sg"]')  # T13
    page.wait(lambda _: "N19:T13" in page.text("pattern-region"))
    page.click("#pattern-search")
    page.wait(lambda _: "corner pattern" in page.text("next-summary"))
    corner = all_games(server, "pattern/games", size=19, moves="pd,qf", region="N19:T13")
    assert page.text("next-summary").startswith(f"{len(corner):,} games reached the corner pattern")

    page.click("#within-push")
    page.wait(lambda _: page.text("within-status").startswith(f"within {len(corner):,} games: pattern N19:T13"))
    stage = "size=19&moves=pd%2Cqf&region=N19%3AT13"
    page.wait(lambda _: "within=" + urllib.parse.quote(stage, safe="") in browser.current_url)  # the address follows
    page.wait(lambda _: "reached this position" in page.text("next-summary"))  # the position, within

    page.click("#back")  # the moves back to the empty board, then another opening: within the pattern's games
    page.at(1)
    page.click("#back")
    page.at(0)
    page.play("pd", "dp")  # Q16 D4
    within = api(server, "position", size=19, moves="pd,dp", within=stage)
    expected = all_games(server, "games", size=19, moves="pd,dp") & corner
    assert within["total"] == len(expected) > 20
    assert all_games(server, "games", size=19, moves="pd,dp", within=stage) == expected
    page.wait(lambda _: page.rows("#next-table") == table(within))
    page.wait(lambda _: page.text("games-summary").startswith(f"{len(expected):,} game"))
    seen = page.view()
    page.wait(lambda _: "moves=pd%2Cdp" in browser.current_url and "within=" in browser.current_url)
    address = browser.current_url

    with chromium(tmp_path / "second-profile") as other:  # the shared link: the same view, recomputed
        again = Page(other, timeout=60)
        other.get(address)
        again.wait(lambda _: again.text("within-status").startswith(f"within {len(corner):,} games"))
        again.wait(lambda _: again.view() == seen)

    page.click("#within-back")
    plain = api(server, "position", size=19, moves="pd,dp")
    assert plain["total"] > within["total"]
    page.wait(lambda _: page.text("within-status") == "searching all games")
    page.wait(lambda _: page.rows("#next-table") == table(plain))
    page.wait(lambda _: "within=" not in browser.current_url)
    assert browser.find_element("id", "within-back").get_attribute("disabled")


def test_a_bad_within_is_refused_with_its_reason(server):
    for stage, reason in [("moves=pd%2Cpd", "within search 1 (position Q16 Q16): move 2 (Q16) is illegal"),
                          ("colour=red", "unknown parameter 'colour'")]:
        try:
            urllib.request.urlopen(f"{server}api/position?within={stage}", timeout=30)
        except urllib.error.HTTPError as exc:
            assert exc.code == 400 and reason in json.load(exc)["error"]
        else:
            pytest.fail(f"within={stage} was answered")
    too_many = "&".join(["within=moves%3Dpd"] * 9)
    try:
        urllib.request.urlopen(f"{server}api/within?{too_many}", timeout=30)
    except urllib.error.HTTPError as exc:
        assert exc.code == 400 and "at most 8 within searches" in json.load(exc)["error"]
    else:
        pytest.fail("nine within searches were answered")
