"""What a book is, without SQLAlchemy: its version stamps, its codes' bit layout, SchemeMismatch.

``book.storage.schema`` holds the tables (SQLAlchemy Core) these describe.  They live apart so
that a reader that needs no table (a statistics book read through the ``sqlite3`` module alone:
``book.storage.position_index.statbook_file``; the counting of
``book.storage.position_index.nextmoves``) imports no SQLAlchemy,
which is ~120-400 ms of a short command's start (issue 61, bench/cli.py).
"""

from __future__ import annotations

import hashlib
from functools import cache

from fuseki.engine.core import zobrist

# 2: positions in segment tables (book.storage.position_index.segments); 3: the segments' next-move statistics
# named next_stats (were summary; book.storage.migrate renames them when an old book is opened);
# 4: beside a SQLite book on disk, the pattern index in files only (book.storage.pattern_files);
# 5: segment files packed (book.storage.position_index.packed_segment), where they were SQLite databases
SCHEMA_VERSION = "5"
MIGRATES_FROM = ("2", "3", "4")  # the schema versions migrate.upgrade brings to SCHEMA_VERSION
HASH_NAME = "zobrist-splitmix64-v1"

# Bit layout of positions.code (see book.storage.schema's docstring).
GAME_SHIFT = 24
MOVE_SHIFT = 12
NEXT_SHIFT = 2
MOVE_MASK = 0xFFF
NEXT_MASK = 0x3FF
WINNER_MASK = 0x3
MAX_MOVE_NUMBER = MOVE_MASK  # positions after move 4095 are not stored (an anomaly says so)


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


def check_meta(present: dict[str, str], schema_versions: tuple[str, ...] = ()) -> None:
    """Raise SchemeMismatch unless the meta rows ``present`` match this code's versions
    (``schema_versions``: older schema versions the caller reads as they are)."""
    for name, expected in versions().items():
        found = present.get(name)
        if found != expected and not (name == "schema_version" and found in schema_versions):
            raise SchemeMismatch(
                f"the book's {name} is {found or 'missing'}, this fuseki needs {expected}: "
                "import the games again into a new book")

