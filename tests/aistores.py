"""AI value stores for the tests: a SQLite engine with the ai_values table, and values put in it
the way ``fuseki ai annotate`` stores them (tests/test_ai_stores.py, test_book_tree.py).

Not a test module: test modules import from here (and from conftest.py), never from each other.
"""

from __future__ import annotations

from sqlalchemy import create_engine

from fuseki.book.formats.positions import board_after_moves
from fuseki.book.queries import ai_values
from fuseki.book.queries.ai_values import AiSettings
from fuseki.engine.core import base


def engine_at(path):
    db = create_engine(f"sqlite:///{path}")
    with db.begin() as conn:
        ai_values.create(conn)
    return db


def put(db, moves: str, network: str, visits: int, root=(10, 0.5, 0.0), candidates=(), komi=6.5, move_visits=5):
    """Store values of the position after ``moves`` (SGF, comma separated); ``candidates``:
    (sgf, win rate, lead, loss) best first, each of ``move_visits``."""
    board = board_after_moves([m for m in moves.split(",") if m], 19)
    rows = [(base.sgf_to_point(sgf, 19), move_visits, w, lead, loss, 0.1) for sgf, w, lead, loss in candidates]
    with db.begin() as conn:
        ai_values.put(conn, board.symmetric_keys(board.to_move), 19, AiSettings("japanese", komi, network, visits),
                      root, rows)
