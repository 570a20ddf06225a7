// fuseki book explorer: practice (issue 33).
//
// Guess the next move: from a replayed game ("practice this game"), the board hides the moves
// after the one shown; a click is a guess at the next one (of both players, or of one colour);
// the server (/api/practice/guess) says right or wrong, the game's move, how often the book's
// games chose the guess there, and the score, which this page carries from answer to answer.
// Joseki quiz: the server (/api/practice/joseki) plays a corner line from the corner book; a
// click in that corner is the answer: how often it was played there, the most played answers,
// KataGo's stored values of them with fuseki serve --ai; then the line goes on, or a new one.
// The address keeps the practice (practiceParams, read by app.js's viewParams): a reload resumes it.

import {saveView} from "./address.js";
import {aiCells} from "./ai.js";
import {api, serial} from "./api.js";
import {GTP_COLUMNS, SGF_LETTERS, drawBoard} from "./board.js";
import {$, showMessage} from "./dom.js";
import {count, counted} from "./format.js";

// The practice's part of the address (app.js's viewParams adds it): API parameter names where there is one.
export function practiceParams(state) {
  if (state.practice.mode === "guess") {
    return {practice: "guess", practice_game: state.practice.game, practice_move: state.practice.move ?? state.practice.moveCount,
            practice_colour: state.practice.colour, asked: state.practice.score.asked, right: state.practice.score.right,
            shares: state.practice.score.shares};
  }
  if (state.practice.mode === "joseki") {
    return {practice: "joseki", line: state.practice.line.join(","), corner: state.practice.corner, min_games: state.practice.minGames};
  }
  return {};
}

export function practiceVertex(state, sgf) {
  return GTP_COLUMNS[SGF_LETTERS.indexOf(sgf[0])] + (state.practice.size - SGF_LETTERS.indexOf(sgf[1]));
}

export function showPractice(state, mode) {
  state.practice.mode = mode;
  $("practice").hidden = !mode;
  document.querySelector("main").hidden = Boolean(mode);
  $("practice-colour-label").hidden = mode !== "guess";
  for (const id of ["practice-min-label", "practice-continue", "practice-new"]) $(id).hidden = mode !== "joseki";
  $("practice-title").textContent = mode === "guess" ? "Guess the next move" : "Joseki quiz";
  if (mode) window.scrollTo(0, 0);
}

export function drawPractice(state, position, marks) {
  state.practice.size = position.size;
  state.practice.stones = [...position.stones.B, ...position.stones.W];
  drawBoard($("practice-board"), position.size, position, marks || {}, serial((sgf) => practiceClick(state, sgf)));
}

export function percent(share) {
  return `${(100 * share).toFixed(1)}%`;
}

export function playerName(colour) {
  return colour === "B" ? "Black" : "White";
}

// The most played moves of the position under the verdict (with KataGo's columns for the quiz).
export function practiceTable(rows, withAi, heading) {
  $("practice-table").querySelector("thead th:nth-child(2)").textContent = heading || "most played";
  const body = $("practice-table").querySelector("tbody");
  body.replaceChildren();
  rows.forEach((row, i) => {
    const tr = document.createElement("tr");
    tr.dataset.sgf = row.sgf;
    for (const [text, cls] of [["abc"[i] || "", "letter"], [row.vertex, "move"], [count(row.games), "num"],
                               [percent(row.share), "num"]]) {
      const td = document.createElement("td");
      td.textContent = text;
      td.className = cls;
      tr.appendChild(td);
    }
    if (withAi) aiCells(tr, row.ai);
    body.appendChild(tr);
  });
  $("practice-table").hidden = !rows.length;
  $("practice-table").classList.toggle("no-ai", !withAi);  // the guesses have no KataGo columns
}

export function bestMarks(rows) {
  const marks = {};
  rows.forEach((row, i) => { marks[row.sgf] = "abc"[i]; });
  return marks;
}

export function guessQuery(state, extra) {
  const params = new URLSearchParams({game: state.practice.game, move: state.practice.move ?? 0});
  if (state.practice.colour) params.set("colour", state.practice.colour);
  for (const [key, value] of Object.entries(extra || {})) params.set(key, value);
  return params.toString();
}

export function showScore(state) {
  const s = state.practice.score;
  const average = s.asked ? percent(s.shares / s.asked) : "–";
  $("practice-score").textContent = `Score: ${s.right} / ${s.asked} guessed · ` +
    `your guesses' average share of the book's games: ${average}`;
}

// The question at move `move` (or the next one the colour plays): the board before it.
export async function guessQuestion(state, move, marks) {
  state.practice.move = move ?? state.practice.moveCount;  // null: past the last move
  const question = await api(`/api/practice/guess?${guessQuery(state)}`);
  state.practice.move = question.move;
  state.practice.moveCount = question.move_count;
  drawPractice(state, question.position, marks);
  const players = `${question.info.black || "?"} (Black) vs ${question.info.white || "?"} (White)`;
  $("practice-status").textContent = question.move === null
    ? `${players} · the game is over (${question.move_count} moves)`
    : `${players} · move ${question.move + 1} of ${question.move_count}: where did ` +
      `${playerName(question.position.to_move)} play? Click your guess.`;
  showScore(state);
  saveView(state);
}

