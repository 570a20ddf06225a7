"""The AI value cache: KataGo's values of a position, kept per canonical position key.

One row of ``ai_values`` per (canonical position key, rules, komi, network, visits): the
root's values for the side to move and, per candidate move, its values in the position's
*canonical* orientation (the one of the smallest of ``Board.symmetric_keys``, as the
book's next moves).  A look-up from any of the 8 orientations maps the points back with the
same symmetry tables and merges the points equivalent under the position's own symmetry,
as ``orbits.merge_orbits`` does for next moves, so a second look at a position in any
orientation is one primary-key read: ``get`` for exactly one settings' row (what
``annotate`` resumes by), ``best`` for the most searched row of a rules and komi, of one
network or of any (what the readers show: ``book.analysis.ai.AiValueStores``).

``moves`` is the bytes of a numpy record array (``MOVE_DTYPE``), KataGo's order (best
first), then moves evaluated by a search of their own (``merge_moves``: a human move KataGo's
search did not visit, asked with the move forced): the canonical padded point (``PASS`` =
-1), visits, win rate and score lead for the player who plays the move, the loss KataGo's
answer gave, the policy prior.  ``pvs`` (nullable: tables made before it lack the column,
the read-only built-in book's file among them, and read as no lines) is each move's
principal variation, the move itself first, in canonical points: int16 words, per move its
length then its points (``PASS`` = -1), in the order of ``moves``; a read maps a line as it
maps its move, then by the position's own symmetry that shows the move at ``AiMove.point``
(of several equivalent lines, one).  ``create`` gives an older writable table the column.
Komi is kept in half points (an integer: a float in a primary key is a trap).

A read's ``AiMove.loss`` is not the stored one: it is the best score lead among the row's
moves of at least ``DEEP_VISITS`` visits (of all its moves when none has that many) minus the
move's, floored at 0, so a forced move's loss is against the same best as the searched ones',
and never against a candidate KataGo's search barely looked at (a 3-visit lead is noise at
the size of a mark's threshold: docs/katago.md, "How sure a mark is").  Of the points of one
orbit of a symmetric position (two points that the position's own symmetry maps onto each
other are one move), a read keeps the values with the most visits: KataGo may have searched a
twin of the point that a forced search evaluated deeply.

The table lives where the caller keeps it: beside a writable book's tables, or in a cache
file of its own for the read-only built-in book.  Storage only: what asks KataGo is above.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from functools import cache

import numpy as np
from sqlalchemy import BigInteger, Column, Float, Integer, LargeBinary, MetaData, String, Table, func, inspect, select

from fuseki.book.storage import dialect
from fuseki.engine.core import base, coords, zobrist

PASS = base.PASS
DEEP_VISITS = 100  # the fewest visits of a value that losses are measured against and marks drawn from
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
    Column("pvs", LargeBinary, nullable=True),  # each move's line; NULL (or no column): none stored
    sqlite_with_rowid=False,
)
PV_DTYPE = np.dtype("<i2")


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
    """One candidate move in the asked orientation: ``point`` and its equivalent ``points``;
    ``loss``: the position's best lead (``AiValues.best_lead``) minus this one's, floored at 0;
    ``pv``: KataGo's line from this move on (the move first), ``()`` when none is stored."""

    point: int
    points: tuple[int, ...]
    visits: int
    winrate: float
    score_lead: float
    loss: float
    prior: float
    pv: tuple[int, ...] = ()


@dataclass(frozen=True)
class AiValues:
    """KataGo's values of one position for ``settings``, moves best first."""

    key: int  # canonical key, unsigned
    settings: AiSettings
    visits: int
    winrate: float
    score_lead: float
    moves: tuple[AiMove, ...]
    best_lead: float = 0.0  # the lead losses are measured against (``DEEP_VISITS``: see the module docstring)
    best_visits: int = 0  # the visits of the move that lead is of

    def move(self, point: int) -> AiMove | None:
        return next((m for m in self.moves if point in m.points), None)


_HAS_PVS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # engine -> its table has ``pvs``


def create(conn) -> None:
    """Make the table, or give an older one (no ``pvs``) the column: a writable store only."""
    metadata.create_all(conn)
    if not has_pvs(conn):
        conn.exec_driver_sql(f"ALTER TABLE ai_values ADD COLUMN pvs {dialect.blob_type(conn)}")
        _HAS_PVS[conn.engine] = True


