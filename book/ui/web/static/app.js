// fuseki book explorer: the page's entry module (index.html loads it; no build step, no libraries).
// It creates the one state object (state.js), wires the controls to the modules that do the work,
// and restores the view the address holds.  Each module does one thing:
//   dom.js (element lookup, the message box), api.js (the JSON API, one action at a time),
//   board.js (the board as SVG), ai.js (KataGo's columns, marks and line), tables.js (the
//   next-move and corner tables), years.js (the years chart), search.js (the search board's moves),
//   filters.js, pattern.js (pattern search), within.js (search within results), games.js (the games
//   list), replay.js (the replayed game), address.js (the view in the address), player.js (the
//   player page), practice.js, keyboard.js, tabs.js.
// The state is exported for the browser tests only (they import this module to read it).

import {copyLink, restoreView, saveView} from "./address.js";
import {setupPvDismiss} from "./ai.js";
import {api, serial} from "./api.js";
import {drawBoard} from "./board.js";
import {$, showMessage} from "./dom.js";
import {applyFilters, clearFilters} from "./filters.js";
import {gamesPage} from "./games.js";
import {drawRegion, pickMove, pickRelease, pickStart, searchOn, searchPattern} from "./pattern.js";
import {setupPlayerPage} from "./player.js";
import {showGameMove} from "./replay.js";
import {back, forward, playSearch, reset} from "./search.js";
import {yearSpan} from "./tables.js";
import {setupTabs} from "./tabs.js";
import {startKeyboard} from "./keyboard.js";
import {startPracticeControls} from "./practice.js";
import {createState} from "./state.js";
import {backWithin, pushWithin} from "./within.js";
import {counted} from "./format.js";

export async function start(state) {
  $("back").addEventListener("click", serial(() => back(state)));
  $("forward").addEventListener("click", serial(() => forward(state)));
  $("reset").addEventListener("click", serial(() => reset(state)));
  $("pass").addEventListener("click", serial(() => playSearch(state, "")));
  $("size").addEventListener("change", serial(() => {
    state.size = Number($("size").value);
    return reset(state);
  }));
  const filter = serial(() => applyFilters(state));
  $("filters").addEventListener("submit", (event) => {
    event.preventDefault();
    filter();
  });
  $("clear-filters").addEventListener("click", serial(() => clearFilters(state)));
  $("games-prev").addEventListener("click", serial(() => gamesPage(state, -1)));
  $("games-next").addEventListener("click", serial(() => gamesPage(state, 1)));
  $("pattern-mode").addEventListener("click", () => {
    state.picking = !state.picking;
    state.markMode = null;
    if (state.picking) {
      state.region = [];
      state.wild = new Map();
    }
    drawRegion(state);
  });
  for (const button of document.querySelectorAll(".pattern-mark")) {
    button.addEventListener("click", () => {
      state.markMode = state.markMode === button.dataset.kind ? null : button.dataset.kind;
      drawRegion(state);
    });
  }
  $("search-board").addEventListener("pointerdown", (event) => pickStart(state, event));
  $("search-board").addEventListener("pointermove", (event) => pickMove(state, event));
  document.addEventListener("pointerup", (event) => pickRelease(state, event));
  document.addEventListener("pointercancel", (event) => pickRelease(state, event));
  $("pattern-search").addEventListener("click", serial(() => searchPattern(state)));
  $("pattern-on").addEventListener("click", serial(() => searchOn(state)));
  $("within-push").addEventListener("click", serial(() => pushWithin(state)));
  $("within-back").addEventListener("click", serial(() => backWithin(state)));
  $("first").addEventListener("click", serial(() => showGameMove(state, 0)));
  $("prev").addEventListener("click", serial(() => showGameMove(state, state.gameMove - 1)));
  $("next").addEventListener("click", serial(() => showGameMove(state, state.gameMove + 1)));
  $("last").addEventListener("click", serial(() => showGameMove(state, Infinity)));
  $("move-numbers").addEventListener("change", serial(() => {
    state.numbers = $("move-numbers").checked;
    if (!state.game) return saveView(state);
    return showGameMove(state, state.gameMove);
  }));
  const step = serial((delta) => showGameMove(state, state.gameMove + delta));
  document.addEventListener("keydown", (event) => {
    if (event.target.tagName === "INPUT" || event.target.tagName === "SELECT") return;
    if (event.key === "ArrowLeft") step(-1);
    if (event.key === "ArrowRight") step(1);
  });
  // the first paint: both boards empty at once, before the API's first answer (no clicks yet)
  const addressSize = Number(new URLSearchParams(location.hash.slice(1)).get("size"));
  drawBoard($("search-board"), addressSize >= 2 && addressSize <= 25 ? addressSize : state.size, null, {}, null);
  drawBoard($("replay-board"), state.size, null, {}, null);
  $("copy-link").addEventListener("click", copyLink);
  setupPlayerPage(state);
  window.addEventListener("popstate", serial(() => restoreView(state, true)));
  const shown = localStorage.getItem("fuseki-ai") !== "hidden";  // the "AI" checkbox, remembered
  $("ai-show").checked = shown;
  document.body.classList.toggle("ai-hidden", !shown);
  $("ai-show").addEventListener("change", () => {
    localStorage.setItem("fuseki-ai", $("ai-show").checked ? "shown" : "hidden");
    document.body.classList.toggle("ai-hidden", !$("ai-show").checked);
  });
  try {
    const info = await api("/api/info");
    state.size = info.default_size;
    const sizes = Object.keys(info.sizes);
    if (sizes.length > 1) {
      for (const size of sizes) {
        const option = new Option(`${size}×${size} (${counted(info.sizes[size], "game")})`, size);
        option.selected = Number(size) === state.size;
        $("size").appendChild(option);
      }
      $("size-label").hidden = false;
    }
    state.ai = info.ai;
    state.maxDownload = info.max_download ?? null;
    document.body.classList.toggle("ai-on", Boolean(info.ai));
    const years = info.years ? ` · ${yearSpan(info.years[0], info.years[1])}` : "";
    const kind = info.note ? " · next-move statistics only, no game records" : "";
    state.statisticsOnly = Boolean(info.note);
    if (info.note) {  // no games to search within (the API would answer 409)
      $("within-push").disabled = true;
      $("within-push").title = info.note;
      // nor to list or replay: their tabs go (they showed an empty list), the header says why
      for (const id of ["tab-games", "tab-replay"]) $(id).hidden = true;
      $("tabs").title = info.note;
    }
    $("book-info").textContent = `${counted(info.games, "game")} · ${counted(info.positions, "position")}${years}${kind}`;
    $("book-info").title = $("book-info").textContent;  // whole where a phone's header cuts it
  } catch (error) {
    showMessage(error.message);
  }
  drawBoard($("replay-board"), state.size, null, {}, null);
  await serial(() => restoreView(state, false))();
}

export const state = createState();
// The order of the classic scripts this replaces: the explorer's listeners first (its popstate
// restores the view), then the practice's (its popstate closes or resumes a practice), the tabs,
// the keyboard.  A module runs after the document is parsed, as the deferred scripts did.
const started = start(state);
startPracticeControls(state);
setupTabs();
startKeyboard(state);
setupPvDismiss();
// the browser tests wait on this: the first view restored (its answers drawn), or its error shown
export const ready = started.catch((error) => showMessage(error.message));
