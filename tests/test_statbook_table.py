"""Next-move statistics without years (what book/storage/position_index/statbook_table.py keeps:
``nextmoves.without_years``) on hand-made rows of the positions index, and the statistics book file."""

from __future__ import annotations

import numpy as np

from fuseki.book.storage import scheme
from fuseki.book.storage.position_index import nextmoves, segment_files, statbook_file, statbook_table

END, PASS = -2, -1


def code(game: int, move: int, next_point: int, winner: int) -> int:
    return (game << scheme.GAME_SHIFT) | (move << scheme.MOVE_SHIFT) | ((next_point + 2) << scheme.NEXT_SHIFT) | winner


def rows(*entries):
    """(keys, codes) arrays of (key, game, move number, next, winner) entries, shuffled."""
    entries = list(entries)
    np.random.default_rng(0).shuffle(entries)
    keys = np.array([e[0] for e in entries], dtype=np.int64)
    codes = np.array([code(*e[1:]) for e in entries], dtype=np.int64)
    return keys, codes


def table(stats: nextmoves.NextMoveStats) -> list[tuple]:
    """(key, next, games, black wins, white wins) rows; every record without a year."""
    assert (stats.counts[:, nextmoves.YEAR] == nextmoves.NO_YEAR).all()
    return [(key, *record[1:]) for key, record in zip(stats.keys.tolist(), stats.counts.tolist())]


def test_each_game_counts_once_at_its_first_visit():
    keys, codes = rows(
        (5, 1, 0, 60, 1), (5, 2, 0, 60, 2), (5, 3, 0, 61, 1),
        (5, 1, 8, 99, 1),    # game 1 back at key 5 (a ko): not counted again
        (7, 1, 1, 70, 1), (7, 2, 1, END, 2), (7, 3, 1, PASS, 0),
    )
    assert table(nextmoves.without_years(keys, codes)) == [
        (5, 60, 2, 1, 1), (5, 61, 1, 1, 0),
        (7, END, 1, 0, 1), (7, PASS, 1, 0, 0), (7, 70, 1, 1, 0),
    ]


def test_negative_keys_sort_first_and_the_games_that_ended_count_towards_min_games():
    keys, codes = rows((-3, 1, 4, END, 1), (-3, 2, 4, 50, 2), (9, 1, 0, 50, 1))
    stats = nextmoves.without_years(keys, codes)
    assert stats.keys.tolist() == [-3, -3, 9] and nextmoves.positions(stats) == 2
    assert table(nextmoves.without_years(keys, codes, 2)) == [(-3, END, 1, 1, 0), (-3, 50, 1, 0, 1)]


def test_min_games_keeps_every_move_of_a_kept_position_and_nothing_of_the_others():
    keys, codes = rows((1, 1, 0, 60, 1), (1, 2, 0, 61, 2), (1, 3, 0, 62, 1), (2, 1, 1, 60, 1), (2, 2, 1, 60, 1))
    kept = nextmoves.without_years(keys, codes, 3)
    assert table(kept) == [(1, 60, 1, 1, 0), (1, 61, 1, 0, 1), (1, 62, 1, 1, 0)]
    assert len(nextmoves.without_years(keys, codes, 4)) == 0 and len(nextmoves.without_years(*rows())) == 0


def test_key_ranges_cover_every_signed_key_once_in_order():
    ranges = segment_files.key_ranges(64)
    assert ranges[0][0] == -(1 << 63) and ranges[-1][1] == (1 << 63) - 1
    assert all(high + 1 == low for (_, high), (low, _) in zip(ranges, ranges[1:]))
    # canonical keys crowd near 0 (the smallest of 8): the ranges are narrow there
    assert ranges[1][1] - ranges[1][0] < ranges[-1][1] - ranges[-1][0]


def test_a_statistics_file_is_known_by_its_header(tmp_path):
    path = str(tmp_path / "stats.sqlite")
    stats = nextmoves.without_years(*rows((1, 1, 0, 60, 1)))
    assert statbook_table.write_file(path, [stats], {"title": "t"}) == 1
    assert statbook_file.is_statistics_file(path)
    (tmp_path / "text.sqlite").write_text("SQLite format 3 but not really")
    assert not statbook_file.is_statistics_file(str(tmp_path / "text.sqlite"))
    assert sorted(name for name in __import__("os").listdir(tmp_path)) == ["stats.sqlite", "text.sqlite"]


def test_a_position_reads_back_as_it_was_written(tmp_path):
    import sqlite3

    path = str(tmp_path / "stats.sqlite")
    stats = nextmoves.without_years(*rows((-5, 1, 0, 60, 1), (-5, 2, 0, END, 2), (8, 1, 0, 61, 1)))
    statbook_table.write_file(path, [stats], {"title": "t"})
    from sqlalchemy import create_engine

    engine = create_engine("sqlite://", creator=lambda: sqlite3.connect(path))
    with engine.connect() as conn:
        assert table(statbook_table.lookup(conn, -5)) == [(-5, END, 1, 0, 1), (-5, 60, 1, 1, 0)]
        assert len(statbook_table.lookup(conn, 7)) == 0
    engine.dispose()
