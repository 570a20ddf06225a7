// Pattern search: the region picked on the board (drag or two clicks), its wildcard points,
// Kombilo's options, and the pattern's continuations in the next-move table.

import {saveView} from "./address.js";
import {api, query, serial} from "./api.js";
import {drawBoard, el, xyOf} from "./board.js";
import {$, showMessage} from "./dom.js";
import {refreshGames} from "./games.js";
import {boardClick, vertexOf} from "./search.js";
import {renderNextMoves, rowMarks} from "./tables.js";
import {filtersNamed} from "./filters.js";
import {count, counted} from "./format.js";

const SHORT_LETTERS = "abcdefghijkl";  // textboard.SHORT_LETTERS: the table's letters

// A whole-board pattern's continuations, asked again until KataGo's values come.
export function pollPattern(state, path) {
  clearTimeout(state.aiPoll);
  state.aiPoll = setTimeout(async () => {
    const current = () => state.pattern && path === `/api/pattern?${patternQuery(state)}`;
    if (!current()) return;
    let result;
    try {
      result = await api(path);
    } catch (error) {
      return pollPattern(state, path);
    }
    if (!current()) return;
    if (result.ai.status === "pending") return pollPattern(state, path);
    state.pattern = result;
    renderPattern(state, result);
  }, 1000);
}

export function insideRegion(state, sgf) {
  if (state.region.length !== 2) return false;
  const [[ax, ay], [bx, by], [x, y]] = [xyOf(state.region[0]), xyOf(state.region[1]), xyOf(sgf)];
  return Math.min(ax, bx) <= x && x <= Math.max(ax, bx) && Math.min(ay, by) <= y && y <= Math.max(ay, by);
}

// A point is in one wildcard list at most: marking it in another mode moves it there.
export function toggleMark(state, sgf) {
  if (!insideRegion(state, sgf)) return;
  if (state.wild.get(sgf) === state.markMode) state.wild.delete(sgf);
  else state.wild.set(sgf, state.markMode);
  drawRegion(state);
}

// The region is picked with the pointer, mouse or touch alike: press on one corner, drag to the
// opposite one and let go; or click one corner, then the other.  The point under the pointer is
// read from the board's click targets, which lie over everything else.
export function pointAt(event) {
  const node = document.elementFromPoint(event.clientX, event.clientY);
  return node && node.closest("#search-board .targets") ? node.dataset.sgf : null;
}

export function clearRegion(state) {
  state.region = [];
  state.wild = new Map();
  state.picking = false;
  state.markMode = null;
}

export function setRegion(state, corners) {
  state.region = corners;
  state.wild = new Map([...state.wild].filter(([sgf]) => insideRegion(state, sgf)));
  drawRegion(state);
}

export function pickStart(state, event) {
  state.swallowClick = false;
  if (!state.picking) return;
  const sgf = pointAt(event);
  if (!sgf) return;
  event.preventDefault();
  state.swallowClick = true;
  if (state.region.length === 1) {  // the second of two clicks (the first corner again: still waiting)
    if (sgf !== state.region[0]) pickEnd(state, sgf);
    return;
  }
  state.dragFrom = sgf;
  setRegion(state, [sgf]);
}

export function pickMove(state, event) {
  if (!state.dragFrom) return;
  const sgf = pointAt(event);
  const shown = state.region[state.region.length - 1];
  if (sgf && sgf !== shown) setRegion(state, sgf === state.dragFrom ? [sgf] : [state.dragFrom, sgf]);
}

export function pickRelease(state, event) {
  if (!state.dragFrom) return;
  const from = state.dragFrom;
  state.dragFrom = null;
  const sgf = pointAt(event) || state.region[state.region.length - 1];
  if (sgf === from) setRegion(state, [from]);  // a click: the other corner comes next
  else pickEnd(state, sgf);
}

export function pickEnd(state, sgf) {
  state.picking = false;
  setRegion(state, [state.region[0], sgf]);
}

