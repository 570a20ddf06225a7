"""Import game records into the book: files, folders and archives -> rows, in batches.

The pipeline (``import_paths``)::

    reader process     iter_sources -> groups of files, dealt round-robin
                                         |                     |
    N parser processes          read_games -> replay -> sorted Batch   (one per group)
                                         |                     |
    this process                 taken in the same rotation -> write_batch -> database

- The reader decompresses archives (``book.sources``) and cuts the files into groups,
  one group per batch.  Each parser reads its groups' SGF (``book.records.read_games``,
  fast path first), replays them (the core's ``replay_games``, which
  gives every position's canonical key and the next move in canonical orientation,
  once per group and board size) and sorts the rows by key.  The writer only writes,
  taking the batches in the order the groups were dealt, so games are numbered in
  source order whatever N is.  With ``workers=0`` everything runs in the calling
  process (small imports, tests) and gives the same book.
- Each batch is ONE transaction holding its games and all their positions: an
  interrupted import leaves whole batches only, and a re-run skips what is there
  (the games' ``fingerprint``, blake2b-8 of size, setup and moves, is unique), so it
  completes without duplicates.  Asked to stop (``stop``), it ends between batches; the
  workers die with this process however it ends (``book.pipeline.workers``).
- A batch's rows become a new segment of the positions index (``book.segments``):
  a table of their own, written in key order, so a batch costs the same whatever the
  book's size.  SQLite gets them as a database image built page by page
  (``book.sqlite_image``) and copied by SQLite's whole-table transfer, PostgreSQL
  through ``COPY``, any other database through SQLAlchemy's portable ``insert()``.  Batches
  take the book's write lock (``Book.writing``), so importers in several processes
  take turns and never read the same ``max(id)`` or miss each other's fingerprints.
  A SQLite book copies its write-ahead log back into the file on a thread of its own
  (``book.wal``), not in the writer's commits.
- Measured on the Tygem archive (11,365 games, 2.3 M positions, bench/book.py, 2 cores),
  in CPU seconds: reading 0.3 and compressing the stored SGF 0.4; parsing 0.5, replay
  0.8 (the kernel 0.5), sorting 0.16; the writer 1.3, of which building the images 0.1
  and SQLite's transfer 0.6-0.8.  Handing the rows to SQLite through the driver instead
  (250-row ``INSERT ... VALUES``) took 1.4 s more, a rowid table keyed by position the same.

Anomalies: a game with an illegal move keeps its positions up to that move (the one
before it gets END as its next move), is stored, and its ``anomaly`` says which move
and why.  Positions after move 4095 are not stored (``schema.MAX_MOVE_NUMBER``), also
an anomaly.  Files that cannot be read at all are *skipped*, with the reason.
"""

from __future__ import annotations

import hashlib
import itertools
import multiprocessing
import os
import time
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, field
from itertools import chain

import numpy as np
from sqlalchemy import select

from fuseki.book.formats.fuego import FuegoBookError, fuego_records, is_fuego_book
from fuseki.book.formats.headers import HEADER_FIELDS
from fuseki.book.formats.positions import to_move_without_moves
from fuseki.book.formats.records import GameRecord, Moves, SgfError, read_games
from fuseki.book.formats.sources import Skipped, SourceFile, iter_sources
from fuseki.book.pipeline.progress import InputBytes, Progress
from fuseki.book.pipeline.workers import Sender, start_worker, stop_all, take
from fuseki.book.storage import schema, segments, summaries
from fuseki.engine.core import coords
from fuseki.engine.core.base import BLACK, EMPTY, WHITE
from fuseki.engine.core.board import Board
from fuseki.engine.core.replay import replay_game, replay_games

