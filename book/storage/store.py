"""The opening book: opening a database and asking it questions (the contract is docs/book-api.md).

:class:`Book` owns one SQLAlchemy engine over SQLite (a path, or a ``sqlite:`` URL) or
PostgreSQL (``postgresql://``); the tables are in ``book.storage.schema``, the writing side in
``book.analysis.pipeline.importer``.  Every query binds its parameters; no user text is put into SQL.

How a next-move query works (``Book.next_moves``):

1. the asked board's 8 symmetric keys; the canonical key is the smallest (unsigned),
   ``t*`` the first symmetry giving it, and the position's own symmetry group (its
   *stabilizer*) is every ``s`` with ``keys[s] == keys[0]``;
2. one statement reads, in each segment (``book.storage.segments``), the key's summary
   (``book.storage.nextmoves``: counts by year and next point, for the keys many games of
   the segment reached) or else its rows (``SELECT code FROM positions_<id> WHERE
   key = :k``); numpy splits the codes into game id, move number, next point
   (canonical orientation) and winner, and adds the summaries' records (a year filter
   selects them; another filter reads every segment's rows instead, or the one blob of a
   busy position's rows the import stored, ``book.storage.busy_rows``, and counts them in
   one pass, ``nextmoves.count_first_visits``);
3. each game counts once, at its first visit of the position (a game may come back
   to a position through a ko or passes);
4. filters keep the games whose ids are set in a boolean mask over game ids, built
   once per ``Filters`` value (and again when games are added: new ids are larger);
5. next points go back to the asked orientation through ``symmetry_table[INVERSE[t*]]``
   and points equivalent under the stabilizer merge into one ``MoveStat``.

``games`` does steps 1-4, then orders the ids newest first: ``date`` (the text as written,
compared by the database), then id, both descending; up to ``FEW_GAMES`` games the database
sorts them, more a cached rank array over every game id (``book.storage.game_order``).
Pages go by keyset (``after=`` the last row's id), never by OFFSET.  The
player filter reads the player index (``schema.filter_query``).
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass, fields, make_dataclass

import numpy as np
from sqlalchemy import func, inspect, select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError

from fuseki.book.model.filters import Filters
from fuseki.book.model.headers import dataclass_fields
from fuseki.book.storage import (
    busy_rows,
    game_order,
    nextmoves,
    orbits,
    pg_stage,
    schema,
    segment_files,
    segment_merges,
    segments,
)
from fuseki.book.storage.connect import make_db, sqlite_path, to_url
from fuseki.book.storage.header_filter import Headers, header_mask, read_headers
from fuseki.book.storage.orbits import MoveStat
from fuseki.book.storage.schema import games as games_table
from fuseki.book.storage.segment_sweep import sweep_book, sweep_dead
from fuseki.book.storage.sqlite_stage import clear_stage
from fuseki.book.storage.statbook_table import is_statistics_file
from fuseki.book.storage.wal import Checkpointer
from fuseki.engine.core.base import BLACK, END, WHITE
from fuseki.engine.core.zobrist import to_signed

BUSY_CODES = 4_000_000  # Book._busy_rows keeps busy positions' rows (busy_rows.BUSY_ROWS) up to this many codes, 32 MB
RECLAIM_PAGES = 4096  # Book.reclaim: pages moved a transaction (64 MB: the log's bound is larger)
FEW_GAMES = 400  # Book.games: a position with at most this many games is sorted by the database
# PostgreSQL: at a position of this many games, a player filter of at most PLAYER_GAMES_LISTED games
# picks their rows in SQL (Book._player_games)
PLAYER_READ_ROWS, PLAYER_GAMES_LISTED = 100_000, 20_000


class BookError(ValueError):
    """A book that cannot be opened or used as asked (missing file, read-only, not a book)."""


@dataclass(frozen=True)
class NextMoves:
    """The answer of ``Book.next_moves``; ``key`` is the canonical key (unsigned)."""

    total: int
    ended: int
    moves: list[MoveStat]
    key: int = 0
    to_move: int = BLACK


GameRow = make_dataclass(
    "GameRow",
    [("id", int), *dataclass_fields(), ("size", int), ("move_count", int), ("source", str),
     ("move_number", int)],  # the header fields (black ... rules) are book.formats.headers'
    frozen=True,
    namespace={"__module__": __name__, "__doc__": """A game's header as ``Book.games`` lists it.

    ``move_number``: where the position occurred in the game.  The header fields are those
    of ``book.model.headers.HEADER_FIELDS``, keyword-only; ``winner`` is as stored (0 none, 1
    Black, 2 White).
    """},
)


@dataclass(frozen=True)
class GamesPage:
    """One page of ``Book.games``: ``page`` counts from 1; ``after``: the id to pass as
    ``after=`` for the next page (the last row's), None on the last page."""

    rows: list[GameRow]
    total: int
    page: int
    pages: int
    after: int | None = None


@dataclass(frozen=True)
class BookStats:
    games: int
    positions: int
    sizes: dict[int, int]
    years: tuple[int, int] | None
    file_bytes: int | None


_ROW_COLUMNS = [games_table.c[f.name] for f in fields(GameRow) if f.name != "move_number"]


class Book:
    """An open book.  ``Book.open(location)``; see docs/book-api.md for the queries.

    Threads may share one (the web server's requests do): the engine's pool lends each query a
    connection of its own, and the caches (``_busy_rows``, ``_masks``, ``_rank``) only ever publish
    arrays that are finished, and change their dicts under ``_lock``."""

    statistics = None  # a statistics book's StatisticsInfo (book.storage.statbook); None: a book of games
    # StatisticsBook.open_file: a statistics book is a Book of its own (book.storage.statbook, which
    # imports this module); the storage package imports it and it puts its opener here.
    open_statistics = None

    def __init__(self, db: Engine, readonly: bool, path: str | None):
        self.db = db  # the SQLAlchemy engine (not to be confused with the GTP engine)
        self.readonly = readonly
        self.path = path  # the SQLite file, or None
        self._lock = threading.Lock()
        self._masks: dict[tuple, np.ndarray] = {}
        self._headers: Headers | None = None  # every game's header columns, read once
        self._rank: np.ndarray | None = None
        # the rows of busy positions, read once: (key, every row) -> (book version, records, codes)
        self._busy_rows: dict[tuple, tuple] = {}
        self._busy_codes = 0
        self._stored_rows = busy_rows.StoredRows()  # their blobs the import stored (book.storage.busy_rows)
        # one reader of a key at a time (32 stripes of keys): threads asking for a position not yet
        # cached wait for the first one's read instead of each reading it (the empty board: 378k rows)
        self._reading = [threading.Lock() for _ in range(32)]
        self._ranking = threading.Lock()  # the same for the rank array (378k games: a second to build)
        self._checkpointer = Checkpointer(path) if path and not readonly else None
        self._files: tuple = ()  # the segment files of the last snapshot read

    @classmethod
    def open(cls, location: str, readonly: bool = False) -> Book:
        """Open (and, unless read-only, create) the book at a path or SQLAlchemy URL.

        Raises BookError when a read-only book does not exist or is not a book, or when a
        SQLite book lists segment files its folder lacks (copied without it), and
        schema.SchemeMismatch when it was written with another hash scheme.  A statistics
        book (``book.storage.statbook_table``; the built-in book) opens read-only whatever is asked.
        """
        url = to_url(str(location), readonly)
        path = sqlite_path(url)
        if path and readonly and not os.path.exists(path):
            raise BookError(f"no book at {path}")
        if path and is_statistics_file(path):  # never opened for writing
            return Book.open_statistics(path)
        db = make_db(url, readonly)
        try:
            # a writer creates the tables holding the write lock (two importers may start at once)
            with db.connect().execution_options(fuseki_write=not readonly) as conn, conn.begin():
                if readonly:
                    if not inspect(conn).has_table("meta"):
                        raise BookError(f"{location} is not a fuseki book (no meta table)")
                    schema.check_versions(conn)
                    sweep_dead(db)  # what an importer that stopped left, without the write lock (PostgreSQL: none)
                else:
                    schema.create(conn)
                    sweep_book(conn)  # what an importer that stopped left
                    pg_stage.sweep(conn)
            absent = segment_files.missing(db) if path else None
            if absent:
                folder, names = absent
                raise BookError(
                    f"the book {path} lists {len(names)} segment file(s) that are not in {folder} "
                    f"(first: {names[0]}): a book is its file and that folder together; copy or move both "
                    f"(or run 'fuseki import --compact --book BOOK' where both are, to make one file)")
        except DBAPIError as exc:
            db.dispose()
            reason = str(exc.orig).strip().splitlines()[0] if exc.orig else type(exc).__name__
            raise BookError(f"cannot open the book {location}: {reason}") from None
        except Exception:
            db.dispose()
            raise
        return cls(db, readonly, path)

    def close(self) -> None:
        if self._checkpointer:
            self._checkpointer.close()
        self.db.dispose()

    def end_threads(self) -> None:
        """End the threads this book runs (a SQLite book's checkpointer, ``book.storage.wal``)
        once their work is done; the next write starts them again.  A process calls it before
        it forks: a thread inside SQLite at the fork leaves the child SQLite's locks held."""
        if self._checkpointer:
            self._checkpointer.end_thread()

    def __enter__(self) -> Book:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- queries ------------------------------------------------------------------------

    def next_moves(self, board, to_move: int | None = None, filters: Filters | None = None) -> NextMoves:
        """Next moves from ``board``'s position (any orientation); see the module docstring."""
        side = board.to_move if to_move is None else to_move
        filters = filters or Filters()
        keys = board.symmetric_keys(side)
        canonical = min(keys)
        if filters.reads_rows():  # every game's row: the mask's games counted in one pass
            _records, codes, mask = self._kept_rows(canonical, filters)
            games, black, white = nextmoves.count_first_visits(codes, mask)
            index = np.flatnonzero(games[1:]) + 1  # END's apart
            stats = orbits.tally(index, games[index], black[index], white[index], board.size, keys, side,
                                 filters.min_games)
            total, ended = int(games.sum()), int(games[END + 2])
        else:  # the segments' summaries (a year filter selects their records) and the other rows
            records, _game_ids, _moves, nexts, winners = self._visits(canonical, filters)
            records = nextmoves.select_years(records, filters.year_from, filters.year_to)
            played = records[:, nextmoves.NEXT] != END
            index = np.concatenate([nexts[nexts != END], records[played, nextmoves.NEXT]]) + 2
            weights = np.concatenate([np.ones(int((nexts != END).sum())), records[played, nextmoves.COUNT]])
            black = np.concatenate([winners[nexts != END] == BLACK, records[played, nextmoves.BLACK_WINS]])
            white = np.concatenate([winners[nexts != END] == WHITE, records[played, nextmoves.WHITE_WINS]])
            stats = orbits.tally(index, weights, black, white, board.size, keys, side, filters.min_games)
            total = len(nexts) + int(records[:, nextmoves.COUNT].sum())
            ended = int((nexts == END).sum()) + int(records[~played, nextmoves.COUNT].sum())
        return NextMoves(total=total, ended=ended, moves=stats, key=canonical, to_move=side)

    def games(self, board, to_move: int | None = None, filters: Filters | None = None,
              page: int = 1, page_size: int = 20, after: int | None = None) -> GamesPage:
        """The games that reached ``board``'s position, newest first (date, then id), one page.

        ``after``: the last game id of the previous page (``GamesPage.after``), keyset paging
        whose cost does not grow with the page; without it ``page`` (from 1) picks the page.
        Raises ValueError for a page or page_size below 1 or an ``after`` id not in the book."""
        side = board.to_move if to_move is None else to_move
        if page < 1 or page_size < 1:
            raise ValueError("page and page_size must be at least 1")
        _records, codes, mask = self._kept_rows(min(board.symmetric_keys(side)), filters or Filters())
        codes = nextmoves.first_visit_codes(codes, mask)  # only ids and move numbers: a page needs no more
        return self._page(codes >> schema.GAME_SHIFT, (codes >> schema.MOVE_SHIFT) & schema.MOVE_MASK, page,
                          page_size, after)

    def page_of_games(self, matches: dict[int, int], page: int = 1, page_size: int = 20,
                      after: int | None = None) -> GamesPage:
        """``games``' pages for a set of games found another way (a pattern search):
        ``matches``: game id -> the move number to show (``GameRow.move_number``)."""
        if page < 1 or page_size < 1:
            raise ValueError("page and page_size must be at least 1")
        game_ids = np.array(sorted(matches), dtype=np.int64)
        move_numbers = np.array([matches[i] for i in game_ids.tolist()], dtype=np.int64)
        return self._page(game_ids, move_numbers, page, page_size, after)

    def _page(self, game_ids: np.ndarray, move_numbers: np.ndarray, page: int, page_size: int,
              after: int | None) -> GamesPage:
        """One page of ``game_ids`` (ascending) newest first; see ``games``."""
        total = len(game_ids)
        pages = -(-total // page_size)
        if not total:
            return GamesPage([], 0, page, 0)
        if after is not None and after > self.max_game_id():  # before any work: the rank array
            raise ValueError(f"no game {after} in the book")  # would be after + 1 entries
        if total <= FEW_GAMES:
            before, ordered = self._sorted_by_database(game_ids, after)
        else:
            before, ordered = self._sorted_by_rank(game_ids, after, page_size if after else page * page_size)
        if after is None:
            before = (page - 1) * page_size
            ordered = ordered[before:]
        chosen = ordered[:page_size]
        at = np.searchsorted(game_ids, chosen)  # game_ids ascend (_visits): a page's move numbers only
        rows = self._rows(chosen, dict(zip(chosen, move_numbers[at].tolist())))
        more = before + len(chosen) < total
        return GamesPage(rows, total, before // page_size + 1, pages, rows[-1].id if more and rows else None)

    def game(self, game_id: int):
        """The stored game as a ``book.model.records.GameRecord``; KeyError if there is none."""
        from fuseki.book.formats.records import read_games

        data = self.game_sgf(game_id)
        with self.db.connect() as conn:
            source = conn.execute(select(games_table.c.source).where(games_table.c.id == game_id)).scalar()
        return read_games(data, source or f"game {game_id}")[0]

    def game_ids(self, size: int | None = None) -> list[int]:
        """Ids of the stored games (of one board size if given), in import order."""
        query = select(games_table.c.id).order_by(games_table.c.id)
        if size is not None:
            query = query.where(games_table.c.size == int(size))
        with self.db.connect() as conn:
            return list(conn.execute(query).scalars())

    def game_sgf(self, game_id: int) -> bytes:
        """The stored game's own SGF bytes; KeyError if there is none."""
        with self.db.connect() as conn:
            blob = conn.execute(select(games_table.c.sgf).where(games_table.c.id == int(game_id))).scalar()
        if blob is None:
            raise KeyError(f"no game {game_id} in the book")
        return schema.decompress_sgf(blob)

    def stats(self) -> BookStats:
        """Games, position rows, games per board size, years and the database's size."""
        with self.db.connect() as conn:
            games = conn.execute(select(func.count()).select_from(games_table)).scalar() or 0
            rows = segments.row_count(conn)
            sizes = dict(conn.execute(select(games_table.c.size, func.count())
                                      .group_by(games_table.c.size)).all())
            low, high = conn.execute(select(func.min(games_table.c.year), func.max(games_table.c.year))).one()
            file_bytes = self._file_bytes(conn)
        years = (int(low), int(high)) if low is not None else None
        return BookStats(int(games), int(rows), {int(k): int(v) for k, v in sizes.items()}, years, file_bytes)

    @contextmanager
    def writing(self):
        """A connection in a write transaction that holds the book's write lock until commit.

        SQLite: BEGIN IMMEDIATE; PostgreSQL: the writers' advisory lock
        (``schema.WRITE_LOCK``, released with the transaction; readers go on).  Writers
        run one after another, so a batch's fingerprint check and its new game ids cannot
        race another importer's.
        """
        if self.readonly:
            raise BookError("the book is open read-only")
        if self._checkpointer:
            self._checkpointer.bound()  # a log grown too long restarts with this write
        with self.db.connect().execution_options(fuseki_write=True) as conn:
            with conn.begin():
                if self.db.dialect.name == "postgresql":
                    conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({schema.WRITE_LOCK})")
                yield conn
            if self.db.dialect.name == "sqlite":
                clear_stage(conn.connection.dbapi_connection)
        if self._checkpointer:  # committed: its pages go back into the file on the checkpoint thread
            self._checkpointer.kick()

    def version(self) -> int:
        """A number that changes whenever the book's answers may: the largest game id (games are
        only ever added, with larger ids; merges and summaries move rows, not answers)."""
        with self.db.connect() as conn:
            return segments.largest_game_id(conn)

    def max_game_id(self, conn=None) -> int:
        """The largest game id (0 for an empty book)."""
        if conn is None:
            with self.db.connect() as conn:
                return self.max_game_id(conn)
        return int(conn.execute(select(func.max(games_table.c.id))).scalar() or 0)

    # --- internals ------------------------------------------------------------------------

    def compact(self) -> None:
        """Merge the positions into one segment and rewrite the database packed.

        SQLite ``VACUUM``; PostgreSQL ``VACUUM ANALYZE``.  A book needs it seldom: segments
        and merges are packed as written and an import gives freed pages back
        (``reclaim``); a query reads each segment, so a book grown by many imports answers
        a little faster afterwards.  A SQLite book made before incremental auto-vacuum gets it here.
        """
        self.merge_all()
        if self._checkpointer:
            self._checkpointer.wait()  # its checkpoint would make the TRUNCATE below give up
        with self.db.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            if self.db.dialect.name == "postgresql":
                conn.exec_driver_sql("VACUUM ANALYZE")
            else:
                conn.exec_driver_sql("PRAGMA auto_vacuum=INCREMENTAL")  # an older book takes it here
                conn.exec_driver_sql("VACUUM")
                if self.db.dialect.name == "sqlite":
                    conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")

    def merge_all(self) -> None:
        """Merge every segment into one, in the book's own file (files too: ``_fold_files``)."""
        if self.readonly:
            raise BookError("the book is open read-only")
        with self.db.connect() as conn:
            in_files = bool(segment_files.in_files(conn))
        if in_files:
            segment_merges.fold_files(self)
        else:
            with self.writing() as conn:
                segments.merge_all(conn)

    def reclaim(self, pages_per_step: int = RECLAIM_PAGES) -> int:
        """Give the pages merges freed back to the file system; returns how many (see
        ``segment_merges.reclaim``)."""
        return segment_merges.reclaim(self, pages_per_step)

    def _file_bytes(self, conn) -> int | None:
        if self.db.dialect.name == "sqlite" and self.path:
            # the database's pages, wherever they are now (file or write-ahead log)
            pages = conn.exec_driver_sql("PRAGMA page_count").scalar()
            folder = segment_files.book_folder(conn)
            in_files = sum(segment_files.file_size(os.path.join(folder, s.name)) for s in segment_files.in_files(conn))
            return int(pages) * int(conn.exec_driver_sql("PRAGMA page_size").scalar()) + in_files
        if self.db.dialect.name == "postgresql":
            return int(conn.exec_driver_sql("SELECT pg_database_size(current_database())").scalar())
        return None

    def _sorted_by_database(self, game_ids: np.ndarray, after: int | None) -> tuple[int, list[int]]:
        """(games before the keyset, the ids after it newest first): the database sorts them."""
        with self.db.connect() as conn:
            return game_order.newest_by_database(conn, game_ids.tolist(), after)

    def _sorted_by_rank(self, game_ids: np.ndarray, after: int | None, needed: int) -> tuple[int, list[int]]:
        """(games before the keyset, at least ``needed`` ids after it newest first): the cached
        rank array sorts them, only as far as a page needs."""
        ranks = self._ranks(max(int(game_ids.max()), after or 0))[game_ids]
        before = 0
        if after is not None:
            every = self._ranks(after)
            rank = every[after]
            if rank == len(every):
                raise ValueError(f"no game {after} in the book")
            later = ranks > rank
            before = len(ranks) - int(later.sum())
            game_ids, ranks = game_ids[later], ranks[later]
        if needed < len(ranks) // 2:  # only the first pages' worth needs sorting
            candidates = np.argpartition(ranks, needed - 1)[:needed]
            order = candidates[np.argsort(ranks[candidates])]
        else:
            order = np.argsort(ranks)
        return before, game_ids[order].tolist()

    def _rows(self, chosen: list[int], place: dict[int, int]) -> list:
        """GameRows of ``chosen`` ids in that order; ``place``: id -> move number."""
        with self.db.connect() as conn:
            found = conn.execute(select(*_ROW_COLUMNS).where(games_table.c.id.in_(chosen))).all()
        by_id = {row.id: row for row in found}
        return [GameRow(**by_id[i]._asdict(), move_number=place[i]) for i in chosen if i in by_id]

    def _visits(self, key: int, filters: Filters, every_row: bool = False):
        """(summary records, game ids, move numbers, next points, winners) of ``key``: the
        records of the segments that summarize it (unfiltered) and each other game's first
        visit (filtered); ``every_row``: no summaries, every game from its rows."""
        records, codes, mask = self._kept_rows(key, filters, every_row)
        codes = nextmoves.first_visit_codes(codes, mask)
        moves = (codes >> schema.MOVE_SHIFT) & schema.MOVE_MASK
        nexts = ((codes >> schema.NEXT_SHIFT) & schema.NEXT_MASK) - 2
        return records, codes >> schema.GAME_SHIFT, moves, nexts, codes & schema.WINNER_MASK

    def _kept_rows(self, key: int, filters: Filters, every_row: bool = True
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """(summary records, the rows of ``key`` sorted: each game's first visit first, the mask of
        the games the filters keep or None for every game); ``every_row``: see ``_codes``."""
        games = self._player_games(key, filters) if every_row else None
        records, codes = self._codes(key, every_row, games)
        if len(codes) > 1 and not (codes[1:] >= codes[:-1]).all():
            codes = np.sort(codes)
        top = int(codes[-1] >> schema.GAME_SHIFT) if len(codes) else 0
        return records, codes, (self._mask(filters, top) if filters.selects_games() and len(codes) else None)

    def _player_games(self, key: int, filters: Filters) -> np.ndarray | None:
        """The games a player filter keeps, for PostgreSQL to pick their rows of a busy position
        itself instead of converting and sending every code (kept after, so a smaller position
        reads them all); None on other databases, without a player, for a position of fewer
        games (the summaries count them), or for a player of more games than one statement
        should list."""
        if not filters.reads_rows() or self.db.dialect.name != "postgresql" or (key, True) in self._busy_rows:
            return None
        records, codes = self._codes(key)
        if len(codes) + int(records[:, nextmoves.COUNT].sum()) < PLAYER_READ_ROWS:
            return None
        ids = np.flatnonzero(self._mask(filters, self.max_game_id()))
        return ids if len(ids) <= PLAYER_GAMES_LISTED else None

    def _codes(self, key: int, every_row: bool = False, games: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
        """(summary records, codes) of ``key``: see ``segments.key_stats``; ``every_row``: no
        summaries, every code of every segment (``games``: of those games only, not kept).

        Big answers are cached while the largest game id is unchanged (games are only
        added, a batch's ids all new; merges move rows without changing them).  SQLite
        reads ids, segments and codes in one snapshot; on PostgreSQL a merge that dropped
        a segment between two statements makes the read start again.
        """
        with self._reading[key % len(self._reading)]:
            return self._read_codes(key, every_row, games)

    def _read_codes(self, key: int, every_row: bool, games: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        cached = self._busy_rows.get((key, every_row)) if games is None else None
        for attempt in range(3):
            try:
                with self.db.connect() as conn:
                    snap = segments.snapshot(conn)
                    if cached is not None and cached[0] == snap.version:
                        return cached[1], cached[2]
                    if snap.files != self._files:
                        self._forget_files(snap)
                    if every_row:  # a busy position's stored blob, else every segment's rows
                        records = nextmoves.empty().records
                        codes = self._stored_rows.codes(conn, snap, to_signed(key)) if games is None else None
                        if codes is None:
                            codes = segments.codes(conn, snap, to_signed(key), games)
                    else:
                        found, codes = segments.key_stats(conn, snap, to_signed(key))
                        records = found.records
                break
            except DBAPIError as exc:
                if attempt == 2 or getattr(exc.orig, "pgcode", None) != "42P01":  # undefined_table
                    raise
            except segment_files.Gone:  # a merge replaced a file after the snapshot named it
                if attempt == 2:
                    raise
        if games is None and len(codes) + len(records) >= busy_rows.BUSY_ROWS:
            if not (codes[1:] >= codes[:-1]).all():
                codes.sort()
            codes.setflags(write=False)
            records.setflags(write=False)
            with self._lock:
                stale = self._busy_rows.pop((key, every_row), None)
                if stale is not None:
                    self._busy_codes -= len(stale[2]) + len(stale[1])
                self._busy_rows[(key, every_row)] = (snap.version, records, codes)
                self._busy_codes += len(codes) + len(records)
                while self._busy_codes > BUSY_CODES and len(self._busy_rows) > 1:
                    _version, old_records, old_codes = self._busy_rows.pop(next(iter(self._busy_rows)))
                    self._busy_codes -= len(old_codes) + len(old_records)
        return records, codes

    def _forget_files(self, snap) -> None:
        """Close the kept connections of segment files a merge replaced."""
        with self._lock:
            self._files = snap.files
        if snap.folder:
            segment_files.forget(snap.folder, [segment.name for segment in snap.files])

    def _mask(self, filters: Filters, needed: int) -> np.ndarray:
        """Boolean mask over game ids of the games the filters keep (cached per Filters value):
        years and player in SQL (``schema.filter_query``), the header filters from every game's
        header columns read once (``book.storage.header_filter``)."""
        cache_key = filters.cache_key()
        mask = self._masks.get(cache_key)
        if mask is not None and len(mask) > needed:
            return mask
        with self.db.connect() as conn:
            top = self.max_game_id(conn)
            ids = None
            if filters.year_from is not None or filters.year_to is not None or filters.player:
                query = schema.filter_query(conn, filters.year_from, filters.year_to, filters.player, top)
                ids = np.fromiter(conn.execute(query).scalars(), dtype=np.int64)
            mask = np.zeros(max(top, needed, int(ids.max()) if ids is not None and len(ids) else 0) + 1, dtype=bool)
            mask[slice(0, top + 1) if ids is None else ids] = True
            if filters.reads_headers():  # games beyond top: none (this connection read top)
                headers = self._headers
                if headers is None or headers.top != top:
                    headers = self._headers = read_headers(conn, top)
                mask[: top + 1] &= header_mask(headers, filters)
            if filters.within is not None:  # and only the games of the earlier answer
                mask &= filters.within.mask(len(mask))
        with self._lock:
            if len(self._masks) > 64:
                self._masks.clear()
            self._masks[cache_key] = mask
        return mask

    def _ranks(self, needed: int) -> np.ndarray:
        """``rank[id]``: the game's place in date order, newest first (ties: larger id first)."""
        rank = self._rank
        if rank is not None and len(rank) > needed:
            return rank
        with self._ranking:  # another thread may have built it while this one waited
            rank = self._rank
            return rank if rank is not None and len(rank) > needed else self._build_ranks(needed)

    def _build_ranks(self, needed: int) -> np.ndarray:
        with self.db.connect() as conn:
            self._rank = game_order.date_ranks(conn, self.max_game_id(conn), needed)
        return self._rank

    def forget_caches(self) -> None:
        """Drop the filter masks and date ranks (the importer calls this after writing)."""
        with self._lock:
            self._masks.clear()
            self._headers = None
            self._rank = None
            self._busy_rows.clear()
            self._busy_codes = 0
