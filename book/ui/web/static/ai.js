// KataGo on the page: its columns in the move tables, its candidate moves on the board, the
// line (pv) of a hovered or tapped row, and the poll for a position it is still working on.

import {api, query, serial} from "./api.js";
import {el, xyOf} from "./board.js";
import {$} from "./dom.js";
import {playSearch} from "./search.js";
import {refreshCorners, renderNextMoves, rowMarks} from "./tables.js";

// KataGo's candidate moves, in their own colour: a ring on the moves people play (the best one
// green), a filled disc with KataGo's rank on the moves nobody played.  A candidate whose row the
// table hides until "show rarer moves" (`rare`, rowMarks' Set; KataGo's own move: shallower than
// a mark needs) hides with it.
export function drawAiMarks(svg, position, marks, rare) {
  svg.querySelectorAll(".ai-marks").forEach((node) => node.remove());
  const ai = position.ai;
  if (!ai || ai.status !== "ready") return;
  const unit = 10;
  const occupied = new Set([...position.stones.B, ...position.stones.W]);
  // every point people played here, lettered or not: only 12 letters exist, and a row past them
  // (O17, 2 games) was drawn as KataGo's move nobody played, a filled disc with its rank
  const played = new Set((position.next || []).flatMap((row) => (row.points && row.points.length ? row.points : [row.sgf])));
  const group = el("g", {class: "ai-marks"});
  ai.moves.forEach((move, rank) => {
    for (const sgf of move.points) {
      if (occupied.has(sgf)) continue;
      const [x, y] = xyOf(sgf);
      const lettered = (marks && sgf in marks) || played.has(sgf);
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

// KataGo's line from a move (its pv, SGF points; null: none): numbered stones, the mover's first,
// drawn as stones (the board's own gradients) so that they read as moves, not as the letters and
// KataGo's rank discs, which step back while a line is shown (the board's pv-shown class: the
// stylesheet hides them, or a board of 16 line stones over 21 rank discs reads as neither).  The
// first stone, the hovered move itself, is ringed.  `pinned`: a click or a tap chose the line (it
// stays when the pointer leaves the row); the board's data-pinned holds that line.
export function drawPv(svg, pv, toMove, pinned = false) {
  svg.querySelectorAll(".ai-pv").forEach((node) => node.remove());
  svg.classList.toggle("pv-shown", Boolean(pv));
  if (pv && pinned) svg.dataset.pinned = pv.join(",");
  else delete svg.dataset.pinned;
  if (!pv) return;
  const unit = 10;
  const group = el("g", {class: "ai-pv", "data-line": pv.join(",")});
  pv.forEach((sgf, i) => {
    if (!sgf) return;  // a pass
    const [x, y] = xyOf(sgf);
    const black = (i % 2 === 0) === (toMove === "B");
    const colour = black ? "black" : "white";
    el("circle", {cx: x * unit, cy: y * unit, r: unit * 0.47, "data-sgf": sgf,
                  fill: `url(#${svg.id}-${colour})`,
                  class: `${colour}${i === 0 ? " first" : ""}`}, group);
    el("text", {x: x * unit, y: y * unit, class: colour, "font-size": i + 1 >= 10 ? 4.2 : 5.2},
       group).textContent = String(i + 1);
  });
  svg.insertBefore(group, svg.querySelector(".targets"));
}

// A tap (or a click) on a row's KataGo cells shows its line and keeps it; another on the same row,
// or one anywhere else on the page, hides it.  A mouse's hover shows the line while it lasts.  A
// touch screen's tap also sends the mouse's enter event first: hover listens to pointer events of
// a mouse only, so a tap shows the line at once instead of drawing it and toggling it off again.
function pvPointer(event) {
  return event.pointerType === "mouse";
}

export function setupPvDismiss() {
  document.addEventListener("click", (event) => {
    const board = $("search-board");
    if (!board.dataset.pinned || event.target.closest("td.ai-col")) return;
    drawPv(board, null);
  });
}

// A position KataGo is working on is asked again until its values come (or the visitor moved on).
export function pollAi(state, path) {
  clearTimeout(state.aiPoll);
  state.aiPoll = setTimeout(async () => {
    if (path !== `/api/position?${query(state)}` || state.pattern) return;
    let position;
    try {
      position = await api(path);
    } catch (error) {
      return pollAi(state, path);
    }
    if (path !== `/api/position?${query(state)}` || state.pattern) return;
    if (position.ai.status === "pending") return pollAi(state, path);
    state.position = position;
    renderNextMoves(state, position);
    drawAiMarks($("search-board"), position, state.searchMarks,
                rowMarks(position.next, position.total, position.ai.mark_visits)[1]);
    await refreshCorners(state);  // the same position's values: the corner rows fill in too
    if (position.ai.asking === "pending") pollAi(state, path);  // a deeper search or forced moves still coming
  }, 1000);
}

export const AI_MARKS = {mistake: ["?", "popular mistake"], choice: ["!", "AI's choice, rarely played"],
                  ai: ["AI", "KataGo's move: nobody played it"]};

// KataGo's three columns of a next-move row: its win rate and lead for the player who plays
// the move, the points it loses against the best move evaluated (coloured, its visits shown: lossCell), and
// the mark (book.analysis.ai.mark's rule); no values: why (missing, the answer's ai_missing).  Hovering
// the row, or tapping its KataGo cells, draws the move's line (pv) on the board.
export function aiCells(tr, values, markName, missing, toMove, markVisits) {
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
    const line = values.pv.join(",");
    tr.addEventListener("pointerenter", (event) => {
      if (pvPointer(event) && !$("search-board").dataset.pinned) drawPv($("search-board"), values.pv, toMove);
    });
    tr.addEventListener("pointerleave", (event) => {
      if (pvPointer(event) && !$("search-board").dataset.pinned) drawPv($("search-board"), null);
    });
    for (const td of cells) {
      td.addEventListener("click", (event) => {  // a tap shows the line; the move's name still plays it
        event.stopPropagation();
        const pinned = $("search-board").dataset.pinned === line;
        drawPv($("search-board"), pinned ? null : values.pv, toMove, !pinned);
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
// stylesheet after the number) and the reason likewise (data-why; a narrow panel draws SHORT_WHY's
// form, data-why-short, whose words fit its loss column whole: the title has the reason in full).
export const LOSS_RED = 3;
export const SHORT_WHY = {"not evaluated yet": "not yet"};  // "evaluated" is wider than a phone's column

export function lossCell(td, values, markVisits, missing) {
  if (!values) {
    td.dataset.why = missing;
    if (SHORT_WHY[missing]) td.dataset.whyShort = SHORT_WHY[missing];
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
export function renderAi(state, position, body) {
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
    tr.addEventListener("click", serial(() => playSearch(state, move.sgf)));
    body.appendChild(tr);
  }
  return rare;
}

export function shallowText(visits, markVisits) {
  return `KataGo's move, nobody played it; shallow: ${visits} visits, under the ${markVisits} a mark needs`;
}
