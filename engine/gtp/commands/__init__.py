"""The GTP command handlers, one module per topic, all in one registry.

Each handler is ``handler(game, args) -> str``: ``game`` is a
``state.Game``, ``args`` the command's words; it returns the response text
and raises ``GtpError`` (or lets the board's ``IllegalMove`` through) to
fail.  Registration order is the ``list_commands`` order.

``new_engine(settings, chain)`` is how ``fuseki-gtp`` and the tests get an engine.
"""

from __future__ import annotations

from fuseki.engine.gtp.commands.registry import REGISTRY
from fuseki.engine.gtp.commands.state import Game
from fuseki.engine.gtp.protocol import GtpEngine

# Imported for their registrations (in registry.REGISTRY).  Not sorted: this order is the
# list_commands order (the spec's required commands first).
# isort: off
from fuseki.engine.gtp.commands import core, play, handicap, scoring, timing, sgf, kgs, analysis  # noqa: F401
# isort: on


def new_engine(settings=None, chain=None, log=None) -> GtpEngine:
    """A GTP engine on a fresh game that asks ``chain`` (``engine.players.chooser.ChooserChain``)
    in turn (see ``Game.choose``); without one, the seeded random chooser answers ``genmove``."""
    return GtpEngine(Game(settings, chain), REGISTRY, log)
