"""The explorer page's layout on a phone, a tablet and a wide screen, in a real browser.

Chromium (tests/browsing.py's) emulates each device through the DevTools protocol
(``Emulation.setDeviceMetricsOverride``: the viewport, a mobile one honouring the page's
``<meta name="viewport">``, with touch).  At each size the test searches two moves, with
KataGo's columns filled in (test_katago.py's fake KataGo, its values written to the cache
file), and opens a game; then it measures the page:

- no horizontal scrolling;
- on a desk (1600 and 1366 px) the board left, the tabs and their panel beside it; on the phone
  and the tablet the board, the tabs and the panel stacked, the replay board as wide as its
  column, the search board's bottom and the tabs in the window;
- on the phone and the tablet every visible control (button, input, select, link button, a
  checkbox's label, a table row, a tab) is at least 40 px high and wide, in each tab;
- no text under 12 px (SVG text excepted: it is drawn in board units and scales with the board);
- the games table shows each result and each column head whole; every table stays in its card.

Then, on a real book (the Tygem month, imported once by ``fuseki import``: conftest's
``month_book``), issue 43's desk: at 1600x1000 and 1366x768 the next-move table beside the board
with its first 12 rows in the window without scrolling; on the phone and the tablet the board and
the next moves' tab both in the window; no horizontal scrolling, no console error.

Each size leaves a screenshot in ``artifacts/layout-<width>.png``;
``FUSEKI_SCREENSHOTS=docs/screenshots`` also writes whole-page screenshots
``page-<width>.png`` there, the ones the docs show (docs/exploring.md).
"""

from __future__ import annotations

import base64
import os

import pytest

from browsing import ARTIFACTS, ROOT, TAP, Page, emulate, serving
from webbook import GAMES, build_book, cached_ai

pytestmark = pytest.mark.slow

SIZES = {  # name: (width, height, mobile, the docs' screenshot's scale: a few hundred KB each)
    "phone": (390, 844, True, 1),
    "tablet": (768, 1024, True, 0.75),
    "laptop": (1366, 768, False, 1),
    "desktop": (1600, 1000, False, 0.85),
}
DESK = ("laptop", "desktop")
TABS = ("next-moves", "games", "replay")  # the panels beside the board (the tools are under it on a desk)
FIRST_ROWS = 12  # the next-move table's rows a desk shows with the board, without scrolling
SHOT_BYTES = 400_000
SMALLEST_FONT = 12  # px

# The API tests' games with results as long as real ones ("W+Resign" was cut to "W+Re…")
RESULTS = {"seigen": b"W+Resign", "takemiya": b"B+Resign", "cho": b"W+Time", "mirror": b"B+12.5",
           "capture": b"B+Forfeit"}
LAYOUT_GAMES = {name: sgf.replace(sgf[sgf.index(b"RE["):sgf.index(b"]", sgf.index(b"RE[")) + 1],
                                  b"RE[" + RESULTS[name] + b"]")
                for name, sgf in GAMES.items()}

