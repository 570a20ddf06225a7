// fuseki book explorer: the page's only script (no build step, no libraries).
//
// The server is stateless: this script keeps the search moves (SGF letters), the
// filters, the games page and the replayed game, and asks the JSON API for
// everything the rules or the book decide (legality, captures, next moves).
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const GTP_COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ";
const SGF_LETTERS = "abcdefghijklmnopqrstuvwxyz";

const state = {
  size: 19,
  moves: [],        // search moves, SGF points ("" is a pass)
  redo: [],         // moves taken back, for "forward"
  filters: {},      // FILTER_FIELDS' API names -> their text
  within: [],       // earlier searches whose games this view searches within: each its API query string
  // Games go by keyset: page n is asked with after = the last game id of page n - 1. The
  // stack holds that id for every page shown so far (null for the first), so "previous"
  // goes back without counting rows and "next" uses the answer's own `after`.
  gamesAfter: [null],
  gamesNext: null,
  game: null,       // {id, info, moves, symmetry, at}
  gameMove: 0,
  picking: false,   // a drag (or two clicks) on the search board picks the pattern's region
  dragFrom: null,   // the corner a drag on the search board started from
  swallowClick: false,  // the click that ends a press used for picking plays no move
  region: [],       // the pattern's two opposite corners (SGF points)
  markMode: null,   // clicks inside the region mark and unmark points of this kind (a WILDCARDS key)
  wild: new Map(),  // the region's wildcard points: SGF point -> its WILDCARDS key
  pattern: null,    // the last pattern search's answer: the games column lists its games
  patternView: null,  // its region, wildcards and options, as the API was asked them (for the address)
  ai: null,         // KataGo's settings (/api/info; asks: --ai, KataGo asked for what is not stored)
  maxDownload: null,  // the most games one SGF download holds (/api/info's max_download)
  shownMoves: null,   // the moves of the position on the search board, as in the address
  restoring: false,   // the view is being restored from the address: it is not a new history entry
  savedHash: null,    // the address this page last wrote or restored: it never writes over another
  aiPoll: null,     // the timer of the poll for a position KataGo is working on
  player: null,     // the player page shown in place of search and games: {name, vs, page} (player.js)
  rare: false,      // the rarer moves shown too (RARE_SHARE, FEW_GAMES; the address's rare=1)
  numbers: false,   // move numbers on the replay board's stones (the address's numbers=1)
};

const $ = (id) => document.getElementById(id);

// User actions run one after another: a click while an answer is on its way waits
// for it, so quick clicks never see a stale position or lose a move.
let pending = Promise.resolve();
function serial(action) {
  return (...args) => {
    pending = pending.then(() => action(...args)).catch((error) => showMessage(error.message));
    return pending;
  };
}

// --- the API -------------------------------------------------------------------------

function movesText() {
  return state.moves.map((m) => m || "pass").join(",");
}

function query(extra) {
  const params = new URLSearchParams();
  params.set("size", state.size);
  if (state.moves.length) params.set("moves", movesText());
  for (const [key, value] of Object.entries(state.filters)) if (value) params.set(key, value);
  for (const stage of state.within) params.append("within", stage);
  for (const [key, value] of Object.entries(extra || {})) params.set(key, value);
  return params.toString();
}

async function api(path) {
  for (let tries = 1; ; tries++) {
    const response = await fetch(path);
    const body = await response.json().catch(() => ({error: `HTTP ${response.status}`}));
    // "server busy": another request's pattern scans run (one at a time on the server); ask again
    // after its Retry-After, a few times, before the message is shown
    if (response.status === 503 && body.busy && tries < 4) {
      await new Promise((done) => setTimeout(done, 1000 * (Number(response.headers.get("Retry-After")) || 1)));
      continue;
    }
    if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
    return body;
  }
}

function showMessage(text) {
  const box = $("message");
  box.textContent = text;
  box.hidden = !text;
  clearTimeout(showMessage.timer);
  if (text) showMessage.timer = setTimeout(() => { box.hidden = true; }, 6000);
}

// --- the board as SVG ------------------------------------------------------------------

function el(name, attrs, parent) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  if (parent) parent.appendChild(node);
  return node;
}

// The hoshi as GTP showboard draws them (fuseki.engine.core.base.star_points; the browser
// test compares the two for every size): the corners from 7x7, the centre on odd sizes from
// 9x9 (7x7 has the four corner points only), all nine on odd sizes from 15x15.
function starPoints(size) {
  if (size < 7) return [];
  const edge = size >= 13 ? 3 : 2;
  const far = size - 1 - edge;
  const mid = (size - 1) / 2;
  const points = [[edge, edge], [edge, far], [far, edge], [far, far]];
  if (size % 2 === 1 && size >= 9) points.push([mid, mid]);
  if (size % 2 === 1 && size >= 15) points.push([edge, mid], [far, mid], [mid, edge], [mid, far]);
  return points;
}

function xyOf(sgf) {
  return [SGF_LETTERS.indexOf(sgf[0]), SGF_LETTERS.indexOf(sgf[1])];
}

// Draws the board into `svg`: position {stones: {B: [...], W: [...]}, last}, marks
// {sgf: letter} (those of `rare`, a Set, drawn as the rarer moves' letters: hidden until shown),
// and calls onClick(sgf) when an intersection is clicked.
function drawBoard(svg, size, position, marks, onClick, rare) {
  const unit = 10;
  const margin = 1.3 * unit;
  const span = (size - 1) * unit;
  svg.replaceChildren();
  svg.setAttribute("viewBox", `${-margin} ${-margin} ${span + 2 * margin} ${span + 2 * margin}`);
  svg.dataset.size = size;
  const defs = el("defs", {}, svg);
  const black = el("radialGradient", {id: `${svg.id}-black`, cx: "35%", cy: "35%", r: "65%"}, defs);
  el("stop", {offset: "0%", "stop-color": "#666"}, black);
  el("stop", {offset: "100%", "stop-color": "#111"}, black);
  const white = el("radialGradient", {id: `${svg.id}-white`, cx: "35%", cy: "35%", r: "70%"}, defs);
  el("stop", {offset: "0%", "stop-color": "#fff"}, white);
  el("stop", {offset: "100%", "stop-color": "#d8d8d0"}, white);

  const wood = el("linearGradient", {id: `${svg.id}-wood`, x1: "0", y1: "0", x2: "1", y2: "1"}, defs);
  el("stop", {offset: "0%", "stop-color": "#e6c172"}, wood);
  el("stop", {offset: "100%", "stop-color": "#d6a94e"}, wood);
  el("rect", {x: -margin, y: -margin, width: span + 2 * margin, height: span + 2 * margin,
              rx: 2, class: "wood", fill: `url(#${svg.id}-wood)`}, svg);
  const lines = el("g", {class: "lines"}, svg);
  for (let i = 0; i < size; i++) {
    el("line", {x1: 0, y1: i * unit, x2: span, y2: i * unit}, lines);
    el("line", {x1: i * unit, y1: 0, x2: i * unit, y2: span}, lines);
  }
  el("rect", {x: 0, y: 0, width: span, height: span, class: "edge"}, lines);
  for (const [x, y] of starPoints(size)) el("circle", {cx: x * unit, cy: y * unit, r: 1.1, class: "star"}, svg);

  const labels = el("g", {class: "coords"}, svg);
  for (let i = 0; i < size; i++) {
    const column = GTP_COLUMNS[i];
    const row = String(size - i);
    for (const y of [-margin / 2 - 0.6, span + margin / 2 + 0.6]) {
      el("text", {x: i * unit, y: y}, labels).textContent = column;
    }
    for (const x of [-margin / 2 - 0.6, span + margin / 2 + 0.6]) {
      el("text", {x: x, y: i * unit}, labels).textContent = row;
    }
  }

  const occupied = new Set();
  const stones = el("g", {class: "stones"}, svg);
  for (const colour of ["B", "W"]) {
    for (const sgf of (position && position.stones[colour]) || []) {
      const [x, y] = xyOf(sgf);
      occupied.add(sgf);
      el("circle", {cx: x * unit + 0.35, cy: y * unit + 0.5, r: unit * 0.47, class: "shadow"}, stones);
      el("circle", {cx: x * unit, cy: y * unit, r: unit * 0.47, fill: `url(#${svg.id}-${colour === "B" ? "black" : "white"})`,
                    class: colour === "B" ? "stone black" : "stone white", "data-sgf": sgf}, stones);
    }
  }
  const numbered = position && position.numbers;  // the replay's move numbers (state.numbers)
  if (numbered) {
    const group = el("g", {class: "move-numbers"}, svg);
    for (const colour of ["B", "W"]) {
      for (const sgf of position.stones[colour]) {
        if (!numbered[sgf]) continue;
        const [x, y] = xyOf(sgf);
        const lastOne = position.last && position.last.sgf === sgf;
        el("text", {x: x * unit, y: y * unit, "data-sgf": sgf,
                    class: `${colour === "B" ? "on-black" : "on-white"}${lastOne ? " last-number" : ""}`,
                    "font-size": numbered[sgf] >= 100 ? 3.6 : 4.6}, group).textContent = String(numbered[sgf]);
      }
    }
  }
  const last = position && position.last;
  if (!numbered && last && last.sgf && occupied.has(last.sgf)) {
    const [x, y] = xyOf(last.sgf);
    el("circle", {cx: x * unit, cy: y * unit, r: unit * 0.22,
                  class: last.color === "B" ? "last on-black" : "last on-white"}, svg);
  }
  const letters = el("g", {class: "marks"}, svg);
  for (const [sgf, letter] of Object.entries(marks || {})) {
    if (occupied.has(sgf)) continue;
    const [x, y] = xyOf(sgf);
    const kind = rare && rare.has(sgf) ? " rare" : "";
    el("circle", {cx: x * unit, cy: y * unit, r: unit * 0.4, class: `mark-bg${kind}`}, letters);
    el("text", {x: x * unit, y: y * unit, "data-sgf": sgf, class: kind.trim()}, letters).textContent = letter;
  }
  if (position && position.ai) drawAiMarks(svg, position, marks, rare);
  if (!onClick) return;
  const targets = el("g", {class: "targets"}, svg);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const sgf = SGF_LETTERS[x] + SGF_LETTERS[y];
      const target = el("rect", {x: (x - 0.5) * unit, y: (y - 0.5) * unit, width: unit, height: unit,
                                 "data-sgf": sgf, "data-vertex": GTP_COLUMNS[x] + (size - y)}, targets);
      target.addEventListener("click", () => onClick(sgf));
    }
  }
}

