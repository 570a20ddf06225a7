"""The GTP command handlers, one module per topic, all in one registry.

Each handler is ``handler(game, args) -> str``: ``game`` is a
``state.Game``, ``args`` the command's words; it returns the response text
and raises ``GtpError`` (or lets the board's ``IllegalMove`` through) to
fail.  Registration order is the ``list_commands`` order.

``new_engine(settings)`` is how the CLI and the tests get an engine.
"""

from __future__ import annotations

from engine.gtp import Engine, Registry

REGISTRY = Registry()
command = REGISTRY.command

# Imported for their registrations; must come after REGISTRY exists.
from . import core, play, handicap, scoring, timing, sgf, kgs, analysis  # noqa: E402,F401
from .state import Game  # noqa: E402


def new_engine(settings=None, chooser=None, log=None) -> Engine:
    """A GTP engine on a fresh game; ``chooser`` defaults to the seeded random chooser."""
    return Engine(Game(settings, chooser), REGISTRY, log)
