"""A book is sound after a killed or stopped import (tests/test_crash_import.py,
test_import_stops.py):

- the book opens (``Book.open``) and, on SQLite, ``PRAGMA integrity_check`` says ``ok``;
- every game has all its positions and nothing else: move numbers 0..n-1 with n =
  ``move_count + 1``, or as many as its anomaly says (an illegal move N: N positions),
  and no position row belongs to a game that is not there.

Not a test module: test modules import from here (and from conftest.py), never from each other.
"""

from __future__ import annotations

import re
import sqlite3

from sqlalchemy import text

from fuseki.book.storage.connect import BookError
from fuseki.book.storage.position_index import segments
from fuseki.book.storage.store import Book

from conftest import is_sqlite


def expected_positions(move_count: int, anomaly: str | None) -> int:
    if anomaly is None:
        return move_count + 1
    illegal = re.match(r"move (\d+) ", anomaly)
    if illegal:
        return int(illegal.group(1))
    if "not stored" in anomaly:
        return 4096
    raise AssertionError(f"unknown anomaly {anomaly!r}: cannot tell how many positions it keeps")


def check_book(location: str) -> tuple[frozenset, int]:
    """Sound after a kill (see this module's docstring); returns (fingerprints, position rows).

    A kill while a SQLite book is being created may leave it without its version stamps
    (SQLite runs CREATE TABLE outside the transaction); then it must hold no game, and the
    next import completes it.  PostgreSQL creates the tables in the transaction, so there
    the book is either absent (no meta table) or complete.
    """
    if is_sqlite(location):
        db = sqlite3.connect(location)
        try:
            assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if "meta" not in tables or not db.execute("SELECT count(*) FROM meta").fetchone()[0]:
                assert "games" not in tables or not db.execute("SELECT count(*) FROM games").fetchone()[0]
                return frozenset(), 0
        finally:
            db.close()
    try:
        book = Book.open(location, readonly=True)
    except BookError as exc:
        assert not is_sqlite(location) and "no meta table" in str(exc), exc
        return frozenset(), 0
    with book, book.db.connect() as db:
        stats = book.stats()
        _keys, codes = segments.all_rows(db)
        per_game = {}
        for owner, move in zip((codes >> 24).tolist(), ((codes >> 12) & 4095).tolist()):
            n, lo, hi = per_game.get(owner, (0, move, move))
            per_game[owner] = (n + 1, min(lo, move), max(hi, move))
        games = db.execute(text("SELECT id, move_count, anomaly, fingerprint FROM games")).all()
    ids = {gid for gid, _, _, _ in games}
    orphans = set(per_game) - ids
    assert not orphans, f"position rows of {len(orphans)} games that are not in the book"
    for gid, move_count, anomaly, _ in games:
        n = expected_positions(move_count, anomaly)
        assert per_game.get(gid) == (n, 0, n - 1), (
            f"game {gid} ({move_count} moves, anomaly {anomaly}) should have positions 0..{n - 1}, "
            f"has (count, first, last) = {per_game.get(gid)}")
    assert stats.games == len(games) and stats.positions == sum(n for n, _, _ in per_game.values())
    return frozenset(fp for _, _, _, fp in games), stats.positions
