"""Board and play commands (GTP 6.3.2-6.3.4): size, komi, moves, undo, and looking at the board."""

from __future__ import annotations

from fuseki.engine.core.base import BLACK, MAX_KOMI, MAX_SIZE, MIN_SIZE, RESIGN, WHITE
from fuseki.engine.gtp.commands.args import color, count, integer, number, vertex, vertex_text
from fuseki.engine.gtp.commands.registry import command
from fuseki.engine.gtp.protocol import GtpError


@command("boardsize")
def boardsize(game, args):
    (text,) = count(args, 1)
    size = integer(text)
    if not MIN_SIZE <= size <= MAX_SIZE:
        raise GtpError("unacceptable size")
    game.set_size(size)
    return ""


@command("clear_board")
def clear_board(game, args):
    count(args, 0)
    game.clear()
    return ""


@command("komi")
def komi(game, args):
    """komi K: a float with |K| <= MAX_KOMI, else ``komi out of range`` (komi unchanged)."""
    (text,) = count(args, 1)
    value = number(text)
    if not -MAX_KOMI <= value <= MAX_KOMI:
        raise GtpError(f"komi out of range (-{MAX_KOMI}..{MAX_KOMI})")
    game.set_komi(value)
    return ""


@command("play")
def play(game, args):
    col, ver = count(args, 2)
    c, point = color(col), vertex(ver, game.size)
    game.play(c, point)  # IllegalMove -> "illegal move"
    return ""


def play_chosen(game, args, choose) -> str:
    """What ``genmove`` and its variants answer: ``choose(colour)``'s move, played, or ``resign``."""
    (col,) = count(args, 1)
    c = color(col)
    point = choose(c)
    if point == RESIGN:
        return "resign"
    game.play(c, point)
    return vertex_text(point, game.size)


@command("genmove")
def genmove(game, args):
    return play_chosen(game, args, game.choose)


@command("reg_genmove")
def reg_genmove(game, args):
    (col,) = count(args, 1)
    point = game.choose(color(col))
    return "resign" if point == RESIGN else vertex_text(point, game.size)


@command("undo")
def undo(game, args):
    """undo [N]: take back one move, or N moves all or nothing (``cannot undo``, nothing changed).

    GTP 6.3.3's undo has no argument, but qGo sends ``undo 0``, which GNU Go 3.8
    (ignoring any argument) answers by taking back one move: 0 is one move here
    too.  N >= 1 takes back N moves, as GNU Go's ``gg-undo N`` does.  A negative
    or non-integer N is a ``syntax error``.
    """
    (text,) = count(args, 0, 1) or ["1"]
    moves = integer(text)
    if moves < 0:
        raise GtpError("syntax error")
    if not game.undo(max(moves, 1)):
        raise GtpError("cannot undo")
    return ""


@command("showboard")
def showboard(game, args):
    count(args, 0)
    return "\n" + diagram(game)


@command("list_stones")
def list_stones(game, args):
    """GNU Go extension: the vertices of one colour's stones."""
    (col,) = count(args, 1)
    c = color(col)
    if game.is_empty():
        return ""
    return " ".join(vertex_text(p, game.size) for p in game.board.stones(c))


def diagram(game) -> str:
    """GNU Go's showboard layout: letters above and below, row numbers on both sides,
    ``X`` black, ``O`` white, ``.`` empty, ``+`` star points, prisoners on the right."""
    captures = game.board.captures
    notes = {2: f"WHITE (O) has captured {captures[WHITE]} stones",
             1: f"BLACK (X) has captured {captures[BLACK]} stones"}
    return "\n".join(game.board.diagram(notes=notes))
