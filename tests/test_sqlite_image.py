"""book.storage.position_index.sqlite_image: pages written by hand that SQLite itself reads, checks and copies."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuseki.book.storage.position_index import sqlite_image

CREATE = ("CREATE TABLE rows (key INTEGER NOT NULL, code INTEGER NOT NULL, "
          "PRIMARY KEY (key, code)) WITHOUT ROWID")
# Values at each edge of SQLite's integer serial types (0 and 1 have no body bytes).
EDGES = [0, 1, -1, 2, 127, 128, -128, -129, 32767, 32768, -32768, -32769, 8388607, 8388608,
         -8388608, -8388609, 2 ** 31 - 1, 2 ** 31, -2 ** 31, -2 ** 31 - 1, 2 ** 47 - 1, 2 ** 47,
         -2 ** 47, -2 ** 47 - 1, 2 ** 63 - 1, -2 ** 63]
ANY_INTEGER = st.sampled_from(EDGES) | st.integers(-2 ** 63, 2 ** 63 - 1)
ANY_ROWS = st.lists(st.tuples(ANY_INTEGER, ANY_INTEGER), unique=True, max_size=3000)  # (key, code) rows


def attached(image: np.ndarray) -> sqlite3.Connection:
    """A connection with the image attached as ``staged``, as the importer opens it."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.execute("ATTACH ':memory:' AS staged")
    conn.deserialize(image.tobytes(), name="staged")
    return conn


def staged(keys, codes) -> sqlite3.Connection:
    """A connection with the rows' image attached as ``staged``."""
    return attached(sqlite_image.rows_image(np.array(keys, dtype=np.int64), np.array(codes, dtype=np.int64), CREATE))


def read_back(conn) -> list[tuple[int, int]]:
    assert conn.execute("PRAGMA staged.integrity_check").fetchall() == [("ok",)]
    return conn.execute("SELECT key, code FROM staged.rows").fetchall()


def random_rows(rng, count, key_bits=64, code_bits=40):
    keys = rng.integers(-2 ** 63, 2 ** 63 - 1, count, dtype=np.int64) >> (64 - key_bits)
    codes = rng.integers(0, 2 ** 62, count, dtype=np.int64) >> (62 - code_bits)
    rows = np.unique(np.stack([keys, codes], axis=1), axis=0)
    return rows[:, 0].copy(), rows[:, 1].copy()


def page_types(image: np.ndarray) -> list[int]:
    """The b-tree page type down the right edge of the tree, root first."""
    size = sqlite_image.PAGE_SIZE
    types, page = [], 2
    while True:
        kind = int(image[(page - 1) * size])
        types.append(kind)
        if kind != 0x02:
            return types
        page = int.from_bytes(image[(page - 1) * size + 8:(page - 1) * size + 12].tobytes(), "big")


@pytest.mark.parametrize("count", [0, 1, 2, 3, 700, 760, 800, 1500, 1600, 5000, 60_000])
def test_an_image_of_one_page_or_many_is_read_back_whole(count):
    keys, codes = random_rows(np.random.default_rng(count), count)
    assert read_back(staged(keys, codes)) == list(zip(keys.tolist(), codes.tolist()))


@pytest.mark.parametrize("extra", [0, 1, 2])
def test_a_page_that_fills_with_one_row_left_over_never_leaves_an_empty_page(extra):
    # Rows of 8-byte key and code: a 22-byte cell, so a leaf takes exactly this many.
    per_leaf = (sqlite_image.PAGE_SIZE - 8) // 22
    count = per_leaf + extra
    keys = np.arange(count, dtype=np.int64) + 2 ** 62
    codes = np.full(count, 2 ** 62, dtype=np.int64)
    assert read_back(staged(keys, codes)) == list(zip(keys.tolist(), codes.tolist()))


def test_a_tree_three_levels_deep_is_read_back_whole():
    keys, codes = random_rows(np.random.default_rng(7), 520_000, code_bits=62)
    image = sqlite_image.rows_image(keys, codes, CREATE)
    assert page_types(image) == [0x02, 0x02, 0x0A]
    found = np.array(read_back(attached(image)), dtype=np.int64)
    assert np.array_equal(found[:, 0], keys) and np.array_equal(found[:, 1], codes)
    walked_keys, walked_codes = sqlite_image.image_rows(image)  # the tree walked in order, three levels
    assert np.array_equal(walked_keys, keys) and np.array_equal(walked_codes, codes)