def has_pvs(conn) -> bool:
    """Whether this database's ``ai_values`` has the ``pvs`` column (looked at once per engine)."""
    known = _HAS_PVS.get(conn.engine)
    if known is None:
        seen = inspect(conn)
        names = {c["name"] for c in seen.get_columns("ai_values")} if seen.has_table("ai_values") else set()
        known = "pvs" in names
        if names:  # a table not made yet is looked at again
            _HAS_PVS[conn.engine] = known
    return known


@cache
def _tables(size: int) -> list[list[int]]:
    return coords.symmetry_table(size).tolist()


def to_canonical(points, keys: list[int], size: int) -> list[int]:
    """``points`` of the board whose symmetric keys are ``keys``, in canonical orientation."""
    forward = _tables(size)[keys.index(min(keys))]
    return [p if p == PASS else forward[p] for p in points]


def put(conn, keys: list[int], size: int, settings: AiSettings, root: tuple[int, float, float],
        moves: list[tuple], pvs: list | None = None) -> None:
    """Store the values of the position whose ``Board.symmetric_keys`` are ``keys``.

    ``root``: (visits, win rate, score lead) for the side to move; ``moves``: (point in the
    asked orientation, visits, win rate, score lead, loss, prior), best first; ``pvs``: each
    move's line (points in the asked orientation, the move first), or None.  Replaces what
    was stored for the same key and settings.  The table must have ``pvs`` (``create``).
    """
    move_values = np.array([tuple(m) for m in moves], dtype=MOVE_DTYPE) if moves else np.empty(0, MOVE_DTYPE)
    move_values["point"] = to_canonical(move_values["point"].tolist(), keys, size)
    lines = None if pvs is None else [to_canonical(list(pv), keys, size) for pv in pvs]
    _write(conn, zobrist.to_signed(min(keys)), settings, root, move_values, lines)


def _write(conn, signed_key: int, settings: AiSettings, root, move_values: np.ndarray, lines) -> None:
    """Replace the row of (``signed_key``, ``settings``): canonical ``move_values`` and ``lines``."""
    if lines is not None and len(lines) != len(move_values):
        raise ValueError(f"{len(lines)} lines for {len(move_values)} moves")
    row = {"key": signed_key, **settings.row_key(), "root_visits": int(root[0]),
           "root_winrate": float(root[1]), "root_score_lead": float(root[2]), "moves": move_values.tobytes(),
           "pvs": None if lines is None else _encode_lines(lines)}
    conn.execute(ai_values.delete().where(*_where(signed_key, settings)))
    conn.execute(ai_values.insert(), [row])


def merge_moves(conn, keys: list[int], size: int, settings: AiSettings, root: tuple[int, float, float],
                moves: list[tuple], pvs: list | None = None) -> None:
    """Add ``moves`` (as ``put``'s, with their lines ``pvs``) to the stored row of the position
    and ``settings``: a stored move on the same canonical point is replaced in its place, the
    others are appended (after KataGo's order: moves evaluated by a search of their own).  No
    row yet: one is made with ``root``; a row's root is kept.  How a forced move's values
    join the position's, and how a row read from a read-only store is copied with them."""
    signed = zobrist.to_signed(min(keys))
    found = conn.execute(select(*_VALUE_COLUMNS, *_pv_column(conn)).where(*_where(signed, settings))).first()
    new = np.array([tuple(m) for m in moves], dtype=MOVE_DTYPE) if moves else np.empty(0, MOVE_DTYPE)
    new["point"] = to_canonical(new["point"].tolist(), keys, size)
    new_lines = [to_canonical(list(pv), keys, size) for pv in pvs] if pvs is not None else [[]] * len(new)
    if found is None:
        _write(conn, signed, settings, root, new, new_lines)
        return
    move_values = np.frombuffer(found.moves, dtype=MOVE_DTYPE).copy()
    lines = _decode_lines(getattr(found, "pvs", None), len(move_values))
    at = {int(p): i for i, p in enumerate(move_values["point"].tolist())}
    extra, extra_lines = [], []
    for record, line in zip(new, new_lines):
        i = at.get(int(record["point"]))
        if i is None:
            extra.append(record)
            extra_lines.append(line)
        else:
            move_values[i], lines[i] = record, line
    if extra:
        move_values = np.concatenate([move_values, np.array(extra, dtype=MOVE_DTYPE)])
        lines += extra_lines
    _write(conn, signed, settings, (found.root_visits, found.root_winrate, found.root_score_lead), move_values, lines)


