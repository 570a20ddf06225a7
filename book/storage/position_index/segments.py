"""The positions index as segments: sorted tables written once, merged a level at a time.

Every batch of games an importer writes becomes a new table ``positions_<id>`` (a
*segment*, ``schema.segment_table``) registered in ``segments(id, level, rows)``, in
the same transaction as the games.  A next-move query reads one key from each segment.
When a level holds ``FANOUT`` segments they are merged into one segment of the next
level, so a book of B batches has at most ``FANOUT - 1`` segments per level and
log_FANOUT(B) levels: a small LSM tree.

Why not one big table: a batch's keys are spread over the whole key range, so every
batch written into one B-tree rewrote nearly every leaf page of it (the log grew by
the size of the whole table at each commit): a batch's commit grew with the book without
end (bench/book.py --corpus prints the import rate of each tenth of the games) -- an import's cost
was quadratic in the book's size.  A new segment only appends pages.  On SQLite its
rows come as a database image (``book.storage.position_index.sqlite_image``) copied by SQLite's transfer of a
whole table into an empty one, which packs the pages full: the book needs no ``VACUUM``
to stay under 5 KB a game (random inserts left pages about 88% full).

A reader takes the segment list and the codes of its key in one snapshot (SQLite) or
tries again when a merge dropped a segment between its two statements (PostgreSQL's
READ COMMITTED; see ``SegmentIndex.codes``).
"""

from __future__ import annotations

import itertools
import os
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from sqlalchemy import func, insert, select, text, union_all

from fuseki.book.storage.dialect import book_file
from fuseki.book.storage.position_index import nextmoves, segment_files, sqlite_image, sqlite_stage
from fuseki.book.storage.schema import games, joined_numbers, segment_table, segments, staging_table
from fuseki.book.storage.schema import segment_files as files_table
from fuseki.book.storage.scheme import GAME_SHIFT

# A level holding this many segments is merged into one segment of the next level.  A merge
# rewrites its rows in one transaction, stalling the import; a query reads every segment, a
# few index probes each.  With the importer's batches of 16,000 games the first merge comes
# at 512,000 games; bench/corpus.py prints both costs.
FANOUT = 32

_TEMP_STAGE = f"temp.{staging_table.name}"  # where rows go without images (sqlite_stage.IMAGES)
_ROWS_PER_STATEMENT = 250  # 500 parameters: under every SQLite's limit (999 before 3.32)


class Segment(NamedTuple):
    id: int
    level: int
    rows: int


def live(conn) -> list[Segment]:
    """The book's segments, oldest first."""
    query = select(segments.c.id, segments.c.level, segments.c.rows).order_by(segments.c.id)
    return [Segment(int(i), int(level), int(rows)) for i, level, rows in conn.execute(query)]


def row_count(conn) -> int:
    """Position rows in all segments."""
    return int(conn.execute(select(func.sum(segments.c.rows))).scalar() or 0)


def all_rows(conn) -> tuple[np.ndarray, np.ndarray]:
    """(keys, codes) of every segment's rows, in files or not (for checks: all in memory)."""
    files = segment_files.in_files(conn)
    in_book = {segment.id for segment in files}
    tables = [segment_table(segment.id) for segment in live(conn) if segment.id not in in_book]
    keys, codes = [], []
    if tables:
        found_keys, found_codes = _pairs(conn.execute(union_all(*(select(table.c.key, table.c.code)
                                                                  for table in tables))).all())
        keys.append(found_keys)
        codes.append(found_codes)
    folder = segment_files.book_folder(conn)
    for segment in files:
        found_keys, found_codes = segment_files.read_rows(os.path.join(folder, segment.name))
        keys.append(found_keys)
        codes.append(found_codes + segment.base)
    if not keys:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    return np.concatenate(keys), np.concatenate(codes)


def rows_of(conn, segment_id: int) -> tuple[np.ndarray, np.ndarray]:
    """(keys, codes) of one segment's rows, in a file or not (for checks)."""
    for segment in segment_files.in_files(conn):
        if segment.id == segment_id:
            keys, codes = segment_files.read_rows(os.path.join(segment_files.book_folder(conn), segment.name))
            return keys, codes + segment.base
    return _pairs(conn.exec_driver_sql(f"SELECT key, code FROM positions_{int(segment_id)}").all())


