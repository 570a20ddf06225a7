"""book.formats.sgf_reader: SGF bytes -> GameRecord, on small texts written here.

Every sample is read twice, by the fast path and by sgfmill (``fast=False``), and the two
must agree; the expected values are written out from the SGF text, not from either reader.
"""

from __future__ import annotations

import pickle
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuseki.book.formats import sgf_reader
from fuseki.book.formats.sgf_reader import SgfError, read_games
from fuseki.book.model.records import GameRecord, Moves
from fuseki.engine.core.base import BLACK, EMPTY, PASS, WHITE, sgf_to_point


def both(data: bytes, source: str = "t.sgf", **kw) -> list[GameRecord]:
    """The games read by both paths, after checking that the paths agree."""
    fast = read_games(data, source, fast=True, **kw)
    slow = read_games(data, source, fast=False, **kw)
    assert fast == slow
    return fast


def pts(text: str, size: int = 19) -> list[int]:
    return [sgf_to_point(text[i : i + 2], size) for i in range(0, len(text), 2)]


SIMPLE = (
    b"(;GM[1]FF[4]CA[UTF-8]SZ[19]KM[6.5]RU[Korean]DT[2016-07-10]PW[war2014]WR[9d]"
    b"PB[nohen]BR[8d]RE[W+Resign]PC[Tygem]EV[Cup]\n;B[pd];W[dp];B[pq]\n;W[dc])\n"
)


def test_simple_game_header_and_moves():
    (game,) = both(SIMPLE, "a/b.sgf")
    assert (game.size, game.komi, game.handicap) == (19, 6.5, 0)
    assert (game.black, game.black_rank, game.white, game.white_rank) == ("nohen", "8d", "war2014", "9d")
    assert (game.date, game.year, game.event, game.rules) == ("2016-07-10", 2016, "Cup", "Korean")
    assert (game.result, game.winner, game.source) == ("W+Resign", WHITE, "a/b.sgf")
    assert game.setup == []
    b, w = BLACK, WHITE
    assert game.moves == list(zip([b, w, b, w], pts("pddppqdc")))
    assert game.sgf == SIMPLE.strip()
    assert game.notes == []


def test_fast_path_reads_simple_games_without_sgfmill(monkeypatch):
    def refuse(*args):
        raise AssertionError("sgfmill was used")

    monkeypatch.setattr(sgf_reader, "_sgfmill_games", refuse)
    assert read_games(SIMPLE, "s")[0].moves[0] == (BLACK, sgf_to_point("pd", 19))
    with pytest.raises(AssertionError, match="sgfmill was used"):
        read_games(b"(;SZ[19](;B[pd])(;B[dd]))", "v")  # variations: the fast path hands over


def test_fast_path_reads_move_nodes_with_times_and_comments(monkeypatch):
    monkeypatch.setattr(sgf_reader, "_sgfmill_games", None)  # the fast path must do it alone
    data = (b"(;SZ[19]\n;B[pd]BL[1700.5]WL[1778];W[dp] BL[1]\n C[nice :) ;B[aa\\] (;W[bb\\])]"
            b"\n;BL[3]B[dd]OB[2];W[])")
    (game,) = read_games(data, "t.sgf")
    b, w = BLACK, WHITE
    assert game.moves == [(b, sgf_to_point("pd", 19)), (w, sgf_to_point("dp", 19)),
                          (b, sgf_to_point("dd", 19)), (w, PASS)]
    monkeypatch.undo()
    assert both(data) == [game]