# Games a batch (one transaction, one segment): every segment costs each query a few index
# probes and every merge rewrites rows, so fewer, bigger segments; the price is memory (a
# parser holds a batch's rows: bench/corpus.py prints its peak) and a progress line a batch.
BATCH_GAMES = 16_000
# Parser processes: one per core, up to 3 (beyond that the writer, ~1.2 s of CPU for the
# 11,365 Tygem games, is the limit).  On 2 cores, 2 measured 7% faster than 1.
WORKERS = min(3, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
GROUP_BYTES = 32 << 20  # a batch also ends at 32 MB of files (~5.6 M moves, 90 MB of rows): a bound on memory
GAME_COLUMNS = [column.name for column in schema.games.columns]  # "id" first
_FINGERPRINT = GAME_COLUMNS.index("fingerprint") - 1  # in a game_row (no id)
_ANOMALY = GAME_COLUMNS.index("anomaly") - 1
_YEAR = GAME_COLUMNS.index("year") - 1


@dataclass
class ImportReport:
    """What an import did; ``str()`` is the one-line summary."""

    added: int = 0
    duplicates: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    anomalies: int = 0
    positions: int = 0
    elapsed: float = 0.0
    stopped: bool = False  # ended early, asked to (``import_paths``'s ``stop``): a re-run adds the rest

    @property
    def rate(self) -> float:
        return (self.added + self.duplicates) / self.elapsed if self.elapsed > 0 else 0.0

    def __str__(self) -> str:
        text = f"{self.added:,} games added, {self.duplicates:,} duplicates, "
        text += f"{len(self.skipped):,} files skipped"
        if self.skipped:
            named = "; ".join(f"{name}: {reason}" for name, reason in self.skipped[:3])
            more = f"; {len(self.skipped) - 3:,} more" if len(self.skipped) > 3 else ""
            text += f" ({named}{more})"
        text += f", {self.anomalies:,} anomalies, {self.elapsed:.1f} s, {self.rate:,.0f} games/s"
        return text


@dataclass
class Prepared:
    """Rows of a chunk of files, ready to write but for the game ids.

    ``games[i]`` is a ``game_row`` (the games table's columns but ``id``); game i owns
    ``counts[i]`` consecutive entries of ``keys`` (canonical keys, signed) and ``lows``
    (the low 24 bits of positions.code).
    """

    games: list[tuple] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)
    keys: list[np.ndarray] = field(default_factory=list)
    lows: list[np.ndarray] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class Batch:
    """One transaction's worth of games, built by the worker so the writer only writes.

    ``keys``/``lows`` hold every position row of the batch, sorted by key; ``owners[i]``
    is the index in ``games`` of row i's game.  Rows go into the table's B-tree in key
    order (the writer assigns ids, nothing else); the order among rows of one key does
    not matter here (SQLite's image orders their codes itself), so the sort need not be
    stable (4x faster: 12 instead of 53 ms for 400,000 rows).
    """

    games: list[tuple] = field(default_factory=list)
    keys: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    lows: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    owners: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    skipped: list[tuple[str, str]] = field(default_factory=list)
    read: int = 0  # bytes of the input read once its group was cut (progress.InputBytes)
    summary: summaries.Summary | None = None  # the rows' summary (segments), if every game is new


def make_batch(prepared: Prepared) -> Batch:
    """The Batch of some prepared chunks: rows concatenated, sorted by key."""
    if not prepared.games:
        return Batch(skipped=prepared.skipped)
    keys = np.concatenate(prepared.keys)
    order = np.argsort(keys)
    owners = np.repeat(np.arange(len(prepared.games), dtype=np.int64), prepared.counts)
    keys, lows, owners = keys[order], np.concatenate(prepared.lows)[order], owners[order]
    years = np.array([summaries.NO_YEAR if game[_YEAR] is None else game[_YEAR] for game in prepared.games],
                     dtype=np.int64)
    return Batch(prepared.games, keys, lows, owners, prepared.skipped,
                 summary=summaries.from_rows(keys, owners, lows, years[owners]))


# --- parse and replay (the worker's side) --------------------------------------------------

def _arrays(pairs) -> tuple[np.ndarray, np.ndarray]:
    """(points, colours) of one game's (colour, point) pairs, as int64 arrays."""
    points, colours, _offsets = _flat([pairs])
    return points, colours


def _fingerprint(size: int, setup_points, setup_colors, move_points, move_colors) -> int:
    digest = hashlib.blake2b(digest_size=8)
    digest.update(np.array([size, len(setup_points), len(move_points)], dtype=np.int64).tobytes())
    for part in (setup_points, setup_colors, move_points, move_colors):
        digest.update(part.tobytes())
    return int.from_bytes(digest.digest(), "little", signed=True)


def fingerprint(record: GameRecord) -> int:
    """blake2b-8 of size, setup and moves, as a signed 64-bit integer (the games' unique key)."""
    return _fingerprint(record.size, *_arrays(record.setup), *_arrays(record.moves))