MEASURE = """
const visible = (e) => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== "hidden";
const box = (e) => { const r = e.getBoundingClientRect();
                     return {left: r.left, right: r.right, top: r.top, bottom: r.bottom,
                             width: r.width, height: r.height}; };
const name = (e) => e.id ? "#" + e.id : e.tagName.toLowerCase() + "." + e.className + " " +
                    JSON.stringify((e.textContent || "").trim().slice(0, 30));
const controls = [...document.querySelectorAll(
    "button, a.button, select, input, summary, #next-table tbody tr, #corner-table tbody tr, #games-table tbody tr")]
  .filter(visible)
  .map((e) => e.type === "checkbox" && e.closest("label") ? e.closest("label") : e)  // a finger taps the label
  .map((e) => ({name: name(e), ...box(e)}));
const fonts = [...document.querySelectorAll("body *")]
  .filter((e) => !e.closest("svg") && visible(e) &&
                 [...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim()))
  .map((e) => ({name: name(e), size: parseFloat(getComputedStyle(e).fontSize)}));
const cut = (e) => e.scrollWidth > e.clientWidth;
return {
  scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth,
  wide: [...document.querySelectorAll("body *")].filter((e) => !e.closest("svg") && visible(e) &&
          e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5).map(name),
  sections: Object.fromEntries([...document.querySelectorAll("main > section, main > nav")].filter(visible)
    .map((s) => [s.id, {...box(s), inner: s.clientWidth - parseFloat(getComputedStyle(s).paddingLeft)
                                          - parseFloat(getComputedStyle(s).paddingRight)}])),
  boards: Object.fromEntries([...document.querySelectorAll("svg.board")].filter(visible).map((b) => [b.id, box(b)])),
  innerHeight: window.innerHeight, scrollY: window.scrollY,
  controls, fonts,
  results: [...document.querySelectorAll("#games-table tbody td:nth-child(4)")].filter(visible)
    .map((td) => ({text: td.textContent, cut: cut(td)})),
  heads: [...document.querySelectorAll("#games-table th")].filter(visible)
    .map((th) => ({text: th.textContent, cut: cut(th)})),
  tables: [...document.querySelectorAll("table")].filter(visible).map((t) => ({
    name: t.id, table: box(t), card: box(t.closest("section"))})),
};
"""


@pytest.fixture(scope="module")
def ai_server(tmp_path_factory):
    """``fuseki serve --ai`` over the layout games, KataGo's values of the searched positions cached."""
    from fuseki.book.analysis.ai import MARK_VISITS

    folder = tmp_path_factory.mktemp("layout")
    deep = {"root": (MARK_VISITS, 0.5, 0.5), "move_visits": MARK_VISITS}  # deep enough for the marks
    args, env = cached_ai(folder, {
        "": ({"pd": (0.47, 0.5, 0.0), "jj": (0.45, -0.5, 1.0), "qd": (0.40, -2.0, 2.5)}, deep),
        "pd,dp": ({"pq": (0.521, 1.3, 0.0), "jj": (0.493, -0.4, 1.7), "pp": (0.442, -12.1, 13.4)}, deep)})
    with serving(build_book(folder / "book.sqlite", LAYOUT_GAMES), *args, env=env) as url:
        yield url


def search_and_open_a_game(browser, url):
    """Two moves on the search board, KataGo's columns filled in, the first game opened."""
    page = Page(browser)
    # rare=1: the test book's moves are all of 1-2 games, which the page hides by default (the
    # minimum-games setting); shown, as after the player's one click, they are measured and drawn
    browser.get(url + "#rare=1")
    page.wait(lambda _: "5 games" in page.text("book-info"))
    page.play("pd", "dp")
    # the next moves with KataGo's win %, lead, loss and its mark; a popular move it rates badly
    # one read of the table: a second could see it emptied by a redraw (and all([]) is true)
    page.wait(lambda _: len(rows := page.rows("#next-table")) == 3 and all(row[-1] for row in rows))
    assert any(row[-1].endswith("?") for row in page.rows("#next-table"))
    page.wait(lambda _: len(page.rows("#games-table")) == 3)
    page.wait(lambda _: page.rows("#corner-table"))
    # the date: the row's names are links to the players' pages, and its middle may be one
    page.click("#games-table tbody tr td:nth-child(3)")
    page.wait(lambda _: page.text("move-number").startswith("move 2 / "))
    browser.execute_script("window.scrollTo(0, 0)")


def screenshot(browser, width, height, scale):
    """The viewport into artifacts/; the whole page, at ``scale``, into $FUSEKI_SCREENSHOTS when set."""
    ARTIFACTS.mkdir(exist_ok=True)
    assert browser.save_screenshot(str(ARTIFACTS / f"layout-{width}.png"))
    folder = os.environ.get("FUSEKI_SCREENSHOTS")
    if folder:
        out = ROOT / folder
        out.mkdir(parents=True, exist_ok=True)
        full = browser.execute_script("return document.documentElement.scrollHeight")
        shot = browser.execute_cdp_cmd("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": width, "height": max(full, height), "scale": scale}})
        path = out / f"page-{width}.png"
        path.write_bytes(base64.b64decode(shot["data"]))
        assert path.stat().st_size < SHOT_BYTES, f"{path}: {path.stat().st_size} bytes"


