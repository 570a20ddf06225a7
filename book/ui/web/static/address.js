// The address: the whole view in the fragment (restoreView reads it, saveView writes it), and the
// "copy link" button.

import {movesText, query} from "./api.js";
import {$} from "./dom.js";
import {FILTER_FIELDS, filterError} from "./filters.js";
import {PATTERN_OPTIONS, WILDCARDS, insideRegion, searchPattern} from "./pattern.js";
import {hidePlayer, playerParams, showPlayer} from "./player.js";
import {practiceParams} from "./practice.js";
import {openGame, showGameMove} from "./replay.js";
import {refreshSearch, sgfOf} from "./search.js";
import {refreshWithin} from "./within.js";

// The address's fragment holds the whole view, each part under the name of the API parameter that
// answers it (docs/exploring.md): size, moves, the filters of FILTER_FIELDS, within (/api/position, /api/games);
// region, its wildcards and options once a pattern is searched (/api/pattern); game, at, move
// and sym (/api/game/<id>) for the replayed game. A new search position is a new history
// entry, so the browser's back and forward buttons walk the moves; other changes replace the entry.

export function viewParams(state) {
  const params = new URLSearchParams(query(state));
  if (state.pattern) {  // the pattern searched, not one being picked
    for (const [key, value] of Object.entries(state.patternView)) if (value) params.set(key, value);
  }
  const game = state.game;
  if (game) for (const [key, value] of [["game", game.id], ["at", game.at], ["move", state.gameMove], ["sym", game.symmetry]]) {
    params.set(key, value);
  }
  if (state.rare) params.set("rare", "1");
  if (state.numbers) params.set("numbers", "1");
  playerParams(state, params);  // name, vs, page: the player page (player.js)
  const practising = practiceParams(state);  // practice.js, loaded next
  for (const [key, value] of Object.entries(practising)) params.set(key, value);
  return params;
}

export function saveView(state) {
  const params = viewParams(state);
  const address = `#${params}`;
  if (address === location.hash) return;
  // The browser moved to another entry (back or forward) while this view's answers came in: that
  // entry is not this view's to overwrite, and its popstate, queued behind, restores it.
  if (state.savedHash !== null && location.hash !== state.savedHash) return;
  // A new search position is a new entry, and so is a practice started, closed or switched: Back
  // then leaves the practice for the view it was started from, without taking back a move.
  const shown = new URLSearchParams(location.hash.slice(1));
  const newEntry = (shown.get("moves") || "") !== movesText(state) ||
    (shown.get("practice") || "") !== (params.get("practice") || "");
  if (!state.restoring && newEntry) history.pushState(null, "", address);
  else history.replaceState(null, "", address);
  state.savedHash = location.hash;
  if (!$("link-text").hidden) $("link-text").value = location.href;
  $("link-status").textContent = "";
}

// The moves taken back that "forward" replays, after the browser went from `old` to `moves`.
export function redoAfter(state, old, moves) {
  const starts = (long, short) => short.length <= long.length && short.every((m, i) => m === long[i]);
  if (starts(old, moves)) return [...state.redo, ...old.slice(moves.length).reverse()];
  const played = moves.slice(old.length);
  const redo = state.redo.slice(0, state.redo.length - played.length);
  return starts(moves, old) && state.redo.slice(redo.length).reverse().every((m, i) => m === played[i]) ? redo : [];
}

// Shows the view the address holds (on load, and when the browser's back or forward changes it).
export async function restoreView(state, fromHistory) {
  state.savedHash = location.hash;  // the entry the browser shows is the one this view now writes
  const params = new URLSearchParams(location.hash.slice(1));
  const number = (key) => (/^\d+$/.test(params.get(key) || "") ? Number(params.get(key)) : null);
  const size = number("size");
  if (size && size !== state.size && $("size").querySelector(`option[value="${size}"]`)) {
    state.size = size;
    $("size").value = String(size);
  }
  const old = state.moves;
  const moves = params.get("moves") ? params.get("moves").split(",").map((m) => (m === "pass" ? "" : m)) : [];
  state.moves = moves;
  state.redo = fromHistory ? redoAfter(state, old, moves) : [];
  state.within = params.getAll("within").filter(Boolean);
  await refreshWithin(state);
  state.filters = {};
  for (const [key, id] of FILTER_FIELDS) {
    $(id).value = params.get(key) || "";
    if ($(id).value) state.filters[key] = $(id).value;
  }
  state.rare = params.get("rare") === "1";
  document.body.classList.toggle("rare-shown", state.rare);
  state.numbers = params.get("numbers") === "1";
  $("move-numbers").checked = state.numbers;
  const page = number("page");
  state.player = params.get("name") ? {name: params.get("name"), vs: params.get("vs") || "", page: page || 1} : null;
  // the header filters' fold opens when the address sets one of them
  if (FILTER_FIELDS.slice(3).some(([key]) => state.filters[key])) $("more-filters").open = true;
  state.restoring = true;
  try {
    if (!(await refreshSearch(state))) {  // an address the API refuses: without the filter it names, else the empty board
      const refused = $("message").textContent;
      if (FILTER_FIELDS.some(([key]) => refused.startsWith(`${key} `))) {
        state.filters = {};
        filterError(refused);
        if (await refreshSearch(state)) return;
      }
      state.moves = [];
      state.redo = [];
      if (moves.length) await refreshSearch(state);
      return;
    }
    const corners = (params.get("region") || "").split(":").map((vertex) => sgfOf(state, vertex));
    if (corners.length === 2 && corners.every(Boolean)) {
      state.region = corners;
      state.wild = new Map();
      for (const kind of Object.keys(WILDCARDS)) {
        for (const sgf of (params.get(kind) || "").split(",").filter(Boolean).map((vertex) => sgfOf(state, vertex))) {
          if (sgf && insideRegion(state, sgf)) state.wild.set(sgf, kind);
        }
      }
      $("pattern-swap").checked = params.get("swap") === "1";
      for (const [key, id] of Object.entries(PATTERN_OPTIONS)) $(id).value = params.get(key) || "";
      await searchPattern(state);
    }
    if (state.player) await showPlayer(state);
    else hidePlayer();
    const game = number("game");
    if (game === null) return;
    if (state.game && state.game.id === game) await showGameMove(state, number("move") ?? state.game.at);
    else await openGame(state, game, number("at") ?? 0, {move: number("move"), sym: number("sym")});
  } finally {
    state.restoring = false;
  }
}

// The address to the clipboard where the browser allows it (a secure page: localhost, https),
// else in a selected field to copy by hand.
export async function copyLink() {
  const field = $("link-text");
  try {
    await navigator.clipboard.writeText(location.href);
    field.hidden = true;
    $("link-status").textContent = "link copied";
  } catch (error) {
    field.value = location.href;
    field.hidden = false;
    field.select();
    $("link-status").textContent = "copy the selected link (Ctrl+C)";
  }
}
