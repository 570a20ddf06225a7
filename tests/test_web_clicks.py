"""Every click on the explorer page does what it says (issue 43's "every click right"), in a real browser.

A pattern row plays its own colour; a filter value the API refuses blocks nothing else and its
message stays by its field; the keyboard's cursor shows on keyboard focus only, never after a
click on the board; the download after a pattern search holds the pattern's games; opening a
game on a phone or a tablet brings its replay into view.  Chromium, chromedriver, the
``server``/``browser`` fixtures and the ``Page`` driver are tests/browsing.py's; every wait is
on a condition.
"""

from __future__ import annotations

import pytest

from browsing import Page, back_tab, serving
from webbook import GAMES, build_book

pytestmark = pytest.mark.slow


def row_named(page, text):
    """The index of the next-move table's row whose move cell reads ``text`` (-1: none)."""
    return page.js("return [...document.querySelectorAll('#next-table tbody tr')]"
                   ".findIndex(row => row.cells[1].textContent.trim() === arguments[0])", text)


def test_a_pattern_row_plays_its_own_colour(server, browser):
    page = Page(browser)
    # Q16, D4 (Black to play), the pattern N19:T13: its one continuation is White O17
    page.open(f"{server}#size=19&moves=pd,dp&region=N19:T13")
    page.wait(lambda _: row_named(page, "O17 White") >= 0)
    assert "Black to play" in page.text("search-status")
    page.js("document.querySelectorAll('#next-table tbody tr')[arguments[0]].click()", row_named(page, "O17 White"))
    page.wait(lambda _: "last White O17" in page.text("search-status"))
    assert page.move_number() == 4  # Black passed: White's move is the fourth
    assert page.js("return !!document.querySelector('#search-board circle.stone.white[data-sgf=nc]')")
    # the same pattern is searched on the new position: the table goes on with its continuations
    page.wait(lambda _: "pattern" in page.text("next-summary"))
    assert page.text("pattern-region").startswith("region N19:T13")
    assert "moves=pd%2Cdp%2Cpass%2Cnc" in browser.current_url


def test_a_refused_filter_value_blocks_nothing_else(server, browser):
    page = Page(browser)
    page.open(f"{server}#rare=1")  # its 2-game row is clicked below
    page.play("pd")
    page.click("#more-filters summary")
    browser.find_element("id", "margin").send_keys("abc")
    page.click("#filters button[type=submit]")
    # the API's message, after the margin field's label, and the field marked
    page.wait(lambda _: page.js("const box = document.getElementById('filter-error');"
                                "return box && box.textContent"))
    assert page.text("filter-error").startswith("margin abc:")
    assert page.js("return document.getElementById('filter-error').previousElementSibling"
                   ".contains(document.getElementById('margin'))")
    assert page.js("return document.getElementById('margin').getAttribute('aria-invalid')") == "true"
    assert "margin=" not in browser.current_url  # the view kept the filters it had
    browser.find_element("id", "margin").clear()  # emptied, not applied: other actions still work
    page.play("dp")
    page.click("#next-table tbody tr")  # a next move's row
    page.at(3)
    page.click("#back")
    page.at(2)
    page.click("#reset")
    page.at(0)
    assert "margin" not in page.text("message")
    assert page.text("filter-error").startswith("margin abc:")  # it stays by its field meanwhile
    browser.find_element("id", "margin").send_keys("0.5-5")  # a good value: taken, the message gone
    page.click("#filters button[type=submit]")
    page.wait(lambda _: "margin=0.5-5" in browser.current_url)
    assert page.js("return document.getElementById('filter-error')") is None


def cursor(page):
    """The keyboard cursor's point on the search board and the status line's words ([] / "": none)."""
    return (page.js("return [...document.querySelectorAll('#search-board .targets rect.cursor')]"
                    ".map(r => r.dataset.vertex)"), page.text("board-cursor"))


def test_the_keyboard_cursor_shows_on_keyboard_focus_only(server, browser):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    page = Page(browser)
    page.open(server)
    page.play("pd", "dp")  # clicks on the board: it has the focus, and no cursor
    assert page.js("return document.activeElement.id") == "search-board"
    assert cursor(page) == ([], "")
    ActionChains(browser).send_keys(Keys.ARROW_UP).perform()  # a key on the focused board: the cursor
    page.wait(lambda _: cursor(page)[0] == ["K11"])
    assert cursor(page)[1] == "K11: empty"
    page.play("pq")  # a click again: the cursor goes, through the redraw after the move too
    assert cursor(page) == ([], "")
    page.click("#back")
    page.at(2)
    assert cursor(page) == ([], "")
    back_tab(browser)  # Shift+Tab from "back" (clicked): the board, focused by the keyboard
    page.wait(lambda _: page.js("return document.activeElement.id") == "search-board")
    page.wait(lambda _: cursor(page)[0] == ["K11"])


