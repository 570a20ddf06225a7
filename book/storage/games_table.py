"""The games a book holds: a book of games' ``games`` table, or none (a statistics book).

A ``Book`` (``book.storage.store``) holds one of the two and never asks which:

- ``GamesTable``: a book of games' table (``schema.games``), read for its ids, records,
  counts and largest id; the import writes it through ``known`` and ``insert`` (with the
  player index, in the batch's transaction) and a parser asks ``KnownGames`` on a connection
  of its own;
- ``NoGames``: a statistics book's.  It was counted from games it does not keep: its counts
  are what its meta rows say (``statistics_book.StatisticsInfo``), it lists none, and a game
  asked for is refused in its words (``why_none``).

How a game's SGF is stored (zlib with a preset dictionary) is here too, since the games table
is all that keeps it.  Nothing here imports SQLAlchemy until a book of games is read: a
statistics book is opened without it (issue 61, tests/test_cli_startup.py).
"""

from __future__ import annotations

import zlib
from functools import cache
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from fuseki.book.storage.position_index.statistics_book import StatisticsInfo

# zlib preset dictionary for the stored SGF: common header text, then every 19x19 move
# node.  Part of the schema: changing it makes stored games unreadable (bump SCHEMA_VERSION).
_LETTERS = "abcdefghijklmnopqrs"
SGF_DICTIONARY = (
    b"(;GM[1]FF[4]CA[UTF-8]SZ[19]KM[6.5]RU[Korean]RU[Japanese]RU[Chinese]DT[2016-07-10]"
    b"PW[]WR[9d]PB[]BR[9d]RE[W+Resign]RE[B+Resign]RE[W+R]RE[B+R]PC[Tygem]GN[tygem-]\n"
    + b"".join(f";B[{x}{y}];W[{x}{y}]".encode() for x in _LETTERS for y in _LETTERS))

_PACKER = zlib.compressobj(1, zdict=SGF_DICTIONARY)


def compress_sgf(data: bytes) -> bytes:
    """SGF bytes as stored in games.sgf (zlib, level 1, preset dictionary)."""
    packer = _PACKER.copy()  # a primed copy: the dictionary is not hashed again
    return packer.compress(data) + packer.flush()


def decompress_sgf(blob: bytes) -> bytes:
    """Inverse of compress_sgf."""
    unpacker = zlib.decompressobj(zdict=SGF_DICTIONARY)
    return unpacker.decompress(blob) + unpacker.flush()


class Games(Protocol):
    """What a ``Book`` asks of the games it holds (see the module docstring)."""

    why_none: str | None  # why the book lists no games (a statistics book); None: it holds them

    def ids(self, size: int | None = None) -> list[int]:
        """Ids of the stored games (of one board size if given), in import order."""

    def sgf(self, game_id: int) -> bytes:
        """The game's own SGF bytes; KeyError if there is none."""

    def source(self, game_id: int) -> str | None:
        """Where the game was read from (a file, an archive's member); None: not known."""

    def top(self, conn=None) -> int:
        """The largest game id (0: none); ``conn``: the book's SQLAlchemy connection to read it
        on (None: one of its own)."""

    def counts(self, conn) -> tuple[int, dict[int, int], tuple[int, int] | None]:
        """(games, games per board size, (first year, last year) or None)."""

    def of_size(self, size: int) -> int:
        """Games of boards of ``size``."""