export function drawRegion(state) {
  const svg = $("search-board");
  svg.querySelectorAll(".region, .any, .empty-or-black, .empty-or-white").forEach((node) => node.remove());
  svg.classList.toggle("picking", state.picking);
  $("pattern-mode").classList.toggle("active", state.picking);
  for (const button of document.querySelectorAll(".pattern-mark")) {
    button.classList.toggle("active", state.markMode === button.dataset.kind);
    button.disabled = state.region.length !== 2;
  }
  $("pattern-search").disabled = state.region.length !== 2;
  const lists = Object.entries(WILDCARDS).map(([kind, [word]]) => [word, wildList(state, kind)]).filter(([, list]) => list);
  $("pattern-region").textContent = state.region.length
    ? `region ${state.region.map((sgf) => vertexOf(state, sgf)).join(":")}${state.region.length === 1 ? ":…" : ""}` +
      lists.map(([word, list]) => ` · ${word} ${list.split(",").join(", ")}`).join("") : "";
  if (!state.region.length) return;
  const [[ax, ay], [bx, by]] = [xyOf(state.region[0]), xyOf(state.region[state.region.length - 1])];
  const unit = 10;
  const targets = svg.querySelector(".targets");
  const rect = el("rect", {x: (Math.min(ax, bx) - 0.5) * unit, y: (Math.min(ay, by) - 0.5) * unit,
                           width: (Math.abs(ax - bx) + 1) * unit, height: (Math.abs(ay - by) + 1) * unit,
                           class: "region"}, svg);
  for (const [sgf, kind] of state.wild) {
    const [x, y] = xyOf(sgf);
    el("text", {x: x * unit, y: y * unit, class: WILDCARDS[kind][1], "data-sgf": sgf}, svg).textContent = WILDCARDS[kind][2];
  }
  if (targets) svg.appendChild(targets);  // clicks still reach the points under the rectangle
  return rect;
}

// The wildcards, as /api/pattern names them: [the words in the region line, the mark's class, its letter].
export const WILDCARDS = {any: ["any", "any", "?"], empty_or_black: ["empty or black", "empty-or-black", "x"],
                   empty_or_white: ["empty or white", "empty-or-white", "o"]};

// Kombilo's options beside the wildcards: the /api/pattern parameter and the control that sets it.
export const PATTERN_OPTIONS = {to_move: "pattern-to-move", moves_from: "pattern-from", moves_to: "pattern-to"};

export const PATTERN_KEYS = ["region", ...Object.keys(WILDCARDS), "swap", ...Object.keys(PATTERN_OPTIONS)];

export function wildList(state, kind) {
  return [...state.wild].filter(([, k]) => k === kind).map(([sgf]) => vertexOf(state, sgf)).sort().join(",");
}

export function patternQuery(state, extra) {
  const asked = {region: state.region.map((sgf) => vertexOf(state, sgf)).join(":"), swap: $("pattern-swap").checked ? "1" : ""};
  for (const kind of Object.keys(WILDCARDS)) asked[kind] = wildList(state, kind);
  for (const [key, id] of Object.entries(PATTERN_OPTIONS)) asked[key] = $(id).value.trim();
  return query(state, Object.fromEntries(Object.entries({...asked, ...(extra || {})}).filter(([, value]) => value !== "")));
}

export async function searchPattern(state) {
  if (state.region.length !== 2) return;
  let result;
  try {
    result = await api(`/api/pattern?${patternQuery(state)}`);
  } catch (error) {
    showMessage(error.message);
    return;
  }
  showMessage("");
  state.pattern = result;
  const asked = new URLSearchParams(patternQuery(state));
  state.patternView = Object.fromEntries(PATTERN_KEYS.map((key) => [key, asked.get(key)]));
  await showPattern(state, result);
  // a search cut short by the server's budget is polled for KataGo's values once it is whole
  if (result.ai && result.ai.status === "pending" && result.scan.next === null) {
    pollPattern(state, `/api/pattern?${patternQuery(state)}`);
  }
  saveView(state);
}