def test_the_download_after_a_pattern_search_holds_its_games(server, browser):
    import urllib.request

    def fetch(url):
        with urllib.request.urlopen(url, timeout=30) as reply:
            return reply.read()

    page = Page(browser)
    page.open(f"{server}#size=19&moves=pd,dp")
    page.wait(lambda _: page.rows("#games-table"))
    position_games = len(page.rows("#games-table"))
    page.open(f"{server}#size=19&moves=pd,dp&region=N19:T13")
    page.wait(lambda _: "pattern" in page.text("next-summary"))
    # the games list comes by a request after the summary; its link is written with its rows
    page.wait(lambda _: page.text("games-download") == "download SGF (the pattern's 4 games)")
    listed = page.js("return [...document.querySelectorAll('#games-table tbody tr')].map(r => r.dataset.id)")
    assert len(listed) == 4 != position_games  # the pattern's games, not the position's
    href = browser.find_element("id", "games-download").get_attribute("href")
    held = sorted(game.strip().removeprefix("(;") for game in fetch(href).decode().split("\n(;") if game.strip())
    one_by_one = sorted(fetch(f"{server}api/game/{game_id}.sgf").decode().strip().removeprefix("(;")
                        for game_id in listed)
    assert held == one_by_one


def replay_in_view(page):
    """The share of the replay board's height inside the window (0 to 1; 0 while its tab is not shown)."""
    return page.js("const box = document.getElementById('replay-board').getBoundingClientRect();"
                   "return box.height ? Math.max(0, Math.min(box.bottom, innerHeight) - Math.max(box.top, 0))"
                   " / box.height : 0")


@pytest.mark.parametrize("width, height", [(390, 844), (768, 1024)], ids=["phone", "tablet"])
def test_a_game_opened_on_a_phone_or_tablet_is_in_view(server, browser, width, height):
    browser.set_window_size(width, height)
    page = Page(browser)
    page.open(f"{server}#size=19&moves=pd")
    page.wait(lambda _: len(page.rows("#games-table")) == 4)
    assert replay_in_view(page) < 0.5  # not shown (its tab is not chosen) before a game is opened
    page.click("#games-table tbody tr td:nth-child(3)")  # the games' tab, then a date (the names link to players)
    page.wait(lambda _: page.text("move-number").startswith("move 1 / "))
    page.wait(lambda _: replay_in_view(page) > 0.9)
    assert page.js("return document.getElementById('tab-replay').getAttribute('aria-selected')") == "true"
    # the player page's games the same: from the top of the page, a game of its list
    page.js("window.scrollTo(0, 0)")
    page.click("#games-table tbody tr td:first-child a")
    page.wait(lambda _: page.rows("#player-games"))
    page.js("window.scrollTo(0, 0)")
    assert replay_in_view(page) < 0.5
    page.click("#player-games tbody tr:last-child td:nth-child(3)")  # opened at its first move
    page.wait(lambda _: page.text("move-number").startswith("move 0 / "))
    page.wait(lambda _: replay_in_view(page) > 0.9)


def test_messages_name_points_as_the_board_does(server, browser):
    page = Page(browser)
    page.open(server)
    page.play("dd", "ba", "dp", "ab")  # White on B19 and A18: Black on A19 would be suicide
    page.click('#search-board rect[data-sgf="aa"]')
    page.wait(lambda _: "illegal" in page.text("message"))
    assert page.text("message") == "move 5 (A19) is illegal: suicide"
    assert page.move_number() == 4
    page.click("#within-push")  # a search within: the line names its moves as the board does
    page.wait(lambda _: page.text("within-status").startswith("within "))
    assert page.text("within-status").endswith("position D16 B19 D4 A18")


