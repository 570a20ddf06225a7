"""KataGo's line on the board, legible (static/ai.js drawPv), in a real browser on a desk and on a
phone: while a row's line shows, the board's letters and KataGo's rank discs step back (hidden), the
line's stones are stones numbered 1, 2, ... with the hovered move ringed; a mouse's hover shows it
while it lasts; a tap shows it (one tap: the touch screen's emulated mouse enter must not draw it
first, so that the tap's click toggled it off), a second tap on the row, or a tap elsewhere, hides it.

KataGo is the fake that never answers (services.FAKE_KATAGO): the values and lines come from the
cache file, as its worker writes them.  Screenshots go to /tmp/fuseki-screens/ for a person to look at.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from browsing import Page, emulate
from webbook import build_book, cached_ai

pytestmark = pytest.mark.slow  # a real Chromium: the browser tests are slow (docs/testing.md)

SCREENS = Path(tempfile.gettempdir()) / "fuseki-screens"

# the empty board: the book's Q16 (4 games) and R16 (1), and ten moves nobody played (rank discs)
OWN = ["jj", "dj", "jd", "pj", "jp", "cc", "qq", "cq", "qc", "kk"]
LINE = ["pd", "dp", "pp", "dd", "fq", "cn", "qf", "nc", "jj", "dj", "jd", "pj"]  # Q16's line: 12 moves


@pytest.fixture(scope="module")
def ai_server(tmp_path_factory):
    from fuseki.book.analysis.ai import MARK_VISITS

    from browsing import serving

    folder = tmp_path_factory.mktemp("ai-line")
    values = {"pd": (0.47, 0.5, 0.0), "qd": (0.40, -2.0, 2.5)}
    values.update({sgf: (0.46 - i / 100, 0.3 - i / 10, 0.2 + i / 10) for i, sgf in enumerate(OWN)})
    args, env = cached_ai(folder, {"": (values, {"root": (MARK_VISITS, 0.47, 0.5), "move_visits": MARK_VISITS,
                                                 "lines": [LINE, ["qd", "dp"]] + [[sgf] for sgf in OWN]})})
    with serving(build_book(folder / "book.sqlite"), *args, env=env) as url:
        yield url


def board_state(page):
    """What the search board shows: [line stones' numbers, the first stone's point and rings, rank
    discs shown, letters shown, pinned line]."""
    return page.js("""
        const board = document.getElementById('search-board');
        const shown = (selector) => [...board.querySelectorAll(selector)].filter(e => e.getClientRects().length).length;
        const first = board.querySelector('.ai-pv circle.first');
        return [[...board.querySelectorAll('.ai-pv text')].map(t => t.textContent),
                first && [first.dataset.sgf, shown('.ai-pv circle.first')],
                shown('.ai-marks text'), shown('.marks text'), board.dataset.pinned || null]""")


def row_point(page):
    """The first row's point: the book's Q16, shown at the point of its symmetry the table names."""
    return page.js("return document.querySelector('#next-table tbody tr').dataset.sgf")


def line(page):
    return page.js("return document.querySelector('#search-board .ai-pv').dataset.line")


def ai_cell(page):
    return page.driver.find_element("css selector", "#next-table tbody tr:first-child td.ai-col")  # Q16's row


def test_the_line_on_a_desk_hides_the_rank_discs(ai_server, browser):
    from selenium.webdriver.common.action_chains import ActionChains

    page = Page(browser)
    browser.set_window_size(1600, 1000)
    page.open(f"{ai_server}#rare=1")
    page.wait(lambda _: board_state(page)[2] >= len(OWN))  # the rank discs of the moves nobody played
    discs = board_state(page)[2]  # (on every point of a move's symmetry: the empty board has 8)
    assert board_state(page)[:2] == [[], None] and board_state(page)[3] > 0
    ActionChains(browser).move_to_element(ai_cell(page)).perform()
    page.wait(lambda _: board_state(page)[0])
    numbers, first, shown_discs, letters, pinned = board_state(page)
    assert numbers == [str(n) for n in range(1, len(LINE) + 1)]
    assert first == [row_point(page), 1]  # the hovered move: stone 1, ringed, shown
    assert shown_discs == 0 and letters == 0 and pinned is None  # nothing else numbered or lettered meanwhile
    SCREENS.mkdir(exist_ok=True)
    assert browser.save_screenshot(str(SCREENS / "ai-line-1600.png"))
    ActionChains(browser).move_to_element(browser.find_element("id", "ai-status")).perform()
    page.wait(lambda _: board_state(page)[0] == [])
    assert board_state(page)[2] == discs and board_state(page)[3] > 0  # back when the line goes
    # a click keeps the line after the pointer leaves; a click elsewhere on the page hides it
    ai_cell(page).click()
    ActionChains(browser).move_to_element(browser.find_element("id", "ai-status")).perform()
    assert board_state(page)[0] and board_state(page)[4] == line(page)
    browser.find_element("id", "next-summary").click()
    page.wait(lambda _: board_state(page)[0] == [])


def tap(browser, element):
    """A finger's tap on ``element``'s middle (the DevTools protocol's touch events: the browser then
    sends the pointer, compatibility mouse and click events a phone sends)."""
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
    box = browser.execute_script("const r = arguments[0].getBoundingClientRect();"
                                 "return [r.left + r.width / 2, r.top + r.height / 2]", element)
    point = [{"x": box[0], "y": box[1]}]
    browser.execute_cdp_cmd("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": point})
    browser.execute_cdp_cmd("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})


def test_the_line_on_a_phone_one_tap_shows_it_another_hides_it(ai_server, browser):
    page = Page(browser)
    emulate(browser, 390, 844, True)
    page.open(f"{ai_server}#rare=1")
    page.wait(lambda _: board_state(page)[2] >= len(OWN))
    discs = board_state(page)[2]
    tap(browser, ai_cell(page))
    page.wait(lambda _: board_state(page)[0])  # one tap: the line (no draw-then-toggle-off)
    numbers, first, shown_discs, letters, pinned = board_state(page)
    assert len(numbers) == len(LINE) and first == [row_point(page), 1] and shown_discs == 0 and letters == 0
    assert pinned == line(page)
    browser.execute_script("document.getElementById('search-board').scrollIntoView()")
    SCREENS.mkdir(exist_ok=True)
    assert browser.save_screenshot(str(SCREENS / "ai-line-390.png"))
    tap(browser, ai_cell(page))
    page.wait(lambda _: board_state(page)[0] == [])  # a second tap on it: hidden
    assert board_state(page)[2] == discs
    tap(browser, ai_cell(page))
    page.wait(lambda _: board_state(page)[0])
    tap(browser, browser.find_element("id", "next-summary"))  # a tap elsewhere: hidden
    page.wait(lambda _: board_state(page)[0] == [])
    assert page.move_number() == 0  # no tap played a move
