"""Building the corner book (``corners``) from the pattern index's board events.

``update(book)`` brings the pattern index up to date, then, when games were added since the
corner book was built, rebuilds the table ``corner_moves`` from every indexed game: a numba
kernel replays each game's events (captures already resolved), keeps the hashes of the four
corners incrementally (2 readings x 2 points of view a corner), and emits one record per
corner move and per tenuki; numpy sorts and counts them.  The records are counted in
``parts`` passes over the games, each keeping the keys of one slice of the hash space, so
memory stays a fraction of the records however many games there are.  Continuations played
fewer than ``prune`` times are dropped (a corner move of one game is noise, and they are
most of the records); the meta rows say what the table was built from and how.
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit

from fuseki.book.patterns import corners, index
from fuseki.book.pipeline.progress import STDERR, Steps
from fuseki.book.storage import pgcopy, schema

DEPTH = 120   # moves of each game counted: joseki are played early, a late corner key is unique
PRUNE = 2     # continuations played fewer times are not kept
RECORDS_PER_PART = 8_000_000  # records a pass sorts at once
THROUGH = "corner_moves_through"
SETTINGS = "corner_moves_settings"


@njit(cache=True)
def _toggle(h, corner_of, local, zkeys, stone, p):
    """A stone of colour ``stone`` appears on or leaves ``p``: update its corner's four hashes."""
    c = corner_of[p]
    if c < 0:
        return
    for reading in range(2):
        code = local[p, reading]
        h[c, reading, 0] ^= zkeys[0 if stone == 1 else 1, code]  # Black's point of view
        h[c, reading, 1] ^= zkeys[0 if stone == 2 else 1, code]  # White's


@njit(cache=True)
def _emit_one(h, local, size_key, c, mover, p, bits_left, part, keys, moves, wins, won, n, counts):
    plain = h[c, 0, mover - 1] ^ size_key
    transposed = h[c, 1, mover - 1] ^ size_key
    key = plain if plain <= transposed else transposed
    top = np.int64(key >> np.uint64(58))  # the key's top 6 bits
    if part < 0:
        counts[top] += 1
        return n
    if top >> bits_left != part:
        return n
    if p < 0:
        move = -1
    elif plain == transposed:
        move = min(local[p, 0], local[p, 1])
    else:
        move = local[p, 0] if plain <= transposed else local[p, 1]
    keys[n] = key
    moves[n] = move
    wins[n] = won
    return n + 1


@njit(cache=True)
def emit(events, offsets, chosen, winners, corner_of, local, zkeys, size_key, depth, bits_left, part,
         keys, moves, wins, counts):
    """Write the records of the games ``chosen`` whose key's top 6 bits shifted right by
    ``bits_left`` equal ``part`` (``part`` < 0: only count the records of each value of the
    top 6 bits into ``counts``); returns how many were written."""
    n = 0
    npoints = corner_of.shape[0]
    h = np.zeros((4, 2, 2), dtype=np.uint64)
    colour = np.zeros(npoints, dtype=np.int64)
    for g in chosen:
        h[:] = 0
        colour[:] = 0
        played = 0
        previous = -1
        for i in range(offsets[g], offsets[g + 1]):
            kind = np.int64(events[i]) >> 12
            p = np.int64(events[i]) & 0xFFF
            if kind >= 4:  # setup stone
                colour[p] = kind - 3
                _toggle(h, corner_of, local, zkeys, kind - 3, p)
            elif kind == 3:  # captured
                _toggle(h, corner_of, local, zkeys, colour[p], p)
                colour[p] = 0
            else:
                played += 1
                if played > depth:
                    break
                c = corner_of[p] if p > 0 else -1
                won = 1 if winners[g] == kind else 0
                if previous >= 0 and previous != c:
                    n = _emit_one(h, local, size_key, previous, kind, -1, bits_left, part, keys, moves, wins,
                                  won, n, counts)
                if c >= 0:
                    n = _emit_one(h, local, size_key, c, kind, p, bits_left, part, keys, moves, wins, won, n, counts)
                    colour[p] = kind
                    _toggle(h, corner_of, local, zkeys, kind, p)
                previous = c
    return n


_MOVE_BITS = 10  # a record's move + 1 (tenuki -1 .. the corner's last point, < 13 x 13 on 25x25)


