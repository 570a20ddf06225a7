"""Pattern search over a book of games: the games that reach a pattern and how they go on.

``search(book, pattern, filters)`` scans the games the filters keep (``index.load``, then
``scan.run``) and turns each game's first match into a continuation in the pattern's own
orientation (the region as the user drew it), counted as Kombilo counts them: the first
later move *inside the region*, by either player, whether it was the very next move ("at
once") or came after moves elsewhere ("after tenuki").  A continuation is a point of the
region, merged over the pattern's own symmetry, and the colour of the player who played it:
Black's and White's are distinct rows, each with how often the player who played it won.
A game that never plays inside the region again (it passes, plays elsewhere or ends) is a
tenuki.  With ``swap_colours`` a game matching the pattern with colours exchanged gives its
colours exchanged back.  The pattern's other Kombilo options (who moves next, a move range:
``pattern`` module) decide which matching position is a game's match.
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
    """A move inside the region after the match: ``point`` and its orbit ``points``, played by
    ``colour`` (BLACK/WHITE, in the pattern's colours)."""

    point: int
    points: tuple[int, ...]
    colour: int
    at_once: int = 0  # games where it was the very next move
    after_tenuki: int = 0  # games where moves elsewhere came first
    wins: int = 0  # of those, games the player who played it won

    @property
    def games(self) -> int:
        return self.at_once + self.after_tenuki

    @property
    def winrate(self) -> float:
        """Wins of the player who played it, over the games it was played in."""
        return self.wins / self.games if self.games else 0.0


@dataclass
class Tenuki:
    """Games that never played inside the region after the match, by who was to move then
    (in the pattern's colours); ``ended``: games that ended at the match."""

    black: int = 0
    white: int = 0
    ended: int = 0

    @property
    def games(self) -> int:
        return self.black + self.white + self.ended


@dataclass
class PatternResult:
    """What a pattern search answers."""

    pattern: Pattern
    total: int  # games that reached the pattern
    continuations: list[Continuation]  # most played first (ties: point order, Black first)
    tenuki: Tenuki
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
    moves, places, points, colours, later = scan.run(events, offsets, chosen, held, table, pattern.size,
                                                     orbit_min, pattern.to_move, pattern.moves_from,
                                                     pattern.moves_to)
    game_ids = game_ids[chosen]
    matched = np.flatnonzero(moves != scan.NONE)
    table_of: dict[tuple[tuple[int, ...], int], Continuation] = {}
    tenuki = Tenuki()
    winners = winner_of[game_ids[matched]].tolist()
    for won_by, point, colour, skipped, is_swapped in zip(
            winners, points[matched].tolist(), colours[matched].tolist(), later[matched].tolist(),
            table.swapped[places[matched]].tolist()):
        won = colour != 0 and won_by == colour
        if is_swapped and colour:
            colour = WHITE if colour == BLACK else BLACK
        if point < 0:
            if colour == BLACK:
                tenuki.black += 1
            elif colour == WHITE:
                tenuki.white += 1
            else:
                tenuki.ended += 1
            continue
        orbit = orbits[point]
        entry = table_of.setdefault((orbit, colour), Continuation(orbit[0], orbit, colour))
        if skipped:
            entry.after_tenuki += 1
        else:
            entry.at_once += 1
        entry.wins += won
    continuations = sorted(table_of.values(), key=lambda c: (-c.games, c.point, c.colour))
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
