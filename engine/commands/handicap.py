"""Handicap commands (GTP 4.1 and 6.3.2): fixed, engine-chosen and controller-chosen placement."""

from __future__ import annotations

import random

from engine.gtp import GtpError

from . import command
from .args import count, integer, vertex, vertex_text
from .state import PASS

# GTP 4.1.1: the order in which the fixed points are taken, as (column, row) with
# 0 = the near star line, 1 = the middle, 2 = the far star line, rows from the bottom.
_PATTERN = {
    2: ["00", "22"],
    3: ["00", "22", "02"],
    4: ["00", "22", "02", "20"],
    5: ["00", "22", "02", "20", "11"],
    6: ["00", "22", "02", "20", "01", "21"],
    7: ["00", "22", "02", "20", "01", "21", "11"],
    8: ["00", "22", "02", "20", "01", "21", "10", "12"],
    9: ["00", "22", "02", "20", "01", "21", "10", "12", "11"],
}


def max_fixed(size: int) -> int:
    """GTP 4.1.1: no fixed handicap below 7x7, at most 4 on 7x7 and even sizes, else 9."""
    if size < 7:
        return 0
    return 4 if size == 7 or size % 2 == 0 else 9


def fixed_points(n: int, size: int) -> list[int]:
    """The GTP fixed placement of ``n`` stones (2 <= n <= max_fixed(size)), as points."""
    from engine import coords

    edge = 2 if size < 13 else 3  # the star line: 3rd line below 13x13, else 4th
    line = {"0": edge, "1": (size - 1) // 2, "2": size - 1 - edge}
    return [coords.xy_to_point(line[c], size - 1 - line[r], size) for c, r in _PATTERN[n]]


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
    from engine import coords

    points = fixed_points(min(n, max_fixed(game.size)), game.size) if max_fixed(game.size) else []
    rest = [p for p in coords.board_points(game.size) if p not in points]
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