@pytest.mark.parametrize(
    "data",
    [
        b"(;SZ[19];B[pd]C[x]W[dd];W[qq])",  # B and W in one node: sgfmill takes B
        b"(;SZ[19];W[dd]B[pd];W[qq])",
        b"(;SZ[19];B[pd];C[only a comment];W[qq])",  # a node without a move
        b"(;SZ[19];B[pd]B[dd];W[qq])",  # a repeated property
        b"(;SZ[19];B[pd]Black[dd];W[qq])",
        b"(;SZ[19];B[pd]MN[3]ABC[x];W[qq])",
        b"(;SZ[19];B[pd]\n\n;W[qq])",
    ],
)
def test_odd_move_nodes_read_as_sgfmill_reads_them(data):
    (game,) = both(data)
    assert game.moves == [(BLACK, sgf_to_point("pd", 19)), (WHITE, sgf_to_point("qq", 19))]


@pytest.mark.parametrize(
    "data",
    [
        b"(;SZ[19];B[QQ[]pd];W[qq])",  # a property-like text inside a move value
        b"(;SZ[19];B[;QQ[x]pd])",
        b"(;SZ[19];B[pd]]QQ[x];W[qq])",
        b"(;SZ[19];B[pd]BL[1];AW[qq];W[dd])",  # setup after the root
        b"(;SZ[19];B[pd]C[unclosed;W[dd)",
    ],
)
def test_garbage_around_extra_properties_is_refused_by_both_paths(data):
    for fast in (True, False):
        with pytest.raises(SgfError):
            read_games(data, "g.sgf", fast=fast)


def test_collection_gives_every_game_with_its_own_bytes():
    first = b"(;SZ[9]PB[one];B[ee];W[cc])"
    second = b"(;SZ[13]PB[two];B[dd])"
    data = b"junk before\n" + first + b"\n  between " + second + b"\ntrailer"
    games = both(data, "coll.sgf")
    assert [g.black for g in games] == ["one", "two"]
    assert [g.size for g in games] == [9, 13]
    assert [g.sgf for g in games] == [first, second]
    assert games[1].moves == [(BLACK, sgf_to_point("dd", 13))]
    assert all(g.source == "coll.sgf" for g in games)


def test_variations_follow_the_first_line():
    data = b"(;SZ[19];B[pd](;W[dd];B[pp])(;W[dp]))"
    (game,) = both(data)
    assert game.moves == list(zip([BLACK, WHITE, BLACK], pts("pdddpp")))


def test_escapes_and_whitespace_in_values():
    data = b"(;PB[a\\]b]PW[back\\\\slash]EV[two\nlines]C[x\\]];B[pd])"
    (game,) = both(data)
    assert (game.black, game.white, game.event) == ("a]b", "back\\slash", "two lines")


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r", b" \t"])
def test_line_breaks_and_spaces_between_nodes(newline):
    data = b"(;SZ[19]" + newline + b";B[pd]" + newline + b";W[]" + newline + b";B[dd]" + newline + b")"
    (game,) = both(data)
    assert game.moves == [(BLACK, sgf_to_point("pd", 19)), (WHITE, PASS), (BLACK, sgf_to_point("dd", 19))]
    assert game.sgf == data


@pytest.mark.parametrize("data", [b"(;SZ[19];B[pd])junk)", b"(;SZ[19];B[pd];junk[])", b"\xef\xbb\xbf(;B[pd])"])
def test_what_sgfmill_tolerates_is_read_the_same(data):
    (game,) = both(data)
    assert game.moves == [(BLACK, sgf_to_point("pd", 19))]


def test_plain_readers_quirks_agree():
    # lower-case letters in identifiers, spaces around values, repeated properties
    data = b"(;SiZe[9] PB [x] PB[y]KoMi[5.5] ; B [ee] ;W[]\n)"
    (game,) = both(data)
    assert (game.size, game.black, game.komi) == (9, "x", 5.5)
    assert game.moves == [(BLACK, sgf_to_point("ee", 9)), (WHITE, PASS)]


@pytest.mark.parametrize("size", [9, 13, 19])
def test_passes_are_empty_or_tt_up_to_19(size):
    data = b"(;SZ[%d];B[];W[tt];B[aa])" % size
    (game,) = both(data)
    assert game.moves == [(BLACK, PASS), (WHITE, PASS), (BLACK, sgf_to_point("aa", size))]


