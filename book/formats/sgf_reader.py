"""Game records: reading SGF bytes into :class:`GameRecord` values.

Layers (the style guide's "grammar, then typed properties, then replay"; replay is not here):

1. **grammar** -- bytes to a tree of raw property maps.  sgfmill is the reference
   reader (``sgf_grammar``); a *fast path* reads the common case -- one game, root
   properties (module-level regexes), then a linear line of ``;B[..]``/``;W[..]``
   nodes (a numba scan, :data:`_MOVE_READINGS`) -- and hands anything else to
   sgfmill.  Both paths produce the same raw root property map, the same setup and
   the same moves, so everything after the grammar (header fields, encodings,
   quirks) is shared code.
2. **typed properties** -- header fields decoded from the raw root map
   (``book.formats.sgf_headers.read_header``, which also honours the ``CA`` charset), points
   converted with ``engine.core.coords`` conventions.

Conventions: points are padded indexes (``engine.core.coords``), ``PASS = -1``; colours are
``engine.core.base`` codes.  Setup is listed black, then white, then empty, each in
increasing point order (sgfmill gives sets, so file order cannot be kept).

Quirk normalised here (and recorded in ``notes``): handicap stones given in the node
after the root (``(;HA[3]...;AB[pd][dp][dd];W[..]``, Fox) are moved to the root; sgfmill
alone would reject the game ("setup properties after the root node").

A game longer than ``book.model.records.move_limit`` (4 x the board's points) is cut
there by both paths: its ``moves`` and its ``sgf`` end at the limit, ``cut_from`` says how
many moves it had.  Both count the moves past the limit without keeping them: the fast path
in its scan, the sgfmill path in a scan of the bytes before sgfmill parses (``_game_extent``),
which cuts the text after the last move kept.  It counts the main line's moves (the first
variation at each branch), those a record keeps: counting every variation's would cut a
commented game short.  sgfmill is given the main line alone, so a fault in a variation no
longer refuses a game, and what sgfmill builds is bounded by the limit (``_sgfmill_games``).

What this module deliberately does *not* do: check move legality (replay does), fix
per-server komi conventions, or read anything but the main line (first variation).
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Sequence
from functools import cache

import numpy as np
from numba import njit
from sgfmill import sgf, sgf_grammar, sgf_moves

from fuseki.book.formats.sgf_headers import HeaderTextError, read_header
from fuseki.book.model.records import GameRecord, Moves
from fuseki.engine.core.base import (
    BLACK,
    EMPTY,
    MAX_SIZE,
    MOVES_PER_POINT,
    PASS,
    VALUES_PER_MOVE,
    WHITE,
    move_limit,
    rowcol_to_point,
    xy_to_point,
)


class SgfError(ValueError):
    """SGF data that cannot be read as a game; the message names the source and the reason."""


# --- the fast path: regexes and a scan over the bytes -------------------------------------------
#
# The value pattern is sgfmill's (sgf_grammar._tokenise_re): any bytes up to an
# unescaped "]".  ``\s`` on bytes is the same set sgfmill's tokeniser skips.

_VALUE = rb"\[[^\\\]]*(?:\\.[^\\\]]*)*\]"
_START = re.compile(rb"\(\s*;")  # sgfmill's _find_start_re
_ROOT = re.compile(rb"\(\s*;((?:\s*[A-Z]{1,64}(?:\s*" + _VALUE + rb")+)*)", re.DOTALL)
_PROP = re.compile(rb"([A-Z]{1,64})((?:\s*" + _VALUE + rb")+)", re.DOTALL)
_VALUES = re.compile(rb"\[([^\\\]]*(?:\\.[^\\\]]*)*)\]", re.DOTALL)
_SETUP_NODE = re.compile(rb"\s*;\s*AB((?:\s*\[[a-z]{2}\])+)")
# A property that does not bear on the main line's moves (BL, WL, C, ...), with the
# spaces before it, starting right after a node's ";" or a value's "]".  Removing these
# leaves a compact move line; a match starting anywhere else leaves a ";" or "]" inside
# a kept value, which then fails the lookup, so the reading cannot change.
_EXTRA_PROP = re.compile(
    rb"(?<=[;\]])\s*(?![BW]\s*\[|A[BWE]\s*\[)[A-Z]{1,64}(?:\s*" + _VALUE + rb")+", re.DOTALL)
_COLOUR = {"b": BLACK, "w": WHITE}


@cache
def _point_table(size: int) -> dict[bytes, int]:
    """SGF point bytes -> padded index for every on-board point, plus the passes."""
    letters = b"abcdefghijklmnopqrstuvwxyz"
    table = {
        bytes((letters[x], letters[y])): xy_to_point(x, y, size)
        for y in range(size)
        for x in range(size)
    }
    table[b""] = PASS
    if size <= 19:
        table[b"tt"] = PASS
    return table


class _NotSimple(Exception):
    """The fast path met something it does not handle; sgfmill reads the file instead."""


def _fast_game(data: bytes, source: str, encoding: str | None) -> GameRecord:
    """Read a one-game file with a linear main line; raises _NotSimple otherwise."""
    start = _START.search(data)
    if start is None:
        raise _NotSimple("no game start")
    # The fast path's regexes keep a backtracking entry per repeat: one property of 2.4 M values
    # (a 9.6 MB root of AB stones) held 1.0 GB in _ROOT.match alone.  A file of that many values
    # is looked at first (by the sgfmill reader's byte scan, no objects): values that are not the
    # main line's moves (the root's, comments, marks, variations') past any board's limit send it
    # to the sgfmill reader, which bounds and names them; a long game of moves stays here, whose
    # scan counts the moves past the limit without keeping them.
    # A value takes 2 bytes at least ("[]"): a file under twice the limit cannot pass it, and a
    # real game (1-2 KB) skips the count (the count cost 1.5 us a game, 1.9% of read_games on tygem-2016-07).
    most = VALUES_PER_MOVE * move_limit(MAX_SIZE)
    total = data.count(b"[") if len(data) > 2 * most else 0
    if total > most:
        found = _game_extent(np.frombuffer(data, dtype=np.uint8), start.start(), -1)
        played, values = found[1], found[7]
        if max(values - played, total - values) > most:
            raise _NotSimple("more property values than moves: the sgfmill reader's scan bounds them")
    root_match = _ROOT.match(data, start.start())
    root = _fast_root(data, root_match.start(1), root_match.end(1))
    if "B" in root or "W" in root or "AW" in root or "AE" in root:
        raise _NotSimple("a move, AW or AE in the root")
    size = _size(root, source)
    table = _point_table(size)
    position = root_match.end()
    notes: list[str] = []
    setup_node = None if "AB" in root else _SETUP_NODE.match(data, position)
    if setup_node is not None:
        root["AB"] = _VALUES.findall(setup_node.group(1))
        notes.append(_MOVED_SETUP_NOTE)
        position = setup_node.end()
    try:
        setup = _fast_setup(root.get("AB"), table, size)
    except KeyError:
        raise _NotSimple("a setup point off the board or not plain") from None
    moves, played, cut, end = _fast_moves(data, position, size)
    if _START.search(data, end) is not None:
        raise _NotSimple("more than one game")
    game_bytes = data[start.start() : end] if played == len(moves) else data[start.start() : cut] + b")"
    record = _record(root, setup, moves, size, source, game_bytes, notes, encoding)
    if played > len(moves):
        record.cut_from = played
    return record


_PLAIN_ROOT = re.compile(rb"(?:[A-Z]{1,64}\[[^\\\]]*\])*")  # one value each, no spaces, no escapes
_PLAIN_PROP = re.compile(rb"([A-Z]{1,64})\[([^\\\]]*)\]")


def _fast_root(data: bytes, begin: int, end: int) -> dict[str, list[bytes]]:
    """The raw property map of the root node's text ``data[begin:end]``, as sgfmill builds it."""
    if _PLAIN_ROOT.fullmatch(data, begin, end):  # the usual root: faster than the general loop
        return _plain_root(data, begin, end)
    return _general_root(data, begin, end)