def test_every_integer_size_is_stored_as_sqlite_stores_it():
    keys = np.repeat(sorted(EDGES), len(EDGES))
    codes = np.tile(EDGES, len(EDGES))
    conn = staged(keys, codes)
    expected = sorted(zip(keys.tolist(), codes.tolist()))
    assert read_back(conn) == expected
    conn.execute(CREATE.replace("TABLE rows", "TABLE main.mine"))
    conn.executemany("INSERT INTO main.mine VALUES (?, ?)", expected)
    # The same record bytes: SQLite's payload of each row is what its own INSERT writes.
    payload = "SELECT sum(payload) FROM dbstat(?) WHERE name = ?"
    assert conn.execute(payload, ("staged", "rows")).fetchone() == \
        conn.execute(payload, ("main", "mine")).fetchone()
    assert conn.execute("SELECT count(*) FROM staged.rows WHERE typeof(key) != 'integer' "
                        "OR typeof(code) != 'integer'").fetchone() == (0,)


def test_codes_of_equal_keys_may_come_in_any_order():
    keys = [5, 5, 5, 7, 7, 9]
    codes = [30, 10, 20, 2, 1, 0]
    assert read_back(staged(keys, codes)) == [(5, 10), (5, 20), (5, 30), (7, 1), (7, 2), (9, 0)]


@pytest.mark.parametrize("disorder", [0, 1, 50])
def test_ordered_rows_put_each_keys_codes_in_order_whether_or_not_they_came_so(disorder):
    """``ordered_rows`` on rows with long runs of equal keys whose codes come in order (a
    merge's: only looked at) but for ``disorder`` runs with two codes swapped: the rows in
    (key, code) order, as Python's sort puts them (one run out of order among many is put right),
    the caller's codes left as they were."""
    rng = np.random.default_rng(disorder)
    keys = np.sort(rng.integers(-50, 50, size=20_000)).astype(np.int64)
    codes = np.empty(len(keys), dtype=np.int64)
    for key in np.unique(keys):
        at = np.flatnonzero(keys == key)
        codes[at] = np.sort(rng.choice(1 << 40, size=len(at), replace=False))
    for key in rng.choice(np.unique(keys), size=disorder, replace=False):
        at = np.flatnonzero(keys == key)
        codes[at[0]], codes[at[-1]] = codes[at[-1]], codes[at[0]]
    given = codes.copy()
    got_keys, got_codes = sqlite_image.ordered_rows(keys, codes)
    assert list(zip(got_keys.tolist(), got_codes.tolist())) == sorted(zip(keys.tolist(), given.tolist()))
    assert np.array_equal(codes, given)


def test_unsorted_keys_or_a_repeated_row_are_refused():
    with pytest.raises(ValueError, match="ascending"):
        sqlite_image.rows_image(np.array([2, 1]), np.array([0, 0]), CREATE)
    with pytest.raises(ValueError, match="repeated"):
        sqlite_image.rows_image(np.array([1, 2, 2]), np.array([0, 4, 4]), CREATE)


def test_the_transfer_into_an_empty_table_of_the_same_definition_copies_every_row_packed():
    keys, codes = random_rows(np.random.default_rng(3), 40_000)
    conn = staged(keys, codes)
    conn.execute(CREATE.replace("TABLE rows", "TABLE main.segment"))
    conn.execute("INSERT INTO main.segment SELECT * FROM staged.rows")
    assert conn.execute("PRAGMA main.integrity_check").fetchall() == [("ok",)]
    assert conn.execute("SELECT key, code FROM main.segment").fetchall() == list(zip(keys.tolist(), codes.tolist()))
    unused, size = conn.execute("SELECT sum(unused), sum(pgsize) FROM dbstat('main') WHERE name = 'segment'").fetchone()
    assert unused / size < 0.02