def test_a_book_of_one_year_says_the_year_once(tmp_path, browser):
    with serving(build_book(tmp_path / "book.sqlite", {"seigen": GAMES["seigen"]})) as url:
        page = Page(browser)
        page.open(url)
        assert page.text("book-info").endswith(" · 1933")
        page.wait(lambda _: page.text("years-caption"))
        # the chart draws what its caption names: one bar, and the share's line across it (a
        # polyline of one point drew nothing under a caption naming a line)
        assert page.text("years-caption").startswith("games in 1933: 1 (bar); line: their share")
        drawn = page.js("const svg = document.getElementById('years-svg');"
                        "return [svg.querySelectorAll('.year-bar').length,"
                        "        [...svg.querySelector('.year-share').points].map(p => p.x)]")
        assert drawn[0] == 1 and len(drawn[1]) == 2 and drawn[1][1] - drawn[1][0] > 10, drawn


def test_rows_of_few_games_draw_no_win_rate_bar(server, browser):
    page = Page(browser)
    page.open(server)
    page.wait(lambda _: len(page.rows("#next-table")) == 2)
    # each row: its games, its bar's drawn width, its win rate text, the muted class, its tooltip
    rows = page.js("return [...document.querySelectorAll('#next-table tbody tr')].map(row => ["
                   "Number(row.cells[2].textContent), row.querySelector('.bar span').getBoundingClientRect().width,"
                   "row.querySelector('.pct').textContent, row.cells[3].classList.contains('few'),"
                   "row.cells[3].title])")
    assert [(games, text) for games, _, text, _, _ in rows] == [(4, "50.0%"), (1, "100.0%")]
    (_, many_width, _, many_few, _), (_, one_width, _, one_few, one_title) = rows
    assert many_width > 0 and not many_few  # 4 games: a bar
    assert one_width == 0 and one_few and one_title == "1 game only: too few for a win rate"


def corner_rows(page):
    """The corner table's rows as (letter, point)."""
    return page.js("return [...document.querySelectorAll('#corner-table tbody tr')]"
                   ".map(row => [row.cells[0].textContent, row.dataset.sgf])")


def test_corner_letters_are_their_own(server, browser):
    page = Page(browser)
    page.open(server)
    page.wait(lambda _: page.rows("#next-table") and corner_rows(page))
    next_letters = {row[0] for row in page.rows("#next-table")} - {""}
    letters = [letter for letter, _ in corner_rows(page) if letter]
    assert len(letters) > 1 and len(set(letters)) == len(letters)  # one letter names one row
    assert not set(letters) & next_letters  # and none of the next-move table's
    page.play("aa")  # no game: out of book, the board shows the corner book's letters

    def letters_shown(_):
        """(the corner table's lettered rows, the board's letters) once the board shows the rows' letters:
        the corner table and the board's letters come by requests after the next-move table, and the
        empty board's corner table is on screen until then."""
        shown = page.js("return Object.fromEntries([...document.querySelectorAll('#search-board .marks text')]"
                        ".map(t => [t.dataset.sgf, t.textContent]))")
        rows = [(letter, sgf) for letter, sgf in corner_rows(page) if letter]
        done = not page.rows("#next-table") and rows and all(shown.get(sgf) == letter for letter, sgf in rows)
        return (rows, shown) if done else None

    rows, shown = page.wait(letters_shown)
    assert len({letter for letter, _ in rows}) == len(rows)


def test_a_link_with_a_refused_filter_opens_without_it(server, browser):
    page = Page(browser)
    page.open(f"{server}#size=19&moves=pd&margin=abc")
    page.wait(lambda _: page.js("const box = document.getElementById('filter-error');"
                                "return box && box.textContent.startsWith('margin abc:')"))
    page.at(1)  # the link's moves, without the refused filter
    page.play("dp")
    assert "margin" not in browser.current_url


def test_filter_examples_do_not_look_like_values(server, browser):
    page = Page(browser)
    page.open(server)
    page.click("#more-filters summary")
    looks = page.js("return ['min-rank', 'handicap', 'komi'].map(id => {"
                    "const field = document.getElementById(id);"
                    "const shown = getComputedStyle(field, '::placeholder'), typed = getComputedStyle(field);"
                    "return [field.placeholder, shown.fontStyle, typed.fontStyle, shown.color !== typed.color,"
                    "getComputedStyle(field.closest('label')).whiteSpace]})")
    assert [look[0] for look in looks] == ["7d", "2-4", "6.5"]
    assert all(look[1:] == ["italic", "normal", True, "nowrap"] for look in looks), looks
