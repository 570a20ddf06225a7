"""The sgfmill path's cut at ``move_limit`` before sgfmill parses (issue 40): the scan of a
game's bytes (``book.formats.sgf_reader._game_extent``) held to sgfmill's own parse of the whole
text, on random game trees written here from fixed seeds."""

from __future__ import annotations

import random

import numpy as np
from sgfmill import sgf, sgf_grammar, sgf_moves

from fuseki.book.formats import sgf_reader
from fuseki.book.formats.sgf_reader import SgfError, read_games
from fuseki.engine.core.base import BLACK, PASS, WHITE, move_limit, point_to_rowcol, rowcol_to_point

# Random game trees with what the scan must step over as sgfmill does: escaped "]" and "\\",
# brackets, parentheses and semicolons inside values, identifiers with lower-case letters
# ("Black" is B) or longer than 64 letters, spaces between any tokens, a node with B twice or
# B and W, variations at any depth; then a few corruptions (stray bytes, a cut end).
_VALUE_TEXTS = [b"", b"x", b"a\\]b", b"(;B[aa\\])", b"\\]\\\\", b"\\\\", b"[[", b";;", b"\\(", b"\xff\x00", b"\\\n"]
_SPACE_PIECES = [b"", b"", b"", b" ", b"\n", b"\r\n", b"\t", b"\x0b\x0c"]


def _random_node(rng, size: int) -> bytes:
    letters = "abcdefghijklmnopqrstuvwxyz"[:size]

    def sp() -> bytes:
        return rng.choice(_SPACE_PIECES)

    def point() -> bytes:
        return b"" if rng.random() < 0.2 else (rng.choice(letters) + rng.choice(letters)).encode()

    props = []
    for _ in range(rng.choice([0, 1, 1, 1, 2, 3])):
        kind = rng.random()
        if kind < 0.55:
            ident = rng.choice([b"B", b"W", b"B", b"W", b"Black", b"White", b"bW"])
            props.append(ident + sp() + b"[" + point() + b"]")
        elif kind < 0.75:
            props.append(b"C" + sp() + b"[" + b"".join(rng.choices(_VALUE_TEXTS, k=rng.randint(1, 3))) + b"]")
        elif kind < 0.85:
            props.append(rng.choice([b"BL", b"WL", b"LB", b"MN", b"BW", b"Mn"]) + b"[3]" * rng.randint(1, 2))
        elif kind < 0.9995:
            props.append(b"TR[" + (rng.choice(letters) * 2).encode() + b"]" + sp() + b"[" + b"aa" + b"]")
        elif kind < 0.99975:  # 64 letters, then "B": two identifiers, the first without a value
            props.append(b"N" * 64 + b"B[3]")
        else:
            props.append(b"N" * 64 + b"[3]")
    return sp() + b";" + sp() + sp().join(props)


def _random_tree(rng, size: int, depth: int) -> bytes:
    nodes = b"".join(_random_node(rng, size) for _ in range(rng.randint(1, 12)))
    children = [] if depth >= 4 else [_random_tree(rng, size, depth + 1) for _ in range(rng.choice([0, 1, 1, 2, 3]))]
    return b"(" + nodes + b"".join(children) + rng.choice(_SPACE_PIECES) + b")"


def _random_sgf(rng) -> bytes:
    size = rng.choice([2, 2, 3, 19])  # sgfmill has no 1x1 board; a 2x2 game is cut after 16 moves
    root = b"(;SZ[%d]" % size + rng.choice([b"", b"AB[aa]", b"AW[aa]AB[ab]", b"C[x\\]]"])
    data = bytearray(root + _random_tree(rng, size, 0)[1:])  # the first tree's sequence starts with the root
    for _ in range(rng.choice([0, 0, 0, 1, 2])):  # corruptions
        at = rng.randint(0, len(data))
        data[at:at] = rng.choice([b"]", b"[", b"(", b")", b";", b"\\", b"1", b"\xff", b"B"])
    if rng.random() < 0.1:
        del data[rng.randint(1, len(data)):]
    return rng.choice([b"", b"junk "]) + bytes(data) + rng.choice([b"", b"\n", b"(;SZ[2];B[aa])"])


def _main_line(tree) -> list[dict]:
    """The nodes of sgfmill's coarse tree along the first variation at each branch."""
    nodes = []
    while tree is not None:
        nodes += tree.sequence
        tree = tree.children[0] if tree.children else None
    return nodes


def _moves_in(nodes) -> int:
    return sum("B" in node or "W" in node for node in nodes)


def test_game_extent_cuts_the_main_line_as_sgfmill_reads_it():
    """On 1,500 random SGF texts (seed 40): the scan stops where sgfmill's tokeniser stops and
    counts the move nodes of sgfmill's main line; the text it reads (to the main line's end, or
    cut at the N-th move node: the first, the last and 6 drawn) parses to the main line's nodes
    up to there, as many as it counts (nodes and values), without a variation; the root's text
    parses to sgfmill's root."""
    rng = random.Random(40)
    parsed = cut_games = 0
    for _ in range(1500):
        data = _random_sgf(rng)
        start = sgf_reader._START.search(data)
        if start is None:
            continue
        begin = start.start()
        buf = np.frombuffer(data, dtype=np.uint8)
        end, played, root_end, read_end, depth, nodes, open_at_end, values, root_values = \
            sgf_reader._game_extent(buf, begin, -1)
        assert end == sgf_grammar.tokenise(data, 0)[1], data
        try:
            whole = sgf_grammar.parse_sgf_game(data[begin:end])
        except ValueError:
            continue
        parsed += 1
        assert open_at_end == 0, data
        line = _main_line(whole)
        assert played == _moves_in(line), data
        assert sgf_grammar.parse_sgf_game(data[begin:root_end] + b")").sequence == [line[0]], data
        _assert_main_line_alone(sgf_grammar.parse_sgf_game(data[begin:read_end] + b")" * depth), line, data)
        assert (nodes, values, root_values) == (len(line), _values_in(line), _values_in(line[:1]))
        drawn = rng.sample(range(1, played + 1), min(6, played))
        for limit in sorted({1, played, *drawn} if played else ()):
            cut, depth, nodes, _open, values = sgf_reader._game_extent(buf, begin, limit)[3:8]
            upto = next(i for i in range(len(line)) if _moves_in(line[:i + 1]) == limit)
            kept = sgf_grammar.parse_sgf_game(data[begin:cut] + b")" * depth)
            _assert_main_line_alone(kept, line[:upto + 1], (data, limit))
            assert (nodes, values) == (upto + 1, _values_in(line[:upto + 1]))
            cut_games += 1
    assert parsed > 800 and cut_games > 4000, (parsed, cut_games)  # the test reached its cases