// KataGo's candidate moves, in their own colour: a ring on the moves people play (the best one
// green), a filled disc with KataGo's rank on the moves nobody played.  A candidate whose row the
// table hides until "show rarer moves" (`rare`, rowMarks' Set; KataGo's own move: shallower than
// a mark needs) hides with it.
function drawAiMarks(svg, position, marks, rare) {
  svg.querySelectorAll(".ai-marks").forEach((node) => node.remove());
  const ai = position.ai;
  if (!ai || ai.status !== "ready") return;
  const unit = 10;
  const occupied = new Set([...position.stones.B, ...position.stones.W]);
  const group = el("g", {class: "ai-marks"});
  ai.moves.forEach((move, rank) => {
    for (const sgf of move.points) {
      if (occupied.has(sgf)) continue;
      const [x, y] = xyOf(sgf);
      const lettered = marks && sgf in marks;
      const shallow = move.mark === "ai" && move.visits < ai.mark_visits;
      const hidden = shallow || (rare && rare.has(sgf)) ? "rare" : "";
      const circle = el("circle", {cx: x * unit, cy: y * unit, r: unit * (lettered ? 0.46 : 0.36), "data-sgf": sgf,
                                   class: [rank === 0 ? "best" : "", lettered ? "" : "own", hidden]
                                     .join(" ").trim()}, group);
      el("title", {}, circle).textContent =
        `KataGo: ${move.vertex} win ${(100 * move.winrate).toFixed(1)}% lead ${move.score_lead.toFixed(1)} loss ${move.loss.toFixed(1)}` +
        (shallow ? ` · ${shallowText(move.visits, ai.mark_visits)}` : "");
      if (!lettered) el("text", {x: x * unit, y: y * unit, "data-sgf": sgf, class: hidden}, group).textContent = String(rank + 1);
    }
  });
  svg.insertBefore(group, svg.querySelector(".targets"));
}

// KataGo's line from a move (its pv, SGF points; null: none): numbered stones, the mover's first.
function drawPv(svg, pv, toMove) {
  svg.querySelectorAll(".ai-pv").forEach((node) => node.remove());
  if (!pv) return;
  const unit = 10;
  const group = el("g", {class: "ai-pv", "data-line": pv.join(",")});
  pv.forEach((sgf, i) => {
    if (!sgf) return;  // a pass
    const [x, y] = xyOf(sgf);
    const black = (i % 2 === 0) === (toMove === "B");
    el("circle", {cx: x * unit, cy: y * unit, r: unit * 0.45, class: black ? "black" : "white"}, group);
    el("text", {x: x * unit, y: y * unit, class: black ? "black" : "white"}, group).textContent = String(i + 1);
  });
  svg.insertBefore(group, svg.querySelector(".targets"));
}

// A position KataGo is working on is asked again until its values come (or the visitor moved on).
function pollAi(path) {
  clearTimeout(state.aiPoll);
  state.aiPoll = setTimeout(async () => {
    if (path !== `/api/position?${query()}` || state.pattern) return;
    let position;
    try {
      position = await api(path);
    } catch (error) {
      return pollAi(path);
    }
    if (path !== `/api/position?${query()}` || state.pattern) return;
    if (position.ai.status === "pending") return pollAi(path);
    state.position = position;
    renderNextMoves(position);
    drawAiMarks($("search-board"), position, state.searchMarks,
                rowMarks(position.next, position.total, position.ai.mark_visits)[1]);
    await refreshCorners();  // the same position's values: the corner rows fill in too
    if (position.ai.asking === "pending") pollAi(path);  // a deeper search or forced moves still coming
  }, 1000);
}

// A whole-board pattern's continuations, asked again until KataGo's values come.
function pollPattern(path) {
  clearTimeout(state.aiPoll);
  state.aiPoll = setTimeout(async () => {
    const current = () => state.pattern && path === `/api/pattern?${patternQuery()}`;
    if (!current()) return;
    let result;
    try {
      result = await api(path);
    } catch (error) {
      return pollPattern(path);
    }
    if (!current()) return;
    if (result.ai.status === "pending") return pollPattern(path);
    state.pattern = result;
    renderPattern(result);
  }, 1000);
}

// --- the search column -------------------------------------------------------------------------

async function refreshSearch() {
  let position;
  try {
    position = await api(`/api/position?${query()}`);
  } catch (error) {
    showMessage(error.message);
    return false;
  }
  state.position = position;
  showMessage("");
  const [marks, rare] = rowMarks(position.next, position.total, position.ai && position.ai.mark_visits);
  state.searchMarks = marks;
  drawBoard($("search-board"), position.size, position, marks, serial(boardClick), rare);
  if (position.ai && (position.ai.status === "pending" || position.ai.asking === "pending")) {
    pollAi(`/api/position?${query()}`);  // the position, a deeper search or forced moves: KataGo works
  }
  state.pattern = null;
  const moves = movesText();
  if (moves !== state.shownMoves) clearRegion();  // a new position: the old region is not its pattern
  state.shownMoves = moves;
  drawRegion();
  const toMove = position.to_move === "B" ? "Black" : "White";
  const last = position.last ? `, last ${position.last.color === "B" ? "Black" : "White"} ${position.last.vertex}` : "";
  $("search-status").textContent =
    `move ${position.move_number}${last} · ${toMove} to play · captures B ${position.captures.B} W ${position.captures.W}`;
  $("back").disabled = state.moves.length === 0;
  $("forward").disabled = state.redo.length === 0;
  renderLine();
  renderNextMoves(position);
  saveView();  // the new position's history entry now, as its move shows: a "back" may follow at once
  await refreshYears();
  const [cornerMarks, cornerRare] = await refreshCorners();
  if (!position.next.length && Object.keys(cornerMarks).length) {  // out of book: the corner book's letters
    state.searchMarks = cornerMarks;
    drawBoard($("search-board"), position.size, position, cornerMarks, serial(boardClick), cornerRare);
    drawRegion();
  }
  state.gamesAfter = [null];
  await refreshGames();
  saveView();
  return true;
}

