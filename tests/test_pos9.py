"""Tests of book.formats.pos9 and ``fuseki pos9``: byte fixtures are built here by hand, never with pos9."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from fuseki.book.formats import pos9, pos9_scores
from fuseki.book.ui.fuseki_command import main
from fuseki.engine.core import base, coords, zobrist

EMPTY_BOARD = "." * 81


def board_with(stones: dict[tuple[int, int], str]) -> str:
    """An 81-character board from {(x, y): '#' or 'O'}."""
    cells = ["."] * 81
    for (x, y), c in stones.items():
        cells[9 * y + x] = c
    return "".join(cells)


def record_bytes(hash_hex: str, to_move: bytes, board: str, extra: tuple | None) -> bytes:
    """One position record, byte by byte, following the issue's layout."""
    out = bytes.fromhex(hash_hex) + b"\x00" + to_move + board.encode("ascii")
    if extra is None:
        return out + b"\x00"
    return out + b"\x01" + struct.pack(">IHH", *extra)


# An asymmetric position: no two of its 8 images are equal.
ASYM = board_with({(2, 2): "#", (6, 2): "O", (2, 5): "#", (4, 4): "O", (1, 7): "#"})


# --- byte layout and order ------------------------------------------------------

def test_position_record_bytes_are_big_endian(tmp_path):
    board = board_with({(0, 0): "#", (8, 0): "O", (4, 4): "#"})
    raw = (bytes([0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0x00, ord("W")]) + board.encode()
           + bytes([1, 0x00, 0x00, 0x01, 0x02, 0x00, 0x03, 0x01, 0x04]))
    assert len(raw) == 100
    path = tmp_path / "one.dat"
    path.write_bytes(raw)
    got = pos9.read_positions(path)
    assert got.record(0) == (0x0123456789ABCDEF, "W", board, (0x102, 3, 0x104))
    # and writing the same record gives the same bytes
    assert pos9.Positions.from_records([got.record(0)]).to_bytes() == raw


def test_record_without_extra_info_is_92_bytes(tmp_path):
    raw = record_bytes("ffeeddccbbaa9988", b"B", EMPTY_BOARD, None)
    assert len(raw) == 92
    path = tmp_path / "p.dat"
    path.write_bytes(raw)
    assert pos9.read_positions(path).record(0) == (0xFFEEDDCCBBAA9988, "B", EMPTY_BOARD, None)
    assert pos9.Positions.from_records([(0xFFEEDDCCBBAA9988, "B", EMPTY_BOARD, None)]).to_bytes() == raw


def test_scored_record_bytes(tmp_path):
    raw = bytes.fromhex("8000000000000001") + b"\x00B" + bytes([3, 100]) \
        + bytes.fromhex("0000000000000002") + b"\x00W" + bytes([8, 0])
    path = tmp_path / "fuego_chinese.dat"
    path.write_bytes(raw)
    got = pos9_scores.read_scores(path)
    assert [int(h) for h in got.hash] == [0x8000000000000001, 2]
    assert bytes(got.to_move) == b"BW"
    assert list(got.score) == [3, 8] and list(got.confidence) == [100, 0]
    again = pos9_scores.Scores.from_records([(0x8000000000000001, "B", -5, 100), (2, "W", 30, 0)])
    assert again.to_bytes() == raw  # scores are clamped to 3..8


# --- reading in blocks, round trips -------------------------------------------------

def random_records(n: int, seed: int, extras: str = "mixed") -> list[tuple]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        board = "".join(rng.choice(list("#O."), size=81, p=[0.2, 0.2, 0.6]))
        has = {"mixed": rng.random() < 0.5, "all": True, "none": False}[extras]
        extra = None
        if has:
            extra = (int(rng.integers(1, 2**32)), int(rng.integers(0, 2**16)), int(rng.integers(0, 2**16)))
        out.append((int(rng.integers(0, 2**63)) * 2 + 1, "BW"[i % 2], board, extra))
    return out