def test_tt_is_a_point_on_larger_boards():
    (game,) = both(b"(;SZ[21];B[tt];W[])")
    assert game.moves == [(BLACK, sgf_to_point("tt", 21)), (WHITE, PASS)]


def test_small_boards_use_their_own_coordinates():
    (game,) = both(b"(;SZ[9];B[ii];W[ai])")
    assert game.moves == [(BLACK, (8 + 1) * 11 + 8 + 1), (WHITE, (8 + 1) * 11 + 1)]
    (game,) = both(b"(;SZ[13];B[mm])")
    assert game.moves == [(BLACK, 13 * 15 + 13)]


def test_handicap_setup_in_the_root():
    data = b"(;SZ[19]HA[3]AB[pd][dp][dd]AB[pp];W[qf])"
    (game,) = both(data)
    assert game.handicap == 3
    assert game.setup == [(BLACK, p) for p in sorted(pts("pddpddpp"))]
    assert game.moves == [(WHITE, sgf_to_point("qf", 19))]


def test_setup_of_every_kind_and_rectangles():
    data = b"(;SZ[9]AB[aa:bb]AW[ee][ff]AE[cc];B[gg])"
    (game,) = both(data)
    assert game.setup == (
        [(BLACK, p) for p in sorted(pts("aabaabbb", 9))]
        + [(WHITE, p) for p in sorted(pts("eeff", 9))]
        + [(EMPTY, sgf_to_point("cc", 9))]
    )


def test_fox_handicap_in_the_second_node_is_moved_to_the_root():
    data = b"(;SZ[19]HA[2]KM[0]\n;AB[pd][dp]\n;W[qq];B[cc])"
    (game,) = both(data)
    assert game.setup == [(BLACK, p) for p in sorted(pts("pddp"))]
    assert game.moves == [(WHITE, sgf_to_point("qq", 19)), (BLACK, sgf_to_point("cc", 19))]
    assert game.notes == [sgf_reader._MOVED_SETUP_NOTE]


@pytest.mark.parametrize(
    "result, winner",
    [("B+R", BLACK), ("W+0.5", WHITE), ("b+resign", BLACK), (" W+T", WHITE), ("B", BLACK),
     ("w", WHITE), ("0", None), ("Draw", None), ("D+J", None), ("Void", None), ("?", None),
     ("", None), ("Black", None), ("BW", None)],
)
def test_winner_from_result(result, winner):
    (game,) = both(b"(;RE[" + result.encode() + b"];B[pd])")
    assert (game.result, game.winner) == (result.strip(), winner)


@pytest.mark.parametrize(
    "date, year",
    [("2016-07-10", 2016), ("1999-01-01,2000-02-02", 1999), ("July 2015", 2015), ("", None),
     ("16-07-10", None), ("20160710", 2016), ("0000-00-00", None)],
)
def test_year_is_the_first_four_digit_number(date, year):
    # both readers: a compact YYYYMMDD is a date (issue 32); a year outside 1600-2100 is none
    # (tests/test_headers.py holds the table of real-world DT strings)
    (game,) = both(b"(;DT[" + date.encode() + b"])")
    assert game.year == year


def test_header_numbers_that_are_not_numbers_are_noted():
    (game,) = both(b"(;KM[six]HA[7.5];B[pd])")
    assert (game.komi, game.handicap) == (None, 0)
    assert len(game.notes) == 2 and "KM[six]" in game.notes[0] and "HA[7.5]" in game.notes[1]
    (game,) = both(b"(;B[pd])")
    assert (game.komi, game.handicap) == (None, 0)


# --- encodings -----------------------------------------------------------------------------

def test_declared_gb2312_is_honoured():
    names = "柯洁".encode("gb2312"), "古力".encode("gb2312")
    data = b"(;CA[GB2312]PB[%s]PW[%s];B[pd])" % names
    (game,) = both(data)
    assert (game.black, game.white, game.encoding) == ("柯洁", "古力", "gb18030")
    assert game.notes == []


