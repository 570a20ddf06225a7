"""The Zobrist table is persistent data: pinned to its generator, to the published
SplitMix64 outputs and to a few known keys (style principle 9)."""

import numpy as np
import pytest

from fuseki.engine.core import base, zobrist
from fuseki.engine.core.base import BLACK, WHITE
from fuseki.engine.core.board import Board

# Keys that books on disk depend on: a change here means a new hash scheme.
EMPTY_19_BLACK_TO_MOVE = 0xDFE11B3999FE4930
EMPTY_9_BLACK_TO_MOVE = 0xBE047B3BBB4A8FAC
Q16_D4_HASH = 0xC5A3A36202C02114
Q16_D4_KEY_BLACK_TO_MOVE = 0x1A42B85B9B3E6824


def test_shipped_file_equals_the_generator():
    assert zobrist.read_table_file() == zobrist.generate_keys()


def test_key_count_and_distinctness():
    keys = zobrist.generate_keys()
    assert len(keys) == 3 * 25 * 25 + 1 + 26
    assert len(set(keys)) == len(keys)
    assert all(0 < k < 1 << 64 for k in keys)


def test_splitmix64_reference_outputs_for_seed_0():
    # Published outputs of Vigna's splitmix64.c started from state 0.
    gen = zobrist.splitmix64(0)
    assert [next(gen) for _ in range(3)] == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]


def test_a_different_seed_gives_different_keys():
    assert zobrist.generate_keys(1)[:10] != zobrist.generate_keys()[:10]


def test_write_then_read_round_trips(tmp_path):
    keys = zobrist.generate_keys()
    path = tmp_path / "z.txt"
    zobrist.write_table_file(path, keys)
    assert zobrist.read_table_file(path) == keys
    assert path.read_text().startswith("#")


def test_table_layout_follows_the_file_order():
    keys = zobrist.generate_keys()
    t = zobrist.table()
    assert int(t.stone[0, 0, 0]) == keys[0]
    assert int(t.stone[0, 0, 1]) == keys[1]
    assert int(t.stone[0, 1, 0]) == keys[25]
    assert int(t.stone[1, 0, 0]) == keys[625]
    assert int(t.stone[2, 24, 24]) == keys[3 * 625 - 1]
    assert t.white_to_move == keys[3 * 625]
    assert t.size == keys[3 * 625 + 1:]


@pytest.mark.parametrize("size", [1, 9, 13, 19, 25])
def test_padded_keys(size):
    keys = zobrist.padded_keys(size)
    t = zobrist.table()
    assert keys.shape == (3, (size + 2) ** 2) and not keys.flags.writeable  # empty, black, white
    assert not keys[0].any(), "empty cells hash to zero"
    points = set(base.board_points(size))
    for p in range((size + 2) ** 2):
        if p not in points:
            assert not keys[:, p].any(), "border cells hash to zero"
        else:
            x, y = base.point_to_xy(p, size)
            assert [int(keys[c, p]) for c in (1, 2)] == [int(t.stone[c, y, x]) for c in range(2)]


def test_position_key_properties():
    t = zobrist.table()
    h = 0x0123456789ABCDEF
    assert zobrist.position_key(h, 19, False) == h ^ t.size[19]
    assert zobrist.position_key(h, 19, True) ^ zobrist.position_key(h, 19, False) == t.white_to_move
    keys = {zobrist.position_key(0, s, w) for s in range(1, 26) for w in (False, True)}
    assert len(keys) == 50, "size and side to move both change the key"
    assert all(0 <= k < 1 << 64 for k in keys)


@pytest.mark.parametrize("key", [0, 1, (1 << 63) - 1, 1 << 63, (1 << 64) - 1, 0xDFE11B3999FE4930])
def test_signed_round_trip(key):
    signed = zobrist.to_signed(key)
    assert -(1 << 63) <= signed < 1 << 63
    assert zobrist.to_unsigned(signed) == key
    assert np.int64(signed).view(np.uint64) == np.uint64(key)


def test_pinned_keys():
    assert Board(19).position_key() == EMPTY_19_BLACK_TO_MOVE
    assert Board(9).position_key() == EMPTY_9_BLACK_TO_MOVE
    board = Board(19)
    board.play(BLACK, base.vertex_to_point("Q16", 19))
    board.play(WHITE, base.vertex_to_point("D4", 19))
    assert board.hash == Q16_D4_HASH
    assert board.position_key() == Q16_D4_KEY_BLACK_TO_MOVE


def test_board_hash_is_the_xor_of_stone_keys():
    t = zobrist.table()
    board = Board(19)
    board.play(BLACK, base.xy_to_point(15, 3, 19))
    board.play(WHITE, base.xy_to_point(3, 15, 19))
    assert board.hash == int(t.stone[0, 3, 15]) ^ int(t.stone[1, 15, 3])
    assert board.position_key() == board.hash ^ t.size[19]
    assert board.position_key(WHITE) == board.hash ^ t.size[19] ^ t.white_to_move


def test_transposition_gives_the_same_hash():
    a, b = Board(19), Board(19)
    moves = [(BLACK, "Q16"), (WHITE, "D4"), (BLACK, "Q4"), (WHITE, "D16")]
    for c, v in moves:
        a.play(c, base.vertex_to_point(v, 19))
    for c, v in [moves[2], moves[3], moves[0], moves[1]]:
        b.play(c, base.vertex_to_point(v, 19))
    assert a.hash == b.hash and a.position_key() == b.position_key()
