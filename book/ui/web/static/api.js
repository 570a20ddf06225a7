// The JSON API: the search's query string, fetching with the server's "busy" retries, and the
// queue that runs the visitor's actions one after another.

import {showMessage} from "./dom.js";

// User actions run one after another: a click while an answer is on its way waits
// for it, so quick clicks never see a stale position or lose a move.
export let pending = Promise.resolve();

export function serial(action) {
  return (...args) => {
    pending = pending.then(() => action(...args)).catch((error) => showMessage(error.message));
    return pending;
  };
}

export function movesText(state) {
  return state.moves.map((m) => m || "pass").join(",");
}

export function query(state, extra) {
  const params = new URLSearchParams();
  params.set("size", state.size);
  if (state.moves.length) params.set("moves", movesText(state));
  for (const [key, value] of Object.entries(state.filters)) if (value) params.set(key, value);
  for (const stage of state.within) params.append("within", stage);
  for (const [key, value] of Object.entries(extra || {})) params.set(key, value);
  return params.toString();
}

export async function api(path) {
  for (let tries = 1; ; tries++) {
    const response = await fetch(path);
    const body = await response.json().catch(() => ({error: `HTTP ${response.status}`}));
    // "server busy": another request's pattern scans run (one at a time on the server); ask again
    // after its Retry-After, a few times, before the message is shown
    if (response.status === 503 && body.busy && tries < 4) {
      await new Promise((done) => setTimeout(done, 1000 * (Number(response.headers.get("Retry-After")) || 1)));
      continue;
    }
    if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
    return body;
  }
}