// The position's games per year (/api/position's by_year=1) under the next-move table: a bar per
// year, the line the share of the book's games of that year; nothing for a book without dates
// (the API's years: null, with years_note saying why) or a position no dated game reached.
async function refreshYears() {
  const chart = $("years-chart");
  const path = `/api/position?${query({by_year: 1})}`;
  let years = null;
  try {
    years = (await api(path)).years;
  } catch (error) {
    years = null;  // no dates in this book: no chart
  }
  if (path !== `/api/position?${query({by_year: 1})}`) return;
  const rows = years ? years.rows.filter((row) => row.year !== null) : [];
  chart.hidden = !rows.length;
  const svg = $("years-svg");
  svg.replaceChildren();
  if (!rows.length) return;
  const width = 200;
  const height = 40;
  const step = width / rows.length;
  const most = Math.max(...rows.map((row) => row.games));
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  const line = [];
  rows.forEach((row, i) => {
    const tall = (height - 2) * row.games / most;
    const bar = el("rect", {x: i * step + step * 0.1, y: height - tall, width: step * 0.8, height: tall,
                            class: "year-bar", "data-year": row.year, "data-games": row.games}, svg);
    el("title", {}, bar).textContent = `${row.year}: ${row.games} game${row.games === 1 ? "" : "s"}, ` +
      `${(100 * row.share).toFixed(1)}% of the book's ${row.book_games}`;
    line.push(`${i * step + step / 2},${(height - 1 - (height - 2) * row.share).toFixed(2)}`);
  });
  el("polyline", {points: line.join(" "), class: "year-share"}, svg);
  $("years-caption").textContent = `games per year, ${yearSpan(rows[0].year, rows[rows.length - 1].year)} ` +
    `(bars: games, up to ${most}; line: share of the year's book games)`;
}

// Rows of fewer games than this draw no win-rate bar: one game's 0% or 100% is no rate. The
// number stays (muted), its tooltip saying how few games it is.
const FEW_GAMES = 3;

// The minimum-games setting: by default the tables hide the rows of fewer than FEW_GAMES games or
// of under RARE_SHARE of the position's games (and their letters on the board); "show N rarer
// moves" under the table shows them, and the address keeps that (rare=1). The API answers every
// row: the page filters, so showing them asks nothing and the answer cache serves both views.
// A move KataGo marks (? or !), or whose own values are deep enough for a mark (`ai`: the row's
// values, of at least `markVisits` visits, the answer's mark_visits), is never hidden.
const RARE_SHARE = 0.01;

function isRare(games, total, ai, markVisits) {
  if (ai && (ai.mark || (markVisits && ai.visits >= markVisits))) return false;
  return games < FEW_GAMES || games < RARE_SHARE * total;
}

// The board letters of a table's rows ({sgf: letter}) and the points of the rarer ones (a Set;
// also those of rows past the letters, for KataGo's marks on them).
function rowMarks(rows, total, markVisits) {
  const marks = {};
  const rare = new Set();
  for (const row of rows) {
    for (const sgf of row.points.length ? row.points : [row.sgf]) {
      if (!sgf || sgf in marks || rare.has(sgf)) continue;
      if (row.letter) marks[sgf] = row.letter;
      if (isRare(row.games, total, row.ai, markVisits)) rare.add(sgf);
    }
  }
  return [marks, rare];
}

// The footer of a move table: the button that shows (or hides again) its `count` rarer rows.
function rareFooter(table, count) {
  let foot = table.tFoot;
  if (!count) {
    if (foot) foot.remove();
    return;
  }
  if (!foot) {
    foot = table.createTFoot();
    const cell = foot.insertRow().insertCell();
    cell.colSpan = 8;
    const button = document.createElement("button");
    button.type = "button";
    button.className = "rare-toggle";
    button.addEventListener("click", () => showRare(!state.rare));
    cell.appendChild(button);
  }
  const button = foot.querySelector("button");
  button.dataset.count = count;
  button.textContent = `${state.rare ? "hide" : "show"} ${count} rarer move${count === 1 ? "" : "s"}`;
  button.title = `moves of fewer than ${FEW_GAMES} games or under ${100 * RARE_SHARE}% of the position's games`;
}

function showRare(on) {
  state.rare = on;
  document.body.classList.toggle("rare-shown", on);
  for (const button of document.querySelectorAll(".rare-toggle")) {
    const count = Number(button.dataset.count);
    button.textContent = `${on ? "hide" : "show"} ${count} rarer move${count === 1 ? "" : "s"}`;
  }
  saveView();
}

function winRateCell(tr, games, percent) {
  const few = games < FEW_GAMES;
  tr.querySelector(".bar span").style.width = few ? "0" : `${percent}%`;
  tr.querySelector(".pct").textContent = `${percent.toFixed(1)}%`;
  const cell = tr.querySelector(".rate");
  cell.classList.toggle("few", few);
  if (few) cell.title = `${games} game${games === 1 ? "" : "s"} only: too few for a win rate`;
}

// A span of years as a reader writes it: "2011" for one year, "2009–2011" for more.
function yearSpan(first, last) {
  return first === last ? String(first) : `${first}–${last}`;
}

// `position.total` is the games the rows share (a pattern's: its total), for the minimum-games setting.
function renderNextMoves(position) {
  const body = $("next-table").querySelector("tbody");
  body.replaceChildren();
  let rare = 0;
  const mover = position.to_move === "B" ? "Black" : "White";
  $("next-summary").textContent = position.total
    ? `${position.total} game${position.total === 1 ? "" : "s"} reached this position` +
      (position.ended ? `, ${position.ended} ended here` : "") + ` · win rates for ${mover}` +
      (state.within.length ? " · only the games searched within (above)" : "")
    : "No game in the book reached this position.";
  for (const row of position.next) {
    const tr = document.createElement("tr");
    tr.dataset.sgf = row.sgf;
    tr.dataset.vertex = row.vertex;
    const percent = Math.round(row.winrate * 1000) / 10;
    tr.innerHTML = `<td class="letter"></td><td class="move"></td><td class="num"></td>` +
      `<td class="rate"><span class="bar"><span></span></span><span class="pct"></span></td>`;
    tr.children[0].textContent = row.letter || "";
    tr.children[1].textContent = row.colour ? `${row.vertex} ${row.colour === "B" ? "Black" : "White"}` : row.vertex;
    tr.children[2].textContent = row.after_tenuki ? `${row.games} (${row.after_tenuki} after tenuki)` : row.games;
    if (row.after_tenuki !== undefined) {  // a pattern's continuation: Kombilo's counts
      tr.children[2].title = `${row.at_once} at once, ${row.after_tenuki} after moves elsewhere`;
    }
    winRateCell(tr, row.games, percent);
    if (isRare(row.games, position.total, row.ai, position.ai && position.ai.mark_visits)) {
      tr.classList.add("rare");
      rare += 1;
    }
    // a pattern's continuation (its row has a colour) is played in that colour
    tr.addEventListener("click", serial(() => (row.colour ? playPatternRow(row) : playSearch(row.sgf))));
    if (position.ai) aiCells(tr, row.ai, null, row.ai_missing, position.to_move, position.ai.mark_visits);
    body.appendChild(tr);
  }
  rare += renderAi(position, body);
  rareFooter($("next-table"), rare);
}

const AI_MARKS = {mistake: ["?", "popular mistake"], choice: ["!", "AI's choice, rarely played"],
                  ai: ["AI", "KataGo's move: nobody played it"]};

