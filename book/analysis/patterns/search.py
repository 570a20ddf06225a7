"""Pattern search over a book of games: the games that reach a pattern and how they go on.

``search(book, pattern, filters)`` scans the games the filters keep (``index_map.load``, then
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

A search may stop early and go on later (issue 61): with a ``budget.Budget`` and ``partial`` it
answers, once the budget is spent, with the games scanned so far (scanned in ascending game id)
and says how far it got (``PatternResult.games``, ``before``, ``scanned``, ``percent``) and where to
go on (``next_id``: ``from_id`` of the next part).  The parts of one search tile its games, so
their counts add up to the whole search's (``tests/test_web_budget.py``).
"""

from __future__ import annotations

import functools
import threading
import weakref
from dataclasses import dataclass, field

import numpy as np

from fuseki.book.analysis.patterns.budget import Budget
from fuseki.book.analysis.patterns.pattern import Pattern
from fuseki.book.model.stats import ratio
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
        return ratio(self.wins, self.games)


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


@dataclass(eq=False)  # holds arrays: compare the fields you mean
class PatternResult:
    """What a pattern search answers; ``match_ids``/``match_moves``: each matched game and the
    move number of its first match, ascending by game."""

    pattern: Pattern
    total: int  # games that reached the pattern
    continuations: list[Continuation]  # most played first (ties: point order, Black first)
    tenuki: Tenuki
    match_ids: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    match_moves: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    # how far the scan got (``search``'s ``partial``): the games of the search in all (those the
    # filters keep), those before ``from_id`` (scanned by the parts before this one), those this
    # answer scanned, and the id of the first game it did not (None: it went to the end)
    games: int = 0
    first_id: int = 0
    before: int = 0
    scanned: int = 0
    next_id: int | None = None

    @property
    def complete(self) -> bool:
        """Whether the scan went to the last game (of the part asked for)."""
        return self.next_id is None

    @property
    def percent(self) -> float:
        """The share of the search's games scanned up to where this answer stopped, in percent."""
        return 100.0 * (self.before + self.scanned) / self.games if self.games else 100.0

    @functools.cached_property
    def matches(self) -> dict[int, int]:
        """game id -> move number of its first match (built when first read: a search from a
        shell that lists no games never needs it, 0.5 s for 237,785 games)."""
        return dict(zip(self.match_ids.tolist(), self.match_moves.tolist()))


def search(book, pattern: Pattern, filters=None, budget: Budget | None = None, from_id: int = 0,
           until_id: int | None = None, partial: bool = False) -> PatternResult:
    """Search the book's games of the pattern's board size (see the module docstring).
    ``budget``: the scan's (``budget.BudgetSpent`` once it is spent; the web
    page's requests have one, the CLI and the shell none unless ``--budget``).
    ``from_id``, ``until_id``: scan only the games with ids from ``from_id`` and below
    ``until_id`` (the parts of a search that goes on where an earlier answer stopped).
    ``partial``: when the budget is spent, answer with the games scanned so far (in ascending
    game id, the first part at least) and say where to go on (``PatternResult.next_id``)
    instead of raising."""
    from fuseki.book.analysis.patterns import index
    from fuseki.book.model.filters import Filters
    from fuseki.book.storage.connect import BookError

    if getattr(book, "statistics", None) is not None:
        raise BookError("a pattern search needs a book of games; this one holds statistics only")
    filters = filters or Filters()
    index.update(book)
    game_ids, events, offsets, winner_of, held = _indexed_games(book, pattern.size)
    chosen = np.arange(len(game_ids), dtype=np.int64)
    if filters.selects_games() and len(game_ids):
        chosen = chosen[book.mask(filters, int(game_ids.max()))[game_ids]]
    return _scanned(pattern, game_ids, events, offsets, winner_of, held, chosen, budget, from_id, until_id, partial)


def search_file(path: str, pattern: Pattern, budget: Budget | None = None, from_id: int = 0,
                partial: bool = False) -> PatternResult | None:
    """``search`` of every game of the SQLite book file ``path``, read through ``sqlite3`` alone
    (``pattern_files.read_ready``: no SQLAlchemy, no ``Book``), when its index can be scanned as it
    stands; None when it cannot (then ``search`` on the opened ``Book`` answers, doing what the book
    needs first).  ``fuseki pattern`` without filters (issue 61); tests/test_pattern_map.py holds its
    answers equal to ``search``'s.  ``budget``, ``from_id``, ``partial``: ``search``'s."""
    from fuseki.book.storage import pattern_files

    found = pattern_files.read_ready(path, pattern.size)
    if found is None:
        return None
    games, top = found
    game_ids, events, offsets, winner_of, held = _with_winners(games, top)
    return _scanned(pattern, game_ids, events, offsets, winner_of, held,
                    np.arange(len(game_ids), dtype=np.int64), budget, from_id, None, partial)


