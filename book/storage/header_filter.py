"""The games a header filter keeps (event, result, ranks, handicap, komi: ``book.model.filters``),
as a boolean mask over game ids.

The book reads the header columns of every game once (:func:`read_headers`: one scan of
``games``, through the driver's cursor), each text column as a code per game into the column's
distinct values; the :class:`Headers` are cached by ``Book`` until games are added.  A filter
then maps each distinct value once, in Python (``parse_result``, ``rank_value``, a substring of
the event folded to lower case), into a table of booleans indexed by code, and numpy picks each
game's: no SQL per filter value, no IN list of values or ids (SQLite's parameter limit), the same
on SQLite and PostgreSQL, and exactly the Python reading a test can repeat game by game.

Cost: the scan holds 4 bytes a game per text column and 10 for komi and handicap (366,535
games: 10 MB); each new filter value then costs a pass over the distinct values and one numpy
gather per column (``bench/book.py --query-book``, "header filters").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sqlalchemy import select

from fuseki.book.model.filters import Filters, in_range, parse_result, rank_value
from fuseki.book.storage.schema import games

TEXT_COLUMNS = ("result", "black_rank", "white_rank", "event")
NUMBER_COLUMNS = ("komi", "handicap")


@dataclass(frozen=True)
class Headers:
    """The header columns of games 1..``top``: ``codes[name][id]`` indexes ``values[name]`` (the
    column's distinct values; -1 for an id with no game), ``komi`` (NaN when unknown),
    ``handicap``, and ``present`` (a game has this id)."""

    top: int
    codes: dict
    values: dict
    komi: np.ndarray
    handicap: np.ndarray
    present: np.ndarray


def read_headers(conn, top: int) -> Headers:
    """Every game's header columns of the module docstring, up to game id ``top``."""
    columns = [games.c.id, *(games.c[name] for name in TEXT_COLUMNS + NUMBER_COLUMNS)]
    query = select(*columns).where(games.c.id <= top)
    size = top + 1
    codes = {name: np.full(size, -1, dtype=np.int32) for name in TEXT_COLUMNS}
    known: dict = {name: {} for name in TEXT_COLUMNS}
    komi = np.full(size, np.nan)
    handicap = np.zeros(size, dtype=np.int16)
    present = np.zeros(size, dtype=bool)
    cursor = conn.connection.dbapi_connection.cursor()  # SQLAlchemy's rows cost 5x the query (game_order.date_ranks)
    try:
        cursor.execute(str(query.compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True})))
        while rows := cursor.fetchmany(10_000):
            ids = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
            present[ids] = True
            for place, name in enumerate(TEXT_COLUMNS, 1):
                seen = known[name]
                codes[name][ids] = [seen.setdefault(row[place] or "", len(seen)) for row in rows]
            komi[ids] = [np.nan if row[5] is None else row[5] for row in rows]
            handicap[ids] = [row[6] or 0 for row in rows]
    finally:
        cursor.close()
    values = {name: list(known[name]) for name in TEXT_COLUMNS}
    return Headers(top, codes, values, komi, handicap, present)


def header_mask(headers: Headers, filters: Filters) -> np.ndarray:
    """Boolean mask over game ids 0..``headers.top``: the games the header filters keep (every
    game when none is set; years and player are ``schema.filter_query``'s)."""
    keep = headers.present.copy()
    if filters.event:
        part = filters.event.lower()
        keep &= _gather(headers, "event", [part in value.lower() for value in headers.values["event"]])
    if filters.winner or filters.won_by or filters.margin is not None:
        results = [parse_result(value) for value in headers.values["result"]]
        keep &= _gather(headers, "result", [
            (not filters.winner or r.winner == filters.winner) and (not filters.won_by or r.won_by == filters.won_by)
            and (filters.margin is None or in_range(r.margin, filters.margin)) for r in results])
    if filters.min_rank is not None or filters.max_rank is not None:
        # the weaker player's rank in [min, max]: both at least min, one at most max, both known
        low = -(10 ** 6) if filters.min_rank is None else filters.min_rank
        high = 10 ** 6 if filters.max_rank is None else filters.max_rank
        ranks = {name: [rank_value(value) for value in headers.values[name]] for name in ("black_rank", "white_rank")}
        at_least = [_gather(headers, name, [r is not None and r >= low for r in rs]) for name, rs in ranks.items()]
        at_most = [_gather(headers, name, [r is not None and r <= high for r in rs]) for name, rs in ranks.items()]
        keep &= at_least[0] & at_least[1] & (at_most[0] | at_most[1])
    if filters.handicap is not None:
        keep &= _between(headers.handicap, filters.handicap)
    if filters.komi is not None:
        with np.errstate(invalid="ignore"):  # NaN (no komi) compares False: kept by no komi filter
            keep &= _between(headers.komi, filters.komi)
    return keep


def _gather(headers: Headers, name: str, chosen: list[bool]) -> np.ndarray:
    """Each game's entry of ``chosen`` (one per distinct value of column ``name``); False for no game."""
    table = np.array([*chosen, False], dtype=bool)  # code -1 (no game) picks the last, False
    return table[headers.codes[name]]


def _between(values: np.ndarray, bounds: tuple) -> np.ndarray:
    """Which ``values`` lie in ``bounds`` (either end None: open)."""
    low, high = bounds
    keep = np.ones(len(values), dtype=bool)
    if low is not None:
        keep &= values >= low
    if high is not None:
        keep &= values <= high
    return keep
