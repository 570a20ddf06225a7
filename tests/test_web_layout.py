"""The explorer page's layout on a phone, a tablet and a wide screen, in a real browser.

Chromium (as in test_web_browser.py) emulates each device through the DevTools protocol
(``Emulation.setDeviceMetricsOverride``: the viewport, a mobile one honouring the page's
``<meta name="viewport">``, with touch).  At each size the test searches two moves, with
KataGo's columns filled in (test_katago.py's fake KataGo, its values written to the cache
file), and opens a game; then it measures the page:

- no horizontal scrolling;
- the three columns side by side at 1600 px, stacked on the phone and the tablet, where the
  boards are as wide as their column;
- on the phone and the tablet every visible control (button, input, select, link button, a
  checkbox's label, a table row) is at least 40 px high and wide;
- no text under 12 px (SVG text excepted: it is drawn in board units and scales with the board);
- the games table shows each result and each column head whole; every table stays in its card.

Each size leaves a screenshot in ``artifacts/layout-<width>.png``;
``FUSEKI_SCREENSHOTS=docs/screenshots`` also writes whole-page screenshots
``page-<width>.png`` there, the ones the docs show (docs/exploring.md).
"""

from __future__ import annotations

import base64
import os
import sys

import pytest
from test_web_api import GAMES, build_book
from test_web_browser import ARTIFACTS, ROOT, browser, serving  # noqa: F401 (the browser fixture)
from test_web_links import Page

pytestmark = pytest.mark.slow

SIZES = {  # name: (width, height, mobile, the docs' screenshot's scale: a few hundred KB each)
    "phone": (390, 844, True, 1),
    "tablet": (768, 1024, True, 0.75),
    "desktop": (1600, 1000, False, 1),
}
SHOT_BYTES = 400_000
TAP = 40  # px: the smallest tap target on a phone or a tablet
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
  sections: [...document.querySelectorAll("main > section")].filter(visible).map((s) => ({name: s.id, ...box(s),
    inner: s.clientWidth - parseFloat(getComputedStyle(s).paddingLeft)
           - parseFloat(getComputedStyle(s).paddingRight)})),
  boards: [...document.querySelectorAll("svg.board")].map((b) => ({name: b.id, ...box(b)})),
  controls, fonts,
  results: [...document.querySelectorAll("#games-table tbody td:nth-child(4)")]
    .map((td) => ({text: td.textContent, cut: cut(td)})),
  heads: [...document.querySelectorAll("#games-table th")].map((th) => ({text: th.textContent, cut: cut(th)})),
  tables: [...document.querySelectorAll("table")].filter(visible).map((t) => ({
    name: t.id, table: box(t), card: box(t.closest("section"))})),
};
"""


@pytest.fixture(scope="module")
def ai_server(tmp_path_factory):
    """``fuseki serve --ai`` over the layout games, KataGo's values of the searched positions cached."""
    from test_katago import FAKE_KATAGO
    from test_web_ai import put_values

    folder = tmp_path_factory.mktemp("layout")
    script = folder / "fake_katago.py"
    script.write_text(FAKE_KATAGO)
    cache = folder / "ai-cache.sqlite"
    spot = type("App", (), {"cache_path": cache})
    from fuseki.book.analysis.ai import MARK_VISITS

    deep = {"root": (MARK_VISITS, 0.5, 0.5), "move_visits": MARK_VISITS}  # deep enough for the marks
    put_values(spot, "", {"pd": (0.47, 0.5, 0.0), "jj": (0.45, -0.5, 1.0), "qd": (0.40, -2.0, 2.5)}, network="",
               **deep)
    put_values(spot, "pd,dp", {"pq": (0.521, 1.3, 0.0), "jj": (0.493, -0.4, 1.7), "pp": (0.442, -12.1, 13.4)},
               network="", **deep)
    with serving(build_book(folder / "book.sqlite", LAYOUT_GAMES), "--ai", "--katago",
                 f"{sys.executable} {script} hang", "--visits", "2", env={"FUSEKI_AI_CACHE": str(cache)}) as url:
        yield url


def emulate(browser, width, height, mobile):  # noqa: F811
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})
    browser.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": mobile, "maxTouchPoints": 5})


