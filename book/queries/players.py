"""Players: one player's games, record by year, head-to-head and repertoire, from the player index.

A player is a name as the book keeps it (``players``: folded to lower case by
``schema.fold_name``), so ``Lee`` and ``lee`` are one player and the name is matched
exactly, in any case; ``find_players`` finds names by a substring, most games first, for a
visitor to pick from.  ``player_report(book, name, vs=OPP)`` answers:

- ``years``: per year (``None``: games without a date), the player's games, wins and losses,
  in all, as Black and as White; ``total`` the same over every year.  A win is a game whose
  winner is the player's colour, a loss one whose winner is the other colour; a game with no
  winner (a draw, no result, an unknown result) counts in games and in neither.  A game in
  which both names are the player's counts once in games, as Black and as White, and as one
  win and one loss;
- ``opponents``: the players they met most (as written in their newest game together), with
  their games together;
- with ``vs``: ``vs_years`` and ``vs_total``, the same counts over their games together only;
- ``as_black``: their first moves as Black (``MoveStat``: ``stats.black_wins`` their
  wins, ``stats.white_wins`` their losses), each up to symmetry and shown in one orientation: the image in
  the upper right corner, on or right of its diagonal (Q16, R16, R17, not Q17);
- ``as_white``: for each Black first move (shown as above), their replies as White in that
  orientation, equivalent points merged (``MoveStat``, ``stats.white_wins`` their wins).

Where the numbers come from: every game's two players (numbered by folded name), year, winner
and size, as arrays over game ids, read in one scan of the games' headers (never their SGF) the
first time a book version is asked and kept until games are added (``_Games``: 26 bytes a game,
with each player's game ids, and about 16 more for the first moves' rows, ``_position_codes``);
a player's games are then array work, with no query per game.
The first moves are the rows of the empty board's position and of the positions after each
first move (``PositionsIndex.codes``, read once and kept by the index for its busy positions), the
player's game ids found in them by a binary search, so a player of thousands of games costs no
parse of their games.  The
repertoire covers the games of the board size most of the player's games have, starting from
an empty board with Black (handicap games and games White starts are not in it).  The games,
newest first, page as ``Book.games`` does (``player_games``: ``GamesPage``, keyset paging).

Answers are kept per book while its games are unchanged (``Book.version``): the web page's
visitors ask the same players again.  A statistics book has no games: ``StatisticsOnly``.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass, field

import numpy as np
from sqlalchemy import select

from fuseki.book.storage import schema, scheme
from fuseki.book.storage.position_index import orbits
from fuseki.book.storage.position_index.orbits import MoveStat
from fuseki.book.storage.position_index.statistics_book import StatisticsOnly
from fuseki.book.storage.store import GamesPage
from fuseki.engine.core import base
from fuseki.engine.core.base import BLACK, END, PASS, WHITE
from fuseki.engine.core.board import Board

OPPONENTS = 10  # opponents listed, most games together first
KEPT = 256      # reports kept per book (a report of a player of 4,000 games is a few kB)
WARM_FIRST_MOVES = 8  # warm: the positions after this many of the most played first moves are read
_kept: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # book -> {(version, name, vs): report}
_arrays: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # book -> _Games
_lock = threading.Lock()


class NoPlayer(KeyError):
    """No player of that name in the book (or, with ``player``, none that player met);
    ``similar``: names containing it, most games first (their opponents' with ``player``)."""

    def __init__(self, name: str, similar: list[tuple[str, int]], player: str | None = None):
        hint = f" ({'opponents' if player else 'names'} containing it: {', '.join(n for n, _ in similar)})" \
            if similar else ""
        where = f"{player} never met '{name}' in the book" if player else f"no player named '{name}' in the book"
        super().__init__(where + hint)
        self.name, self.similar = name, similar

    def __str__(self) -> str:
        return self.args[0]


@dataclass(frozen=True)
class PlayerRecord:
    """Games, wins and losses, in all and by colour (a game with no winner is neither)."""

    games: int = 0
    wins: int = 0
    losses: int = 0
    black_games: int = 0
    black_wins: int = 0
    black_losses: int = 0
    white_games: int = 0
    white_wins: int = 0
    white_losses: int = 0


@dataclass(frozen=True)
class YearRecord:
    year: int | None  # None: the games without a date
    record: PlayerRecord


@dataclass(frozen=True)
class Replies:
    """A Black first move (``first``: its point in the shown orientation, with the player's games
    as White that began with it) and the player's replies to it, most played first."""

    first: MoveStat
    replies: list[MoveStat]


@dataclass(frozen=True)
class PlayerReport:
    name: str                 # as written in the player's newest game
    total: PlayerRecord
    years: list[YearRecord]   # oldest first, the games without a date last
    opponents: list[tuple[str, int]]
    size: int                 # the board size of the repertoire
    as_black: list[MoveStat]
    as_white: list[Replies]
    vs: str | None = None     # the opponent as written in their newest game together
    vs_total: PlayerRecord = field(default_factory=PlayerRecord)
    vs_years: list[YearRecord] = field(default_factory=list)


def _folded(name: str) -> str:
    name = (name or "").strip()
    if not name:
        raise ValueError("a player's name is empty")
    return schema.fold_name(name)


class _Games:
    """Every game's players, year, winner and size as arrays over game ids, read once per book
    version (one scan of the games' headers, never their SGF): a player's report is then array
    work over their games, with no query per game.  ``names``: folded name -> player number
    (1..), ``black``/``white``: the number of each game's players (0: none)."""

    def __init__(self, book):
        self.version = book.version()
        self.rows: dict[int, np.ndarray] = {}  # _position_codes
        with book.db.connect() as conn:  # the driver's cursor: SQLAlchemy's rows cost 5x the scan
            cursor = conn.connection.dbapi_connection.cursor()
            cursor.execute("SELECT id, black, white, coalesce(year, 0), coalesce(winner, 0), size FROM games")
            rows = cursor.fetchall()
            cursor.close()
        self.names: dict[str, int] = {}
        ids, blacks, whites, years, winners, sizes = zip(*rows) if rows else ((),) * 6
        # a name as written -> its number: the folding runs once per distinct spelling, not per game
        spelled = {raw: self.names.setdefault(schema.fold_name(raw), len(self.names) + 1)
                   for raw in sorted(set(blacks) | set(whites) - {None, ""})}
        spelled[None] = spelled[""] = 0
        top = max(ids, default=0)
        self.black, self.white = np.zeros(top + 1, dtype=np.int32), np.zeros(top + 1, dtype=np.int32)
        self.year = np.zeros(top + 1, dtype=np.int16)  # 0: no date
        self.winner, self.size = np.zeros(top + 1, dtype=np.int8), np.zeros(top + 1, dtype=np.int8)
        at = np.array(ids, dtype=np.int64)
        self.black[at] = [spelled[raw] for raw in blacks]
        self.white[at] = [spelled[raw] for raw in whites]
        self.year[at], self.winner[at], self.size[at] = years, winners, sizes
        self.folded = [""] * (len(self.names) + 1)
        for name, n in self.names.items():
            self.folded[n] = name
        count = len(self.folded)
        # each player's game ids, ascending, as one array cut by player number (``ids_of``): a
        # report's work then grows with the player's games, not with the book's
        both = np.concatenate([self.black, self.white])
        game = np.concatenate([np.arange(top + 1), np.arange(top + 1)])
        keep = both > 0
        both, game = both[keep], game[keep]
        order = np.lexsort((game, both))
        self._ids, self._start = game[order], np.concatenate([[0], np.cumsum(np.bincount(both, minlength=count))])
        same = self.black[self.black == self.white]  # a game of one name on both sides counts once
        self.games = (np.bincount(self.black, minlength=count) + np.bincount(self.white, minlength=count)
                      - np.bincount(same, minlength=count))

    def ids_of(self, number: int) -> np.ndarray:
        """The ids of player ``number``'s games, ascending, each once."""
        ids = self._ids[self._start[number]:self._start[number + 1]]
        if len(ids) > 1 and not (ids[1:] > ids[:-1]).all():  # a game of theirs on both sides: twice
            ids = np.unique(ids)
        return ids


def warm(book) -> None:
    """Read what a first report reads (``fuseki serve``'s workers, before their first visitor: a
    few seconds on a book of 366,535 games): the arrays, the games' date order, the rows of the
    empty board and of the positions after its most played first moves (the games lists of
    those positions read the same); nothing for a statistics book, which has no players."""
    try:
        book.index.need_games("players")
    except StatisticsOnly:
        return
    games = _games(book)
    book._ranks(len(games.black) - 1)
    keys = Board(19).symmetric_keys(BLACK)
    codes = _position_codes(book, games, min(keys))
    nexts = ((codes >> scheme.NEXT_SHIFT) & scheme.NEXT_MASK) - 2
    # the positions after the most played first moves: every answer as White reads one
    for first in _tally(nexts, codes & scheme.WINNER_MASK, 19, keys, BLACK)[:WARM_FIRST_MOVES]:
        if first.point != PASS:
            board = Board(19)
            board.play(BLACK, first.point)
            _position_codes(book, games, min(board.symmetric_keys(WHITE)))


def _games(book) -> _Games:
    version = book.version()
    with _lock:
        kept = _arrays.get(book)
    if kept is None or kept.version != version:
        kept = _Games(book)
        with _lock:
            _arrays[book] = kept
    return kept


def _number(games: _Games, name: str) -> int:
    """The player number of ``name`` (any case); NoPlayer naming the names containing it."""
    folded = _folded(name)
    number = games.names.get(folded, 0)
    if not number:
        similar = sorted(((n, int(games.games[i])) for n, i in games.names.items() if folded in n),
                         key=lambda i: (-i[1], i[0]))
        raise NoPlayer(name.strip(), similar[:5])
    return number


def find_players(book, text: str, limit: int = 20) -> list[tuple[str, int]]:
    """(name as kept, games) of the players whose name contains ``text`` (any case), most games
    first, then by name; at most ``limit``."""
    book.index.need_games("players")
    part = _folded(text)
    games = _games(book)
    found = [(name, int(games.games[n])) for name, n in games.names.items() if part in name and games.games[n]]
    return sorted(found, key=lambda i: (-i[1], i[0]))[:limit]


def _record(games: _Games, ids: np.ndarray, number: int) -> PlayerRecord:
    black, white, winner = games.black[ids] == number, games.white[ids] == number, games.winner[ids]
    counts = [int(x.sum()) for x in (black, black & (winner == BLACK), black & (winner == WHITE),
                                       white, white & (winner == WHITE), white & (winner == BLACK))]
    return PlayerRecord(len(ids), counts[1] + counts[4], counts[2] + counts[5], *counts)


def _by_year(games: _Games, ids: np.ndarray, number: int) -> list[YearRecord]:
    years = games.year[ids]
    order = sorted(np.unique(years).tolist(), key=lambda y: (y == 0, y))  # no date last
    return [YearRecord(year or None, _record(games, ids[years == year], number)) for year in order]


def _written(book, games: _Games, ids: np.ndarray, numbers: list[int]) -> list[str]:
    """Each of ``numbers``' names as written in the newest of ``ids`` (date, then id, as the games
    list orders them) in which they played: one query of those games' names."""
    rank = book._ranks(int(ids.max()))[ids]  # the games' date order, newest first (Book.games')
    newest = {}
    for number in numbers:
        played = (games.black[ids] == number) | (games.white[ids] == number)
        newest[number] = int(ids[played][np.argmin(rank[played])])
    with book.db.connect() as conn:
        query = select(schema.games.c.id, schema.games.c.black, schema.games.c.white).where(
            schema.games.c.id.in_(sorted(set(newest.values()))))
        names = {row[0]: row[1:] for row in conn.execute(query)}
    return [next(n for n in names[newest[number]] if n and schema.fold_name(n) == games.folded[number])
            for number in numbers]


def _player_ids(games: _Games, number: int, other: int | None = None) -> np.ndarray:
    """The ids of the player's games (with ``other``: of their games together), ascending."""
    ids = games.ids_of(number)
    if other is None:
        return ids
    black, white = games.black[ids], games.white[ids]
    return ids[((black == number) & (white == other)) | ((white == number) & (black == other))]


def player_report(book, name: str, vs: str | None = None) -> PlayerReport:
    """The player's record, opponents and repertoire (module docstring); with ``vs``, their
    head-to-head against that opponent.  Raises NoPlayer (a KeyError) for a name without games
    (or an opponent never met: its ``similar`` are then their opponents containing it),
    ValueError for an empty name, StatisticsOnly for a statistics book."""
    book.index.need_games("players")
    folded = _folded(name)
    other_name = _folded(vs) if vs and vs.strip() else None
    version = book.version()
    kept = _kept.get(book)
    report = kept.get((version, folded, other_name)) if kept else None
    if report is not None:
        return report
    games = _games(book)
    number = _number(games, name)
    ids = _player_ids(games, number)
    others = np.where(games.black[ids] == number, games.white[ids], games.black[ids])
    met = np.bincount(others, minlength=len(games.folded))
    met[[0, number]] = 0
    top = [n for n in np.argsort(-met, kind="stable")[:OPPONENTS].tolist() if met[n]]
    top.sort(key=lambda n: (-met[n], games.folded[n]))
    written = _written(book, games, ids, [number, *top])
    report = PlayerReport(name=written[0], total=_record(games, ids, number), years=_by_year(games, ids, number),
                          opponents=[(w, int(met[n])) for w, n in zip(written[1:], top)],
                          **_repertoire(book, games, ids, number))
    if other_name is not None:
        other = games.names.get(other_name, 0)
        if not met[other] or other == 0:  # never met: the opponents whose name contains it
            similar = sorted(((games.folded[n], int(met[n])) for n in np.flatnonzero(met).tolist()
                              if other_name in games.folded[n]), key=lambda i: (-i[1], i[0]))
            raise NoPlayer(vs.strip(), similar[:5], written[0])
        together = _player_ids(games, number, other)
        report = PlayerReport(**{**report.__dict__, "vs": _written(book, games, together, [other])[0],
                                 "vs_total": _record(games, together, number),
                                 "vs_years": _by_year(games, together, number)})
    with _lock:
        kept = _kept.setdefault(book, {})
        if len(kept) >= KEPT:
            kept.clear()
        kept[(version, folded, other_name)] = report
    return report


def player_games(book, name: str, vs: str | None = None, page: int = 1, page_size: int = 20,
                 after: int | None = None) -> GamesPage:
    """The player's games (with ``vs``: their games together), newest first, one page as
    ``Book.games`` pages them (each row's ``move_number`` 0: the game from its start).
    Raises NoPlayer, ValueError (a bad page, an ``after`` not in the book), StatisticsOnly."""
    book.index.need_games("players")
    games = _games(book)
    number = _number(games, name)
    other = _number(games, vs) if vs and vs.strip() else None
    ids = _player_ids(games, number, other)
    return book.page_of_games(dict.fromkeys(ids.tolist(), 0), page=page, page_size=page_size, after=after)


# --- the repertoire --------------------------------------------------------------------------


def shown_point(points, size: int) -> int:
    """The point of an orbit shown: in the upper right corner, on or right of its diagonal
    (largest column, then smallest row: R16 of R16 and Q17)."""
    def place(point):
        x, y = base.point_to_xy(point, size)
        return (-x, y)
    return min(points, key=place)


def _position_codes(book, games: _Games, key: int) -> np.ndarray:
    """The codes of ``key`` (the empty board, or a position after a first move), sorted, kept in
    ``games``: the book keeps a busy position's too (the same array), but asking it costs a
    snapshot of the segments each time, two dozen statements a report (``bench/web_load.py
    --players``: a player's page 7 ms of one core against 2 for a position).  About two codes a
    game: each game visits the empty board once and one position after a first move."""
    codes = games.rows.get(key)
    if codes is None:
        _counts, codes = book.index.codes(key, every_row=True)
        # a busy position's codes come sorted (the book keeps and stores them so); a small one's may not
        if len(codes) > 1 and not (codes[1:] >= codes[:-1]).all():
            codes = np.sort(codes)
        games.rows[key] = codes
    return codes


def _first_visits(book, games: _Games, key: int, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(next points in canonical orientation, winners) of the games ``ids`` (ascending) at their
    first visit of the position ``key``, those that reached it.  A binary search per game in the
    position's codes (ordered by game, then move): no pass over the position's other games."""
    codes = _position_codes(book, games, key)
    at = np.searchsorted(codes, ids << scheme.GAME_SHIFT)  # each game's first code: its first visit
    inside = at < len(codes)
    found = codes[at[inside]]
    found = found[(found >> scheme.GAME_SHIFT) == ids[inside]]
    return ((found >> scheme.NEXT_SHIFT) & scheme.NEXT_MASK) - 2, found & scheme.WINNER_MASK


def _repertoire(book, games: _Games, ids: np.ndarray, number: int) -> dict:
    """``size``, ``as_black`` and ``as_white`` of the report (see the module docstring)."""
    sizes = games.size[ids]
    size = int(np.bincount(sizes).argmax())  # the most games; the smaller size of a tie
    ids = ids[sizes == size]
    black, white = ids[games.black[ids] == number], ids[games.white[ids] == number]
    keys = Board(size).symmetric_keys(BLACK)
    as_black = [MoveStat(_shown(stat, size), stat.points, stat.stats, BLACK)
                for stat in _tally(*_first_visits(book, games, min(keys), black), size, keys, BLACK)]
    as_white = []
    for first in _tally(*_first_visits(book, games, min(keys), white), size, keys, WHITE):
        point = _shown(first, size)
        board = Board(size)
        board.play(BLACK, point)
        after = board.symmetric_keys(WHITE)
        first = MoveStat(point, first.points, first.stats, WHITE)
        as_white.append(Replies(first, _tally(*_first_visits(book, games, min(after), white), size, after, WHITE)))
    return {"size": size, "as_black": as_black, "as_white": as_white}


def _shown(stat: MoveStat, size: int) -> int:
    return PASS if stat.point == PASS else shown_point(stat.points, size)


def _tally(nexts: np.ndarray, winners: np.ndarray, size: int, keys, side: int) -> list[MoveStat]:
    """MoveStats of the visits' next points (canonical orientation; END left out) in the
    orientation of the board whose symmetric keys are ``keys``."""
    played = nexts != END
    kept, won = nexts[played], winners[played]
    return orbits.tally(kept.astype(np.int64) + 2, np.ones(len(kept)), won == BLACK, won == WHITE,
                        size, keys, side, 1)