@settings(max_examples=60, deadline=None)
@given(ANY_ROWS)
def test_any_rows_are_read_back_in_primary_key_order(rows):
    rows.sort()
    keys = [key for key, _ in rows]
    codes = [code for _, code in rows]
    assert read_back(staged(keys, codes)) == rows


def slow_rows(image: np.ndarray) -> list[tuple[int, int]]:
    """The rows SQLite itself reads from an image."""
    return read_back(attached(image))


@pytest.mark.parametrize("count", [0, 1, 700, 5000, 60_000])
def test_wide_codes_are_valid_records_and_adding_to_them_keeps_a_valid_tree(count):
    rng = np.random.default_rng(count)
    keys, codes = random_rows(rng, count, code_bits=40)
    image = sqlite_image.rows_image(keys, codes, CREATE, wide_codes=True)
    assert slow_rows(image) == list(zip(keys.tolist(), codes.tolist()))
    delta = (5 << 24) + 3
    sqlite_image.add_to_codes(image, delta)
    assert slow_rows(image) == list(zip(keys.tolist(), (codes + delta).tolist()))
    found_keys, found_codes = sqlite_image.image_rows(image)
    assert np.array_equal(found_keys, keys) and np.array_equal(found_codes, codes + delta)


def test_small_codes_written_wide_take_six_bytes_and_are_read_as_the_same_numbers():
    keys = np.array([-5, 0, 1, 300], dtype=np.int64)
    codes = np.array([0, 1, 7, 2 ** 47 - 1], dtype=np.int64)
    narrow = sqlite_image.rows_image(keys, codes, CREATE)
    wide = sqlite_image.rows_image(keys, codes, CREATE, wide_codes=True)
    assert slow_rows(wide) == slow_rows(narrow) == list(zip(keys.tolist(), codes.tolist()))
    payload = "SELECT sum(payload) FROM dbstat('staged') WHERE name = 'rows'"
    sizes = [attached(image).execute(payload).fetchone()[0] for image in (narrow, wide)]
    assert sizes[1] - sizes[0] == 6 + 6 + 5 + 0  # 0, 1 (no body), 7 (1 byte) and 2**47-1 (6 already)


def test_codes_that_do_not_fit_or_are_not_wide_are_refused_and_the_image_is_unchanged():
    keys, codes = np.array([1, 2], dtype=np.int64), np.array([0, 2 ** 47 - 10], dtype=np.int64)
    with pytest.raises(ValueError, match="6 bytes"):
        sqlite_image.rows_image(keys, np.array([0, 2 ** 47]), CREATE, wide_codes=True)
    with pytest.raises(ValueError, match="6 bytes"):
        sqlite_image.rows_image(keys, np.array([-1, 0]), CREATE, wide_codes=True)
    image = sqlite_image.rows_image(keys, codes, CREATE, wide_codes=True)
    before = image.copy()
    with pytest.raises(ValueError, match="6 bytes"):
        sqlite_image.add_to_codes(image, 10)
    with pytest.raises(ValueError, match="6 bytes"):
        sqlite_image.add_to_codes(image, -1)
    assert np.array_equal(image, before)
    narrow = sqlite_image.rows_image(keys, codes, CREATE)  # code 0 has no body; 2**47 - 10 takes 6 bytes anyway
    narrow_before = narrow.copy()
    with pytest.raises(ValueError, match="wide"):
        sqlite_image.add_to_codes(narrow, 1)
    assert np.array_equal(narrow, narrow_before)


@settings(max_examples=40, deadline=None)
@given(ANY_ROWS)
def test_image_rows_reads_what_sqlite_reads(rows):
    rows.sort()
    keys = np.array([key for key, _ in rows], dtype=np.int64)
    codes = np.array([code for _, code in rows], dtype=np.int64)
    image = sqlite_image.rows_image(keys, codes, CREATE)
    found_keys, found_codes = sqlite_image.image_rows(image)
    assert list(zip(found_keys.tolist(), found_codes.tolist())) == slow_rows(image) == rows


@pytest.mark.parametrize("count", [0, 1, 800, 60_000])
def test_row_count_counts_the_rows_of_every_page(count):
    keys, codes = random_rows(np.random.default_rng(count + 1), count)
    image = sqlite_image.rows_image(keys, codes, CREATE)
    assert sqlite_image.row_count(image) == len(slow_rows(image)) == len(keys)


