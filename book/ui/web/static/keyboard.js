// The page without a pointer: the boards and the tables answer the keyboard.
//
// - Search board: Tab reaches it; the arrow keys move a cursor over the points (a square on
//   the board, its point and content said by a live status line for screen readers); Enter or
//   Space does what a click there does: plays the move, or, in pattern mode, picks a corner of
//   the region (then the opposite one) or marks a point.
// - Replay board: ← and → step through the game (as they do anywhere on the page, app.js),
//   Home and End go to its first and last move.
// - Tables (next moves, corners, games, and any table marked `.keys`): every row is a tab stop;
//   ↑ and ↓ move between rows, Enter or Space opens the row as a click does.  When the click
//   redraws the table, the focus comes back to its first row, so a player can walk a line of
//   play with Enter alone.
//
// It drives the page through what a pointer uses (the board's click targets, the row's click,
// the replay buttons) and app.js's own functions for the region, so each key does exactly
// what the click does.

import {SGF_LETTERS, xyOf} from "./board.js";
import {$} from "./dom.js";
import {pickEnd, setRegion} from "./pattern.js";

export function cursorStatus(state, svg) {
  const sgf = state.keyboard.cursor;
  const target = sgf && svg.querySelector(`.targets rect[data-sgf="${sgf}"]`);
  if (!target) return "";
  const stone = svg.querySelector(`circle.stone[data-sgf="${sgf}"]`);
  const mark = svg.querySelector(`.marks text[data-sgf="${sgf}"]`);
  const content = stone ? (stone.classList.contains("black") ? "black stone" : "white stone")
    : mark ? `next move ${mark.textContent}` : "empty";
  return `${target.dataset.vertex}: ${content}`;
}

// The cursor is a class on the point's click target: a redraw replaces the targets, so the
// class is put back after each one (the MutationObserver below).
export function showCursor(state, svg) {
  for (const old of svg.querySelectorAll(".targets rect.cursor")) old.classList.remove("cursor");
  const size = Number(svg.dataset.size) || 19;
  if (!state.keyboard.cursor || xyOf(state.keyboard.cursor).some((v) => v < 0 || v >= size)) {
    const middle = SGF_LETTERS[Math.floor(size / 2)];
    state.keyboard.cursor = middle + middle;
  }
  const target = svg.querySelector(`.targets rect[data-sgf="${state.keyboard.cursor}"]`);
  const shown = document.activeElement === svg && state.keyboard.keyed;
  if (target && shown) target.classList.add("cursor");
  $("board-cursor").textContent = shown ? cursorStatus(state, svg) : "";
}

export function searchBoardKey(state, event) {
  const svg = event.currentTarget;
  const size = Number(svg.dataset.size) || 19;
  const steps = {ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1]};
  if (event.key in steps || event.key === "Enter" || event.key === " ") state.keyboard.keyed = true;
  if (event.key in steps) {
    event.preventDefault();
    event.stopPropagation();  // app.js steps the replayed game on the page's other arrow keys
    const [x, y] = xyOf(state.keyboard.cursor || "aa");
    const [dx, dy] = steps[event.key];
    const nx = Math.min(size - 1, Math.max(0, x + dx));
    const ny = Math.min(size - 1, Math.max(0, y + dy));
    state.keyboard.cursor = SGF_LETTERS[nx] + SGF_LETTERS[ny];
    showCursor(state, svg);
  } else if (event.key === "Enter" || event.key === " ") {
    event.preventDefault();
    const sgf = state.keyboard.cursor;
    if (!sgf) return;
    if (state.picking) {  // the region's corners, as two clicks pick them
      if (state.region.length === 1 && sgf !== state.region[0]) pickEnd(state, sgf);
      else setRegion(state, [sgf]);
      return;
    }
    const target = svg.querySelector(`.targets rect[data-sgf="${sgf}"]`);
    if (target) target.dispatchEvent(new MouseEvent("click", {bubbles: true}));
  }
}

export function replayBoardKey(event) {
  const buttons = {ArrowLeft: "prev", ArrowRight: "next", Home: "first", End: "last"};
  const id = buttons[event.key];
  if (!id) return;
  event.preventDefault();
  event.stopPropagation();  // one step: app.js's page-wide arrow keys would take another
  $(id).click();
}

export function rowsOf(table) {
  return [...table.querySelectorAll("tbody tr")];
}

// The rows the arrows walk: those shown (not the rarer moves the table hides).  A table in a tab
// not chosen shows none, so tab stops are given to every row (rowsOf), not to these: a hidden row
// takes no focus, and one drawn while its tab was hidden must be a stop once the tab is chosen.
export function shownRows(table) {
  return rowsOf(table).filter((row) => row.getClientRects().length);
}

export function tableKey(state, event) {
  const row = event.target.closest("tr");
  const table = event.currentTarget;
  if (!row || !row.parentElement || row.parentElement.tagName !== "TBODY") return;
  const rows = shownRows(table);
  const at = rows.indexOf(row);
  if (event.key === "ArrowDown" || event.key === "ArrowUp") {
    event.preventDefault();
    const next = rows[at + (event.key === "ArrowDown" ? 1 : -1)];
    if (next) next.focus();
  } else if ((event.key === "Enter" || event.key === " ") && event.target === row) {
    event.preventDefault();
    state.keyboard.refocus = table;
    row.click();
  }
}

// New rows become tab stops; after a row's Enter redrew its table, its first row takes the focus.
export function watchTable(state, table) {
  table.addEventListener("keydown", (event) => tableKey(state, event));
  const rowsChanged = () => {
    for (const row of rowsOf(table)) {
      if (!row.hasAttribute("tabindex")) row.tabIndex = 0;
    }
    if (state.keyboard.refocus === table && !table.contains(document.activeElement)) {
      const first = shownRows(table)[0];
      if (first) {
        state.keyboard.refocus = null;
        first.focus();
      }
    }
  };
  new MutationObserver(rowsChanged).observe(table.tBodies[0] || table, {childList: true, subtree: true});
  rowsChanged();
}

export function startKeyboard(state) {
  const search = $("search-board");
  search.tabIndex = 0;
  search.setAttribute("aria-describedby", "board-keys");
  search.addEventListener("keydown", (event) => searchBoardKey(state, event));
  search.addEventListener("pointerdown", () => {  // a click: the cursor goes until a key is pressed
    state.keyboard.keyed = false;
    showCursor(state, search);
  });
  search.addEventListener("focus", () => {  // Tab, or a script after a key: :focus-visible; a click: not
    state.keyboard.keyed = search.matches(":focus-visible");
    showCursor(state, search);
  });
  search.addEventListener("blur", () => showCursor(state, search));
  new MutationObserver(() => {
    if (!search.querySelector(".targets rect.cursor")) showCursor(state, search);
  }).observe(search, {childList: true});
  const replay = $("replay-board");
  replay.tabIndex = 0;
  replay.addEventListener("keydown", replayBoardKey);
  for (const table of document.querySelectorAll("#next-table, #corner-table, #games-table, table.keys")) {
    watchTable(state, table);
  }
}