def replay_record(record: GameRecord) -> tuple[np.ndarray, np.ndarray, str | None, int]:
    """(canonical keys, low codes, anomaly or None, fingerprint) of the positions a game reached."""
    size = record.size
    setup_points, setup_colors = _arrays(record.setup)
    move_points, move_colors = _arrays(record.moves)
    fp = _fingerprint(size, setup_points, setup_colors, move_points, move_colors)
    anomaly = None
    if len(move_points) > schema.MAX_MOVE_NUMBER:
        move_points = move_points[:schema.MAX_MOVE_NUMBER]
        move_colors = move_colors[:schema.MAX_MOVE_NUMBER]
        anomaly = f"positions after move {schema.MAX_MOVE_NUMBER} are not stored"
    n = len(move_points) + 1
    out_key, _, out_next, count = replay_game(size, setup_points, setup_colors, move_points, move_colors,
                                              to_move_without_moves(record))
    if count < n:
        anomaly = _illegal_move(record, count - 1)
    lows = _LOW_BASE[:count] | ((out_next[:count] + 2) << schema.NEXT_SHIFT) | (record.winner or 0)
    return out_key[:count], lows, anomaly, fp


_LOW_BASE = np.arange(schema.MAX_MOVE_NUMBER + 1, dtype=np.int64) << schema.MOVE_SHIFT


