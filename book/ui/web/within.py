"""Search within results on the web page: each ``within=`` parameter is an earlier search.

Kombilo's "search within": the page searches a position or a pattern, then searches within the
games of that answer, and goes back.  So that an address (a shared link) shows the same view,
the restriction is not a list of game ids but the earlier searches themselves, each a *stage*:
the query string of the search as the API takes it, ``moves`` (and ``size``) for a position,
with ``region`` (and ``any``, ``empty_or_black``, ``empty_or_white``, ``swap``, ``to_move``,
``moves_from``, ``moves_to``: ``reading.pattern_from_options``) for a pattern::

    /api/position?moves=pd,dp,qq&within=moves%3Dpd%2Cdp&within=moves%3Dpd%26region%3DN19%3AT13

Every endpoint that filters games takes them (``app._filters_arg``): the games of every stage
intersect (``gamesets.intersect``) into ``Filters.within``.  The server searches each stage
again, without the year and player filters (a filter keeps or drops each game by itself, so the
earlier answer's games under the filters are these games under the filters, and one stage serves
every filter), and keeps its games per book version (``StageCache``: a pattern stage is a pattern
search, a second or so on a big book; the answers' cache keeps whole answers by URL besides).
The pattern scans of all a request's stages and of its own pattern search share one budget
(``api_args.SCAN_SECONDS``): past it the request is answered 503, and a stage cut short is not kept.
A request's first pattern scan takes the server's scan slot (``admission``), kept until its answer.

``/api/within?within=...`` answers what a view is within: each stage in words with its games,
and the games of all together.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from urllib.parse import parse_qsl, urlencode

from flask import jsonify, request

from fuseki.book.queries.gamesets import GameSet, intersect, position_games
from fuseki.book.ui.web.admission import admit
from fuseki.book.ui.web.api_args import scan_budget
from fuseki.engine.core import base

# A stage's parameters, in the order the page writes them.
STAGE_KEYS = ("size", "moves", "region", "any", "empty_or_black", "empty_or_white", "swap", "to_move",
              "moves_from", "moves_to")
MAX_STAGES = 8  # earlier searches one view may be within (docs/limits.md): each is a search to redo
MAX_STAGE_CHARS = 4000  # one stage's query string (800 moves of 4 characters and a pattern's points)
KEPT_STAGES = 64  # stages whose games StageCache keeps (a set of 366k games is 2.9 MB)


class WithinError(ValueError):
    """A ``within=`` the server cannot search: the message names it and says why (answered 400)."""


def parse_stage(text: str) -> dict[str, str]:
    """A stage from its query string (``moves=pd,dp&region=N19:T13``); WithinError for a
    parameter it does not know or a text longer than ``MAX_STAGE_CHARS``."""
    if len(text) > MAX_STAGE_CHARS:
        raise WithinError(f"a within search is longer than {MAX_STAGE_CHARS} characters")
    stage = {}
    for name, value in parse_qsl(text, keep_blank_values=False):
        if name not in STAGE_KEYS:
            raise WithinError(f"bad within search '{text[:60]}': unknown parameter '{name[:20]}' "
                              f"(it takes {', '.join(STAGE_KEYS)})")
        stage[name] = value
    return stage


def stage_query(stage: dict[str, str]) -> str:
    """The stage as a query string, its parameters in ``STAGE_KEYS`` order (one text per search)."""
    return urlencode([(name, stage[name]) for name in STAGE_KEYS if stage.get(name)], safe=",:")


def stage_text(stage: dict[str, str]) -> str:
    """The stage in words, its moves as a player names them: ``position Q16 D4`` or
    ``pattern N19:T13 of Q16`` (a move that is no point of the board is shown as given)."""
    size = int(stage["size"]) if stage.get("size", "").isdigit() else 19
    moves = " ".join(_vertex(token, size) for token in stage.get("moves", "").replace(",", " ").split())
    moves = moves or "the empty board"
    return f"pattern {stage['region']} of {moves}" if stage.get("region") else f"position {moves}"


def _vertex(token: str, size: int) -> str:
    from fuseki.engine.core import base

    try:
        return base.point_to_vertex(base.parse_point(token, size), size)
    except (base.CoordinateError, ValueError):
        return token


def stage_games(book, stage: dict[str, str], size: int, budget=None) -> GameSet:
    """The games that answered the stage, unfiltered: the position's games, or the pattern's
    matches; ValueError (PatternError, PositionError, BookError) for one that cannot be searched,
    ``budget.BudgetSpent`` for a pattern whose scan spent ``budget`` (a ``budget.Budget``; None: no bound)."""
    from fuseki.book.analysis.patterns.search import search
    from fuseki.book.formats.positions import board_after_moves
    from fuseki.book.model.filters import Filters
    from fuseki.book.ui.reading import pattern_from_options

    size_text = stage.get("size", "") or str(size)
    if not size_text.isascii() or not size_text.isdigit() or not base.MIN_SIZE <= int(size_text) <= base.MAX_SIZE:
        raise ValueError(f"size must be a board size from {base.MIN_SIZE} to {base.MAX_SIZE}, "
                         f"not '{size_text[:10]}'")
    board = board_after_moves([t for t in stage.get("moves", "").replace(" ", ",").split(",") if t], int(size_text))
    if not stage.get("region"):
        return position_games(book, board, Filters())
    return GameSet(search(book, pattern_from_options(board, stage["region"], stage.get), budget=budget).match_ids)


class StageCache:
    """(book version, board size, stage) -> its games; the least recently used go first."""

    def __init__(self, kept: int = KEPT_STAGES):
        self.kept = kept
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple, GameSet] = OrderedDict()

    def games(self, book, stage: dict[str, str], size: int, budget=None) -> GameSet:
        key = (book.version(), size, stage_query(stage))
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                return found
        if stage.get("region"):  # a pattern: a scan, one request's at a time (book.ui.web.admission)
            admit()
            with self._lock:  # another request may have searched it while this one waited
                found = self._entries.get(key)
            if found is not None:
                return found
        found = stage_games(book, stage, size, budget)  # outside the lock: other requests go on meanwhile
        with self._lock:
            self._entries[key] = found
            while len(self._entries) > self.kept:
                self._entries.popitem(last=False)
        return found


def stages_arg() -> list[dict[str, str]]:
    """The request's ``within=`` stages; WithinError for too many or a bad one."""
    texts = [t for t in request.args.getlist("within") if t.strip()]
    if len(texts) > MAX_STAGES:
        raise WithinError(f"at most {MAX_STAGES} within searches, not {len(texts)}")
    return [parse_stage(text) for text in texts]


def stage_sets(cache: StageCache, book, size: int) -> list[tuple[dict[str, str], GameSet]]:
    """(stage, its games) of each of the request's stages; WithinError naming one that cannot be searched."""
    found = []
    for number, stage in enumerate(stages_arg(), 1):
        try:
            found.append((stage, cache.games(book, stage, size, scan_budget())))
        except ValueError as exc:
            raise WithinError(f"within search {number} ({stage_text(stage)[:80]}): {exc}") from None
    return found


def within_arg(cache: StageCache, book, size: int) -> GameSet | None:
    """The games of every one of the request's stages (None: no ``within=``, every game)."""
    return intersect(games for _stage, games in stage_sets(cache, book, size))


def add_within_route(app, shared, cache: StageCache) -> None:
    """``/api/within``: what the request's ``within=`` stages are, in words, with their games."""

    @app.get("/api/within")
    def within_view():
        try:
            found = stage_sets(cache, shared.book, shared.default_size())
        except ValueError as exc:
            return jsonify(error=str(exc)), 400
        together = intersect(games for _stage, games in found)
        return jsonify(games=None if together is None else len(together),
                       stages=[{"query": stage_query(stage), "text": stage_text(stage), "games": len(games)}
                               for stage, games in found])
