// fuseki book explorer: the player page (/api/player), shown in place of the search and games
// columns, beside the replay column. 
//
// The address holds it as the API's parameters: name, vs and page (with the search view's own
// parameters kept, so that leaving the page returns to the same search). Opening a player is a
// new history entry: the browser's back button returns to the search.

import {saveView, viewParams} from "./address.js";
import {api, query, serial} from "./api.js";
import {$} from "./dom.js";
import {person} from "./games.js";
import {openGame} from "./replay.js";
import {refreshSearch} from "./search.js";
import {count, counted} from "./format.js";

// The address's player part (viewParams in app.js adds it), none while the search is shown.
export function playerParams(state, params) {
  if (!state.player) return;
  params.set("name", state.player.name);
  if (state.player.vs) params.set("vs", state.player.vs);
  if (state.player.page > 1) params.set("page", state.player.page);
}

// A link to a player's page: an <a> (keyboard-reachable; its address opens the page in a new tab too).
export function playerLink(state, name, label) {
  const link = document.createElement("a");
  link.className = "player-link";
  link.textContent = label || name;
  const params = new URLSearchParams(query(state));
  params.set("name", name);
  link.href = `#${params}`;
  link.title = `${name}: games, record by year, first moves`;
  link.addEventListener("click", (event) => {
    event.preventDefault();
    event.stopPropagation();  // a games-list row opens its game on click: the name opens the player
    openPlayer(state, name, "");
  });
  return link;
}

// (serial and the rest of app.js are there when these run: this file only defines functions)
export function openPlayer(state, name, vs) {
  return serial(async () => {
    state.player = {name, vs: vs || "", page: 1};
    history.pushState(null, "", `#${viewParams(state)}`);
    state.savedHash = location.hash;
    await showPlayer(state);
  })();
}

// Leaves the player page for the search view (a new history entry; the search column is current).
export function leavePlayer(state) {
  state.player = null;
  hidePlayer();
  history.pushState(null, "", `#${viewParams(state)}`);
  state.savedHash = location.hash;
}

export function hidePlayer() {
  document.body.classList.remove("player-mode");
  $("player-view").hidden = true;
}

// Sets the search board to an opening of the repertoire (its moves, Black first).
export async function playOpening(state, moves) {
  leavePlayer(state);
  state.moves = moves;
  state.redo = [];
  history.replaceState(null, "", `#${viewParams(state)}`);
  state.savedHash = location.hash;
  await refreshSearch(state);
}

export function percentText(wins, games) {
  return games ? `${(100 * wins / games).toFixed(1)}%` : "–";
}

export function recordRows(body, years, total) {
  body.replaceChildren();
  const rows = [...years.map((y) => [y.year === null ? "no date" : String(y.year), y]), ["total", total]];
  for (const [label, r] of rows) {
    const tr = document.createElement("tr");
    const cells = [label, count(r.games), count(r.wins), count(r.losses), percentText(r.wins, r.games),
                   `${count(r.black_games)} (${count(r.black_wins)}–${count(r.black_losses)})`,
                   `${count(r.white_games)} (${count(r.white_wins)}–${count(r.white_losses)})`];
    for (const [i, text] of cells.entries()) {
      const td = document.createElement(i === 0 ? "th" : "td");
      td.textContent = text;
      if (i > 0) td.className = "num";
      tr.appendChild(td);
    }
    if (label === "total") tr.className = "total";
    tr.dataset.year = label;
    body.appendChild(tr);
  }
}

export function moveButton(state, move, moves, detail) {
  const button = document.createElement("button");
  button.className = "opening";
  button.dataset.moves = moves.join(",");
  button.textContent = `${move.vertex || "pass"} · ${count(move.games)} · ${percentText(move.wins, move.games)}`;
  button.title = `${detail}: ${counted(move.games, "game")}, ${count(move.wins)} won, ` +
    `${count(move.losses)} lost; click to search this opening`;
  button.addEventListener("click", () => serial(() => playOpening(state, moves))());
  return button;
}

export function renderRepertoire(state, answer) {
  const black = $("player-black");
  black.replaceChildren();
  for (const move of answer.as_black.slice(0, 12)) {
    const li = document.createElement("li");
    li.appendChild(moveButton(state, move, [move.sgf || "pass"], "as Black"));
    black.appendChild(li);
  }
  if (!answer.as_black.length) black.textContent = "no game as Black from an empty board";
  const white = $("player-white");
  white.replaceChildren();
  for (const entry of answer.as_white.slice(0, 8)) {
    const li = document.createElement("li");
    const first = entry.first.sgf || "pass";
    const head = document.createElement("span");
    head.className = "after";
    head.textContent = `after B ${entry.first.vertex || "pass"} (${count(entry.first.games)}):`;
    li.appendChild(head);
    for (const reply of entry.replies.slice(0, 4)) li.appendChild(moveButton(state, reply, [first, reply.sgf || "pass"], "as White"));
    white.appendChild(li);
  }
  if (!answer.as_white.length) white.textContent = "no game as White from an empty board";
}

