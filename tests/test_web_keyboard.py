"""The explorer page without a pointer, in a real browser: the boards and tables answer the
keyboard (book/ui/web/static/keyboard.js), every control has a name, and the colours keep
their contrast.

Keys are sent as a person types them (selenium's ActionChains to the focused element), the
focus is reached with Tab from a button next to it, and each result is read from what the
page shows (stones, the move number, the address).  The contrast is computed here from the
colours the browser resolved (WCAG 2.1's relative luminance): text 4.5:1 (3:1 from 18.66 px
bold or 24 px), the win-rate bars and the years chart's bars 3:1 against what is behind them.
"""

from __future__ import annotations

import re

import pytest

from browsing import Page, back_tab, keys

pytestmark = pytest.mark.slow


def focused(page):
    return page.js("const e = document.activeElement; return e.id || e.tagName.toLowerCase()")


def test_the_search_board_plays_from_the_keyboard(server, browser):
    from selenium.webdriver.common.keys import Keys

    page = Page(browser)
    page.open(server)
    page.ready()
    page.js("document.activeElement.blur()")
    keys(browser, Keys.TAB)  # the board is the page's first tab stop
    assert focused(page) == "search-board"
    page.wait(lambda _: page.text("board-cursor") == "K10: empty")  # the cursor starts at the centre
    keys(browser, *[Keys.ARROW_RIGHT] * 6, *[Keys.ARROW_UP] * 6)
    page.wait(lambda _: page.text("board-cursor").startswith("Q16: "))
    assert page.js("return document.querySelector('#search-board .targets rect.cursor').dataset.vertex") == "Q16"
    keys(browser, Keys.ENTER)
    page.at(1)
    assert page.stones("search-board") == ["pd"]
    page.wait(lambda _: page.text("board-cursor") == "Q16: black stone")  # the redraw keeps the cursor
    keys(browser, *[Keys.ARROW_LEFT] * 20, *[Keys.ARROW_DOWN] * 20, Keys.SPACE)  # stops at the edge: A1
    page.at(2)
    assert page.stones("search-board") == ["as", "pd"]
    keys(browser, Keys.ENTER)  # an occupied point: refused as a click is, nothing played
    page.wait(lambda _: "A1 is occupied" in page.text("message"))
    assert page.move_number() == 2


def test_a_pattern_region_is_picked_from_the_keyboard(server, browser):
    from selenium.webdriver.common.keys import Keys

    page = Page(browser)
    page.open(server)
    page.play("pd")
    page.click("#pattern-mode")
    page.js("document.getElementById('search-board').focus()")
    keys(browser, *[Keys.ARROW_RIGHT] * 4, *[Keys.ARROW_UP] * 9, Keys.ENTER)  # O19
    keys(browser, *[Keys.ARROW_RIGHT] * 5, *[Keys.ARROW_DOWN] * 6, Keys.ENTER)  # T13
    page.wait(lambda _: page.text("pattern-region").startswith("region"))
    assert set(page.text("pattern-region").split()[1].split(":")) == {"O19", "T13"}
    assert page.stones("search-board") == ["pd"]  # picking played nothing


def test_tables_walk_with_arrows_and_open_with_enter(server, browser):
    from selenium.webdriver.common.keys import Keys

    page = Page(browser)
    page.open(f"{server}#rare=1")  # a 5-game book: the second row is a rarer move, shown
    page.ready()
    page.wait(lambda _: len(page.rows("#next-table")) >= 2)
    page.js("document.querySelector('#next-table tbody tr').focus()")
    keys(browser, Keys.ARROW_DOWN)
    second = page.js("return document.activeElement.rowIndex")
    assert second == 2  # the header is row 0
    chosen = page.js("return document.activeElement.cells[1].textContent.trim()")
    keys(browser, Keys.ENTER)
    page.at(1)
    vertex = re.search(r"[A-T]\d+", chosen).group(0)
    assert page.js("return document.querySelector('#search-board circle.stone').dataset.sgf") == \
        page.js("return document.querySelector(`#search-board .targets rect[data-vertex='${arguments[0]}']`)"
                ".dataset.sgf", vertex)
    # the table was drawn again for the new position: its first row holds the focus
    page.wait(lambda _: page.js("const e = document.activeElement; "
                                "return e.tagName === 'TR' && e.closest('#next-table') !== null"))
    keys(browser, Keys.ENTER)  # and Enter again walks on
    page.at(2)

    page.games_at(2)  # the list of this position's games, not the one before it still on screen under load
    # the games' tab beside the board (tabs.js): the tab strip is one tab stop, its arrow keys choose
    page.js("document.getElementById('tab-next-moves').focus()")
    keys(browser, Keys.ARROW_RIGHT)
    assert focused(page) == "tab-games"
    assert page.js("return document.querySelector('main').dataset.tab") == "games"
    page.js("document.querySelector('#games-table tbody tr').focus()")
    keys(browser, Keys.SPACE)
    page.wait(lambda _: page.text("move-number").startswith("move 2 / "))
    page.js("document.getElementById('prev').focus()")
    back_tab(browser, 2)  # previous, first, the board
    assert focused(page) == "replay-board"
    total = int(re.search(r"/ (\d+)", page.text("move-number")).group(1))
    keys(browser, Keys.HOME)
    page.wait(lambda _: page.text("move-number").startswith("move 0 / "))
    keys(browser, Keys.ARROW_RIGHT)
    page.wait(lambda _: page.text("move-number").startswith("move 1 / "))
    keys(browser, Keys.END)
    page.wait(lambda _: page.text("move-number").startswith(f"move {total} / "))
    keys(browser, Keys.ARROW_LEFT)
    page.wait(lambda _: page.text("move-number").startswith(f"move {total - 1} / "))


