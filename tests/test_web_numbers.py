"""The page's numbers, in a real browser: counts with thousands separators, each column head saying
what it counts, each move's share of the position's games and a bar of both colours' wins, a move
people played never drawn as KataGo's "nobody played it" disc (only 12 letters exist: a 13th row's
point was), the corner letters without gaps where the rarer rows are hidden, the summary naming the
filters in force, and a statistics-only book (the built-in one) without the Games and Replay tabs.
"""

from __future__ import annotations

import sys

import pytest

from browsing import Page, serving
from webbook import build_book, put_values

pytestmark = pytest.mark.slow  # a real Chromium: the browser tests are slow (docs/testing.md)

# fourteen first moves no symmetry makes one (x >= y in the upper left), three games each: fourteen
# rows of the empty board, none rare, two past the twelve letters
FIRSTS = ["cc", "dc", "dd", "ec", "ed", "ee", "fc", "fd", "fe", "ff", "gc", "gd", "ge", "gf"]
FAR = ["jj", "kj", "jk", "kk", "lj", "jl", "lk", "kl", "ll", "mj", "jm", "mk", "km", "ml", "lm", "mm"]


def many_first_moves() -> dict[str, bytes]:
    games = {}
    for i, first in enumerate(FIRSTS):
        for j in range(3):
            n = 3 * i + j
            games[f"m{n}"] = (f"(;GM[1]FF[4]SZ[19]PB[Black {n}]PW[White {n}]DT[2011-01-{1 + n % 28:02d}]"
                              f"RE[{'BW'[n % 2]}+R]KM[6.5];B[{first}];W[{FAR[n % len(FAR)]}]"
                              f";B[{FAR[(n + 5) % len(FAR)]}])"
                              ).encode()
    return games


@pytest.fixture(scope="module")
def many_server(tmp_path_factory):
    """``fuseki serve --ai``: KataGo's values of the empty board for every one of its 14 moves
    and one move nobody played (tengen)."""
    from fuseki.book.analysis.ai import MARK_VISITS

    from services import FAKE_KATAGO

    folder = tmp_path_factory.mktemp("many")
    script = folder / "fake_katago.py"
    script.write_text(FAKE_KATAGO)
    cache = folder / "ai-cache.sqlite"
    values = {sgf: (0.48 - i / 200, 0.5 - i / 10, i / 10) for i, sgf in enumerate(FIRSTS)}
    values["jj"] = (0.40, -2.0, 3.0)
    put_values(type("App", (), {"cache_path": cache}), "", values, network="",
               root=(MARK_VISITS, 0.5, 0.5), move_visits=MARK_VISITS)
    with serving(build_book(folder / "book.sqlite", many_first_moves()), "--ai", "--katago",
                 f"{sys.executable} {script} hang", "--visits", "2", env={"FUSEKI_AI_CACHE": str(cache)}) as url:
        yield url


def test_a_move_people_played_is_never_katagos_nobody_played_disc(many_server, browser):
    page = Page(browser)
    page.open(many_server)
    page.wait(lambda _: len(page.rows("#next-table")) >= len(FIRSTS)
              and page.js("return document.querySelectorAll('#search-board .ai-marks circle').length"))
    seen = page.js("""
        const played = [...document.querySelectorAll('#next-table tbody tr:not(.ai-row)')].map(r => r.dataset.sgf);
        const letters = [...document.querySelectorAll('#next-table tbody tr:not(.ai-row)')]
          .map(r => r.cells[0].textContent);
        const own = [...document.querySelectorAll('#search-board .ai-marks circle.own')].map(c => c.dataset.sgf);
        const ringed = [...document.querySelectorAll('#search-board .ai-marks circle:not(.own)')]
          .map(c => c.dataset.sgf);
        return {played, letters, own, ringed};""")
    unlettered = [sgf for sgf, letter in zip(seen["played"], seen["letters"]) if not letter]
    assert len(seen["played"]) == len(FIRSTS) and len(unlettered) == 2, seen  # rows past the letters
    assert not set(seen["own"]) & set(seen["played"]), seen  # none of them a "nobody played" disc
    assert set(unlettered) <= set(seen["ringed"]) and "jj" in seen["own"], seen  # a ring; tengen a disc


