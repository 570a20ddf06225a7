"""KataGo's values of a book's most played positions, computed once and kept (``fuseki ai annotate``).

1. ``popular_positions(book, min_games)``: every position reached by at least ``min_games``
   games, most played first (ties by key), as (canonical key, games).  A book of games counts
   them from its positions index (``statbook_table.from_book``: each game once per position),
   a statistics book (the built-in book) sums its ``next_stats`` rows per key.
2. ``BoardFinder``: a board for a canonical key.  A book of games replays one game that
   reached it to that move (its move number is in the position's rows); a statistics book
   has no games, so the finder walks its next moves from the empty board through the
   positions of at least ``min_games`` games (a position reached only through less played
   ones, or from handicap stones, is not found: ``missing`` counts them).  The side to move
   is the one the key says (``Board.symmetric_keys(side)``): the side that played next in
   the games.
3. ``annotate(...)``: asks KataGo for the positions the AI value cache lacks (``cached_keys``:
   the keys already stored for these settings are skipped, so a re-run goes on where a
   stopped one ended), ``threads`` queries in flight at once, and commits each answer as
   it arrives: a run killed loses at most the ones in flight.

4. ``annotate_moves(...)``: then each human move of those positions played in at least
   ``share`` of the position's games (``book.analysis.ai.MOVES_SHARE``: 1%) that the position's search
   did not visit, or gave fewer than a quarter of its visits (``book.analysis.ai.deep_enough``), is
   asked with the move forced (``book.analysis.ai.forced_query``: KataGo's
   ``allowMoves``, the same visits) and merged into the position's row
   (``ai_values.merge_moves``); a re-run asks only for the moves the rows still lack.

Where the values go is the caller's: the book's own ``ai_values`` table for a writable book
(``Book.writing``), the user's cache file for a read-only statistics book, or a values file
of its own (``fuseki ai annotate --out``) that ``fuseki ai copy`` brings into a book's file.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from sqlalchemy import inspect, select

from fuseki.book.analysis.ai import (
    AiJudge,
    deep_enough,
    forced_query,
    forced_rows,
    moves_to_force,
    query_settings,
    rows_of,
)
from fuseki.book.analysis.katago import KataGoQueryError, KataGoTimeout
from fuseki.book.model.filters import Filters
from fuseki.book.queries import ai_values
from fuseki.book.storage.store import Book
from fuseki.engine.core.base import BLACK, IllegalMove, opponent
from fuseki.engine.core.board import Board
from fuseki.engine.core.zobrist import to_unsigned


@dataclass(frozen=True)
class Popular:
    """A position of the book: its canonical key (unsigned) and the games that reached it."""

    key: int
    games: int


def popular_positions(book: Book, min_games: int, limit: int | None = None) -> list[Popular]:
    """The positions of at least ``min_games`` games, most played first (then by key); the
    first ``limit`` of them when given."""
    if min_games < 1:
        raise ValueError("--min-games must be at least 1")
    with book.db.connect() as conn:
        found = [Popular(key, games) for key, games in book.index.positions(conn, min_games)]
    found.sort(key=lambda p: (-p.games, p.key))
    return found[:limit] if limit is not None else found


def walk_through(every: list[Popular], chosen: list[Popular]) -> list[int]:
    """The keys a statistics book's walk to ``chosen`` (the first of ``every``, most played
    first) may pass: every position played at least as often as the least played chosen one,
    so that ``--limit`` cuts no chosen position off from its parent (a parent has at least its
    child's games unless the child is also reached another way)."""
    if not chosen:
        return []
    return [p.key for p in every if p.games >= chosen[-1].games]


def side_of(board: Board, key: int) -> int | None:
    """The side to move for which ``board`` is the position ``key`` (canonical, unsigned)."""
    for side in (board.to_move, opponent(board.to_move)):
        if min(board.symmetric_keys(side)) == key:
            return side
    return None


class BoardFinder:
    """``find(key)`` -> (board, side to move) of a position of ``wanted``, or None; see the
    module docstring."""

    def __init__(self, book: Book, wanted: Iterable[int], through: Iterable[int] = ()):
        self.book = book
        self.wanted = set(wanted)
        # a statistics book's walk goes through these too (``walk_through``)
        self.through = self.wanted | set(through)
        self._walked: dict[int, tuple[Board, int]] | None = None

    def prepare(self) -> int | None:
        """Walk a statistics book now (seconds for thousands of positions) rather than at the
        first ``find``; how many of the wanted positions it reached (None: a book of games,
        whose boards are read one at a time)."""
        if self.book.stored_games.why_none is None:  # it holds games: a board is read from one
            return None
        if self._walked is None:
            self._walked = self._walk()
        return len(self._walked)

    def find(self, key: int) -> tuple[Board, int] | None:
        if self.prepare() is not None:
            return self._walked.get(key)
        return self._from_a_game(key)

    def _from_a_game(self, key: int) -> tuple[Board, int] | None:
        from fuseki.book.formats.positions import board_after_record

        found = self.book.visits(key, Filters(), every_row=True)
        for game_id, move in zip(found.game_ids[:3].tolist(), found.moves[:3].tolist()):  # the first game will do
            board = board_after_record(self.book.game(game_id), move, strict=False)
            side = side_of(board, key)
            if side is not None:
                return board, side
        return None

    def _walk(self) -> dict[int, tuple[Board, int]]:
        """The wanted positions reachable from an empty board through ``through``."""
        found: dict[int, tuple[Board, int]] = {}
        seen: set[int] = set()
        sizes = self.book.stats().sizes or {19: 1}
        todo = deque((Board(size), BLACK) for size in sorted(sizes))
        while todo:
            board, side = todo.popleft()
            key = min(board.symmetric_keys(side))
            if key not in self.through or key in seen:
                continue
            seen.add(key)
            if key in self.wanted:
                found[key] = (board, side)
            for move in self.book.next_moves(board, side).moves:
                child = board.copy()
                try:
                    child.play(side, move.point)
                except IllegalMove:  # a statistics book's games may break the rules
                    continue
                todo.append((child, opponent(side)))
            if len(found) == len(self.wanted):
                break
        return found


def cached_keys(conn, settings: ai_values.AiSettings) -> set[int]:
    """The canonical keys (unsigned) whose values are stored for ``settings``."""
    if not inspect(conn).has_table("ai_values"):
        return set()
    cols, k = ai_values.ai_values.c, settings.row_key()
    rows = conn.execute(select(cols.key).where(cols.rules == k["rules"], cols.komi_halves == k["komi_halves"],
                                               cols.network == k["network"], cols.visits == k["visits"]))
    return {to_unsigned(int(key)) for key in rows.scalars()}


@dataclass
class AnnotateReport:
    """How a run went: ``total`` positions asked for, ``cached`` of them already stored
    before, ``done`` answered and stored by this run, ``refused`` (KataGo refused the query),
    ``missing`` (no board found), ``stopped`` (by a signal or a request)."""

    total: int = 0
    cached: int = 0
    done: int = 0
    refused: int = 0
    missing: int = 0
    stopped: bool = False
    seconds: float = 0.0

    def stored(self) -> int:
        return self.cached + self.done


def annotate(judge: AiJudge, positions: list[Popular], finder: BoardFinder, writing: Callable,
             threads: int = 2, stop=None, progress: Callable[[AnnotateReport], None] | None = None,
             timeout: float = 600.0, warn: Callable[[str], None] | None = None) -> AnnotateReport:
    """Ask ``judge.katago`` for the values of each of ``positions`` that ``judge.cache`` lacks.

    ``writing()`` gives a connection in a transaction of the database the values go to (its
    commit stores one answer); ``threads`` queries are kept in flight; ``stop`` (an Event)
    set ends the run before the next answer is stored; ``progress(report)`` after each
    answer.  ``timeout``: seconds without any answer before KataGoTimeout.  KataGoError
    other than a refused query (``warn`` is told, the position skipped) is raised.
    """
    start = time.perf_counter()
    report = AnnotateReport()
    with judge.cache.connect() as conn:
        have = cached_keys(conn, judge.settings)
    todo = deque(p.key for p in positions if p.key not in have)
    report.total, report.cached = len(positions), len(positions) - len(todo)
    if todo and judge.katago is None:
        raise ValueError("no KataGo to compute the values the cache lacks")
    s = judge.settings

    def submit(key):
        found = finder.find(key)
        if found is None:
            report.missing += 1
            return None
        board, side = found
        return (key, board, side), judge.katago.submit(**query_settings(board, side, *_asked(s)))

    def store(entry, answer) -> bool:
        key, board, side = entry
        root, moves, lines = rows_of(answer, board.size)
        with writing() as wconn:
            ai_values.put(wconn, board.symmetric_keys(side), board.size, s, root, moves, lines)
        return True

    _ask_all(judge.katago, todo, submit, store, report, threads, stop, progress, timeout, warn,
             lambda entry: f"position {entry[0]:016x}")
    report.seconds = time.perf_counter() - start
    return report


def _asked(settings: ai_values.AiSettings) -> tuple:
    return settings.rules, settings.komi, settings.visits


@dataclass
class MovesReport:
    """How the forced moves went: ``positions`` looked at (those whose values are stored),
    ``wanted`` moves of the share or more the rows lacked at the start, ``done`` evaluated and
    merged, ``refused`` by KataGo (an illegal move in the games), ``stopped``."""

    positions: int = 0
    wanted: int = 0
    done: int = 0
    refused: int = 0
    stopped: bool = False
    seconds: float = 0.0


def moves_wanted(judge: AiJudge, positions: list[Popular], finder: BoardFinder, share: float) -> list[tuple]:
    """(board, side, point) for each human move of ``positions`` played in ``share`` of the
    position's games or more that the position's stored row (``judge.settings``) lacks or
    holds from under ``deep_enough`` visits of its own; a position without a row or a board is
    left out.  The moves the rows lack come first (a cell without any value is worse than a
    shallow one, and a run cut short by its time limit should have filled those), each group in
    the order of ``positions`` (most played first)."""
    missing, shallow = [], []
    with judge.cache.connect() as conn:
        have = cached_keys(conn, judge.settings)
        for p in positions:
            found = finder.find(p.key) if p.key in have else None
            if found is None:
                continue
            board, side = found
            values = ai_values.get(conn, board.symmetric_keys(side), board.size, judge.settings)
            moves = finder.book.next_moves(board, side)
            for point in moves_to_force(values, board, side, moves.moves, moves.total, share,
                                        min_visits=deep_enough(judge.settings.visits)):
                (shallow if values.move(point) is not None else missing).append((board, side, point))
    return missing + shallow


def annotate_moves(judge: AiJudge, wanted: list[tuple], writing: Callable, threads: int = 2, stop=None,
                   progress: Callable[[MovesReport], None] | None = None, timeout: float = 600.0,
                   warn: Callable[[str], None] | None = None) -> MovesReport:
    """Ask ``judge.katago`` for each of ``wanted`` (``moves_wanted``'s) with the move forced and
    merge each answer into its position's row as it arrives (``writing()`` as ``annotate``'s),
    ``threads`` in flight; ``stop``, ``progress``, ``timeout`` and ``warn`` as ``annotate``'s."""
    start = time.perf_counter()
    report = MovesReport(positions=len({min(b.symmetric_keys(side)) for b, side, _ in wanted}), wanted=len(wanted))
    s = judge.settings

    def submit(entry):
        board, side, point = entry
        return entry, judge.katago.submit(**forced_query(board, side, point, s.rules, s.komi, s.visits))

    def store(entry, answer) -> bool:
        board, side, point = entry
        moves, lines = forced_rows(answer, point, board.size)
        if not moves:
            return False
        with writing() as wconn:
            ai_values.merge_moves(wconn, board.symmetric_keys(side), board.size, s, (0, 0.0, 0.0), moves, lines)
        return True

    _ask_all(judge.katago, deque(wanted), submit, store, report, threads, stop, progress, timeout, warn,
             lambda entry: "a forced move")
    report.seconds = time.perf_counter() - start
    return report


def _ask_all(katago, todo: deque, submit: Callable, store: Callable, report, threads: int, stop,
             progress: Callable | None, timeout: float, warn: Callable[[str], None] | None,
             what: Callable) -> None:
    """The loop of both of annotate's runs (positions, forced moves): keeps ``threads`` queries
    in flight while ``todo`` lasts; ``submit(item)`` asks KataGo, giving ``(entry, Pending)``
    or None (the item skipped); each answer goes to ``store(entry, answer)``, True when stored
    (``report.done``, then ``progress(report)``), False when refused (``report.refused``), as
    is a query KataGo refuses (``warn`` is told ``what(entry)`` and why).  ``stop`` set ends
    it before the next answer is stored (``report.stopped``); ``timeout`` as ``_answered``'s."""
    inflight: deque = deque()  # (entry, pending), oldest first
    last = time.monotonic()
    while todo or inflight:
        if stop is not None and stop.is_set():
            report.stopped = True
            return
        while todo and len(inflight) < max(1, threads):
            asked = submit(todo.popleft())
            if asked is not None:
                inflight.append(asked)
        ready = _answered(katago, inflight, last, timeout)
        if not ready:
            continue
        last = time.monotonic()
        for entry in ready:
            inflight.remove(entry)
            item, pending = entry
            try:
                answers = pending.result(0)
            except KataGoQueryError as exc:
                report.refused += 1
                if warn:
                    warn(f"{what(item)}: {exc}")
                continue
            if not store(item, answers[-1]):
                report.refused += 1
                continue
            report.done += 1
            if progress:
                progress(report)


def _answered(katago, inflight: list, last: float, timeout: float) -> list:
    """The entries of ``inflight`` (``(entry, Pending)``) KataGo has answered; when
    none, waits until the first answer (at most half a second) and gives []; raises
    KataGoTimeout when nothing came for ``timeout`` seconds since ``last``.  ``_ask_all``
    waits through it."""
    ready = [entry for entry in inflight if entry[1].done.is_set()]
    if ready or not inflight:
        return ready
    if time.monotonic() - last > timeout:
        raise KataGoTimeout(f"no answer from KataGo within {timeout:g}s (too many visits for this "
                            f"machine? try fewer with --visits)")
    katago.wait_any([entry[1] for entry in inflight], 0.5)  # wakes at the first answer
    return []
