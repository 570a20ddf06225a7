// The filters' form: applied once the API accepts them, its refusals said beside their field.

import {api, query} from "./api.js";
import {$} from "./dom.js";
import {refreshSearch} from "./search.js";

// Every filter: its API parameter (/api/position, /api/games, /api/pattern) and its form field.
// Those after player are the header filters, folded under "more filters" (book/model/filters.py).
export const FILTER_FIELDS = [["year_from", "year-from"], ["year_to", "year-to"], ["player", "player"],
  ["event", "event"], ["winner", "winner"], ["won_by", "won-by"], ["margin", "margin"], ["min_rank", "min-rank"],
  ["max_rank", "max-rank"], ["handicap", "handicap"], ["komi", "komi"]];

// The filters are asked of the API before the view takes them: a value it refuses is said by its
// field and the view keeps the filters it had, so moves, points and reset go on working.
export async function applyFilters(state) {
  const filters = {};
  for (const [key, id] of FILTER_FIELDS) filters[key] = $(id).value.trim();
  const before = state.filters;
  state.filters = filters;
  try {
    await api(`/api/position?${query(state)}`);
  } catch (error) {
    state.filters = before;
    filterError(error.message);
    return;
  }
  filterError("");
  await refreshSearch(state);
}

export async function clearFilters(state) {
  $("filters").reset();
  state.filters = {};
  filterError("");
  await refreshSearch(state);
}

// The API's message about a filter, after the field it names ("margin abc: ...", "year_from must
// be ..."): it stays there until the filters are applied again or cleared.
export function filterError(text) {
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

// The filters in force, as the summaries name them (" · filters: years 2000–2010, player Cho"; ""
// without any): "398 games reached this position" must say which games it counts.
const FILTER_WORDS = {player: "player", event: "event", margin: "margin", min_rank: "rank ≥", max_rank: "rank ≤",
                      handicap: "handicap", komi: "komi"};

export function filtersNamed(state, lead = " · filters:") {
  const f = state.filters;
  const named = [];
  if (f.year_from || f.year_to) {
    named.push(f.year_from && f.year_to ? `years ${f.year_from}–${f.year_to}`
      : f.year_from ? `years from ${f.year_from}` : `years up to ${f.year_to}`);
  }
  if (f.winner) named.push(`won by ${f.winner === "B" ? "Black" : "White"}`);
  if (f.won_by) named.push(`won by ${f.won_by}`);
  for (const [key, word] of Object.entries(FILTER_WORDS)) if (f[key]) named.push(`${word} ${f[key]}`);
  return named.length ? `${lead} ${named.join(", ")}` : "";
}
