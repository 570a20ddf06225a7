"""book.storage.position_index.packed_segment: a segment file's rows and next-move statistics as flat arrays.

The reader is checked against two independent readings: ``bookrows.segment_file``
(``struct`` over the documented layout) and numpy over the rows as they were given.
"""

from __future__ import annotations

import os
import sqlite3

import numpy as np
import pytest

from fuseki.book.storage.position_index import nextmoves, packed_segment, segment_files

from bookrows import segment_file

FENCE = packed_segment.FENCE


def random_rows(rng, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows with negative and positive keys, runs of a key longer than a fence's stretch (a busy
    position), keys at both ends of int64, codes up to 6 bytes; in (key, code) order."""
    keys = rng.integers(-(1 << 63), (1 << 63) - 1, count, dtype=np.int64, endpoint=True)
    if count > 10:
        keys[:3] = [-(1 << 63), (1 << 63) - 1, 0]
        keys[3:3 + count // 4] = 12345  # one key a quarter of the rows
        keys[3 + count // 4:3 + count // 3] = rng.integers(-20, 20, count // 3 - count // 4)
    codes = rng.integers(0, packed_segment.CODE_LIMIT, count, dtype=np.int64)
    unique = np.unique(np.stack([keys, codes]), axis=1)  # sorted by (key, code), no repeated row
    return unique[0].copy(), unique[1].copy()


def some_stats(rng, keys: np.ndarray) -> nextmoves.NextMoveStats:
    chosen = np.unique(rng.choice(keys, size=min(len(keys), 30))) if len(keys) else keys
    found = [nextmoves.NextMoveStats(np.full(2, key, dtype=np.int64),
                                     rng.integers(0, 1000, (2, 5)).astype(np.int32)) for key in chosen]
    return nextmoves.combine(found)


@pytest.mark.parametrize("count", [0, 1, FENCE - 1, FENCE, FENCE + 1, 5 * FENCE + 17, 20_000])
def test_the_reader_answers_what_the_rows_hold(tmp_path, count):
    rng = np.random.default_rng(count)
    keys, codes = random_rows(rng, count)
    shuffled = codes.copy()
    for key in np.unique(keys):  # codes of a key in any order: the file orders them
        where = np.flatnonzero(keys == key)
        shuffled[where] = rng.permutation(codes[where])
    stats = some_stats(rng, keys)
    path = str(tmp_path / "a.seg")
    packed_segment.write(path, keys, shuffled, stats)

    slow_keys, slow_codes, slow_stats = segment_file(path)
    assert slow_keys == keys.tolist() and slow_codes == codes.tolist()
    assert slow_stats == nextmoves.to_rows(stats)
    reader = packed_segment.Reader(path)
    try:
        assert reader.rows == count
        found_keys, found_codes = reader.all_rows()
        assert found_keys.tolist() == slow_keys and found_codes.tolist() == slow_codes
        probes = np.concatenate([keys[rng.integers(0, count, 60)] if count else keys,
                                 rng.integers(-(1 << 63), (1 << 63) - 1, 20, dtype=np.int64, endpoint=True),
                                 [-(1 << 63), (1 << 63) - 1, 12345, 0, 1, -1]]).astype(np.int64)
        for key in probes.tolist():
            assert reader.key_codes(key).tolist() == codes[keys == key].tolist(), key
            counted = reader.key_stats(key)
            if key in stats.keys:
                assert counted is not None and np.array_equal(counted.counts, stats.counts[stats.keys == key])
            else:
                assert counted is None
        for low, high in np.sort(rng.integers(-(1 << 63), (1 << 63) - 1, (30, 2), dtype=np.int64,
                                              endpoint=True), axis=1).tolist() + [[-20, 20], [12345, 12345]]:
            inside = (keys >= low) & (keys <= high)
            between = reader.between(low, high)
            assert between[0].tolist() == keys[inside].tolist() and between[1].tolist() == codes[inside].tolist()
        everything = reader.all_stats()
        assert np.array_equal(everything.keys, stats.keys) and np.array_equal(everything.counts, stats.counts)
    finally:
        reader.close()


@pytest.mark.parametrize("count", [0, 700, 20_000])
def test_a_file_written_a_chunk_at_a_time_is_the_file_written_at_once(tmp_path, count):
    rng = np.random.default_rng(count + 1)
    keys, codes = random_rows(rng, count)
    stats = some_stats(rng, keys)
    packed_segment.write(str(tmp_path / "whole.seg"), keys, codes, stats)
    for trial in range(4):
        cuts = np.unique(np.concatenate([[0, count], rng.integers(0, count + 1, trial * 5)]))
        writer = packed_segment.Writer(str(tmp_path / "chunks.seg"), count)
        for low, high in zip(cuts[:-1], cuts[1:]):
            writer.add(keys[low:high], codes[low:high])
        writer.finish(stats)
        assert (tmp_path / "chunks.seg").read_bytes() == (tmp_path / "whole.seg").read_bytes(), cuts


def test_the_writer_refuses_rows_it_cannot_keep(tmp_path):
    path = str(tmp_path / "a.seg")
    empty = nextmoves.empty()
    with pytest.raises(ValueError, match="ascending"):
        packed_segment.write(path, np.array([2, 1]), np.array([0, 0]), empty)
    with pytest.raises(ValueError, match="repeated"):
        packed_segment.write(path, np.array([1, 2, 2]), np.array([0, 4, 4]), empty)
    with pytest.raises(ValueError, match="outside"):
        packed_segment.write(path, np.array([1]), np.array([packed_segment.CODE_LIMIT]), empty)
    with pytest.raises(ValueError, match="outside"):
        packed_segment.write(path, np.array([1]), np.array([-1]), empty)
    writer = packed_segment.Writer(path, 3)
    writer.add(np.array([5, 6]), np.array([1, 1]))
    with pytest.raises(ValueError, match="follow"):
        writer.add(np.array([6]), np.array([1]))
    with pytest.raises(ValueError, match="2 rows given of the 3"):
        writer.finish(empty)
    writer.close()
    writer = packed_segment.Writer(path, 1)
    with pytest.raises(ValueError, match="more rows"):
        writer.add(np.array([5, 6]), np.array([1, 1]))
    writer.close()


def test_a_file_cut_short_or_not_a_segment_file_is_refused_by_name(tmp_path):
    path = tmp_path / "a.seg"
    packed_segment.write(str(path), np.arange(1000), np.arange(1000), nextmoves.empty())
    whole = path.read_bytes()
    path.write_bytes(whole[:-3])
    with pytest.raises(packed_segment.FormatError, match=f"{path}.*cut short"):
        packed_segment.Reader(str(path))
    path.write_bytes(whole[:30])
    with pytest.raises(packed_segment.FormatError, match=str(path)):
        packed_segment.Reader(str(path))
    old = tmp_path / "old.seg"
    with sqlite3.connect(old) as db:
        db.execute("CREATE TABLE positions (key INTEGER, code INTEGER)")
    assert not packed_segment.is_packed(str(old))
    with pytest.raises(packed_segment.FormatError, match=f"{old} is not a fuseki segment file"):
        packed_segment.Reader(str(old))
    with pytest.raises(FileNotFoundError):
        packed_segment.Reader(str(tmp_path / "none.seg"))


def test_a_file_removed_after_it_was_opened_is_still_read_and_one_removed_before_is_gone(tmp_path):
    folder = str(tmp_path / "segments")
    keys, codes = np.array([3, 3, 9]), np.array([1, 2, 7])
    name = segment_files.write_rows(folder, keys, codes, nextmoves.empty(), os.getpid())
    files = [segment_files.FileSegment(1, name, 100)]
    assert segment_files.codes(folder, files, 3).tolist() == [101, 102]
    os.unlink(os.path.join(folder, name))
    assert segment_files.codes(folder, files, 9).tolist() == [107]  # opened before: still there
    segment_files.forget(folder, [])
    with pytest.raises(segment_files.Gone):
        segment_files.codes(folder, files, 9)


def test_a_row_costs_fourteen_bytes(tmp_path):
    """What docs/storage.md counts: 8 bytes of key and 6 of code a row, plus a fence entry every
    FENCE rows, the next-move statistics and 64 bytes of header."""
    rows = 100 * FENCE
    path = tmp_path / "a.seg"
    packed_segment.write(str(path), np.arange(rows), np.arange(rows), nextmoves.empty())
    assert os.path.getsize(path) == 64 + 14 * rows + 8 * 100
