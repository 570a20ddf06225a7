// The Go board as SVG: lines, hoshi, coordinates, stones, move numbers, letters and click targets.

import {drawAiMarks} from "./ai.js";

export const SVG = "http://www.w3.org/2000/svg";

export const GTP_COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ";

export const SGF_LETTERS = "abcdefghijklmnopqrstuvwxyz";

export function el(name, attrs, parent) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  if (parent) parent.appendChild(node);
  return node;
}

// The hoshi as GTP showboard draws them (fuseki.engine.core.base.star_points; the browser
// test compares the two for every size): the corners from 7x7, the centre on odd sizes from
// 9x9 (7x7 has the four corner points only), all nine on odd sizes from 15x15.
export function starPoints(size) {
  if (size < 7) return [];
  const edge = size >= 13 ? 3 : 2;
  const far = size - 1 - edge;
  const mid = (size - 1) / 2;
  const points = [[edge, edge], [edge, far], [far, edge], [far, far]];
  if (size % 2 === 1 && size >= 9) points.push([mid, mid]);
  if (size % 2 === 1 && size >= 15) points.push([edge, mid], [far, mid], [mid, edge], [mid, far]);
  return points;
}

export function xyOf(sgf) {
  return [SGF_LETTERS.indexOf(sgf[0]), SGF_LETTERS.indexOf(sgf[1])];
}

// Draws the board into `svg`: position {stones: {B: [...], W: [...]}, last}, marks
// {sgf: letter} (those of `rare`, a Set, drawn as the rarer moves' letters: hidden until shown),
// and calls onClick(sgf) when an intersection is clicked.
export function drawBoard(svg, size, position, marks, onClick, rare) {
  const unit = 10;
  const margin = 1.5 * unit;  // room for the coordinates, a phone's larger ones too (style.css)
  const span = (size - 1) * unit;
  svg.replaceChildren();
  svg.classList.remove("pv-shown");  // KataGo's line (ai.js drawPv) goes with the old drawing
  delete svg.dataset.pinned;
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
    for (const y of [-margin / 2 - 1, span + margin / 2 + 1]) {
      el("text", {x: i * unit, y: y}, labels).textContent = column;
    }
    for (const x of [-margin / 2 - 1, span + margin / 2 + 1]) {
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