def search_and_open_a_game(browser, url):  # noqa: F811
    """Two moves on the search board, KataGo's columns filled in, the first game opened."""
    page = Page(browser, timeout=30)
    browser.get(url)
    page.wait(lambda _: "5 games" in page.text("book-info"))
    page.play("pd", "dp")
    # the next moves with KataGo's win %, lead, loss and its mark; a popular move it rates badly
    page.wait(lambda _: len(page.rows("#next-table")) == 3 and all(row[-1] for row in page.rows("#next-table")))
    assert any(row[-1].endswith("?") for row in page.rows("#next-table"))
    page.wait(lambda _: len(page.rows("#games-table")) == 3)
    page.wait(lambda _: page.rows("#corner-table"))
    # the date: the row's names are links to the players' pages, and its middle may be one
    page.click("#games-table tbody tr td:nth-child(3)")
    page.wait(lambda _: page.text("move-number").startswith("move 2 / "))
    browser.execute_script("window.scrollTo(0, 0)")


def screenshot(browser, width, height, scale):  # noqa: F811
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


@pytest.mark.parametrize("device", list(SIZES))
def test_layout_on_phone_tablet_and_wide_screen(ai_server, browser, device):  # noqa: F811
    width, height, mobile, scale = SIZES[device]
    emulate(browser, width, height, mobile)
    search_and_open_a_game(browser, ai_server)
    page = browser.execute_script(MEASURE)
    screenshot(browser, width, height, scale)

    assert page["innerWidth"] == width, f"the page is wider than the screen: {page['wide']}"
    assert page["scrollWidth"] <= page["innerWidth"], f"the page scrolls sideways: {page['wide']}"

    search, games, replay = page["sections"]
    if device == "desktop":  # three columns, side by side
        assert search["right"] < games["left"] and games["right"] < replay["left"]
        assert abs(search["top"] - games["top"]) < 1 and abs(games["top"] - replay["top"]) < 1
    else:  # stacked, each as wide as the page; the boards as wide as their column
        assert abs(search["left"] - games["left"]) < 1 and abs(games["left"] - replay["left"]) < 1
        assert search["bottom"] <= games["top"] and games["bottom"] <= replay["top"]
        assert all(s["width"] >= width - 40 for s in page["sections"]), page["sections"]
        for board, section in zip(page["boards"], (search, replay)):
            assert board["width"] >= section["inner"] - 1, (board, section)
        small = [c for c in page["controls"] if c["height"] < TAP - 0.5 or c["width"] < TAP - 0.5]
        assert not small, f"controls under {TAP} px: {small}"

    tiny = [f for f in page["fonts"] if f["size"] < SMALLEST_FONT]
    assert not tiny, f"text under {SMALLEST_FONT} px: {tiny}"

    assert len(page["results"]) == 3 and {r["text"] for r in page["results"]} <= set(
        RESULTS[n].decode() for n in RESULTS), page["results"]
    assert not [r for r in page["results"] if r["cut"]], f"results cut: {page['results']}"
    assert not [h for h in page["heads"] if h["cut"]], f"column heads cut: {page['heads']}"

    assert {t["name"] for t in page["tables"]} == {"next-table", "corner-table", "games-table"}
    for t in page["tables"]:
        table, card = t["table"], t["card"]
        assert card["left"] - 0.5 <= table["left"] and table["right"] <= card["right"] + 0.5, t


@pytest.mark.parametrize("width", [800, 1000, 1200])
def test_two_columns_keep_their_tables_in_their_cards(ai_server, browser, width):  # noqa: F811
    """Between the phone and the wide screen (two columns, or three narrow ones) the games table's
    heads and results are whole and the move tables stay in their cards."""
    emulate(browser, width, 900, False)
    search_and_open_a_game(browser, ai_server)
    page = browser.execute_script(MEASURE)
    assert page["scrollWidth"] <= page["innerWidth"]
    assert not [r for r in page["results"] if r["cut"]], page["results"]
    assert not [h for h in page["heads"] if h["cut"]], page["heads"]
    for t in page["tables"]:
        table, card = t["table"], t["card"]
        assert card["left"] - 0.5 <= table["left"] and table["right"] <= card["right"] + 0.5, (width, t)
