"""SGF commands (GTP 6.3.7 loadsgf, GNU Go's printsgf), with sgfmill loaded on first use.

Only what GTP needs: size, komi, handicap, setup stones (AB/AW/AE, in any
node of the main line) and the main line's moves.  Reading SGF for the book
is ``book/formats/sgf_reader.py``'s job.  sgfmill's points are (row from the bottom,
column); ours are padded indices (see ``engine.core.coords``).
"""

from __future__ import annotations

import itertools
import os
import re
import stat
from pathlib import Path

import fuseki
from fuseki.engine.core.base import (
    BLACK,
    EMPTY,
    MAX_KOMI,
    MAX_RECORD_BYTES,
    MAX_SIZE,
    MOVES_PER_POINT,
    VALUES_PER_MOVE,
    WHITE,
    IllegalMove,
    move_limit,
    point_to_rowcol,
    rowcol_to_point,
)
from fuseki.engine.gtp.commands.args import count, integer
from fuseki.engine.gtp.commands.registry import command
from fuseki.engine.gtp.protocol import GtpError

_COLOURS = {"b": BLACK, "w": WHITE}
MAX_FILE_BYTES = MAX_RECORD_BYTES  # the import's too (book.formats.sources.Limits): no game record is bigger
# Nodes of a file loadsgf reads: sgfmill builds an object per node (about 1.6 KB each), so 10 MB
# of passes (1.3 M nodes) held 2.1 GB for 58 s.  10 x the longest game the import keeps (2,500
# moves on 25x25); counted before sgfmill parses, outside property values.
MAX_NODES = 25_000
_VALUE = re.compile(rb"\[(?:\\.|[^\]\\])*\]", re.DOTALL)


@command("loadsgf")
def loadsgf(game, args):
    """loadsgf FILE [MOVE_NUMBER]: the position before move MOVE_NUMBER (default: the end).

    Moves are numbered from 1 along the main line, setup stones are not moves.
    Fails with ``cannot load file`` (state unchanged) for a missing or broken
    file, one over MAX_FILE_BYTES or MAX_NODES, a size outside 2..25, a komi outside
    +-MAX_KOMI or an illegal move before the stop; with ``cannot load file: over 80000 property
    values (...)`` for one of more values than the largest board allows (TooManyValues).
    """
    path, *rest = count(args, 1, 2)
    stop = integer(rest[0]) if rest else None
    if stop is not None and stop < 1:
        raise GtpError("syntax error")
    try:
        board, record = _replay(game, _read(path), stop)
    except TooManyValues as exc:
        raise GtpError(f"cannot load file: {exc}") from None
    except (OSError, ValueError, IllegalMove):
        raise GtpError("cannot load file") from None
    game.replace(board, record)
    return ""


class TooManyValues(ValueError):
    """A file of more property values than sgfmill may be given: VALUES_PER_MOVE x the move
    limit of the largest board (80,000), counted before sgfmill parses.

    The whole file's, whatever its board: loadsgf's nodes are bounded by MAX_NODES, not by the
    board's move limit (it loads games longer than the import keeps), so two values a node fit.
    """


def _read(path: str) -> bytes:
    """The bytes of a regular file of at most MAX_FILE_BYTES, MAX_NODES nodes and the property
    values any board allows; OSError or ValueError otherwise (TooManyValues for the values).

    Never reads a device or a FIFO (``loadsgf /dev/zero`` would fill the memory, a FIFO
    would block the engine), nor more than the limit.  The values are counted as the import
    counts them before sgfmill builds a node's values (about 200 bytes each: 5.2 M empty values
    held 434 MB): ``[`` outside values, the count stopped one past the limit.
    """
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise ValueError(f"{path} is not a regular file")
    with open(path, "rb") as handle:
        data = handle.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise ValueError(f"{path} is over {MAX_FILE_BYTES} bytes")
    most = VALUES_PER_MOVE * move_limit(MAX_SIZE)
    if data.count(b"[") > most:  # first: the nodes' count below walks the values
        if sum(1 for _ in itertools.islice(_VALUE.finditer(data), most + 1)) > most:
            raise TooManyValues(f"over {most} property values (limit: {VALUES_PER_MOVE} \u00d7 {MOVES_PER_POINT} "
                                "\u00d7 the points of the largest board)")
    semicolons = data.count(b";")
    if semicolons > MAX_NODES:  # some may be inside values (comments): those are not nodes
        if semicolons - sum(found.group().count(b";") for found in _VALUE.finditer(data)) > MAX_NODES:
            raise ValueError(f"{path} has over {MAX_NODES} nodes")
    return data


