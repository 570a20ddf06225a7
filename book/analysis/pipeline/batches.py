"""The import's work per game, done in the parser processes: parse, replay, sort, build a Batch.

A batch is one group of source files turned into what ``book.analysis.pipeline.importer``'s writer
writes in one transaction: the games' rows (all but their ids), each game's pattern-index
events (``book.storage.pattern_events``), and every position row sorted by key, in the form
the positions index takes them (``book.storage.position_index.intake.pack``: a segment
file or staged table the parser writes, a SQLite page image), so that the one writer only
numbers the games and links the rows in.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import chain

import numpy as np

from fuseki.book.analysis.pipeline.report import ANOMALY, SKIPPED, Note
from fuseki.book.formats.fuego import FuegoBookError, fuego_records, is_fuego_book
from fuseki.book.formats.positions import to_move_without_moves
from fuseki.book.formats.sgf_headers import GUESS_NOTE
from fuseki.book.formats.sgf_reader import SgfError, read_games
from fuseki.book.formats.sources import Skipped, SourceFile, shown_name
from fuseki.book.model.headers import HEADER_FIELDS
from fuseki.book.model.records import GameRecord, Moves, move_limit_text
from fuseki.book.storage import games_table
from fuseki.book.storage.position_index import intake
from fuseki.engine.core import base
from fuseki.engine.core.base import BLACK, COLOUR_LETTER, EMPTY, MAX_SIZE, MIN_SIZE, WHITE, move_limit
from fuseki.engine.core.board import Board
from fuseki.engine.core.replay import replay_events, replay_game, replay_games_events

GAME_COLUMNS = games_table.columns()  # "id" first
ROW_FINGERPRINT = GAME_COLUMNS.index("fingerprint") - 1  # in a game_row (no id)
ROW_ANOMALY = GAME_COLUMNS.index("anomaly") - 1
ROW_YEAR = GAME_COLUMNS.index("year") - 1


@dataclass
class Prepared:
    """Rows of a chunk of files, ready to write but for the game ids.

    ``games[i]`` is a ``game_row`` (the games table's columns but ``id``); game i owns
    ``counts[i]`` consecutive entries of ``keys`` (canonical keys, signed) and ``lows``
    (the low 24 bits of positions.code); ``events[i]``: its pattern-index events (uint16 bytes);
    ``anomalies[i]``: game i's, where it has any (their ``game`` is None: the writer knows the id).
    """

    games: list[tuple] = field(default_factory=list)
    events: list[bytes] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)
    keys: list[np.ndarray] = field(default_factory=list)
    lows: list[np.ndarray] = field(default_factory=list)
    skipped: list[Note] = field(default_factory=list)
    anomalies: dict[int, list[Note]] = field(default_factory=dict)


@dataclass
class Batch:
    """One transaction's worth of games, built by the worker so the writer only writes.

    ``rows``: every position row of the batch, sorted by key, in the form the positions index
    takes them (``intake.BatchRows``; None: no game).  Rows go into the index in key order
    (the writer assigns ids, nothing else); the order among rows of one key does not matter
    here (SQLite's image orders their codes itself), so the sort need not be stable (an
    unstable sort is the faster one).  A game repeated within the batch is left out by the
    worker (``duplicates``).  ``events[i]``: game i's pattern-index events
    (``book.storage.pattern_events``), which the writer stores with the games.
    """

    games: list[tuple] = field(default_factory=list)
    events: list[bytes] = field(default_factory=list)
    rows: intake.BatchRows | None = None
    skipped: list[Note] = field(default_factory=list)
    anomalies: dict[int, list[Note]] = field(default_factory=dict)  # of games[i] (Prepared's)
    read: int = 0  # bytes of the input read once its group was cut (progress.InputBytes)
    duplicates: int = 0
    ends_group: bool = True  # the last batch of its parser's turn (``book.analysis.pipeline.groups.cut``)


def make_batch(prepared: Prepared, image: bool = False, known: games_table.KnownGames | None = None,
               rows_to: Callable | None = None) -> Batch:
    """The Batch of some prepared chunks: rows concatenated, sorted by key, then as
    ``intake.pack`` makes them with ``image`` and ``rows_to`` (an ``intake.Intake``'s),
    its games numbered from 0.

    Games repeated within the chunks are left out, and with ``known`` the games the book holds."""
    if not prepared.games:
        return Batch(skipped=prepared.skipped)
    seen = set() if known is None else known([game[ROW_FINGERPRINT] for game in prepared.games])
    firsts = []
    for i, game in enumerate(prepared.games):  # the first of games with the same moves, as the writer keeps
        if game[ROW_FINGERPRINT] not in seen:
            seen.add(game[ROW_FINGERPRINT])
            firsts.append(i)
    if not firsts:
        return Batch(skipped=prepared.skipped, duplicates=len(prepared.games))
    games = [prepared.games[i] for i in firsts]
    # A batch's rows are most of a parser's memory, so each array is dropped as soon as it is
    # used (the prepared games' own arrays first: make_batch consumes them).
    keys = np.concatenate([prepared.keys[i] for i in firsts])
    lows = np.concatenate([prepared.lows[i] for i in firsts])
    owners = np.repeat(np.arange(len(games), dtype=np.int64), [prepared.counts[i] for i in firsts])
    prepared.keys, prepared.lows = [], []
    order = np.argsort(keys)
    keys = keys[order]
    lows = lows[order]
    owners = owners[order]
    del order
    rows = intake.BatchRows(intake.game_years([game[ROW_YEAR] for game in games]), keys=keys, lows=lows, owners=owners)
    del keys, lows, owners
    intake.pack(rows, image, rows_to)
    return Batch(games, [prepared.events[i] for i in firsts], rows, prepared.skipped,
                 duplicates=len(prepared.games) - len(games),
                 anomalies={k: prepared.anomalies[i] for k, i in enumerate(firsts) if i in prepared.anomalies})


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


def replay_record(record: GameRecord) -> tuple[np.ndarray, np.ndarray, tuple[int, str] | None, int]:
    """(canonical keys, low codes, anomaly or None, fingerprint) of the positions a game reached;
    an anomaly is (the move it is about, what)."""
    size = record.size
    setup_points, setup_colors = _arrays(record.setup)
    move_points, move_colors = _arrays(record.moves)
    fp = _fingerprint(size, setup_points, setup_colors, move_points, move_colors)
    anomaly = None
    if len(move_points) > intake.MAX_MOVE_NUMBER:
        move_points = move_points[:intake.MAX_MOVE_NUMBER]
        move_colors = move_colors[:intake.MAX_MOVE_NUMBER]
        anomaly = intake.MAX_MOVE_NUMBER + 1, f"positions after move {intake.MAX_MOVE_NUMBER} are not stored"
    n = len(move_points) + 1
    out_key, _, out_next, count = replay_game(size, setup_points, setup_colors, move_points, move_colors,
                                              to_move_without_moves(record))
    if count < n:
        anomaly = _illegal_move(record, count - 1)
    lows = _LOW_BASE[:count] | ((out_next[:count] + 2) << intake.NEXT_SHIFT) | (record.winner or 0)
    return out_key[:count], lows, anomaly, fp


_LOW_BASE = np.arange(intake.MAX_MOVE_NUMBER + 1, dtype=np.int64) << intake.MOVE_SHIFT


def _flat(pair_lists) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(points, colours, offsets) of many games' (colour, point) pairs, concatenated.

    The fast path's moves (``book.model.records.Moves``) are taken as the arrays they already are.
    """
    offsets = np.zeros(len(pair_lists) + 1, dtype=np.int64)
    np.cumsum([len(pairs) for pairs in pair_lists], out=offsets[1:])
    parts = [pairs.array if isinstance(pairs, Moves) else
             np.fromiter(chain.from_iterable(pairs), dtype=np.int64, count=2 * len(pairs)).reshape(-1, 2)
             for pairs in pair_lists]
    if not parts:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64), offsets
    # each column straight from the games' arrays: no concatenated pairs beside the columns
    return (np.concatenate([part[:, 1] for part in parts], dtype=np.int64),
            np.concatenate([part[:, 0] for part in parts], dtype=np.int64), offsets)


def replay_records(records: list[GameRecord]):
    """``replay_record`` for many games at once (one kernel call per board size), and each
    game's pattern-index events (``game_events``) from the same replay.

    Returns [(record, keys, lows, anomaly, fingerprint, events)], grouped by board size.
    """
    results = []
    groups: dict[int, list[GameRecord]] = {}
    for record in records:
        if len(record.moves) > intake.MAX_MOVE_NUMBER:
            results.append((record, *replay_record(record), game_events(record)))
        else:
            groups.setdefault(record.size, []).append(record)
    for size, group in groups.items():
        setup_points, setup_colors, setup_offsets = _flat([r.setup for r in group])
        move_points, move_colors, move_offsets = _flat([r.moves for r in group])
        firsts = np.array([to_move_without_moves(r) for r in group], dtype=np.int64)
        out_key, out_next, counts, events, event_starts, event_counts = replay_games_events(
            size, setup_points, setup_colors, setup_offsets, move_points, move_colors, move_offsets, firsts)
        event_starts, event_ends = event_starts.tolist(), (event_starts + event_counts).tolist()
        lows = out_next  # in place: a batch's arrays are most of a parser's memory
        lows += 2
        lows <<= intake.NEXT_SHIFT
        for g, record in enumerate(group):
            a, b = move_offsets[g], move_offsets[g + 1]
            s, t = setup_offsets[g], setup_offsets[g + 1]
            start, count = int(a) + g, int(counts[g])
            fp = _fingerprint(size, setup_points[s:t], setup_colors[s:t], move_points[a:b], move_colors[a:b])
            anomaly = _illegal_move(record, count - 1) if count < b - a + 1 else None
            game_lows = lows[start:start + count]  # a view, completed in place
            game_lows |= _LOW_BASE[:count]
            game_lows |= record.winner or 0
            results.append((record, out_key[start:start + count], game_lows, anomaly, fp,
                            events[event_starts[g]:event_ends[g]].tobytes()))
    return results


def _illegal_move(record: GameRecord, index: int) -> tuple[int, str]:
    """(its number, why) of move ``index`` (0-based) of the record, illegal: replayed with Board."""
    board = Board(record.size)
    for colour in (BLACK, WHITE, EMPTY):
        points = [p for c, p in record.setup if c == colour]
        if points:
            board.set_stones(colour, points)
    for colour, point in record.moves[:index]:
        board.play(colour, point)
    colour, point = record.moves[index]
    reason = board.legal_reason(colour, point) or "illegal"
    name = COLOUR_LETTER[colour]
    return index + 1, f"move {index + 1} ({name} {base.point_to_vertex(point, record.size)}) is illegal: {reason}"


def game_events(record: GameRecord) -> bytes:
    """The record's pattern-index events (``replay_events``, uint16) as the stored bytes: for a
    game past ``intake.MAX_MOVE_NUMBER``, which ``replay_records`` replays alone; the others'
    come from their replay (``replay_games_events``).  The same as
    ``book.analysis.patterns.index.game_events`` of the stored game read back (the import's test checks it).
    """
    return replay_events(record.size, *_arrays(record.setup), *_arrays(record.moves)).tobytes()


def game_row(record: GameRecord, anomaly: str | None, fp: int) -> tuple:
    """The games table's columns but ``id``, in table order (``GAME_COLUMNS[1:]``), for a record.

    A tuple, not a dict: the writer only puts
    the id in front and hands the rows to the driver (0.2 s less of the writer's time
    for the 11,365 Tygem games).
    """
    row = {f.name: f.stored(getattr(record, f.name)) for f in HEADER_FIELDS}  # book.model.headers
    row.update(size=record.size, move_count=len(record.moves), source=record.source, fingerprint=fp, anomaly=anomaly,
               sgf=games_table.compress_sgf(record.sgf))
    return tuple(row[name] for name in GAME_COLUMNS[1:])


def read_source(source: SourceFile, fast: bool = True) -> list[GameRecord]:
    """The games of one file: SGF, or a Fuego opening book (one game per book line); their
    ``source`` is the file's name shown (``sources.shown_name``: a name that is not UTF-8 escaped)."""
    name = shown_name(source.name)
    if not name.lower().endswith(".sgf") and is_fuego_book(source.data[:4096]):
        return list(fuego_records(source.data.decode("ascii"), name))
    return read_games(source.data, name, fast=fast)


def prepare(files: list[SourceFile], fast: bool = True) -> Prepared:
    """Parse and replay some files (runs in a parser process)."""
    out = Prepared()
    records: list[GameRecord] = []
    origin: dict[int, SourceFile] = {}  # id(record): its file
    for source in files:
        try:
            found = read_source(source, fast)
        except (SgfError, FuegoBookError, UnicodeDecodeError) as exc:
            out.skipped.append(Note(SKIPPED, source.path, source.member,
                                    str(exc).removeprefix(shown_name(source.name) + ": ")))
            continue
        for record in found:
            if MIN_SIZE <= record.size <= MAX_SIZE:
                records.append(record)
                origin[id(record)] = source
            else:  # SGF allows SZ[1]; nobody plays on it and no position of it is worth a row
                out.skipped.append(Note(SKIPPED, source.path, source.member,
                                        f"board size {record.size}: the book keeps "
                                        f"{MIN_SIZE}x{MIN_SIZE} to {MAX_SIZE}x{MAX_SIZE} games"))
    for record, keys, lows, anomaly, fp, events in replay_records(records):
        found = [] if record.cut_from is None else [(move_limit(record.size) + 1,
                                                     move_limit_text(record.cut_from, record.size))]
        found += [anomaly] if anomaly else []
        found += [(None, note) for note in record.notes if note.startswith(GUESS_NOTE)]  # which charset was guessed
        if found:
            source = origin[id(record)]
            out.anomalies[len(out.games)] = [Note(ANOMALY, source.path, source.member, reason, move=move)
                                             for move, reason in found]
        out.games.append(game_row(record, "; ".join(reason for _, reason in found) or None, fp))
        out.events.append(events)
        out.counts.append(len(keys))
        out.keys.append(keys)
        out.lows.append(lows)
    return out


def warm_up() -> None:
    """Load the replay and page-image kernels (compiled or from numba's cache) before forking the workers."""
    record = GameRecord(size=9, setup=[], moves=[(BLACK, base.xy_to_point(2, 2, 9))], komi=None,
                        handicap=0, black="", white="", black_rank="", white_rank="", date="",
                        year=None, event="", result="", winner=None, rules="", source="", sgf=b"")
    replay_record(record)
    replay_records([record])
    intake.warm_up()


def prepare_group(group: list[SourceFile | Skipped], fast: bool = True, read: int = 0, image: bool = False,
                  known: games_table.KnownGames | None = None, rows_to: Callable | None = None) -> Batch:
    """Parse, replay and sort one group of sources into the Batch the writer writes (``make_batch``)."""
    prepared = prepare([item for item in group if isinstance(item, SourceFile)], fast)
    prepared.skipped[:0] = [Note(SKIPPED, item.path, item.member, item.reason)
                            for item in group if isinstance(item, Skipped)]
    batch = make_batch(prepared, image, known, rows_to)
    batch.read = read
    return batch
