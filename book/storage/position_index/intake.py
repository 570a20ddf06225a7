"""The positions index's face for writing: an import's batches in, their merges, the sweep.

The importer (``book.analysis.pipeline``) writes the index through this module alone, and
``Book`` sweeps it (``sweep``, ``check_files``) and merges it (``merge_all``) through it too;
what needs the book's write lock is handed it (``Writing``: ``Book.writing``), so nothing here
calls back into the book.  Which physical form a batch's rows take and which SQL dialect
writes them are chosen here:

- a segment file beside a SQLite book on disk, written by the parser (``segment_files``);
- a table staged on PostgreSQL by the parser on its own connection (``pg_stage``), under a
  lock that marks it as a running import's;
- a SQLite page image the parser builds and the writer hands to SQLite (``sqlite_image``);
- else the rows themselves, which the writer inserts (``segments.write_segment``).

A batch goes through three hands:

1. ``Intake.open(db)`` (the writer, once an import): where the parsers put the rows
   (``Intake.image``, ``Intake.rows_to``: handed to the parser processes);
2. ``pack`` (a parser): a batch's ``BatchRows``, sorted by key, their next-move statistics
   counted, then written or packed as the intake says;
3. ``link`` (the writer, in the transaction that inserts the batch's games): the rows become a
   new segment, numbered from the batch's first game id; ``discard`` removes what was written
   and never linked.  Full levels of segments merge in that transaction
   (``merge_in_transaction``) where they are tables; files merge after it commits
   (``merge_files``, or ``next_merge`` and ``MergePlan`` where a process of the importer's
   own runs them).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

import numpy as np

from fuseki.book.storage import scheme
from fuseki.book.storage.position_index import (
    nextmoves,
    pg_stage,
    segment_files,
    segment_merges,
    segment_sweep,
    segments,
    sqlite_image,
    sqlite_stage,
    upgrades,
)

_EMPTY = np.empty(0, dtype=np.int64)

# What a parser packs into ``BatchRows.lows`` (a row's code below its game id): the move
# number from bit MOVE_SHIFT, the next point + 2 from bit NEXT_SHIFT, the winner in the two
# lowest bits; a game's positions after MAX_MOVE_NUMBER are not stored.  The bits are the
# book's (``scheme``, which readers decode by); this face declares them as what its importer
# hands in, so the parsers take them from the face they write through.
MAX_MOVE_NUMBER, MOVE_SHIFT, NEXT_SHIFT = scheme.MAX_MOVE_NUMBER, scheme.MOVE_SHIFT, scheme.NEXT_SHIFT


def game_years(years: list[int | None]) -> np.ndarray:
    """Each game's year as the next-move statistics count it (``nextmoves.NO_YEAR``: none)."""
    return np.array([nextmoves.NO_YEAR if year is None else year for year in years], dtype=np.int64)


@dataclass
class BatchRows:
    """A batch's position rows, its games numbered from 0, in the form the book's index takes
    them (``pack``): ``written`` (the name of a segment file or staged table a parser wrote, of
    ``written_rows`` rows and their next-move statistics), else ``image`` (a SQLite page image,
    ``segments.batch_image``), else ``keys``/``lows``/``owners`` (sorted by key; ``owners[i]``
    the batch's game of row i; ``lows[i]`` its code's bits below the game id).
    ``next_stats``: the rows' next-move statistics where they are not in the file or table;
    ``years``: each game's year.  ``linked``: the writer's transaction that made them a
    segment committed (else ``discard`` removes what was written)."""

    years: np.ndarray
    next_stats: nextmoves.NextMoveStats | None = None
    keys: np.ndarray = field(default_factory=lambda: _EMPTY)
    lows: np.ndarray = field(default_factory=lambda: _EMPTY)
    owners: np.ndarray = field(default_factory=lambda: _EMPTY)
    image: np.ndarray | None = None
    written: str | None = None
    written_rows: int = 0
    linked: bool = False

    def game_ids(self, first_id: int, keep: np.ndarray) -> np.ndarray:
        """``ids[i]``: the id game i gets where ``keep[i]`` (the games new to the book), from
        ``first_id``: a written file or table keeps the parser's numbers (game i is
        ``first_id + i``, a gap where one is dropped); rows and images are numbered again."""
        if self.written is not None:
            return np.arange(first_id, first_id + len(keep), dtype=np.int64)
        return np.cumsum(keep) + (first_id - 1)