class GamesTable:
    """A book of games' ``games`` table, on the book's SQLAlchemy engine."""

    why_none = None

    def __init__(self, db: Engine):
        self.db = db

    def ids(self, size: int | None = None) -> list[int]:
        from sqlalchemy import select

        from fuseki.book.storage.schema import games

        query = select(games.c.id).order_by(games.c.id)
        if size is not None:
            query = query.where(games.c.size == int(size))
        with self.db.connect() as conn:
            return list(conn.execute(query).scalars())

    def sgf(self, game_id: int) -> bytes:
        from sqlalchemy import select

        from fuseki.book.storage.schema import games

        with self.db.connect() as conn:
            blob = conn.execute(select(games.c.sgf).where(games.c.id == int(game_id))).scalar()
        if blob is None:
            raise KeyError(f"no game {game_id} in the book")
        return decompress_sgf(blob)

    def source(self, game_id: int) -> str | None:
        from sqlalchemy import select

        from fuseki.book.storage.schema import games

        with self.db.connect() as conn:
            return conn.execute(select(games.c.source).where(games.c.id == int(game_id))).scalar()

    def top(self, conn=None) -> int:
        from sqlalchemy import func, select

        from fuseki.book.storage.schema import games

        if conn is None:
            with self.db.connect() as conn:
                return self.top(conn)
        return int(conn.execute(select(func.max(games.c.id))).scalar() or 0)

    def counts(self, conn) -> tuple[int, dict[int, int], tuple[int, int] | None]:
        from sqlalchemy import func, select

        from fuseki.book.storage.schema import games

        count = conn.execute(select(func.count()).select_from(games)).scalar() or 0
        sizes = conn.execute(select(games.c.size, func.count()).group_by(games.c.size)).all()
        low, high = conn.execute(select(func.min(games.c.year), func.max(games.c.year))).one()
        years = (int(low), int(high)) if low is not None else None
        return int(count), {int(size): int(n) for size, n in sizes}, years

    def of_size(self, size: int) -> int:
        from sqlalchemy import func, select

        from fuseki.book.storage.schema import games

        with self.db.connect() as conn:
            return int(conn.execute(select(func.count()).select_from(games).where(games.c.size == size)).scalar() or 0)


class NoGames:
    """A statistics book's games: none kept, counted as its meta rows say (``info``)."""

    def __init__(self, info: StatisticsInfo):
        self.info = info
        self.why_none = info.no_games()

    def ids(self, size: int | None = None) -> list[int]:
        return []

    def sgf(self, game_id: int) -> bytes:
        raise KeyError(f"no game {game_id}: {self.why_none}")

    def source(self, game_id: int) -> str | None:
        raise KeyError(f"no game {game_id}: {self.why_none}")

    def top(self, conn=None) -> int:
        return 0

    def counts(self, conn) -> tuple[int, dict[int, int], tuple[int, int] | None]:
        return self.info.games, dict(self.info.sizes), self.info.years

    def of_size(self, size: int) -> int:
        """As its meta rows say; all its games where they do not give the sizes."""
        return int(dict(self.info.sizes).get(size, self.info.games))


# --- the import's writing ------------------------------------------------------------------

@cache
def columns() -> list[str]:
    """The games table's columns in table order, ``id`` first: a parser's game row is the
    rest, in this order (``insert`` puts the id in front)."""
    from fuseki.book.storage.schema import games

    return [column.name for column in games.columns]


def known(conn, fingerprints: list) -> set:
    """Those of ``fingerprints`` the book's games have."""
    from fuseki.book.storage.dialect import rows_where_in
    from fuseki.book.storage.schema import games

    fingerprint = games.c.fingerprint
    return {row[0] for row in rows_where_in(conn, fingerprint, fingerprints, fingerprint)}


def insert(conn, rows: list[tuple]) -> None:
    """Insert game rows (``columns()`` order, ids ascending beyond the book's largest) and
    their players into the player index, in the caller's write transaction (the index is
    complete up to the batch once it commits)."""
    from fuseki.book.storage import dialect, schema

    black, white = columns().index("black"), columns().index("white")
    dialect.insert_rows(conn, schema.games, rows)
    schema.index_players(conn, [(row[0], row[black], row[white]) for row in rows])


class KnownGames:
    """Which fingerprints the book already holds, asked by a parser of its own connection.

    The writer checks every batch's games against the book anyway (it alone sees the
    batches still in other parsers' hands); a batch with a game already there must be
    written row by row instead of as the image.  Games repeated far apart (in the Tygem
    archives, games of a few moves, the same in every month) are caught here, where
    there is a core for each parser, so that almost every batch reaches the writer whole.
    """

    def __init__(self, url):
        self.url, self.db = url, None

    def __call__(self, fingerprints: list[int]) -> set[int]:
        from fuseki.book.storage.connect import make_db

        if self.db is None:  # opened in the parser process, after the fork
            self.db = make_db(self.url, readonly=True)
        with self.db.connect() as conn:
            return known(conn, fingerprints)