// KataGo's three columns of a next-move row: its win rate and lead for the player who plays
// the move, the points it loses against the best move evaluated (coloured, its visits shown: lossCell), and
// the mark (book.analysis.ai.mark's rule); no values: why (missing, the answer's ai_missing).  Hovering
// the row, or tapping its KataGo cells, draws the move's line (pv) on the board.
function aiCells(tr, values, markName, missing, toMove, markVisits) {
  const cells = [0, 1, 2].map(() => {
    const td = document.createElement("td");
    td.className = "num ai-col";
    tr.appendChild(td);
    return td;
  });
  cells[2].classList.add("loss");
  if (!values) {
    if (missing) {
      cells[0].textContent = "–";
      cells[0].className += " ai-missing";
      tr.title = `no KataGo value: ${missing}`;
      lossCell(cells[2], null, markVisits, missing);
    }
    return;
  }
  lossCell(cells[2], values, markVisits, null);
  cells[0].textContent = `${(100 * values.winrate).toFixed(1)}%`;
  cells[1].textContent = values.score_lead.toFixed(1);
  cells[2].textContent = (Math.round(values.loss * 10) / 10 + 0).toFixed(1);
  if (values.source === "child") {  // KataGo's search did not visit it: the position after it's values
    cells[2].textContent += "*";
    tr.title = `values of the position after the move (${values.visits} visits)`;
  }
  if (values.pv && values.pv.length && toMove) {
    tr.addEventListener("mouseenter", () => drawPv($("search-board"), values.pv, toMove));
    tr.addEventListener("mouseleave", () => drawPv($("search-board"), null));
    for (const td of cells) {
      td.addEventListener("click", (event) => {  // a tap shows the line; the move's name still plays it
        event.stopPropagation();
        const shown = $("search-board").querySelector(".ai-pv");
        drawPv($("search-board"), shown && shown.dataset.line === values.pv.join(",") ? null : values.pv, toMove);
      });
    }
  }
  const name = markName || values.mark;
  if (name) {
    const span = document.createElement("span");
    span.className = `ai-mark ${name}`;
    span.textContent = AI_MARKS[name][0];
    span.title = AI_MARKS[name][1];
    cells[2].append(" ", span);
  }
}

// The loss as a colour, green (none) to red (LOSS_RED points or more), only for a value of at least
// the marks' visits (the answer's mark_visits, book.analysis.ai.MARK_VISITS): a shallower one, or none, gets
// no colour and the cell says why. The visits are shown in the cell (data-visits, drawn by the
// stylesheet after the number) and the reason likewise (data-why).
const LOSS_RED = 3;

function lossCell(td, values, markVisits, missing) {
  if (!values) {
    td.dataset.why = missing;
    td.title = `no colour: no KataGo value (${missing})`;
    return;
  }
  td.dataset.visits = `${values.visits} v`;
  td.title = `${values.visits} visits`;
  if (!markVisits) return;  // a table that colours nothing (the practice's)
  if (values.visits < markVisits) {
    td.dataset.why = `under ${markVisits} v`;
    td.title = `${values.visits} visits: under the ${markVisits} a colour (and a mark) needs`;
    td.classList.add("shallow");
    return;
  }
  const hue = Math.round(120 * (1 - Math.min(Math.max(values.loss, 0), LOSS_RED) / LOSS_RED));
  td.style.backgroundColor = `hsl(${hue}, 65%, 84%)`;
  td.dataset.hue = hue;
  td.title = `${values.visits} visits · loss ${values.loss.toFixed(1)} points: green none, red ${LOSS_RED} or more`;
}

// After the human rows: KataGo's moves nobody played, and the line naming what the values are.
// Returns how many of those rows are rarer ones: a move of fewer visits than a mark needs is
// shallow, shown with "show rarer moves" only.
function renderAi(position, body) {
  const ai = position.ai;
  const status = $("ai-status");
  if (!ai) {
    status.textContent = "";
    return 0;
  }
  const s = ai.settings;
  const named = `KataGo ${s.network || "(unknown network)"}, ${s.rules} rules, komi ${s.komi}`;
  status.dataset.status = ai.status;
  if (ai.status === "pending") status.textContent = `KataGo is thinking… (${named}, ${s.visits} visits)`;
  else if (ai.status === "unavailable") status.textContent = `KataGo unavailable: ${ai.reason}`;
  else if (ai.status === "busy") status.textContent = ai.reason;  // "AI busy: ..." (the budget, docs/limits.md)
  else if (ai.status === "note") status.textContent = ai.reason;  // a pattern smaller than the board
  else if (ai.status === "none") status.textContent = ai.reason;  // plain fuseki serve: nothing stored here
  if (ai.status !== "ready") return 0;
  status.textContent = `${named}, ${ai.visits} visits · AI win % and lead for the player who plays the ` +
    "move, loss in points against the best move evaluated (* from the position after the move; under it its " +
    `visits, v; green no loss to red ${LOSS_RED} points from ${ai.mark_visits} visits; a hovered or tapped row ` +
    "draws KataGo's line) · ? popular mistake · ! AI's choice, rarely played" +
    (ai.visits < ai.mark_visits ? ` · shallow values (under ${ai.mark_visits} visits): no mark drawn` : "") +
    (ai.deeper ? (ai.deeper.status === "pending" ? ` · KataGo is searching deeper (${ai.deeper.visits} visits)…`
                                                 : ` · ${ai.deeper.reason}`) : "") +
    (ai.asking === "pending" && !ai.deeper ? " · KataGo is evaluating the moves its search left out…" : "") +
    (state.ai && !state.ai.asks ? " · stored values only (fuseki serve --ai asks KataGo for the rest)" : "");
  let rare = 0;
  for (const move of ai.moves.filter((m) => m.mark === "ai")) {
    const tr = document.createElement("tr");
    tr.className = "ai-row";
    tr.dataset.sgf = move.sgf;
    tr.dataset.vertex = move.vertex;
    tr.innerHTML = `<td class="letter"></td><td class="move"></td><td class="num">0</td><td class="rate"></td>`;
    tr.children[1].textContent = move.vertex;
    aiCells(tr, move, "ai", null, position.to_move, ai.mark_visits);
    if (move.visits < ai.mark_visits) {  // too shallow to stand beside the moves people play
      tr.classList.add("rare", "shallow-ai");
      tr.title = shallowText(move.visits, ai.mark_visits);
      rare += 1;
    }
    tr.addEventListener("click", serial(() => playSearch(move.sgf)));
    body.appendChild(tr);
  }
  return rare;
}

function shallowText(visits, markVisits) {
  return `KataGo's move, nobody played it; shallow: ${visits} visits, under the ${markVisits} a mark needs`;
}

const CORNER_NAMES = ["top left", "top right", "bottom left", "bottom right"];
const CORNER_ROWS = 5;  // continuations listed per corner
// The corner rows' letters: capitals, one per row of the whole table (the API letters each corner's
// rows a, b, c...), so that no letter names two points, nor a point of the next-move table's.
const CORNER_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";