def _pairs(rows) -> tuple[np.ndarray, np.ndarray]:
    """(keys, codes) of driver rows (key, code)."""
    pairs = np.array([tuple(row) for row in rows], dtype=np.int64).reshape(-1, 2)  # Rows: numpy would probe each
    return pairs[:, 0].copy(), pairs[:, 1].copy()


def stats_of(conn, segment_id: int) -> nextmoves.NextMoveStats | None:
    """One segment's next-move statistics, in a file or not; None: it has none (a book made before them)."""
    for segment in segment_files.in_files(conn):
        if segment.id == segment_id:
            return segment_files.read_stats(os.path.join(segment_files.book_folder(conn), segment.name))
    return nextmoves.read_all(conn, segment_id) if segment_id in with_stats(conn) else None


def batch_image(keys: np.ndarray, codes: np.ndarray, own_codes: bool = False) -> np.ndarray:
    """Rows (sorted by key) as the image ``write_image_segment`` takes, its codes wide.

    The importer's workers build it with the games numbered from 0, so that the writer
    only adds the first game id (``sqlite_image.add_to_codes``) and links it in: the image
    is built where there is a core for each worker, not in the one writer.
    """
    return sqlite_image.rows_image(keys, codes, sqlite_stage.STAGE_DDL, wide_codes=True, own_codes=own_codes)


def write_segment(conn, keys: np.ndarray, codes: np.ndarray, next_stats: nextmoves.NextMoveStats | None = None) -> int:
    """Write position rows (sorted by key) as a new level-0 segment; returns its id (0: no rows).

    ``next_stats``: the rows' ``nextmoves.from_rows`` where the caller has it (the importer's
    workers count it), else it is counted here.  Call inside the write transaction that
    also writes the rows' games (Book.writing): the games' years are read from it.
    """
    if not len(keys):
        return 0
    if next_stats is None:
        next_stats = _count_stats(conn, keys, codes, nextmoves.GAMES)
    folder = segment_files.files_folder(conn)
    if folder is not None:
        name = segment_files.write_rows(folder, keys, codes, next_stats, os.getpid())
        return segment_files.link_file(conn, name, len(keys), 0)
    dialect = conn.dialect.name
    if dialect == "postgresql":  # its key built after the rows are in
        from fuseki.book.storage.position_index import (
            pg_stage,  # PostgreSQL's only (a SQLite reader need not import it)
        )

        segment = segment_files.new_segment_id(conn)
        pg_stage.copy_rows(conn, segment_table(segment).name, keys, codes)
    else:
        segment, table = _new_segment_table(conn)
        if dialect == "sqlite":
            _write_sqlite(conn.connection.dbapi_connection, table.name, keys, codes)
        else:
            conn.execute(table.insert(), [{"key": k, "code": c} for k, c in zip(keys.tolist(), codes.tolist())])
    return _register(conn, segment, len(keys), next_stats)


def write_image_segment(conn, image: np.ndarray, next_stats: nextmoves.NextMoveStats) -> int:
    """``write_segment`` of rows given as a ``batch_image`` (its games numbered for this book).

    On SQLite the image goes to SQLite as it is; elsewhere its rows are read back from it."""
    dbapi_connection = conn.connection.dbapi_connection
    if conn.dialect.name != "sqlite" or not sqlite_stage.IMAGES or not sqlite_stage.has_stage(dbapi_connection):
        keys, codes = sqlite_image.image_rows(image)
        return write_segment(conn, keys, codes, next_stats)
    rows = sqlite_image.row_count(image)
    if not rows:
        return 0
    segment, table = _new_segment_table(conn)
    _write_sqlite(dbapi_connection, table.name, None, None, image)
    return _register(conn, segment, rows, next_stats)


def drop_table(conn, segment_id: int) -> None:
    """Drop a segment's table (on PostgreSQL, a staged segment's view with its rows)."""
    if conn.dialect.name == "postgresql":
        from fuseki.book.storage.position_index import pg_stage

        pg_stage.drop_segment(conn, segment_id)
    else:
        segment_table(segment_id).drop(conn)


