"""KGS extensions (kgsGtp): genmove in cleanup phase, end of game, and the rules in use."""

from __future__ import annotations

from fuseki.engine.gtp.commands.args import count
from fuseki.engine.gtp.commands.play import play_chosen
from fuseki.engine.gtp.commands.registry import command
from fuseki.engine.gtp.protocol import GtpError

RULES = ("japanese", "chinese", "aga", "new_zealand")


@command("kgs-genmove_cleanup")
def kgs_genmove_cleanup(game, args):
    """genmove for the cleanup phase (dead stones disputed): see ``Game.choose_cleanup``.

    Not the book, and not the fallback engine's plain genmove (GNU Go passes with
    dead stones left): the fallback engine's own ``kgs-genmove_cleanup`` when it has
    one, else the random chooser, which does not pass while it has a move.
    """
    return play_chosen(game, args, game.choose_cleanup)


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
