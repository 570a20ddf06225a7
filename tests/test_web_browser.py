"""The explorer page in a real browser: Debian's chromium driven by Selenium through the system chromedriver.

A real ``fuseki serve`` subprocess (tests/browsing.py's ``server``, one for the module: its
tests only read the book) serves a book imported from the API tests' games (tests/webbook.py),
to the session's one Chromium (``browser``, lent clean to each test).  The test
clicks moves on the search board, checks the next-move table, opens a game in the
middle column, steps through it on the replay board, and saves a screenshot to
``artifacts/explorer.png``.  Skips when chromium or chromedriver is missing (fails
under ``FUSEKI_REQUIRE_SERVICES=1``, as the other service tests do).  The page's shared parts
(``serving``, ``Page``, the fixtures) are tests/browsing.py's.
"""

from __future__ import annotations

import contextlib
import re
import sys

import pytest

from browsing import ARTIFACTS, Page, emulate, serving, show_tab_of
from webbook import build_book, put_values

pytestmark = pytest.mark.slow


def test_explore_search_games_and_replay(server, browser):
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, 60, ignored_exceptions=(StaleElementReferenceException,))

    def table(selector):  # read in one script: the page may redraw between two element reads
        return browser.execute_script(
            "return [...document.querySelectorAll(arguments[0] + ' tbody tr')]"
            ".map(row => [...row.cells].map(cell => cell.textContent.trim()))", selector)

    def text(element_id):
        return browser.execute_script("return document.getElementById(arguments[0]).textContent", element_id)

    def click_point(board, sgf):
        browser.find_element(By.CSS_SELECTOR, f'#{board} rect[data-sgf="{sgf}"]').click()

    browser.get(f"{server}#rare=1")  # the rarer moves shown too: a 5-game book is all rare
    wait.until(lambda _: "5 games" in text("book-info"))
    wait.until(lambda _: table("#next-table"))
    assert table("#next-table") == [["a", "Q16", "4", "50.0%"], ["b", "R16", "1", "100.0%"]] or \
        [row[2:] for row in table("#next-table")] == [["4", "50.0%"], ["1", "100.0%"]]
    # the letters are on the board: a on all four 4-4 points
    letters = [t.text for t in browser.find_elements(By.CSS_SELECTOR, "#search-board .marks text")]
    assert letters.count("a") == 4 and letters.count("b") == 8

    click_point("search-board", "pd")
    wait.until(lambda _: "move 1" in text("search-status"))
    click_point("search-board", "dp")
    wait.until(lambda _: "move 2" in text("search-status"))
    # B pd, W dp is symmetric (anti-transpose): Q3 and C16 are one move, so are Q4 and D16
    wait.until(lambda _: [row[2] for row in table("#next-table")] == ["2", "1"])
    rows = browser.find_elements(By.CSS_SELECTOR, "#next-table tbody tr")
    assert rows[0].get_attribute("data-sgf") in ("pq", "cd")
    assert rows[1].get_attribute("data-sgf") in ("pp", "dd")
    stones = browser.find_elements(By.CSS_SELECTOR, "#search-board circle.stone")
    assert sorted(s.get_attribute("data-sgf") for s in stones) == ["dp", "pd"]

    # an illegal click (occupied) says why and changes nothing
    click_point("search-board", "pd")
    wait.until(lambda _: "occupied" in text("message"))
    assert "move 2" in text("search-status")

    # a table row plays its move; back and forward
    rows[0].click()
    wait.until(lambda _: "move 3" in text("search-status"))
    assert len(browser.find_elements(By.CSS_SELECTOR, "#search-board circle.stone")) == 3
    browser.find_element(By.ID, "back").click()
    wait.until(lambda _: "move 2" in text("search-status"))
    browser.find_element(By.ID, "forward").click()
    wait.until(lambda _: "move 3" in text("search-status"))
    browser.find_element(By.ID, "back").click()
    wait.until(lambda _: "move 2" in text("search-status"))

    # Q3 on the board; the games column follows the search
    click_point("search-board", "pq")
    wait.until(lambda _: "move 3" in text("search-status"))
    wait.until(lambda _: len(table("#games-table")) == 2)
    games = table("#games-table")
    assert {g[0] for g in games} == {"Go Seigen 5d", "Mirror Black"}
    assert all(g[4] == "3" for g in games)

    # open the mirrored game: it is shown in the search's orientation, at the search position
    show_tab_of(browser, "#games-table")  # the games' tab beside the board
    target = next(r for r in browser.find_elements(By.CSS_SELECTOR, "#games-table tbody tr")
                  if "Mirror" in r.text)
    target.find_element(By.CSS_SELECTOR, "td:nth-child(3)").click()  # its date: the names link to players
    wait.until(lambda _: "Mirror Black" in text("game-info"))
    wait.until(lambda _: text("move-number").startswith("move 3 / 5"))
    replay = sorted(s.get_attribute("data-sgf")
                    for s in browser.find_elements(By.CSS_SELECTOR, "#replay-board circle.stone"))
    assert replay == ["dp", "pd", "pq"]

    browser.find_element(By.ID, "next").click()
    wait.until(lambda _: text("move-number").startswith("move 4 / 5"))
    click_point("replay-board", "jj")  # clicking the replay board advances one move
    wait.until(lambda _: text("move-number").startswith("move 5 / 5"))
    assert "fq" in [s.get_attribute("data-sgf")
                    for s in browser.find_elements(By.CSS_SELECTOR, "#replay-board circle.stone")]
    browser.find_element(By.ID, "first").click()
    wait.until(lambda _: text("move-number").startswith("move 0 / 5"))
    browser.find_element(By.ID, "last").click()
    wait.until(lambda _: text("move-number").startswith("move 5 / 5"))
    browser.find_element(By.ID, "prev").click()
    wait.until(lambda _: text("move-number").startswith("move 4 / 5"))
    # quick clicks queue up instead of racing: three clicks are three moves
    browser.find_element(By.ID, "first").click()
    for _ in range(3):
        browser.find_element(By.ID, "next").click()
    wait.until(lambda _: text("move-number").startswith("move 3 / 5"))

    # the page as a person sees it, for the record
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "explorer.png"
    assert browser.save_screenshot(str(shot))
    assert shot.stat().st_size > 10_000

    # the filters narrow the search
    browser.find_element(By.ID, "year-to").send_keys("1999")
    browser.find_element(By.CSS_SELECTOR, "#filters button[type=submit]").click()
    wait.until(lambda _: len(table("#games-table")) == 1)

    errors = [entry for entry in browser.get_log("browser")
              if entry["level"] == "SEVERE" and "favicon" not in entry["message"]
              and "400" not in entry["message"]]
    assert not errors, errors


