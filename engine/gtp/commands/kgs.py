"""KGS extensions (kgsGtp): genmove in cleanup phase, end of game, and the rules in use."""

from __future__ import annotations

from fuseki.engine.gtp.protocol import GtpError

from fuseki.engine.gtp.commands import command
from fuseki.engine.gtp.commands.args import count
from fuseki.engine.gtp.commands.play import genmove

RULES = ("japanese", "chinese", "aga", "new_zealand")


@command("kgs-genmove_cleanup")
def kgs_genmove_cleanup(game, args):
    """Like genmove: the random chooser never passes while it has a move, so dead stones get captured."""
    return genmove(game, args)


@command("kgs-game_over")
def kgs_game_over(game, args):
    count(args, 0)
    return ""


@command("kgs-rules")
def kgs_rules(game, args):
    """Recorded in ``game.rules``; the suicide and superko options stay those of the settings."""
    (rules,) = count(args, 1)
    if rules.lower() not in RULES:
        raise GtpError("unknown rules")
    game.rules = rules.lower()
    return ""
