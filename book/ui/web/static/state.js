// The page's one state object: what the visitor searched, the filters, the games page, the replayed
// game, the practice and the keyboard cursor.  app.js creates it once and hands it to every function
// that reads or changes it (each takes it as its first argument): no module keeps a view of its own,
// so what a function depends on shows in its call.
//
// The server is stateless: the page keeps the search moves (SGF letters), the filters, the games
// page and the replayed game, and asks the JSON API for everything the rules or the book decide
// (legality, captures, next moves).

export function createState() {
  return {
    size: 19,
    moves: [],        // search moves, SGF points ("" is a pass)
    redo: [],         // moves taken back, for "forward"
    filters: {},      // FILTER_FIELDS' API names -> their text
    within: [],       // earlier searches whose games this view searches within: each its API query string
    // Games go by keyset: page n is asked with after = the last game id of page n - 1. The
    // stack holds that id for every page shown so far (null for the first), so "previous"
    // goes back without counting rows and "next" uses the answer's own `after`.
    gamesAfter: [null],
    gamesNext: null,
    game: null,       // {id, info, moves, symmetry, at}
    gameMove: 0,
    picking: false,   // a drag (or two clicks) on the search board picks the pattern's region
    dragFrom: null,   // the corner a drag on the search board started from
    swallowClick: false,  // the click that ends a press used for picking plays no move
    region: [],       // the pattern's two opposite corners (SGF points)
    markMode: null,   // clicks inside the region mark and unmark points of this kind (a WILDCARDS key)
    wild: new Map(),  // the region's wildcard points: SGF point -> its WILDCARDS key
    pattern: null,    // the last pattern search's answer: the games column lists its games
    patternView: null,  // its region, wildcards and options, as the API was asked them (for the address)
    ai: null,         // KataGo's settings (/api/info; asks: --ai, KataGo asked for what is not stored)
    maxDownload: null,  // the most games one SGF download holds (/api/info's max_download)
    statisticsOnly: false,  // a statistics book (the built-in one, /api/info's note): no game to list or replay
    shownMoves: null,   // the moves of the position on the search board, as in the address
    restoring: false,   // the view is being restored from the address: it is not a new history entry
    savedHash: null,    // the address this page last wrote or restored: it never writes over another
    aiPoll: null,     // the timer of the poll for a position KataGo is working on
    player: null,     // the player page shown in place of search and games: {name, vs, page} (player.js)
    rare: false,      // the rarer moves shown too (RARE_SHARE, FEW_GAMES; the address's rare=1)
    numbers: false,   // move numbers on the replay board's stones (the address's numbers=1)
    position: null,   // the API's answer for the search position (refreshSearch)
    searchMarks: null,  // the letters drawn on the search board ({sgf: letter})
    // practice.js: guess the next move, the joseki quiz
    practice: {
      mode: null,         // "guess", "joseki" or null (the explorer)
      game: null,         // guess: the game's id, the move number asked, the colour guessed ("" both)
      move: null,         // null: the game is over
      moveCount: 0,
      colour: "",
      score: {asked: 0, right: 0, shares: 0},
      line: [],           // joseki: the line's moves (SGF), its corner, the fewest games a move needs
      corner: null,
      minGames: 10,
      next: null,         // joseki: the line continued by the last answer (the API's `next`), or null
      answered: false,    // joseki: the question on the board has been answered
      size: 19,
      stones: [],         // the points occupied on the practice board (a click there is refused here)
    },
    // keyboard.js: the search board's cursor (an SGF point); the table whose Enter redrew it (its first
    // row takes the focus back); keyed: the board's focus came from a key (the cursor shows then only)
    keyboard: {cursor: null, refocus: null, keyed: false},
  };
}