def test_every_module_of_the_page_loads(server, browser):
    """The page is ES modules (index.html loads app.js, which imports the rest): each file of
    static/*.js is served as JavaScript (a module of another type is refused by the browser) and
    imported by the page, and none logs an error."""
    import urllib.request
    from pathlib import Path

    import fuseki.book.ui.web.app as web

    modules = sorted(path.name for path in Path(web.STATIC).glob("*.js"))
    assert {"app.js", "state.js", "board.js", "ai.js", "tables.js", "keyboard.js", "practice.js"} <= set(modules)
    for name in modules:
        with urllib.request.urlopen(f"{server}static/{name}", timeout=30) as reply:
            assert reply.headers.get_content_type() in ("text/javascript", "application/javascript"), name
    page = Page(browser)
    page.open(server)
    page.ready()
    page.module("await (await import('/static/app.js')).ready")  # the first view drawn
    loaded = page.js("return performance.getEntriesByType('resource').map(e => new URL(e.name).pathname)"
                     ".filter(p => p.endsWith('.js'))")
    assert sorted(path.rsplit("/", 1)[1] for path in set(loaded)) == modules
    # no global state: the modules' names stay in the modules
    assert page.js("return [typeof state, typeof drawBoard, typeof refreshSearch]") == ["undefined"] * 3
    errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert not errors, errors