def _plain_root(data: bytes, begin: int, end: int) -> dict[str, list[bytes]]:
    """_general_root of a root that _PLAIN_ROOT matches whole."""
    root: dict[str, list[bytes]] = {}
    for ident, value in _PLAIN_PROP.findall(data, begin, end):
        key = ident.decode("ascii")
        root[key] = root[key] + [value] if key in root else [value]  # sgfmill merges repeats
    return root


def _general_root(data: bytes, begin: int, end: int) -> dict[str, list[bytes]]:
    """The raw property map of any root text: spaces, escapes and several values allowed."""
    root: dict[str, list[bytes]] = {}
    for ident, values in _PROP.findall(data, begin, end):
        if values[0] == 0x5B and values.count(b"]") == 1:  # "[one value]", the usual case
            values = [values[1:-1]]
        else:
            values = _VALUES.findall(values)
        ident = ident.decode("ascii")
        if ident in root:  # sgfmill merges a repeated property's values
            root[ident] = root[ident] + values
        else:
            root[ident] = values
    return root


def _fast_moves(data: bytes, position: int, size: int) -> tuple[Sequence[tuple[int, int]], int, int, int]:
    """The moves from ``position`` to the game's closing ")" (the first ``move_limit(size)``),
    how many there were, the index in ``data`` after the last one kept, and the index after the ")".

    Tries each of _MOVE_READINGS in turn; raises _NotSimple if none reads them.
    """
    close = data.rfind(b")")
    for reading in _MOVE_READINGS:
        found = reading(data, position, close, size)
        if found is not None:
            return found
    raise _NotSimple("not a linear line of plain move nodes")


