"""Next-move statistics: per position, its next moves with their games and each colour's wins.

The one form of them in memory is ``NextMoveStats``: signed position keys and, per key,
rows of counts ``(year, next, games, black wins, white wins)`` sorted by (key, year, next).
Two places keep them: a segment's ``next_stats_<id>`` table (below), for the positions many
of its games reached, and a statistics book's ``next_stats`` table
(``book.storage.position_index.statbook_table``: the built-in book), which keeps them without years
(``NO_YEAR``).

A position reached by many games (the empty board: every game) costs a next-move query
one row per game, read and counted at every query: 378,000 rows for the empty board of
the Tygem corpus.  So each segment ``positions_<id>`` (``book.storage.position_index.segments``) may have
a table ``next_stats_<id>(key, stats)``: for each key reached by at least ``GAMES`` games of
that segment, ``stats`` holds what a query would count from its rows, by year:

    int32 counts (year, next, games, black wins, white wins), sorted by (year, next)

``year`` is the game's year (``NO_YEAR`` where the date has none), ``next`` the move played
from the position in canonical orientation (``END`` = -2: the game ended there), each game
counted once, at its first visit of the position (the store's rule).  A reader takes a
segment's next-move statistics where they have the key and the rows otherwise, so it reads
at most ``GAMES - 1`` rows of a key per level-0 segment; a year filter selects counts, and
only a player filter needs the rows of every segment.

A segment's next-move statistics are written with it, in the same transaction, and never
changed: a merge writes the merged segment's (the sum of its parts': a game lies in one
segment, so the counts add) and drops the parts'.  Its keys are those its parts counted,
each summed over every part (a part that did not count a key gives its rows); a key
popular only in the merged segment stays as rows, at most ``GAMES - 1`` rows per level-0
batch merged into it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from fuseki.book.storage import scheme
from fuseki.engine.core.base import BLACK, WHITE
from fuseki.engine.core.lazy_jit import njit  # numba is imported when a kernel first runs

GAMES = 16  # a level-0 segment counts the keys at least this many of its games reached
NO_YEAR = -1  # the year of a game whose date has none
YEAR, NEXT, COUNT, BLACK_WINS, WHITE_WINS = range(5)  # the columns of a row of counts

# SQLAlchemy is imported by the functions that read or write tables: a statistics book's
# reader counts with this module's arrays and never needs it (book.storage.position_index.statbook_file).
_metadata = None  # the tables' MetaData, made at the first stats_table
_making = threading.Lock()


def stats_table(segment_id: int | str):
    """The table ``next_stats_<segment_id>`` (key signed, stats: the counts' bytes); given a
    name (str), the table of that name (next-move statistics staged on PostgreSQL,
    ``book.storage.position_index.pg_stage``)."""
    global _metadata
    from sqlalchemy import BigInteger, Column, LargeBinary, MetaData, Table

    with _making:
        if _metadata is None:
            _metadata = MetaData()
    name = segment_id if isinstance(segment_id, str) else f"next_stats_{int(segment_id)}"
    table = _metadata.tables.get(name)
    if table is None:
        table = Table(name, _metadata, Column("key", BigInteger, primary_key=True, autoincrement=False),
                      Column("stats", LargeBinary, nullable=False), sqlite_with_rowid=False)
    return table


class NextMoveStats(NamedTuple):
    """Counts of several keys: ``keys[i]`` owns ``counts[i]``; sorted by (key, year, next).

    A row's ``COUNT``, ``BLACK_WINS`` and ``WHITE_WINS`` are one ``book.model.stats.Stats``
    (of the games that played ``NEXT`` in ``YEAR``), kept as int32 columns of many keys at once
    because this is the storage's bulk form (read, merged, written by the million rows):
    ``combine`` adds rows up, ``subtract`` takes games out, for many keys in one pass.  A
    ``Stats`` is made only for the moves an answer shows (``orbits``)."""

    keys: np.ndarray  # int64, signed keys
    counts: np.ndarray  # int32, shape (n, 5)

    def __len__(self) -> int:
        return len(self.keys)


def empty() -> NextMoveStats:
    return NextMoveStats(np.empty(0, dtype=np.int64), np.empty((0, 5), dtype=np.int32))


def from_rows(keys: np.ndarray, owners: np.ndarray, lows: np.ndarray, years: np.ndarray,
              min_games: int | None = None) -> NextMoveStats:
    """The next-move statistics of position rows: ``keys``, the row's game (``owners``: any id that tells
    games apart), ``lows`` (the code's low 24 bits: move number, next, winner) and the
    game's year per row; only keys reached by at least ``min_games`` games (default ``GAMES``)."""
    min_games = GAMES if min_games is None else min_games
    if not len(keys):
        return empty()
    if len(keys) > 1 and not (keys[1:] >= keys[:-1]).all():
        order = np.argsort(keys, kind="stable")
        keys, owners, lows, years = keys[order], owners[order], lows[order], years[order]
    # Runs of equal keys; a key of fewer rows than min_games has fewer games: dropped before
    # any sort (the importer's rows come sorted by key, and most keys are rare).
    starts = np.flatnonzero(np.append(True, keys[1:] != keys[:-1]))
    lengths = np.diff(np.append(starts, len(keys)))
    if min_games > 1:
        kept = np.repeat(lengths >= min_games, lengths)
        keys, owners, lows, years = keys[kept], owners[kept], lows[kept], years[kept]
        lengths = lengths[lengths >= min_games]
    if not len(keys):
        return empty()
    run = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    # one int64 sort: key run, then game, then move number (each game's first visit first)
    moves = lows >> scheme.MOVE_SHIFT
    if len(lengths) < 1 << 23 and int(owners.max()) < 1 << 28:
        order = np.argsort((run << 40) | (owners.astype(np.int64) << 12) | moves)
    else:  # too many keys or games for one int64
        order = np.lexsort((moves, owners, run))
    run, keys, owners, lows, years = run[order], keys[order], owners[order], lows[order], years[order]
    first = np.ones(len(keys), dtype=bool)
    first[1:] = (run[1:] != run[:-1]) | (owners[1:] != owners[:-1])
    run, keys, lows, years = run[first], keys[first], lows[first], years[first]
    if min_games > 1:
        games = np.bincount(run)
        hot = games[run] >= min_games
        run, keys, lows, years = run[hot], keys[hot], lows[hot], years[hot]
    nexts = ((lows >> scheme.NEXT_SHIFT) & scheme.NEXT_MASK) - 2
    winners = lows & scheme.WINNER_MASK
    # one int64 sort again: key run, year, next
    order = np.lexsort((nexts, years, run))
    run, keys, years, nexts, winners = run[order], keys[order], years[order], nexts[order], winners[order]
    new = np.ones(len(keys), dtype=bool)
    new[1:] = (run[1:] != run[:-1]) | (years[1:] != years[:-1]) | (nexts[1:] != nexts[:-1])
    heads = np.flatnonzero(new)
    counts = np.empty((len(heads), 5), dtype=np.int32)
    counts[:, YEAR] = years[heads]
    counts[:, NEXT] = nexts[heads]
    counts[:, COUNT] = np.diff(np.append(heads, len(keys)))
    counts[:, BLACK_WINS] = np.add.reduceat((winners == 1).astype(np.int64), heads) if len(heads) else 0
    counts[:, WHITE_WINS] = np.add.reduceat((winners == 2).astype(np.int64), heads) if len(heads) else 0
    return NextMoveStats(keys[heads], counts)


def combine(parts: list[NextMoveStats]) -> NextMoveStats:
    """Next-move statistics adding up the counts of ``parts`` (their games must be distinct)."""
    parts = [part for part in parts if len(part)]
    if not parts:
        return empty()
    return _grouped(np.concatenate([part.keys for part in parts]),
                    np.concatenate([part.counts for part in parts]))


def _grouped(keys: np.ndarray, counts: np.ndarray) -> NextMoveStats:
    """Counts with equal (key, year, next) summed; sorted."""
    if not len(keys):
        return empty()
    counts = counts.astype(np.int64)
    order = np.lexsort((counts[:, NEXT], counts[:, YEAR], keys))
    keys, counts = keys[order], counts[order]
    new = np.ones(len(keys), dtype=bool)
    new[1:] = ((keys[1:] != keys[:-1]) | (counts[1:, YEAR] != counts[:-1, YEAR])
               | (counts[1:, NEXT] != counts[:-1, NEXT]))
    starts = np.flatnonzero(new)
    summed = np.add.reduceat(counts, starts, axis=0)
    summed[:, YEAR] = counts[starts, YEAR]
    summed[:, NEXT] = counts[starts, NEXT]
    return NextMoveStats(keys[starts], summed.astype(np.int32))


def subtract(next_stats: NextMoveStats, counts: np.ndarray) -> NextMoveStats:
    """One key's ``next_stats`` less ``counts`` of that key (of games it counted); counts left
    with no game are dropped."""
    mine = counts.astype(np.int64)
    mine[:, COUNT:] *= -1
    left = _grouped(np.concatenate([next_stats.keys, np.full(len(mine), next_stats.keys[0], dtype=np.int64)]),
                    np.concatenate([next_stats.counts.astype(np.int64), mine]))
    kept = left.counts[:, COUNT] != 0
    return NextMoveStats(left.keys[kept], left.counts[kept])


def take_out(stored: list[tuple[int, bytes]], removed: NextMoveStats) -> tuple[list[tuple[int, bytes]], list[int]]:
    """What stored next-move statistics rows (key, stats) become once some games are taken out of their
    segment: (the rows to write again, the keys to delete).  ``removed``: the next-move statistics of
    those games' rows (``from_codes`` with ``min_games`` 1).  A key left with fewer than
    GAMES games is deleted: its rows answer, as a fresh count would have it."""
    updates, deletes = [], []
    for key, stats in stored:
        first, end = np.searchsorted(removed.keys, key), np.searchsorted(removed.keys, key, side="right")
        if first == end:
            continue
        left = subtract(from_stats(key, stats), removed.counts[first:end])
        if left.counts[:, COUNT].sum() >= GAMES:
            updates += to_rows(left)
        else:
            deletes.append(key)
    return updates, deletes


def to_rows(next_stats: NextMoveStats) -> list[tuple[int, bytes]]:
    """(key, stats bytes) per key, in key order."""
    if not len(next_stats):
        return []
    starts = np.flatnonzero(np.append(True, next_stats.keys[1:] != next_stats.keys[:-1]))
    ends = np.append(starts[1:], len(next_stats.keys))
    data = next_stats.counts.astype("<i4")
    return [(int(next_stats.keys[s]), data[s:e].tobytes()) for s, e in zip(starts.tolist(), ends.tolist())]


def from_stats(key: int, stats: bytes) -> NextMoveStats:
    """One key's counts back from its stored bytes."""
    counts = np.frombuffer(stats, dtype="<i4").reshape(-1, 5).astype(np.int32)
    return NextMoveStats(np.full(len(counts), key, dtype=np.int64), counts)


def select_years(counts: np.ndarray, year_from: int | None, year_to: int | None) -> np.ndarray:
    """The counts of the games a year filter keeps (a game with no year: none)."""
    if year_from is None and year_to is None:
        return counts
    keep = counts[:, YEAR] != NO_YEAR
    if year_from is not None:
        keep &= counts[:, YEAR] >= year_from
    if year_to is not None:
        keep &= counts[:, YEAR] <= year_to
    return counts[keep]


def write(conn, segment_id: int, next_stats: NextMoveStats) -> None:
    """Create ``next_stats_<segment_id>`` holding ``next_stats`` (inside the segment's transaction)."""
    write_table(conn, stats_table(segment_id).name, next_stats)


def write_table(conn, name: str, next_stats: NextMoveStats) -> None:
    """Create the next-move statistics table ``name`` holding ``next_stats``."""
    from fuseki.book.storage.dialect import insert_rows

    table = stats_table(name)
    table.create(conn)
    insert_rows(conn, table, to_rows(next_stats))


def read_all(conn, segment_id: int) -> NextMoveStats:
    """Every row of one segment's next-move statistics."""
    from sqlalchemy import text

    table = stats_table(segment_id)
    return from_stored(conn.execute(text(f"SELECT key, stats FROM {table.name} ORDER BY key")).all())


def drop(conn, segment_id: int) -> None:
    conn.exec_driver_sql(f"DROP TABLE IF EXISTS next_stats_{int(segment_id)}")


def years_by_id(conn, low: int, high: int) -> tuple[int, np.ndarray]:
    """(low, year of game ``low + i`` at i) for the ids low..high (NO_YEAR: none, or no game)."""
    from sqlalchemy import text

    found = conn.execute(text(YEARS_QUERY), {"a": low, "b": high}).all()
    return low, years_array(low, high, found)


# the games' years by id; named parameters, which the sqlite3 module takes as they are too
YEARS_QUERY = "SELECT id, year FROM games WHERE id BETWEEN :a AND :b AND year IS NOT NULL"


def years_array(low: int, high: int, found) -> np.ndarray:
    """The years of the ids low..high from rows (id, year) of YEARS_QUERY (NO_YEAR where none)."""
    years = np.full(max(high - low + 1, 0), NO_YEAR, dtype=np.int64)
    if found:
        pairs = np.array([tuple(row) for row in found], dtype=np.int64)  # Rows: numpy would probe each
        years[pairs[:, 0] - low] = pairs[:, 1]
    return years


def from_codes(keys: np.ndarray, codes: np.ndarray, years_by: Callable, min_games: int | None = None) -> NextMoveStats:
    """The next-move statistics of position rows ``(key, code)`` (``schema``'s code layout);
    ``years_by(low, high)`` gives (low, years) of the game ids low..high (``years_by_id``)."""
    if not len(keys):
        return empty()
    ids = codes >> scheme.GAME_SHIFT
    low, years = years_by(int(ids.min()), int(ids.max()))
    return from_rows(keys, ids, codes & ((1 << scheme.GAME_SHIFT) - 1), years[ids - low], min_games)


def without_years(keys: np.ndarray, codes: np.ndarray, min_games: int = 1) -> NextMoveStats:
    """The statistics of position rows ``(key, code)`` with every game's year ``NO_YEAR`` (what a
    statistics book keeps), of the keys reached by at least ``min_games`` games.  Every game of
    a key must be among the rows, or its counts are partial."""
    if not len(keys):
        return empty()
    return from_rows(keys, codes >> scheme.GAME_SHIFT, codes & ((1 << scheme.GAME_SHIFT) - 1),
                     np.full(len(keys), NO_YEAR, dtype=np.int64), min_games)


def positions(stats: NextMoveStats) -> int:
    """How many distinct keys ``stats`` holds."""
    return int(np.count_nonzero(np.diff(stats.keys))) + 1 if len(stats) else 0


def add_up(parts: list[NextMoveStats], count_rows: Callable) -> NextMoveStats:
    """A merge's next-move statistics: the parts' next-move statistics added up over every key any of them counted;
    ``count_rows(i, keys)`` is the next-move statistics of part i's rows under the ``keys`` it did not count
    (``missing_keys``)."""
    counted = [count_rows(i, missing) for i, missing in enumerate(missing_keys(parts)) if len(missing)]
    return combine(parts + counted)


def missing_keys(parts: list[NextMoveStats]) -> list[np.ndarray]:
    """For each part of a merge, the keys (ascending, distinct) another part counted and it did
    not: those whose rows ``add_up`` counts.  A merge that reads every row anyway takes these
    keys' rows as it goes (``segment_files.merge``)."""
    every = np.unique(np.concatenate([part.keys for part in parts])) if parts else np.empty(0, dtype=np.int64)
    return [np.setdiff1d(every, part.keys, assume_unique=True) for part in parts]


def from_stored(rows) -> NextMoveStats:
    """Next-move statistics from its stored rows (key, stats bytes)."""
    return combine([from_stats(int(k), bytes(s)) for k, s in rows])


# Below this many codes a position's first visits are counted by numpy's passes (well under a
# millisecond), above by the numba kernels: a process's first kernel costs ~0.6 s (numba's import
# and its CPU target), more than a whole ``fuseki search`` on a book of 11k games asks of them.
NUMPY_CODES = 1 << 16


def first_visit_codes(codes: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    """The code of each game's first visit among the ``codes`` of one position (sorted: game id,
    then move number), of the games ``mask`` (over game ids; None: all) keeps, in one numba pass:
    numpy's passes took 4 ms over the 733,066 codes of a doubled corpus's empty board, and a
    filtered count of the 366,535 games' empty board 16-20 ms (``bench/book.py --query-book --filters``).
    Fewer than ``NUMPY_CODES`` codes: numpy's passes (the same answer, tests/test_nextmoves.py)."""
    if len(codes) < NUMPY_CODES:
        games = codes >> scheme.GAME_SHIFT
        first = np.ones(len(codes), dtype=np.bool_)
        first[1:] = games[1:] != games[:-1]
        if mask is not None:
            inside = games < len(mask)
            first &= inside
            first[inside] &= mask[games[inside]]
        return codes[first]
    kept = np.empty(len(codes), dtype=np.int64)
    found = _first_visit_codes(codes, mask if mask is not None else np.ones(0, dtype=np.bool_), mask is None, kept)
    return kept[:found]


@njit(cache=True)
def _first_visit_codes(codes, mask, every, kept):
    last = -1
    found = 0
    for code in codes:
        game = code >> scheme.GAME_SHIFT
        if game == last:
            continue
        last = game
        if every or (game < len(mask) and mask[game]):
            kept[found] = code
            found += 1
    return found


def count_nexts(firsts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(games, Black's wins, White's wins) by next point + 2 (``END`` at 0, PASS at 1) of the
    codes of first visits (``first_visit_codes``), counted in numba: three bincounts took 10 ms
    of a filtered count of the empty board against 3.7."""
    if len(firsts) < NUMPY_CODES:  # numpy's bincounts, as first_visit_codes says why
        at = (firsts >> scheme.NEXT_SHIFT) & scheme.NEXT_MASK
        winners = firsts & scheme.WINNER_MASK
        return tuple(np.bincount(at[chosen], minlength=scheme.NEXT_MASK + 1).astype(np.int64)
                     for chosen in (slice(None), winners == BLACK, winners == WHITE))
    games, black, white = (np.zeros(scheme.NEXT_MASK + 1, dtype=np.int64) for _ in range(3))
    _count_nexts(firsts, games, black, white)
    return games, black, white


@njit(cache=True)
def _count_nexts(codes, games, black, white):
    for code in codes:
        at = (code >> scheme.NEXT_SHIFT) & scheme.NEXT_MASK
        games[at] += 1
        winner = code & scheme.WINNER_MASK
        if winner == BLACK:
            black[at] += 1
        elif winner == WHITE:
            white[at] += 1
