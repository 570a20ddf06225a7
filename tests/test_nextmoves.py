"""Segment next-move statistics (book.storage.position_index.nextmoves) against counts made here, row by row.

The queries that read them are tested in tests/test_store.py (its ``imported`` fixture runs
every test once with next-move statistics and merged next-move statistics); here the records themselves: built
from rows, added up, stored and read back, merged with their segments.
"""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
import pytest

from fuseki.book.storage import scheme
from fuseki.book.storage.position_index import nextmoves, segments
from fuseki.book.storage.store import Book


def random_rows(rng, games=60, keys=12, years=(2005, 2006, nextmoves.NO_YEAR)):
    """(keys, owners, lows, row years): each game visits some keys, a few twice (a ko)."""
    rows = []
    year_of = {g: years[int(rng.integers(len(years)))] for g in range(games)}
    for game in range(games):
        visited = rng.choice(keys, size=int(rng.integers(1, keys)), replace=False)
        for move, key in enumerate(visited.tolist() + visited[:2].tolist()):  # two keys come back
            nxt = int(rng.integers(-2, 30))  # END, PASS or a point
            winner = int(rng.integers(0, 3))
            low = (move << scheme.MOVE_SHIFT) | ((nxt + 2) << scheme.NEXT_SHIFT) | winner
            rows.append((key - 6, game, low, year_of[game]))  # some keys negative
    rng.shuffle(rows)
    keys, owners, lows, row_years = (np.array(c, dtype=np.int64) for c in zip(*rows))
    return keys, owners, lows, row_years


def count_by_hand(keys, owners, lows, years, min_games):
    """{key: {(year, next): [games, black, white]}}: each game at its first visit of a key."""
    first = {}
    for key, owner, low, year in zip(keys.tolist(), owners.tolist(), lows.tolist(), years.tolist()):
        move = low >> scheme.MOVE_SHIFT
        if (key, owner) not in first or move < first[(key, owner)][0]:
            first[(key, owner)] = (move, low, year)
    games = Counter(key for key, _owner in first)
    table = defaultdict(lambda: defaultdict(lambda: [0, 0, 0]))
    for (key, _owner), (_move, low, year) in first.items():
        if games[key] < min_games:
            continue
        nxt = ((low >> scheme.NEXT_SHIFT) & scheme.NEXT_MASK) - 2
        winner = low & scheme.WINNER_MASK
        entry = table[key][(year, nxt)]
        entry[0] += 1
        entry[1] += winner == 1
        entry[2] += winner == 2
    return {key: {k: tuple(v) for k, v in moves.items()} for key, moves in table.items()}


def as_table(next_stats: nextmoves.NextMoveStats):
    table = defaultdict(dict)
    for key, (year, nxt, games, black, white) in zip(next_stats.keys.tolist(), next_stats.counts.tolist()):
        assert (year, nxt) not in table[key]
        table[key][(year, nxt)] = (games, black, white)
    return dict(table)


@pytest.mark.parametrize("min_games", [1, 5, 20])
def test_records_equal_a_count_row_by_row(min_games):
    rng = np.random.default_rng(min_games)
    rows = random_rows(rng)
    next_stats = nextmoves.from_rows(*rows, min_games=min_games)
    assert as_table(next_stats) == count_by_hand(*rows, min_games)
    order = np.lexsort((next_stats.counts[:, nextmoves.NEXT], next_stats.counts[:, nextmoves.YEAR], next_stats.keys))
    assert (order == np.arange(len(order))).all()  # sorted by (key, year, next)


def test_next_stats_of_distinct_games_add_up_and_round_trip_through_bytes():
    rng = np.random.default_rng(3)
    keys, owners, lows, years = random_rows(rng, games=80)
    half = owners < 40
    parts = [nextmoves.from_rows(keys[m], owners[m], lows[m], years[m], min_games=1) for m in (half, ~half)]
    whole = nextmoves.from_rows(keys, owners, lows, years, min_games=1)
    combined = nextmoves.combine(parts)
    assert as_table(combined) == as_table(whole)
    back = nextmoves.combine([nextmoves.from_stats(k, s) for k, s in nextmoves.to_rows(whole)])
    assert as_table(back) == as_table(whole)