def _encode_lines(lines) -> bytes:
    words: list[int] = []
    for line in lines:
        words.append(len(line))
        words.extend(int(p) for p in line)
    return np.array(words, dtype=PV_DTYPE).tobytes()


def _decode_lines(blob: bytes | None, count: int) -> list[list[int]]:
    """``count`` lines from ``pvs`` (None, or a blob for another count of moves: no lines)."""
    if not blob:
        return [[] for _ in range(count)]
    words = np.frombuffer(blob, dtype=PV_DTYPE).tolist()
    lines, i = [], 0
    while i < len(words):
        n = words[i]
        lines.append(words[i + 1: i + 1 + n])
        i += 1 + n
    return lines if len(lines) == count else [[] for _ in range(count)]


def _pv_column(conn) -> tuple:
    return (ai_values.c.pvs,) if has_pvs(conn) else ()


def get(conn, keys: list[int], size: int, settings: AiSettings) -> AiValues | None:
    """The stored values of the position whose symmetric keys are ``keys``, in its orientation;
    None when none are stored for exactly these settings (``annotate``'s resume test)."""
    canonical = min(keys)
    row = conn.execute(select(*_VALUE_COLUMNS, *_pv_column(conn))
                       .where(*_where(zobrist.to_signed(canonical), settings))).first()
    return None if row is None else _decode(row, keys, size, settings)


def best(conn, keys: list[int], size: int, rules: str, komi: float, network: str | None = None) -> AiValues | None:
    """The most searched stored values of the position for ``rules`` and ``komi``: of the
    ``network`` named, or of any network when it is None or '' (the answer's ``settings`` say
    which network and visits it is); None when none are stored.  One read of a prefix of the
    primary key (key, rules, komi, network), the row with the most visits first (then the
    most root visits, then the most moves evaluated)."""
    cols = ai_values.c
    canonical = min(keys)
    halves = AiSettings(rules, komi, network or "", 0).row_key()["komi_halves"]
    where = [cols.key == zobrist.to_signed(canonical), cols.rules == rules, cols.komi_halves == halves]
    if network:
        where.append(cols.network == network)
    row = conn.execute(select(cols.network, cols.visits, *_VALUE_COLUMNS, *_pv_column(conn)).where(*where)
                       .order_by(cols.visits.desc(), cols.root_visits.desc(), func.length(cols.moves).desc(),
                                 cols.network).limit(1)).first()
    if row is None:
        return None
    return _decode(row, keys, size, AiSettings(rules, komi, row.network, row.visits))


def copy(source, target, chunk: int = 10_000) -> tuple[int, int]:
    """Copy every row of ``source``'s ``ai_values`` (a connection: a cache file, a book) into
    ``target``'s (its table made if missing, an older one given ``pvs``): a row ``target``
    lacks is added; of the same key and settings, ``target``'s row is kept unless
    ``source``'s goes deeper (``deeper``: forced moves added since, or moves searched again
    with the move forced: then ``source``'s replaces it).  (rows read, rows added).  A source
    made before ``pvs`` copies its rows without lines.  How values computed elsewhere (a
    machine with a GPU, an annotate run) reach a book, the built-in book's file included."""
    create(target)
    statement = dialect.upsert(target, ai_values)
    fresh = statement.excluded
    statement = statement.on_conflict_do_update(
        index_elements=[c.name for c in ai_values.primary_key.columns],
        set_={name: fresh[name] for name in ("root_visits", "root_winrate", "root_score_lead", "moves", "pvs")})
    count = select(func.count()).select_from(ai_values)
    before, read = target.execute(count).scalar_one(), 0
    columns = [c for c in ai_values.c if c.name != "pvs"] + list(_pv_column(source))
    rows = source.execute(select(*columns)).mappings()
    while batch := [{"pvs": None, **dict(row)} for row in rows.fetchmany(chunk)]:
        read += len(batch)
        stored = _stored_moves(target, {row["key"] for row in batch})
        batch = [row for row in batch if deeper(row["moves"], stored.get(_primary_key(row)))]
        if batch:
            target.execute(statement, batch)
    return read, target.execute(count).scalar_one() - before


