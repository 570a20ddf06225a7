"""What answers ``genmove``: the chooser interface, random moves, another GTP engine, and
matches between engines."""

from __future__ import annotations


def engine_choosers(settings, game) -> list:
    """The engine's own part of a chooser chain: the settings' fallback engine (kept in step
    with ``game``), then seeded random moves.  ``fuseki-gtp`` puts the book in front."""
    from fuseki.engine.players.chooser import RandomChooser
    from fuseki.engine.players.external import ExternalChooser

    chain = []
    if getattr(settings, "fallback_engine", None):
        chain.append(ExternalChooser(settings.fallback_engine, game=game))
    chain.append(RandomChooser(settings.seed))
    return chain