def count(keys: np.ndarray, moves: np.ndarray, wins: np.ndarray, prune: int):
    """(keys, moves, played, wins) of the distinct (key, move) records, played >= ``prune``,
    in (key, move) order.

    Two plain sorts instead of a lexsort of (key, move): the keys, then each record as one
    int64, its key's rank among the distinct keys, move + 1 and win packed -- a lexsort of the
    two was most of the corner book's build (0.71 of 1.47 s for the 11,364 Tygem games; the
    whole build is timed by bench/corpus.py, after the import)."""
    if not len(keys):
        empty = np.empty(0, dtype=np.int64)
        return keys.astype(np.uint64), empty, empty, empty
    if int(moves.max()) + 1 >= 1 << _MOVE_BITS:
        raise ValueError(f"corner move {int(moves.max())} does not fit the packed records")
    order = np.argsort(keys)
    keys = keys[order]
    new_key = np.empty(len(keys), dtype=bool)
    new_key[0] = True
    np.not_equal(keys[1:], keys[:-1], out=new_key[1:])
    distinct = keys[new_key]
    del keys
    packed = np.cumsum(new_key, dtype=np.int64)  # the key's rank + 1, in place below
    packed -= 1
    packed <<= _MOVE_BITS + 1
    packed |= (moves[order].astype(np.int64) + 1) << 1
    packed |= wins[order].astype(np.int64)
    del order, new_key
    packed.sort()
    record = packed >> 1
    starts = np.flatnonzero(np.concatenate(([True], record[1:] != record[:-1])))
    played = np.diff(np.append(starts, len(record)))
    won = np.add.reduceat(packed & 1, starts)
    keep = played >= prune
    record = record[starts][keep]
    return (distinct[record >> _MOVE_BITS], (record & ((1 << _MOVE_BITS) - 1)) - 1, played[keep], won[keep])