def _register(conn, segment: int, rows: int, next_stats: nextmoves.NextMoveStats) -> int:
    """List a new level-0 segment, its next-move statistics beside it; returns its id."""
    nextmoves.write(conn, segment, next_stats)
    conn.execute(insert(segments).values(id=segment, level=0, rows=rows))
    return segment


def _count_stats(conn, keys: np.ndarray, codes: np.ndarray, min_games: int) -> nextmoves.NextMoveStats:
    """The next-move statistics of rows ``(key, code)`` (their games' years read from the games table)."""
    return nextmoves.from_codes(keys, codes, lambda low, high: nextmoves.years_by_id(conn, low, high), min_games)


def merge_full_levels(conn, announce=None) -> None:
    """While a level holds FANOUT segments, merge its oldest FANOUT into one of the next level.

    Call inside a write transaction.  ``announce(segments, rows)``, if given, is called
    before each merge (it takes minutes at a million games: the import's progress says why).
    """
    while True:
        by_level: dict[int, list[Segment]] = {}
        for segment in live(conn):
            by_level.setdefault(segment.level, []).append(segment)
        full = sorted(level for level, found in by_level.items() if len(found) >= FANOUT)
        if not full:
            return
        parts = by_level[full[0]][:FANOUT]
        if announce is not None:
            announce(len(parts), sum(part.rows for part in parts))
        merge(conn, parts, full[0] + 1)


def full_level(conn) -> tuple[list[Segment], int] | None:
    """(the oldest FANOUT segments of the lowest full level, the level they merge into), or None."""
    by_level: dict[int, list[Segment]] = {}
    for segment in live(conn):
        by_level.setdefault(segment.level, []).append(segment)
    full = sorted(level for level, found in by_level.items() if len(found) >= FANOUT)
    if not full:
        return None
    return by_level[full[0]][:FANOUT], full[0] + 1


def merge_sources(conn, parts: list[Segment]) -> list[segment_files.Source]:
    """What ``segment_files.merge`` reads for ``parts``: their files, or their tables in the book."""
    book = book_file(conn)
    files = {segment.id: segment for segment in segment_files.in_files(conn)}
    have = with_stats(conn)
    sources = []
    for part in parts:
        if part.id in files:
            found = files[part.id]
            sources.append(segment_files.Source(os.path.join(segment_files.book_folder(conn), found.name), None,
                                                None, found.base))
        else:
            sources.append(segment_files.Source(book, f"positions_{part.id}",
                                                f"next_stats_{part.id}" if part.id in have else None, 0))
    return sources


def link_merged(conn, parts: list[Segment], name: str, rows: int, level: int) -> list[str] | None:
    """Replace ``parts`` by the segment file ``name`` (``segment_files.merge``) at ``level``;
    returns the files to remove once this transaction commits, or None if a part is gone
    (another importer merged it first: the caller removes ``name``)."""
    ids = [part.id for part in parts]
    present = set(conn.execute(select(segments.c.id).where(segments.c.id.in_(ids))).scalars())
    if present != set(ids):
        return None
    files = {segment.id: segment.name for segment in segment_files.in_files(conn)}
    for part in parts:
        if part.id not in files:
            drop_table(conn, part.id)
            nextmoves.drop(conn, part.id)
    conn.execute(files_table.delete().where(files_table.c.id.in_(ids)))
    conn.execute(segments.delete().where(segments.c.id.in_(ids)))
    segment = segment_files.new_segment_id(conn)
    conn.execute(insert(files_table).values(id=segment, file=name, base=0))
    conn.execute(insert(segments).values(id=segment, level=level, rows=rows))
    return [files[i] for i in ids if i in files]


