"""The book's tables (SQLAlchemy Core) and the version stamps that guard them.

The tables:

``meta(name, value)``
    ``hash_scheme`` (:data:`HASH_SCHEME`: the Zobrist generator's name and a checksum
    of the shipped key table) and ``schema_version``.  A book written with other keys
    would answer every query wrongly without an error, so :func:`check_versions`
    refuses to open it.

``games``
    One row per game: the header fields of ``book.model.headers``, in its order (``winner``
    0 none, 1 Black, 2 White), then ``size``, ``move_count``, ``source``,
    ``fingerprint`` (unique; blake2b-8 of size, setup and moves, so a re-import adds
    nothing), ``anomaly`` (null, or why the game's positions stop early) and ``sgf``
    (the game's own SGF bytes, zlib-compressed with the preset dictionary
    ``book.storage.games_table.SGF_DICTIONARY``: about 440 bytes for a 200-move game against 560 without it).
    ``id`` is assigned by the importer (never a sequence), so position rows can be
    built before the games are written.  ``ix_games_date_id`` orders the games newest
    first (``Book.games``).

``players(id, name)`` and ``game_players(player_id, game_id)``
    The player filter's index: each distinct name folded to lower case, and who played
    which game (either colour).  The meta row ``players_through`` says up to which game
    id it is complete: the importer's writer fills it in the games' transaction
    (:func:`index_players`); a book written before it existed gets it when next opened
    for writing, and until then a reader scans the games' names instead.

``pattern_events(game_id, size, events)``
    The pattern index: each game as its board events, written by the import with the games
    (``book.storage.pattern_events``; the meta row ``pattern_events_through``).

``segments`` and ``positions_<id>``
    The positions index: one row per position per game -- every position of every
    game, in canonical orientation -- kept in *segment* tables (``book.storage.position_index.segments``):
    each batch an importer writes becomes a new table ``positions_<id>``, registered
    in ``segments(id, level, rows)``, and full levels are merged into one table of the
    next level (a small LSM tree).  A segment table holds:

    - ``key``: the canonical position key (the smallest of the 8 symmetric keys,
      compared unsigned) stored as a signed 64-bit BIGINT (``zobrist.to_signed``);
    - ``code``: ``game_id << 24 | move_number << 12 | (next + 2) << 2 | winner``
      where ``move_number`` (< 4096) counts the moves played before the position,
      ``next`` is the move played from it in canonical orientation (a padded point,
      ``PASS`` = -1, ``END`` = -2 when the game stops there) and ``winner`` is the
      game's (0/1/2).

    The primary key is ``(key, code)`` and on SQLite the table has no rowid, so the
    table *is* its index: a row costs 20 bytes (8-byte key, 6-byte code, record and
    cell headers).  A segment is written once, in key order, into an empty table, so
    SQLite packs its pages full; that keeps a book under 5 KB a game without a
    rewrite: 4.1 KB of positions and 0.6 KB of game row for an average Tygem game of
    205 moves.  A next-move query is one range scan on ``key`` per segment; the game
    ids, move numbers, next moves and winners all come out of ``code`` without
    touching ``games``.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from sqlalchemy import (
    BigInteger,
    Column,
    Float,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    SmallInteger,
    String,
    Table,
    Text,
    func,
    inspect,
    or_,
    select,
)

from fuseki.book.model.headers import HEADER_FIELDS, HeaderField
from fuseki.book.storage import dialect
from fuseki.book.storage.scheme import (  # noqa: F401 (re-exported: the storage layer reads them as schema's)
    GAME_SHIFT,
    HASH_NAME,
    MAX_MOVE_NUMBER,
    MOVE_MASK,
    MOVE_SHIFT,
    NEXT_MASK,
    NEXT_SHIFT,
    SCHEMA_VERSION,
    WINNER_MASK,
    SchemeMismatch,
    check_meta,
    hash_scheme,
    versions,
)

metadata = MetaData()

meta = Table(
    "meta", metadata,
    Column("name", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)

_COLUMN_TYPES = {"text": Text, "integer": Integer, "smallint": SmallInteger, "real": Float}


def _header_column(header: HeaderField) -> Column:
    """The games column of a header field: NOT NULL with its stored default, or nullable."""
    nullable = header.stored_default is None
    return Column(header.name, _COLUMN_TYPES[header.column], nullable=nullable,
                  default=None if nullable else header.stored_default)


games = Table(
    "games", metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    *(_header_column(header) for header in HEADER_FIELDS),  # black ... rules (book.model.headers)
    Column("size", Integer, nullable=False),
    Column("move_count", Integer, nullable=False),
    Column("source", Text, nullable=False, default=""),
    Column("fingerprint", BigInteger, nullable=False, unique=True),
    Column("anomaly", Text),
    Column("sgf", LargeBinary, nullable=False),
    Index("ix_games_year", "year"),
    # Newest first is (date, id) descending: with this index the order of every game is one
    # index scan (Book.games' rank array), and a page of a rare position sorts in the index.
    Index("ix_games_date_id", "date", "id"),
    # No index on black/white: the player filter goes through players/game_players below.
)

# The player filter's index: one row per distinct name, folded (str.lower), and one row per
# (name, game).  A filter is a substring of the name, as before the index: LIKE '%x%' cannot
# use a B-tree, but it scans the distinct names (a few per cent of the games' two names each)
# and then reads game ids from game_players in player order, never the games table.
players = Table(
    "players", metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("name", Text, nullable=False, unique=True),
)

game_players = Table(
    "game_players", metadata,
    Column("player_id", Integer, nullable=False),
    Column("game_id", Integer, nullable=False),
    PrimaryKeyConstraint("player_id", "game_id", name="pk_game_players"),
    sqlite_with_rowid=False,
)

PLAYERS_THROUGH = "players_through"  # meta row: every game with an id up to it is in game_players

# The pattern index (book.storage.pattern_events says how it is written): made with the book,
# so that an import never writes the schema between opening the book and forking its workers.
pattern_events = Table(
    "pattern_events", metadata,
    Column("game_id", Integer, primary_key=True, autoincrement=False),
    Column("size", Integer, nullable=False),
    Column("events", LargeBinary, nullable=False),
)

segments = Table(
    "segments", metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("level", Integer, nullable=False),
    Column("rows", BigInteger, nullable=False),
)

# A segment kept in a file beside the book (book.storage.position_index.segment_files): its file,
# and what its codes lack.
segment_files = Table(
    "segment_files", metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("file", Text, nullable=False),
    Column("base", BigInteger, nullable=False),
)


def positions_columns(name: str) -> tuple:
    return (Column("key", BigInteger, nullable=False),
            Column("code", BigInteger, nullable=False),
            PrimaryKeyConstraint("key", "code", name=f"pk_{name}"))


# Segment tables are made by the importer, not by create_all: their own MetaData.
_segment_metadata = MetaData()


@cache
def segment_table(segment_id: int | str) -> Table:
    """The table ``positions_<segment_id>`` of one segment (see the module docstring)."""
    name = f"positions_{segment_id if isinstance(segment_id, str) else int(segment_id)}"
    return Table(name, _segment_metadata, *positions_columns(name), sqlite_with_rowid=False)


# A SQLite importer's staging table (in memory): the same columns and key as a segment,
# which SQLite's whole-table transfer into a new segment needs (book.storage.position_index.segments).
staging_table = Table("fuseki_stage", MetaData(), *positions_columns("fuseki_stage"),
                      sqlite_with_rowid=False)


def create(conn) -> None:
    """Create the tables (if missing) and stamp a new book's versions, in a writer's transaction
    (``fuseki_write``: it holds the write lock, so importers opening one new book at once take
    turns: ``connect.make_db``)."""
    metadata.create_all(conn)
    present = dict(conn.execute(select(meta.c.name, meta.c.value)).all())
    missing = [{"name": k, "value": v} for k, v in versions().items() if k not in present]
    if missing and not present:
        conn.execute(meta.insert(), missing)
    check_versions(conn)
    # Tables that came after a book was made: create_all makes the missing tables, not an
    # index missing from an existing table, and the names of games written before need indexing.
    for index in games.indexes:
        index.create(conn, checkfirst=True)
    index_players(conn)


def players_through(conn) -> int:
    """The largest game id up to which the player index is complete (-1: no index)."""
    value = conn.execute(select(meta.c.value).where(meta.c.name == PLAYERS_THROUGH)).scalar()
    return -1 if value is None else int(value)


def fold_name(name: str) -> str:
    """A player's name as the index keeps it and a filter is matched: lower case."""
    return name.lower()


