"""Openings through the years: a position's games per year and its next moves' trends.

``date_profile(book, board)`` answers, for the games that reached a position (the filters
of ``Book.next_moves`` apply, and the same counting: each game once, at its first visit):

- per year, the games that reached it and the *share* of that year's games: those games over
  every game of that year in the book (that the filters keep); games without a date form the
  row ``year None`` ("no date") and are never dropped (a year filter drops them, as it does
  from ``next_moves``);
- per next move (the orbits ``next_moves`` lists, in its order): its games per year, the first
  and last year it was played, and its *trend* (``trend``, the rule below).

Where the numbers come from, with no query of its own per position: ``Book.visits`` (the
same read as ``next_moves``: the segments' next-move statistics already count by year, each other game
is one row), and the games' years by id, one array over every game id read once (``id, year``
of the ``games`` table) and kept until games are added, which also gives each year's games
of the book.  A statistics book (the built-in one) keeps no years: ``StatisticsOnly``, "this
book has no dates".

The trend of a move (K = ``recent``, 3 by default): the *recent* years are the K years ending
at the last year of the position's dated games (``last - K + 1 .. last``), the *earlier* ones
every dated year before them.  A move's share in each is its games over the position's games
(next moves and games that ended there) of those years.  ``rising`` when the recent share
is at least one percentage point above the earlier one, ``falling`` when at least one
below, ``steady`` otherwise; None when either period has no game of the position.
``period_changes`` compares two periods the same way, for ``fuseki search --trends``.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass

import numpy as np

from fuseki.book.model.filters import Filters
from fuseki.book.model.stats import ratio
from fuseki.book.storage.position_index import nextmoves, orbits
from fuseki.book.storage.position_index.orbits import MoveStat
from fuseki.book.storage.position_index.statistics_book import StatisticsOnly
from fuseki.engine.core.base import BLACK, END, WHITE

RECENT = 3  # K: the recent years of a move's trend
STEP = 100  # a trend needs a change of at least 1/STEP (one percentage point) of the position's games
_NO_YEAR = nextmoves.NO_YEAR

# book -> (largest game id, year of each game id (NO_YEAR: none), games per year of the book)
_years: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_lock = threading.Lock()


@dataclass(frozen=True)
class YearRow:
    """One year of a position: ``year`` None for the games without a date."""

    year: int | None
    games: int       # games of that year that reached the position
    book_games: int  # games of that year in the book (that the filters keep)

    @property
    def share(self) -> float:
        return ratio(self.games, self.book_games)


@dataclass(frozen=True)
class MoveYears:
    """One next move through the years: ``by_year`` maps a year (None: no date) to its games."""

    move: MoveStat
    by_year: dict[int | None, int]
    first: int | None  # the first and last dated year it was played (None: only undated games)
    last: int | None
    trend: str | None  # rising, falling, steady; None: too few years to say


@dataclass(frozen=True)
class DateProfile:
    """``date_profile``'s answer: ``years`` in year order, no date last; ``moves`` as
    ``next_moves`` lists them; ``recent``: the years (from, to) of the trends' recent period."""

    total: int
    years: list[YearRow]
    moves: list[MoveYears]
    recent: tuple[int, int] | None
    k: int = RECENT

    def games_in(self, low: int | None, high: int | None) -> int:
        """The position's games of the dated years low..high (None: open)."""
        return sum(row.games for row in self.years if _within(row.year, low, high))


def date_profile(book, board, to_move: int | None = None, filters: Filters | None = None,
                 recent: int = RECENT) -> DateProfile:
    """The position's games per year and its next moves' years and trends (module docstring).
    Raises StatisticsOnly for a book without games, ValueError for ``recent`` below 1."""
    if recent < 1:
        raise ValueError("the recent years of a trend must be at least 1")
    try:
        book.index.need_games("years")
    except StatisticsOnly as exc:
        raise StatisticsOnly(f"this book has no dates: {exc}") from None
    side = board.to_move if to_move is None else to_move
    filters = filters or Filters()
    keys = board.symmetric_keys(side)
    found = book.visits(min(keys), filters, every_row=filters.reads_rows())
    game_ids, nexts, winners = found.game_ids, found.nexts, found.winners
    counted = nextmoves.select_years(found.counts, filters.year_from, filters.year_to)
    game_years, book_counts = _book_years(book, filters, int(game_ids.max()) if len(game_ids) else 0)
    years = np.concatenate([game_years[game_ids], counted[:, nextmoves.YEAR]]).astype(np.int64)
    points = np.concatenate([nexts, counted[:, nextmoves.NEXT]]).astype(np.int64)
    weights = np.concatenate([np.ones(len(nexts), dtype=np.int64), counted[:, nextmoves.COUNT]]).astype(np.int64)
    distinct, which = np.unique(years, return_inverse=True)
    per_year = np.bincount(which, weights=weights, minlength=len(distinct)).astype(np.int64)
    rows = [YearRow(_year(y), int(g), int(book_counts.get(int(y), 0)))
            for y, g in zip(distinct.tolist(), per_year.tolist())]
    rows.sort(key=lambda row: (row.year is None, row.year or 0))
    black = np.concatenate([winners == BLACK, counted[:, nextmoves.BLACK_WINS]])
    white = np.concatenate([winners == WHITE, counted[:, nextmoves.WHITE_WINS]])
    played = points != END
    stats = orbits.tally(points[played] + 2, weights[played], black[played], white[played], board.size, keys,
                         side, filters.min_games)
    by_orbit: dict[tuple[int, ...], dict[int | None, int]] = {m.points: {} for m in stats}
    for y in distinct.tolist():
        chosen = played & (years == y)
        if not chosen.any():
            continue
        none = np.zeros(int(chosen.sum()))
        for move in orbits.tally(points[chosen] + 2, weights[chosen], none, none, board.size, keys, side, 1):
            if move.points in by_orbit:
                by_orbit[move.points][_year(y)] = move.games
    dated = [row.year for row in rows if row.year is not None]
    window = (dated[-1] - recent + 1, dated[-1]) if dated else None
    recent_games = sum(r.games for r in rows if window and _within(r.year, *window))
    earlier_games = sum(r.games for r in rows if window and r.year is not None and r.year < window[0])
    moves = []
    for move in stats:
        counts = by_orbit[move.points]
        seen = sorted(y for y in counts if y is not None)
        trend = None
        if window and recent_games and earlier_games:
            now = sum(g for y, g in counts.items() if _within(y, *window))
            before = sum(g for y, g in counts.items() if y is not None and y < window[0])
            trend = trend_word(before, earlier_games, now, recent_games)
        ordered = dict(sorted(counts.items(), key=lambda item: (item[0] is None, item[0] or 0)))
        moves.append(MoveYears(move, ordered, seen[0] if seen else None,
                               seen[-1] if seen else None, trend))
    return DateProfile(int(per_year.sum()), rows, moves, window, recent)