def merge(conn, parts: list[Segment], level: int) -> int:
    """Replace some segments by one of ``level`` holding all their rows; returns its id."""
    segment, table = _new_segment_table(conn, keyed=conn.dialect.name != "postgresql")
    union = " UNION ALL ".join(f"SELECT key, code FROM positions_{part.id}" for part in parts)
    if conn.dialect.name == "sqlite":
        # In key order SQLite appends each row (a merge of the sorted segments, no sort), but
        # an ordinary INSERT leaves a WITHOUT ROWID table's pages about 88% full (a merged
        # book took 11% more room); its transfer of a whole table into an empty one packs
        # them.  So the rows go once into a scratch table, then across; the scratch pages
        # are free again after, for the next batches or Book.reclaim.
        scratch = segment_table(f"{segment}_merging")
        scratch.create(conn)
        conn.execute(text(f"INSERT INTO {scratch.name} (key, code) {union} ORDER BY 1, 2"))
        conn.execute(text(f"INSERT INTO {table.name} SELECT * FROM {scratch.name}"))  # "*": the transfer
        scratch.drop(conn)
    else:
        conn.execute(text(f"INSERT INTO {table.name} (key, code) {union}"))
    if conn.dialect.name == "postgresql":
        from fuseki.book.storage.position_index import pg_stage

        pg_stage.add_key(conn, table.name)
    nextmoves.write(conn, segment, _merged_stats(conn, parts))
    for part in parts:
        drop_table(conn, part.id)
        nextmoves.drop(conn, part.id)
    conn.execute(segments.delete().where(segments.c.id.in_([part.id for part in parts])))
    conn.execute(insert(segments).values(id=segment, level=level, rows=sum(part.rows for part in parts)))
    return segment


def _merged_stats(conn, parts: list[Segment]) -> nextmoves.NextMoveStats:
    """The parts' next-move statistics added up (``nextmoves.add_up``); a part without one (a book
    written before them) gives its rows."""
    have = with_stats(conn)
    found = [nextmoves.read_all(conn, part.id) if part.id in have else nextmoves.empty() for part in parts]
    return nextmoves.add_up(found, lambda i, keys: _count_stats(conn, *rows_of_keys(conn, parts[i].id, keys), 1))


