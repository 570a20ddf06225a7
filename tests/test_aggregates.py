"""Next-move counting (book/storage/aggregates.py) on hand-made rows of the positions index."""

from __future__ import annotations

import numpy as np

from fuseki.book.storage import aggregates, schema, segment_files

END, PASS = -2, -1


def code(game: int, move: int, next_point: int, winner: int) -> int:
    return (game << schema.GAME_SHIFT) | (move << schema.MOVE_SHIFT) | ((next_point + 2) << schema.NEXT_SHIFT) | winner


def rows(*entries):
    """(keys, codes) arrays of (key, game, move number, next, winner) entries, shuffled."""
    entries = list(entries)
    np.random.default_rng(0).shuffle(entries)
    keys = np.array([e[0] for e in entries], dtype=np.int64)
    codes = np.array([code(*e[1:]) for e in entries], dtype=np.int64)
    return keys, codes


def table(counts: aggregates.Counts) -> list[tuple]:
    return list(zip(*(column.tolist() for column in counts)))


def test_each_game_counts_once_at_its_first_visit():
    keys, codes = rows(
        (5, 1, 0, 60, 1), (5, 2, 0, 60, 2), (5, 3, 0, 61, 1),
        (5, 1, 8, 99, 1),    # game 1 back at key 5 (a ko): not counted again
        (7, 1, 1, 70, 1), (7, 2, 1, END, 2), (7, 3, 1, PASS, 0),
    )
    assert table(aggregates.count(keys, codes)) == [
        (5, 60, 2, 1, 1), (5, 61, 1, 1, 0),
        (7, END, 1, 0, 1), (7, PASS, 1, 0, 0), (7, 70, 1, 1, 0),
    ]


def test_negative_keys_sort_first_and_totals_include_the_games_that_ended():
    keys, codes = rows((-3, 1, 4, END, 1), (-3, 2, 4, 50, 2), (9, 1, 0, 50, 1))
    counts = aggregates.count(keys, codes)
    assert counts.keys.tolist() == [-3, -3, 9]
    found, reached = aggregates.totals(counts)
    assert (found.tolist(), reached.tolist()) == ([-3, 9], [2, 1])


def test_prune_keeps_every_move_of_a_kept_position_and_nothing_of_the_others():
    keys, codes = rows((1, 1, 0, 60, 1), (1, 2, 0, 61, 2), (1, 3, 0, 62, 1), (2, 1, 1, 60, 1), (2, 2, 1, 60, 1))
    kept = aggregates.prune(aggregates.count(keys, codes), 3)
    assert table(kept) == [(1, 60, 1, 1, 0), (1, 61, 1, 0, 1), (1, 62, 1, 1, 0)]
    assert len(aggregates.prune(kept, 4)) == 0 and len(aggregates.count(*rows())) == 0


def test_key_ranges_cover_every_signed_key_once_in_order():
    ranges = segment_files.key_ranges(64)
    assert ranges[0][0] == -(1 << 63) and ranges[-1][1] == (1 << 63) - 1
    assert all(high + 1 == low for (_, high), (low, _) in zip(ranges, ranges[1:]))
    # canonical keys crowd near 0 (the smallest of 8): the ranges are narrow there
    assert ranges[1][1] - ranges[1][0] < ranges[-1][1] - ranges[-1][0]


def test_a_statistics_file_is_known_by_its_header(tmp_path):
    path = str(tmp_path / "stats.sqlite")
    counts = aggregates.count(*rows((1, 1, 0, 60, 1)))
    assert aggregates.write_file(path, [counts], {"title": "t"}) == 1
    assert aggregates.is_statistics_file(path)
    (tmp_path / "text.sqlite").write_text("SQLite format 3 but not really")
    assert not aggregates.is_statistics_file(str(tmp_path / "text.sqlite"))
    assert sorted(name for name in __import__("os").listdir(tmp_path)) == ["stats.sqlite", "text.sqlite"]