def trend_word(games_before: int, total_before: int, games_now: int, total_now: int) -> str:
    """rising, falling or steady: share now against share before, a change of one percentage
    point or more counting (exact, in integers)."""
    change = games_now * total_before - games_before * total_now  # times total_before * total_now
    if STEP * change >= total_before * total_now:
        return "rising"
    if -STEP * change >= total_before * total_now:
        return "falling"
    return "steady"


@dataclass(frozen=True)
class PeriodChange:
    """A next move's games and share of the position's games in two periods."""

    move: MoveStat
    games: tuple[int, int]
    shares: tuple[float, float]

    @property
    def change(self) -> float:
        return self.shares[1] - self.shares[0]


def period_changes(profile: DateProfile, first: tuple[int | None, int | None],
                   second: tuple[int | None, int | None]) -> tuple[tuple[int, int], list[PeriodChange]]:
    """((the position's games in each period), every next move played in either, its share's
    change from the first period to the second, largest rise first)."""
    totals = (profile.games_in(*first), profile.games_in(*second))
    found = []
    for entry in profile.moves:
        games = tuple(sum(g for y, g in entry.by_year.items() if _within(y, *period)) for period in (first, second))
        if not any(games):
            continue
        shares = tuple(ratio(g, t) for g, t in zip(games, totals))
        found.append(PeriodChange(entry.move, games, shares))
    found.sort(key=lambda c: (-c.change, c.move.point))
    return totals, found


def _within(year: int | None, low: int | None, high: int | None) -> bool:
    return year is not None and (low is None or year >= low) and (high is None or year <= high)


def _year(value: int) -> int | None:
    return None if value == _NO_YEAR else int(value)


def _book_years(book, filters: Filters, needed: int) -> tuple[np.ndarray, dict[int, int]]:
    """(year of each game id, NO_YEAR where none; {year: games of the book that ``filters`` keep})."""
    top = book.max_game_id()
    with _lock:
        kept = _years.get(book)
    if kept is None or kept[0] != top:
        kept = _read_years(book, top)
        with _lock:
            _years[book] = kept
    _top, game_years, counts = kept
    if len(game_years) <= needed:  # games added since the years were read: read again
        kept = _read_years(book, book.max_game_id())
        with _lock:
            _years[book] = kept
        _top, game_years, counts = kept
    if filters.selects_games():
        mask = book.mask(filters, len(game_years) - 1)[: len(game_years)]
        distinct, many = np.unique(game_years[np.flatnonzero(mask)], return_counts=True)
        counts = dict(zip(distinct.tolist(), many.tolist()))
    return game_years, counts


def _read_years(book, top: int) -> tuple[int, np.ndarray, dict[int, int]]:
    """One scan of the games' (id, year): the driver's cursor (SQLAlchemy's rows cost 5x)."""
    with book.db.connect() as conn:
        cursor = conn.connection.dbapi_connection.cursor()
        cursor.execute(f"SELECT id, coalesce(year, {_NO_YEAR}) FROM games")
        pairs = np.array(cursor.fetchall(), dtype=np.int64).reshape(-1, 2)
        cursor.close()
    top = max(top, int(pairs[:, 0].max()) if len(pairs) else 0)
    game_years = np.full(top + 1, _NO_YEAR, dtype=np.int32)
    game_years[pairs[:, 0]] = pairs[:, 1]
    distinct, many = np.unique(pairs[:, 1], return_counts=True)
    return top, game_years, dict(zip(distinct.tolist(), many.tolist()))