export function renderPlayerGames(state, games) {
  const body = $("player-games").querySelector("tbody");
  body.replaceChildren();
  for (const row of games.rows) {
    const tr = document.createElement("tr");
    tr.dataset.id = row.id;
    for (const [name, rank, colour] of [[row.black, row.black_rank, "B"], [row.white, row.white_rank, "W"]]) {
      const td = document.createElement("td");
      const me = (name || "").toLowerCase() === state.player.name.toLowerCase();
      if (name && !me) td.appendChild(playerLink(state, name, person(name, rank)));
      else td.textContent = person(name, rank);
      if (row.winner === colour) td.className = "winner";
      tr.appendChild(td);
    }
    for (const text of [row.date || (row.year ? String(row.year) : ""), row.result]) {
      const td = document.createElement("td");
      td.textContent = text || "";
      tr.appendChild(td);
    }
    tr.addEventListener("click", () => serial(() => openGame(state, row.id, 0))());
    if (state.game && state.game.id === row.id) tr.classList.add("selected");
    body.appendChild(tr);
  }
  $("player-page").textContent = games.pages ? `page ${games.page} of ${games.pages}` : "";
  $("player-prev").disabled = games.page <= 1;
  $("player-next").disabled = games.page >= games.pages;
}

// Shows state.player's page (the API's answer for its name, vs and page).
export async function showPlayer(state) {
  const wanted = state.player;
  document.body.classList.add("player-mode");
  $("player-view").hidden = false;
  $("player-name").value = wanted.name;
  $("player-vs").value = wanted.vs;
  const params = new URLSearchParams({name: wanted.name, page: wanted.page});
  if (wanted.vs) params.set("vs", wanted.vs);
  let answer;
  try {
    answer = await api(`/api/player?${params}`);
  } catch (error) {
    if (state.player !== wanted) return;
    $("player-heading").textContent = error.message;
    $("player-content").hidden = true;
    await showSimilar(state, wanted.vs || wanted.name, Boolean(wanted.vs));
    return;
  }
  if (state.player !== wanted) return;  // the visitor moved on meanwhile
  $("player-similar").replaceChildren();
  $("player-content").hidden = false;
  $("player-heading").textContent = `${answer.name}: ${counted(answer.total.games, "game")}`;
  recordRows($("player-years").querySelector("tbody"), answer.years, answer.total);
  const opponents = $("player-opponents");
  opponents.replaceChildren(answer.opponents.length ? "met most: " : "");
  for (const [i, other] of answer.opponents.entries()) {
    const button = document.createElement("button");
    button.className = "opponent";
    button.textContent = `${other.name} (${count(other.games)})`;
    button.title = `head-to-head against ${other.name}`;
    button.addEventListener("click", () => openPlayer(state, answer.name, other.name));
    opponents.append(i ? " " : "", button);
  }
  $("player-vs-block").hidden = answer.vs === null;
  if (answer.vs !== null) {
    $("player-vs-heading").textContent = `against ${answer.vs}: ${counted(answer.vs_total.games, "game")}`;
    recordRows($("player-vs-years").querySelector("tbody"), answer.vs_years, answer.vs_total);
  }
  $("player-games-title").textContent = answer.vs !== null ? `games against ${answer.vs}, newest first` : "games, newest first";
  $("player-size").textContent = `${answer.size}×${answer.size}, shown in the upper right corner; move · games · win %`;
  renderRepertoire(state, answer);
  renderPlayerGames(state, answer.games);
  saveView(state);
}

// Names to pick from when the name (or the opponent) has no games: those containing it.
export async function showSimilar(state, text, opponent) {
  const box = $("player-similar");
  box.replaceChildren();
  let found;
  try {
    found = await api(`/api/players?${new URLSearchParams({q: text})}`);
  } catch (error) {
    return;
  }
  if (!found.players.length) return;
  box.append("names containing it: ");
  for (const {name, games} of found.players) {
    const button = document.createElement("button");
    button.textContent = `${name} (${count(games)})`;
    button.addEventListener("click", () => (opponent ? openPlayer(state, state.player.name, name) : openPlayer(state, name, "")));
    box.append(button, " ");
  }
}

export function playerPage(state, step) {
  return serial(async () => {
    state.player = {...state.player, page: state.player.page + step};
    await showPlayer(state);
  })();
}

export function setupPlayerPage(state) {
  $("player-search").addEventListener("click", () => leavePlayer(state));
  $("player-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const name = $("player-name").value.trim();
    if (name) openPlayer(state, name, $("player-vs").value.trim());
  });
  $("player-prev").addEventListener("click", () => playerPage(state, -1));
  $("player-next").addEventListener("click", () => playerPage(state, 1));
}
