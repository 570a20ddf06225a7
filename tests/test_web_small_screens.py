"""A phone and a tablet held upright, in a real browser (touch emulation): at load the board and
the first next-move row are in view, with and without KataGo's columns (at 390x844 with --ai the
first row began at y=830-874: a header of two lines, the AI switch on a row of its own; at 768x1024
at y=1,044: a 724 px board); the board's coordinates are at least 10 px; a phone's games list shows
whole dates ("2016-07-…" before) and wraps names between words only ("Hundu|n(P)|9d" before).
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest

from browsing import Page, emulate, serving
from webbook import GAMES, build_book, cached_ai

pytestmark = pytest.mark.slow  # a real Chromium: the browser tests are slow (docs/testing.md)

SCREENS = Path(tempfile.gettempdir()) / "fuseki-screens"
SMALL = {"phone": (390, 844), "tablet": (768, 1024)}

# players as online servers name them: "(P)" for professionals, long handles, bold winners
NAMED = {f"named{i}": re.sub(rb"PW\[[^]]*\]", b"PW[" + white + b"]",
                              re.sub(rb"PB\[[^]]*\]", b"PB[" + black + b"]", sgf))
         for i, ((black, white), sgf) in enumerate(zip(
             [(b"Hundun(P)", b"QOOQOOQOO"), (b"pengyou(P)", b"yangxiaodo"), (b"FengYu(P)", b"Reclaim(P)"),
              (b"SSYYQQSS", b"JSWQJSWQ"), (b"cksthdrk", b"di1sunw")], GAMES.values()))}


@pytest.fixture(scope="module")
def ai_server(tmp_path_factory):
    """``fuseki serve --ai`` over the test games, KataGo's values of the empty board cached."""
    from fuseki.book.analysis.ai import MARK_VISITS

    folder = tmp_path_factory.mktemp("small")
    deep = {"root": (MARK_VISITS, 0.5, 0.5), "move_visits": MARK_VISITS}
    # after Q16 only D4 (dp) is stored: D16 (dd) is "not evaluated yet"
    empty = {"pd": (0.47, 0.5, 0.0), "jj": (0.45, -0.5, 1.0), "qd": (0.40, -2.0, 2.5)}
    args, env = cached_ai(folder, {"": (empty, deep), "pd": ({"dp": (0.52, 0.3, 0.0)}, deep)})
    with serving(build_book(folder / "book.sqlite", {**GAMES, **NAMED}), *args, env=env) as url:
        yield url


@pytest.fixture(scope="module")
def named_server(tmp_path_factory):
    with serving(build_book(tmp_path_factory.mktemp("named") / "book.sqlite", {**GAMES, **NAMED})) as url:
        yield url


IN_VIEW = """
const box = (e) => { const r = e.getBoundingClientRect(); return [r.top, r.bottom, r.left, r.right]; };
const board = document.getElementById('search-board');
const row = [...document.querySelectorAll('#next-table tbody tr')].find(r => r.getClientRects().length);
const label = board.querySelector('.coords text');
return {board: box(board), row: row && box(row), height: innerHeight, width: innerWidth, scrollY,
        // a coordinate's font in CSS pixels: its size in the board's units times the board's scale
        coords: parseFloat(getComputedStyle(label).fontSize) * board.getBoundingClientRect().width
                / board.viewBox.baseVal.width};
"""


@pytest.mark.parametrize("device", SMALL)
@pytest.mark.parametrize("ai", [True, False], ids=["ai", "no-ai"])
def test_the_board_and_the_first_move_row_are_in_view_at_load(ai_server, named_server, browser, device, ai):
    width, height = SMALL[device]
    emulate(browser, width, height, True)
    page = Page(browser)
    page.open(f"{ai_server if ai else named_server}#rare=1")
    # the rows, with KataGo's values where it is on (its columns take room: measured filled in)
    page.wait(lambda _: (rows := page.rows("#next-table")) and (not ai or all(row[4] for row in rows[:2])))
    seen = page.js(IN_VIEW)
    top, bottom, left, right = seen["board"]
    assert seen["scrollY"] == 0 and top >= 0 and bottom <= seen["height"] and 0 <= left and right <= seen["width"], seen
    assert bottom - top >= min(width, 600) * 0.75, seen  # a board still as large as the screen allows
    assert seen["row"][1] <= seen["height"], seen  # the first next-move row whole in the window
    assert seen["coords"] >= 10, seen
    SCREENS.mkdir(exist_ok=True)
    assert browser.save_screenshot(str(SCREENS / f"load-{device}-{'ai' if ai else 'no-ai'}.png"))