def test_gbk_characters_beyond_gb2312_are_read():
    name = "镕".encode("gbk")  # in GBK, not in GB2312
    (game,) = both(b"(;CA[gb2312]PB[%s])" % name)
    assert game.black == "镕"


def test_undeclared_text_tries_utf8_then_gb18030_then_latin1():
    assert both(b"(;PB[" + "李世石".encode() + b"])")[0].black == "李世石"
    game = both(b"(;PB[" + "李世石".encode("gbk") + b"])")[0]
    assert (game.black, game.encoding) == ("李世石", "gb18030")
    game = both(b"(;PB[Jos\xe9 \xc1.])")[0]
    assert (game.black, game.encoding) == ("José Á.", "iso8859-1")


def test_declared_latin1_is_honoured():
    (game,) = both(b"(;CA[ISO-8859-1]PB[Jos\xe9])")
    assert (game.black, game.encoding, game.notes) == ("José", "iso8859-1", [])


def test_wrong_declaration_falls_back_and_says_so():
    (game,) = both(b"(;CA[UTF-8]PB[" + "柯洁".encode("gbk") + b"])")
    assert (game.black, game.encoding) == ("柯洁", "gb18030")
    assert game.notes == ["header text is not utf-8 as CA says; read as gb18030"]


def test_a_name_cut_inside_a_character_keeps_its_bytes():
    cut = "你若有困".encode()[:-1]  # a server truncated the name bytewise
    (game,) = both(b"(;CA[UTF-8]PB[" + cut + b"]PW[ok])")
    assert game.black == "你若有\\xe5\\x9b"
    assert game.encoding == "utf-8"
    assert game.notes == ["PB ends in a cut utf-8 character, kept as \\x escapes"]


def test_encoding_override():
    data = b"(;CA[UTF-8]PB[" + "柯洁".encode("big5") + b"])"
    assert both(data, encoding="big5")[0].black == "柯洁"
    with pytest.raises(SgfError, match="t.sgf"):
        read_games(b"(;PB[\xff\xff\xff])", "t.sgf", encoding="utf-8")
    with pytest.raises(SgfError, match="unknown encoding"):
        read_games(SIMPLE, "t.sgf", encoding="klingon")


def test_unknown_declared_charset_is_guessed():
    (game,) = both(b"(;CA[klingon]PB[" + "é".encode() + b"])")
    assert (game.black, game.encoding) == ("é", "utf-8")
    assert "CA[klingon]" in game.notes[0]


# --- broken files --------------------------------------------------------------------------

@pytest.mark.parametrize(
    "data, reason",
    [
        (b"", "no SGF data"),
        (b"hello world", "no SGF data"),
        (b"(;SZ[19];B[pd];W[dd]", "unexpected end"),
        (b"(;C[:)];B[pd]", "unexpected end"),
        (b"(;SZ[19] junk)", ""),
        (b"(;SZ[26];B[pd])", "board size 26"),
        (b"(;SZ[0])", "board size 0"),
        (b"(;SZ[19:17])", "bad board size"),
        (b"(;SZ[9];B[pd])", "off|not on|board"),
        (b"(;SZ[19];B[zz])", ""),
        (b"(;SZ[19];B[pdd])", ""),
        (b"(;SZ[9]AB[jj])", ""),
        (b"(;SZ[19];B[pd];W[dd];AB[qq];B[cc])", "setup properties after the root"),
        (b"(;SZ[19]AB[pd]B[dd])", "mixed setup and moves"),
        (b"(;SZ[9];B[aa])(;SZ[99])", "game 2"),
    ],
)
def test_broken_files_raise_sgf_error_naming_the_source(data, reason):
    for fast in (True, False):
        with pytest.raises(SgfError, match="broken.sgf") as caught:
            read_games(data, "dir/broken.sgf", fast=fast)
        assert reason == "" or any(r in str(caught.value) for r in reason.split("|")), caught.value