def test_every_control_has_a_name(server, browser):
    page = Page(browser)
    page.open(server)
    page.ready()
    unnamed = page.js("""
        const named = (e) => (e.getAttribute('aria-label') || '').trim() || (e.getAttribute('title') || '').trim()
          || (e.labels && [...e.labels].map(l => l.textContent).join('').trim())
          || (e.getAttribute('aria-labelledby') || '').split(' ').map(id => id && document.getElementById(id))
               .filter(Boolean).map(l => l.textContent).join('').trim()
          || (e.tagName !== 'INPUT' && e.tagName !== 'SELECT' && e.textContent.trim());
        return [...document.querySelectorAll('button, input, select, a[href], svg[tabindex], [role=application]')]
          .filter(e => !named(e)).map(e => e.outerHTML.slice(0, 80));""")
    assert unnamed == []


def luminance(rgb):
    def channel(c):
        c = c / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a, b):
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


# Each visible element's resolved colour and the first opaque background behind it (its own or an
# ancestor's); SVG shapes give their fill.
RESOLVED = """
const rgb = (text) => { const m = text.match(/rgba?\\(([^)]+)\\)/); if (!m) return null;
  const v = m[1].split(',').map(Number); return v.length === 4 && v[3] === 0 ? null : v.slice(0, 3); };
const behind = (e) => { for (let n = e.parentElement; n; n = n.parentElement) {
  const c = rgb(getComputedStyle(n).backgroundColor); if (c) return c; } return [255, 255, 255]; };
const own = (e) => rgb(getComputedStyle(e).backgroundColor);
return {
  texts: [...document.querySelectorAll('body *')].filter(e => {
      const s = getComputedStyle(e); const box = e.getBoundingClientRect();
      return !e.closest('svg') && box.width > 2 && box.height > 2 && s.visibility !== 'hidden'
        && !e.disabled && !e.closest('.visually-hidden')
        && [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()); })
    .map(e => { const s = getComputedStyle(e);
      return [e.tagName + '#' + e.id + '.' + e.className, rgb(s.color), own(e) || behind(e),
              parseFloat(s.fontSize), Number(s.fontWeight)]; }),
  bars: [...document.querySelectorAll('.bar span')].map(e => [rgb(getComputedStyle(e).backgroundColor),
      own(e.parentElement) || behind(e.parentElement)]),
  years: [...document.querySelectorAll('#years-svg .year-bar')].map(e => [rgb(getComputedStyle(e).fill),
      own(document.getElementById('years-svg')) || behind(document.getElementById('years-svg'))]),
};
"""


def test_text_and_bars_keep_their_contrast(server, browser):
    page = Page(browser)
    page.open(server)
    page.play("pd")
    page.wait(lambda _: page.rows("#next-table"))
    page.games_at(1)  # this position's games, not the empty board's
    page.click("#games-table tbody tr")
    page.wait(lambda _: page.text("move-number").startswith("move 1 / "))
    page.wait(lambda _: page.js("return document.querySelectorAll('#years-svg .year-bar').length") > 0)
    found = page.js(RESOLVED)
    assert found["texts"] and found["bars"] and found["years"]
    low = []
    for name, colour, background, size, weight in found["texts"]:
        large = size >= 24 or (size >= 18.66 and weight >= 700)
        if colour and contrast(colour, background) < (3 if large else 4.5):
            low.append((name, colour, background, round(contrast(colour, background), 2)))
    assert low == []
    for colour, background in found["bars"] + found["years"]:
        assert contrast(colour, background) >= 3, (colour, background)