@pytest.mark.parametrize("extras", ["mixed", "all", "none"])
@pytest.mark.parametrize("block_bytes", [1, 91, 92, 100, 1000, 1 << 20])
def test_round_trip_in_any_block_size(tmp_path, extras, block_bytes):
    records = random_records(60, seed=len(extras), extras=extras)
    path = tmp_path / "p.dat"
    path.write_bytes(pos9.Positions.from_records(records[:30]).to_bytes())
    with open(path, "ab") as f:  # the format has no header: appending is concatenation
        f.write(pos9.Positions.from_records(records[30:]).to_bytes())
    blocks = list(pos9.iter_positions(path, block_bytes))
    got = pos9.Positions.concatenate(blocks)
    assert [got.record(i) for i in range(len(got))] == records
    sizes = [100 if r[3] else 92 for r in records]
    assert list(got.offset) == list(np.cumsum(sizes) - sizes)
    assert [b.first_record for b in blocks] == list(np.cumsum([0] + [len(b) for b in blocks[:-1]]) + 1)


# --- malformed input --------------------------------------------------------------

def write_three(tmp_path, middle: bytes) -> tuple:
    first = record_bytes("0000000000000001", b"B", EMPTY_BOARD, (1, 0, 1))
    last = record_bytes("0000000000000003", b"B", EMPTY_BOARD, None)
    path = tmp_path / "bad.dat"
    path.write_bytes(first + middle + last)
    return path, len(first)


@pytest.mark.parametrize("index, value, reason", [
    (8, 7, "tie-breaker"),
    (9, ord("b"), "player to move"),
    (10 + 40, ord("X"), "board point 40 (x 4, y 4)"),
    (10 + 80, 0, "board point 80"),
    (91, 2, "extra-info flag"),
    (92, 0, "source file id is 0"),
])
def test_bad_byte_names_record_and_offset(tmp_path, index, value, reason):
    extra = (0, 0, 0) if index == 92 else (5, 0, 9)
    middle = bytearray(record_bytes("0000000000000002", b"W", EMPTY_BOARD, extra))
    if index != 92:
        middle[index] = value
    path, start = write_three(tmp_path, bytes(middle))
    for block_bytes in (50, 1 << 20):
        seen = []
        with pytest.raises(pos9.RecordError) as info:
            for block in pos9.iter_positions(path, block_bytes):
                seen.extend(int(h) for h in block.hash)
        assert seen == [1]  # the good record before it was read
        assert (info.value.record, info.value.offset) == (2, start + index)
        assert reason in str(info.value) and f"record 2, byte {start + index}" in str(info.value)


def test_first_bad_byte_of_a_record_wins(tmp_path):
    middle = bytearray(record_bytes("0000000000000002", b"W", EMPTY_BOARD, None))
    middle[10 + 3] = ord("x")
    middle[91] = 9  # a bad flag later in the same record
    path, start = write_three(tmp_path, bytes(middle))
    with pytest.raises(pos9.RecordError) as info:
        pos9.read_positions(path)
    assert info.value.offset == start + 13
    assert len(info.value.partial) == 1


@pytest.mark.parametrize("cut", [1, 50, 92, 99])
def test_truncated_last_record(tmp_path, cut):
    good = b"".join(record_bytes(f"{i:016x}", b"B", EMPTY_BOARD, (i, 0, i)) for i in range(1, 4))
    path = tmp_path / "cut.dat"
    path.write_bytes(good + record_bytes("00000000000000ff", b"W", EMPTY_BOARD, (4, 0, 4))[:cut])
    with pytest.raises(pos9.RecordError) as info:
        pos9.read_positions(path)
    assert info.value.record == 4 and info.value.offset == 300 + cut
    assert "truncated" in str(info.value)
    assert [int(h) for h in info.value.partial.hash] == [1, 2, 3]


def test_scored_file_errors(tmp_path):
    good = bytes.fromhex("0000000000000001") + b"\x00B" + bytes([5, 50])
    path = tmp_path / "s.dat"
    cases = [(bytes([9, 50]), 22, "score is 9"), (bytes([5, 101]), 23, "confidence is 101")]
    for bad, offset, words in cases:
        path.write_bytes(good + bytes.fromhex("0000000000000002") + b"\x00W" + bad + good)
        with pytest.raises(pos9.RecordError) as info:
            pos9_scores.read_scores(path)
        assert (info.value.record, info.value.offset) == (2, offset) and words in str(info.value)
        assert len(info.value.partial) == 1
    path.write_bytes(good * 3 + good[:7])
    with pytest.raises(pos9.RecordError) as info:
        pos9_scores.read_scores(path)
    assert (info.value.record, info.value.offset) == (4, 43) and len(info.value.partial) == 3


