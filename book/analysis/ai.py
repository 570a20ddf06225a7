"""KataGo's judgement of a book's positions: the AI value cache first, KataGo for the rest.

``AiJudge(cache, katago, rules, komi, visits)`` answers ``values(boards)`` with one
``ai_values.AiValues`` per (board, side to move): positions already in the cache (any
orientation) are read from it; the others are sent to KataGo all at once (its analysis
threads work on them side by side), stored in canonical orientation, then read back the
same way, so a fresh answer and a cached one are the same numbers on the same points.
``cached`` never asks KataGo: what a human-statistics query may call without waiting.
``force(values, board, to_move, points)`` evaluates human moves the position's search did not
visit, each by a search of its own with the move forced (KataGo's ``allowMoves``,
``forced_query``; the row's visits), and merges them into the row (``ai_values.merge_moves``);
``moves_to_force`` picks them (played in ``MOVES_SHARE`` of the games or more, legal).

A book position is its stones, not a game's history: KataGo gets it as ``initialStones``
with the side to move, which is also what the cache's key says.

``AiValueStores(book_db, cache_db, rules, komi, network)`` is the one reader of stored values
for the ways in (``fuseki search --ai``, the web page, the shell) and the GTP engine's book
chooser (``book.play.book_chooser``: policy ``sound``, the analysis commands): ``values(board,
to_move)`` reads the book's own ``ai_values`` table (a book of games, or a statistics book's
file: the built-in book ships its values there) and the user's cache file, and never asks
KataGo.  Of the rows of the rules and komi it takes the network's when one is named (a KataGo
is known), else any network's, and of those the deepest (``depth``: the most visits asked,
then root visits, then moves evaluated) across all the stores, not the first store's: a
user's cache searched deeper than a book's shipped values wins, whichever holds the position
first.  The answer's settings say which network and visits.

``next_move_values(...)`` gives each human next move its values: KataGo's own values of the
move when the position's row has them (its search visited the move, or the move was
evaluated by a search of its own with the move forced, ``AiJudge.force``: ``source``
"search"), else the stored values of the position after the move (the child, the opponent
to move: ``source`` "child"): win rate ``1 - child.winrate``, lead ``-child.score_lead``.
Loss is always against the best of the moves evaluated for the position with at least
``MARK_VISITS`` visits (``AiValues.best_lead``, ``AiMove.loss``; a child's lead counts for
itself), floored at 0.  ``missing_reason`` says why a move has none.

The marks (``marks``) have one definition, used by the table of ``fuseki search --ai``, the
shell, the web page, ``fuseki ai mistakes``, ``--by-year`` and GTP; it is drawn only from
values of at least ``MARK_VISITS`` visits (the move's own, the position's search and the best
move's) and only where the figures clear the noise of a search of those visits
(``noise_margin``, measured on the built-in book's own positions: docs/katago.md, "How sure a
mark is"); shallower values are shown with their visits and no mark.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import Engine

from fuseki.book.analysis.katago import Analysis, KataGo
from fuseki.book.queries import ai_values
from fuseki.book.queries.ai_values import AiSettings, AiValues
from fuseki.engine.core import base, coords
from fuseki.engine.core.base import BLACK, COLOUR_LETTER, WHITE, IllegalMove, opponent


def query_settings(board, to_move: int, rules: str, komi: float, visits: int) -> dict:
    """The ``KataGo.submit`` arguments that evaluate ``board`` with ``to_move`` to play."""
    size = board.size
    stones = [(COLOUR_LETTER[color], base.point_to_vertex(p, size))
              for color in (BLACK, WHITE) for p in board.stones(color)]
    return {"initial_stones": stones, "initial_player": COLOUR_LETTER[to_move], "rules": rules,
            "komi": komi, "size": size, "max_visits": visits}


def rows_of(analysis: Analysis, size: int) -> tuple[tuple[int, float, float], list[tuple], list[list[int]]]:
    """``ai_values.put``'s root, moves and their lines from a KataGo analysis (points in its
    orientation; a line starts with its move)."""
    root = (analysis.visits, analysis.winrate, analysis.score_lead)
    moves = [(base.vertex_to_point(m.move, size), m.visits, m.winrate, m.score_lead, m.loss, m.prior)
             for m in analysis.moves]
    return root, moves, [line_of(m, size) for m in analysis.moves]


def line_of(move, size: int) -> list[int]:
    """A KataGo candidate's PV as points, the move first (KataGo's PV starts with it)."""
    pv = [base.vertex_to_point(v, size) for v in move.pv]
    first = base.vertex_to_point(move.move, size)
    return pv if pv[:1] == [first] else [first] + pv


def forced_query(board, to_move: int, point: int, rules: str, komi: float, visits: int) -> dict:
    """``query_settings`` with the root's search kept to ``point`` (KataGo's ``allowMoves``):
    the move evaluated by a search of its own, with the position's visits (2 at least: the
    first visit is the root's own, and a search of 1 visit lists no move)."""
    query = query_settings(board, to_move, rules, komi, max(visits, 2))
    query["allow_moves"] = [(COLOUR_LETTER[to_move], base.point_to_vertex(point, board.size))]
    return query