def test_counts_heads_shares_and_both_colours_bars(server, browser):
    page = Page(browser)
    page.open(f"{server}#rare=1")
    page.wait(lambda _: len(page.rows("#next-table")) == 2)
    assert page.module("const {count} = await import('/static/format.js');"
                       "return [count(2339256), count(26997), count(5)]") == ["2,339,256", "26,997", "5"]
    # every head of a column of numbers says what it counts
    heads = page.js("return [...document.querySelectorAll('#next-table th, #corner-table th, #games-table th')]"
                    ".filter(th => th.textContent.trim()).map(th => [th.textContent.trim(), th.title])")
    assert heads and all(title for _, title in heads), heads
    # Q16: 4 of the 5 games (80%), Black won 2; a bar of both colours' wins: Black's half dark
    rows = page.js("""return [...document.querySelectorAll('#next-table tbody tr')].map(r => [
        r.cells[2].textContent, r.cells[2].dataset.share, r.cells[3].title,
        r.querySelector('.bar span').getBoundingClientRect().width
          / r.querySelector('.bar').getBoundingClientRect().width,
        getComputedStyle(r.cells[2], '::after').content])""")
    games, share, title, black, after = rows[0]
    assert (games, share) == ("4", "80%") and title == "Black won 50.0% of these 4 games, White 50.0%"
    assert abs(black - 0.5) < 0.05 and "80%" in after  # the share drawn after the count (a desk)
    # after Q16 it is White's move: a bar still draws Black's wins dark, the number is White's rate
    page.play("pd")
    page.wait(lambda _: page.rows("#next-table") and "White to play" in page.text("search-status"))
    white_row = page.js("const r = document.querySelector('#next-table tbody tr');"
                        "return [r.cells[2].textContent, r.querySelector('.pct').textContent, r.cells[3].title,"
                        "  r.querySelector('.bar span').getBoundingClientRect().width"
                        "  / r.querySelector('.bar').getBoundingClientRect().width]")
    games, rate = int(white_row[0]), float(white_row[1].rstrip("%"))
    assert games >= 3 and white_row[2] == f"Black won {100 - rate:.1f}% of these {games} games, White {rate:.1f}%"
    assert abs(white_row[3] - (100 - rate) / 100) < 0.05, white_row


def test_the_summary_names_the_filters_in_force(server, browser):
    page = Page(browser)
    page.open(server)
    page.wait(lambda _: page.text("next-summary").startswith("5 games"))
    assert "filters" not in page.text("next-summary")
    browser.find_element("id", "year-to").send_keys("1999")
    browser.find_element("id", "player").send_keys("Cho")
    page.click("#filters button[type=submit]")
    page.wait(lambda _: "filters:" in page.text("next-summary"))
    assert page.text("next-summary").endswith(" · filters: years up to 1999, player Cho")
    assert page.text("next-summary").startswith("1 game reached this position")


def test_the_corner_letters_have_no_gaps_where_the_rarer_rows_hide(tmp_path, browser):
    """Rows lettered in table order gave a hidden rarer row a letter: A, B, D shown."""
    # the upper right's next move: 20 games one move, 3 another, 1 a third (rare); the lower left's:
    # 22 one move, 2 another (rare): in table order a rare row comes before the other corner's rows
    games = {}
    for n in range(24):  # a rare row in each corner, before the other corner's common rows
        reply = "qc" if n < 20 else "oc" if n == 20 else "qe"
        answer = "cn" if n < 22 else "fq"
        games[f"c{n}"] = (f"(;GM[1]FF[4]SZ[19]PB[B{n}]PW[W{n}]DT[2012-01-{1 + n % 28:02d}]RE[B+R]KM[6.5]"
                          f";B[pd];W[dp];B[{reply}];W[{answer}];B[{FAR[n % len(FAR)]}])").encode()
    with serving(build_book(tmp_path / "book.sqlite", games)) as url:
        page = Page(browser)
        page.open(f"{url}#moves=pd,dp")
        page.wait(lambda _: page.rows("#corner-table"))
        rows = page.js("return [...document.querySelectorAll('#corner-table tbody tr')].map(r =>"
                       " [r.cells[0].textContent, r.classList.contains('rare'), r.getClientRects().length > 0])")
        shown = [letter for letter, _, visible in rows if visible and letter]
        assert any(rare for _, rare, _ in rows), rows  # a rarer row, hidden
        assert shown == [chr(ord("A") + i) for i in range(len(shown))], rows  # A, B, C...: no gap



