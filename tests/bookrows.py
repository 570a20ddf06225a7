"""What a book holds, read straight from its tables (game ids and sources, position rows,
next-move statistics rows) or through its answers, for tests that compare two books; and folders of games
with exact copies, for the duplicate tests.

Not a test module: test modules import from here (and from conftest.py), never from each other.
"""

from __future__ import annotations

import os
import struct

from sqlalchemy import select

from fuseki.book.model.filters import Filters
from fuseki.book.storage import schema, scheme
from fuseki.book.storage.position_index import segment_files, segments

from games import write_games
from replay import as_dict


def ids(book):
    with book.db.connect() as conn:
        return conn.execute(select(schema.games.c.id, schema.games.c.source).order_by(schema.games.c.id)).all()


def rows(book):
    with book.db.connect() as conn:
        games = sorted(conn.execute(select(schema.games.c.fingerprint, schema.games.c.id)).all())
        positions = zip(*(column.tolist() for column in segments.all_rows(conn)))
    ids = {gid: fp for fp, gid in games}
    # game ids may differ between two imports; compare positions through the fingerprints
    return ([fp for fp, _ in games],
            sorted((key, ids[code >> scheme.GAME_SHIFT], code & 0xFFFFFF) for key, code in positions))


def next_stats_rows(book):
    """Every segment's next-move statistics rows, whatever segment holds them."""
    with book.db.connect() as conn:
        names = conn.exec_driver_sql("SELECT name FROM sqlite_master WHERE name GLOB 'next_stats_*' "
                                     "AND type = 'table'").scalars().all()
        found = [tuple(row) for name in names for row in conn.exec_driver_sql(f"SELECT * FROM {name}").all()]
        folder = segment_files.book_folder(conn)
        for segment in segment_files.in_files(conn):  # a segment file's next-move statistics are in the file
            found += segment_file(os.path.join(folder, segment.name))[2]
        return sorted(found)


def segment_file(path) -> tuple[list[int], list[int], list[tuple[int, bytes]]]:
    """(keys, codes, next-move statistics rows (key, stats bytes)) of a packed segment file, read
    with ``struct`` from the layout ``book.storage.position_index.packed_segment``'s docstring gives: the slow,
    independent reading its tests compare the mapped reader with."""
    with open(path, "rb") as file:
        data = file.read()
    assert data[:8] == b"fsk-seg1", path
    rows, stats, fence = struct.unpack_from("<qqq", data, 8)
    at = 64
    keys = list(struct.unpack_from(f"<{rows}q", data, at))
    at += 8 * rows
    codes = [int.from_bytes(data[at + 6 * i:at + 6 * i + 6], "little") for i in range(rows)]
    at += 6 * rows + (-6 * rows) % 8
    fences = list(struct.unpack_from(f"<{-(-rows // fence)}q", data, at))
    assert fences == keys[::fence], path
    at += 8 * len(fences)
    stats_keys = struct.unpack_from(f"<{stats}q", data, at)
    at += 8 * stats
    counts = [data[at + 20 * i:at + 20 * i + 20] for i in range(stats)]
    assert at + 20 * stats == len(data), path
    rows_of = {}
    for key, count in zip(stats_keys, counts):
        rows_of[key] = rows_of.get(key, b"") + count
    return keys, codes, sorted(rows_of.items())


def games_with_copies(folder, copies: list[tuple[int, int]]):
    """60 generated games in ``folder``, game b of each (a, b) in ``copies`` the same moves as game a
    (another black name): 57 distinct games."""
    folder.mkdir()
    write_games(folder, count=60, seed=5)
    for i, (a, b) in enumerate(copies):
        (folder / f"g19_{b:03d}.sgf").write_bytes((folder / f"g19_{a:03d}.sgf").read_bytes().replace(
            b"PB[", f"PB[copy{i} ".encode()))
    return folder


def answers(book, boards):
    return [(found.total, found.ended, as_dict(found)) for found in map(book.next_moves, boards)] + \
           [book.next_moves(boards[0], filters=Filters(year_from=2012, year_to=2014)).total,
            [row.id for row in book.games(boards[0], page=1, page_size=50).rows]]
