"""The next-move source of a book of games: its positions index, read segment by segment.

How a next-move query works (``SegmentIndex.next_moves``):

1. the asked board's 8 symmetric keys; the canonical key is the smallest (unsigned),
   ``t*`` the first symmetry giving it, and the position's own symmetry group (its
   *stabilizer*) is every ``s`` with ``keys[s] == keys[0]``;
2. one statement reads, in each segment (``book.storage.position_index.segments``), the key's next-move
   statistics (``book.storage.position_index.nextmoves``: counts by year and next point, for the keys many
   games of the segment reached) or else its rows (``SELECT code FROM positions_<id> WHERE
   key = :k``), whose codes hold game id, move number, next point (canonical orientation)
   and winner; a year filter selects the statistics' counts, another filter reads every
   segment's rows instead, or the one blob of a busy position's rows the import stored
   (``book.storage.position_index.busy_rows``);
3. each game counts once, at its first visit of the position (a game may come back
   to a position through a ko or passes);
4. filters keep the games whose ids are set in a boolean mask over game ids (``kept``: the
   book's ``Book.mask``, built once per ``Filters`` value from the games table and handed in;
   ``answers.MaskNeeded`` asks for it again once games newer than it were read);
5. ``answers.answer`` counts the kept games by next point, adds the statistics' counts, and
   next points go back to the asked orientation through ``symmetry_table[INVERSE[t*]]``;
   points equivalent under the stabilizer merge into one ``MoveStat`` (``orbits.tally``):
   one count for every form of the index and every filter.

One cache: ``busy`` keeps the codes of busy positions (``busy_rows.BUSY_ROWS`` games or
more) once read, while the book's version (its largest game id) is unchanged, up to
``BUSY_CODES`` codes.  It is the first of the two caches on the next-move path (named, counted
and measured in docs/book-api.md, "Caches on the next-move path"): on 366,535 games,
``bench/book.py --query-book BOOK --caches`` timed the hot openings' first page of games at a
median 2.0 ms kept against 4.9 ms read again from the stored blob, a player filter's next moves
at a p99 of 7.1 against 14.9 ms.
"""

from __future__ import annotations

import os
import threading

import numpy as np
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError

from fuseki.book.model.filters import Filters
from fuseki.book.storage import scheme
from fuseki.book.storage.position_index import busy_rows, nextmoves, segment_files, segments, statbook_table
from fuseki.book.storage.position_index.answers import MaskNeeded, NextMoves, Visits, answer
from fuseki.engine.core.zobrist import to_signed, to_unsigned

BUSY_CODES = 4_000_000  # SegmentIndex.busy keeps busy positions' codes up to this many, 32 MB
# PostgreSQL: at a position of this many games, a player filter of at most PLAYER_GAMES_LISTED games
# picks their rows in SQL (SegmentIndex._player_games)
PLAYER_READ_ROWS, PLAYER_GAMES_LISTED = 100_000, 20_000


class SegmentIndex:
    """A book of games' ``face.PositionsIndex``: see the module docstring.

    ``kept``, where filters select games, is the book's boolean mask over game ids of the games
    they keep; one missing, or shorter than the games read, raises ``answers.MaskNeeded`` (the
    index never calls back into the book for it).  Threads may share one: ``busy`` only ever
    publishes finished arrays and changes under ``_lock``."""

    def __init__(self, db: Engine):
        self.db = db
        self._lock = threading.Lock()
        # the codes of busy positions, read once: (key, every row) -> (book version, counts, codes)
        self.busy: dict[tuple, tuple] = {}
        self.busy_codes = 0
        self.stored_rows = busy_rows.StoredRows()  # their blobs the import stored (busy_rows)
        # one reader of a key at a time (32 stripes of keys): threads asking for a position not yet
        # kept wait for the first one's read instead of each reading it (the empty board: 378k rows)
        self._reading = [threading.Lock() for _ in range(32)]
        self._files: tuple = ()  # the segment files of the last snapshot read

    def next_moves(self, board, to_move: int, filters: Filters, kept: np.ndarray | None = None) -> NextMoves:
        """Next moves from ``board``'s position (any orientation); see the module docstring."""
        keys = board.symmetric_keys(to_move)
        found = self.visits(min(keys), filters, filters.reads_rows(), kept)
        return answer(found, board, keys, to_move, filters)

    def visits(self, key: int, filters: Filters, every_row: bool = False, kept: np.ndarray | None = None) -> Visits:
        """The statistics of the segments that count ``key`` (unfiltered) and each other game's
        first visit (filtered by ``kept``); ``every_row``: no statistics, every game from its
        rows (a player or header filter needs them: ``Filters.reads_rows``)."""
        counts, codes, mask = self._kept_rows(key, filters, every_row, kept)
        return Visits(counts, nextmoves.first_visit_codes(codes, mask))

    def version(self) -> int:
        """The largest game id (games are only ever added, with larger ids; merges and the
        segments' statistics move rows, not answers)."""
        with self.db.connect() as conn:
            return segments.largest_game_id(conn)

    def forget(self) -> None:
        with self._lock:
            self.busy.clear()
            self.busy_codes = 0

    def positions(self, conn, min_games: int) -> list[tuple[int, int]]:
        """Counted from every segment's rows a key range at a time (``statbook_table.from_book``)."""
        found = []
        for chunk in statbook_table.from_book(conn, min_games):
            keys, counts = chunk.keys, chunk.counts[:, nextmoves.COUNT]
            starts = [0] + [i for i in range(1, len(keys)) if keys[i] != keys[i - 1]] + [len(keys)]
            found += [(to_unsigned(int(keys[a])), int(counts[a:b].sum())) for a, b in zip(starts, starts[1:])]
        return found

    def need_games(self, what: str) -> None:
        """A book of games has them."""

    def row_count(self, conn) -> int:
        """Rows of every segment, as ``segments(rows)`` lists them."""
        return segments.row_count(conn)

    def stored_bytes(self, conn) -> int:
        """The segment files' bytes beside a SQLite book on disk (0: none)."""
        folder = segment_files.book_folder(conn)
        if not folder:
            return 0
        return sum(segment_files.file_size(os.path.join(folder, s.name)) for s in segment_files.in_files(conn))

    def close(self) -> None:
        """Nothing of its own to close: the engine is the book's."""

    def _kept_rows(self, key: int, filters: Filters, every_row: bool, kept: np.ndarray | None
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """(statistics counts, the rows of ``key`` sorted: each game's first visit first, the mask
        of the games the filters keep or None for every game); ``every_row``: see ``codes``.
        MaskNeeded where the filters select games and ``kept`` does not cover those read."""
        games = self._player_games(key, filters, kept) if every_row else None
        counts, codes = self.codes(key, every_row, games)
        if len(codes) > 1 and not (codes[1:] >= codes[:-1]).all():
            codes = np.sort(codes)
        if not filters.selects_games() or not len(codes):
            return counts, codes, None
        return counts, codes, _covering(kept, int(codes[-1] >> scheme.GAME_SHIFT))

    def _player_games(self, key: int, filters: Filters, kept: np.ndarray | None) -> np.ndarray | None:
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
        with self.db.connect() as conn:
            top = segments.largest_game_id(conn)
        ids = np.flatnonzero(_covering(kept, top))
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


def _covering(kept: np.ndarray | None, top: int) -> np.ndarray:
    """``kept``, the mask of the games some filters keep, where it covers game ``top``; else
    MaskNeeded: the book builds it again from its games table (games were added since)."""
    if kept is None or len(kept) <= top:
        raise MaskNeeded(top)
    return kept
