"""Pattern search over a book of games: the games that reach a pattern and how they go on.

``search(book, pattern, filters)`` scans the games the filters keep (``index.load``, then
``scan.run``) and turns each game's first match into a continuation in the pattern's own
orientation (the region as the user drew it): a point of the region, merged over the
pattern's own symmetry, with how often Black and White played it and how often the player
who played it won; or a tenuki (a move outside the matching region, a pass, the game's
end).  With ``swap_colours`` a game matching the pattern with colours exchanged gives its
move with the colour exchanged back.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass, field

import numpy as np

from fuseki.book.patterns import index, scan
from fuseki.book.patterns.pattern import Pattern
from fuseki.engine.core.base import BLACK, WHITE


@dataclass
class Continuation:
    """A next move after the match: ``point`` (None: tenuki) and its orbit ``points``."""

    point: int | None
    points: tuple[int, ...] = ()
    black: int = 0  # times Black played it (in the pattern's colours)
    white: int = 0
    black_wins: int = 0  # of those, games the player who played it won
    white_wins: int = 0
    ended: int = 0  # tenuki only: games that ended at the match

    @property
    def games(self) -> int:
        return self.black + self.white + self.ended

    @property
    def winrate(self) -> float:
        """Wins of the player who played it, over the games it was played in."""
        return (self.black_wins + self.white_wins) / self.games if self.games else 0.0

    def add(self, colour: int, won: bool) -> None:
        if colour == BLACK:
            self.black += 1
            self.black_wins += won
        else:
            self.white += 1
            self.white_wins += won


@dataclass
class PatternResult:
    """What a pattern search answers."""

    pattern: Pattern
    total: int  # games that reached the pattern
    continuations: list[Continuation]  # most played first (ties: point order)
    tenuki: Continuation
    matches: dict[int, int] = field(default_factory=dict)  # game id -> move number of its first match


def search(book, pattern: Pattern, filters=None) -> PatternResult:
    """Search the book's games of the pattern's board size (see the module docstring)."""
    from fuseki.book.storage.store import BookError, Filters

    if getattr(book, "statistics", None) is not None:
        raise BookError("a pattern search needs a book of games; this one holds statistics only")
    filters = filters or Filters()
    index.update(book)
    game_ids, events, offsets, winner_of, held = _indexed_games(book, pattern.size)
    chosen = np.arange(len(game_ids), dtype=np.int64)
    if filters.selects_games() and len(game_ids):
        chosen = chosen[book._mask(filters, int(game_ids.max()))[game_ids]]
    table = pattern.placement_table()
    orbits = pattern.orbits()
    orbit_min = pattern.orbit_min()
    moves, places, points, colours = scan.run(events, offsets, chosen, held, table, pattern.size, orbit_min)
    game_ids = game_ids[chosen]
    matched = np.flatnonzero(moves != scan.NONE)
    table_of: dict[tuple[int, ...], Continuation] = {}
    tenuki = Continuation(None)
    winners = winner_of[game_ids[matched]].tolist()
    for g, won_by, point, is_swapped in zip(matched.tolist(), winners, points[matched].tolist(),
                                            table.swapped[places[matched]].tolist()):
        colour = int(colours[g])
        won = won_by == colour
        if is_swapped and colour:
            colour = WHITE if colour == BLACK else BLACK
        if point < 0:
            if colour:
                tenuki.add(colour, won)
            else:
                tenuki.ended += 1
            continue
        orbit = orbits[point]
        entry = table_of.setdefault(orbit, Continuation(orbit[0], orbit))
        entry.add(colour, won)
    continuations = sorted(table_of.values(), key=lambda c: (-c.games, c.point))
    found = {int(game_ids[g]): int(moves[g]) for g in matched.tolist()}
    return PatternResult(pattern, len(found), continuations, tenuki, found)


# book -> {size: (largest game id, game ids, events, offsets, winner by game id)}: a book's
# indexed games are read once, then again only when games were added.
_LOADED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_LOADING = threading.Lock()


def _indexed_games(book, size: int):
    """(game ids, events, offsets, winner by game id, points held) of the book's indexed games of ``size``."""
    from sqlalchemy import select

    from fuseki.book.storage.schema import games

    with _LOADING:
        with book.db.connect() as conn:
            top = book.max_game_id(conn)
            cached = _LOADED.get(book, {}).get(size)
            if cached is not None and cached[0] == top:
                return cached[1:]
            game_ids, events, offsets = index.load(conn, size)
            winner_of = np.zeros(top + 1, dtype=np.int8)
            found = np.array([tuple(row) for row in conn.execute(
                select(games.c.id, games.c.winner).where(games.c.winner.isnot(None)))], dtype=np.int64)
        if len(found):
            winner_of[found[:, 0]] = found[:, 1]
        held = scan.ever_held(events, offsets, ((size + 2) ** 2 + 63) // 64)
        _LOADED.setdefault(book, {})[size] = (top, game_ids, events, offsets, winner_of, held)
        return game_ids, events, offsets, winner_of, held