@command("printsgf")
def printsgf(game, args):
    """printsgf [FILE]: the game as SGF (size, komi, handicap, setup, moves), or written to FILE."""
    args = count(args, 0, 1)
    text = _record_sgf(game)
    if not args:
        return text
    try:
        # Only regular files: opening a FIFO nobody reads blocks the engine, and a device
        # such as /dev/stdout would write into the GTP stream.
        if os.path.exists(args[0]) and not stat.S_ISREG(os.stat(args[0]).st_mode):
            raise OSError(f"{args[0]} is not a regular file")
        Path(args[0]).write_text(text + "\n", encoding="utf-8")
    except (OSError, ValueError):  # ValueError: a NUL in the name
        raise GtpError("cannot save file") from None
    return ""


def _replay(game, data: bytes, stop: int | None):
    """(board, record) of the file's main line up to move ``stop``; raises ValueError, IllegalMove."""
    from sgfmill import sgf

    tree = sgf.Sgf_game.from_bytes(data)
    size = tree.get_size()
    if not 2 <= size <= 25:
        raise ValueError(f"board size {size}")
    root = tree.get_root()
    board = game.new_board(size)
    board.komi = tree.get_komi() if root.has_property("KM") else game.komi
    if not -MAX_KOMI <= board.komi <= MAX_KOMI:  # NaN too
        raise ValueError(f"komi {board.komi}")
    record: list[tuple] = []
    moves = 0
    for node in tree.get_main_sequence():
        colour, move = node.get_move()
        if colour is not None and stop is not None and moves + 1 >= stop:
            break  # nothing of the node holding move ``stop``, setup included
        if node.has_setup_stones():
            _setup(board, record, node, size, handicap=node is root and _handicap(root) >= 2)
        if colour is None:
            continue
        point = rowcol_to_point(move, size)
        board.play(_COLOURS[colour], point)
        record.append(("move", _COLOURS[colour], point))
        moves += 1
    if moves == 0 and root.has_property("PL"):
        board.to_move = _COLOURS[root.get("PL")]
    return board, record


def _handicap(root) -> int:
    """HA as an integer, 0 when absent or unreadable (HA[1] and worse exist in the wild)."""
    try:
        return int(root.get("HA")) if root.has_property("HA") else 0
    except ValueError:
        return 0


def _setup(board, record, node, size, handicap) -> None:
    black, white, empty = node.get_setup_stones()
    if handicap and black and not white and not empty and board.is_empty():
        points = sorted(rowcol_to_point(m, size) for m in black)
        board.place_handicap(points)
        record.append(("handicap", points))
        return
    for colour, stones in ((EMPTY, empty), (BLACK, black), (WHITE, white)):
        if stones:
            points = sorted(rowcol_to_point(m, size) for m in stones)
            board.set_stones(colour, points)
            record.append(("setup", colour, points))


def _record_sgf(game) -> str:
    """The record as one SGF game: setup before the first move goes in the root node.

    Nodes are added as children of the last one (sgfmill's ``extend_main_sequence`` walks the
    whole main line each time: printsgf of 20,000 moves was quadratic, 28 s).
    """
    from sgfmill import sgf

    size = game.size
    tree = sgf.Sgf_game(size)
    root = tree.get_root()
    root.set("KM", game.komi)
    root.set("AP", ("fuseki", fuseki.__version__))
    node, stones = root, {BLACK: set(), WHITE: set(), EMPTY: set()}
    for entry in game.record:
        if entry[0] == "move":
            _flush(node, stones)
            node = node.new_child()
            node.set_move("b" if entry[1] == BLACK else "w", point_to_rowcol(entry[2], size))
            continue
        colour, points = (BLACK, entry[1]) if entry[0] == "handicap" else entry[1:]
        moves = {point_to_rowcol(p, size) for p in points}
        if node.has_property("B") or node.has_property("W") or any(moves & s for s in stones.values()):
            _flush(node, stones)  # a point changed twice needs a node of its own
            node = node.new_child()
        if entry[0] == "handicap":
            root.set("HA", len(points))
        stones[colour].update(moves)
    _flush(node, stones)
    return tree.serialise().decode("utf-8").strip()


def _flush(node, stones) -> None:
    if any(stones.values()):
        node.set_setup_stones(stones[BLACK], stones[WHITE], stones[EMPTY])
    for s in stones.values():
        s.clear()