def shown_tab(browser):
    return browser.execute_script("return document.querySelector('main').dataset.tab")


def measure_tabs(browser, tabs):
    """MEASURE with each of ``tabs`` chosen (a click on it), from the top of the page."""
    from selenium.webdriver.common.by import By

    pages = {}
    for tab in tabs:
        browser.find_element(By.ID, f"tab-{tab}").click()
        assert shown_tab(browser) == tab
        browser.execute_script("window.scrollTo(0, 0)")
        pages[tab] = browser.execute_script(MEASURE)
    return pages


@pytest.mark.parametrize("device", list(SIZES))
def test_layout_on_phone_tablet_and_wide_screen(ai_server, browser, device):
    width, height, mobile, scale = SIZES[device]
    emulate(browser, width, height, mobile)
    search_and_open_a_game(browser, ai_server)
    assert shown_tab(browser) == "replay"  # the game opened by a click is shown
    desk = device in DESK
    pages = measure_tabs(browser, TABS if desk else TABS + ("tools",))
    measure_tabs(browser, ["next-moves"])
    screenshot(browser, width, height, scale)

    for tab, page in pages.items():
        assert page["innerWidth"] == width, f"{tab}: the page is wider than the screen: {page['wide']}"
        assert page["scrollWidth"] <= page["innerWidth"], f"{tab}: the page scrolls sideways: {page['wide']}"
        tiny = [f for f in page["fonts"] if f["size"] < SMALLEST_FONT]
        assert not tiny, f"{tab}: text under {SMALLEST_FONT} px: {tiny}"
        sections, boards = page["sections"], page["boards"]
        search, tabs, panel = sections["search"], sections["tabs"], sections[tab]
        assert set(sections) == {"search", "tabs", tab} | ({"tools"} if desk else set()), sections
        if desk:  # the board left; the tabs and the chosen panel beside it, from the top; the tools under the board
            tools = sections["tools"]
            assert search["right"] <= tabs["left"] and search["right"] <= panel["left"], (tab, sections)
            assert abs(search["top"] - tabs["top"]) < 1 and tabs["bottom"] <= panel["top"] + 1.5, (tab, sections)
            assert abs(tools["left"] - search["left"]) < 1 and search["bottom"] <= tools["top"], (tab, sections)
            assert boards["search-board"]["bottom"] <= page["innerHeight"], boards  # the whole board in view
        else:  # stacked, each as wide as the page; the board, then the tabs in view under it
            assert search["bottom"] <= tabs["top"] and tabs["bottom"] <= panel["top"] + 1.5, (tab, sections)
            assert all(s["width"] >= width - 40 for s in (search, tabs, panel)), sections
            assert tabs["bottom"] <= page["innerHeight"], (tab, tabs)
            assert boards["search-board"]["bottom"] <= tabs["top"], boards
            if tab == "replay":
                assert boards["replay-board"]["width"] >= panel["inner"] - 1, (boards, panel)
            small = [c for c in page["controls"] if c["height"] < TAP - 0.5 or c["width"] < TAP - 0.5]
            assert not small, f"{tab}: controls under {TAP} px: {small}"

    games = pages["games"]
    assert len(games["results"]) == 3 and {r["text"] for r in games["results"]} <= set(
        RESULTS[n].decode() for n in RESULTS), games["results"]
    assert not [r for r in games["results"] if r["cut"]], f"results cut: {games['results']}"
    assert not [h for h in games["heads"] if h["cut"]], f"column heads cut: {games['heads']}"

    tables = [t for page in pages.values() for t in page["tables"]]
    assert {t["name"] for t in tables} == {"next-table", "corner-table", "games-table"}
    for t in tables:
        table, card = t["table"], t["card"]
        assert card["left"] - 0.5 <= table["left"] and table["right"] <= card["right"] + 0.5, t


