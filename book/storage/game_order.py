"""Games newest first: the order ``Book.games`` lists a position's games in.

The order is the ``date`` column (the text as written, compared by the database), then the
id, both descending.  A few games are sorted by the database (``newest_by_database``, on the
index ``ix_games_date_id``); more with a rank array over every game id (``date_ranks``: one
scan of that index, kept by the book until games are added).
"""

from __future__ import annotations

import numpy as np
from sqlalchemy import or_, select

from fuseki.book.storage.schema import games


def newest_by_database(conn, ids: list[int], after: int | None) -> tuple[int, list[int]]:
    """(games before the keyset, the ``ids`` after the game ``after`` newest first; all of them
    without it).  Raises ValueError for an ``after`` not in the book."""
    order = (games.c.date.desc(), games.c.id.desc())
    if after is None:
        return 0, list(conn.execute(select(games.c.id).where(games.c.id.in_(ids)).order_by(*order)).scalars())
    date = conn.execute(select(games.c.date).where(games.c.id == int(after))).scalar()
    if date is None:
        raise ValueError(f"no game {after} in the book")
    later = or_(games.c.date < date, (games.c.date == date) & (games.c.id < after))
    rest = list(conn.execute(select(games.c.id).where(games.c.id.in_(ids), later).order_by(*order)).scalars())
    return len(ids) - len(rest), rest


def date_ranks(conn, top: int, needed: int) -> np.ndarray:
    """``rank[id]``: each game's place in the order, newest first, over ids up to at least
    ``needed`` and the book's largest ``top`` (an id with no game ranks past every game)."""
    order = select(games.c.id).order_by(games.c.date.desc(), games.c.id.desc())
    cursor = conn.connection.dbapi_connection.cursor()  # the driver's cursor: SQLAlchemy's rows cost 5x the query
    try:
        cursor.execute(str(order.compile(dialect=conn.dialect)))
        ids = np.fromiter((row[0] for row in cursor), dtype=np.int64)
    finally:
        cursor.close()
    length = max(top, needed, int(ids.max()) if len(ids) else 0) + 1
    rank = np.full(length, length, dtype=np.int64)
    rank[ids] = np.arange(len(ids))
    return rank
