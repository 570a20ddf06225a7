// The position's games per year, a small chart under the next-move table.

import {api, query} from "./api.js";
import {el} from "./board.js";
import {$} from "./dom.js";
import {yearSpan} from "./tables.js";
import {count, counted} from "./format.js";

// The position's games per year (/api/position's by_year=1) under the next-move table: a bar per
// year, the line the share of the book's games of that year; nothing for a book without dates
// (the API's years: null, with years_note saying why) or a position no dated game reached.
export async function refreshYears(state) {
  const chart = $("years-chart");
  const path = `/api/position?${query(state, {by_year: 1})}`;
  let years = null;
  try {
    years = (await api(path)).years;
  } catch (error) {
    years = null;  // no dates in this book: no chart
  }
  if (path !== `/api/position?${query(state, {by_year: 1})}`) return;
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
    el("title", {}, bar).textContent = `${row.year}: ${counted(row.games, "game")}, ` +
      `${(100 * row.share).toFixed(1)}% of the book's ${count(row.book_games)}`;
    const y = (height - 1 - (height - 2) * row.share).toFixed(2);
    // a point per year; a one-year book's line is a level stroke across its one bar (a polyline of
    // one point drew nothing, under a caption naming a line)
    if (rows.length === 1) line.push(`${step * 0.1},${y}`, `${step * 0.9},${y}`);
    else line.push(`${i * step + step / 2},${y}`);
  });
  el("polyline", {points: line.join(" "), class: "year-share"}, svg);
  $("years-caption").textContent = rows.length === 1
    ? `games in ${rows[0].year}: ${count(rows[0].games)} (bar); line: their share of the year's ` +
      `${count(rows[0].book_games)} book games, ${(100 * rows[0].share).toFixed(1)}%`
    : `games per year, ${yearSpan(rows[0].year, rows[rows.length - 1].year)} ` +
      `(bars: games, up to ${count(most)}; line: share of the year's book games)`;
}