def test_the_page_draws_the_star_points_showboard_draws(server, browser):
    """app.js draws the hoshi itself (an empty replay board has no position to ask for)."""
    from fuseki.engine.core.base import point_to_xy, star_points

    browser.get(server)
    page = Page(browser)
    for size in range(2, 26):
        drawn = page.module("const board = await import('/static/board.js');"
                            " return board.starPoints(arguments[0])", size)
        expected = sorted(point_to_xy(p, size) for p in star_points(size))
        assert sorted(tuple(xy) for xy in drawn) == expected, size


def test_pattern_search_in_the_page(server, browser):
    """Pick a corner region with two clicks, search the pattern: the continuations go into the
    table and onto the board, the games column lists the pattern's games at their matching move,
    and a game opens there."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, 60, ignored_exceptions=(StaleElementReferenceException,))

    def text(element_id):
        return browser.execute_script("return document.getElementById(arguments[0]).textContent", element_id)

    def rows(selector):
        return browser.execute_script(
            "return [...document.querySelectorAll(arguments[0] + ' tbody tr')]"
            ".map(row => [...row.cells].map(cell => cell.textContent.trim()))", selector)

    def click_point(sgf):
        browser.find_element(By.CSS_SELECTOR, f'#search-board rect[data-sgf="{sgf}"]').click()

    browser.get(server)
    wait.until(lambda _: "5 games" in text("book-info"))
    wait.until(lambda _: browser.find_elements(By.CSS_SELECTOR, '#search-board rect[data-sgf="pd"]'))
    click_point("pd")
    wait.until(lambda _: "move 1" in text("search-status"))
    assert browser.find_element(By.ID, "pattern-search").get_attribute("disabled")
    browser.find_element(By.ID, "pattern-mode").click()
    click_point("ma")  # N19
    click_point("sg")  # T13: two clicks pick the region, no move is played
    wait.until(lambda _: "N19:T13" in text("pattern-region"))
    assert "move 1" in text("search-status")
    assert browser.find_elements(By.CSS_SELECTOR, "#search-board rect.region")
    browser.find_element(By.ID, "pattern-search").click()
    wait.until(lambda _: "corner pattern" in text("next-summary"))
    summary = text("next-summary")
    total = int(summary.split()[0])
    assert total > 0 and "tenuki" in summary
    moves = rows("#next-table")  # each continuation: its point and the colour of who played it
    assert moves and all(row[1].split()[-1] in ("Black", "White") for row in moves)
    assert all(int(row[2].split()[0]) > 0 for row in moves)
    wait.until(lambda _: f"{total:,} game" in text("games-summary"))
    games = rows("#games-table")
    assert len(games) == min(total, 20) and all(row[4].isdigit() for row in games)
    show_tab_of(browser, "#games-table")
    browser.find_element(By.CSS_SELECTOR, "#games-table tbody tr td:nth-child(3)").click()  # not a name
    wait.until(lambda _: text("move-number").startswith(f"move {games[0][4]} / "))


def test_pattern_region_by_drag_with_any_points(server, browser):
    """Drag from one corner of the region to the other (pointer events, as a mouse or a finger
    does), mark an "any" point inside it and another outside (ignored), search: the page asks
    for the region and its "any" point and shows what the API answers for them; no move is
    played by the drag or the marking."""
    import json
    import urllib.request

    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, 60, ignored_exceptions=(StaleElementReferenceException,))

    def text(element_id):
        return browser.execute_script("return document.getElementById(arguments[0]).textContent", element_id)

    def point(sgf):
        return browser.find_element(By.CSS_SELECTOR, f'#search-board rect[data-sgf="{sgf}"]')

    browser.get(server)
    wait.until(lambda _: "5 games" in text("book-info"))
    wait.until(lambda _: browser.find_elements(By.CSS_SELECTOR, '#search-board rect[data-sgf="pd"]'))
    point("pd").click()
    wait.until(lambda _: "move 1" in text("search-status"))
    assert browser.find_element(By.ID, "pattern-any").get_attribute("disabled")
    browser.find_element(By.ID, "pattern-mode").click()
    ActionChains(browser).click_and_hold(point("sg")).move_to_element(point("pd")) \
        .move_to_element(point("ma")).release().perform()  # T13 -> N19, through Q16
    wait.until(lambda _: "T13:N19" in text("pattern-region"))
    assert "move 1" in text("search-status") and "active" not in browser.find_element(
        By.ID, "pattern-mode").get_attribute("class")
    browser.find_element(By.ID, "pattern-any").click()
    point("qc").click()  # R17, inside
    point("dd").click()  # D16, outside: nothing
    wait.until(lambda _: "any R17" in text("pattern-region"))
    assert "D16" not in text("pattern-region") and "move 1" in text("search-status")
    assert browser.find_elements(By.CSS_SELECTOR, '#search-board text.any[data-sgf="qc"]')
    browser.find_element(By.ID, "pattern-search").click()
    wait.until(lambda _: "corner pattern" in text("next-summary"))
    asked = browser.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name).filter(n => n.includes('/api/pattern?'))")
    assert asked and "region=T13%3AN19" in asked[-1] and "any=R17" in asked[-1]
    with urllib.request.urlopen(f"{server}api/pattern?size=19&moves=pd&region=T13:N19&any=R17", timeout=30) as reply:
        expected = json.load(reply)
    assert text("next-summary").startswith(f"{expected['total']} game")
    point("qc").click()  # still marking: unmarks R17
    wait.until(lambda _: "any" not in text("pattern-region"))


def test_corner_table_in_the_page(server, browser):
    """The corner book's continuations are listed under the next moves (fuseki serve built it);
    a click on one plays it."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, 60, ignored_exceptions=(StaleElementReferenceException,))

    def rows():
        return browser.execute_script(
            "return [...document.querySelectorAll('#corner-table tbody tr')]"
            ".map(row => [...row.cells].map(cell => cell.textContent.trim()))")

    browser.get(f"{server}#rare=1")  # the rows of 1 and 2 games too
    wait.until(lambda _: rows())
    listed = rows()
    corners = {"top left", "top right", "bottom left", "bottom right"}
    # corners of the same stones (the four empty ones here) share their rows: "top left, top right, ..."
    assert all(set(row[1].removesuffix(" (the same stones)").split(", ")) <= corners and row[3].isdigit()
               and row[4].endswith("%") for row in listed)
    assert "Corner book" in browser.find_element(By.ID, "corner-summary").text
    vertex = listed[0][2]
    browser.find_element(By.CSS_SELECTOR, "#corner-table tbody tr").click()
    wait.until(lambda _: "move 1" in browser.find_element(By.ID, "search-status").text)
    assert f"last Black {vertex}" in browser.find_element(By.ID, "search-status").text