async function showPattern(state, result) {
  const [marks, rare] = rowMarks(result.next, result.total, result.ai && result.ai.mark_visits);
  drawBoard($("search-board"), state.size, state.position, marks, serial((sgf) => boardClick(state, sgf)), rare);
  drawRegion(state);
  renderPattern(state, result);
  state.gamesAfter = [null];
  await refreshGames(state);
}

// "search on": the games after where the last answer stopped (from=), their counts added to the
// answer's (the parts tile the games in ascending id: their sums are the one scan's).
export async function searchOn(state) {
  const last = state.pattern;
  if (!last || !last.scan || last.scan.next === null) return;
  let part;
  try {
    part = await api(`/api/pattern?${patternQuery(state, {from: last.scan.next})}`);
  } catch (error) {
    showMessage(error.message);
    return;
  }
  showMessage("");
  if (state.pattern !== last) return;  // another search came first
  state.pattern = mergedParts(last, part);
  await showPattern(state, state.pattern);
}

// Two consecutive parts of one pattern search as one answer: each row's (a point's orbit and the
// colour of the player who played it) counts added, sorted and lettered as the server does
// (search._counted: most games first, then the point, Black first; textboard.row_letters: a
// point's two rows share a letter).  KataGo's values: the earlier part's.
export function mergedParts(a, b) {
  const rows = new Map();
  for (const row of [...a.next, ...b.next]) {
    const key = `${row.colour}${row.sgf}`;
    const had = rows.get(key);
    if (!had) {
      rows.set(key, {...row});
      continue;
    }
    for (const name of ["games", "at_once", "after_tenuki", "wins"]) had[name] += row[name];
  }
  const order = (row) => row.sgf[1] + row.sgf[0];  // the point's index: row, then column
  const next = [...rows.values()].sort((x, y) => y.games - x.games || (order(x) < order(y) ? -1 : order(x) > order(y) ? 1 : 0) ||
                                                 (x.colour < y.colour ? -1 : x.colour > y.colour ? 1 : 0));
  const letters = new Map();
  for (const row of next) {
    row.winrate = row.games ? row.wins / row.games : 0;
    if (!letters.has(row.sgf)) letters.set(row.sgf, letters.size < SHORT_LETTERS.length ? SHORT_LETTERS[letters.size] : null);
    row.letter = letters.get(row.sgf);
  }
  const tenuki = Object.fromEntries(Object.keys(a.tenuki).map((name) => [name, a.tenuki[name] + b.tenuki[name]]));
  return {...a, total: a.total + b.total, next, tenuki,
          scan: {...b.scan, before: a.scan.before, scanned: a.scan.scanned + b.scan.scanned}};
}

// The pattern's continuations in the next-move table: each point and colour of the player who
// played it (Black and White rows share a letter), its games at once and after tenuki (the first
// later move inside the region, as Kombilo counts); with fuseki serve --ai a whole-board
// pattern's carry KataGo's values, a smaller one's a line saying they are whole-board only.
export function renderPattern(state, result) {
  $("years-chart").hidden = true;  // the chart is the position's, not the pattern's
  renderNextMoves(state, {total: result.total, next: result.next.map((row) => ({...row, winrate: row.winrate})), ai: result.ai});
  const scan = result.scan;
  const cut = scan && scan.next !== null;  // the server's budget stopped the scan: how far it got
  const far = cut ? ` in the first ${count(scan.before + scan.scanned)} of ${count(scan.games)} games ` +
                    `(${scan.percent.toFixed(1)}% scanned; the server's time for one answer ran out)` : "";
  $("next-summary").textContent = result.total
    ? `${counted(result.total, "game")} reached the ${result.kind} pattern (${result.options})${far} · ` +
      `tenuki ${count(result.tenuki.games)} (never played inside the region again) · ` +
      "win rates for the player who played the move" + filtersNamed(state)
    : `No game reached the ${result.kind} pattern (${result.options})${far}.`;
  $("pattern-on").hidden = !cut;
}

// The games list's (and its download's) part of a search cut short: the games scanned, below the
// id where it stopped.
export function scannedPart(state) {
  const scan = state.pattern && state.pattern.scan;
  return scan && scan.next !== null ? {until: scan.next} : {};
}