def test_sgf_error_is_a_value_error():
    assert issubclass(SgfError, ValueError)


# --- the two paths agree on token soup -----------------------------------------------------

_ROOT_PIECES = [b"SZ[9]", b"SZ[19]", b"SZ[21]", b"KM[6.5]", b"HA[2]", b"CA[UTF-8]", b"CA[GB2312]",
                b"PB[a\\]b]", b"PW[\xe6\x9f\xaf]", b"PW[\xbf\xc2]", b"AB[cc][dd]", b"AW[ee]", b"B[aa]",
                b"Sz[9]", b" ", b"\n", b"C[x;y]"]
_NODE_PIECES = [b";B[pd]", b";W[dd]", b";B[cc]", b";W[]", b";B[tt]", b"\n;W[ee]", b"\r\n;B[ff]", b";",
                b"; W [dd]", b";\nB\t[]", b"\x0b;\x0cW[aa]",
                b"BL[12.5]", b"C[a;b]", b"C[x\\]y]", b"C[(;B[aa])]", b"AB[gg]", b"AE[cc]", b"B[zz]",
                b"W[qq]", b"B[pd][dd]", b"Black[qq]", b"QQ[pd]", b"QQ[", b" ", b"\n", b"(", b")", b"]",
                b"[", b"(;B[hh])", b";AB[ab][ba]"]


def _soup_outcome(data: bytes, fast: bool):
    try:
        return read_games(data, "soup.sgf", fast=fast)
    except SgfError as exc:
        return str(exc)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    root=st.lists(st.sampled_from(_ROOT_PIECES), max_size=6),
    nodes=st.lists(st.sampled_from(_NODE_PIECES), max_size=14),
    tail=st.sampled_from([b")", b")\n", b") junk", b")(;B[aa])", b"", b"))"]),
)
def test_fast_path_and_sgfmill_agree_on_token_soup(root, nodes, tail):
    data = b"(;" + b"".join(root) + b"".join(nodes) + tail
    assert _soup_outcome(data, True) == _soup_outcome(data, False)


# --- the compact move scanner, and Moves ---------------------------------------------------

_SPACE = rb"[ \t\n\v\f\r]*"  # what sgfmill's tokeniser skips between tokens
_PLAIN_NODE = rb";" + _SPACE + rb"([BW])" + _SPACE + rb"\[([a-z]{2})?\]"
_PLAIN_LINE = re.compile(rb"(?:" + _SPACE + _PLAIN_NODE + rb")*" + _SPACE)


def regex_reading(region: bytes, size: int):
    """The scanner's language, written as a regex: plain move nodes, spaced as sgfmill allows."""
    if not _PLAIN_LINE.fullmatch(region):
        return None
    moves = []
    for colour, text in re.findall(_PLAIN_NODE, region):
        colour = BLACK if colour == b"B" else WHITE
        if not text or (text == b"tt" and size <= 19):
            moves.append((colour, PASS))
        elif text[0] - 97 < size and text[1] - 97 < size:
            moves.append((colour, sgf_to_point(text.decode(), size)))
        else:
            return None
    return moves


_SPACES = st.sampled_from([b"", b"", b"", b" ", b"\n", b"\r\n", b"\t", b"\x0b\x0c", b"\r"])
_NODE = st.builds(lambda before, after, inside, colour, x, y, kind: before + b";" + after + colour + inside + b"[" + (
    b"" if kind == "pass" else b"tt" if kind == "tt" else bytes((97 + x, 97 + y))) + b"]",
    _SPACES, _SPACES, _SPACES, st.sampled_from([b"B", b"W"]),
    st.integers(0, 25), st.integers(0, 25), st.sampled_from(["point", "point", "point", "pass", "tt"]))