def test_the_corner_tables_bar_says_it_is_the_movers_wins_and_of_how_many_games(server, browser):
    """The corner table's bar drew the mover's wins (the corner book counts a move whoever played it)
    looking like the next moves' bar, whose dark part is Black's wins, with no word saying so: it is
    drawn in its own colour now, its cell's title says what it is and of how many games, and so
    does the line above the table."""
    page = Page(browser)
    page.open(f"{server}#moves=pd,dp&rare=1")
    page.wait(lambda _: page.rows("#corner-table") and page.rows("#next-table"))
    rows = page.js("""return [...document.querySelectorAll('#corner-table tbody tr')].map(r => {
        const rate = r.querySelector('td.rate'), bar = r.querySelector('.bar');
        return [r.cells[3].textContent, r.querySelector('.pct').textContent, rate.classList.contains('few'),
                rate.title, bar.getAttribute('aria-label') || '', getComputedStyle(bar.firstChild).backgroundColor];
      })""")
    black = page.js("return getComputedStyle(document.querySelector('#next-table .bar span')).backgroundColor")
    drawn = [row for row in rows if not row[2]]  # rows of enough games draw a bar
    assert drawn, rows
    for games, pct, _few, title, label, colour in drawn:
        said = f"the player who played the move won {pct} of these {games} game{'s' if games != '1' else ''}"
        assert title.startswith(said) and label.startswith(said), (said, title, label)
        assert "not Black's" in title and colour != black, (title, colour, black)
    summary = page.text("corner-summary")
    assert "bar" in summary and "player who played" in summary, summary

@pytest.fixture(scope="module")
def builtin_server():
    """``fuseki serve`` of the built-in book: next-move statistics, no game records."""
    from fuseki.book.model import builtin

    with serving(builtin.PATH) as url:
        yield url


def test_a_statistics_book_has_no_games_or_replay_tab(builtin_server, browser):
    page = Page(browser)
    page.open(builtin_server)
    page.wait(lambda _: "statistics only" in page.text("book-info"))
    tabs = page.js("return [...document.querySelectorAll('#tabs [role=tab]')]"
                   ".filter(t => t.getClientRects().length).map(t => t.id)")
    assert "tab-games" not in tabs and "tab-replay" not in tabs and "tab-next-moves" in tabs, tabs
    assert page.js("return document.getElementById('tabs').title")  # why: no game records
    assert page.js("return document.getElementById('book-info').textContent").split(" games")[0].count(",") >= 1


def test_a_game_link_to_a_statistics_book_says_it_has_no_games(builtin_server, browser):
    """``#game=<id>`` on the built-in book showed the API's "no game with id 7": the page says
    instead that the book holds statistics only, and how to get games to replay."""
    page = Page(browser)
    page.open(f"{builtin_server}#moves=pd&game=7&at=1")
    page.wait(lambda _: page.js("return !document.getElementById('message').hidden"))
    said = page.text("message")
    assert "statistics only" in said and "no game records" in said and "fuseki import" in said, said
    assert "no game with id" not in said and "error" not in said.lower() and "HTTP" not in said, said
    page.wait(lambda _: page.rows("#next-table"))  # the position of the link is shown all the same
    assert page.js("return document.getElementById('tab-replay').getClientRects().length") == 0