def forced_rows(analysis: Analysis, point: int, size: int) -> tuple[list[tuple], list[list[int]]]:
    """The forced move's row and line of a ``forced_query``'s answer (empty when KataGo gave
    none for it)."""
    _root, moves, lines = rows_of(analysis, size)
    found = [(m, line) for m, line in zip(moves, lines) if m[0] == point]
    return [m for m, _ in found], [line for _, line in found]


def moves_to_force(values: AiValues, board, to_move: int, moves, total: int, share: float,
                   asked=(), min_visits: int = 1) -> list[int]:
    """The points of ``moves`` (each with ``point`` and ``games``) played in at least ``share``
    of the ``total`` games, and of ``asked``, that ``values``' row lacks or holds from fewer
    than ``min_visits`` visits of their own, and that KataGo can evaluate (no pass, no illegal
    move): what ``AiJudge.force`` is given."""
    wanted = [m.point for m in moves if m.games >= share * max(total, 1)] + list(asked)
    found: list[int] = []
    for point in wanted:
        stored = values.move(point)
        shallow = stored is None or stored.visits < min_visits
        if point not in found and shallow and _child(board, to_move, point) is not None:
            found.append(point)
    return found


def deep_enough(visits: int) -> int:
    """The fewest visits of its own a human move needs in a row searched at ``visits`` before
    ``fuseki ai annotate`` leaves it as the search gave it: a quarter of the search (so, at the
    built-in book's 400, the ``MARK_VISITS`` a mark needs); fewer, and the move is asked again
    with the move forced (its own search of ``visits``), which replaces the search's figures."""
    return max(1, visits // 4)


class AiJudge:
    """See the module docstring.  ``katago`` may be None: then only the cache answers."""

    def __init__(self, cache: Engine, katago: KataGo | None, rules: str, komi: float, visits: int,
                 network: str | None = None):
        self.cache = cache
        self.katago = katago
        name = network if network is not None else (katago.network if katago else "")
        self.settings = AiSettings(rules=rules, komi=komi, network=name, visits=visits)
        with cache.begin() as conn:
            ai_values.create(conn)

    def cached(self, board, to_move: int | None = None) -> AiValues | None:
        side = board.to_move if to_move is None else to_move
        with self.cache.connect() as conn:
            return ai_values.get(conn, board.symmetric_keys(side), board.size, self.settings)

    def values(self, boards: list, timeout: float = 600.0,
               progress: Callable[[int, int], None] | None = None) -> list[AiValues]:
        """Values of each (board, side to move) in ``boards``; KataGo evaluates the ones the
        cache lacks (``progress(done, of)`` after each).  Raises KataGoError from KataGo."""
        found = [self.cached(board, side) for board, side in boards]
        missing = [i for i, v in enumerate(found) if v is None]
        if missing and self.katago is None:
            raise ValueError("no KataGo to compute the values the cache lacks")
        s = self.settings
        pendings = [self.katago.submit(**query_settings(*boards[i], s.rules, s.komi, s.visits)) for i in missing]
        deadline = time.monotonic() + timeout
        for done, (i, pending) in enumerate(zip(missing, pendings), 1):  # KataGo works on all meanwhile
            answers = pending.result(max(0.0, deadline - time.monotonic()))
            board, side = boards[i]
            root, moves, lines = rows_of(answers[-1], board.size)
            with self.cache.begin() as conn:  # one at a time: a run stopped half-way keeps what it got
                ai_values.put(conn, board.symmetric_keys(side), board.size, s, root, moves, lines)
            if progress:
                progress(done, len(pendings))
        for i in missing:
            found[i] = self.cached(*boards[i])
        return found

    def force(self, values: AiValues, board, to_move: int, points: list[int], timeout: float = 600.0) -> AiValues:
        """``values`` with each of ``points`` evaluated by KataGo with the move forced (its
        ``allowMoves``), at ``values``' visits, rules and komi, merged into the row of
        ``values``' settings in ``self.cache`` (the row itself is copied there first: it may
        have been read from a read-only store); the row read back.  A move KataGo refuses is
        left out (``KataGoQueryError`` is not raised); other ``KataGoError`` is."""
        from fuseki.book.analysis.katago import KataGoQueryError

        s = values.settings
        keys, size = board.symmetric_keys(to_move), board.size
        pendings = [(p, self.katago.submit(**forced_query(board, to_move, p, s.rules, s.komi, s.visits)))
                    for p in points]
        with self.cache.begin() as conn:
            ai_values.create(conn)
            ai_values.merge_moves(conn, keys, size, s, (values.visits, values.winrate, values.score_lead),
                                  [(m.point, m.visits, m.winrate, m.score_lead, m.loss, m.prior) for m in values.moves],
                                  [m.pv or (m.point,) for m in values.moves])
        deadline = time.monotonic() + timeout
        for point, pending in pendings:
            try:
                answers = pending.result(max(0.0, deadline - time.monotonic()))
            except KataGoQueryError:
                continue
            moves, lines = forced_rows(answers[-1], point, size)
            if moves:
                with self.cache.begin() as conn:  # each as it comes: a run stopped keeps what it got
                    ai_values.merge_moves(conn, keys, size, s, (values.visits, values.winrate, values.score_lead),
                                          moves, lines)
        with self.cache.connect() as conn:
            return ai_values.get(conn, keys, size, s)


# --- the stored values, whoever stored them ---


class AiValueStores:
    """See the module docstring.  ``book_db``: the book's engine (its ``ai_values`` table is
    read when it has one); ``cache_db``: the cache file's (None: none).  ``network`` None or
    '': any network's values."""

    def __init__(self, book_db: Engine | None, cache_db: Engine | None, rules: str, komi: float,
                 network: str | None = None):
        from sqlalchemy import inspect

        AiSettings(rules, komi, network or "", 0).row_key()  # a komi no whole or half number fails here
        self.rules, self.komi, self.network = rules, komi, network or None
        self.dbs = [db for db in (book_db, cache_db) if db is not None and inspect(db).has_table("ai_values")]
        self._owned: list[Engine] = []

    @classmethod
    def open(cls, book, path: Path | None, rules: str, komi: float, network: str | None = None) -> AiValueStores:
        """The stores of ``book`` (a ``Book``, or None) and the cache file at ``path``
        (``engine.config.ai_cache_path()``; a file not there, or None, is skipped, never made);
        ``close()`` lets it go."""
        from sqlalchemy import create_engine

        cache = create_engine(f"sqlite:///{path}") if path is not None and path.exists() else None
        stores = cls(getattr(book, "db", None), cache, rules, komi, network)
        stores._owned = [cache] if cache is not None else []
        return stores

    def values(self, board, to_move: int | None = None, network: str | None = None) -> AiValues | None:
        """The deepest stored values of (``board``, ``to_move``: default ``board.to_move``) in
        the board's orientation across all the stores (``depth``; of equal depth the book's),
        None when no store has them; ``network`` narrows to that one."""
        side = board.to_move if to_move is None else to_move
        keys = board.symmetric_keys(side)
        deepest = None
        for db in self.dbs:
            with db.connect() as conn:
                found = ai_values.best(conn, keys, board.size, self.rules, self.komi, network or self.network)
            if found is not None and (deepest is None or depth(found) > depth(deepest)):
                deepest = found
        return deepest

    def close(self) -> None:
        for db in self._owned:
            db.dispose()


def depth(values: AiValues) -> tuple[int, int, int, int]:
    """How deep a stored row is, to choose between stores: the visits asked, then the root's
    visits, then how many moves it evaluated (a row with forced moves added beats its copy),
    then their visits (a copy whose shallow moves were searched again with the move forced,
    ``deep_enough``, beats the row it was copied from; ``ai_values.deeper`` for ``copy``)."""
    return values.settings.visits, values.visits, len(values.moves), sum(m.visits for m in values.moves)


# --- a human move's values: KataGo's search, else the position after it (KaTrain's points lost) ---

SEARCH, CHILD = "search", "child"


@dataclass(frozen=True)
class MoveValues:
    """A next move's values for the player who plays it: win rate, score lead, the points it
    loses against the best of the moves evaluated for the position (>= 0), the visits behind
    them (the move's own: its search's, or the position after it's), their ``source``, and
    KataGo's line from the move (``pv``, points in the board's orientation; ``()``: none)."""

    winrate: float
    score_lead: float
    loss: float
    visits: int
    source: str  # SEARCH: KataGo's values of the move; CHILD: the position after the move
    pv: tuple[int, ...] = ()
    position_visits: int = 0  # the root visits of the position's search: ``marks``'
    best_visits: int = 0  # the visits of the best move the loss is measured against: ``marks``'


def next_move_values(values: AiValues, board, to_move: int, moves,
                     child_values: Callable[..., AiValues | None]) -> list[MoveValues | None]:
    """Per move of ``moves`` (each with ``point`` and ``points``, the book's next moves) of the
    position (``board``, ``to_move``) whose values are ``values``: KataGo's candidate values
    when its search visited the move, else from ``child_values(child_board, opponent,
    network)`` (``AiValueStores.values``; asked for ``values``' network), else None."""
    found: list[MoveValues | None] = []
    best = values.best_lead if values.moves else values.score_lead
    for move in moves:
        ai = next((m for m in values.moves if set(m.points) & set(move.points)), None)
        if ai is not None:
            pv = _pv_at(ai, move.point, board, to_move)
            found.append(MoveValues(ai.winrate, ai.score_lead, ai.loss, ai.visits, SEARCH, pv, values.visits,
                                    values.best_visits))
            continue
        child = _child(board, to_move, move.point)
        after = child_values(child, opponent(to_move), values.settings.network) if child is not None else None
        if after is None:
            found.append(None)
            continue
        lead = -after.score_lead
        # the child's best line follows the move: KataGo's reply first
        line = (move.point,) + (after.moves[0].pv or (after.moves[0].point,) if after.moves else ())
        found.append(MoveValues(1.0 - after.winrate, lead, max(best, lead) - lead, after.visits, CHILD, line,
                                values.visits, values.best_visits if lead < best else after.visits))
    return found


def _pv_at(ai, point: int, board, to_move: int) -> tuple[int, ...]:
    """``ai``'s line shown from ``point``, one of the move's equivalent points: turned by the
    symmetry of the position that takes ``ai.point`` to ``point``."""
    if ai.point == point or not ai.pv or point == base.PASS:
        return ai.pv
    keys = board.symmetric_keys(to_move)
    for turn in range(8):
        if keys[turn] == keys[0] and coords.transform_point(turn, ai.point, board.size) == point:
            return tuple(p if p == base.PASS else coords.transform_point(turn, p, board.size) for p in ai.pv)
    return ()


NO_KATAGO, PASS_MOVE, ILLEGAL, NOT_YET = "no KataGo", "pass", "illegal", "not evaluated yet"


def missing_reason(board, to_move: int, point: int, katago: bool) -> str:
    """Why a move shown has no values: a pass or an illegal move (KataGo evaluates neither
    here), else not evaluated yet when a KataGo could be asked, else no KataGo."""
    if point == base.PASS:
        return PASS_MOVE
    if _child(board, to_move, point) is None:
        return ILLEGAL
    return NOT_YET if katago else NO_KATAGO


@dataclass(frozen=True)
class OnePoint:
    """A next move as its one ``point`` (``points`` just it), for ``next_move_values``: a corner
    book move stands for two points of a corner symmetric about its diagonal, which the rest of
    the board may tell apart; its values are those of the point shown."""

    point: int
    points: tuple[int, ...]


def one_point_each(moves) -> list[OnePoint]:
    return [OnePoint(m.point, (m.point,)) for m in moves]


def _child(board, to_move: int, point: int):
    """The board after ``to_move`` plays ``point``, None for a pass or an illegal move."""
    if point == base.PASS:
        return None
    child = board.copy()
    try:
        child.play(to_move, point)
    except IllegalMove:
        return None
    return child


# --- the marks: where KataGo and the players disagree (every way in: one definition) ---

MARK_VISITS = ai_values.DEEP_VISITS  # the fewest visits (the move's, the position's, the best move's) of a mark
MOVES_SHARE = 0.01  # a human move played in this share of the position's games gets values of its own
POPULAR = 0.10  # share of the position's games that makes a move popular
RARE = 0.02  # share under which a move is rarely played
# KataGo judges positions: a pattern smaller than the board has none (the CLI, the shell and the page say so)
WHOLE_BOARD_ONLY = "AI values only for a whole-board pattern"
MISTAKE_POINTS = 1.5  # KataGo's loss, in points, that makes a popular move a mistake (clear of the noise)
GOOD_POINTS = 0.5  # a loss under this is as good as KataGo's best move
# The noise of a score lead searched with v visits, as LEAD_NOISE / sqrt(v) points: the spread
# between the same moves' leads from the built-in book's 400-visit searches (v of their own,
# 1-99) and from searches of their own of 399 visits (3,648 moves, docs/katago.md "How sure a
# mark is": 0.61-0.68 for v of 8 to 99, lower below; 0.7 is the bound taken).
LEAD_NOISE = 0.7
NOISE_SIGMAS = 2.0  # a mark clears the noise by this many standard deviations (about 98% one-sided)
MISTAKE, CHOICE = "mistake", "choice"
MARK_TEXT = {MISTAKE: "? popular mistake", CHOICE: "! AI's choice, rarely played"}


def noise_margin(visits: int, other_visits: int) -> float:
    """Points by which a difference of two leads, of ``visits`` and ``other_visits`` visits,
    may be noise: ``NOISE_SIGMAS`` standard deviations of ``LEAD_NOISE / sqrt(v)`` each."""
    return NOISE_SIGMAS * LEAD_NOISE * math.sqrt(1.0 / max(visits, 1) + 1.0 / max(other_visits, 1))


def deep(value) -> bool:
    """A move's values (``MoveValues``) that a mark may be drawn from: the move's, its position's
    search and the best move's each of at least ``MARK_VISITS`` visits."""
    return value is not None and min(value.visits, value.position_visits, value.best_visits) >= MARK_VISITS


def loses(value, points: float = MISTAKE_POINTS, visits_min: int = MARK_VISITS) -> bool:
    """A move's values (``MoveValues``) say it loses at least ``points`` against the best move,
    clear of the noise (``noise_margin`` of its visits and the best move's), from values of at
    least ``visits_min`` visits (the move's, the position's search, the best move's): what
    makes a mistake for the ``?`` mark, ``fuseki ai mistakes`` and ``--by-year`` alike."""
    if value is None or min(value.visits, value.position_visits, value.best_visits) < visits_min:
        return False
    return value.loss >= points + noise_margin(value.visits, value.best_visits)


def marks(games: list[int], total: int, values: list) -> list[str | None]:
    """The mark of each move of a position (``games[i]`` of its ``total`` games played move i,
    whose values are ``values[i]``, a ``MoveValues`` or None; the list holds the position's most
    played move, as every table does), from deep values only (``deep``):

    - ``MISTAKE`` (?): played in ``POPULAR`` of the games or more, and its loss against the best
      move is at least ``MISTAKE_POINTS`` plus ``noise_margin`` of the two moves' visits;
    - ``CHOICE`` (!): played in under ``RARE`` of the games, within ``GOOD_POINTS`` of the best
      move, and KataGo rates it at least as well as the position's most played move, clear of
      the same noise: its lead is at least that move's plus ``noise_margin`` of the two (a
      lenient margin would draw more marks the shallower the values: measured, a quarter of
      them did not hold at 4x the visits; docs/katago.md, "How sure a mark is").

    None otherwise: also for a move without deep values, and no ``CHOICE`` when the most played
    move has none."""
    total = max(total, 1)
    found: list[str | None] = [None] * len(values)
    if not values:
        return found
    top = values[max(range(len(games)), key=lambda i: games[i])]
    for i, (played, value) in enumerate(zip(games, values)):
        if not deep(value):
            continue
        if played >= POPULAR * total:
            if loses(value):
                found[i] = MISTAKE
        elif played < RARE * total and value.loss < GOOD_POINTS and deep(top) and \
                value.score_lead >= top.score_lead + noise_margin(value.visits, top.visits):
            found[i] = CHOICE
    return found