def test_katagos_columns_and_marks_and_the_ai_checkbox(tmp_path, browser):
    """``fuseki serve --ai`` with KataGo's values of the empty board in the cache file: the AI
    columns, the marks and KataGo's own move fill the table, its moves are on the board, the
    checkbox hides them (and is remembered); a position KataGo is thinking about fills in when
    its values come, and a played move the stored row lacks says "not evaluated yet" while the
    page keeps asking, then fills in (KataGo here is test_katago.py's fake that never answers:
    the values come through the cache file, as the worker writes them)."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from fuseki.book.analysis.ai import MARK_VISITS

    from services import FAKE_KATAGO

    script = tmp_path / "fake_katago.py"
    script.write_text(FAKE_KATAGO)
    cache = tmp_path / "ai-cache.sqlite"
    spot = type("App", (), {"cache_path": cache})  # put_values writes to app.cache_path
    # the empty board: Q16 (4 games) best, R16 (1 of 5 games) 2.5 points worse: a popular mistake
    # (searched with MARK_VISITS visits: marks are drawn; each move's line stored)
    put_values(spot, "", {"pd": (0.47, 0.5, 0.0), "jj": (0.45, -0.5, 1.0), "qd": (0.40, -2.0, 2.5)}, network="",
               root=(MARK_VISITS, 0.47, 0.5), move_visits=MARK_VISITS, lines=[["pd", "dp", "pp"], ["jj"], ["qd"]])
    wait = WebDriverWait(browser, 60)

    def table():
        return browser.execute_script(
            "return [...document.querySelectorAll('#next-table tbody tr')]"
            ".map(row => [...row.cells].map(cell => cell.textContent.trim()))")

    def shown(selector):
        return [e.is_displayed() for e in browser.find_elements(By.CSS_SELECTOR, selector)]

    def text(element_id):
        return browser.execute_script("return document.getElementById(arguments[0]).textContent", element_id)

    command = f"{sys.executable} {script} hang"
    with serving(build_book(tmp_path / "book.sqlite"), "--ai", "--katago", command, "--visits", "2",
                 env={"FUSEKI_AI_CACHE": str(cache)}) as url:
        browser.get(f"{url}#rare=1")  # R16's 1 game: a rarer move, shown
        wait.until(lambda _: len(table()) == 3)
        rows = table()
        assert [r[2:] for r in rows] == [["4", "50.0%", "47.0%", "0.5", "0.0"],
                                         ["1", "100.0%", "40.0%", "-2.0", "2.5 ?"],
                                         ["0", "", "45.0%", "-0.5", "1.0 AI"]]
        assert rows[2][1] == "K10" and "komi 6.5" in text("ai-status")
        # KataGo's moves on the board: rings round the 4-4 and 3-4 letters, tengen numbered 2
        circles = browser.find_elements(By.CSS_SELECTOR, "#search-board .ai-marks circle")
        assert len(circles) == 4 + 8 + 1 and all(shown("#search-board .ai-marks circle"))
        assert [t.text for t in browser.find_elements(By.CSS_SELECTOR, "#search-board .ai-marks text")] == ["2"]
        # hovering a row draws KataGo's line on the board: 3 numbered stones for the 4-4 point's
        ActionChains(browser).move_to_element(browser.find_element(By.CSS_SELECTOR, "#next-table tbody tr")).perform()
        wait.until(lambda _: len(browser.find_elements(By.CSS_SELECTOR, "#search-board .ai-pv circle")) == 3)
        assert [t.text for t in browser.find_elements(By.CSS_SELECTOR, "#search-board .ai-pv text")] == ["1", "2", "3"]
        ARTIFACTS.mkdir(exist_ok=True)
        assert browser.save_screenshot(str(ARTIFACTS / "explorer-ai.png"))
        ActionChains(browser).move_to_element(browser.find_element(By.ID, "ai-status")).perform()
        wait.until(lambda _: not browser.find_elements(By.CSS_SELECTOR, "#search-board .ai-pv"))

        browser.find_element(By.ID, "ai-show").click()  # hides the columns, KataGo's rows and marks
        wait.until(lambda _: not any(shown("#search-board .ai-marks circle")))
        assert not any(shown("#next-table .ai-col")) and not any(shown("#next-table tr.ai-row"))
        browser.refresh()  # remembered
        wait.until(lambda _: len(table()) == 3)
        assert not browser.find_element(By.ID, "ai-show").is_selected() and not any(shown("#next-table .ai-col"))
        browser.find_element(By.ID, "ai-show").click()
        wait.until(lambda _: all(shown("#next-table td.ai-col")))

        # a position the cache lacks: KataGo is thinking, then its values fill in
        browser.find_element(By.CSS_SELECTOR, '#search-board rect[data-sgf="pd"]').click()
        wait.until(lambda _: "KataGo is thinking" in text("ai-status"))
        put_values(spot, "pd", {"dp": (0.52, 0.3, 0.0), "dd": (0.44, -2.1, 2.4)}, network="",
                   root=(MARK_VISITS, 0.52, 0.3), move_visits=MARK_VISITS)
        wait.until(lambda _: "visits" in text("ai-status") and "thinking" not in text("ai-status"))
        assert [r[-1] for r in table()] == ["0.0", "2.4 ?"]
        assert len(browser.find_elements(By.CSS_SELECTOR, "#search-board .ai-marks circle")) == 1 + 2

        # a played move the stored row lacks: KataGo is asked for it with the move forced (the fake
        # never answers), its cell says why and the page keeps asking until the value is stored
        put_values(spot, "pd,dp", {"pq": (0.5, 0.4, 0.0)}, network="", root=(MARK_VISITS, 0.5, 0.4),
                   move_visits=MARK_VISITS)  # Q3 (1 of 2 games) not evaluated

        def titles():
            return browser.execute_script(
                "return Object.fromEntries([...document.querySelectorAll('#next-table tbody tr')]"
                ".map(row => [row.dataset.sgf, row.title]))")

        browser.find_element(By.CSS_SELECTOR, '#search-board rect[data-sgf="dp"]').click()
        # the position is its own mirror across the A1-T19 diagonal: the table lists Q3 as C16, Q4 as D16
        wait.until(lambda _: titles().get("dd") == "no KataGo value: not evaluated yet")
        assert "evaluating the moves its search left out" in text("ai-status")
        put_values(spot, "pd,dp", {"pq": (0.5, 0.4, 0.0), "pp": (0.46, -0.6, 1.0)}, network="",
                   root=(MARK_VISITS, 0.5, 0.4), move_visits=MARK_VISITS)  # as the worker would merge it
        wait.until(lambda _: [r[-1] for r in table()] == ["0.0", "1.0"])
        assert "evaluating" not in text("ai-status") and not titles().get("dd")


def test_the_shared_browser_is_lent_clean(server, shared_chromium):
    """What a test leaves in the session's Chromium (storage, a cookie, an emulated phone, a
    resized window, another tab, a granted permission, a held key, console messages, history)
    is gone when the next test borrows it; a Chromium a test crashed is replaced by a new one."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    state = ("return [localStorage.length, sessionStorage.length, document.cookie, innerWidth, innerHeight,"
             " matchMedia('(pointer: coarse)').matches, history.length]")
    permission = "return navigator.permissions.query({name: 'clipboard-read'}).then(p => p.state)"
    driver = shared_chromium.lend()
    driver.get(server)
    fresh = driver.execute_script(state)
    assert fresh[:3] == [0, 0, ""] and fresh[5] is False, fresh
    asked = driver.execute_script(permission)
    assert asked != "granted"

    driver.execute_script("localStorage.setItem('fuseki-ai', 'hidden'); sessionStorage.setItem('s', '1');"
                          "document.cookie = 'c=1'; console.error('left over')")
    emulate(driver, 390, 844, True)
    driver.execute_cdp_cmd("Browser.grantPermissions", {"origin": server.rstrip("/"),
                                                        "permissions": ["clipboardReadWrite"]})
    ActionChains(driver).key_down(Keys.SHIFT).perform()
    driver.get(f"{server}#moves=pd")
    dirty = driver.execute_script(state)
    assert dirty[:3] == [1, 1, "c=1"] and dirty[3:6] == [390, 844, True] and dirty[6] > fresh[6], dirty
    assert driver.execute_script(permission) == "granted"
    driver.switch_to.new_window("window")
    driver.set_window_size(800, 600)

    driver = shared_chromium.lend()
    assert len(driver.window_handles) == 1 and driver.current_url == "about:blank"
    assert driver.get_window_size() == shared_chromium.size
    assert not [e for e in driver.get_log("browser") if "left over" in e["message"]]
    driver.get(server)
    assert driver.execute_script(state) == fresh
    assert driver.execute_script(permission) == asked
    driver.execute_script("window.pressed = []; addEventListener('keydown', e => pressed.push([e.key, e.shiftKey]))")
    ActionChains(driver).send_keys("a").perform()
    assert driver.execute_script("return pressed") == [["a", False]]  # no Shift held from the last test

    started = shared_chromium.started
    with contextlib.suppress(Exception):  # Chromium goes down under the call
        driver.execute_cdp_cmd("Browser.crash", {})
    driver = shared_chromium.lend()
    assert shared_chromium.started == started + 1
    driver.get(server)
    assert driver.execute_script(state) == fresh