def streamed(path, keys, codes, cuts) -> bytes:
    """The file ``RowsFile`` writes of the rows given in chunks ending at ``cuts``."""
    writer = sqlite_image.RowsFile(str(path), CREATE)
    for a, b in zip([0, *cuts], [*cuts, len(keys)]):
        writer.add(keys[a:b], codes[a:b])
    writer.close()
    return path.read_bytes()


@pytest.mark.parametrize("count, chunks", [(0, 1), (1, 1), (700, 3), (760, 760), (1600, 2), (5000, 7),
                                           (60_000, 40), (520_000, 9)])
def test_rows_written_a_chunk_at_a_time_make_the_image_of_them_all(tmp_path, count, chunks):
    """``RowsFile``: byte for byte ``rows_image`` of all the rows, however they are cut (chunk
    ends at random, some chunks empty, some of one row), three levels deep at 520,000 rows;
    SQLite reads the file whole and finds it sound."""
    rng = np.random.default_rng(count + chunks)
    keys, codes = random_rows(rng, count, code_bits=62)
    cuts = sorted(rng.integers(0, count + 1, chunks - 1).tolist()) if count else [0] * (chunks - 1)
    whole = sqlite_image.rows_image(keys, codes, CREATE)
    assert streamed(tmp_path / "rows.db", keys, codes, cuts) == whole.tobytes()
    conn = sqlite3.connect(tmp_path / "rows.db")
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    found = np.array(conn.execute("SELECT key, code FROM rows").fetchall(), dtype=np.int64).reshape(-1, 2)
    assert np.array_equal(found[:, 0], keys) and np.array_equal(found[:, 1], codes)


@pytest.mark.parametrize("extra", [0, 1, 2, 3])
def test_chunks_that_end_where_a_leaf_is_full_make_the_same_pages(tmp_path, extra):
    """Chunks cut a row either side of where a leaf fills (the last row of a level gets a page
    of its own): the same file as the image of them all."""
    per_leaf = (sqlite_image.PAGE_SIZE - 8) // 22  # 8-byte keys and codes: 22-byte cells
    keys = np.arange(5 * per_leaf + 7, dtype=np.int64) + 2 ** 62
    codes = np.full(len(keys), 2 ** 62, dtype=np.int64)
    whole = sqlite_image.rows_image(keys, codes, CREATE).tobytes()
    for leaves in (1, 2, 3):
        cut = leaves * (per_leaf + 1) - 2 + extra
        assert streamed(tmp_path / f"rows{leaves}.db", keys, codes, [cut, cut + 1]) == whole, (leaves, extra)


@pytest.mark.parametrize("count, chunks", [(0, 1), (900, 3), (200_000, 11)])
def test_rows_with_further_columns_are_what_sqlite_reads_and_transfers(tmp_path, count, chunks):
    """``RowsFile`` with further integer columns (the corner book's table: key, move, then
    played, wins, games): SQLite finds the file sound, reads every row back, and copies it whole
    into a table of its own (the transfer ``corner_build`` uses) with the same rows, against the
    rows themselves; values of every width, 0, 1 and negative among them."""
    create = ("CREATE TABLE corner_moves (key BIGINT NOT NULL, move SMALLINT NOT NULL, played INTEGER NOT NULL, "
              "wins INTEGER NOT NULL, games INTEGER NOT NULL, PRIMARY KEY (key, move)) WITHOUT ROWID")
    rng = np.random.default_rng(count + 5)
    keys = np.sort(rng.integers(-(1 << 63), (1 << 63) - 1, count, dtype=np.int64, endpoint=True))
    keys[1::3] = keys[0::3][:len(keys[1::3])]  # keys with several moves
    moves = rng.integers(-1, 361, count)
    order = np.lexsort((moves, keys))
    keys, moves = keys[order], moves[order]
    fresh = np.ones(count, dtype=bool)
    fresh[1:] = (keys[1:] != keys[:-1]) | (moves[1:] != moves[:-1])
    keys, moves = keys[fresh], moves[fresh]
    widths = [0, 1, 127, 128, 40_000, 1 << 23, 1 << 31, 1 << 40, -5]
    extra = rng.choice(np.array(widths, dtype=np.int64), (len(keys), 3))
    path = tmp_path / "corner.db"
    writer = sqlite_image.RowsFile(str(path), create, columns=3)
    cuts = sorted(rng.integers(0, len(keys) + 1, chunks - 1).tolist())
    for a, b in zip([0, *cuts], [*cuts, len(keys)]):
        writer.add(keys[a:b], moves[a:b], extra[a:b])
    writer.close()
    expected = [tuple(row) for row in np.column_stack([keys, moves, extra]).tolist()]
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert conn.execute("SELECT * FROM corner_moves").fetchall() == expected
    conn.execute("ATTACH ':memory:' AS copy")
    conn.execute(create.replace("corner_moves", "copy.corner_moves"))
    conn.execute("INSERT INTO copy.corner_moves SELECT * FROM main.corner_moves")
    assert conn.execute("SELECT * FROM copy.corner_moves").fetchall() == expected
    conn.close()
    for wrong in (np.zeros((1, 3), dtype=np.int64), np.zeros((2, 2), dtype=np.int64), None):
        with pytest.raises(ValueError, match="one row of 3"):
            sqlite_image.RowsFile(str(tmp_path / "short.db"), create, columns=3).add(
                np.array([1, 2]), np.array([0, 0]), wrong)


