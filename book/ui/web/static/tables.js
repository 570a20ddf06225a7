// The next-move table and the corner table: their rows, win-rate bars, the rarer rows hidden
// until asked, and the letters each row puts on the board.

import {saveView} from "./address.js";
import {aiCells, renderAi} from "./ai.js";
import {api, query, serial} from "./api.js";
import {$} from "./dom.js";
import {playPatternRow, playSearch} from "./search.js";
import {filtersNamed} from "./filters.js";
import {count, counted} from "./format.js";

// Rows of fewer games than this draw no win-rate bar: one game's 0% or 100% is no rate. The
// number stays (muted), its tooltip saying how few games it is.
export const FEW_GAMES = 3;

// The minimum-games setting: by default the tables hide the rows of fewer than FEW_GAMES games or
// of under RARE_SHARE of the position's games (and their letters on the board); "show N rarer
// moves" under the table shows them, and the address keeps that (rare=1). The API answers every
// row: the page filters, so showing them asks nothing and the answer cache serves both views.
// A move KataGo marks (? or !), or whose own values are deep enough for a mark (`ai`: the row's
// values, of at least `markVisits` visits, the answer's mark_visits), is never hidden.
export const RARE_SHARE = 0.01;

export function isRare(games, total, ai, markVisits) {
  if (ai && (ai.mark || (markVisits && ai.visits >= markVisits))) return false;
  return games < FEW_GAMES || games < RARE_SHARE * total;
}

// The board letters of a table's rows ({sgf: letter}) and the points of the rarer ones (a Set;
// also those of rows past the letters, for KataGo's marks on them).
export function rowMarks(rows, total, markVisits) {
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
export function rareFooter(state, table, count) {
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
    button.addEventListener("click", () => showRare(state, !state.rare));
    cell.appendChild(button);
  }
  const button = foot.querySelector("button");
  button.dataset.count = count;
  button.textContent = `${state.rare ? "hide" : "show"} ${count} rarer move${count === 1 ? "" : "s"}`;
  button.title = `moves of fewer than ${FEW_GAMES} games or under ${100 * RARE_SHARE}% of the position's games`;
}

export function showRare(state, on) {
  state.rare = on;
  document.body.classList.toggle("rare-shown", on);
  for (const button of document.querySelectorAll(".rare-toggle")) {
    const count = Number(button.dataset.count);
    button.textContent = `${on ? "hide" : "show"} ${count} rarer move${count === 1 ? "" : "s"}`;
  }
  saveView(state);
}

// The win-rate cell: the number is the mover's rate; the bar shows both colours' wins, as
// Lichess's opening explorer does, Black's share of the wins dark from the left, White's light
// (`mover`: "B" or "W", who played the move).  Without a mover (the corner book, which counts a move
// whoever played it) the bar is the mover's wins, in a colour of its own (.bar.mover), and its title
// and label say so, with the games it counts.  The games cell's data-share, the move's share of
// the position's games (`total`), is drawn after the count by the stylesheet (its text stays the count).
export function winRateCell(tr, games, percent, mover, total) {
  const few = games < FEW_GAMES;
  const black = mover === "W" ? 100 - percent : percent;  // no mover (the corner book): the mover's wins
  const bar = tr.querySelector(".bar");
  bar.firstChild.style.width = few ? "0" : `${black}%`;
  bar.classList.toggle("mover", !mover);
  tr.querySelector(".pct").textContent = `${percent.toFixed(1)}%`;
  const cell = tr.querySelector(".rate");
  cell.classList.toggle("few", few);
  if (few) cell.title = `${counted(games, "game")} only: too few for a win rate`;
  else if (mover) cell.title = `Black won ${black.toFixed(1)}% of these ${counted(games, "game")}, White ${(100 - black).toFixed(1)}%`;
  else {
    cell.title = `the player who played the move won ${percent.toFixed(1)}% of these ${counted(games, "game")}: ` +
      "Black or White, the corner book counts a move whoever played it, so the bar is the mover's wins, not Black's";
  }
  if (few) bar.removeAttribute("aria-label");
  else {
    bar.setAttribute("role", "img");
    bar.setAttribute("aria-label", mover ? cell.title : cell.title.split(":")[0]);
  }
  const gamesCell = tr.querySelector("td.num");
  if (total && gamesCell) {
    const share = 100 * games / total;
    gamesCell.dataset.share = `${share < 1 ? share.toFixed(1) : Math.round(share)}%`;
    gamesCell.title = gamesCell.title || `${gamesCell.dataset.share} of the position's ${counted(total, "game")}`;
  }
}

// A span of years as a reader writes it: "2011" for one year, "2009–2011" for more.
export function yearSpan(first, last) {
  return first === last ? String(first) : `${first}–${last}`;
}