def _scan(data: bytes, position: int, close: int, size: int):
    """Plain move nodes (``;B[pd]``, spaced as sgfmill allows) up to the last ")": _compact_moves."""
    if close < position:
        return None
    found = _compact_moves(data, position, close, size)
    return None if found is None else (*found, close + 1)


def _scan_stripped(data: bytes, position: int, close: int, size: int):
    """Move nodes with times or comments (BL, WL, C): those properties dropped, then _scan."""
    if close < position:
        return None
    region = _EXTRA_PROP.sub(b"", data[position:close])
    found = _compact_moves(region, 0, len(region), size)
    if found is None or found[1] > len(found[0]):  # cut: sgfmill keeps the cut game's own bytes
        return None
    return (*found, close + 1)


# The fast path's readings of the move line, tried in this order; each returns (moves, how
# many, index after the last kept, index after the game's ")") or None.  Measured with bench/sgf_tiers.py on the three
# shared corpora (385,254 files): _scan reads all but 111 (every Tygem game, 9-12 us
# each, where sgfmill takes 1.7-1.9 ms); _scan_stripped reads 105 AI games with times
# and comments on every move (0.03 s for them, 0.39 s without it).  A third reading, a
# regex for plain nodes with any spacing, read 65 AI games (0.12 s saved) until _scan
# accepted that spacing itself; what it alone would still take (text with a ")" after
# the game) goes to sgfmill.
_MOVE_READINGS = (_scan, _scan_stripped)