def test_rows_out_of_order_across_chunks_are_refused(tmp_path):
    writer = sqlite_image.RowsFile(str(tmp_path / "rows.db"), CREATE)
    writer.add(np.array([1, 5], dtype=np.int64), np.array([0, 0], dtype=np.int64))
    with pytest.raises(ValueError, match="ascending"):
        writer.add(np.array([5], dtype=np.int64), np.array([0], dtype=np.int64))  # the same row again
    with pytest.raises(ValueError, match="ascending"):
        writer.add(np.array([4], dtype=np.int64), np.array([9], dtype=np.int64))
    writer.close()


def sqlite_made(path, keys, codes) -> None:
    """A file SQLite itself wrote: the rows inserted in random order (pages split as SQLite
    splits them, part full), then a second table, so the rows' table is not the only one."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA page_size=4096")
    conn.execute(CREATE)
    shuffled = np.random.default_rng(3).permutation(len(keys))
    conn.executemany("INSERT INTO rows VALUES (?, ?)", zip(keys[shuffled].tolist(), codes[shuffled].tolist()))
    conn.execute("CREATE TABLE other (a INTEGER PRIMARY KEY, b BLOB)")
    conn.executemany("INSERT INTO other VALUES (?, ?)", [(i, b"x" * 200) for i in range(300)])
    conn.commit()
    conn.close()


@pytest.mark.parametrize("maker", ["RowsFile", "SQLite"])
@pytest.mark.parametrize("count", [0, 1, 900, pytest.param(60_000, marks=pytest.mark.slow)])  # 60,000: 11 s loaded
def test_mapped_rows_between_two_keys_are_what_sqlite_selects(tmp_path, maker, count):
    """``MappedRows.between`` against SQLite's ``WHERE key BETWEEN``: random ranges, ranges at
    and just past the keys that are there, empty and whole ranges, many equal keys, in a file
    written by ``RowsFile`` (with a table added after) and in one SQLite wrote itself."""
    rng = np.random.default_rng(count)
    # 8-bit keys: runs of equal keys across pages, where a walk that skips a subtree can go wrong
    keys, codes = random_rows(rng, count, key_bits=8 if count > 1000 else 64, code_bits=62)
    path = tmp_path / "rows.db"
    if maker == "RowsFile":
        writer = sqlite_image.RowsFile(str(path), CREATE)
        writer.add(keys, codes)
        writer.close()
        conn = sqlite3.connect(path)
        conn.execute("CREATE TABLE other (a INTEGER PRIMARY KEY, b BLOB)")
        conn.executemany("INSERT INTO other VALUES (?, ?)", [(i, b"x" * 200) for i in range(300)])
        conn.commit()
        conn.close()
    else:
        sqlite_made(path, keys, codes)
    conn = sqlite3.connect(path)
    mapped = sqlite_image.MappedRows(str(path), "rows")
    present = keys.tolist() or [0]
    bounds = [(-2 ** 63, 2 ** 63 - 1), (5, 4), (0, 0)]
    for _ in range(60):
        a, b = sorted(rng.choice(present, 2).tolist())
        bounds += [(a, b), (a + 1, b), (a, b - 1), (a, a), (b + 1, b + 1)]
        bounds.append(tuple(sorted(rng.integers(-2 ** 63, 2 ** 63 - 1, 2).tolist())))
    for low, high in bounds:
        expected = conn.execute("SELECT key, code FROM rows WHERE key BETWEEN ? AND ?", (low, high)).fetchall()
        got_keys, got_codes = mapped.between(low, high)
        assert list(zip(got_keys.tolist(), got_codes.tolist())) == expected, (low, high)
    mapped.close()
    conn.close()


def test_mapped_rows_refuse_a_table_with_rowid_by_the_file_s_name(tmp_path):
    path = tmp_path / "plain.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE rows (key INTEGER, code INTEGER)")
    conn.executemany("INSERT INTO rows VALUES (?, ?)", [(i, i) for i in range(2000)])
    conn.commit()
    conn.close()
    with pytest.raises(ValueError, match="plain.db: page"):
        sqlite_image.MappedRows(str(path), "rows").between(0, 10)
    with pytest.raises(ValueError, match="no table nothing"):
        sqlite_image.MappedRows(str(path), "nothing")


@pytest.mark.parametrize("lock_page", [3, 4, 40, 74])
def test_the_lock_byte_page_is_left_empty(tmp_path, monkeypatch, lock_page):
    """SQLite never uses the page holding the byte at 2**30 (``LOCK_PAGE``): with it moved down
    to a page of a small tree (a leaf, the first interior page, the last page), the image and
    the file written a chunk at a time leave that page zeros and SQLite reads every row."""
    monkeypatch.setattr(sqlite_image, "LOCK_PAGE", lock_page)
    rng = np.random.default_rng(lock_page)
    keys, codes = random_rows(rng, 60_000, code_bits=62)
    image = sqlite_image.rows_image(keys, codes, CREATE)
    page = sqlite_image.PAGE_SIZE
    assert len(image) // page > lock_page and not image[(lock_page - 1) * page:lock_page * page].any()
    assert streamed(tmp_path / "rows.db", keys, codes, [1000, 30_000]) == image.tobytes()
    found = np.array(sqlite3.connect(tmp_path / "rows.db").execute("SELECT key, code FROM rows").fetchall(),
                     dtype=np.int64).reshape(-1, 2)
    assert np.array_equal(found[:, 0], keys) and np.array_equal(found[:, 1], codes)
    assert np.array_equal(np.stack(sqlite_image.image_rows(image)), np.stack([keys, codes]))


@pytest.mark.slow
def test_a_file_past_one_gigabyte_is_read_whole_by_sqlite(tmp_path):
    """The real lock-byte page: a file of 55 million rows (1.1 GB, 67,000 pages) written a chunk at
    a time, which SQLite counts whole and reads around the page at 2**30 (version 4's merged
    segment files past 1 GiB read as malformed there)."""
    rows, chunk = 55_000_000, 5_000_000
    path = tmp_path / "big.db"
    writer = sqlite_image.RowsFile(str(path), CREATE)
    for start in range(0, rows, chunk):
        numbers = np.arange(start, min(start + chunk, rows), dtype=np.int64)
        writer.add(numbers * 1000 + 2 ** 50, numbers + 2 ** 40)  # 8-byte keys, 6-byte codes
    writer.close()
    assert path.stat().st_size > 1 << 30
    conn = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    assert conn.execute("SELECT count(*) FROM rows").fetchone() == (rows,)
    near = (1 << 30) // 20  # rows before the lock-byte page, about (20 bytes a row on a page)
    for row in range(near - 3000, near + 3000, 97):
        assert conn.execute("SELECT code FROM rows WHERE key = ?", (row * 1000 + 2 ** 50,)).fetchall() == [
            (row + 2 ** 40,)]