def _values_in(nodes: list[dict]) -> int:
    return sum(len(node[ident]) for node in nodes for ident in node)


def _assert_main_line_alone(tree, nodes: list[dict], why) -> None:
    """``tree`` is ``nodes`` in one line: no variation."""
    assert _main_line(tree) == nodes, why
    while tree.children:
        assert len(tree.children) == 1, why
        tree = tree.children[0]


def _reference_games(data: bytes) -> list[tuple] | str:
    """What the sgfmill path reads, the slow way: sgfmill parses the whole text, then the main
    line is cut at ``move_limit``; a main line of more nodes without a move than that before
    the cut is refused.  (moves, cut_from, setup) a game, or the error's text."""
    try:
        games = []
        for tree in sgf_grammar.parse_sgf_collection(data):
            sgf_reader._move_root_setup(tree)  # the Fox handicap quirk, which both paths apply
            size = int(tree.sequence[0].get("SZ", [b"19"])[0])
            limit = move_limit(size)
            line = _main_line(tree)
            read = len(line)  # the nodes sgfmill is given: the main line, to its limit-th move if cut
            if _moves_in(line) > limit:
                read = next(i + 1 for i in range(len(line)) if _moves_in(line[:i + 1]) == limit)
            if read - _moves_in(line[:read]) > limit:
                return f"{read - _moves_in(line[:read])} nodes without a move on the main line"
            values = _values_in(line[:read])
            if values > VALUES_HERE * limit:
                return f"{values} property values on the main line"
            game = sgf.Sgf_game.from_coarse_game_tree(tree, override_encoding="ISO-8859-1")
            _board, plays = sgf_moves.get_setup_and_moves(game)
            moves = [(BLACK if c == "b" else WHITE, PASS if rc is None else rowcol_to_point(rc, size))
                     for c, rc in plays]
            games.append((moves[:limit], len(moves) if len(moves) > limit else None,
                          sorted(game.get_root().get_setup_stones()[0])))
        return games
    except ValueError as exc:
        return str(exc)


VALUES_HERE = 3  # values a move of the limit, for the comparison below (engine.core.base.VALUES_PER_MOVE: 32)


def _has_variation(game_text: bytes) -> bool:
    return sgf_grammar.tokenise(game_text)[0].count(("D", b"(")) > 1


def test_sgfmill_path_reads_what_sgfmill_reads_whole_then_cut(monkeypatch):
    """read_games(fast=False) against sgfmill's parse of the whole text cut after it (seed 41):
    the same moves, the same count past the limit, the same setup, the same refusals of main
    lines of too many nodes without a move, or of too many values (3 a move of the limit here,
    so that small games reach it).  Where sgfmill fails on the whole text, the read
    may only succeed for a game cut (text past the cut is not parsed) or with variations
    (sgfmill is given the main line alone)."""
    monkeypatch.setattr(sgf_reader, "VALUES_PER_MOVE", VALUES_HERE)  # the reader's own name of it
    rng = random.Random(41)
    compared = cut = refused = too_many = 0
    for _ in range(1500):
        data = _random_sgf(rng)
        expected = _reference_games(data)
        try:
            got = read_games(data, "r.sgf", fast=False)
        except SgfError as exc:
            assert isinstance(expected, str), (data, str(exc))
            if "nodes without a move" in expected or "property values" in expected:
                assert expected in str(exc), (data, str(exc))
                refused += "nodes without a move" in expected
                too_many += "property values" in expected
            continue
        if isinstance(expected, str):
            assert any(game.cut_from or _has_variation(game.sgf) for game in got), (data, expected)
            continue
        setups = [sorted(_black_setup_rowcols(game)) for game in got]
        assert [(list(game.moves), game.cut_from) for game in got] == [e[:2] for e in expected], data
        assert setups == [e[2] for e in expected], data
        first = data[sgf_reader._START.search(data).start():sgf_grammar.tokenise(data)[1]]  # the first game's text
        assert got[0].sgf == first if got[0].cut_from is None else _main_line_text(got[0].sgf), data
        compared += 1
        cut += sum(game.cut_from is not None for game in got)
    assert compared > 700 and cut > 60 and refused > 20 and too_many > 20, (compared, cut, refused, too_many)


def _main_line_text(text: bytes) -> bool:
    """``text`` parses to one line of nodes: no variation."""
    tree = sgf_grammar.parse_sgf_game(text)
    while len(tree.children) == 1:
        tree = tree.children[0]
    return not tree.children


def _black_setup_rowcols(game):
    """The black setup stones of a record as sgfmill's (row, column) pairs."""
    return [point_to_rowcol(p, game.size) for c, p in game.setup if c == BLACK]