// The corner book: what was played next in each corner, whatever the rest of the board (the
// engine plays it once the whole board is out of book).  Returns the board letters of its moves
// ({sgf: letter}) and the points of the rarer ones (a Set).
async function refreshCorners() {
  const body = $("corner-table").querySelector("tbody");
  body.replaceChildren();
  rareFooter($("corner-table"), 0);
  let answer;
  try {
    answer = await api(`/api/corners?${query()}`);
  } catch (error) {
    $("corner-summary").textContent = error.message;
    return [{}, new Set()];
  }
  if (answer.note) {
    $("corner-summary").textContent = answer.note;
    return [{}, new Set()];
  }
  const marks = {};
  const rareMarks = new Set();
  let listed = 0;
  let rare = 0;
  for (const corner of answer.corners) {
    // corners of the same stones (four empty ones at the start) have the same moves: listed once,
    // under the first of them, each row's letter on its points in all of them
    if (corner.same_as !== null && corner.same_as !== undefined) continue;
    const same = corner.same || [];
    const name = same.length
      ? `${[corner.corner, ...same].map((c) => CORNER_NAMES[c]).join(", ")} (the same stones)`
      : CORNER_NAMES[corner.corner] + (corner.last ? " (last move)" : "");
    for (const row of corner.next.slice(0, CORNER_ROWS)) {
      const tr = document.createElement("tr");
      tr.dataset.sgf = row.sgf;
      tr.dataset.vertex = row.vertex;
      const percent = Math.round(row.winrate * 1000) / 10;
      tr.innerHTML = `<td class="letter"></td><td class="corner"></td><td class="move"></td><td class="num"></td>` +
        `<td class="rate"><span class="bar"><span></span></span><span class="pct"></span></td>`;
      const letter = row.letter ? CORNER_LETTERS[listed] || "" : "";
      tr.children[0].textContent = letter;
      tr.children[1].textContent = name;
      if (same.length) tr.children[1].classList.add("same");  // a long name: it may wrap
      tr.children[2].textContent = row.vertex;
      tr.children[3].textContent = row.games;
      winRateCell(tr, row.games, percent);
      const few = isRare(row.games, corner.total, row.ai, answer.ai && answer.ai.mark_visits);
      if (few) {
        tr.classList.add("rare");
        rare += 1;
      }
      tr.title = `${same.length ? "each of these corners" : "this corner"}: ${corner.total} continuations, ` +
        `tenuki ${corner.tenuki}` + (same.length ? ` · the move shown in the ${CORNER_NAMES[corner.corner]}` : "");
      tr.addEventListener("click", serial(() => playSearch(row.sgf)));
      if (answer.ai) {  // KataGo: the position's values of the move
        aiCells(tr, row.ai, null, row.ai_missing, state.position && state.position.to_move, answer.ai.mark_visits);
      }
      body.appendChild(tr);
      for (const sgf of row.all_points || row.points) {
        if (!letter || sgf in marks) continue;
        marks[sgf] = letter;
        if (few) rareMarks.add(sgf);
      }
      listed += 1;
    }
  }
  rareFooter($("corner-table"), rare);
  $("corner-summary").textContent = listed
    ? "Corner book: what was played next in each corner · win rates for the player who played it"
    : "No corner of this position is in the corner book.";
  return [marks, rareMarks];
}

async function playSearch(sgf) {
  const redo = state.redo;
  state.moves.push(sgf);
  state.redo = redo.length && redo[redo.length - 1] === sgf ? redo.slice(0, -1) : [];
  if (!(await refreshSearch())) {
    state.moves.pop();
    state.redo = redo;
  }
}

// A pattern's continuation is played in its own colour (the other player passes first when it is
// not that colour's turn: the search moves alternate), and the same pattern is searched again on
// the new position, so the table goes on with the pattern's continuations, as Kombilo walks them.
async function playPatternRow(row) {
  const [region, wild, redo] = [state.region, state.wild, state.redo];
  const toMove = state.position ? state.position.to_move : "B";
  const played = row.colour === toMove ? [row.sgf] : ["", row.sgf];
  state.moves.push(...played);
  state.redo = [];
  if (!(await refreshSearch())) {
    state.moves.splice(state.moves.length - played.length);
    state.redo = redo;
    return;
  }
  state.region = region;
  state.wild = wild;
  await searchPattern();
  if (played.length === 2) {
    const [mover, other] = row.colour === "B" ? ["Black", "White"] : ["White", "Black"];
    showMessage(`${other} passed so that ${mover} plays ${row.vertex}, the pattern row's colour`);
  }
}

// The line played so far on the search board, under its status line: a breadcrumb of GTP vertices
// ("start › 1 Q16 › 2 D4"), each a button back to the position after that move (the moves taken
// back are forward's, as with back).
function renderLine() {
  let line = $("search-line");
  if (!line) {
    line = document.createElement("nav");
    line.id = "search-line";
    line.setAttribute("aria-label", "the moves played: each goes back to its position");
    $("search-status").after(line);
  }
  line.replaceChildren();
  const crumb = (number, text) => {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "crumb";
    button.dataset.move = number;
    button.textContent = text;
    if (number === state.moves.length) {
      button.setAttribute("aria-current", "step");
      button.disabled = true;
    }
    button.addEventListener("click", serial(() => backTo(number)));
    line.appendChild(button);
  };
  crumb(0, "start");
  state.moves.forEach((sgf, i) => crumb(i + 1, `${i + 1} ${sgf ? vertexOf(sgf) : "pass"}`));
  line.scrollLeft = line.scrollWidth;  // one line that scrolls: the last moves in view, the board where it was
}

async function backTo(number) {
  if (number >= state.moves.length) return;
  const [moves, redo] = [state.moves, state.redo];
  state.redo = [...redo, ...moves.slice(number).reverse()];
  state.moves = moves.slice(0, number);
  if (!(await refreshSearch())) {
    state.moves = moves;
    state.redo = redo;
  }
}

async function back() {
  if (!state.moves.length) return;
  state.redo.push(state.moves.pop());
  await refreshSearch();
}

async function forward() {
  if (state.redo.length) await playSearch(state.redo[state.redo.length - 1]);
}

async function reset() {
  state.moves = [];
  state.redo = [];
  await refreshSearch();
}

// Every filter: its API parameter (/api/position, /api/games, /api/pattern) and its form field.
// Those after player are the header filters, folded under "more filters" (book/model/filters.py).
const FILTER_FIELDS = [["year_from", "year-from"], ["year_to", "year-to"], ["player", "player"],
  ["event", "event"], ["winner", "winner"], ["won_by", "won-by"], ["margin", "margin"], ["min_rank", "min-rank"],
  ["max_rank", "max-rank"], ["handicap", "handicap"], ["komi", "komi"]];

// The filters are asked of the API before the view takes them: a value it refuses is said by its
// field and the view keeps the filters it had, so moves, points and reset go on working.
async function applyFilters() {
  const filters = {};
  for (const [key, id] of FILTER_FIELDS) filters[key] = $(id).value.trim();
  const before = state.filters;
  state.filters = filters;
  try {
    await api(`/api/position?${query()}`);
  } catch (error) {
    state.filters = before;
    filterError(error.message);
    return;
  }
  filterError("");
  await refreshSearch();
}

async function clearFilters() {
  $("filters").reset();
  state.filters = {};
  filterError("");
  await refreshSearch();
}

// The API's message about a filter, after the field it names ("margin abc: ...", "year_from must
// be ..."): it stays there until the filters are applied again or cleared.
function filterError(text) {
  let box = $("filter-error");
  for (const [, id] of FILTER_FIELDS) $(id).removeAttribute("aria-invalid");
  if (!text) {
    if (box) box.remove();
    return;
  }
  if (!box) {
    box = document.createElement("span");
    box.id = "filter-error";
    box.className = "field-error";
    box.setAttribute("role", "alert");
  }
  box.textContent = text;
  const named = FILTER_FIELDS.filter(([key]) => text.startsWith(`${key} `) || text.startsWith(`${key}:`));
  const field = named.length ? $(named[named.length - 1][1]) : null;
  if (field) {
    field.setAttribute("aria-invalid", "true");
    (field.closest("label") || field).after(box);
  } else {
    $("filters").append(box);
  }
}

// --- pattern search ----------------------------------------------------------------------------

function vertexOf(sgf) {
  const [x, y] = xyOf(sgf);
  return GTP_COLUMNS[x] + (state.size - y);
}

async function boardClick(sgf) {
  if (state.swallowClick) {  // the press picked a corner of the region
    state.swallowClick = false;
    return;
  }
  if (state.markMode) return toggleMark(sgf);
  if (state.picking) return;
  const stones = state.position ? [...state.position.stones.B, ...state.position.stones.W] : [];
  if (stones.includes(sgf)) return showMessage(`${vertexOf(sgf)} is occupied`);  // no need to ask the API
  return playSearch(sgf);
}

function insideRegion(sgf) {
  if (state.region.length !== 2) return false;
  const [[ax, ay], [bx, by], [x, y]] = [xyOf(state.region[0]), xyOf(state.region[1]), xyOf(sgf)];
  return Math.min(ax, bx) <= x && x <= Math.max(ax, bx) && Math.min(ay, by) <= y && y <= Math.max(ay, by);
}

// A point is in one wildcard list at most: marking it in another mode moves it there.
function toggleMark(sgf) {
  if (!insideRegion(sgf)) return;
  if (state.wild.get(sgf) === state.markMode) state.wild.delete(sgf);
  else state.wild.set(sgf, state.markMode);
  drawRegion();
}