@pytest.mark.parametrize("width", [800, 1000, 1200])
def test_two_columns_keep_their_tables_in_their_cards(ai_server, browser, width):
    """Between the phone and the wide screen (one column, or a narrow desk) the games table's
    heads and results are whole and the move tables stay in their cards."""
    emulate(browser, width, 900, False)
    search_and_open_a_game(browser, ai_server)
    pages = measure_tabs(browser, TABS)
    for tab, page in pages.items():
        assert page["scrollWidth"] <= page["innerWidth"], (tab, page["wide"])
        assert not [r for r in page["results"] if r["cut"]], page["results"]
        assert not [h for h in page["heads"] if h["cut"]], page["heads"]
        for t in page["tables"]:
            table, card = t["table"], t["card"]
            assert card["left"] - 0.5 <= table["left"] and table["right"] <= card["right"] + 0.5, (width, t)
    assert len(pages["games"]["results"]) == 3


SEEN = """
const box = (e) => { if (!e) return null;  // no such element (no tabs before issue 43's desk)
                     const r = e.getBoundingClientRect();
                     return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
return {scrollX: window.scrollX, scrollY: window.scrollY, innerWidth: window.innerWidth,
        innerHeight: window.innerHeight, scrollWidth: document.documentElement.scrollWidth,
        board: box(document.getElementById("search-board")), table: box(document.getElementById("next-table")),
        tab: box(document.getElementById("tab-next-moves")),
        selected: document.getElementById("tab-next-moves")?.getAttribute("aria-selected"),
        rows: [...document.querySelectorAll("#next-table tbody tr")].filter((r) => r.getClientRects().length)
                .map(box)};  // the rows shown: a hidden one (rarer moves) has no box to be in view
"""


def inside(box, page):
    return box["left"] >= 0 and box["top"] >= 0 and box["right"] <= page["innerWidth"] and \
        box["bottom"] <= page["innerHeight"]


@pytest.fixture(scope="module")
def month_server(month_book):
    """``fuseki serve`` of the Tygem month (11,364 games: 16 first moves on the empty board)."""
    with serving(month_book) as url:
        yield url


@pytest.mark.parametrize("device", list(SIZES))
def test_the_next_moves_beside_the_board_on_a_real_book(month_server, browser, device):
    """Issue 43's first finding: the next-move table was below the fold (y = 916 at 1600x1000)."""
    width, height, mobile, _ = SIZES[device]
    emulate(browser, width, height, mobile)
    page = Page(browser, timeout=60)
    browser.get(month_server + "#rare=1")  # every first move shown (rarer moves included): 16 rows
    page.wait(lambda _: "11,364 games" in page.text("book-info"))
    page.wait(lambda _: len(page.rows("#next-table")) >= FIRST_ROWS)
    page.wait(lambda _: page.text("years-caption"))  # the last answer of the first view
    seen = browser.execute_script(SEEN)

    assert seen["innerWidth"] == width and seen["scrollWidth"] <= width, seen
    assert seen["scrollX"] == 0 and seen["scrollY"] == 0, seen
    assert inside(seen["board"], seen), seen["board"]
    if device in DESK:  # the table beside the board, its first rows in the window
        assert len(seen["rows"]) >= FIRST_ROWS, len(seen["rows"])
        hidden = [(n, row) for n, row in enumerate(seen["rows"][:FIRST_ROWS]) if not inside(row, seen)]
        assert not hidden, f"rows out of the {width}x{height} window: {hidden}"
        assert seen["table"]["left"] >= seen["board"]["right"], (seen["board"], seen["table"])
    else:  # the board on top, the next moves' tab (chosen) in view under it
        assert seen["tab"] and seen["selected"] == "true" and inside(seen["tab"], seen), seen["tab"]
        assert seen["tab"]["top"] >= seen["board"]["bottom"], (seen["board"], seen["tab"])
    errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert not errors, errors
