"""The pattern index's table: each game of the book as its list of board events.

``pattern_events(game_id, size, events)``: the game's setup stones, moves and captures as
``engine.core.replay.replay_events`` gives them (uint16 each, about 2 bytes a move).  The
meta row ``pattern_events_through`` (``THROUGH``) is the game id up to which the index is
complete: every game with an id up to it has its row.

Two writers fill it: the import's writer, with each batch's games in the batch's own
transaction (the parsers made the events from the games they had just replayed: ``add``),
and ``book.analysis.patterns.index.update``, which replays the stored SGF of games that have no row
(a book imported before the import wrote events).  The table lives here, in storage, so
that the pipeline writes it without importing the patterns layer beside it.
"""

from __future__ import annotations

from sqlalchemy import select

from fuseki.book.storage import schema

pattern_events = schema.pattern_events  # made with the book's other tables (schema.create)
THROUGH = "pattern_events_through"


def create(conn) -> None:
    """The table, if the book lacks it (a book last opened for writing before it was a book table)."""
    pattern_events.create(conn, checkfirst=True)


def indexed_through(conn) -> int:
    """The largest game id the index is complete up to (0: none)."""
    value = conn.execute(select(schema.meta.c.value).where(schema.meta.c.name == THROUGH)).scalar()
    return int(value or 0)


def set_through(conn, game_id: int) -> None:
    """Say the index is complete up to ``game_id``."""
    conn.execute(schema.meta.delete().where(schema.meta.c.name == THROUGH))
    conn.execute(schema.meta.insert().values(name=THROUGH, value=str(game_id)))


def add(conn, rows: list[tuple[int, int, bytes]], before: int) -> None:
    """Insert the (game_id, size, events) ``rows`` of games just written after ``before``
    (the book's largest game id before them), in their transaction; ids ascending.

    The mark moves to the last of them only where the index was complete up to ``before``:
    games an older import left unindexed keep it where it is, and ``index.update`` replays
    them (and only them) later.  An import's one writer commits its batches in id order, so
    after each commit the mark says the truth whether or not the import ends.
    """
    if not rows:
        return
    schema.insert_rows(conn, pattern_events, rows)
    if indexed_through(conn) >= before:
        set_through(conn, rows[-1][0])