def records(events, offsets, chosen, winners, size: int, depth: int = DEPTH, prune: int = PRUNE,
            progress=None):
    """Yield the counted records (``count``) of the games ``chosen``, one slice of keys at a time."""
    frame = corners.frames(size)
    args = (events, offsets, chosen, winners, frame.corner_of, frame.local, frame.zkeys,
            np.uint64(frame.size_key), depth)
    counts = np.zeros(64, dtype=np.int64)
    dummy = np.empty(0, dtype=np.uint64)
    emit(*args, 0, -1, dummy, dummy.astype(np.int16), dummy.astype(np.int8), counts)
    bits = 0  # parts = 2 ** bits slices of the key space, each a range of the top 6 bits
    while bits < 6 and counts.sum() > RECORDS_PER_PART << bits:
        bits += 1
    parts = 1 << bits
    per_part = counts.reshape(parts, -1).sum(axis=1)
    # signed keys (how the table stores them) ascend from the upper half: rows go in in key order
    order = list(range(parts // 2, parts)) + list(range(parts // 2)) if parts > 1 else [0]
    steps = Steps(f"corner book {size}x{size}", len(chosen), stream=progress) \
        if progress is not None and parts > 1 else None
    for number, part in enumerate(order):
        keys = np.empty(per_part[part], dtype=np.uint64)
        moves = np.empty(per_part[part], dtype=np.int16)  # a corner point or -1: a quarter of int64's memory
        wins = np.empty(per_part[part], dtype=np.int8)
        written = emit(*args, 6 - bits, part, keys, moves, wins, counts)
        yield count(keys[:written], moves[:written], wins[:written], prune)
        if steps is not None:  # each part is a slice of the keys of every game: a share of the whole work
            steps.update(len(chosen) * (number + 1) // parts)
    if steps is not None:
        steps.close()


def create_statement(dialect: str) -> str:
    """The corner book's CREATE TABLE for ``dialect`` ("sqlite" or "postgresql")."""
    return (f"CREATE TABLE {corners.TABLE} (key BIGINT NOT NULL, move SMALLINT NOT NULL, "
            "played INTEGER NOT NULL, wins INTEGER NOT NULL, PRIMARY KEY (key, move))"
            + (" WITHOUT ROWID" if dialect == "sqlite" else ""))


def copy_into(book, target, least: int) -> int:
    """Copy the book's corner book, continuations played at least ``least`` times, into the
    sqlite3 connection ``target`` (a statistics book being written), in key order; the rows copied."""
    target.execute(create_statement("sqlite"))
    with book.db.connect() as conn:
        rows = conn.exec_driver_sql(f"SELECT key, move, played, wins FROM {corners.TABLE} WHERE played >= {int(least)} "
                                    "ORDER BY key, move").all()
        _through, settings = built_through(conn)
    target.executemany(f"INSERT INTO {corners.TABLE} VALUES (?, ?, ?, ?)", [tuple(r) for r in rows])
    target.execute("INSERT INTO meta (name, value) VALUES (?, ?)", (SETTINGS, f"{settings} least={least}"))
    return len(rows)


def built_through(conn) -> tuple[int, str]:
    """(the pattern index's game id the corner book was built at, its settings); (0, '') when none."""
    rows = dict(conn.execute(schema.meta.select().where(schema.meta.c.name.in_((THROUGH, SETTINGS)))).all())
    return int(rows.get(THROUGH) or 0), rows.get(SETTINGS, "")


def settings_text(depth: int, prune: int) -> str:
    return f"depth={depth} prune={prune}"


def update(book, progress=STDERR, depth: int = DEPTH, prune: int = PRUNE) -> bool:
    """Bring the book's corner book up to date (see the module docstring); True when it was rebuilt.

    A read-only book is left as it is (its corner book, if any, answers as built).
    """
    if book.readonly:
        return False
    index.update(book, progress=progress)
    with book.db.connect() as conn:
        through = index.indexed_through(conn)
        if corners.has_table(conn) and built_through(conn) == (through, settings_text(depth, prune)):
            return False
        sizes = [int(s) for (s,) in conn.execute(
            index.pattern_events.select().with_only_columns(index.pattern_events.c.size).distinct())]
    began = time.perf_counter()
    with book.writing() as conn:
        conn.exec_driver_sql(f"DROP TABLE IF EXISTS {corners.TABLE}")
        conn.exec_driver_sql(create_statement(conn.dialect.name))
        rows = 0
        for size in sizes:
            if not corners.corner_width(size):
                continue
            game_ids, events, offsets = index.load(conn, size)
            winners = _winners(conn, game_ids)
            chosen = np.arange(len(game_ids), dtype=np.int64)
            for keys, moves, played, wins in records(events, offsets, chosen, winners, size, depth, prune,
                                                     progress):
                rows += _write(conn, keys, moves, played, wins)
        conn.execute(schema.meta.delete().where(schema.meta.c.name.in_((THROUGH, SETTINGS))))
        conn.execute(schema.meta.insert(), [{"name": THROUGH, "value": str(through)},
                                            {"name": SETTINGS, "value": settings_text(depth, prune)}])
    if progress is not None:
        print(f"corner book: {rows:,} continuations in {time.perf_counter() - began:.1f} s",
              file=progress, flush=True)
    return True


def _winners(conn, game_ids: np.ndarray) -> np.ndarray:
    """The winner (1 Black, 2 White, 0 none) of each of ``game_ids``, in their order."""
    from sqlalchemy import select

    top = int(game_ids.max()) if len(game_ids) else 0
    winner_of = np.zeros(top + 1, dtype=np.int64)
    found = np.array([tuple(row) for row in conn.execute(
        select(schema.games.c.id, schema.games.c.winner).where(schema.games.c.winner.isnot(None)))],
        dtype=np.int64).reshape(-1, 2)
    found = found[found[:, 0] <= top]
    winner_of[found[:, 0]] = found[:, 1]
    return winner_of[game_ids]


def _write(conn, keys, moves, played, wins) -> int:
    """Insert counted records (keys unsigned) through the driver: multi-row VALUES on SQLite, COPY on PostgreSQL."""
    if not len(keys):
        return 0
    rows = np.empty((len(keys), 4), dtype=np.int64)
    rows[:, 0] = keys.view(np.int64)
    rows[:, 1], rows[:, 2], rows[:, 3] = moves, played, wins
    cursor = conn.connection.dbapi_connection.cursor()
    try:
        if conn.dialect.name == "postgresql":
            pgcopy.copy_in(cursor, corners.TABLE, ["key", "move", "played", "wins"],
                           [(rows[:, 0], 8), (rows[:, 1], 2), (rows[:, 2], 4), (rows[:, 3], 4)])
        else:
            per = 200
            whole = len(rows) // per * per
            sql = f"INSERT INTO {corners.TABLE} (key, move, played, wins) VALUES "
            if whole:
                cursor.executemany(sql + ",".join(["(?, ?, ?, ?)"] * per), rows[:whole].reshape(-1, 4 * per).tolist())
            if whole < len(rows):
                cursor.executemany(sql + "(?, ?, ?, ?)", rows[whole:].tolist())
    finally:
        cursor.close()
    return len(rows)