def rows_of_keys(conn, segment_id: int, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(keys, codes) of one segment's rows under any of ``keys`` (signed)."""
    table = f"positions_{int(segment_id)}"
    if conn.dialect.name == "sqlite":
        query = text(f"SELECT p.key, p.code FROM json_each(:keys) AS j JOIN {table} AS p ON p.key = j.value")
        found = conn.execute(query, {"keys": "[" + ",".join(map(str, keys.tolist())) + "]"}).all()
    else:
        query = text(f"SELECT p.key, p.code FROM unnest(CAST(:keys AS BIGINT[])) AS j(k) "
                     f"JOIN {table} AS p ON p.key = j.k")
        found = conn.execute(query, {"keys": keys.tolist()}).all()
    return _pairs(found)


def with_stats(conn) -> set[int]:
    """The segments that have next-move statistics table."""
    return {int(i) for i in conn.execute(_WITH_STATS[conn.dialect.name]).scalars()}


_WITH_STATS = {  # the ids of the tables next_stats_<id>
    "sqlite": text("SELECT substr(name, 12) FROM sqlite_master WHERE type = 'table' AND name GLOB 'next_stats_*'"),
    "postgresql": text("SELECT substr(tablename, 12) FROM pg_tables WHERE schemaname = current_schema() "
                       "AND tablename LIKE 'next!_stats!_%' ESCAPE '!'"),
}


def merge_all(conn) -> None:
    """Merge every segment into one (Book.compact), keeping the highest level."""
    parts = live(conn)
    if len(parts) > 1:
        merge(conn, parts, max(part.level for part in parts))


class Snapshot(NamedTuple):
    """What a reader's answer depends on, read in one read transaction."""

    version: int  # the largest game id
    ids: tuple[int, ...]  # the segments in the book's own file
    with_stats: frozenset[int]  # those of them with next-move statistics
    files: tuple[segment_files.FileSegment, ...] = ()  # the segments in files
    folder: str | None = None  # where those are


def snapshot(conn) -> Snapshot:
    """The book's largest game id, segments and counted segments, in one read transaction."""
    statement = _SNAPSHOT.get(conn.dialect.name)
    if statement is None:  # another database: several statements
        version = conn.execute(select(func.max(games.c.id))).scalar()
        files = tuple(segment_files.in_files(conn))
        in_book = {segment.id for segment in files}
        ids = tuple(int(i) for i in conn.execute(select(segments.c.id)).scalars() if int(i) not in in_book)
        return Snapshot(int(version or 0), ids, frozenset(), files, segment_files.book_folder(conn) if files else None)
    if conn.dialect.name == "sqlite":
        (version, ids, stats_ids, has_files), = _fetch(conn, statement)
    else:
        (version, ids, stats_ids), = _fetch(conn, statement)
        has_files = 0
    ids = tuple(sorted(int(i) for i in ids.split(","))) if ids else ()
    found = frozenset(int(i) for i in stats_ids.split(",")) if stats_ids else frozenset()
    files: tuple[segment_files.FileSegment, ...] = ()
    folder = None
    if has_files:
        (listed,), = _fetch(conn, _FILES)  # the same read transaction (_fetch began it)
        if listed:
            files = tuple(sorted(segment_files.FileSegment(int(i), name, int(base))
                                 for i, name, base in (item.split(" ") for item in listed.split("\n"))))
            filed = {segment.id for segment in files}
            ids = tuple(i for i in ids if i not in filed)
            folder = segment_files.book_folder(conn)
    return Snapshot(int(version or 0), ids, found & frozenset(ids), files, folder)


_SNAPSHOT = {
    "sqlite": text("SELECT (SELECT max(id) FROM games), (SELECT group_concat(id) FROM segments), "
                   "(SELECT group_concat(substr(name, 12)) FROM sqlite_master "
                   "WHERE type = 'table' AND name GLOB 'next_stats_*'), "
                   "(SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'segment_files')"),
    "postgresql": text("SELECT (SELECT max(id) FROM games), "
                       "(SELECT string_agg(CAST(id AS TEXT), ',') FROM segments), "
                       "(SELECT string_agg(substr(tablename, 12), ',') FROM pg_tables "
                       "WHERE schemaname = current_schema() AND tablename LIKE 'next!_stats!_%' ESCAPE '!')"),
}
_FILES = text("SELECT group_concat(id || ' ' || file || ' ' || base, char(10)) FROM segment_files")


def largest_game_id(conn) -> int:
    """The book's largest game id (0: no game), on the fast path the snapshot takes."""
    if conn.dialect.name not in _SNAPSHOT:
        return int(conn.execute(select(func.max(games.c.id))).scalar() or 0)
    return int(_fetch(conn, _LARGEST_ID)[0][0] or 0)


_LARGEST_ID = text("SELECT max(id) FROM games")


def key_stats(conn, snap: Snapshot, key: int) -> tuple[nextmoves.NextMoveStats, np.ndarray]:
    """(the next-move statistics' counts of ``key``, the codes of the segments without it): one statement
    over the segments in the book's file, one a segment file."""
    stats, joined = [], []
    if snap.ids:
        found = _fetch(conn, _key_statement(conn.dialect.name, snap.ids, snap.with_stats), key)
        stats = [nextmoves.from_stats(key, bytes(blob)) for blob, _codes in found if blob is not None]
        joined = [codes for blob, codes in found if codes]
    found = joined_numbers(joined)
    if snap.files:
        counted, codes = segment_files.key_stats(snap.folder, snap.files, key)
        stats += counted
        found = np.concatenate([found, *codes])
    return nextmoves.combine(stats) if stats else nextmoves.empty(), found


@lru_cache(maxsize=64)
def _key_statement(dialect: str, ids: tuple[int, ...], stats_ids: frozenset[int]):
    if dialect == "sqlite":
        stats, codes = "SELECT stats, NULL", "group_concat(code)"
    else:
        stats, codes = "SELECT stats, CAST(NULL AS TEXT)", "string_agg(CAST(code AS TEXT), ',')"
    parts = []
    for i in ids:
        rows = f"(SELECT {codes} FROM positions_{int(i)} WHERE key = :k)"
        if i in stats_ids:
            parts.append(f"{stats} FROM next_stats_{int(i)} WHERE key = :k")
            parts.append(f"SELECT NULL, {rows} WHERE NOT EXISTS (SELECT 1 FROM next_stats_{int(i)} WHERE key = :k)")
        else:
            parts.append(f"SELECT NULL, {rows}")
    if dialect != "sqlite":
        parts = [part.replace("SELECT NULL,", "SELECT CAST(NULL AS BYTEA),", 1) for part in parts]
    return text(" UNION ALL ".join(parts))


def codes(conn, snap: Snapshot, key: int, games: np.ndarray | None = None) -> np.ndarray:
    """Every code stored under ``key`` (signed) in the snapshot's segments; ``games``: PostgreSQL
    returns only these games' codes (elsewhere they are all returned: the caller filters)."""
    found = _codes_in_book(conn, snap.ids, key, games)
    if not snap.files:
        return found
    return np.concatenate([found, segment_files.codes(snap.folder, snap.files, key)])


def _codes_in_book(conn, ids: tuple[int, ...], key: int, games: np.ndarray | None = None) -> np.ndarray:
    if not ids:
        return np.empty(0, dtype=np.int64)
    dialect = conn.dialect.name
    if dialect == "postgresql" and games is not None:  # a list the driver writes out: not prepared
        return joined_numbers([conn.execute(_games_codes(ids), {"k": key, "g": games.tolist()}).scalar()])
    if dialect in _JOINED:
        # Fetching thousands of one-column rows costs the drivers more than one string of
        # comma-separated codes parsed by numpy (the empty board).
        return joined_numbers([_fetch(conn, _joined_codes(dialect, ids), key)[0][0]])
    found = []
    for segment in ids:
        table = segment_table(segment)
        found.extend(conn.execute(select(table.c.code).where(table.c.key == key)).scalars())
    return np.array(found, dtype=np.int64)


_JOINED = {"sqlite", "postgresql"}  # databases that aggregate the codes into one string

# PostgreSQL plans a statement over every segment each time it is sent: more than running it
# (bench/book.py --into postgresql://...), so each connection prepares it once.  The snapshot's
# segments name the statement; a merge makes new ones, and the oldest are deallocated.
PREPARED_PER_CONNECTION = 16
_PREPARED = "fuseki_prepared"  # key of a DBAPI connection's .info: statement -> its name
_NAMES = itertools.count()


def _fetch(conn, statement, key: int | None = None) -> list:
    """The rows of ``statement`` (a ``text`` with one parameter ``:k``, given as ``key``, or
    none); on PostgreSQL through a statement prepared once per connection (prepared statements
    live as long as the session, through rollbacks; ``.info`` as long as the DBAPI connection)."""
    if conn.dialect.name == "sqlite":
        # the driver's own cursor: SQLAlchemy's execution costs twice what SQLite does here (a
        # key's read in 26 segments), and these two statements are every book query's
        if not conn.in_transaction():
            conn.begin()  # the snapshot and the key read in one read transaction
        return conn.connection.dbapi_connection.execute(statement.text, {} if key is None else {"k": key}).fetchall()
    if conn.dialect.name != "postgresql":
        return conn.execute(statement, {} if key is None else {"k": key}).all()
    prepared = conn.connection.info.setdefault(_PREPARED, {})
    name = prepared.pop(statement, None)
    if name is None:
        name = f"fuseki_{next(_NAMES)}"
        head = "" if key is None else " (bigint)"
        body = statement.text.replace(":k", "$1").replace("%", "%%")  # the driver formats with %
        conn.exec_driver_sql(f"PREPARE {name}{head} AS {body}")
        while len(prepared) >= PREPARED_PER_CONNECTION:
            conn.exec_driver_sql(f"DEALLOCATE {prepared.pop(next(iter(prepared)))}")
    prepared[statement] = name  # last used last
    if key is None:
        return conn.exec_driver_sql(f"EXECUTE {name}").all()
    return conn.exec_driver_sql(f"EXECUTE {name} (%(k)s)", {"k": key}).all()


@lru_cache(maxsize=64)
def _union(ids: tuple[int, ...]) -> str:
    """The codes under ``:k`` of the segments ``ids``, one SELECT a segment."""
    return " UNION ALL ".join(f"SELECT code FROM positions_{int(i)} WHERE key = :k" for i in ids)


def _joined_codes(dialect: str, ids: tuple[int, ...]):
    union = _union(ids)
    if dialect == "sqlite":
        return text(f"SELECT group_concat(code) FROM ({union})")
    # no ORDER BY: each segment gives its codes in order and the reader merges the runs (sorting
    # them here took PostgreSQL twice as long as the rest of the read, the empty board)
    return text(f"SELECT string_agg(CAST(code AS TEXT), ',') FROM ({union}) AS found")


@lru_cache(maxsize=16)
def _games_codes(ids: tuple[int, ...]):
    """PostgreSQL: the codes of some games (``:g``, an array) under a key; the games are hashed
    once (``IN (SELECT unnest(...))``), where ``= ANY(:g)`` compared each row with every game."""
    return text(f"SELECT string_agg(CAST(code AS TEXT), ',') FROM ({_union(ids)}) AS found "
                f"WHERE code >> {GAME_SHIFT} IN (SELECT unnest(CAST(:g AS BIGINT[])))")


def _new_segment_table(conn, keyed: bool = True):
    """(id, table) of a new, empty segment table; ids only grow (a merge's is the largest).

    ``keyed=False``: without its primary key yet (``pg_stage.add_key`` adds it once the rows are in)."""
    segment = segment_files.new_segment_id(conn)
    table = segment_table(segment)
    if keyed:
        table.create(conn)
    else:
        conn.execute(text(f"CREATE TABLE {table.name} (key BIGINT NOT NULL, code BIGINT NOT NULL)"))
    return segment, table


def _write_sqlite(dbapi_connection, table: str, keys: np.ndarray | None, codes: np.ndarray | None,
                  image: np.ndarray | None = None) -> None:
    """Fill the new, empty segment table through a staging table of the same definition.

    SQLite's transfer optimisation (INSERT INTO t SELECT * FROM s) copies the records as
    they are and packs t's pages full, only between tables of the same columns and key
    and into an empty t.  A transaction can stage one image: the transfer leaves the stage
    in the transaction until it ends.
    """
    cursor = dbapi_connection.cursor()
    try:
        if sqlite_stage.IMAGES and sqlite_stage.has_stage(dbapi_connection):
            if image is None:
                image = sqlite_image.rows_image(keys, codes, sqlite_stage.STAGE_DDL)
            dbapi_connection.deserialize(image.data, name=sqlite_stage.STAGE)
            cursor.execute(f"INSERT INTO main.{table} SELECT * FROM {sqlite_stage.STAGE}.{staging_table.name}")
        else:
            cursor.execute(f"DROP TABLE IF EXISTS {_TEMP_STAGE}")
            cursor.execute(sqlite_stage.STAGE_DDL.replace("CREATE TABLE ", "CREATE TEMPORARY TABLE ", 1))
            _bind_rows(cursor, keys, codes)
            cursor.execute(f"INSERT INTO main.{table} SELECT * FROM {_TEMP_STAGE}")
            cursor.execute(f"DROP TABLE {_TEMP_STAGE}")
    finally:
        cursor.close()


def _bind_rows(cursor, keys: np.ndarray, codes: np.ndarray) -> None:
    """Insert rows into the temporary staging table through the driver's cursor.

    Multi-row VALUES: binding 2 x 250 parameters a statement is faster than
    executemany of one row a statement (sqlite3's per-statement overhead dominates).
    """
    whole = len(keys) // _ROWS_PER_STATEMENT * _ROWS_PER_STATEMENT
    pairs = np.empty((len(keys), 2), dtype=np.int64)
    pairs[:, 0] = keys
    pairs[:, 1] = codes
    values = f"INSERT INTO {_TEMP_STAGE} (key, code) VALUES "
    if whole:
        cursor.executemany(values + ",".join(["(?, ?)"] * _ROWS_PER_STATEMENT),
                           pairs[:whole].reshape(-1, 2 * _ROWS_PER_STATEMENT).tolist())
    if whole < len(keys):
        cursor.executemany(values + "(?, ?)", pairs[whole:].tolist())