# --- the table file -----------------------------------------------------------------

def test_default_table_file_layout(tmp_path):
    path = tmp_path / "zobrist_board_81.dat"
    pos9.write_table(path, pos9.default_table())
    lines = path.read_text().splitlines()
    assert lines[:3] == ["8", "3", "81"] and len(lines) == 84
    stone = zobrist.table().stone
    for x, y in [(0, 0), (8, 0), (3, 5), (8, 8)]:
        assert lines[3 + 9 * y + x] == ",".join(f"{int(stone[c][y][x]):016x}" for c in range(3))
    assert pos9.read_table(path) == pos9.default_table()


def test_hand_made_table_defines_the_hash(tmp_path):
    rows = [",".join(f"{(3 * p + c + 1) << 40:016X}" for c in range(3)) for p in range(81)]
    path = tmp_path / "t.dat"
    path.write_text("8\r\n3\r\n81\r\n" + "\r\n".join(rows) + "\r\n\r\n")  # CRLF, trailing blank line
    table = pos9.read_table(path)
    board = board_with({(0, 0): "#", (8, 8): "O", (1, 0): "O"})
    # black at point 0 uses column 0; white at 80 and 1 use column 1; never the ko column
    assert table.hash(board) == (1 << 40) ^ ((3 * 80 + 2) << 40) ^ ((3 * 1 + 2) << 40)


def test_generate_from_seed():
    keys = zobrist.generate_keys(1234)
    table = pos9.generate_table(1234)
    for c in range(3):
        for x, y in [(0, 0), (5, 7)]:
            assert int(table.keys[9 * y + x, c]) == keys[c * 625 + 25 * y + x]
    assert pos9.generate_table(zobrist.SEED) == pos9.default_table()
    assert pos9.generate_table(1234) != pos9.default_table()


@pytest.mark.parametrize("text, line, offset, words", [
    ("4\n3\n81\n", 1, 0, "bytes per hash code is '4'"),
    ("8\n2\n81\n", 2, 2, "number of columns is '2'"),
    ("8\n3\n80\n", 3, 4, "number of rows is '80'"),
    ("8\n3\n", 3, 4, "number of rows is '0000000000000001,"),  # a missing header line
])
def test_table_header_errors(tmp_path, text, line, offset, words):
    path = tmp_path / "t.dat"
    path.write_text(text + "0000000000000001,0000000000000002,0000000000000003\n" * 81)
    with pytest.raises(pos9.RecordError) as info:
        pos9.read_table(path)
    assert (info.value.record, info.value.offset) == (line, offset) and words in str(info.value)
    assert str(info.value).startswith(f"line {line}, byte {offset}")


def test_table_cut_in_the_header(tmp_path):
    path = tmp_path / "t.dat"
    path.write_text("8\n3\n")
    with pytest.raises(pos9.RecordError, match="line 3, byte 4: .* is '<end of file>'"):
        pos9.read_table(path)


def test_table_row_errors(tmp_path):
    row = "0000000000000001,0000000000000002,0000000000000003\n"
    path = tmp_path / "t.dat"
    path.write_text("8\n3\n81\n" + row * 5 + "0000000000000001,000000000000002,0000000000000003\n" + row * 75)
    with pytest.raises(pos9.RecordError) as info:
        pos9.read_table(path)
    assert (info.value.record, info.value.offset) == (9, 7 + 5 * len(row))
    path.write_text("8\n3\n81\n" + row * 80)
    with pytest.raises(pos9.RecordError, match="80 rows, expected 81"):
        pos9.read_table(path)
    path.write_text("8\n3\n81\n" + row * 82)
    with pytest.raises(pos9.RecordError, match="more than 81") as info:
        pos9.read_table(path)
    assert info.value.record == 85


# --- hashes and symmetry ----------------------------------------------------------------

