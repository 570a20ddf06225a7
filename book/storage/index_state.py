"""What a book says of its pattern index, read by one SQL text through ``sqlite3`` alone or SQLAlchemy.

A pattern search first reads a few rows of the book: the index's mark (meta ``pattern_events_through``),
the largest game id, whether the table ``pattern_events`` holds entries waiting to be moved into the
files, each board size's files (meta ``pattern_files_<size>``) and where the book's file lies
(``dialect.book_file``, which takes either connection too).  These
functions take either connection: a bare ``sqlite3.Connection`` (``pattern_files.read_ready``: ``fuseki
pattern`` on a SQLite book that is ready as it stands, without importing SQLAlchemy, which was
120-450 ms of its start: issue 61, bench/cli.py) or a SQLAlchemy ``Connection`` of a SQLite or
PostgreSQL book (``Book``: every other caller).  The SQL text is the same either way, with ``?``
placeholders turned into the driver's own (tests/test_pattern_map.py compares both readers on one
book).
"""

from __future__ import annotations

import sqlite3

THROUGH = "pattern_events_through"  # meta: the game id up to which the index is complete


def rows(conn, sql: str, params: tuple = ()) -> list[tuple]:
    """The rows of one read query (``?`` placeholders) on either kind of connection."""
    if isinstance(conn, sqlite3.Connection):
        return conn.execute(sql, params).fetchall()
    if conn.dialect.paramstyle != "qmark":  # psycopg2: %s (no % elsewhere in these texts)
        sql = sql.replace("?", "%s")
    return [tuple(row) for row in conn.exec_driver_sql(sql, params).all()]


def meta_value(conn, name: str) -> str | None:
    """The meta row ``name``'s value, or None."""
    found = rows(conn, "SELECT value FROM meta WHERE name = ?", (name,))
    return found[0][0] if found else None


def meta_names(conn, prefix: str) -> list[str]:
    """The names of the meta rows that start with ``prefix``, in order."""
    return [name for (name,) in rows(conn, "SELECT name FROM meta WHERE substr(name, 1, ?) = ? ORDER BY name",
                                     (len(prefix), prefix))]


def indexed_through(conn) -> int:
    """The largest game id the index is complete up to (0: none)."""
    return int(meta_value(conn, THROUGH) or 0)


def max_game_id(conn) -> int:
    """The largest game id of the book (0: none)."""
    return int(rows(conn, "SELECT max(id) FROM games")[0][0] or 0)


def waiting(conn) -> bool:
    """Whether the table ``pattern_events`` holds any entry (beside files: one not moved into them yet)."""
    return bool(rows(conn, "SELECT game_id FROM pattern_events LIMIT 1"))