def test_plain_serve_shows_the_built_in_books_values_c15_among_them_shallow_ai_moves_with_the_rarer(browser):
    """Plain ``fuseki serve`` (no --ai, no KataGo) of the built-in book: after Q16 D4 the AI
    columns carry the shipped 400-visit values; C15, under 1% of the games but with deep values
    of its own, is listed with them, while D15 (under 1%, 43 visits) waits behind "show rarer
    moves"; KataGo's own moves, all shallower than a mark needs, are rarer rows (their title
    says so) and their discs on the board hide with them.  A position without stored values
    says so at once (no KataGo is asked)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from fuseki.book.analysis.ai import MARK_VISITS
    from fuseki.book.model import builtin

    from browsing import ARTIFACTS

    def rows():
        return browser.execute_script(
            "return [...document.querySelectorAll('#next-table tbody tr')].map(row => ({"
            "vertex: row.dataset.vertex, sgf: row.dataset.sgf, shown: row.offsetParent !== null,"
            "ai: row.classList.contains('ai-row'),"
            "title: row.title, cells: [...row.cells].map(cell => cell.textContent.trim())}))")

    def text(element_id):
        return browser.execute_script("return document.getElementById(arguments[0]).textContent", element_id)

    def own_discs():  # KataGo's moves nobody played (its rows' points), on the board: shown or not
        points = [r["sgf"] for r in rows() if r["ai"]]
        return browser.execute_script(
            "return [...document.querySelectorAll('#search-board .ai-marks circle')]"
            ".filter(c => arguments[0].includes(c.dataset.sgf)).map(c => getComputedStyle(c).display !== 'none')",
            points)

    wait = WebDriverWait(browser, 60)
    with serving(builtin.PATH) as url:
        browser.get(f"{url}#moves=pd,dp")
        wait.until(lambda _: "400 visits" in text("ai-status") and any(r["vertex"] == "C15" for r in rows()))
        assert "stored values only" in text("ai-status")  # no KataGo asked: the page says so
        found = {r["vertex"]: r for r in rows() if not r["ai"]}
        c15 = found["C15"]
        assert c15["shown"] and c15["cells"][4].endswith("%") and c15["cells"][6].startswith("0.")  # win %, loss
        assert not found["D15"]["shown"]  # 187 games, 43 visits: a rarer move still
        shallow = [r for r in rows() if r["ai"]]
        assert shallow and not any(r["shown"] for r in shallow)
        assert all(re.search(rf"shallow: \d+ visits, under the {MARK_VISITS} a mark needs", r["title"])
                   for r in shallow), shallow
        assert own_discs() and not any(own_discs())
        ARTIFACTS.mkdir(exist_ok=True)
        assert browser.save_screenshot(str(ARTIFACTS / "explorer-builtin-ai.png"))
        browser.execute_script("document.querySelector('#next-table .rare-toggle').click()")
        wait.until(lambda _: all(r["shown"] for r in rows() if r["ai"]))
        assert all(own_discs()) and found["D15"]["cells"][1] == "D15"
        assert browser.save_screenshot(str(ARTIFACTS / "explorer-builtin-ai-rarer.png"))
        # C17: a position of the book (112 games) without stored values: said at once, nothing asked
        browser.find_element(By.CSS_SELECTOR, '#search-board rect[data-sgf="cc"]').click()
        wait.until(lambda _: "no KataGo values stored for this position" in text("ai-status"))
        assert "thinking" not in text("ai-status") and text("next-summary").startswith("112 games")