def test_pos9_hash_equals_engine_board_hash():
    from fuseki.engine.core.base import BLACK, WHITE
    from fuseki.engine.core.board import Board

    board = Board(9)
    for color, vertex in [(BLACK, "E5"), (WHITE, "C7"), (BLACK, "G3"), (WHITE, "D4"), (BLACK, "A9")]:
        board.play(color, base.vertex_to_point(vertex, 9))
    cells = {(x, y): {BLACK: "#", WHITE: "O"}[board.color_at(base.xy_to_point(x, y, 9))]
             for y in range(9) for x in range(9) if board.color_at(base.xy_to_point(x, y, 9))}
    assert pos9.default_table().hash(board_with(cells)) == board.hash
    assert pos9.default_table().hash(EMPTY_BOARD) == 0


def image(board: str, n: int) -> str:
    """Symmetry n applied by hand: the stone at (x, y) moves to transform_xy(n, x, y)."""
    cells = ["."] * 81
    for y in range(9):
        for x in range(9):
            tx, ty = coords.transform_xy(n, x, y, 9)
            cells[9 * ty + tx] = board[9 * y + x]
    return "".join(cells)


def test_all_rotations_share_one_id_and_the_symmetry_maps_back():
    table = pos9.default_table()
    images = [image(ASYM, n) for n in range(8)]
    assert len(set(images)) == 8
    smallest = min(table.hash(b) for b in images)
    for b in images:
        h, n = pos9.normalised_hash(b)
        assert h == smallest
        assert table.hash(image(b, n)) == smallest
        turned = np.empty(81, np.uint8)  # the stone at (x, y) moved to transform_xy(n, x, y)
        turned[pos9.symmetry_permutations()[n]] = pos9.as_boards(b)[0]
        assert turned.tobytes().decode() == image(b, n)
    # the orientation that is already minimal reports 0
    minimal = next(b for b in images if table.hash(b) == smallest)
    assert pos9.normalised_hash(minimal) == (smallest, 0)


def test_symmetric_position_reports_the_smallest_symmetry():
    centre = board_with({(4, 4): "#"})
    assert pos9.normalised_hash(centre) == (pos9.default_table().hash(centre), 0)
    assert pos9.normalised_hash(EMPTY_BOARD) == (0, 0)


def test_normalised_hash_with_another_table(tmp_path):
    table = pos9.generate_table(99)
    h, n = pos9.normalised_hash(ASYM, table)
    assert h == min(table.hash(image(ASYM, k)) for k in range(8)) and table.hash(image(ASYM, n)) == h


def test_bad_board_text_is_refused():
    with pytest.raises(ValueError):
        pos9.default_table().hash("." * 80)
    with pytest.raises(ValueError):
        pos9.Positions.from_records([(1, "X", EMPTY_BOARD, None)])
    with pytest.raises(ValueError):
        pos9.Positions.from_records([(1, "B", EMPTY_BOARD, (0, 0, 0))])


# --- merge ---------------------------------------------------------------------------------

def test_merge_keeps_the_first_of_each_position_id(tmp_path):
    a, b, out = tmp_path / "a.dat", tmp_path / "b.dat", tmp_path / "out.dat"
    a.write_bytes(record_bytes("00000000000000aa", b"B", ASYM, (1, 0, 5))
                  + record_bytes("00000000000000aa", b"W", EMPTY_BOARD, None)         # other player: kept
                  + record_bytes("00000000000000bb", b"B", EMPTY_BOARD, None)
                  + record_bytes("00000000000000aa", b"B", EMPTY_BOARD, (1, 0, 6)))   # repeat inside a
    b.write_bytes(record_bytes("00000000000000bb", b"B", ASYM, (2, 0, 1))            # repeat of a's
                  + record_bytes("00000000000000cc", b"B", EMPTY_BOARD, (2, 0, 2)))
    assert pos9.merge_files(out, [a, b]) == (4, 2, [])
    assert out.read_bytes() == (record_bytes("00000000000000aa", b"B", ASYM, (1, 0, 5))
                                + record_bytes("00000000000000aa", b"W", EMPTY_BOARD, None)
                                + record_bytes("00000000000000bb", b"B", EMPTY_BOARD, None)
                                + record_bytes("00000000000000cc", b"B", EMPTY_BOARD, (2, 0, 2)))
    # the output may be one of the inputs
    assert pos9.merge_files(a, [a, a])[:2] == (3, 5)
    assert len(pos9.read_positions(a)) == 3


