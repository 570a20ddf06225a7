"""The next-move source of a book of games: its positions index, read segment by segment.

How a next-move query works (``SegmentIndex.next_moves``):

1. the asked board's 8 symmetric keys; the canonical key is the smallest (unsigned),
   ``t*`` the first symmetry giving it, and the position's own symmetry group (its
   *stabilizer*) is every ``s`` with ``keys[s] == keys[0]``;
2. one statement reads, in each segment (``book.storage.segments``), the key's next-move
   statistics (``book.storage.nextmoves``: counts by year and next point, for the keys many
   games of the segment reached) or else its rows (``SELECT code FROM positions_<id> WHERE
   key = :k``); numpy splits the codes into game id, move number, next point (canonical
   orientation) and winner, and adds the statistics' counts (a year filter selects them;
   another filter reads every segment's rows instead, or the one blob of a busy position's
   rows the import stored, ``book.storage.busy_rows``, and counts them in one pass,
   ``nextmoves.count_first_visits``);
3. each game counts once, at its first visit of the position (a game may come back
   to a position through a ko or passes);
4. filters keep the games whose ids are set in a boolean mask over game ids (``Book.mask``,
   built once per ``Filters`` value from the games table);
5. next points go back to the asked orientation through ``symmetry_table[INVERSE[t*]]``
   and points equivalent under the stabilizer merge into one ``MoveStat`` (``source.answer``,
   ``orbits.tally``).

One cache: ``busy`` keeps the codes of busy positions (``busy_rows.BUSY_ROWS`` games or
more) once read, while the book's version (its largest game id) is unchanged, up to
``BUSY_CODES`` codes.  It is the first of the two caches on the next-move path (named, counted
and measured in docs/book-api.md, "Caches on the next-move path"): on 366,535 games,
``bench/book.py --query-book BOOK --caches`` timed the hot openings' first page of games at a
median 2.0 ms kept against 4.9 ms read again from the stored blob, a player filter's next moves
at a p99 of 7.1 against 14.9 ms.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError

from fuseki.book.model.filters import Filters
from fuseki.book.storage import busy_rows, nextmoves, orbits, scheme, segment_files, segments
from fuseki.book.storage.source import NextMoves, Visits, answer
from fuseki.engine.core.base import END
from fuseki.engine.core.zobrist import to_signed

BUSY_CODES = 4_000_000  # SegmentIndex.busy keeps busy positions' codes up to this many, 32 MB
# PostgreSQL: at a position of this many games, a player filter of at most PLAYER_GAMES_LISTED games
# picks their rows in SQL (SegmentIndex._player_games)
PLAYER_READ_ROWS, PLAYER_GAMES_LISTED = 100_000, 20_000


class SegmentIndex:
    """A book of games' ``NextMoveSource``: see the module docstring.

    ``mask(filters, needed)`` is the book's boolean mask over game ids of the games the filters
    keep; ``max_game_id()`` its largest game id.  Threads may share one: ``busy`` only ever
    publishes finished arrays and changes under ``_lock``."""

    def __init__(self, db: Engine, mask: Callable[[Filters, int], np.ndarray], max_game_id: Callable[[], int]):
        self.db = db
        self._mask, self._max_game_id = mask, max_game_id
        self._lock = threading.Lock()
        # the codes of busy positions, read once: (key, every row) -> (book version, counts, codes)
        self.busy: dict[tuple, tuple] = {}
        self.busy_codes = 0
        self.stored_rows = busy_rows.StoredRows()  # their blobs the import stored (book.storage.busy_rows)
        # one reader of a key at a time (32 stripes of keys): threads asking for a position not yet
        # kept wait for the first one's read instead of each reading it (the empty board: 378k rows)
        self._reading = [threading.Lock() for _ in range(32)]
        self._files: tuple = ()  # the segment files of the last snapshot read

    def next_moves(self, board, to_move: int, filters: Filters) -> NextMoves:
        """Next moves from ``board``'s position (any orientation); see the module docstring."""
        keys = board.symmetric_keys(to_move)
        canonical = min(keys)
        if not filters.reads_rows():  # the segments' statistics (a year filter selects their counts) and rows
            return answer(self.visits(canonical, filters), board, keys, to_move, filters)
        _counts, codes, mask = self._kept_rows(canonical, filters)  # every game's row, counted in one pass
        games, black, white = nextmoves.count_first_visits(codes, mask)
        index = np.flatnonzero(games[1:]) + 1  # END's apart
        stats = orbits.tally(index, games[index], black[index], white[index], board.size, keys, to_move,
                             filters.min_games)
        return NextMoves(total=int(games.sum()), ended=int(games[END + 2]), moves=stats, key=canonical,
                         to_move=to_move)

    def visits(self, key: int, filters: Filters, every_row: bool = False) -> Visits:
        """The statistics of the segments that count ``key`` (unfiltered) and each other game's
        first visit (filtered); ``every_row``: no statistics, every game from its rows."""
        counts, codes, mask = self._kept_rows(key, filters, every_row)
        codes = nextmoves.first_visit_codes(codes, mask)
        moves = (codes >> scheme.MOVE_SHIFT) & scheme.MOVE_MASK
        nexts = ((codes >> scheme.NEXT_SHIFT) & scheme.NEXT_MASK) - 2
        return Visits(counts, codes >> scheme.GAME_SHIFT, moves, nexts, codes & scheme.WINNER_MASK)

    def version(self) -> int:
        """The largest game id (games are only ever added, with larger ids; merges and the
        segments' statistics move rows, not answers)."""
        with self.db.connect() as conn:
            return segments.largest_game_id(conn)

    def forget(self) -> None:
        with self._lock:
            self.busy.clear()
            self.busy_codes = 0

    def _kept_rows(self, key: int, filters: Filters, every_row: bool = True
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """(statistics counts, the rows of ``key`` sorted: each game's first visit first, the mask
        of the games the filters keep or None for every game); ``every_row``: see ``codes``."""
        games = self._player_games(key, filters) if every_row else None
        counts, codes = self.codes(key, every_row, games)
        if len(codes) > 1 and not (codes[1:] >= codes[:-1]).all():
            codes = np.sort(codes)
        top = int(codes[-1] >> scheme.GAME_SHIFT) if len(codes) else 0
        return counts, codes, (self._mask(filters, top) if filters.selects_games() and len(codes) else None)

    def _player_games(self, key: int, filters: Filters) -> np.ndarray | None:
        """The games a player filter keeps, for PostgreSQL to pick their rows of a busy position
        itself instead of converting and sending every code (kept after, so a smaller position
        reads them all); None on other databases, without a player, for a position of fewer
        games (the statistics count them), or for a player of more games than one statement
        should list."""
        if not filters.reads_rows() or self.db.dialect.name != "postgresql" or (key, True) in self.busy:
            return None
        counts, codes = self.codes(key)
        if len(codes) + int(counts[:, nextmoves.COUNT].sum()) < PLAYER_READ_ROWS:
            return None
        ids = np.flatnonzero(self._mask(filters, self._max_game_id()))
        return ids if len(ids) <= PLAYER_GAMES_LISTED else None

    def codes(self, key: int, every_row: bool = False, games: np.ndarray | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
        """(statistics counts, codes) of ``key``: see ``segments.key_stats``; ``every_row``: no
        statistics, every code of every segment (``games``: of those games only, not kept).

        Big answers are kept while the largest game id is unchanged (games are only
        added, a batch's ids all new; merges move rows without changing them).  SQLite
        reads ids, segments and codes in one snapshot; on PostgreSQL a merge that dropped
        a segment between two statements makes the read start again.
        """
        with self._reading[key % len(self._reading)]:
            return self._read_codes(key, every_row, games)

    def _read_codes(self, key: int, every_row: bool, games: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        cached = self.busy.get((key, every_row)) if games is None else None
        for attempt in range(3):
            try:
                with self.db.connect() as conn:
                    snap = segments.snapshot(conn)
                    if cached is not None and cached[0] == snap.version:
                        return cached[1], cached[2]
                    if snap.files != self._files:
                        self._forget_files(snap)
                    if every_row:  # a busy position's stored blob, else every segment's rows
                        counts = nextmoves.empty().counts
                        codes = self.stored_rows.codes(conn, snap, to_signed(key)) if games is None else None
                        if codes is None:
                            codes = segments.codes(conn, snap, to_signed(key), games)
                    else:
                        found, codes = segments.key_stats(conn, snap, to_signed(key))
                        counts = found.counts
                break
            except DBAPIError as exc:
                if attempt == 2 or getattr(exc.orig, "pgcode", None) != "42P01":  # undefined_table
                    raise
            except segment_files.Gone:  # a merge replaced a file after the snapshot named it
                if attempt == 2:
                    raise
        if games is None and len(codes) + len(counts) >= busy_rows.BUSY_ROWS:
            self._keep(key, every_row, snap.version, counts, codes)
        return counts, codes

    def _keep(self, key: int, every_row: bool, version: int, counts: np.ndarray, codes: np.ndarray) -> None:
        """Keep a busy position's read (sorted, read-only), the oldest going beyond BUSY_CODES."""
        if not (codes[1:] >= codes[:-1]).all():
            codes.sort()
        codes.setflags(write=False)
        counts.setflags(write=False)
        with self._lock:
            stale = self.busy.pop((key, every_row), None)
            if stale is not None:
                self.busy_codes -= len(stale[2]) + len(stale[1])
            self.busy[(key, every_row)] = (version, counts, codes)
            self.busy_codes += len(codes) + len(counts)
            while self.busy_codes > BUSY_CODES and len(self.busy) > 1:
                _version, old_records, old_codes = self.busy.pop(next(iter(self.busy)))
                self.busy_codes -= len(old_codes) + len(old_records)

    def _forget_files(self, snap) -> None:
        """Close the kept connections of segment files a merge replaced."""
        with self._lock:
            self._files = snap.files
        if snap.folder:
            segment_files.forget(snap.folder, [segment.name for segment in snap.files])
