"""Handicap commands (GTP 4.1 and 6.3.2): fixed, engine-chosen and controller-chosen placement."""

from __future__ import annotations

import random

from fuseki.engine.core.base import PASS, fixed_points, max_fixed
from fuseki.engine.gtp.commands.args import count, integer, vertex, vertex_text
from fuseki.engine.gtp.commands.registry import command
from fuseki.engine.gtp.protocol import GtpError


def _place(game, points: list[int]) -> str:
    game.place_handicap(points)
    return " ".join(vertex_text(p, game.size) for p in points)


def _stone_count(args: list[str]) -> int:
    (text,) = count(args, 1)
    return integer(text)


@command("fixed_handicap")
def fixed_handicap(game, args):
    n = _stone_count(args)
    if not game.is_empty():
        raise GtpError("board not empty")
    if not 2 <= n <= max_fixed(game.size):
        raise GtpError("invalid number of stones")
    return _place(game, fixed_points(n, game.size))


@command("place_free_handicap")
def place_free_handicap(game, args):
    """The fixed points as far as they go, then random free points (seeded like genmove)."""
    n = _stone_count(args)
    if not game.is_empty():
        raise GtpError("board not empty")
    if not 2 <= n < game.size * game.size:
        raise GtpError("invalid number of stones")
    from fuseki.engine.core import base

    points = fixed_points(min(n, max_fixed(game.size)), game.size) if max_fixed(game.size) else []
    rest = [p for p in base.board_points(game.size) if p not in points]
    random.Random(game.settings.seed).shuffle(rest)
    return _place(game, points + rest[:n - len(points)])


@command("set_free_handicap")
def set_free_handicap(game, args):
    if not game.is_empty():
        raise GtpError("board not empty")
    try:
        points = [vertex(v, game.size) for v in args]
    except GtpError:
        raise GtpError("bad vertex list") from None
    if (len(points) < 2 or len(points) >= game.size * game.size or PASS in points
            or len(set(points)) != len(points)):
        raise GtpError("bad vertex list")
    game.place_handicap(points)
    return ""