// The region is picked with the pointer, mouse or touch alike: press on one corner, drag to the
// opposite one and let go; or click one corner, then the other.  The point under the pointer is
// read from the board's click targets, which lie over everything else.
function pointAt(event) {
  const node = document.elementFromPoint(event.clientX, event.clientY);
  return node && node.closest("#search-board .targets") ? node.dataset.sgf : null;
}

function clearRegion() {
  state.region = [];
  state.wild = new Map();
  state.picking = false;
  state.markMode = null;
}

function setRegion(corners) {
  state.region = corners;
  state.wild = new Map([...state.wild].filter(([sgf]) => insideRegion(sgf)));
  drawRegion();
}

function pickStart(event) {
  state.swallowClick = false;
  if (!state.picking) return;
  const sgf = pointAt(event);
  if (!sgf) return;
  event.preventDefault();
  state.swallowClick = true;
  if (state.region.length === 1) {  // the second of two clicks (the first corner again: still waiting)
    if (sgf !== state.region[0]) pickEnd(sgf);
    return;
  }
  state.dragFrom = sgf;
  setRegion([sgf]);
}

function pickMove(event) {
  if (!state.dragFrom) return;
  const sgf = pointAt(event);
  const shown = state.region[state.region.length - 1];
  if (sgf && sgf !== shown) setRegion(sgf === state.dragFrom ? [sgf] : [state.dragFrom, sgf]);
}

function pickRelease(event) {
  if (!state.dragFrom) return;
  const from = state.dragFrom;
  state.dragFrom = null;
  const sgf = pointAt(event) || state.region[state.region.length - 1];
  if (sgf === from) setRegion([from]);  // a click: the other corner comes next
  else pickEnd(sgf);
}

function pickEnd(sgf) {
  state.picking = false;
  setRegion([state.region[0], sgf]);
}

