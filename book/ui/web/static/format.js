// Numbers as the page writes them: every count with thousands separators ("2,339,256 positions",
// not "2339256"), whatever the visitor's locale (the page's words are English).

export function count(n) {
  return typeof n === "number" ? n.toLocaleString("en") : String(n ?? "");
}

// "1 game", "2,339 games"
export function counted(n, word, plural = `${word}s`) {
  return `${count(n)} ${n === 1 ? word : plural}`;
}