def deeper(moves: bytes, than: bytes | None) -> bool:
    """A row's ``moves`` go deeper than a stored row's ``than`` (None: no row): more moves
    evaluated (forced moves added), or as many with more visits among them (moves the
    search left shallow, searched again with the move forced: ``book.analysis.ai.deep_enough``)."""
    if than is None or len(moves) != len(than):
        return than is None or len(moves) > len(than)
    visits = [int(np.frombuffer(blob, dtype=MOVE_DTYPE)["visits"].sum()) for blob in (moves, than)]
    return visits[0] > visits[1]


_KEYS_A_QUERY = 500  # keys in one IN list: far under SQLite's and PostgreSQL's bound parameters


def _primary_key(row) -> tuple:
    return tuple(row[c.name] for c in ai_values.primary_key.columns)


def _stored_moves(conn, keys: set[int]) -> dict[tuple, bytes]:
    """The ``moves`` of ``conn``'s rows of ``keys`` (any settings), by primary key."""
    keys, found = sorted(keys), {}
    for at in range(0, len(keys), _KEYS_A_QUERY):
        query = select(*ai_values.primary_key.columns, ai_values.c.moves).where(
            ai_values.c.key.in_(keys[at:at + _KEYS_A_QUERY]))
        found.update((_primary_key(row), row.moves) for row in conn.execute(query).mappings())
    return found


_VALUE_COLUMNS = (ai_values.c.root_visits, ai_values.c.root_winrate, ai_values.c.root_score_lead, ai_values.c.moves)


def _decode(row, keys: list[int], size: int, settings: AiSettings) -> AiValues:
    """A stored row's values, its points mapped from canonical to the orientation of ``keys``."""
    canonical = min(keys)
    move_values = np.frombuffer(row.moves, dtype=MOVE_DTYPE)
    lines = _decode_lines(getattr(row, "pvs", None), len(move_values))
    table = _tables(size)
    back = table[coords.INVERSE[keys.index(canonical)]]
    stabilizer = [table[s] for s in range(8) if keys[s] == keys[0]]
    # of equivalent points (a symmetric position) one move: in the place of the first (KataGo's
    # order, best first), with the values of the most visited twin
    places: dict[tuple[int, ...], int] = {}
    chosen: list[tuple[tuple[int, ...], int, tuple, list]] = []
    for rec, line in zip(move_values.tolist(), lines):
        canon = rec[0]
        point = canon if canon == PASS else back[canon]
        orbit = (PASS,) if point == PASS else tuple(sorted({image[point] for image in stabilizer}))
        at = places.get(orbit)
        if at is None:
            places[orbit] = len(chosen)
            chosen.append((orbit, point, rec, line))
        elif rec[1] > chosen[at][2][1]:
            chosen[at] = (orbit, point, rec, line)
    best_lead, best_visits = _best([rec for _, _, rec, _ in chosen])
    moves: list[AiMove] = []
    for orbit, point, rec, line in chosen:
        # the line goes through the symmetry of the position that shows the move as ``orbit[0]``
        pv: tuple[int, ...] = ()
        if line:
            image = table[0] if point == PASS else next(i for i in stabilizer if i[point] == orbit[0])
            pv = tuple(p if p == PASS else image[back[p]] for p in line)
        visits, winrate, lead, _stored_loss, prior = rec[1:]
        moves.append(AiMove(orbit[0], orbit, visits, winrate, lead, max(0.0, best_lead - lead), prior, pv))
    return AiValues(key=canonical, settings=settings, visits=row.root_visits, winrate=row.root_winrate,
                    score_lead=row.root_score_lead, moves=tuple(moves), best_lead=best_lead,
                    best_visits=best_visits)


def _best(records) -> tuple[float, int]:
    """(lead, visits) of the best of ``records`` (rows of ``MOVE_DTYPE`` as tuples) of at least
    ``DEEP_VISITS`` visits, of all of them when none has so many; (0.0, 0) for none."""
    deep = [rec for rec in records if rec[1] >= DEEP_VISITS] or list(records)
    if not deep:
        return 0.0, 0
    top = max(deep, key=lambda rec: (rec[3], rec[1]))
    return float(top[3]), int(top[1])


def _where(signed_key: int, settings: AiSettings) -> list:
    cols = ai_values.c
    k = settings.row_key()
    return [cols.key == signed_key, cols.rules == k["rules"], cols.komi_halves == k["komi_halves"],
            cols.network == k["network"], cols.visits == k["visits"]]