def pack(rows: BatchRows, image: bool = False, rows_to: Callable | None = None) -> None:
    """A parser's batch put in the form the index takes (``Intake``), in place: its rows
    (sorted by key, ``keys``/``lows``/``owners``) counted into next-move statistics, then
    written by ``rows_to(keys, codes, next_stats) -> name`` if given, else packed as an image
    if ``image``, else left as they are.  The rows' arrays are dropped as they are used: a
    batch's rows are most of a parser's memory."""
    keys, owners, lows = rows.keys, rows.owners, rows.lows
    rows.next_stats = nextmoves.from_rows(keys, owners, lows, rows.years[owners])
    if rows_to is None and not image:
        return
    rows.keys = rows.lows = rows.owners = _EMPTY
    codes = owners  # the codes, numbered by owner, made in the owners' array
    codes <<= scheme.GAME_SHIFT
    codes |= lows
    del owners, lows
    if rows_to is not None:
        rows.written = rows_to(keys, codes, rows.next_stats)
        rows.written_rows, rows.next_stats = len(keys), None
    else:
        rows.image = segments.batch_image(keys, codes, own_codes=True)


class Intake:
    """Where one import's parsers put their batches' rows (see the module docstring): ``image``
    (batches as SQLite page images), ``rows_to`` (a parser writes them: a segment file's
    ``segment_files.FileWriter`` or PostgreSQL's ``pg_stage.Stager``; None: the writer does),
    ``files`` (segments are files, merged after a batch's commit).  ``close`` ends it."""

    def __init__(self, image: bool, rows_to: Callable | None, files: bool, held: pg_stage.Hold | None = None):
        self.image, self.rows_to, self.files, self._held = image, rows_to, files, held

    @classmethod
    def open(cls, db) -> Intake:
        """The intake of the book of ``db`` (a PostgreSQL book's: its staging lock taken)."""
        with db.connect() as conn:
            folder = segment_files.files_folder(conn)
        image = db.dialect.name == "sqlite" and sqlite_stage.IMAGES
        if folder is not None:
            return cls(image, segment_files.FileWriter(folder, os.getpid()), True)
        if db.dialect.name == "postgresql" and pg_stage.ENABLED:
            held = pg_stage.hold(db)
            return cls(image, pg_stage.Stager(db.url, held.token), False, held)
        return cls(image, None, False)

    def close(self) -> None:
        """Drop what the import staged and did not link (a stop, an error) and its lock."""
        if self._held is not None:
            self.rows_to.close()  # its connection, where this process staged (no parser processes)
            pg_stage.release(self._held)
            self._held = None


def link(conn, rows: BatchRows, first_id: int, keep: np.ndarray) -> int:
    """Make a batch's rows a new segment of the index, its games numbered from ``first_id``,
    those not ``keep`` (another batch brought them) left out; returns the rows linked.  Call
    in the write transaction that inserts the batch's games (``Book.writing``)."""
    base = first_id << scheme.GAME_SHIFT
    if rows.written is not None:
        linked = rows.written_rows - _drop_games(conn, rows, keep)
        if conn.dialect.name == "postgresql":
            pg_stage.link(conn, rows.written, linked, base)
        else:
            segment_files.link_file(conn, rows.written, linked, base)
        return linked
    if rows.image is not None and keep.all() and _number(rows.image, base):
        segments.write_image_segment(conn, rows.image, rows.next_stats)
        return sqlite_image.row_count(rows.image)
    return _write_rows(conn, rows, rows.game_ids(first_id, keep), keep)


def discard(db, rows: BatchRows) -> None:
    """Remove what a parser wrote and the writer never linked (its games were all in the book,
    or its transaction failed)."""
    if rows.written is None or rows.linked:
        return
    if db.dialect.name == "postgresql":
        pg_stage.drop(db, rows.written)
    else:
        with db.connect() as conn:
            segment_files.remove(segment_files.book_folder(conn), [rows.written])


def _drop_games(conn, rows: BatchRows, keep: np.ndarray) -> int:
    """Take the games another parser's batch brought (not ``keep``) out of what the parser
    wrote; returns how many rows went."""
    if keep.all():
        return 0
    games = np.flatnonzero(~keep)
    if conn.dialect.name == "postgresql":
        return pg_stage.drop_games(conn, rows.written, games, rows.years)
    return segment_files.drop_games(os.path.join(segment_files.book_folder(conn), rows.written), games, rows.years)


def _number(image: np.ndarray, base: int) -> bool:
    """Number an image's games from ``base`` (the first id, shifted; they are numbered from 0);
    False if an id would not fit in its codes' 6 bytes (a book of 8 million games: the rows
    are written again)."""
    try:
        sqlite_image.add_to_codes(image, base)
    except ValueError:
        return False
    return True


def _write_rows(conn, rows: BatchRows, ids: np.ndarray, keep: np.ndarray) -> int:
    """Write the rows of the batch's new games (``keep``, numbered ``ids``); returns their number."""
    keys, lows, owners, next_stats = rows.keys, rows.lows, rows.owners, rows.next_stats
    if rows.image is not None:
        keys, codes = sqlite_image.image_rows(rows.image)
        owners, lows = codes >> scheme.GAME_SHIFT, codes & ((1 << scheme.GAME_SHIFT) - 1)
    codes = (ids[owners] << scheme.GAME_SHIFT) | lows
    if not keep.all():  # rows of new games only, still in key order
        row_keep = keep[owners]
        keys, codes, next_stats = keys[row_keep], codes[row_keep], None  # next_stats: counted again
    segments.write_segment(conn, keys, codes, next_stats)
    return len(keys)