WORDS = """
// each cell of the first columns: [text, its words each on one line, whole (nothing cut)]
const oneLine = (node, start, end) => {
  const range = document.createRange();
  range.setStart(node, start);
  range.setEnd(node, end);
  return new Set([...range.getClientRects()].map(r => Math.round(r.top))).size === 1;
};
return [...document.querySelectorAll('#games-table tbody tr')].flatMap(tr => [...tr.cells].slice(0, 3).map(td => {
  const walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
  let whole = true;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const word of node.data.matchAll(/\\S+/g)) {
      whole = whole && oneLine(node, word.index, word.index + word[0].length);
    }
  }
  return [td.textContent.trim(), whole, td.scrollWidth <= td.clientWidth];
}));
"""


def test_a_phones_games_list_keeps_dates_and_names_whole(named_server, browser):
    emulate(browser, 390, 844, True)
    page = Page(browser)
    page.open(named_server)
    page.click("#tab-games")
    page.wait(lambda _: any("Hundun(P)" in row[0] for row in page.rows("#games-table")))
    cells = page.js(WORDS)
    assert any(text.startswith("Hundun(P)") for text, _, _ in cells)
    broken = [text for text, whole, _ in cells if not whole]
    cut = [text for text, _, fits in cells if not fits]
    assert not broken and not cut, (broken, cut)
    assert page.js("return document.documentElement.scrollWidth") <= 390
    browser.execute_script("document.getElementById('games').scrollIntoView()")
    SCREENS.mkdir(exist_ok=True)
    assert browser.save_screenshot(str(SCREENS / "games-390.png"))


WHY = """
// each loss cell's note (its ::after, "not evaluated yet"): [the note, its widest word's width in the
// note's font, the room the cell's content has]; and whether both move tables fit their card
const probe = document.createElement('span');
probe.style.cssText = 'position: absolute; visibility: hidden; white-space: nowrap';
document.body.append(probe);
const notes = [...document.querySelectorAll('#next-table td.loss[data-why], #corner-table td.loss[data-why]')]
  .filter(td => td.getClientRects().length).map(td => {
    const after = getComputedStyle(td, '::after');
    const cell = getComputedStyle(td);
    for (const key of ['fontFamily', 'fontSize', 'fontWeight', 'fontStyle', 'letterSpacing']) {
      probe.style[key] = after[key];
    }
    const widest = Math.max(...after.content.replace(/^"|"$/g, '').split(/\\s+/).map(word => {
      probe.textContent = word;
      return probe.getBoundingClientRect().width;
    }));
    const room = td.getBoundingClientRect().width - parseFloat(cell.paddingLeft) - parseFloat(cell.paddingRight)
      - parseFloat(cell.borderLeftWidth) - parseFloat(cell.borderRightWidth);
    return [td.closest('table').id, after.content, widest, room, td.title];
  });
probe.remove();
const fits = ['next-table', 'corner-table'].map(id => {
  const table = document.getElementById(id);
  const card = table.closest('section').getBoundingClientRect();
  const box = table.getBoundingClientRect();
  return box.left >= card.left - 0.5 && box.right <= card.right + 0.5;
});
return {notes, fits, page: document.documentElement.scrollWidth};
"""


@pytest.mark.parametrize("width", [320, 360, 400])
def test_a_phones_loss_note_wraps_between_words_only(ai_server, browser, width):
    """At 320-400 px, with KataGo's columns, "not evaluated yet" under a move without a value broke
    inside its longest word ("not evalu|ated yet": the narrow panel's overflow-wrap: anywhere, the
    word 55 px in a 27-34 px column of the corner table); each word of the note fits the cell whole
    now, and the tables fit their card (the corner table was 16 px wider than its card at 320)."""
    emulate(browser, width, 800, True)
    page = Page(browser)
    page.open(f"{ai_server}#moves=pd&rare=1")
    page.wait(lambda _: page.js("return [...document.querySelectorAll('#next-table td.loss[data-why]')]"
                                ".some(td => td.getClientRects().length)")
              and page.js("return document.querySelectorAll('#corner-table tbody tr').length"))

    def in_both_tables(_):
        """WHY's reading once both tables show a note: the page asks KataGo again every second, and
        each answer draws the corner table again after a request (empty meanwhile)."""
        seen = page.js(WHY)
        tables = {table for table, _, _, _, title in seen["notes"] if title.endswith("(not evaluated yet)")}
        return seen if tables == {"next-table", "corner-table"} else None

    seen = page.wait(in_both_tables)
    SCREENS.mkdir(exist_ok=True)
    browser.execute_script("document.getElementById('next-table').scrollIntoView()")
    assert browser.save_screenshot(str(SCREENS / f"loss-note-{width}.png"))
    # in both tables; shortened where the panel is narrow, whole in the cell's title
    assert {table for table, _, _, _, title in seen["notes"] if title.endswith("(not evaluated yet)")} == {
        "next-table", "corner-table"}, seen
    split = [note for note in seen["notes"] if note[2] > note[3] + 0.5]  # a word wider than its cell
    assert not split, seen
    assert all(seen["fits"]) and seen["page"] <= width, seen