def test_merge_keeps_good_records_of_a_bad_input(tmp_path, capsys):
    good, bad, out = tmp_path / "good.dat", tmp_path / "bad.dat", tmp_path / "out.dat"
    good.write_bytes(record_bytes("0000000000000001", b"B", EMPTY_BOARD, None))
    bad.write_bytes(record_bytes("0000000000000002", b"B", EMPTY_BOARD, None)
                    + record_bytes("0000000000000003", b"B", ASYM, None)[:20])
    assert main(["pos9", "merge", str(out), str(bad), str(good)]) == 1
    assert [int(h) for h in pos9.read_positions(out).hash] == [2, 1]
    captured = capsys.readouterr()
    assert "2 positions written" in captured.out
    assert "bad.dat: record 2, byte 112: truncated record: 20 of 92 bytes" in captured.err


# --- the CLI ----------------------------------------------------------------------------------

def test_cli_view(tmp_path, capsys):
    table = pos9.default_table()
    board = board_with({(0, 0): "#", (8, 8): "O"})
    normal, sym = pos9.normalised_hash(board)
    path = tmp_path / "p.dat"
    path.write_bytes(record_bytes(f"{normal:016x}", b"W", board, (3, 0, 12))
                     + record_bytes(f"{table.hash(board) ^ 1:016x}", b"B", EMPTY_BOARD, None))
    assert main(["pos9", "view", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"record 1 at byte 0: hash {normal:016x} (normalised, symmetry {sym})" in out
    assert "White to move, 2 stones, source 3 variation 0 move 12" in out
    assert " 9 # . . . . . . . . 9" in out and " 1 . . . . . . . . O 1" in out
    assert "record 2 at byte 100:" in out and "(does not match the board)" in out
    assert "Black to move, 0 stones, no extra info" in out


def test_cli_view_prints_good_records_then_the_error(tmp_path, capsys):
    path = tmp_path / "p.dat"
    path.write_bytes(record_bytes("0000000000000000", b"B", EMPTY_BOARD, None)
                     + record_bytes("00" * 8, b"W", ASYM, None)[:40])
    assert main(["pos9", "view", str(path)]) == 1
    captured = capsys.readouterr()
    assert "record 1 at byte 0" in captured.out
    assert "record 2, byte 132: truncated record: 40 of 92 bytes" in captured.err


def test_cli_histogram(tmp_path, capsys):
    path = tmp_path / "p.dat"
    boards = [EMPTY_BOARD, ASYM, ASYM, board_with({(1, 1): "#", (2, 2): "O"})]
    path.write_bytes(b"".join(record_bytes(f"{i:016x}", b"B", b, None) for i, b in enumerate(boards)))
    assert main(["pos9", "histogram", str(path)]) == 0
    lines = [line.split() for line in capsys.readouterr().out.splitlines()[1:]]
    assert lines == [["0", "1"], ["1", "0"], ["2", "1"], ["3", "0"], ["4", "0"], ["5", "2"], ["total", "4"]]


def test_cli_scores(tmp_path, capsys):
    path = tmp_path / "fuego_chinese.dat"
    path.write_bytes(bytes.fromhex("00000000000000ab") + b"\x00W" + bytes([3, 70])
                     + bytes.fromhex("00000000000000cd") + b"\x00B" + bytes([6, 100])
                     + bytes.fromhex("00000000000000ef") + b"\x00B" + bytes([8, 5]))
    assert main(["pos9", "scores", str(path)]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[1:]]
    assert rows == [["00000000000000ab", "W", "<=3", "70"], ["00000000000000cd", "B", "6", "100"],
                    ["00000000000000ef", "B", ">=8", "5"]]


def test_cli_table(tmp_path, capsys):
    assert main(["pos9", "table", str(tmp_path / "a.dat"), "--seed", "0x2a"]) == 0
    assert pos9.read_table(tmp_path / "a.dat") == pos9.generate_table(42)
    assert main(["pos9", "table", str(tmp_path / "b.dat")]) == 0
    assert pos9.read_table(tmp_path / "b.dat") == pos9.default_table()
    (tmp_path / "c.dat").write_text("8\n4\n81\n")
    assert main(["pos9", "view", str(tmp_path / "b.dat"), "--table", str(tmp_path / "c.dat")]) == 1
    assert "line 2, byte 2: table header: number of columns is '4'" in capsys.readouterr().err


def test_cli_export_from_sgf(tmp_path, capsys):
    (tmp_path / "a.sgf").write_text("(;GM[1]FF[4]SZ[9]KM[7];B[ee];W[cc];B[];W[gg])")
    (tmp_path / "big.sgf").write_text("(;GM[1]FF[4]SZ[19];B[pd];W[dd])")
    (tmp_path / "b.sgf").write_text("(;GM[1]FF[4]SZ[9]AB[aa][ii];W[ia])")
    out = tmp_path / "out.dat"
    files = [str(tmp_path / n) for n in ("a.sgf", "big.sgf", "b.sgf")]
    assert main(["pos9", "export", str(out), *files]) == 0
    printed = capsys.readouterr().out
    assert f"1\t{files[0]}\t4 positions" in printed and f"2\t{files[2]}\t1 positions" in printed
    assert "skipped 1 19x19" in printed
    got = pos9.read_positions(out)
    records = [got.record(i) for i in range(len(got))]
    centre = board_with({(4, 4): "#"})
    two = board_with({(4, 4): "#", (2, 2): "O"})
    corners = board_with({(0, 0): "#", (8, 8): "#"})
    expected = [(EMPTY_BOARD, "B", (1, 0, 1)), (centre, "W", (1, 0, 2)), (two, "B", (1, 0, 3)),
                (two, "W", (1, 0, 4)), (corners, "W", (2, 0, 1))]
    assert [(r[2], r[1], r[3]) for r in records] == expected
    assert [r[0] for r in records] == [pos9.normalised_hash(b)[0] for b, _, _ in expected]
    assert main(["pos9", "export", str(out), files[0], "--plain"]) == 0
    assert int(pos9.read_positions(out).hash[2]) == pos9.default_table().hash(two)


def test_cli_export_reports_unreadable_files(tmp_path, capsys):
    (tmp_path / "bad.sgf").write_text("this is not sgf")
    assert main(["pos9", "export", str(tmp_path / "o.dat"), str(tmp_path / "bad.sgf")]) == 1
    assert "1 of 1 files could not be read" in capsys.readouterr().err


def test_cli_export_from_the_book_equals_export_from_its_files(tmp_path, capsys):
    (tmp_path / "games").mkdir()
    (tmp_path / "games" / "a.sgf").write_text("(;GM[1]FF[4]SZ[9]KM[7];B[ee];W[cc];B[];W[gg])")
    (tmp_path / "games" / "big.sgf").write_text("(;GM[1]FF[4]SZ[19];B[pd];W[dd])")
    (tmp_path / "games" / "b.sgf").write_text("(;GM[1]FF[4]SZ[9]AB[aa][ii];W[ia])")
    book = str(tmp_path / "book.sqlite")
    assert main(["import", str(tmp_path / "games"), "--book", book]) == 0
    from_files, from_book = tmp_path / "files.dat", tmp_path / "book.dat"
    assert main(["pos9", "export", str(from_files), str(tmp_path / "games" / "a.sgf"),
                 str(tmp_path / "games" / "b.sgf")]) == 0
    assert main(["pos9", "export", str(from_book), "--book", book]) == 0
    assert "5 positions from 2 games" in capsys.readouterr().out
    files, books = pos9.read_positions(from_files), pos9.read_positions(from_book)
    strip_source = lambda got: [(r[0], r[1], r[2], r[3][1:]) for r in map(got.record, range(len(got)))]
    assert strip_source(books) == strip_source(files)  # same positions, hashes, movers and move numbers
    assert {r[3][0] for r in map(books.record, range(len(books)))} <= {1, 2, 3}  # book game ids
    assert main(["pos9", "export", str(from_book)]) == 1  # neither files nor --book
