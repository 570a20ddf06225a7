// The search board's moves: play, back, forward, reset, the breadcrumb of the line, and
// refreshSearch, which asks the API for the position and redraws everything that shows it.

import {saveView} from "./address.js";
import {pollAi} from "./ai.js";
import {api, movesText, query, serial} from "./api.js";
import {GTP_COLUMNS, SGF_LETTERS, drawBoard, xyOf} from "./board.js";
import {$, showMessage} from "./dom.js";
import {refreshGames} from "./games.js";
import {clearRegion, drawRegion, searchPattern, toggleMark} from "./pattern.js";
import {refreshCorners, renderNextMoves, rowMarks} from "./tables.js";
import {refreshYears} from "./years.js";

export async function refreshSearch(state) {
  let position;
  try {
    position = await api(`/api/position?${query(state)}`);
  } catch (error) {
    showMessage(error.message);
    return false;
  }
  state.position = position;
  showMessage("");
  const [marks, rare] = rowMarks(position.next, position.total, position.ai && position.ai.mark_visits);
  state.searchMarks = marks;
  drawBoard($("search-board"), position.size, position, marks, serial((sgf) => boardClick(state, sgf)), rare);
  if (position.ai && (position.ai.status === "pending" || position.ai.asking === "pending")) {
    pollAi(state, `/api/position?${query(state)}`);  // the position, a deeper search or forced moves: KataGo works
  }
  state.pattern = null;
  const moves = movesText(state);
  if (moves !== state.shownMoves) clearRegion(state);  // a new position: the old region is not its pattern
  state.shownMoves = moves;
  drawRegion(state);
  const toMove = position.to_move === "B" ? "Black" : "White";
  const last = position.last ? `, last ${position.last.color === "B" ? "Black" : "White"} ${position.last.vertex}` : "";
  $("search-status").textContent =
    `move ${position.move_number}${last} · ${toMove} to play · captures B ${position.captures.B} W ${position.captures.W}`;
  $("back").disabled = state.moves.length === 0;
  $("forward").disabled = state.redo.length === 0;
  renderLine(state);
  renderNextMoves(state, position);
  saveView(state);  // the new position's history entry now, as its move shows: a "back" may follow at once
  await refreshYears(state);
  const [cornerMarks, cornerRare] = await refreshCorners(state);
  if (!position.next.length && Object.keys(cornerMarks).length) {  // out of book: the corner book's letters
    state.searchMarks = cornerMarks;
    drawBoard($("search-board"), position.size, position, cornerMarks, serial((sgf) => boardClick(state, sgf)), cornerRare);
    drawRegion(state);
  }
  state.gamesAfter = [null];
  await refreshGames(state);
  saveView(state);
  return true;
}

export async function playSearch(state, sgf) {
  const redo = state.redo;
  state.moves.push(sgf);
  state.redo = redo.length && redo[redo.length - 1] === sgf ? redo.slice(0, -1) : [];
  if (!(await refreshSearch(state))) {
    state.moves.pop();
    state.redo = redo;
  }
}

// A pattern's continuation is played in its own colour (the other player passes first when it is
// not that colour's turn: the search moves alternate), and the same pattern is searched again on
// the new position, so the table goes on with the pattern's continuations, as Kombilo walks them.
export async function playPatternRow(state, row) {
  const [region, wild, redo] = [state.region, state.wild, state.redo];
  const toMove = state.position ? state.position.to_move : "B";
  const played = row.colour === toMove ? [row.sgf] : ["", row.sgf];
  state.moves.push(...played);
  state.redo = [];
  if (!(await refreshSearch(state))) {
    state.moves.splice(state.moves.length - played.length);
    state.redo = redo;
    return;
  }
  state.region = region;
  state.wild = wild;
  await searchPattern(state);
  if (played.length === 2) {
    const [mover, other] = row.colour === "B" ? ["Black", "White"] : ["White", "Black"];
    showMessage(`${other} passed so that ${mover} plays ${row.vertex}, the pattern row's colour`);
  }
}

// The line played so far on the search board, under its status line: a breadcrumb of GTP vertices
// ("start › 1 Q16 › 2 D4"), each a button back to the position after that move (the moves taken
// back are forward's, as with back).
export function renderLine(state) {
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
    button.addEventListener("click", serial(() => backTo(state, number)));
    line.appendChild(button);
  };
  crumb(0, "start");
  state.moves.forEach((sgf, i) => crumb(i + 1, `${i + 1} ${sgf ? vertexOf(state, sgf) : "pass"}`));
  line.scrollLeft = line.scrollWidth;  // one line that scrolls: the last moves in view, the board where it was
}

export async function backTo(state, number) {
  if (number >= state.moves.length) return;
  const [moves, redo] = [state.moves, state.redo];
  state.redo = [...redo, ...moves.slice(number).reverse()];
  state.moves = moves.slice(0, number);
  if (!(await refreshSearch(state))) {
    state.moves = moves;
    state.redo = redo;
  }
}

export async function back(state) {
  if (!state.moves.length) return;
  state.redo.push(state.moves.pop());
  await refreshSearch(state);
}

export async function forward(state) {
  if (state.redo.length) await playSearch(state, state.redo[state.redo.length - 1]);
}

export async function reset(state) {
  state.moves = [];
  state.redo = [];
  await refreshSearch(state);
}

export function vertexOf(state, sgf) {
  const [x, y] = xyOf(sgf);
  return GTP_COLUMNS[x] + (state.size - y);
}

export async function boardClick(state, sgf) {
  if (state.swallowClick) {  // the press picked a corner of the region
    state.swallowClick = false;
    return;
  }
  if (state.markMode) return toggleMark(state, sgf);
  if (state.picking) return;
  const stones = state.position ? [...state.position.stones.B, ...state.position.stones.W] : [];
  if (stones.includes(sgf)) return showMessage(`${vertexOf(state, sgf)} is occupied`);  // no need to ask the API
  return playSearch(state, sgf);
}

// The SGF point of a vertex of the board (Q16 -> pd), null for one off the board.
export function sgfOf(state, vertex) {
  const column = GTP_COLUMNS.indexOf(vertex.charAt(0).toUpperCase());
  const row = state.size - Number(vertex.slice(1));
  const on = column >= 0 && column < state.size && Number.isInteger(row) && row >= 0 && row < state.size;
  return on ? SGF_LETTERS[column] + SGF_LETTERS[row] : null;
}