def merge_in_transaction(conn, announce=None) -> bool:
    """Merge the full levels of segments kept as tables, in the batch's write transaction;
    False where they are files (``merge_files`` merges them after the commit).  ``announce(segments,
    rows)`` is called before each merge."""
    if segment_files.files_folder(conn) is not None:
        return False
    segments.merge_full_levels(conn, announce)
    return True


# A merge links its file in a transaction of the caller's ``writing()``: a connection in a
# write transaction holding the book's write lock (``Book.writing``), which the index takes
# from above rather than calling up into the book for it.
Writing = Callable[[], AbstractContextManager]


def merge_files(db, writing: Writing, announce=None) -> int:
    """Merge the full levels of the segment files of the book on ``db`` in this process, outside
    any transaction, each linked in through ``writing``; returns the merges made.  ``announce(segments,
    rows)`` is called before each merge."""
    merges = 0
    while (plan := next_merge(db, announce)) is not None:
        plan.link(writing, plan.run(os.getpid()))
        merges += 1
    return merges


@dataclass(frozen=True)
class MergePlan:
    """One merge of segment files (``next_merge``): ``run`` (in any process) writes the merged
    file, ``link`` (in the importing process) makes it the segment its parts were."""

    parts: list
    level: int
    sources: list
    folder: str
    book_path: str

    def run(self, owner: int) -> tuple[str, int]:
        """Write the merged file (named for ``owner``, the process that links it); (name, rows)."""
        return segment_files.merge(self.sources, self.book_path, self.folder, owner)

    def link(self, writing: Writing, merged: tuple[str, int]) -> bool:
        """Link ``run``'s file in (in a transaction of ``writing``), the parts' files removed;
        False if another writer merged first."""
        return segment_merges.link_merge(writing, self.parts, self.level, *merged)


def next_merge(db, announce=None) -> MergePlan | None:
    """The next merge of the segment files of the book on ``db`` (its lowest full level),
    announced; None: none."""
    plan = segment_merges.next_merge(db, announce)
    if plan is None:
        return None
    parts, level, sources, folder, book_path = plan
    return MergePlan(parts, level, sources, folder, book_path)


def warm_up() -> None:
    """Load the page image's kernels (compiled or from numba's cache) before parser processes fork."""
    image = segments.batch_image(np.array([1], dtype=np.int64), np.array([1], dtype=np.int64))
    sqlite_image.add_to_codes(image, 1 << scheme.GAME_SHIFT)
    sqlite_image.image_rows(image)


def sweep(conn) -> None:
    """What stopped imports left in the index: segment files no row names and, on PostgreSQL,
    staged tables whose import's lock is free.  Call in a write transaction holding the book's
    write lock (``Book.open`` for writing)."""
    segment_sweep.sweep_book(conn)
    pg_stage.sweep(conn)


def check_files(db, reader: bool) -> tuple[str, list[str]] | None:
    """The segment files of the book on ``db`` as ``Book.open`` finds them, after its
    transaction: for a ``reader`` (no write lock, so no ``sweep``), what stopped imports left
    removed first where their owner process is gone (``segment_sweep.sweep_dead``; staged
    tables wait for a writer); then (the folder, the names) of the files the book lists and
    its folder lacks (copied without it), None where none is missing or there are no files.
    A merge that commits meanwhile removes files it no longer lists, so a file counts as
    missing only if two reads list it."""
    if reader:
        segment_sweep.sweep_dead(db)
    gone: set[str] | None = None
    for _ in range(3):
        with db.connect() as conn:
            folder = segment_files.book_folder(conn)
            listed = [segment.name for segment in segment_files.in_files(conn)] if folder else []
        found = {name for name in listed if not os.path.exists(os.path.join(folder, name))}
        if not found:
            return None
        if gone is not None and found & gone:
            return folder, sorted(found & gone)
        gone = found
    return None


def end_write(conn) -> None:
    """After a write transaction (``Book.writing``): SQLite's stage, the in-memory database a
    batch's image arrived in, emptied (``sqlite_stage``)."""
    if conn.dialect.name == "sqlite":
        sqlite_stage.clear_stage(conn.connection.dbapi_connection)


def merge_all(db, writing: Writing) -> None:
    """Every segment of the book on ``db`` merged into one in the book's own file (``Book.compact``):
    segment files merged into one and folded in (``segment_merges.fold_files``), tables in one
    transaction of ``writing``."""
    with db.connect() as conn:
        in_files = bool(segment_files.in_files(conn))
    if in_files:
        segment_merges.fold_files(db, writing)
    else:
        with writing() as conn:
            segments.merge_all(conn)


def upgrade(conn, found: str) -> None:
    """The index of a book of an older schema version ``found`` brought to this one, in the
    caller's write transaction (``book.storage.migrate``; ``upgrades`` says what changes)."""
    upgrades.upgrade(conn, found)
