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
- ``as_black``: their first moves as Black (``MoveStat``: ``black_wins`` their wins,
  ``white_wins`` their losses), each up to symmetry and shown in one orientation: the image in
  the upper right corner, on or right of its diagonal (Q16, R16, R17, not Q17);
- ``as_white``: for each Black first move (shown as above), their replies as White in that
  orientation, equivalent points merged (``MoveStat``, ``white_wins`` their wins).

Where the numbers come from: the player's games are one read of ``game_players`` joined to
``games`` (id, year, date, names, winner, size; never the SGF); the first moves are the rows of
the empty board's position and of the positions after each first move (``Book._visits``, read
once and kept by the book for its busy positions), their game ids matched to the player's by a
binary search, so a player of thousands of games costs no parse of their games.  The
repertoire covers the games of the board size most of the player's games have, starting from
an empty board with Black (handicap games and games White starts are not in it).  The games,
newest first, page as ``Book.games`` does (``player_games``: ``GamesPage``, keyset paging).

Answers are kept per book while its games are unchanged (``Book.version``): the web page's
visitors ask the same players again.  A statistics book has no games: ``StatisticsOnly``.
"""

from __future__ import annotations

import threading
import weakref
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
from sqlalchemy import func, select

from fuseki.book.storage import orbits, schema
from fuseki.book.storage.orbits import MoveStat
from fuseki.book.storage.statbook import IMPORT_HINT, StatisticsOnly
from fuseki.book.storage.store import GamesPage
from fuseki.engine.core import coords
from fuseki.engine.core.base import BLACK, END, PASS, WHITE
from fuseki.engine.core.board import Board

OPPONENTS = 10  # opponents listed, most games together first
KEPT = 256      # reports kept per book (a report of a player of 4,000 games is a few kB)
_kept: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # book -> {(version, name, vs): report}
_lock = threading.Lock()


class NoPlayer(KeyError):
    """No player of that name in the book; ``similar``: names containing it, most games first."""

    def __init__(self, name: str, similar: list[tuple[str, int]]):
        hint = f" (names containing it: {', '.join(n for n, _ in similar)})" if similar else ""
        super().__init__(f"no player named '{name}' in the book{hint}")
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


def _check(book) -> None:
    if book.statistics is not None:
        raise StatisticsOnly(f"{book.statistics.title} holds next-move statistics without players; {IMPORT_HINT}")


def _indexed(conn, book) -> bool:
    """Whether the player index holds every game (a book last written before it may not)."""
    return schema.players_through(conn) >= book.max_game_id(conn)


_ROW = (schema.games.c.id, schema.games.c.year, schema.games.c.date, schema.games.c.black,
        schema.games.c.white, schema.games.c.winner, schema.games.c.size)


def _rows(book, folded: str) -> list[tuple]:
    """(id, year, date, black, white, winner, size, black folded, white folded) of every game of
    the player, ids ascending."""
    with book.db.connect() as conn:
        if _indexed(conn, book):
            player = select(schema.players.c.id).where(schema.players.c.name == folded).scalar_subquery()
            ids = select(schema.game_players.c.game_id).where(schema.game_players.c.player_id == player)
            query = select(*_ROW).where(schema.games.c.id.in_(ids)).order_by(schema.games.c.id)
            # the driver's cursor: SQLAlchemy's rows cost more than the query (a player of 3,000 games)
            cursor = conn.connection.dbapi_connection.cursor()
            cursor.execute(str(query.compile(dialect=conn.dialect)), (folded,))
            rows = cursor.fetchall()
            cursor.close()
        else:  # no index yet: every game's names, folded here as the index folds them
            rows = conn.execute(select(*_ROW).order_by(schema.games.c.id)).all()
    fold = schema.fold_name
    rows = [(*row, fold(row[3] or ""), fold(row[4] or "")) for row in rows]
    return [row for row in rows if folded in row[7:9]]


def find_players(book, text: str, limit: int = 20) -> list[tuple[str, int]]:
    """(name as kept, games) of the players whose name contains ``text`` (any case), most games
    first, then by name; at most ``limit``."""
    _check(book)
    folded = _folded(text)
    pattern = "%" + schema._escape_like(folded) + "%"
    with book.db.connect() as conn:
        if _indexed(conn, book):
            gp, players = schema.game_players, schema.players
            matching = select(players.c.id).where(players.c.name.like(pattern, escape="\\"))
            query = (select(players.c.name, func.count()).select_from(gp.join(players, players.c.id == gp.c.player_id))
                     .where(gp.c.player_id.in_(matching)).group_by(players.c.name)
                     .order_by(func.count().desc(), players.c.name).limit(limit))
            return [(name, int(games)) for name, games in conn.execute(query)]
        counts: Counter = Counter()
        for black, white in conn.execute(select(schema.games.c.black, schema.games.c.white)):
            for name in {schema.fold_name(n) for n in (black, white) if n}:
                if folded in name:
                    counts[name] += 1
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:limit]


def _record(rows: list[tuple], folded: str) -> PlayerRecord:
    counts = [0] * 9
    for row in rows:
        winner = row[5]
        for colour, name, at in ((BLACK, row[7], 3), (WHITE, row[8], 6)):
            if name != folded:
                continue
            counts[at] += 1
            counts[at + 1] += winner == colour
            counts[at + 2] += winner not in (colour, 0)
    games = len(rows)
    return PlayerRecord(games, counts[4] + counts[7], counts[5] + counts[8], *counts[3:])


def _by_year(rows: list[tuple], folded: str) -> list[YearRecord]:
    years: dict[int | None, list[tuple]] = {}
    for row in rows:
        years.setdefault(row[1], []).append(row)
    order = sorted(years, key=lambda y: (y is None, y or 0))
    return [YearRecord(year, _record(years[year], folded)) for year in order]


def _written(rows: list[tuple], folded: str) -> str:
    """The name as written in the newest of ``rows`` (date, then id, as the games list orders)."""
    newest = max(rows, key=lambda row: (row[2] or "", row[0]))
    return newest[3] if newest[7] == folded else newest[4]


def player_report(book, name: str, vs: str | None = None) -> PlayerReport:
    """The player's record, opponents and repertoire (module docstring); with ``vs``, their
    head-to-head against that opponent.  Raises NoPlayer (a KeyError) for a name without games
    (or an opponent never met: its ``similar`` are then their opponents containing it),
    ValueError for an empty name, StatisticsOnly for a statistics book."""
    _check(book)
    folded = _folded(name)
    other = _folded(vs) if vs and vs.strip() else None
    version = book.version()
    kept = _kept.get(book)
    report = kept.get((version, folded, other)) if kept else None
    if report is not None:
        return report
    rows = _rows(book, folded)
    if not rows:
        raise NoPlayer(name.strip(), find_players(book, name, 5))
    opponents, written = Counter(), {}
    for row in sorted(rows, key=lambda row: (row[2] or "", row[0])):  # the newest spelling stays
        for n, as_written in ((row[7], row[3]), (row[8], row[4])):
            if n and n != folded:
                opponents[n] += 1
                written[n] = as_written
    met = sorted(opponents.items(), key=lambda i: (-i[1], i[0]))[:OPPONENTS]
    report = PlayerReport(name=_written(rows, folded), total=_record(rows, folded), years=_by_year(rows, folded),
                          opponents=[(written[n], games) for n, games in met],
                          **_repertoire(book, rows, folded))
    if other is not None:
        together = _together(rows, folded, other)
        if not together:
            similar = sorted(((written[n], c) for n, c in opponents.items() if other in n),
                             key=lambda i: (-i[1], i[0].lower()))
            raise NoPlayer(vs.strip(), similar[:5])
        report = PlayerReport(**{**report.__dict__, "vs": _written(together, other),
                                 "vs_total": _record(together, folded), "vs_years": _by_year(together, folded)})
    ids = np.array([row[0] for row in (together if other is not None else rows)], dtype=np.int64)
    with _lock:
        kept = _kept.setdefault(book, {})
        if len(kept) >= 2 * KEPT:
            kept.clear()
        kept[(version, folded, other)] = report
        kept[(version, folded, other, "ids")] = ids  # for player_games: the web page asks both at once
    return report


def _together(rows: list[tuple], folded: str, other: str) -> list[tuple]:
    """The rows of games between the player and ``other`` (both folded; the same name: the games
    in which they played both colours)."""
    pair = sorted((folded, other))
    return [row for row in rows if sorted(row[7:9]) == pair]


def player_games(book, name: str, vs: str | None = None, page: int = 1, page_size: int = 20,
                 after: int | None = None) -> GamesPage:
    """The player's games (with ``vs``: their games together), newest first, one page as
    ``Book.games`` pages them (each row's ``move_number`` 0: the game from its start).
    Raises NoPlayer, ValueError (a bad page, an ``after`` not in the book), StatisticsOnly."""
    _check(book)
    folded = _folded(name)
    other = _folded(vs) if vs and vs.strip() else None
    kept = _kept.get(book)
    ids = kept.get((book.version(), folded, other, "ids")) if kept else None  # player_report's, if asked
    if ids is None:
        rows = _rows(book, folded)
        if not rows:
            raise NoPlayer(name.strip(), find_players(book, name, 5))
        ids = [row[0] for row in (_together(rows, folded, other) if other is not None else rows)]
    return book.page_of_games(dict.fromkeys(np.asarray(ids).tolist(), 0), page=page, page_size=page_size, after=after)


# --- the repertoire --------------------------------------------------------------------------


def shown_point(points, size: int) -> int:
    """The point of an orbit shown: in the upper right corner, on or right of its diagonal
    (largest column, then smallest row: R16 of R16 and Q17)."""
    def place(point):
        x, y = coords.point_to_xy(point, size)
        return (-x, y)
    return min(points, key=place)


def _first_visits(book, key: int, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(next points in canonical orientation, winners) of the games ``ids`` (ascending) at their
    first visit of the position ``key``, those that reached it.  A binary search per game in the
    position's codes (ordered by game, then move): no pass over the position's other games."""
    _records, codes = book._codes(key, every_row=True)
    if len(codes) > 1 and not (codes[1:] >= codes[:-1]).all():
        codes = np.sort(codes)
    at = np.searchsorted(codes, ids << schema.GAME_SHIFT)  # each game's first code: its first visit
    inside = at < len(codes)
    found = codes[at[inside]]
    found = found[(found >> schema.GAME_SHIFT) == ids[inside]]
    return ((found >> schema.NEXT_SHIFT) & schema.NEXT_MASK) - 2, found & schema.WINNER_MASK


def _repertoire(book, rows: list[tuple], folded: str) -> dict:
    """``size``, ``as_black`` and ``as_white`` of the report (see the module docstring)."""
    size = Counter(row[6] for row in rows).most_common(1)[0][0]
    black = np.array([r[0] for r in rows if r[6] == size and r[7] == folded], dtype=np.int64)
    white = np.array([r[0] for r in rows if r[6] == size and r[8] == folded], dtype=np.int64)
    keys = Board(size).symmetric_keys(BLACK)
    as_black = [MoveStat(_shown(stat, size), stat.points, stat.games, stat.black_wins, stat.white_wins, BLACK)
                for stat in _tally(*_first_visits(book, min(keys), black), size, keys, BLACK)]
    as_white = []
    for first in _tally(*_first_visits(book, min(keys), white), size, keys, WHITE):
        point = _shown(first, size)
        board = Board(size)
        board.play(BLACK, point)
        after = board.symmetric_keys(WHITE)
        first = MoveStat(point, first.points, first.games, first.black_wins, first.white_wins, WHITE)
        as_white.append(Replies(first, _tally(*_first_visits(book, min(after), white), size, after, WHITE)))
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
