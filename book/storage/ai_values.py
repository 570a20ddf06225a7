"""The AI value cache: KataGo's values of a position, kept per canonical position key.

One row of ``ai_values`` per (canonical position key, rules, komi, network, visits): the
root's values for the side to move and, per candidate move, its values in the position's
*canonical* orientation (the one of the smallest of ``Board.symmetric_keys``, as the
book's next moves).  A look-up from any of the 8 orientations maps the points back with the
same symmetry tables and merges the points equivalent under the position's own symmetry,
as ``orbits.merge_orbits`` does for next moves, so a second look at a position in any
orientation is one primary-key read: ``get`` for exactly one settings' row (what
``annotate`` resumes by), ``best`` for the most searched row of a rules and komi, of one
network or of any (what the readers show: ``book.ai.AiValueStores``).

``moves`` is the bytes of a numpy record array (``MOVE_DTYPE``), best move first: the
canonical padded point (``PASS`` = -1), visits, win rate and score lead for the player
who plays the move, the loss in points against KataGo's best move, the policy prior.
Komi is kept in half points (an integer: a float in a primary key is a trap).

The table lives where the caller keeps it: beside a writable book's tables, or in a cache
file of its own for the read-only built-in book.  Storage only: what asks KataGo is above.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
from sqlalchemy import BigInteger, Column, Float, Integer, LargeBinary, MetaData, String, Table, func, select

from fuseki.engine.core import coords, zobrist

PASS = coords.PASS
MOVE_DTYPE = np.dtype([("point", "<i2"), ("visits", "<i4"), ("winrate", "<f4"), ("score_lead", "<f4"),
                       ("loss", "<f4"), ("prior", "<f4")])

metadata = MetaData()
ai_values = Table(
    "ai_values", metadata,
    Column("key", BigInteger, primary_key=True, autoincrement=False),  # canonical key, signed
    Column("rules", String(32), primary_key=True),
    Column("komi_halves", Integer, primary_key=True, autoincrement=False),
    Column("network", String(200), primary_key=True),
    Column("visits", Integer, primary_key=True, autoincrement=False),  # maxVisits asked
    Column("root_visits", Integer, nullable=False),
    Column("root_winrate", Float, nullable=False),
    Column("root_score_lead", Float, nullable=False),
    Column("moves", LargeBinary, nullable=False),
    sqlite_with_rowid=False,
)


@dataclass(frozen=True)
class AiSettings:
    """What the values are for: KataGo's rules name, komi, the network's name, maxVisits."""

    rules: str
    komi: float
    network: str
    visits: int

    def row_key(self) -> dict:
        halves = self.komi * 2
        if halves != int(halves):
            raise ValueError(f"komi {self.komi} is not a whole or half number")
        return {"rules": self.rules, "komi_halves": int(halves), "network": self.network, "visits": self.visits}


@dataclass(frozen=True)
class AiMove:
    """One candidate move in the asked orientation: ``point`` and its equivalent ``points``."""

    point: int
    points: tuple[int, ...]
    visits: int
    winrate: float
    score_lead: float
    loss: float
    prior: float


@dataclass(frozen=True)
class AiValues:
    """KataGo's values of one position for ``settings``, moves best first."""

    key: int  # canonical key, unsigned
    settings: AiSettings
    visits: int
    winrate: float
    score_lead: float
    moves: tuple[AiMove, ...]

    def move(self, point: int) -> AiMove | None:
        return next((m for m in self.moves if point in m.points), None)


def create(conn) -> None:
    metadata.create_all(conn)


@cache
def _tables(size: int) -> list[list[int]]:
    return coords.symmetry_table(size).tolist()


def to_canonical(points, keys: list[int], size: int) -> list[int]:
    """``points`` of the board whose symmetric keys are ``keys``, in canonical orientation."""
    forward = _tables(size)[keys.index(min(keys))]
    return [p if p == PASS else forward[p] for p in points]


def put(conn, keys: list[int], size: int, settings: AiSettings, root: tuple[int, float, float],
        moves: list[tuple[int, int, float, float, float, float]]) -> None:
    """Store the values of the position whose ``Board.symmetric_keys`` are ``keys``.

    ``root``: (visits, win rate, score lead) for the side to move; ``moves``: (point in the
    asked orientation, visits, win rate, score lead, loss, prior), best first.  Replaces
    what was stored for the same key and settings.
    """
    records = np.array([tuple(m) for m in moves], dtype=MOVE_DTYPE) if moves else np.empty(0, MOVE_DTYPE)
    records["point"] = to_canonical(records["point"].tolist(), keys, size)
    row = {"key": zobrist.to_signed(min(keys)), **settings.row_key(), "root_visits": int(root[0]),
           "root_winrate": float(root[1]), "root_score_lead": float(root[2]), "moves": records.tobytes()}
    where = _where(row["key"], settings)
    conn.execute(ai_values.delete().where(*where))
    conn.execute(ai_values.insert(), [row])


