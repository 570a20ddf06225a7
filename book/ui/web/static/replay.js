// The replayed game: opened from the games list (or the address), stepped through in the page
// (replayGame computes every position from the moves, as the engine's rules do).

import {saveView} from "./address.js";
import {api, query, serial} from "./api.js";
import {SGF_LETTERS, drawBoard} from "./board.js";
import {$, showMessage} from "./dom.js";
import {person} from "./games.js";
import {showTab} from "./tabs.js";
import {counted} from "./format.js";

// Opens game `id` at move `at` (where the search position occurred); `shown` ({move, sym}),
// from the address, is the move shown and the orientation it was shown in.
export async function openGame(state, id, at, shown) {
  if (state.statisticsOnly) {  // a link to a game (#game=) of a book without any: the API's "no game with id"
    showMessage(`This book holds next-move statistics only, no game records: there is no game ${id} to replay. ` +
                "To replay games, import them into a book of your own (fuseki import FILES --book mine.sqlite) " +
                "and serve that book.", 15);
    return;
  }
  let game;
  try {
    // the game's setup and every move, once: stepping through it asks nothing more (replayGame)
    const sym = shown && shown.sym !== null && shown.sym !== undefined ? {sym: shown.sym} : {};
    game = await api(`/api/game/${id}?${query(state, {at: at, ...sym})}`);
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
                         `${counted(info.move_count, "move")}`].filter(Boolean).join(" · ");
  box.append(players, details);
  const download = $("game-download");
  download.href = `/api/game/${id}.sgf`;
  download.hidden = false;
  $("practice-game").hidden = false;  // practice.js: guess its moves from the one shown
  await showGameMove(state, shown && shown.move !== null ? shown.move : at);
  if (!state.restoring) revealReplay();
}

// A game opened by a click is shown: its tab (tabs.js), and on a phone or a tablet, where the replay
// lies below the board (or the player page), scrolled into view when less than half of its board is
// in the window.
export function revealReplay() {
  showTab("replay");
  const board = $("replay-board").getBoundingClientRect();
  const seen = Math.min(board.bottom, window.innerHeight) - Math.max(board.top, 0);
  if (seen < board.height / 2) $("replay").scrollIntoView({block: "start"});
}

export async function showGameMove(state, number) {
  const game = state.game;
  if (!game) return;
  number = Math.max(0, Math.min(number, game.moves.length));
  const position = replayGame(game, number);
  state.gameMove = number;
  if (!state.numbers) delete position.numbers;
  drawBoard($("replay-board"), position.size, position, {}, serial(() => showGameMove(state, state.gameMove + 1)));
  const mark = number === game.at ? " · search position" : "";
  const last = position.last ? ` · ${position.last.color} ${position.last.vertex}` : "";
  $("move-number").textContent = `move ${number} / ${game.moves.length}${last}${mark}`;
  saveView(state);
}

// The game's board after `upto` of its moves, computed here from the moves /api/game gave (under
// its symmetry), by the rules of the engine's play (engine/core/_kernels.py): a move takes the
// opponent's chains it leaves without liberties; a move on an occupied point, a suicide or the
// captured side's immediate retake of a single-stone ko is refused, and, as the server's replay of
// a record does (book.formats.positions.board_after_record, strict=False), put on the board as a
// stone without captures, so the replay goes on as the record does. Returns drawBoard's position,
// with `captures` and `numbers` ({sgf: the move that put the stone there}; setup stones: none).
// tests/test_web_hand.py compares it with the rules core's board after every move of real games.
export function replayGame(game, upto) {
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