_NOISE = st.sampled_from([b";", b"]", b"[", b"\n", b"\r", b" ", b"\t", b"B", b"W", b"a", b"s", b"t",
                          b"z", b"{", b"`", b"C[x]", b"BL[1.0]", b"\x00", b"\xff", b"(", b")", b"\x1c", b"\x85"])


_SCANNED = (st.lists(_NODE, max_size=12), st.lists(st.tuples(st.integers(0, 200), _NOISE), max_size=3),
            st.integers(0, 3), st.sampled_from([2, 9, 13, 19, 20, 25]), st.booleans())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(*_SCANNED)
def test_compact_scanner_reads_what_the_regex_reading_reads(nodes, noise, cut, size, padded):
    compact_reading_matches(nodes, noise, cut, size, padded)


@pytest.mark.slow  # the same with five times the examples (9 s on two loaded cores)
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(*_SCANNED)
def test_compact_scanner_reads_what_the_regex_reading_reads_in_1500_regions(nodes, noise, cut, size, padded):
    compact_reading_matches(nodes, noise, cut, size, padded)


def compact_reading_matches(nodes, noise, cut, size, padded):
    """The compact scanner reads the region made of ``nodes``, corrupted by ``noise`` and ``cut``, as
    the regular expression's reading does (both refuse it, or both read the same moves)."""
    region = bytearray(b"".join(nodes))
    for at, junk in noise:  # corruptions: most regions must then be refused by both readings
        at %= len(region) + 1
        region[at:at] = junk
    region = bytes(region[: len(region) - cut] if cut and len(region) > cut else region)
    if padded:
        region = b" \n" + region + b"\r\n "
    data = b"(;SZ[%d]" % size + region + b")"
    got = sgf_reader._compact_moves(data, len(data) - 1 - len(region), len(data) - 1, size)
    assert (None if got is None else list(got[0])) == regex_reading(region, size)
    assert got is None or got[1] == len(got[0])  # 12 nodes at most: under every board's move limit


def test_moves_read_as_the_list_of_pairs_they_hold():
    record = read_games(b"(;SZ[9];B[ee]\n;W[];B[tt];W[aa])", "x")[0]
    pairs = [(BLACK, sgf_to_point("ee", 9)), (WHITE, PASS), (BLACK, PASS), (WHITE, sgf_to_point("aa", 9))]
    moves = record.moves
    assert isinstance(moves, Moves)
    assert moves == pairs and pairs == moves and list(moves) == pairs and len(moves) == 4
    assert moves[0] == pairs[0] and moves[-1] == pairs[-1] and moves[1:3] == pairs[1:3]
    assert all(type(v) is int for pair in moves for v in pair)
    assert moves != pairs[:3] and moves != pairs[::-1] and moves != "nonsense"
    assert pickle.loads(pickle.dumps(record)) == record
    slow, fast = (read_games(b"(;SZ[9];B[ee];W[cc])", "x", fast=flag)[0] for flag in (False, True))
    assert type(slow.moves) is list and isinstance(fast.moves, Moves) and slow == fast


_ROOT_TEXT = st.lists(st.tuples(st.sampled_from(["GM", "SZ", "PB", "PW", "AB", "C", "PB", "KM"]),
                                st.lists(st.binary(max_size=6).map(lambda b: b.replace(b"\\", b"").replace(b"]", b"")),
                                         min_size=1, max_size=2),
                                st.sampled_from([b"", b"", b" ", b"\n"])), max_size=8)


@settings(max_examples=500, deadline=None)
@given(_ROOT_TEXT)
def test_plain_root_reader_equals_the_general_one(props):
    text = b"".join(space + ident.encode() + b"".join(b"[" + v + b"]" for v in values)
                    for ident, values, space in props)
    general = sgf_reader._general_root(text, 0, len(text))
    assert sgf_reader._fast_root(text, 0, len(text)) == general
    if sgf_reader._PLAIN_ROOT.fullmatch(text):
        assert sgf_reader._plain_root(text, 0, len(text)) == general
