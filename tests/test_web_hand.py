"""Issue 43's "honest numbers" and "the game in hand" on the explorer page, in a real browser.

The minimum-games setting hides the rarer next moves (and corner moves) until one click shows
them, and the address keeps that choice; the corner table lists corners of the same content
once; the replay is stepped in the browser from the game's moves, its captures computed there
and compared with the rules core's board after every move of real games; the replay's move
numbers and the search's line as a breadcrumb.  Chromium, chromedriver, the ``browser``
fixture and ``Page`` are tests/browsing.py's; each book is served once for the module (its
tests only read it); every wait is on a condition.
"""

from __future__ import annotations

import json
import tarfile
import urllib.request
from pathlib import Path

import pytest

from browsing import Page, emulate, serving
from conftest import SHARED_DATA, missing_service
from webbook import GAMES, build_book, put_values

pytestmark = pytest.mark.slow

POINTS = "abcdefghijklmnopqrs"


def spread_games(first_moves: dict[str, int]) -> dict[str, bytes]:
    """Games whose first move is each key of ``first_moves`` that many times, each game's second
    and third moves its own (distinct points far from the 3-3, 3-4 and 4-4 points), so that every
    second move is a one-game row."""
    seconds = [x + y for y in POINTS[5:14] for x in POINTS[5:14]] + \
              [x + y for y in "fghijklmn" for x in "bcdeopqr" if x + y not in ("cc", "dc", "pd")]
    games, n = {}, 0
    for first, count in first_moves.items():
        for _ in range(count):
            second, third = seconds[n % len(seconds)], seconds[(n // len(seconds) + 7 * n + 1) % len(seconds)]
            if third == second:
                third = seconds[(seconds.index(second) + 1) % len(seconds)]
            games[f"g{n}"] = (f"(;GM[1]FF[4]SZ[19]PB[Black {n}]PW[White {n}]DT[2011-01-{1 + n % 28:02d}]"
                              f"RE[{'BW'[n % 2]}+R]KM[6.5];B[{first}];W[{second}];B[{third}])").encode()
            n += 1
    return games


@pytest.fixture(scope="module")
def spread_book(tmp_path_factory):
    """307 games: 300 open on the 4-4 point, 4 on the 3-4 point, 3 on the 3-3 point."""
    return build_book(tmp_path_factory.mktemp("spread") / "book.sqlite", spread_games({"pd": 300, "dc": 4, "cc": 3}))


@pytest.fixture(scope="module")
def spread_server(spread_book):
    """``fuseki serve`` of the spread book, one for the module: its tests only read it."""
    with serving(spread_book) as url:
        yield url


def shown_rows(page, table):
    """The rows of ``table`` a visitor sees (their move cells), and of those hidden."""
    return page.js("const rows = [...document.querySelectorAll(arguments[0] + ' tbody tr')];"
                   "const move = (r) => r.querySelector('td.move').textContent;"
                   "return [rows.filter(r => r.getClientRects().length).map(move),"
                   "        rows.filter(r => !r.getClientRects().length).map(move)]", table)


def shown_letters(page):
    """The letters a visitor sees on the search board: letter -> how many points."""
    return page.js("const seen = {};"
                   "for (const t of document.querySelectorAll('#search-board .marks text'))"
                   "  if (t.getClientRects().length) seen[t.textContent] = (seen[t.textContent] || 0) + 1;"
                   "return seen")


def test_the_rarer_moves_are_hidden_until_asked(spread_server, browser):
    url = spread_server
    page = Page(browser)
    page.open(url)
    page.wait(lambda _: shown_rows(page, "#next-table")[0])
    # 300 and 4 of 307 games are shown; 3 games (0.98%: under 1%) are not, nor is their letter
    with urllib.request.urlopen(f"{url}api/position?size=19", timeout=30) as reply:
        answer = json.load(reply)
    assert [row["games"] for row in answer["next"]] == [300, 4, 3]  # the API answers every row
    vertex = [row["vertex"] for row in answer["next"]]
    assert shown_rows(page, "#next-table") == [vertex[:2], vertex[2:]]
    assert shown_letters(page) == {"a": 4, "b": 8}
    assert page.text("next-table").strip().endswith("show 1 rarer move")
    page.click("#next-table tfoot button")
    page.wait(lambda _: shown_rows(page, "#next-table") == [vertex, []])
    assert shown_letters(page) == {"a": 4, "b": 8, "c": 4}
    page.wait(lambda _: "rare=1" in browser.current_url)
    assert page.text("next-table").strip().endswith("hide 1 rarer move")
    # the choice is the link's: a fresh load of the address shows them again
    address = browser.current_url
    browser.get("about:blank")
    page.open(address)
    page.wait(lambda _: shown_rows(page, "#next-table") == [vertex, []])
    page.click("#next-table tfoot button")  # hidden again, and so in the address
    page.wait(lambda _: shown_rows(page, "#next-table") == [vertex[:2], vertex[2:]])
    page.wait(lambda _: "rare=1" not in browser.current_url)
    # after Q16: the rows under 3 games (or 1%) wait behind the button, their letters too
    page.play("pd")
    page.wait(lambda _: page.rows("#next-table") and page.js(
        "return !!document.querySelector('#next-table tfoot button')"))
    with urllib.request.urlopen(f"{url}api/position?size=19&moves=pd", timeout=30) as reply:
        answer = json.load(reply)
    rare = [row["games"] < 3 or row["games"] < 0.01 * answer["total"] for row in answer["next"]]
    assert any(rare) and not all(rare)
    assert page.js("return [...document.querySelectorAll('#next-table tbody tr')]"
                   ".map(r => !r.getClientRects().length)") == rare
    assert page.text("next-table").strip().endswith(f"show {sum(rare)} rarer moves")
    lettered = {row["letter"] for row, few in zip(answer["next"], rare) if row["letter"] and not few}
    assert set(shown_letters(page)) == lettered
    # the corner table: the rows under 3 games or 1% of their corner's continuations wait too
    page.play("dp")  # out of book: the corner book's letters are the board's
    # one read of the table: two reads may straddle a redraw (the second finds it emptied)
    page.wait(lambda _: (rows := page.rows("#corner-table")) and "bottom left" in rows[0][1])
    with urllib.request.urlopen(f"{url}api/corners?size=19&moves=pd,dp", timeout=30) as reply:
        corners = json.load(reply)["corners"]
    rare = [row["games"] < 3 or row["games"] < 0.01 * corner["total"]
            for corner in corners if corner["same_as"] is None for row in corner["next"][:5]]
    assert any(rare) and not all(rare)
    assert page.js("return [...document.querySelectorAll('#corner-table tbody tr')]"
                   ".map(r => !r.getClientRects().length)") == rare


def test_corners_of_the_same_stones_are_listed_once(spread_server, browser):
    every = "top left, top right, bottom left, bottom right (the same stones)"
    url = spread_server
    page = Page(browser)
    page.open(f"{url}#rare=1")
    page.wait(lambda _: page.rows("#corner-table"))
    # the empty board: four empty corners, one list of their moves (it was the same five four times)
    rows = page.rows("#corner-table")
    assert len(rows) == 5 and {row[1] for row in rows} == {every}
    assert [row[0] for row in rows] == list("ABCDE")  # the corner table's own letters, not a-e
    with urllib.request.urlopen(f"{url}api/corners?size=19", timeout=30) as reply:
        corners = json.load(reply)["corners"]
    assert [c["same_as"] for c in corners] == [None, 0, 0, 0] and corners[0]["same"] == [1, 2, 3]
    for row in corners[0]["next"]:  # its points in each corner: a 4-4 point once a corner, a 3-4 point twice
        assert len(set(row["all_points"])) == 4 * len(row["points"])
        assert set(row["points"]) <= set(row["all_points"])
    # Q16 D4: the two empty corners once, the two others each with its own moves
    page.play("pd", "dp")
    page.wait(lambda _: "bottom left (last move)" in {row[1] for row in page.rows("#corner-table")})
    names = [row[1] for row in page.rows("#corner-table")]
    assert set(names) == {"bottom left (last move)", "top left, bottom right (the same stones)", "top right"}
    assert len(set(row[2] for row in page.rows("#corner-table"))) == len(names)  # no move listed twice
    # out of book: the corner rows letter the board, a shared row's letter on its points in both corners
    with urllib.request.urlopen(f"{url}api/corners?size=19&moves=pd,dp", timeout=30) as reply:
        shared = next(c for c in json.load(reply)["corners"] if c["same"])
    drawn = page.js("const seen = {};"
                    "for (const t of document.querySelectorAll('#search-board .marks text'))"
                    "  (seen[t.textContent] = seen[t.textContent] || []).push(t.dataset.sgf);"
                    "return seen")
    letters = {row[2]: row[0] for row in page.rows("#corner-table")}
    for row in shared["next"][:5]:
        assert sorted(drawn[letters[row["vertex"]]]) == sorted(row["all_points"])
        assert len(row["all_points"]) == 2 * len(row["points"])


# Setup stones around a ko (SGF AB/AW): Black takes at C18, White's retake at B18 is the ko the
# rules refuse, White's A19 is a suicide, Black's C19 is on White's stone, then a pass: the
# record's replay puts each refused move down as a stone without captures (strict=False).
ODD_GAME = (b"(;GM[1]FF[4]SZ[19]PB[Odd Black]PW[Odd White]DT[2012-02-02]RE[B+R]KM[6.5]"
            b"AB[ba][ab][bc]AW[ca][bb][db][cc];B[cb];W[bb];W[aa];B[ca];B[];W[pd];B[dp];W[pp])")


@pytest.fixture(scope="module")
def real_book(tmp_path_factory):
    """Ten real Tygem games, the API tests' games (one with a capture) and ODD_GAME."""
    archive = SHARED_DATA / "tygem-2016-07.tgz"
    if not archive.exists():
        missing_service(f"{archive} is not here (the shared data)")
    with tarfile.open(archive) as tar:
        names = sorted(m.name for m in tar.getmembers() if m.isfile() and m.name.endswith(".sgf"))[:10]
        games = {Path(name).stem: tar.extractfile(name).read() for name in names}
    return build_book(tmp_path_factory.mktemp("real") / "book.sqlite", {**games, **GAMES, "odd": ODD_GAME})


@pytest.fixture(scope="module")
def real_server(real_book):
    """``fuseki serve`` of the real book, one for the module: its tests only read it."""
    with serving(real_book) as url:
        yield url


def rules_core_positions(book_path, game_id: int, symmetry: int) -> list:
    """Per move number of the game: its Black and White stones (SGF points under ``symmetry``) and
    captures, from fuseki's own board (book.formats.positions.board_after_record, as the server replays)."""
    from fuseki.book.formats.positions import board_after_record
    from fuseki.book.storage.store import Book
    from fuseki.engine.core import base, coords
    from fuseki.engine.core.base import BLACK, WHITE

    book = Book.open(str(book_path), readonly=True)
    try:
        record = book.game(game_id)
    finally:
        book.close()
    size = record.size
    answer = []
    for number in range(len(record.moves) + 1):
        board = board_after_record(record, number, strict=False)
        answer.append([sorted(base.point_to_sgf(coords.transform_point(symmetry, p, size), size)
                              for p in board.stones(colour)) for colour in (BLACK, WHITE)]
                      + [board.captures[BLACK], board.captures[WHITE]])
    return answer


def test_the_page_replays_games_as_the_rules_core_does(real_book, real_server, browser):
    """Every position of every game of the book (real Tygem games, a capture, setup stones around a
    ko retaken, a suicide and a move on a stone) as the page computes it, under a symmetry per game,
    is the rules core's."""
    url = real_server
    page = Page(browser)
    page.open(url)
    with urllib.request.urlopen(f"{url}api/info", timeout=30) as reply:
        count = json.load(reply)["games"]
    assert count == 10 + 5 + 1
    compared = 0
    for game_id in range(1, count + 1):
        symmetry = game_id % 8
        with urllib.request.urlopen(f"{url}api/game/{game_id}?sym={symmetry}", timeout=30) as reply:
            game = json.load(reply)
        seen = page.module("const {replayGame} = await import('/static/replay.js'); const game = arguments[0];"
                           "return Array.from({length: game.moves.length + 1}, (_, n) => {"
                           "  const p = replayGame(game, n);"
                       "  return [p.stones.B.sort(), p.stones.W.sort(), p.captures.B, p.captures.W]; })", game)
        expected = rules_core_positions(real_book, game_id, symmetry)
        for number, (mine, core) in enumerate(zip(seen, expected)):
            assert mine == core, (game["info"]["black"], symmetry, number)
        assert len(seen) == len(expected)
        compared += len(seen)
    assert compared > 1000  # the real games are long: hundreds of positions with captures


def game_requests(page):
    """The page's requests for games so far: /api/game/<id>... paths, in order."""
    return page.js("return performance.getEntriesByType('resource').map(e => new URL(e.name).pathname)"
                   ".filter(p => p.startsWith('/api/game/'))")


def test_the_game_in_hand(server, browser):
    """One request a game, however many steps; move numbers on the replay board, kept in the link;
    the search's line as a breadcrumb back to any of its moves."""
    page = Page(browser)
    page.open(f"{server}#rare=1")
    page.play("pd", "dp", "pq")
    crumbs = page.js("return [...document.querySelectorAll('#search-line .crumb')].map(b => b.textContent)")
    assert crumbs == ["start", "1 Q16", "2 D4", "3 Q3"]
    # a long line stays one line that scrolls to its last move: the board does not move down
    board_top = page.js("return document.getElementById('search-board').getBoundingClientRect().top")
    page.module("const {state} = await import('/static/app.js');"
                " const {renderLine} = await import('/static/search.js');"
                "state.moves.push(...'ab,ba,ca,da,ea,fa,ga,ha,ja,ka,la,ma,na,oa,qa,ra,sa,ac,bc,cc,ec'.split(','));"
                "renderLine(state); state.moves.splice(3)")
    line = page.js("const line = document.getElementById('search-line'); const last = line.lastElementChild;"
                   "return [line.scrollWidth > line.clientWidth, last.getBoundingClientRect().right"
                   "        <= line.getBoundingClientRect().right + 1, line.children.length,"
                   "        new Set([...line.children].map(c => c.getBoundingClientRect().top)).size,"
                   "        last.getBoundingClientRect().height]")
    assert line[:4] == [True, True, 25, 1]  # one row, scrolled to its end
    moved = page.js("return document.getElementById('search-board').getBoundingClientRect().top") - board_top
    assert 0 <= moved < line[4]  # its scrollbar at most, never another row of moves
    page.module("const {state} = await import('/static/app.js');"
                "(await import('/static/search.js')).renderLine(state)")
    page.wait(lambda _: len(page.rows("#games-table")) == 2)
    page.click("#games-table tbody tr td:nth-child(3)")
    page.wait(lambda _: page.text("move-number").startswith("move 3 / "))
    total = int(page.text("move-number").split("/")[1].split()[0])
    for button in ["next", "next", "prev", "first", "last", "prev"]:
        before = page.text("move-number")
        page.click(f"#{button}")
        page.wait(lambda _: page.text("move-number") != before)  # noqa: B023 (read at once)
    assert page.text("move-number").startswith(f"move {total - 1} / {total}")
    assert len(game_requests(page)) == 1  # the game's moves, once: every step computed in the page
    # move numbers: each stone its move's number (the game has no captures), the last one marked
    assert page.js("return document.querySelectorAll('#replay-board .move-numbers text').length") == 0
    page.click("#move-numbers")
    page.wait(lambda _: page.js("return document.querySelectorAll('#replay-board .move-numbers text').length"))
    numbers = page.js("return Object.fromEntries([...document.querySelectorAll('#replay-board .move-numbers text')]"
                      ".map(t => [t.dataset.sgf, Number(t.textContent)]))")
    shown = page.module("const {state} = await import('/static/app.js'); return [state.game.id, state.game.symmetry]")
    with urllib.request.urlopen(f"{server}api/game/{shown[0]}?sym={shown[1]}", timeout=30) as reply:
        moves = json.load(reply)["moves"]
    assert numbers == {move["sgf"]: n for n, move in enumerate(moves[:total - 1], 1)}
    assert page.js("return document.querySelector('#replay-board .last-number').textContent") == str(total - 1)
    page.wait(lambda _: "numbers=1" in browser.current_url)
    address = browser.current_url
    browser.get("about:blank")
    page.open(address)  # the link keeps the switch, the game and its move
    page.wait(lambda _: page.js("return document.querySelectorAll('#replay-board .move-numbers text').length")
              == total - 1)
    assert browser.find_element("id", "move-numbers").is_selected()
    assert len(game_requests(page)) == 1
    # the breadcrumb goes back to any move; forward replays the moves it went back over
    page.click('#search-line .crumb[data-move="1"]')
    page.at(1)
    assert page.stones("search-board") == ["pd"]
    assert page.js("return [...document.querySelectorAll('#search-line .crumb')].map(b => b.textContent)") == \
        ["start", "1 Q16"]
    page.click("#forward")
    page.at(2)
    assert page.stones("search-board") == ["dp", "pd"]
    page.click('#search-line .crumb[data-move="0"]')
    page.at(0)
    assert page.stones("search-board") == []


def test_the_ais_loss_is_a_coloured_cell_with_its_visits(tmp_path, browser):
    """``fuseki serve --ai`` with stored values (test_katago.py's fake KataGo never answers): a loss
    of MARK_VISITS visits is coloured green (none) to red (3 points), its visits shown; a shallower
    value and a move without one get no colour, the cell saying why; KataGo's candidates are on
    the board in their own colour and a hovered row draws its line."""
    import sys

    from fuseki.book.analysis.ai import MARK_VISITS

    from services import FAKE_KATAGO

    script = tmp_path / "fake_katago.py"
    script.write_text(FAKE_KATAGO)
    cache = tmp_path / "ai-cache.sqlite"
    spot = type("App", (), {"cache_path": cache})
    put_values(spot, "", {"pd": (0.47, 0.5, 0.0), "jj": (0.45, -0.5, 1.0), "qd": (0.40, -2.0, 2.5)}, network="",
               root=(MARK_VISITS, 0.47, 0.5), move_visits=MARK_VISITS, lines=[["pd", "dp", "pp"], ["jj"], ["qd"]])
    put_values(spot, "pd", {"dp": (0.52, 0.3, 0.0)}, network="", root=(MARK_VISITS, 0.52, 0.3),
               move_visits=MARK_VISITS - 1)  # shallow: D4's value, no colour; D16 not evaluated

    def loss_cells():
        return page.js("return [...document.querySelectorAll('#next-table tbody tr')].map(r => {"
                       "  const td = r.querySelector('td.loss');"
                       "  return [r.dataset.vertex, td.textContent, getComputedStyle(td).backgroundColor,"
                       "          getComputedStyle(td, '::after').content]; })")

    def rgb(text):
        return [int(part) for part in text[text.index("(") + 1:text.index(")")].split(",")[:3]]

    command = f"{sys.executable} {script} hang"
    with serving(build_book(tmp_path / "book.sqlite"), "--ai", "--katago", command, "--visits", "2",
                 env={"FUSEKI_AI_CACHE": str(cache)}) as url:
        page = Page(browser)
        page.open(f"{url}#rare=1")
        page.wait(lambda _: len(loss_cells()) == 3 and all(cell[1] for cell in loss_cells()))
        (_, _, _, visits), _, (k10, _, _, _) = loss_cells()  # Q16 (4 games), R16 (1), KataGo's K10
        assert k10 == "K10" and visits == f'"{MARK_VISITS} v"'
        green, red, amber = (rgb(cell[2]) for cell in loss_cells())
        assert green[1] > green[0] and red[0] > red[1] and red[0] > red[2]  # 0.0 green, 2.5 red
        assert green[0] < amber[0] < red[0] and amber[1] > red[1]  # 1.0 between them: towards red
        # KataGo's candidates drawn on the board in their own colour; a hovered row draws its line
        assert page.js("return document.querySelectorAll('#search-board .ai-marks circle').length") == 4 + 8 + 1
        from selenium.webdriver.common.action_chains import ActionChains

        ActionChains(browser).move_to_element(browser.find_element("css selector", "#next-table tbody tr")).perform()
        page.wait(lambda _: page.js("return document.querySelectorAll('#search-board .ai-pv circle').length") == 3)
        # after Q16: D4's value is shallower than the marks' visits, D16 has none: no colour, and why
        page.play("pd")
        page.wait(lambda _: any(cell[0] == "D4" and cell[1] for cell in loss_cells()))
        cells = {cell[0]: cell for cell in loss_cells()}
        assert cells["D4"][2] == "rgba(0, 0, 0, 0)"
        assert cells["D4"][3] == f'"{MARK_VISITS - 1} v, under {MARK_VISITS} v"'
        page.wait(lambda _: {cell[0]: cell for cell in loss_cells()}["D16"][3] == '"not evaluated yet"')
        assert {cell[0]: cell for cell in loss_cells()}["D16"][2] == "rgba(0, 0, 0, 0)"


def test_a_phones_games_list_shows_whole_names(real_server, browser):
    """At 390x844 every player's name and rank in the games list is whole (it read "johc03" for
    "johc03 9d" while the result column had room)."""
    emulate(browser, 390, 844, True)
    url = real_server
    page = Page(browser)
    page.open(url)
    page.wait(lambda _: len(page.rows("#games-table")) == 15)  # ODD_GAME starts from its setup: not listed
    cells = page.js("return [...document.querySelectorAll('#games-table tbody tr')].flatMap(r =>"
                    "  [...r.cells].slice(0, 2)"
                    "  .map(td => [td.textContent.trim(), td.scrollWidth, td.clientWidth]))")
    cut = [(name, scroll, client) for name, scroll, client in cells if scroll > client]
    assert len(cells) == 30 and not cut
    assert page.js("return document.documentElement.scrollWidth") <= 390  # and the page is no wider
