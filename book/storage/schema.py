"""The book's tables (SQLAlchemy Core) and the version stamps that guard them.

The tables:

``meta(name, value)``
    ``hash_scheme`` (:data:`HASH_SCHEME`: the Zobrist generator's name and a checksum
    of the shipped key table) and ``schema_version``.  A book written with other keys
    would answer every query wrongly without an error, so :func:`check_versions`
    refuses to open it.

``games``
    One row per game: the header fields of ``book.headers``, in its order (``winner``
    0 none, 1 Black, 2 White), then ``size``, ``move_count``, ``source``,
    ``fingerprint`` (unique; blake2b-8 of size, setup and moves, so a re-import adds
    nothing), ``anomaly`` (null, or why the game's positions stop early) and ``sgf``
    (the game's own SGF bytes, zlib-compressed with the preset dictionary
    :data:`SGF_DICTIONARY`: about 440 bytes for a 200-move game against 560 without it).
    ``id`` is assigned by the importer (never a sequence), so position rows can be
    built before the games are written.

``segments`` and ``positions_<id>``
    The positions index: one row per position per game -- every position of every
    game, in canonical orientation -- kept in *segment* tables (``book.segments``):
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

import hashlib
import zlib
from functools import cache

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
    select,
)

from fuseki.book.formats.headers import HEADER_FIELDS, HeaderField
from fuseki.engine.core import zobrist

SCHEMA_VERSION = "2"  # 2: positions in segment tables (book.segments)
WRITE_LOCK = 0x66757365  # PostgreSQL advisory lock key ("fuse") of the book's writers
HASH_NAME = "zobrist-splitmix64-v1"

# Bit layout of positions.code (see the module docstring).
GAME_SHIFT = 24
MOVE_SHIFT = 12
NEXT_SHIFT = 2
MOVE_MASK = 0xFFF
NEXT_MASK = 0x3FF
WINNER_MASK = 0x3
MAX_MOVE_NUMBER = MOVE_MASK  # positions after move 4095 are not stored (an anomaly says so)

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
    *(_header_column(header) for header in HEADER_FIELDS),  # black ... rules (book.headers)
    Column("size", Integer, nullable=False),
    Column("move_count", Integer, nullable=False),
    Column("source", Text, nullable=False, default=""),
    Column("fingerprint", BigInteger, nullable=False, unique=True),
    Column("anomaly", Text),
    Column("sgf", LargeBinary, nullable=False),
    Index("ix_games_year", "year"),
    # No index on black/white: the player filter is a case-insensitive substring match
    # (LIKE '%name%'), which no B-tree index serves; it scans games once per filter value.
)

segments = Table(
    "segments", metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("level", Integer, nullable=False),
    Column("rows", BigInteger, nullable=False),
)

def _positions_columns(name: str) -> tuple:
    return (Column("key", BigInteger, nullable=False),
            Column("code", BigInteger, nullable=False),
            PrimaryKeyConstraint("key", "code", name=f"pk_{name}"))


# Segment tables are made by the importer, not by create_all: their own MetaData.
_segment_metadata = MetaData()


@cache
def segment_table(segment_id: int) -> Table:
    """The table ``positions_<segment_id>`` of one segment (see the module docstring)."""
    name = f"positions_{int(segment_id)}"
    return Table(name, _segment_metadata, *_positions_columns(name), sqlite_with_rowid=False)


# A SQLite importer's staging table (in memory): the same columns and key as a segment,
# which SQLite's whole-table transfer into a new segment needs (book.segments).
staging_table = Table("fuseki_stage", MetaData(), *_positions_columns("fuseki_stage"),
                      sqlite_with_rowid=False)


class SchemeMismatch(ValueError):
    """The book was written with another hash scheme or schema version; its keys cannot be trusted."""


@cache
def hash_scheme() -> str:
    """``zobrist-splitmix64-v1:<blake2b-8 of the shipped key table>``."""
    keys = zobrist.read_table_file()
    digest = hashlib.blake2b(b"".join(k.to_bytes(8, "little") for k in keys), digest_size=8)
    return f"{HASH_NAME}:{digest.hexdigest()}"


def versions() -> dict[str, str]:
    """The meta rows a book written by this code carries."""
    return {"hash_scheme": hash_scheme(), "schema_version": SCHEMA_VERSION}


def create(conn) -> None:
    """Create the tables (if missing) and stamp a new book's versions."""
    if conn.dialect.name == "postgresql":
        # Several importers may open a new book at once: CREATE TABLE IF NOT EXISTS races
        # on the catalog, so they take turns (the lock ends with the transaction).
        conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({WRITE_LOCK})")
    metadata.create_all(conn)
    present = dict(conn.execute(select(meta.c.name, meta.c.value)).all())
    missing = [{"name": k, "value": v} for k, v in versions().items() if k not in present]
    if missing and not present:
        conn.execute(meta.insert(), missing)
    check_versions(conn)


def check_versions(conn) -> None:
    """Raise SchemeMismatch unless the book's meta rows match this code's versions."""
    present = dict(conn.execute(select(meta.c.name, meta.c.value)).all())
    for name, expected in versions().items():
        found = present.get(name)
        if found != expected:
            raise SchemeMismatch(
                f"the book's {name} is {found or 'missing'}, this fuseki needs {expected}: "
                "import the games again into a new book")
