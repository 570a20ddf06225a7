"""The pattern index: each game of the book as its list of board events.

A game's entry (``book.storage.pattern_events`` says where it is kept: files beside a SQLite
book, else a table) is its setup stones, moves and captures as
``engine.core.replay.replay_events`` gives them (uint16 each, about 2 bytes a move), so a
pattern search replays a game without parsing its SGF or applying the rules.  The import
writes each game's entry with the game (its parsers make the events), so a book made by
``fuseki import`` is indexed as it is written.  ``update`` (``fuseki pattern`` calls it)
indexes from their stored SGF the games that have no entry -- those of a book imported before
the import wrote events -- into the table, with a progress line
(``book.analysis.patterns.index_map`` moves them into the files); the meta row
``pattern_events_through`` is the game id up to which the index is complete.
"""

from __future__ import annotations

import numpy as np
from sqlalchemy import exists, select

from fuseki.book.storage import games_table, schema
from fuseki.book.storage.index_state import indexed_through
from fuseki.book.storage.pattern_events import create, pattern_events, set_through
from fuseki.engine.core.replay import replay_events

__all__ = ["game_events", "update"]
CHUNK = 2000  # games read and written a transaction
# update's default progress: progress.STDERR, imported only when there are games to index (with
# tqdm, ~20 ms of every fuseki pattern's start, which finds none: issue 61, bench/cli.py)
STDERR = "stderr"


def game_events(record) -> np.ndarray:
    """One GameRecord's events (uint16)."""
    def arrays(pairs):
        pairs = list(pairs)
        return (np.array([p for _c, p in pairs], dtype=np.int64), np.array([c for c, _p in pairs], dtype=np.int64))

    return replay_events(record.size, *arrays(record.setup), *arrays(record.moves))


def update(book, progress=STDERR) -> int:
    """Index the games beyond the mark that have no row yet; returns how many were indexed."""
    if book.readonly:
        with book.db.connect() as conn:
            if indexed_through(conn) < book.max_game_id(conn):
                raise schema_error(book)
        return 0
    with book.db.begin() as conn:
        create(conn)
        start = indexed_through(conn)
        top = book.max_game_id(conn)
    done, first = 0, start
    steps = None
    # no bar where there is nothing to do (the import's batches indexed their games)
    if progress is not None and top > first:
        from fuseki.book.analysis.pipeline import progress as progress_lines

        steps = progress_lines.Steps("pattern index", top - first,
                                     stream=progress_lines.STDERR if progress is STDERR else progress)
    while start < top:
        with book.db.connect() as conn:
            # games an import already indexed (those after an older import's) are passed over
            written = exists().where(pattern_events.c.game_id == schema.games.c.id)
            found = conn.execute(select(schema.games.c.id, schema.games.c.sgf, schema.games.c.source)
                                 .where(schema.games.c.id > start, ~written).order_by(schema.games.c.id)
                                 .limit(CHUNK)).all()
        # the SGF parser (numba, sgfmill) only when there are games to index: a book fuseki import
        # made has none, and fuseki pattern's start need not import it (issue 61, bench/cli.py)
        from fuseki.book.formats.sgf_reader import read_games

        rows = []
        for game_id, blob, source in found:
            record = read_games(games_table.decompress_sgf(blob), source or f"game {game_id}")[0]
            rows.append({"game_id": game_id, "size": record.size, "events": game_events(record).tobytes()})
        last = found[-1][0] if len(found) == CHUNK else top  # the games up to it have their rows now
        with book.writing() as conn:
            if rows:
                conn.execute(pattern_events.insert(), rows)
            set_through(conn, max(last, indexed_through(conn)))
        done += len(rows)
        start = last
        if steps is not None:
            steps.update(start - first)  # games get consecutive ids: the ids passed are the games done
    if steps is not None:
        steps.close()
    return done


def schema_error(book):
    from fuseki.book.storage.connect import BookError

    return BookError("the book's pattern index is not up to date and the book is open read-only: "
                     "run fuseki pattern once with write access")