def index_players(conn, added: list[tuple[int, str | None, str | None]] | None = None) -> None:
    """Add the games beyond ``players_through`` to the player index and move the mark.

    Called in the writer's transaction (after a batch's games are inserted) and when a
    book is opened for writing, so games written by a fuseki without the index are
    caught up too.  ``added``: (id, black, white) of the games the writer just inserted,
    ids ascending; when they are exactly the games beyond the mark, their names are not
    read back from ``games`` (the writer's one process spent a quarter of this there).
    """
    through = players_through(conn)
    start = max(through, 0)
    top = int(conn.execute(select(func.max(games.c.id))).scalar() or 0)
    if top <= start and through >= 0:
        return
    if not (added and through >= 0 and added[0][0] == start + 1 and added[-1][0] == top
            and len(added) == top - start):
        added = conn.execute(select(games.c.id, games.c.black, games.c.white).where(games.c.id > start)).all()
    links = {(fold_name(name), game_id) for game_id, *names in added for name in names if name}
    names = sorted({name for name, _ in links})
    known: dict[str, int] = dict(dialect.rows_where_in(conn, players.c.name, names, players.c.name, players.c.id))
    new = [name for name in names if name not in known]
    next_id = int(conn.execute(select(func.max(players.c.id))).scalar() or 0) + 1
    known.update(zip(new, range(next_id, next_id + len(new))))
    dialect.insert_rows(conn, players, [(known[name], name) for name in new])
    dialect.insert_rows(conn, game_players, [(known[name], game_id) for name, game_id in sorted(links)])
    conn.execute(meta.delete().where(meta.c.name == PLAYERS_THROUGH))
    conn.execute(meta.insert().values(name=PLAYERS_THROUGH, value=str(top)))