def get(conn, keys: list[int], size: int, settings: AiSettings) -> AiValues | None:
    """The stored values of the position whose symmetric keys are ``keys``, in its orientation;
    None when none are stored for exactly these settings (``annotate``'s resume test)."""
    canonical = min(keys)
    row = conn.execute(select(*_VALUE_COLUMNS).where(*_where(zobrist.to_signed(canonical), settings))).first()
    return None if row is None else _decode(row, keys, size, settings)


def best(conn, keys: list[int], size: int, rules: str, komi: float, network: str | None = None) -> AiValues | None:
    """The most searched stored values of the position for ``rules`` and ``komi``: of the
    ``network`` named, or of any network when it is None or '' (the answer's ``settings`` say
    which network and visits it is); None when none are stored.  One read of a prefix of the
    primary key (key, rules, komi, network), the row with the most visits first."""
    cols = ai_values.c
    canonical = min(keys)
    halves = AiSettings(rules, komi, network or "", 0).row_key()["komi_halves"]
    where = [cols.key == zobrist.to_signed(canonical), cols.rules == rules, cols.komi_halves == halves]
    if network:
        where.append(cols.network == network)
    row = conn.execute(select(cols.network, cols.visits, *_VALUE_COLUMNS).where(*where)
                       .order_by(cols.visits.desc(), cols.root_visits.desc(), cols.network).limit(1)).first()
    if row is None:
        return None
    return _decode(row, keys, size, AiSettings(rules, komi, row.network, row.visits))


def copy(source, target, chunk: int = 10_000) -> tuple[int, int]:
    """Copy every row of ``source``'s ``ai_values`` (a connection: a cache file, a book) into
    ``target``'s (its table made if missing), keeping the rows ``target`` already has for the
    same key and settings: (rows read, rows added).  How values computed elsewhere (a machine
    with a GPU, an annotate run) reach a book, the built-in book's file included."""
    create(target)
    dialect = target.dialect.name
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    statement = insert(ai_values).on_conflict_do_nothing()
    count = select(func.count()).select_from(ai_values)
    before, read = target.execute(count).scalar_one(), 0
    rows = source.execute(select(ai_values)).mappings()
    while batch := [dict(row) for row in rows.fetchmany(chunk)]:
        read += len(batch)
        target.execute(statement, batch)
    return read, target.execute(count).scalar_one() - before


_VALUE_COLUMNS = (ai_values.c.root_visits, ai_values.c.root_winrate, ai_values.c.root_score_lead, ai_values.c.moves)


def _decode(row, keys: list[int], size: int, settings: AiSettings) -> AiValues:
    """A stored row's values, its points mapped from canonical to the orientation of ``keys``."""
    canonical = min(keys)
    records = np.frombuffer(row.moves, dtype=MOVE_DTYPE)
    table = _tables(size)
    back = table[coords.INVERSE[keys.index(canonical)]]
    stabilizer = [table[s] for s in range(8) if keys[s] == keys[0]]
    moves: list[AiMove] = []
    seen: set[tuple[int, ...]] = set()
    # best first; of equivalent points (a symmetric position) the first, KataGo's better-searched one
    for rec in records.tolist():
        canon = rec[0]
        point = canon if canon == PASS else back[canon]
        orbit = (PASS,) if point == PASS else tuple(sorted({image[point] for image in stabilizer}))
        if orbit in seen:
            continue
        seen.add(orbit)
        moves.append(AiMove(orbit[0], orbit, *rec[1:]))
    return AiValues(key=canonical, settings=settings, visits=row.root_visits, winrate=row.root_winrate,
                    score_lead=row.root_score_lead, moves=tuple(moves))


def _where(signed_key: int, settings: AiSettings) -> list:
    cols = ai_values.c
    k = settings.row_key()
    return [cols.key == signed_key, cols.rules == k["rules"], cols.komi_halves == k["komi_halves"],
            cols.network == k["network"], cols.visits == k["visits"]]
