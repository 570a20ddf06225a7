// Search within results: a stack of earlier searches whose games the view searches.

import {api, movesText} from "./api.js";
import {$, showMessage} from "./dom.js";
import {PATTERN_KEYS} from "./pattern.js";
import {refreshSearch} from "./search.js";
import {counted} from "./format.js";

// "search within these games" keeps the answer shown (the position's games, or the pattern's) and
// searches only those from then on; "back" drops the last one. Each is kept as the search itself,
// in the API's parameters (book.ui.web.within: a `within=` per search), so the address holds it.

export const STAGE_KEYS = () => ["size", "moves", ...PATTERN_KEYS];  // a function: PATTERN_KEYS is pattern.js's, evaluated after this module

export function currentStage(state) {
  const asked = {size: String(state.size), moves: state.moves.length ? movesText(state) : "",
                 ...(state.pattern ? state.patternView : {})};
  const params = new URLSearchParams();
  for (const key of STAGE_KEYS()) if (asked[key]) params.set(key, asked[key]);
  return params.toString();
}

export async function refreshWithin(state) {
  $("within-back").disabled = !state.within.length;
  if (!state.within.length) {
    $("within-status").textContent = "searching all games";
    return;
  }
  const params = new URLSearchParams();
  for (const stage of state.within) params.append("within", stage);
  try {
    const found = await api(`/api/within?${params}`);
    $("within-status").textContent = `within ${counted(found.games, "game")}: ` +
      found.stages.map((stage) => stage.text).join(" › ");
  } catch (error) {
    showMessage(error.message);
  }
}

export async function pushWithin(state) {
  if (!state.position) return;
  state.within.push(currentStage(state));
  await refreshWithin(state);
  await refreshSearch(state);  // the position again, within those games (a pattern is searched again by its button)
}

export async function backWithin(state) {
  if (!state.within.length) return;
  state.within.pop();
  await refreshWithin(state);
  await refreshSearch(state);
}