def joined_numbers(strings) -> np.ndarray:
    """The int64 numbers of comma-separated strings (``group_concat``, ``string_agg``), in order;
    None or empty strings hold none: numpy parses a string in a fraction of what the driver
    takes for a row object a row (the games' ids of a filter, a key's codes)."""
    found = ",".join(string for string in strings if string)
    return np.fromstring(found, dtype=np.int64, sep=",") if found else np.empty(0, dtype=np.int64)


def check_versions(conn, schema_versions: tuple[str, ...] = ()) -> None:
    """Raise SchemeMismatch unless the book's meta rows match this code's versions
    (``schema_versions``: older schema versions the caller reads as they are)."""
    check_meta(dict(conn.execute(select(meta.c.name, meta.c.value)).all()), schema_versions)


def filter_query(conn, year_from: int | None, year_to: int | None, player: str | None, top: int):
    """A SELECT of the ids of the games a filter keeps (``top``: the book's largest game id).

    ``player``: a substring of either name, any case.  It goes through the player index
    (the distinct names scanned, then their games) when the index holds every game, else
    through the games' own names (a book opened read-only before it had the index).
    """
    query = select(games.c.id)
    if player:
        pattern = "%" + _escape_like(fold_name(player)) + "%"
        if inspect(conn).has_table(players.name) and players_through(conn) >= top:
            matching = select(players.c.id).where(players.c.name.like(pattern, escape="\\"))
            query = select(game_players.c.game_id.label("id")).where(game_players.c.player_id.in_(matching))
            if year_from is None and year_to is None:
                return query
            query = select(games.c.id).where(games.c.id.in_(query))
        else:
            query = query.where(or_(func.lower(games.c.black).like(pattern, escape="\\"),
                                    func.lower(games.c.white).like(pattern, escape="\\")))
    if year_from is not None:
        query = query.where(games.c.year >= year_from)
    if year_to is not None:
        query = query.where(games.c.year <= year_to)
    return query


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