def _flat(pair_lists) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(points, colours, offsets) of many games' (colour, point) pairs, concatenated.

    The fast path's moves (``records.Moves``) are taken as the arrays they already are.
    """
    offsets = np.zeros(len(pair_lists) + 1, dtype=np.int64)
    np.cumsum([len(pairs) for pairs in pair_lists], out=offsets[1:])
    parts = [pairs.array if isinstance(pairs, Moves) else
             np.fromiter(chain.from_iterable(pairs), dtype=np.int64, count=2 * len(pairs)).reshape(-1, 2)
             for pairs in pair_lists]
    flat = np.concatenate(parts) if parts else np.empty((0, 2), dtype=np.int64)
    return flat[:, 1].copy(), flat[:, 0].copy(), offsets


def replay_records(records: list[GameRecord]):
    """``replay_record`` for many games at once (one kernel call per board size).

    Returns [(record, keys, lows, anomaly, fingerprint)], grouped by board size.
    """
    results = []
    groups: dict[int, list[GameRecord]] = {}
    for record in records:
        if len(record.moves) > schema.MAX_MOVE_NUMBER:
            results.append((record, *replay_record(record)))
        else:
            groups.setdefault(record.size, []).append(record)
    for size, group in groups.items():
        setup_points, setup_colors, setup_offsets = _flat([r.setup for r in group])
        move_points, move_colors, move_offsets = _flat([r.moves for r in group])
        firsts = np.array([to_move_without_moves(r) for r in group], dtype=np.int64)
        out_key, out_next, counts = replay_games(size, setup_points, setup_colors, setup_offsets,
                                                 move_points, move_colors, move_offsets, firsts)
        lows = ((out_next + 2) << schema.NEXT_SHIFT)
        for g, record in enumerate(group):
            a, b = move_offsets[g], move_offsets[g + 1]
            s, t = setup_offsets[g], setup_offsets[g + 1]
            start, count = int(a) + g, int(counts[g])
            fp = _fingerprint(size, setup_points[s:t], setup_colors[s:t], move_points[a:b], move_colors[a:b])
            anomaly = _illegal_move(record, count - 1) if count < b - a + 1 else None
            game_lows = lows[start:start + count] | _LOW_BASE[:count] | (record.winner or 0)
            results.append((record, out_key[start:start + count], game_lows, anomaly, fp))
    return results


def _illegal_move(record: GameRecord, index: int) -> str:
    """Why move ``index`` (0-based) of the record is illegal, replaying it with Board."""
    board = Board(record.size)
    for colour in (BLACK, WHITE, EMPTY):
        points = [p for c, p in record.setup if c == colour]
        if points:
            board.set_stones(colour, points)
    for colour, point in record.moves[:index]:
        board.play(colour, point)
    colour, point = record.moves[index]
    reason = board.legal_reason(colour, point) or "illegal"
    name = "B" if colour == BLACK else "W"
    return f"move {index + 1} ({name} {coords.point_to_vertex(point, record.size)}) is illegal: {reason}"


def game_row(record: GameRecord, anomaly: str | None, fp: int, packed: bytes | None = None) -> tuple:
    """The games table's columns but ``id``, in table order (``GAME_COLUMNS[1:]``), for a record.

    ``packed``: its SGF already compressed.  A tuple, not a dict: the writer only puts
    the id in front and hands the rows to the driver (0.2 s less of the writer's time
    for the 11,365 Tygem games).
    """
    row = {f.name: f.stored(getattr(record, f.name)) for f in HEADER_FIELDS}  # book.headers
    row.update(size=record.size, move_count=len(record.moves), source=record.source, fingerprint=fp, anomaly=anomaly,
               sgf=packed if packed is not None else schema.compress_sgf(record.sgf))
    return tuple(row[name] for name in GAME_COLUMNS[1:])


def read_source(source: SourceFile, fast: bool = True) -> list[GameRecord]:
    """The games of one file: SGF, or a Fuego opening book (one game per book line)."""
    if not source.name.lower().endswith(".sgf") and is_fuego_book(source.data[:4096]):
        return list(fuego_records(source.data.decode("ascii"), source.name))
    return read_games(source.data, source.name, fast=fast)


def prepare(files: list[SourceFile], fast: bool = True, packed: list[bytes | None] | None = None) -> Prepared:
    """Parse and replay some files (runs in a parser process).

    ``packed[i]``, if given, is ``schema.compress_sgf`` of ``files[i]``'s stripped bytes
    (``pack``, done by the reader): the stored SGF of a file that is one game.
    """
    out = Prepared()
    records: list[GameRecord] = []
    blobs: dict[int, bytes] = {}  # id(record) -> its packed SGF, for files that are one game
    for i, source in enumerate(files):
        try:
            found = read_source(source, fast)
        except (SgfError, FuegoBookError, UnicodeDecodeError) as exc:
            out.skipped.append((source.name, str(exc).removeprefix(source.name + ": ")))
            continue
        if packed and packed[i] is not None and len(found) == 1 and found[0].sgf == source.data.strip():
            blobs[id(found[0])] = packed[i]
        records += found
    for record, keys, lows, anomaly, fp in replay_records(records):
        out.games.append(game_row(record, anomaly, fp, blobs.get(id(record))))
        out.counts.append(len(keys))
        out.keys.append(keys)
        out.lows.append(lows)
    return out


def warm_up() -> None:
    """Load the replay kernel (compiled or from numba's cache) before forking the worker."""
    record = GameRecord(size=9, setup=[], moves=[(BLACK, coords.xy_to_point(2, 2, 9))], komi=None,
                        handicap=0, black="", white="", black_rank="", white_rank="", date="",
                        year=None, event="", result="", winner=None, rules="", source="", sgf=b"")
    replay_record(record)
    replay_records([record])


# --- writing (the main process's side) -------------------------------------------------------

def write_batch(book, batch: Batch, report: ImportReport) -> None:
    """Write one batch's new games and their positions in one transaction."""
    if not batch.games:
        return
    fingerprints = [game[_FINGERPRINT] for game in batch.games]
    # Importers in other processes take turns, batch by batch (Book.writing holds the
    # write lock): the fingerprints and max(id) read below include every earlier batch.
    with book.writing() as conn:
        known = set()
        for start in range(0, len(fingerprints), 500):  # under SQLite's old 999-parameter limit
            part = fingerprints[start:start + 500]
            known.update(conn.execute(select(schema.games.c.fingerprint)
                                      .where(schema.games.c.fingerprint.in_(part))).scalars())
        keep = np.zeros(len(fingerprints), dtype=bool)
        for i, fp in enumerate(fingerprints):
            if fp not in known:
                known.add(fp)
                keep[i] = True
        added = int(keep.sum())
        report.duplicates += len(fingerprints) - added
        if not added:
            return
        first_id = book.max_game_id(conn) + 1
        ids = np.cumsum(keep) + (first_id - 1)  # ids[i] is game i's id where keep[i]
        rows = [(game_id,) + game for game_id, game, new in zip(ids.tolist(), batch.games, keep) if new]
        _insert_games(conn, rows)
        schema.index_players(conn)  # their names, for the player filter (same transaction)
        codes = (ids[batch.owners] << schema.GAME_SHIFT) | batch.lows
        keys, summary = batch.keys, batch.summary
        if added < len(fingerprints):  # rows of new games only, still in key order
            row_keep = keep[batch.owners]
            keys, codes, summary = keys[row_keep], codes[row_keep], None  # summary: counted again
        segments.write_segment(conn, keys, codes, summary)
        segments.merge_full_levels(conn)
    report.added += len(rows)
    report.anomalies += sum(1 for row in rows if row[_ANOMALY + 1])
    report.positions += len(keys)


_GAMES_INSERT = (f"INSERT INTO games ({', '.join(GAME_COLUMNS)}) "
                 f"VALUES ({', '.join('?' * len(GAME_COLUMNS))})")


def _insert_games(conn, rows: list[tuple]) -> None:
    if conn.dialect.name == "sqlite":  # the driver directly: SQLAlchemy's per-row processing is 2/3 of the cost
        conn.exec_driver_sql(_GAMES_INSERT, rows)
    else:
        conn.execute(schema.games.insert(), [dict(zip(GAME_COLUMNS, row)) for row in rows])


# --- the pipeline ----------------------------------------------------------------------------

def _groups(paths: list[str], batch_games: int,
            meter: InputBytes | None) -> Iterator[tuple[list[SourceFile | Skipped], int]]:
    """The sources in source order, in groups that each become one batch, with the bytes
    of the input read once the group was cut (``meter.position``; 0 without a meter).

    A group ends at ``batch_games`` files (a file is usually one game) or GROUP_BYTES
    of them; the first groups are smaller (an eighth of ``batch_games``, doubling), so
    the writer starts after a few hundred games instead of a whole batch.  Skipped
    sources travel in their group, so they are reported in order.
    """
    group: list[SourceFile | Skipped] = []
    files = held = 0
    target = max(1, batch_games // 8)
    for item in iter_sources(paths):
        group.append(item)
        if isinstance(item, SourceFile):
            files += 1
            held += len(item.data)
            if files >= target or held >= GROUP_BYTES:
                yield group, meter.position(item.name) if meter else 0
                group, files, held = [], 0, 0
                target = min(batch_games, 2 * target)
    if group:
        yield group, meter.total if meter else 0  # the sources are all read


def pack(group: list[SourceFile | Skipped]) -> list[bytes | None]:
    """For each file of a group (Skipped items have none), its stored form if it is one SGF game.

    Done by the reader, whose core is otherwise idle: compressing took 0.33 s of the
    parser's ~2.5 s of CPU on the Tygem archive, and the parser is the slower stage.
    """
    return [schema.compress_sgf(item.data.strip()) if item.name.lower().endswith(".sgf") else None
            for item in group if isinstance(item, SourceFile)]


def prepare_group(group: list[SourceFile | Skipped], fast: bool = True,
                  packed: list[bytes | None] | None = None, read: int = 0) -> Batch:
    """Parse, replay and sort one group of sources into the Batch the writer writes."""
    prepared = prepare([item for item in group if isinstance(item, SourceFile)], fast, packed)
    prepared.skipped[:0] = [(item.name, item.reason) for item in group if isinstance(item, Skipped)]
    batch = make_batch(prepared)
    batch.read = read
    return batch


def _dealt(paths: list[str], batch_games: int, meter: InputBytes | None, parsers: int):
    """What the reader deals out, a turn each: the groups, an error if reading failed, a None per parser."""
    try:
        for group, read in _groups(paths, batch_games, meter):
            yield group, pack(group), read
    except Exception as exc:  # noqa: BLE001 - the parser whose turn it is passes it on
        yield RuntimeError(f"import reader failed: {type(exc).__name__}: {exc}")
    yield from [None] * parsers


def _reader(parent: int, unused, paths: list[str], batch_games: int, meter: InputBytes | None, inboxes) -> None:
    """Stage 1 (a process): read the sources, dealing group k to parser k mod N."""
    start_worker(parent, unused)
    senders = [Sender(end) for end in inboxes]
    try:
        for turn, item in enumerate(_dealt(paths, batch_games, meter, len(senders))):
            senders[turn % len(senders)].send(item)
        for sender in senders:
            sender.wait()
    except BrokenPipeError:  # a parser is gone: the writer says why
        return


def _parsed(inbox, fast: bool):
    """What a parser sends: a batch for each group received, or the error, then None."""
    try:
        while (item := inbox.recv()) is not None:
            yield item if isinstance(item, BaseException) else prepare_group(item[0], fast, *item[1:])
    except (EOFError, OSError):  # the reader died, maybe halfway through sending
        yield RuntimeError("the import's reader process died")
    except Exception as exc:  # noqa: BLE001 - the writer raises it
        yield RuntimeError(f"import worker failed: {type(exc).__name__}: {exc}")
    yield None


def _parser(parent: int, unused, inbox, fast: bool, outbox) -> None:
    """Stage 2 (N processes): each turns its groups into batches, in the order received."""
    start_worker(parent, unused)
    sender = Sender(outbox)
    try:
        for item in _parsed(inbox, fast):
            sender.send(item)
        sender.wait()
    except BrokenPipeError:  # the writer is gone
        return


def _ready_batches(paths: list[str], parsers: int, batch_games: int, fast: bool,
                   meter: InputBytes | None = None, stop=None) -> Iterator[Batch]:
    """Batches in source order: made in this process, or by a pipeline of processes.

    With ``parsers`` = N > 0: one process reads the sources (decompressing archives)
    and deals the groups round-robin to N processes that parse, replay and sort them;
    this process takes their batches in the same rotation, so games come in source
    order (the same ids and rows as with none), and only writes.  A stage sends one
    item ahead, so a parser makes its next batch while the writer writes.  Ends early
    once ``stop`` (a threading.Event) is set.  The workers are gone when it ends
    (``book.pipeline.workers``).
    """
    if parsers <= 0:
        for group, read in _groups(paths, batch_games, meter):
            yield prepare_group(group, fast, pack(group), read)
        return
    warm_up()
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    inboxes = [context.Pipe(duplex=False) for _ in range(parsers)]  # (receiving end, sending end)
    outboxes = [context.Pipe(duplex=False) for _ in range(parsers)]
    ends = [end for pipe in inboxes + outboxes for end in pipe]

    def others(*kept):  # the pipe ends a process closes: all but those it uses
        return [end for end in ends if all(end is not k for k in kept)]

    parent, sending = os.getpid(), [send for _, send in inboxes]
    stages = [context.Process(target=_reader, args=(parent, others(*sending), paths, batch_games, meter, sending),
                              name="import reader", daemon=True)]
    stages += [context.Process(target=_parser, args=(parent, others(receive, send), receive, fast, send),
                               name=f"import parser {k}", daemon=True)
               for k, ((receive, _), (_, send)) in enumerate(zip(inboxes, outboxes))]
    try:
        for stage in stages:
            stage.start()
        for end in others(*(receive for receive, _ in outboxes)):
            end.close()  # ours: so that a dead stage is an end of file
        for turn in itertools.count():
            item = take(outboxes[turn % parsers][0], stages[1 + turn % parsers], stop)
            if item is None:  # the reader ended here (no group has this turn or a later one), or stop
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop_all(stages, ends)


def import_paths(book, paths: list[str], workers: int | None = None, batch_games: int | None = None,
                 progress: Progress | None = None, fast: bool = True, stop=None) -> ImportReport:
    """Import every game under ``paths`` (files, folders, archives) into ``book``.

    ``workers``: processes that parse and replay (0: this process; None: ``WORKERS``,
    one per core up to 3).  ``progress``: a Progress to update (None: no progress
    output).  ``stop``: a threading.Event (``book.ui.book_cli.stop_on_signals`` sets one
    on Ctrl-C); once it is set the import ends after the batch it is writing, and the
    report says ``stopped``: a re-run adds the rest.
    Returns the ImportReport.  Raises BookError for a read-only book.  Unreadable files
    are skipped, not raised.
    """
    from fuseki.book.storage.store import BookError

    if book.readonly:
        raise BookError("the book is open read-only")
    batch_games = BATCH_GAMES if batch_games is None else batch_games
    report = ImportReport()
    start = time.perf_counter()
    paths = list(paths)
    meter = InputBytes(paths) if progress else None  # a walk of the paths: only for a progress
    if progress:
        progress.start(meter.total)
    batches = _ready_batches(paths, WORKERS if workers is None else workers, batch_games, fast, meter, stop)
    try:
        with closing(batches):  # the workers end here, however the loop does
            for batch in batches:
                report.skipped += batch.skipped
                write_batch(book, batch, report)
                if progress:
                    progress.update(report, batch.read)
                if stop is not None and stop.is_set():
                    break
        report.stopped = stop is not None and stop.is_set()
        if progress and not report.stopped:
            progress.update(report, meter.total)  # every source is read, whatever the last group was
    finally:
        report.elapsed = time.perf_counter() - start
        book.forget_caches()
        if progress:
            progress.done()
    return report

