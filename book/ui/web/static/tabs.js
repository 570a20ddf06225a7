// The panels beside the board as tabs: "Next moves | Games | Replay" (and, on a phone or a tablet,
// "Pattern · filters": on a desk those tools lie under the board).  The shown panel is main's
// data-tab (style.css shows it); a game opened by a click shows the replay (app.js calls showTab
// before it scrolls the replay into view), a pattern search its next moves.  The tab strip
// follows the WAI-ARIA tabs pattern: one tab stop, the arrow keys (and Home, End) move between tabs.

import {$} from "./dom.js";

export const DESK = window.matchMedia("(min-width: 901px)");  // style.css's desk layout

export function shownTab() {
  return document.querySelector("main").dataset.tab;
}

export function showTab(name, focus = false) {
  if (name === "tools" && DESK.matches) name = "next-moves";  // on a desk the tools are always in view
  document.querySelector("main").dataset.tab = name;
  for (const tab of document.querySelectorAll("#tabs [role=tab]")) {
    const selected = tab.dataset.tab === name;
    tab.setAttribute("aria-selected", String(selected));
    tab.tabIndex = selected ? 0 : -1;
    if (selected && focus) tab.focus();
  }
}

export function tabKey(event) {
  const tabs = [...document.querySelectorAll("#tabs [role=tab]")].filter((tab) => tab.getClientRects().length);
  const at = tabs.indexOf(event.currentTarget);
  const to = {ArrowLeft: at - 1, ArrowRight: at + 1, Home: 0, End: tabs.length - 1}[event.key];
  if (to === undefined) return;
  event.preventDefault();
  event.stopPropagation();  // app.js steps the replayed game on the page's other arrow keys
  showTab(tabs[(to + tabs.length) % tabs.length].dataset.tab, true);
}

export function setupTabs() {
  for (const tab of document.querySelectorAll("#tabs [role=tab]")) {
    tab.addEventListener("click", () => showTab(tab.dataset.tab));
    tab.addEventListener("keydown", tabKey);
  }
  // the answer of a pattern search is the next-move table (on a phone the tools' tab is shown then)
  $("pattern-search").addEventListener("click", () => showTab("next-moves"));
  DESK.addEventListener("change", () => showTab(shownTab()));
  // a link to a game opens on its replay
  if (new URLSearchParams(location.hash.slice(1)).has("game")) showTab("replay");
}