def _scanned(pattern: Pattern, game_ids: np.ndarray, events: np.ndarray, offsets: np.ndarray,
             winner_of: np.ndarray, held: np.ndarray, chosen: np.ndarray, budget: Budget | None, from_id: int = 0,
             until_id: int | None = None, partial: bool = False) -> PatternResult:
    """The answer of the scan of the ``chosen`` indexed games (indices into ``game_ids``), those with
    ids in [``from_id``, ``until_id``) (``search``'s)."""
    # scan imports numba: here, not at the top, so that importing this module (fuseki pattern
    # does before it reads the position) leaves numba out until the scan runs and the position's
    # few moves are played as Python (engine/core/lazy_jit.py), not by numba's cached kernels
    # loaded for them (issue 61, bench/cli.py)
    from fuseki.book.analysis.patterns import scan

    ids = game_ids[chosen]
    if len(ids) > 1 and not (ids[1:] > ids[:-1]).all():  # scanned in ascending id, so that a part ends at an id
        chosen = chosen[np.argsort(ids, kind="stable")]
        ids = game_ids[chosen]
    games = len(chosen)
    before = int(np.searchsorted(ids, from_id))
    end = len(ids) if until_id is None else int(np.searchsorted(ids, until_id))
    chosen = chosen[before:end]
    table = pattern.placement_table()
    orbits = pattern.orbits()
    orbit_min = pattern.orbit_min()
    moves, places, points, colours, later = scan.run(events, offsets, chosen, held, table, pattern.size,
                                                     orbit_min, pattern.to_move, pattern.moves_from,
                                                     pattern.moves_to, budget, partial)
    scanned = len(moves)
    next_id = int(game_ids[chosen[scanned]]) if scanned < len(chosen) else None
    game_ids = game_ids[chosen[:scanned]]
    matched = np.flatnonzero(moves != scan.NONE)
    continuations, tenuki = _counted(orbits, orbit_min, winner_of[game_ids[matched]], points[matched],
                                     colours[matched], later[matched], table.swapped[places[matched]])
    return PatternResult(pattern, len(matched), continuations, tenuki, game_ids[matched], moves[matched],
                         games, from_id, before, scanned, next_id)


def _counted(orbits: dict[int, tuple[int, ...]], orbit_min: np.ndarray, winners: np.ndarray, points: np.ndarray,
             colours: np.ndarray, skipped: np.ndarray, swapped: np.ndarray) -> tuple[list[Continuation], Tenuki]:
    """The continuations and tenuki of the matched games, counted with numpy (one Python step
    per continuation, not per game: a lone corner stone matches most games of a book)."""
    won = (colours != 0) & (winners == colours)  # in the game's own colours
    colours = np.where(swapped & (colours != 0), 3 - colours, colours)  # back to the pattern's
    inside = points >= 0
    tenuki = Tenuki(int(np.count_nonzero(~inside & (colours == BLACK))),
                    int(np.count_nonzero(~inside & (colours == WHITE))),
                    int(np.count_nonzero(~inside & (colours != BLACK) & (colours != WHITE))))
    if not inside.any():
        return [], tenuki
    keys = orbit_min[points[inside]] * 4 + colours[inside]
    found, at = np.unique(keys, return_inverse=True)
    after = skipped[inside] != 0
    late = np.bincount(at, weights=after, minlength=len(found)).astype(np.int64)
    games = np.bincount(at, minlength=len(found))
    wins = np.bincount(at, weights=won[inside], minlength=len(found)).astype(np.int64)
    continuations = [Continuation(int(key) // 4, orbits[int(key) // 4], int(key) % 4, int(n - k), int(k), int(w))
                     for key, n, k, w in zip(found.tolist(), games.tolist(), late.tolist(), wins.tolist())]
    continuations.sort(key=lambda c: (-c.games, c.point, c.colour))
    return continuations, tenuki


# book -> {size: IndexedGames, winner by game id}: a book's indexed games are read (or mapped,
# index_map) once, then again only when games were added.
_LOADED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_LOADING = threading.Lock()


def _indexed_games(book, size: int):
    """(game ids, events, offsets, winner by game id, points held) of the book's indexed games of ``size``."""
    with _LOADING:
        with book.db.connect() as conn:
            top = book.max_game_id(conn)
        cached = _LOADED.get(book, {}).get(size)
        if cached is not None and cached[0] == top:
            return cached[1:]
        from fuseki.book.analysis.patterns import index_map

        found = _with_winners(index_map.load(book, size), top)
        _LOADED.setdefault(book, {})[size] = (top, *found)
        return found


def _with_winners(games, top: int):
    """(game ids, events, offsets, winner by game id, points held) of ``games`` (an ``IndexedGames``);
    ``top``: the book's largest game id."""
    winner_of = np.zeros(max(top, int(games.game_ids.max()) if len(games.game_ids) else 0) + 1, dtype=np.int8)
    winner_of[games.game_ids] = games.winners
    return games.game_ids, games.events, games.offsets, winner_of, games.held