def _compact_moves(data: bytes, start: int, end: int, size: int) -> tuple[Moves, int, int] | None:
    """The moves of ``data[start:end]`` if it is made only of plain move nodes, else None:
    (the first ``move_limit(size)``, how many there are, the index after the last one kept).

    A node is ";", then B or W, "[", a point of the board ("pd"), "tt" on boards up to
    19 or nothing (a pass), then "]"; ASCII whitespace (space, tab, LF, VT, FF, CR: the
    bytes sgfmill's tokeniser skips) may stand before and after the ";" and before the
    "[".  A numba loop over the bytes (tests/test_records.py holds it equal to a regex
    reading written in the test).
    """
    end = min(end, len(data))  # the loop does not check its indexes
    # ";B[]" is the shortest node; int16 (a point is under 2**15): a batch's records hold these
    # buffers until they are replayed, at 8 bytes a move instead of 32 in int64.  The moves past
    # the limit are counted, not kept: a 400,000-pass file costs its bytes' scan, no more.
    out = np.empty((min(move_limit(size), max(0, (end - start) // 4)), 2), dtype=np.int16)
    count, cut = _scan_nodes(np.frombuffer(data, dtype=np.uint8), start, end, _letter_points(size), out)
    return (Moves(out[:min(count, len(out))]), count, cut) if count >= 0 else None


@cache
def _letter_points(size: int) -> np.ndarray:
    """[x letter, y letter] -> padded point (PASS for "tt" on boards up to 19), -2 elsewhere."""
    table = np.full((26, 26), -2, dtype=np.int64)
    for text, point in _point_table(size).items():
        if text:
            table[text[0] - 97, text[1] - 97] = point
    return table


@njit(cache=True, inline="always")
def _after_spaces(buf, i, end):
    """The first index from ``i`` that is not ASCII whitespace (32, 9..13), or ``end``."""
    while i < end and (buf[i] == 32 or 9 <= buf[i] <= 13):
        i += 1
    return i


@njit(cache=True)
def _scan_nodes(buf, start, end, letters, out):
    """(colour, point) rows of the nodes in buf[start:end] into ``out``, as many as it holds;
    (how many nodes there are, the index after the last one kept), or (-1, 0).

    Whitespace is looked for only where the expected byte is not there, and _after_spaces
    is inlined: skipping spaces before every token, or calling it, took 40% longer than
    the first scan, which took no space inside a node; this takes as long (bench/sgf_tiers.py's
    us/file of the Tygem archive).
    """
    i, n, cut = start, 0, start
    while True:
        if i < end and buf[i] != 59:  # ;
            i = _after_spaces(buf, i, end)
        if i == end:
            return n, cut
        if buf[i] != 59:
            return -1, 0
        i += 1
        if i < end and buf[i] != 66 and buf[i] != 87:  # B, W
            i = _after_spaces(buf, i, end)
        if i == end:
            return -1, 0
        colour = 1 if buf[i] == 66 else 2 if buf[i] == 87 else 0
        if colour == 0:
            return -1, 0
        i += 1
        if i < end and buf[i] != 91:  # [
            i = _after_spaces(buf, i, end)
        if i == end or buf[i] != 91:
            return -1, 0
        i += 1
        if i < end and buf[i] == 93:  # ]: a pass
            point = -1
            i += 1
        elif i + 2 < end and buf[i + 2] == 93:
            x, y = buf[i] - 97, buf[i + 1] - 97
            if not (0 <= x < 26 and 0 <= y < 26) or letters[x, y] == -2:
                return -1, 0
            point = letters[x, y]
            i += 3
        else:
            return -1, 0
        if n < out.shape[0]:
            out[n, 0] = colour
            out[n, 1] = point
            cut = i
        n += 1


def _fast_setup(values: list[bytes] | None, table: dict[bytes, int], size: int):
    """Black setup stones from plain AB points; KeyError for anything else ("aa:cc", "pd ")."""
    if not values:
        return []
    points = {table[v] for v in values}
    if PASS in points or len(points) == size * size:
        raise _NotSimple("a pass as a stone, or a full board")
    return [(BLACK, p) for p in sorted(points)]


# --- the reference path: sgfmill ----------------------------------------------------------

_MOVED_SETUP_NOTE = "setup stones in the node after the root moved to the root"


def _sgfmill_games(data: bytes, source: str, encoding: str | None) -> list[GameRecord]:
    """Read every game of a collection with sgfmill's parser.

    sgfmill builds about 550 bytes a node, so it is given no more than the record needs:
    :func:`_game_extent` (a scan of the bytes) finds each game's end and main line; sgfmill
    parses the main line alone, cut after its ``move_limit``-th move.  A game stores its own
    bytes (variations included) unless it is cut.  A main line with more nodes without a move
    than the move limit, or more values than VALUES_PER_MOVE allows, is refused.  Before, 9.8
    MB games held 1.66 GB (2.1 M moves), 1.06 GB (1.9 M comment nodes), 1.88 GB (2.4 M moves
    in a second variation): sgfmill parsed them whole, then the main line was cut.
    """
    records = []
    position = 0
    buf = np.frombuffer(data, dtype=np.uint8)
    while True:
        start = _START.search(data, position)  # where sgfmill's tokeniser starts a game
        if start is None:
            break
        begin, index = start.start(), len(records)
        position, played, root_end, read_end, depth, nodes, open_at_end, values, root_values = \
            _game_extent(buf, begin, -1)
        cut_from, kept = None, played
        if root_values > VALUES_PER_MOVE * move_limit(MAX_SIZE):  # the root is parsed for its size
            raise SgfError(_where(source, index, _too_many_values(root_values)))
        if max(played, nodes - played, values // VALUES_PER_MOVE) > move_limit(1):  # only then can the size matter
            size = _size(_parse(data[begin:root_end] + b")", source, index).sequence[0], _where(source, index, ""))
            if played > move_limit(size):
                cut_from, kept = played, move_limit(size)
                read_end, depth, nodes, _open, values = _game_extent(buf, begin, kept)[3:8]
            if nodes - kept > move_limit(size):
                raise SgfError(_where(source, index, f"{nodes - kept} nodes without a move on the main line "
                                                     f"(limit: {MOVES_PER_POINT} \u00d7 the board's points)"))
            if values > VALUES_PER_MOVE * move_limit(size):
                raise SgfError(_where(source, index, _too_many_values(values)))
        # A game whose text ends before its last ")" is broken: the text read is left open (the
        # whole game if its main line did not end), and sgfmill names the first error it meets.
        if read_end < 0:
            text = data[begin:position]
        else:
            text = data[begin:read_end] + (b"" if open_at_end else b")" * depth)
        tree = _parse(text, source, index)
        records.append(_sgfmill_game(tree, text if cut_from else data[begin:position], source, index,
                                     encoding, cut_from))
    if not records:
        raise SgfError(f"{source}: no SGF data found")
    return records


# Property values sgfmill may be given of a main line, per move of the move limit:
# engine.core.base.VALUES_PER_MOVE, which loadsgf shares (it is imported above).


def _too_many_values(values: int) -> str:
    return (f"{values} property values on the main line (limit: {VALUES_PER_MOVE} \u00d7 "
            f"{MOVES_PER_POINT} \u00d7 the board's points)")


def _parse(text: bytes, source: str, index: int):
    """sgfmill's coarse tree of one game's text; SgfError naming the game if it cannot be parsed."""
    try:
        return sgf_grammar.parse_sgf_game(text)
    except ValueError as exc:
        raise SgfError(_where(source, index, f"cannot parse SGF: {exc}")) from None


def _sgfmill_game(tree, game_bytes: bytes, source: str, index: int, encoding: str | None,
                  cut_from: int | None) -> GameRecord:
    """One game from sgfmill's coarse tree (main line, first variations); ``cut_from``: the
    moves of the game's main line where its text was cut at ``move_limit`` (else None)."""
    notes = []
    if _move_root_setup(tree):
        notes.append(_MOVED_SETUP_NOTE)
    root = dict(tree.sequence[0])  # copy: from_coarse_game_tree rewrites CA in place
    size = _size(root, _where(source, index, ""))
    try:
        game = sgf.Sgf_game.from_coarse_game_tree(tree, override_encoding="ISO-8859-1")
        _board, plays = sgf_moves.get_setup_and_moves(game)
        ab, aw, ae = game.get_root().get_setup_stones()
    except (ValueError, IndexError) as exc:
        reason = str(exc) or "a point is not on the board"
        raise SgfError(_where(source, index, reason)) from None

    setup = [(colour, p) for colour, pts in ((BLACK, ab), (WHITE, aw), (EMPTY, ae))
             for p in sorted(rowcol_to_point(rc, size) for rc in pts)]
    moves = [(_COLOUR[colour], rowcol_to_point(rc, size)) for colour, rc in plays]
    record = _record(root, setup, moves, size, source, game_bytes, notes, encoding)
    record.cut_from = cut_from
    return record


@njit(cache=True, inline="always")
def _is_letter(byte) -> bool:
    return 65 <= byte <= 90 or 97 <= byte <= 122


@njit(cache=True)
def _game_extent(buf, start, limit):
    """Walk the game whose "(" is at ``start`` token by token as sgfmill's tokeniser does
    (``sgf_grammar.tokenise``: whitespace, values up to an unescaped "]", identifiers of 1..64
    letters whose lower-case letters are dropped, ";", "(", ")"), without building the tokens.

    Returns (where the tokeniser stops: after the ")" that closes the game, or at the first
    thing it cannot read; the move nodes of the main line; the end of the root node's last
    token; the end of the text to read: of the main line, or of its ``limit``-th move node if
    that comes first (-1 if neither is met); the game trees open there; the main line's nodes
    up to there; the game trees open where the tokeniser stops: 0 for a whole game; the
    property values up to the end of the text to read; those of the root node).

    The main line is the first variation at each branch: in the text it runs from the start
    to the first ")", every variation after it.  A move node is a node with a B or a W
    (after dropping lower-case letters: ``Black[pd]`` is sgfmill's B), counted once.
    ``limit`` -1: no cut looked for.  tests/test_sgf_cut.py holds it to sgfmill's own parse.
    """
    n = len(buf)
    i = last = start
    depth, played, nodes = 0, 0, 0
    main, move_node, in_limit_node = True, False, False
    root_end, read_end, read_depth, read_nodes = -1, -1, 0, 0
    values, read_values, root_values = 0, 0, 0
    while True:
        while i < n and (buf[i] == 32 or 9 <= buf[i] <= 13):
            i += 1
        if i == n:
            break
        c = buf[i]
        if c == 91:  # [: a value, "\\" escapes the byte after it
            values += 1
            i += 1
            while i < n and buf[i] != 93:
                i += 2 if buf[i] == 92 else 1
            if i >= n:
                break
            i += 1
        elif _is_letter(c):
            upper, first = 0, 0
            j = i
            while j < n and j - i < 64 and _is_letter(buf[j]):
                if buf[j] <= 90:
                    upper += 1
                    first = buf[j]
                j += 1
            i = j
            if main and nodes > 0 and not move_node and upper == 1 and (first == 66 or first == 87):
                move_node = True
                played += 1
                in_limit_node = played == limit
        elif c == 59 or c == 40 or c == 41:  # ; ( )
            if in_limit_node or (c == 41 and main and read_end < 0):
                # the limit-th move node, or the main line, ends before this delimiter
                read_end, read_depth, read_nodes, in_limit_node = last, depth, nodes, False
                read_values = values
            if nodes == 1 and root_end < 0:
                root_end, root_values = last, values
            i += 1
            if c == 59:
                nodes += 1  # read only up to the main line's end: variations come after it
                move_node = False
            elif c == 40:
                depth += 1
            else:
                depth -= 1
                main = False
                if depth == 0:
                    last = i
                    break
        else:
            break
        last = i
    if in_limit_node:
        read_end, read_depth, read_nodes = last, depth, nodes
        read_values = values
    if read_end < 0:
        read_nodes, read_values = nodes, values
    if root_end < 0:
        root_end, root_values = last, values
    return last, played, root_end, read_end, read_depth, read_nodes, depth, read_values, root_values


def _move_root_setup(tree) -> bool:
    """The Fox handicap quirk: AB/AW alone in node 2 of a root without setup or move."""
    seq = tree.sequence
    if len(seq) < 2 or any(k in seq[0] for k in ("AB", "AW", "AE", "B", "W")):
        return False
    second = seq[1]
    if not ("AB" in second or "AW" in second) or "B" in second or "W" in second:
        return False
    for ident in ("AB", "AW", "AE"):
        if ident in second:
            seq[0][ident] = second.pop(ident)
    return True


def _where(source: str, index: int, reason: str) -> str:
    place = source if index == 0 else f"{source} (game {index + 1})"
    return f"{place}: {reason}" if reason else place


# --- shared: the board size, and the record ------------------------------------------------

def _size(root: dict[str, list[bytes]], where: str) -> int:
    """Board size from SZ (default 19), parsed as sgfmill does; SgfError unless 1..25."""
    raw = root.get("SZ", [b"19"])[0]
    try:
        size = int(raw)
    except ValueError:
        raise SgfError(f"{where}: bad board size SZ[{raw.decode('latin-1')}]") from None
    if not 1 <= size <= MAX_SIZE:
        raise SgfError(f"{where}: board size {size} is not between 1 and {MAX_SIZE}")
    return size


def _record(root, setup, moves, size, source, game_bytes, notes, override) -> GameRecord:
    """The record of one game from its raw root properties (shared by both paths)."""
    try:
        header, encoding = read_header(root, notes, override, game_bytes)
    except HeaderTextError as exc:
        raise SgfError(f"{source}: {exc}") from None
    return GameRecord(size=size, setup=setup, moves=moves, source=source, sgf=game_bytes, **header,
                      encoding=encoding, notes=notes)


# --- public API ----------------------------------------------------------------------------

def read_games(data: bytes, source: str, fast: bool = True, encoding: str | None = None) -> list[GameRecord]:
    """Every game in one file's SGF bytes (a collection may hold several).

    ``fast=True`` tries the fast path first and uses sgfmill only for what it
    does not handle; ``fast=False`` always uses sgfmill (the reference, kept for the
    equivalence tests).  ``encoding`` overrides the ``CA`` charset for header text.

    Raises SgfError (naming ``source`` and the reason) when the data holds no game,
    cannot be parsed, has a board size outside 1..25, a point off the board, setup
    stones after the root (other than the handicap quirk above), or header text the
    ``encoding`` override cannot decode.  Does not check that moves are legal.
    """
    if encoding is not None:
        try:
            encoding = codecs.lookup(encoding).name
        except LookupError:
            raise SgfError(f"{source}: unknown encoding {encoding!r}") from None
    if fast:
        try:
            return [_fast_game(data, source, encoding)]
        except _NotSimple:
            pass
    return _sgfmill_games(data, source, encoding)