function drawRegion() {
  const svg = $("search-board");
  svg.querySelectorAll(".region, .any, .empty-or-black, .empty-or-white").forEach((node) => node.remove());
  svg.classList.toggle("picking", state.picking);
  $("pattern-mode").classList.toggle("active", state.picking);
  for (const button of document.querySelectorAll(".pattern-mark")) {
    button.classList.toggle("active", state.markMode === button.dataset.kind);
    button.disabled = state.region.length !== 2;
  }
  $("pattern-search").disabled = state.region.length !== 2;
  const lists = Object.entries(WILDCARDS).map(([kind, [word]]) => [word, wildList(kind)]).filter(([, list]) => list);
  $("pattern-region").textContent = state.region.length
    ? `region ${state.region.map(vertexOf).join(":")}${state.region.length === 1 ? ":…" : ""}` +
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
const WILDCARDS = {any: ["any", "any", "?"], empty_or_black: ["empty or black", "empty-or-black", "x"],
                   empty_or_white: ["empty or white", "empty-or-white", "o"]};
// Kombilo's options beside the wildcards: the /api/pattern parameter and the control that sets it.
const PATTERN_OPTIONS = {to_move: "pattern-to-move", moves_from: "pattern-from", moves_to: "pattern-to"};
const PATTERN_KEYS = ["region", ...Object.keys(WILDCARDS), "swap", ...Object.keys(PATTERN_OPTIONS)];

function wildList(kind) {
  return [...state.wild].filter(([, k]) => k === kind).map(([sgf]) => vertexOf(sgf)).sort().join(",");
}

function patternQuery(extra) {
  const asked = {region: state.region.map(vertexOf).join(":"), swap: $("pattern-swap").checked ? "1" : ""};
  for (const kind of Object.keys(WILDCARDS)) asked[kind] = wildList(kind);
  for (const [key, id] of Object.entries(PATTERN_OPTIONS)) asked[key] = $(id).value.trim();
  return query(Object.fromEntries(Object.entries({...asked, ...(extra || {})}).filter(([, value]) => value !== "")));
}

async function searchPattern() {
  if (state.region.length !== 2) return;
  let result;
  try {
    result = await api(`/api/pattern?${patternQuery()}`);
  } catch (error) {
    showMessage(error.message);
    return;
  }
  showMessage("");
  state.pattern = result;
  const asked = new URLSearchParams(patternQuery());
  state.patternView = Object.fromEntries(PATTERN_KEYS.map((key) => [key, asked.get(key)]));
  const [marks, rare] = rowMarks(result.next, result.total, result.ai && result.ai.mark_visits);
  drawBoard($("search-board"), state.size, state.position, marks, serial(boardClick), rare);
  drawRegion();
  renderPattern(result);
  if (result.ai && result.ai.status === "pending") pollPattern(`/api/pattern?${patternQuery()}`);
  state.gamesAfter = [null];
  await refreshGames();
  saveView();
}

// The pattern's continuations in the next-move table: each point and colour of the player who
// played it (Black and White rows share a letter), its games at once and after tenuki (the first
// later move inside the region, as Kombilo counts); with fuseki serve --ai a whole-board
// pattern's carry KataGo's values, a smaller one's a line saying they are whole-board only.
function renderPattern(result) {
  $("years-chart").hidden = true;  // the chart is the position's, not the pattern's
  renderNextMoves({total: result.total, next: result.next.map((row) => ({...row, winrate: row.winrate})), ai: result.ai});
  $("next-summary").textContent = result.total
    ? `${result.total} game${result.total === 1 ? "" : "s"} reached the ${result.kind} pattern (${result.options}) · ` +
      `tenuki ${result.tenuki.games} (never played inside the region again) · ` +
      "win rates for the player who played the move"
    : `No game reached the ${result.kind} pattern (${result.options}).`;
}

// --- search within results -------------------------------------------------------------------
//
// "search within these games" keeps the answer shown (the position's games, or the pattern's) and
// searches only those from then on; "back" drops the last one. Each is kept as the search itself,
// in the API's parameters (book.ui.web.within: a `within=` per search), so the address holds it.

const STAGE_KEYS = ["size", "moves", ...PATTERN_KEYS];

function currentStage() {
  const asked = {size: String(state.size), moves: state.moves.length ? movesText() : "",
                 ...(state.pattern ? state.patternView : {})};
  const params = new URLSearchParams();
  for (const key of STAGE_KEYS) if (asked[key]) params.set(key, asked[key]);
  return params.toString();
}

async function refreshWithin() {
  $("within-back").disabled = !state.within.length;
  if (!state.within.length) {
    $("within-status").textContent = "searching all games";
    return;
  }
  const params = new URLSearchParams();
  for (const stage of state.within) params.append("within", stage);
  try {
    const found = await api(`/api/within?${params}`);
    $("within-status").textContent = `within ${found.games} game${found.games === 1 ? "" : "s"}: ` +
      found.stages.map((stage) => stage.text).join(" › ");
  } catch (error) {
    showMessage(error.message);
  }
}

async function pushWithin() {
  if (!state.position) return;
  state.within.push(currentStage());
  await refreshWithin();
  await refreshSearch();  // the position again, within those games (a pattern is searched again by its button)
}

async function backWithin() {
  if (!state.within.length) return;
  state.within.pop();
  await refreshWithin();
  await refreshSearch();
}

// --- the games column --------------------------------------------------------------------------

function person(name, rank) {
  return rank ? `${name || "?"} ${rank}` : name || "?";
}

async function refreshGames() {
  let page;
  try {
    const after = state.gamesAfter[state.gamesAfter.length - 1];
    const keyset = after === null ? {} : {after};
    page = await api(state.pattern ? `/api/pattern/games?${patternQuery(keyset)}` : `/api/games?${query(keyset)}`);
  } catch (error) {
    showMessage(error.message);
    return;
  }
  state.gamesNext = page.after ?? null;
  const body = $("games-table").querySelector("tbody");
  body.replaceChildren();
  for (const row of page.rows) {
    const tr = document.createElement("tr");
    tr.dataset.id = row.id;
    for (const [text, cls, name] of [[person(row.black, row.black_rank), row.winner === "B" ? "winner" : "", row.black],
                                     [person(row.white, row.white_rank), row.winner === "W" ? "winner" : "", row.white],
                                     [row.date || (row.year ? String(row.year) : ""), ""],
                                     [row.result, ""], [String(row.move_number), "num"]]) {
      const td = document.createElement("td");
      if (name) td.appendChild(playerLink(name, text));  // the player's page (player.js)
      else td.textContent = text;
      if (cls) td.className = cls;
      tr.appendChild(td);
    }
    tr.title = [person(row.black, row.black_rank), "vs", person(row.white, row.white_rank), row.date,
                row.event, row.result].filter(Boolean).join(" ");
    tr.addEventListener("click", serial(() => openGame(row.id, row.move_number)));
    if (state.game && state.game.id === row.id) tr.classList.add("selected");
    body.appendChild(tr);
  }
  $("games-summary").textContent = page.note || (page.total
    ? `${page.total} game${page.total === 1 ? "" : "s"} · move: moves played before the position`
    : "No games.");
  $("games-page").textContent = page.pages ? `page ${page.page} of ${page.pages}` : "";
  $("games-prev").disabled = state.gamesAfter.length <= 1;
  $("games-next").disabled = state.gamesNext === null;
  const download = $("games-download");
  download.href = state.pattern ? `/api/pattern/games.sgf?${patternQuery()}` : `/api/games.sgf?${query()}`;
  download.classList.toggle("disabled", !page.total);
  download.textContent = downloadLabel(page.total);
}

// The download holds the games listed (the position's, or the pattern's matches after a pattern
// search), the newest /api/info's max_download of them.
function downloadLabel(total) {
  const cap = state.maxDownload;
  const count = (n) => n.toLocaleString("en");
  const whose = state.pattern ? " of the pattern's games" : "";
  if (cap && total > cap) return `download SGF (newest ${count(cap)}${whose} of ${count(total)})`;
  return state.pattern ? `download SGF (the pattern's ${count(total)} game${total === 1 ? "" : "s"})` : "download SGF";
}

async function gamesPage(step) {
  if (step > 0) {
    if (state.gamesNext === null) return;
    state.gamesAfter.push(state.gamesNext);
  } else {
    if (state.gamesAfter.length <= 1) return;
    state.gamesAfter.pop();
  }
  await refreshGames();
}

// --- the replay column -------------------------------------------------------------------------

// Opens game `id` at move `at` (where the search position occurred); `shown` ({move, sym}),
// from the address, is the move shown and the orientation it was shown in.
async function openGame(id, at, shown) {
  let game;
  try {
    // the game's setup and every move, once: stepping through it asks nothing more (replayGame)
    const sym = shown && shown.sym !== null && shown.sym !== undefined ? {sym: shown.sym} : {};
    game = await api(`/api/game/${id}?${query({at: at, ...sym})}`);
  } catch (error) {
    showMessage(error.message);
    return;
  }
  state.game = game;
  for (const tr of $("games-table").querySelectorAll("tbody tr")) {
    tr.classList.toggle("selected", Number(tr.dataset.id) === id);
  }
  const info = game.info;
  const box = $("game-info");
  box.replaceChildren();
  const players = document.createElement("div");
  players.className = "players";
  players.innerHTML = `<span class="stone-icon black"></span><span class="pb"></span>` +
    `<span class="vs">vs</span><span class="stone-icon white"></span><span class="pw"></span>`;
  players.querySelector(".pb").textContent = person(info.black, info.black_rank);
  players.querySelector(".pw").textContent = person(info.white, info.white_rank);
  const details = document.createElement("div");
  details.className = "details";
  details.textContent = [info.date, info.event, info.result && `result ${info.result}`,
                         info.komi !== null && `komi ${info.komi}`, info.handicap && `handicap ${info.handicap}`,
                         `${info.move_count} moves`].filter(Boolean).join(" · ");
  box.append(players, details);
  const download = $("game-download");
  download.href = `/api/game/${id}.sgf`;
  download.hidden = false;
  $("practice-game").hidden = false;  // practice.js: guess its moves from the one shown
  await showGameMove(shown && shown.move !== null ? shown.move : at);
  if (!state.restoring) revealReplay();
}

// A game opened by a click is shown: its tab (tabs.js), and on a phone or a tablet, where the replay
// lies below the board (or the player page), scrolled into view when less than half of its board is
// in the window.
function revealReplay() {
  showTab("replay");
  const board = $("replay-board").getBoundingClientRect();
  const seen = Math.min(board.bottom, window.innerHeight) - Math.max(board.top, 0);
  if (seen < board.height / 2) $("replay").scrollIntoView({block: "start"});
}

async function showGameMove(number) {
  const game = state.game;
  if (!game) return;
  number = Math.max(0, Math.min(number, game.moves.length));
  const position = replayGame(game, number);
  state.gameMove = number;
  if (!state.numbers) delete position.numbers;
  drawBoard($("replay-board"), position.size, position, {}, serial(() => showGameMove(state.gameMove + 1)));
  const mark = number === game.at ? " · search position" : "";
  const last = position.last ? ` · ${position.last.color} ${position.last.vertex}` : "";
  $("move-number").textContent = `move ${number} / ${game.moves.length}${last}${mark}`;
  saveView();
}

// The game's board after `upto` of its moves, computed here from the moves /api/game gave (under
// its symmetry), by the rules of the engine's play (engine/core/_kernels.py): a move takes the
// opponent's chains it leaves without liberties; a move on an occupied point, a suicide or the
// captured side's immediate retake of a single-stone ko is refused, and, as the server's replay of
// a record does (book.formats.positions.board_after_record, strict=False), put on the board as a
// stone without captures, so the replay goes on as the record does. Returns drawBoard's position,
// with `captures` and `numbers` ({sgf: the move that put the stone there}; setup stones: none).
// tests/test_web_hand.py compares it with the rules core's board after every move of real games.
function replayGame(game, upto) {
  const size = game.info.size;
  const colour = new Array(size * size).fill("");
  const numbers = new Array(size * size).fill(0);
  const index = (sgf) => SGF_LETTERS.indexOf(sgf[1]) * size + SGF_LETTERS.indexOf(sgf[0]);
  const setup = game.setup || {};
  for (const [name, put] of [["B", "B"], ["W", "W"], ["E", ""]]) {
    for (const sgf of setup[name] || []) colour[index(sgf)] = put;
  }
  // the neighbours in the engine's order (left, right, up, down): its ko test reads the first
  const neighbours = (p) => {
    const x = p % size;
    const around = [];
    if (x > 0) around.push(p - 1);
    if (x < size - 1) around.push(p + 1);
    if (p >= size) around.push(p - size);
    if (p < size * (size - 1)) around.push(p + size);
    return around;
  };
  const chain = (p) => {  // the chain at p and its number of liberties
    const stones = [p];
    const seen = new Set(stones);
    const liberties = new Set();
    for (let i = 0; i < stones.length; i++) {
      for (const q of neighbours(stones[i])) {
        if (colour[q] === "") liberties.add(q);
        else if (colour[q] === colour[p] && !seen.has(q)) {
          seen.add(q);
          stones.push(q);
        }
      }
    }
    return [stones, liberties.size];
  };
  const captures = {B: 0, W: 0};
  let ko = -1;
  for (let n = 0; n < upto; n++) {
    const {color, sgf} = game.moves[n];
    if (!sgf) {  // a pass
      ko = -1;
      continue;
    }
    const p = index(sgf);
    let legal = colour[p] === "" && !(p === ko && colour[neighbours(p)[0]] !== color);
    if (legal) {
      colour[p] = color;
      let captured = 0;
      let taken = -1;
      for (const q of neighbours(p)) {
        if (colour[q] === "" || colour[q] === color) continue;
        const [stones, liberties] = chain(q);
        if (liberties) continue;
        for (const s of stones) {
          colour[s] = "";
          numbers[s] = 0;
        }
        captured += stones.length;
        taken = q;
      }
      const [own, liberties] = chain(p);
      if (liberties) {
        captures[color] += captured;
        ko = captured === 1 && own.length === 1 && liberties === 1 ? taken : -1;
      } else {
        legal = false;  // a suicide (never after a capture: the captured stones' points are liberties)
      }
    }
    if (!legal) {
      colour[p] = color;
      ko = -1;
    }
    numbers[p] = n + 1;
  }
  const point = (p) => SGF_LETTERS[p % size] + SGF_LETTERS[Math.floor(p / size)];
  const stones = {B: [], W: []};
  const numbered = {};
  colour.forEach((c, p) => {
    if (!c) return;
    stones[c].push(point(p));
    if (numbers[p]) numbered[point(p)] = numbers[p];
  });
  const last = upto ? game.moves[upto - 1] : null;
  return {size, move_number: upto, stones, captures, numbers: numbered,
          last: last && {color: last.color, sgf: last.sgf, vertex: last.vertex}};
}

// --- the address ----------------------------------------------------------------------------------
//
// The address's fragment holds the whole view, each part under the name of the API parameter that
// answers it (docs/exploring.md): size, moves, the filters of FILTER_FIELDS, within (/api/position, /api/games);
// region, its wildcards and options once a pattern is searched (/api/pattern); game and at (/api/game/<id>), move
// and sym (/api/game/<id>/position) for the replayed game. A new search position is a new history
// entry, so the browser's back and forward buttons walk the moves; other changes replace the entry.

function viewParams() {
  const params = new URLSearchParams(query());
  if (state.pattern) {  // the pattern searched, not one being picked
    for (const [key, value] of Object.entries(state.patternView)) if (value) params.set(key, value);
  }
  const game = state.game;
  if (game) for (const [key, value] of [["game", game.id], ["at", game.at], ["move", state.gameMove], ["sym", game.symmetry]]) {
    params.set(key, value);
  }
  if (state.rare) params.set("rare", "1");
  if (state.numbers) params.set("numbers", "1");
  playerParams(params);  // name, vs, page: the player page (player.js)
  const practising = typeof practiceParams === "function" ? practiceParams() : {};  // practice.js, loaded next
  for (const [key, value] of Object.entries(practising)) params.set(key, value);
  return params;
}

function saveView() {
  const params = viewParams();
  const address = `#${params}`;
  if (address === location.hash) return;
  // The browser moved to another entry (back or forward) while this view's answers came in: that
  // entry is not this view's to overwrite, and its popstate, queued behind, restores it.
  if (state.savedHash !== null && location.hash !== state.savedHash) return;
  // A new search position is a new entry, and so is a practice started, closed or switched: Back
  // then leaves the practice for the view it was started from, without taking back a move.
  const shown = new URLSearchParams(location.hash.slice(1));
  const newEntry = (shown.get("moves") || "") !== movesText() ||
    (shown.get("practice") || "") !== (params.get("practice") || "");
  if (!state.restoring && newEntry) history.pushState(null, "", address);
  else history.replaceState(null, "", address);
  state.savedHash = location.hash;
  if (!$("link-text").hidden) $("link-text").value = location.href;
  $("link-status").textContent = "";
}

// The SGF point of a vertex of the board (Q16 -> pd), null for one off the board.
function sgfOf(vertex) {
  const column = GTP_COLUMNS.indexOf(vertex.charAt(0).toUpperCase());
  const row = state.size - Number(vertex.slice(1));
  const on = column >= 0 && column < state.size && Number.isInteger(row) && row >= 0 && row < state.size;
  return on ? SGF_LETTERS[column] + SGF_LETTERS[row] : null;
}

// The moves taken back that "forward" replays, after the browser went from `old` to `moves`.
function redoAfter(old, moves) {
  const starts = (long, short) => short.length <= long.length && short.every((m, i) => m === long[i]);
  if (starts(old, moves)) return [...state.redo, ...old.slice(moves.length).reverse()];
  const played = moves.slice(old.length);
  const redo = state.redo.slice(0, state.redo.length - played.length);
  return starts(moves, old) && state.redo.slice(redo.length).reverse().every((m, i) => m === played[i]) ? redo : [];
}

// Shows the view the address holds (on load, and when the browser's back or forward changes it).
async function restoreView(fromHistory) {
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
  state.redo = fromHistory ? redoAfter(old, moves) : [];
  state.within = params.getAll("within").filter(Boolean);
  await refreshWithin();
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
    if (!(await refreshSearch())) {  // an address the API refuses: without the filter it names, else the empty board
      const refused = $("message").textContent;
      if (FILTER_FIELDS.some(([key]) => refused.startsWith(`${key} `))) {
        state.filters = {};
        filterError(refused);
        if (await refreshSearch()) return;
      }
      state.moves = [];
      state.redo = [];
      if (moves.length) await refreshSearch();
      return;
    }
    const corners = (params.get("region") || "").split(":").map(sgfOf);
    if (corners.length === 2 && corners.every(Boolean)) {
      state.region = corners;
      state.wild = new Map();
      for (const kind of Object.keys(WILDCARDS)) {
        for (const sgf of (params.get(kind) || "").split(",").filter(Boolean).map(sgfOf)) {
          if (sgf && insideRegion(sgf)) state.wild.set(sgf, kind);
        }
      }
      $("pattern-swap").checked = params.get("swap") === "1";
      for (const [key, id] of Object.entries(PATTERN_OPTIONS)) $(id).value = params.get(key) || "";
      await searchPattern();
    }
    if (state.player) await showPlayer();
    else hidePlayer();
    const game = number("game");
    if (game === null) return;
    if (state.game && state.game.id === game) await showGameMove(number("move") ?? state.game.at);
    else await openGame(game, number("at") ?? 0, {move: number("move"), sym: number("sym")});
  } finally {
    state.restoring = false;
  }
}