def test_a_year_filter_keeps_the_records_of_its_years_only():
    records = np.array([[2005, 1, 3, 1, 2], [2006, 1, 2, 2, 0], [nextmoves.NO_YEAR, 1, 5, 0, 5]], dtype=np.int32)
    assert nextmoves.select_years(records, None, None).tolist() == records.tolist()
    assert nextmoves.select_years(records, 2006, None)[:, 0].tolist() == [2006]
    assert nextmoves.select_years(records, None, 2005)[:, 0].tolist() == [2005]  # no year: not "before"


def test_merged_segments_keep_next_stats_equal_to_a_count_of_their_rows(tmp_path, book_url, monkeypatch):
    """Batches count different keys; a merge adds them up, counting the rows of parts
    that did not count a key, and the merged next-move statistics equals a count of all its rows."""
    from fuseki.book.analysis.pipeline import importer

    from games import write_games

    monkeypatch.setattr(nextmoves, "GAMES", 3)
    monkeypatch.setattr(segments, "FANOUT", 4)
    folder = tmp_path / "games"
    folder.mkdir()
    write_games(folder, count=60, seed=4)
    with Book.open(book_url) as book:
        importer.import_paths(book, [str(folder)], workers=0, batch_games=6)
        with book.db.connect() as conn:
            live = segments.live(conn)
            assert any(s.level >= 1 for s in live), live
            years = dict(conn.exec_driver_sql("SELECT id, year FROM games").all())
            for segment in live:
                stored = segments.stats_of(conn, segment.id)
                assert stored is not None  # every segment has its next-move statistics
                rows = np.stack(segments.rows_of(conn, segment.id), axis=1)
                ids = rows[:, 1] >> scheme.GAME_SHIFT
                row_years = np.array([years[i] for i in ids.tolist()], dtype=np.int64)
                lows = rows[:, 1] & ((1 << scheme.GAME_SHIFT) - 1)
                counted = count_by_hand(rows[:, 0], ids, lows, row_years, 1)
                table = as_table(stored)
                assert table  # 60 short games on a few openings: their first positions are counted
                assert table == {key: counted[key] for key in table}
                if segment.level == 0:  # a batch counts exactly its keys of >= GAMES games
                    assert set(table) == set(count_by_hand(rows[:, 0], ids, lows, row_years, 3))


@pytest.mark.parametrize("masked", [False, True])
def test_numpy_and_numba_keep_and_count_the_same_first_visits(masked, monkeypatch):
    """Few codes go through numpy's passes (no numba to start), many through the kernels: the same
    answer, the kernels being the slow implementation's check here."""
    rng = np.random.default_rng(20261128 + masked)
    games = rng.integers(1, 400, 3000)  # ~7 visits a game: only each game's first counts
    moves = rng.integers(0, scheme.MOVE_MASK + 1, len(games))
    order = np.lexsort((moves, games))
    games, moves = games[order], moves[order]
    nexts = rng.integers(0, scheme.NEXT_MASK + 1, len(games))  # END (0) and PASS (1) among them
    winners = rng.integers(0, 3, len(games))
    codes = ((games << scheme.GAME_SHIFT) | (moves << scheme.MOVE_SHIFT) | (nexts << scheme.NEXT_SHIFT)
             | winners).astype(np.int64)
    mask = rng.random(350) < 0.5 if masked else None  # shorter than the largest id: those games are out
    answers = []
    for numpy_below in (1 << 62, 0):  # every input to numpy, then every input to the kernels
        monkeypatch.setattr(nextmoves, "NUMPY_CODES", numpy_below)
        firsts = nextmoves.first_visit_codes(codes, mask)
        answers.append((firsts, *nextmoves.count_nexts(firsts)))
    by_numpy, by_kernels = answers
    kept_games = games if mask is None else games[(games < 350) & mask[np.minimum(games, 349)]]
    kept = len(np.unique(kept_games))
    assert len(by_kernels[0]) == kept and by_kernels[1].sum() == kept
    for mine, theirs in zip(by_numpy, by_kernels):
        np.testing.assert_array_equal(mine, theirs)
