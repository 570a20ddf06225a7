"""Time commands (GTP 4.2, 6.3.6): accepted and stored in ``game.clock``; not used to think yet."""

from __future__ import annotations

from fuseki.engine.gtp.commands.args import color, count, integer
from fuseki.engine.gtp.commands.registry import command
from fuseki.engine.gtp.protocol import GtpError


def _non_negative(texts: list[str]) -> list[int]:
    values = [integer(t) for t in texts]
    if any(v < 0 for v in values):
        raise GtpError("syntax error")
    return values


@command("time_settings")
def time_settings(game, args):
    """main_time byo_yomi_time byo_yomi_stones: canadian byo-yomi.

    GTP 4.2: 0 stones with byo-yomi time 0 is absolute time, with byo-yomi
    time > 0 it means no time limit.
    """
    main, period, stones = _non_negative(count(args, 3))
    system = "canadian" if stones else ("none" if period else "absolute")
    _set(game, system, main, period, stones)
    return ""


@command("time_left")
def time_left(game, args):
    col, seconds, stones = count(args, 3)
    c = color(col)
    game.clock.left[c] = tuple(_non_negative([seconds, stones]))
    return ""


@command("kgs-time_settings")
def kgs_time_settings(game, args):
    """none | absolute MAIN | byoyomi MAIN PERIOD_TIME PERIODS | canadian MAIN PERIOD_TIME STONES."""
    if not args:
        raise GtpError("syntax error")
    system, numbers = args[0].lower(), args[1:]
    wanted = {"none": 0, "absolute": 1, "byoyomi": 3, "canadian": 3}
    if system not in wanted or len(numbers) != wanted[system]:
        raise GtpError("syntax error")
    values = _non_negative(numbers) + [0, 0, 0]
    _set(game, system, *values[:3])
    return ""


def _set(game, system: str, main: int, period: int, count_: int) -> None:
    clock = game.clock
    clock.system, clock.main_time, clock.period_time, clock.period_count = system, main, period, count_
    clock.left = {}