export async function startGuess(state, gameId, move) {
  state.practice.game = gameId;
  state.practice.colour = $("practice-colour").value;
  state.practice.score = {asked: 0, right: 0, shares: 0};
  showPractice(state, "guess");
  $("practice-verdict").textContent = "";
  practiceTable([], false);
  await guessQuestion(state, move);
}

export async function judgeGuess(state, sgf) {
  const s = state.practice.score;
  const judged = await api(`/api/practice/guess?${guessQuery(state, {point: sgf, asked: s.asked, right: s.right,
                                                                  shares: s.shares})}`);
  state.practice.score = judged.score;
  const guessed = `${judged.point.vertex}: ${count(judged.games)} of the book's ${counted(judged.total, "game")} ` +
    `(${percent(judged.share)}) played it here`;
  $("practice-verdict").textContent = judged.right
    ? `✓ Right: the game played ${judged.actual.vertex}. ${guessed}.`
    : `✗ Wrong: the game played ${judged.actual.vertex} (${counted(judged.actual_games, "game")}, ` +
      `${percent(judged.actual_share)}); you guessed ${guessed}.`;
  $("practice-verdict").dataset.right = judged.right ? "1" : "0";
  practiceTable(judged.best, false, `most played at move ${judged.move + 1}`);
  await guessQuestion(state, judged.next, judged.right ? {} : {[judged.point.sgf]: "×"});
}

export function josekiQuery(state, extra) {
  const params = new URLSearchParams({min_games: state.practice.minGames});
  for (const [key, value] of Object.entries(extra || {})) params.set(key, value);
  return params.toString();
}

export function seed() {
  return Math.floor(Math.random() * 2 ** 31);
}

export function showQuestion(state, question) {
  state.practice.line = question.line.map((m) => m.sgf);
  state.practice.corner = question.corner;
  state.practice.next = null;
  state.practice.answered = false;
  drawPractice(state, question.position);
  const moves = question.line.map((m) => m.vertex).join(" ") || "no move yet";
  $("practice-status").textContent = `${question.corner_name} corner: ${moves} · ` +
    `${playerName(question.to_move)} to play there. Click your answer in the ${question.corner_name} corner.`;
  $("practice-continue").disabled = true;
  saveView(state);
}

export async function newLine(state) {
  const typed = $("practice-min-games").value.trim();
  if (!/^\d+$/.test(typed) || Number(typed) < 1) {
    showMessage(`min games must be a whole number of 1 or more, not '${typed}'`);
    return;
  }
  state.practice.minGames = Number(typed);
  showPractice(state, "joseki");
  $("practice-verdict").textContent = "";
  $("practice-score").textContent = "";
  practiceTable([], false);
  showQuestion(state, await api(`/api/practice/joseki?${josekiQuery(state, {seed: seed()})}`));
}

// A corner is the size // 2 square at each corner of the board (book.analysis.patterns.corners).
export function inCorner(state, sgf) {
  const width = Math.floor(state.practice.size / 2);
  const x = SGF_LETTERS.indexOf(sgf[0]);
  const y = SGF_LETTERS.indexOf(sgf[1]);
  const u = state.practice.corner & 1 ? state.practice.size - 1 - x : x;
  const v = state.practice.corner & 2 ? state.practice.size - 1 - y : y;
  return u < width && v < width;
}

export async function answerQuiz(state, sgf) {
  if (state.practice.answered) {
    showMessage("answered: continue the line or start a new one");
    return;
  }
  if (!inCorner(state, sgf)) {  // the server says so too; asked here, the page logs no refused request
    showMessage(`${practiceVertex(state, sgf)} is not in the quiz's corner`);
    return;
  }
  const answer = await api(`/api/practice/joseki?${josekiQuery(state, {line: state.practice.line.join(","),
                                                                 corner: state.practice.corner, point: sgf, seed: seed()})}`);
  state.practice.answered = true;
  state.practice.next = answer.next;
  const most = answer.best.map((m) => `${m.vertex} (${count(m.games)}, ${percent(m.share)})`).join(", ");
  let text = answer.games
    ? `${answer.point.vertex}: played in ${count(answer.games)} of ${counted(answer.total, "game")} (${percent(answer.share)}) here.`
    : `${answer.point.vertex}: not in the corner book here (of ${counted(answer.total, "game")}).`;
  text += most ? ` Most played: ${most}.` : "";
  if (answer.tenuki) text += ` ${answer.tenuki} players played elsewhere.`;
  const ai = answer.ai;
  if (ai && ai.status === "ready" && answer.point.ai) {
    const v = answer.point.ai;
    text += ` KataGo: win ${percent(v.winrate)}, lead ${v.score_lead.toFixed(1)}, loss ${v.loss.toFixed(1)} points.`;
  } else if (ai && ai.status === "pending") {
    text += " KataGo is thinking about this position: answer again later for its values.";
  } else if (ai && ai.status === "unavailable") {
    text += ` KataGo unavailable: ${ai.reason}`;
  } else if (ai && (ai.status === "busy" || ai.status === "none")) {  // none: not stored (no --ai)
    text += ` ${ai.reason}`;
  }
  $("practice-verdict").textContent = text;
  $("practice-verdict").dataset.games = answer.games;
  practiceTable(answer.best, Boolean(ai));
  const position = {...(await lineBoard(state)), last: null};
  const marks = bestMarks(answer.best);
  if (!(sgf in marks)) marks[sgf] = "×";
  drawPractice(state, position, marks);
  $("practice-continue").disabled = !answer.next;
  $("practice-continue").title = answer.next ? "play your answer and the corner book's reply, then ask again"
    : "the line ends here (or your answer is not a book move of min games): start a new one";
}

