"""Administrative commands (GTP 6.3.1): who we are and what we understand."""

from __future__ import annotations

import fuseki
from fuseki.engine.gtp.commands.args import count
from fuseki.engine.gtp.commands.registry import command

NAME = "fuseki"


@command("protocol_version")
def protocol_version(game, args):
    count(args, 0)
    return "2"


@command("name")
def name(game, args):
    count(args, 0)
    return NAME


@command("version")
def version(game, args):
    count(args, 0)
    return fuseki.__version__


@command("known_command")
def known_command(game, args):
    (word,) = count(args, 1)
    return "true" if word in game.command_names else "false"


@command("list_commands")
def list_commands(game, args):
    count(args, 0)
    return "\n".join(game.command_names)


@command("quit")
def quit_(game, args):
    # GTP: quit never fails, whatever follows it.
    game.quit = True
    return ""
