// The games list: the position's (or the pattern's) games, a page at a time, and its download.

import {api, query, serial} from "./api.js";
import {$, showMessage} from "./dom.js";
import {patternQuery, scannedPart} from "./pattern.js";
import {playerLink} from "./player.js";
import {openGame} from "./replay.js";
import {count, counted} from "./format.js";

export function person(name, rank) {
  return rank ? `${name || "?"} ${rank}` : name || "?";
}

export async function refreshGames(state) {
  let page;
  try {
    const after = state.gamesAfter[state.gamesAfter.length - 1];
    const keyset = after === null ? {} : {after};
    page = await api(state.pattern ? `/api/pattern/games?${patternQuery(state, {...keyset, ...scannedPart(state)})}`
                                   : `/api/games?${query(state, keyset)}`);
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
      if (name) td.appendChild(playerLink(state, name, text));  // the player's page (player.js)
      else td.textContent = text;
      if (cls) td.className = cls;
      tr.appendChild(td);
    }
    tr.title = [person(row.black, row.black_rank), "vs", person(row.white, row.white_rank), row.date,
                row.event, row.result].filter(Boolean).join(" ");
    tr.addEventListener("click", serial(() => openGame(state, row.id, row.move_number)));
    if (state.game && state.game.id === row.id) tr.classList.add("selected");
    body.appendChild(tr);
  }
  const cut = page.scan && page.scan.next !== null;  // this list's own scan ran out of time as well
  const far = page.scan && (cut || state.pattern.scan.next !== null)
    ? ` of the first ${count(page.scan.before + page.scan.scanned)} of ${count(page.scan.games)} games scanned` : "";
  $("games-summary").textContent = page.note || (page.total
    ? `${counted(page.total, "game")}${far} · mv: moves played before the position`
    : `No games${far}.`);
  $("games-page").textContent = page.pages ? `page ${count(page.page)} of ${count(page.pages)}` : "";
  $("games-prev").disabled = state.gamesAfter.length <= 1;
  $("games-next").disabled = state.gamesNext === null;
  const download = $("games-download");
  download.href = state.pattern ? `/api/pattern/games.sgf?${patternQuery(state, scannedPart(state))}` : `/api/games.sgf?${query(state)}`;
  download.classList.toggle("disabled", !page.total);
  download.textContent = downloadLabel(state, page.total);
}

// The download holds the games listed (the position's, or the pattern's matches after a pattern
// search), the newest /api/info's max_download of them.
export function downloadLabel(state, total) {
  const cap = state.maxDownload;
  const count = (n) => n.toLocaleString("en");
  const whose = state.pattern ? " of the pattern's games" : "";
  if (cap && total > cap) return `download SGF (newest ${count(cap)}${whose} of ${count(total)})`;
  return state.pattern ? `download SGF (the pattern's ${count(total)} game${total === 1 ? "" : "s"})` : "download SGF";
}

export async function gamesPage(state, step) {
  if (step > 0) {
    if (state.gamesNext === null) return;
    state.gamesAfter.push(state.gamesNext);
  } else {
    if (state.gamesAfter.length <= 1) return;
    state.gamesAfter.pop();
  }
  await refreshGames(state);
}