export async function lineBoard(state) {
  const question = await api(`/api/practice/joseki?${josekiQuery(state, {line: state.practice.line.join(","), corner: state.practice.corner})}`);
  return question.position;
}

export async function practiceClick(state, sgf) {
  if (state.practice.stones.includes(sgf)) {  // refused here: no request the API would refuse
    showMessage(`${practiceVertex(state, sgf)} is occupied`);
    return;
  }
  if (state.practice.mode === "guess") {
    if (state.practice.move === null) return showMessage("the game is over: close, or practise another game");
    return judgeGuess(state, sgf);
  }
  if (state.practice.mode === "joseki") return answerQuiz(state, sgf);
}

export function closePractice(state) {
  showPractice(state, null);
  saveView(state);
}

// A reloaded page (or an opened link) resumes the practice its address holds.
export async function resumePractice(state, params) {
  const mode = params.get("practice");
  // the practice shown before (another mode, another game) leaves nothing: its verdict, its table,
  // its score (a guess's comes back from the address)
  $("practice-verdict").textContent = "";
  delete $("practice-verdict").dataset.right;
  delete $("practice-verdict").dataset.games;
  $("practice-score").textContent = "";
  practiceTable([], false);
  const number = (key) => (/^\d+$/.test(params.get(key) || "") ? Number(params.get(key)) : null);
  if (mode === "guess" && number("practice_game") !== null) {
    state.practice.game = number("practice_game");
    state.practice.colour = ["B", "W"].includes(params.get("practice_colour")) ? params.get("practice_colour") : "";
    $("practice-colour").value = state.practice.colour;
    const shares = Number(params.get("shares"));
    state.practice.score = {asked: number("asked") ?? 0, right: number("right") ?? 0,
                      shares: Number.isFinite(shares) && shares >= 0 ? shares : 0};
    showPractice(state, "guess");
    await guessQuestion(state, number("practice_move") ?? 0);
  } else if (mode === "joseki" && number("corner") !== null && number("corner") < 4) {
    state.practice.minGames = number("min_games") || 10;
    $("practice-min-games").value = String(state.practice.minGames);
    showPractice(state, "joseki");
    const line = (params.get("line") || "").split(",").filter(Boolean).join(",");
    showQuestion(state, await api(`/api/practice/joseki?${josekiQuery(state, {line, corner: number("corner")})}`));
  }
}

export function startPracticeControls(state) {
  $("practice-game").addEventListener("click", serial(() => startGuess(state, state.game.id, state.gameMove)));
  $("joseki-quiz").addEventListener("click", serial(() => newLine(state)));
  $("practice-new").addEventListener("click", serial(() => newLine(state)));
  $("practice-continue").addEventListener("click", serial(async () => {
    if (state.practice.next) showQuestion(state, state.practice.next);
  }));
  $("practice-close").addEventListener("click", () => closePractice(state));
  $("practice-colour").addEventListener("change", serial(async () => {
    state.practice.colour = $("practice-colour").value;
    if (state.practice.mode === "guess" && state.practice.move !== null) await guessQuestion(state, state.practice.move);
  }));
  // The browser's back and forward: an entry without a practice closes it at once (before app.js's
  // restoreView writes the address, which would keep it), one with a practice resumes it.
  window.addEventListener("popstate", () => {
    const shown = new URLSearchParams(location.hash.slice(1));
    if (shown.get("practice")) serial(() => resumePractice(state, shown))();
    else if (state.practice.mode) showPractice(state, null);
  });
  const params = new URLSearchParams(location.hash.slice(1));
  if (params.get("practice")) {
    serial(async () => {
      try {
        await resumePractice(state, params);
      } catch (error) {  // a game or a line the book does not have: the explorer
        showPractice(state, null);
        throw error;
      }
    })();
  }
}