// `position.total` is the games the rows share (a pattern's: its total), for the minimum-games setting.
export function renderNextMoves(state, position) {
  const body = $("next-table").querySelector("tbody");
  body.replaceChildren();
  let rare = 0;
  const mover = position.to_move === "B" ? "Black" : "White";
  $("pattern-on").hidden = true;  // a pattern search cut short shows it again (pattern.js)
  $("next-summary").textContent = position.total
    ? `${counted(position.total, "game")} reached this position` +
      (position.ended ? `, ${count(position.ended)} ended here` : "") + ` · win rates for ${mover}` +
      (state.within.length ? " · only the games searched within (above)" : "") + filtersNamed(state)
    : `No game in the book reached this position${filtersNamed(state, " with the filters")}.`;
  for (const row of position.next) {
    const tr = document.createElement("tr");
    tr.dataset.sgf = row.sgf;
    tr.dataset.vertex = row.vertex;
    const percent = Math.round(row.winrate * 1000) / 10;
    tr.innerHTML = `<td class="letter"></td><td class="move"></td><td class="num"></td>` +
      `<td class="rate"><span class="bar"><span></span></span><span class="pct"></span></td>`;
    tr.children[0].textContent = row.letter || "";
    tr.children[1].textContent = row.colour ? `${row.vertex} ${row.colour === "B" ? "Black" : "White"}` : row.vertex;
    tr.children[2].textContent = row.after_tenuki ? `${count(row.games)} (${count(row.after_tenuki)} after tenuki)` : count(row.games);
    if (row.after_tenuki !== undefined) {  // a pattern's continuation: Kombilo's counts
      tr.children[2].title = `${count(row.at_once)} at once, ${count(row.after_tenuki)} after moves elsewhere`;
    }
    winRateCell(tr, row.games, percent, row.colour || position.to_move, position.total);
    if (isRare(row.games, position.total, row.ai, position.ai && position.ai.mark_visits)) {
      tr.classList.add("rare");
      rare += 1;
    }
    // a pattern's continuation (its row has a colour) is played in that colour
    tr.addEventListener("click", serial(() => (row.colour ? playPatternRow(state, row) : playSearch(state, row.sgf))));
    if (position.ai) aiCells(tr, row.ai, null, row.ai_missing, position.to_move, position.ai.mark_visits);
    body.appendChild(tr);
  }
  rare += renderAi(state, position, body);
  rareFooter(state, $("next-table"), rare);
}

export const CORNER_NAMES = ["top left", "top right", "bottom left", "bottom right"];

export const CORNER_ROWS = 5;  // continuations listed per corner

// The corner rows' letters: capitals, one per row of the whole table (the API letters each corner's
// rows a, b, c...), so that no letter names two points, nor a point of the next-move table's.
export const CORNER_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";

// The corner book: what was played next in each corner, whatever the rest of the board (the
// engine plays it once the whole board is out of book).  Returns the board letters of its moves
// ({sgf: letter}) and the points of the rarer ones (a Set).
export async function refreshCorners(state) {
  const body = $("corner-table").querySelector("tbody");
  body.replaceChildren();
  rareFooter(state, $("corner-table"), 0);
  let answer;
  try {
    answer = await api(`/api/corners?${query(state)}`);
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
  // The letters go to the rows shown by default first, then to the rarer ones: lettered in table
  // order, a hidden rare row took a letter, and the table and the board skipped it (A, B, D).
  const listedCorners = answer.corners.filter((corner) => corner.same_as === null || corner.same_as === undefined);
  // a row's games against the games that reached its corner (``total`` counts times, up to 4 a game)
  const gamesOf = (corner) => corner.games ?? corner.total;
  const fewOf = (corner, row) => isRare(row.games, gamesOf(corner), row.ai, answer.ai && answer.ai.mark_visits);
  const letters = new Map();
  for (const rarer of [false, true]) {
    for (const corner of listedCorners) {
      for (const row of corner.next.slice(0, CORNER_ROWS)) {
        if (row.letter && fewOf(corner, row) === rarer) letters.set(row, CORNER_LETTERS[letters.size] || "");
      }
    }
  }
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
      const letter = letters.get(row) || "";
      tr.children[0].textContent = letter;
      tr.children[1].textContent = name;
      if (same.length) tr.children[1].classList.add("same");  // a long name: it may wrap
      tr.children[2].textContent = row.vertex;
      tr.children[3].textContent = count(row.games);
      // no colour: the corner book counts a move whoever played it (its bar is the mover's wins)
      winRateCell(tr, row.games, percent, null, gamesOf(corner));
      const few = fewOf(corner, row);
      if (few) {
        tr.classList.add("rare");
        rare += 1;
      }
      tr.title = `${same.length ? "each of these corners" : "this corner"}: ${counted(gamesOf(corner), "game")} ` +
        `(${counted(corner.total, "continuation")} played in it, tenuki ${count(corner.tenuki)}); ` +
        `${row.vertex}: ${counted(row.games, "game")}, ${counted(row.times ?? row.games, "time")}` +
        (same.length ? ` · the move shown in the ${CORNER_NAMES[corner.corner]}` : "");
      tr.addEventListener("click", serial(() => playSearch(state, row.sgf)));
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
  rareFooter(state, $("corner-table"), rare);
  $("corner-summary").textContent = listed
    ? "Corner book: what was played next in each corner · win rate and bar (brown): the wins of the " +
      "player who played the move, Black or White, out of its games"
    : "No corner of this position is in the corner book.";
  return [marks, rareMarks];
}