// The address to the clipboard where the browser allows it (a secure page: localhost, https),
// else in a selected field to copy by hand.
async function copyLink() {
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

// --- start ----------------------------------------------------------------------------------------

async function start() {
  $("back").addEventListener("click", serial(back));
  $("forward").addEventListener("click", serial(forward));
  $("reset").addEventListener("click", serial(reset));
  $("pass").addEventListener("click", serial(() => playSearch("")));
  $("size").addEventListener("change", serial(() => {
    state.size = Number($("size").value);
    return reset();
  }));
  const filter = serial(applyFilters);
  $("filters").addEventListener("submit", (event) => {
    event.preventDefault();
    filter();
  });
  $("clear-filters").addEventListener("click", serial(clearFilters));
  $("games-prev").addEventListener("click", serial(() => gamesPage(-1)));
  $("games-next").addEventListener("click", serial(() => gamesPage(1)));
  $("pattern-mode").addEventListener("click", () => {
    state.picking = !state.picking;
    state.markMode = null;
    if (state.picking) {
      state.region = [];
      state.wild = new Map();
    }
    drawRegion();
  });
  for (const button of document.querySelectorAll(".pattern-mark")) {
    button.addEventListener("click", () => {
      state.markMode = state.markMode === button.dataset.kind ? null : button.dataset.kind;
      drawRegion();
    });
  }
  $("search-board").addEventListener("pointerdown", pickStart);
  $("search-board").addEventListener("pointermove", pickMove);
  document.addEventListener("pointerup", pickRelease);
  document.addEventListener("pointercancel", pickRelease);
  $("pattern-search").addEventListener("click", serial(searchPattern));
  $("within-push").addEventListener("click", serial(pushWithin));
  $("within-back").addEventListener("click", serial(backWithin));
  $("first").addEventListener("click", serial(() => showGameMove(0)));
  $("prev").addEventListener("click", serial(() => showGameMove(state.gameMove - 1)));
  $("next").addEventListener("click", serial(() => showGameMove(state.gameMove + 1)));
  $("last").addEventListener("click", serial(() => showGameMove(Infinity)));
  $("move-numbers").addEventListener("change", serial(() => {
    state.numbers = $("move-numbers").checked;
    if (!state.game) return saveView();
    return showGameMove(state.gameMove);
  }));
  const step = serial((delta) => showGameMove(state.gameMove + delta));
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
  setupPlayerPage();
  window.addEventListener("popstate", serial(() => restoreView(true)));
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
        const option = new Option(`${size}×${size} (${info.sizes[size]} games)`, size);
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
    if (info.note) {  // no games to search within (the API would answer 409)
      $("within-push").disabled = true;
      $("within-push").title = info.note;
    }
    $("book-info").textContent = `${info.games} games · ${info.positions} positions${years}${kind}`;
  } catch (error) {
    showMessage(error.message);
  }
  drawBoard($("replay-board"), state.size, null, {}, null);
  await serial(() => restoreView(false))();
}

start();
