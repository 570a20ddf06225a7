"""What answers ``genmove``: the engine's contract with its choosers (``chooser``), random
moves, another GTP engine, and matches between engines."""

from __future__ import annotations


def engine_chain(settings, game, book=None):
    """The chain ``genmove`` asks (``chooser.ChooserChain``): ``book`` (a ``Chooser`` that is
    also the chain's ``Advisor``; ``fuseki-gtp`` passes the opening book, the engine never
    imports it) when given, then the settings' fallback engine (kept in step with ``game``;
    also the chain's ``Referee``), then seeded random moves."""
    from fuseki.engine.players.chooser import ChooserChain, RandomChooser
    from fuseki.engine.players.external import ExternalChooser

    referee = ExternalChooser(settings.fallback_engine, game=game) if settings.fallback_engine else None
    choosers = [c for c in (book, referee) if c is not None] + [RandomChooser(settings.seed)]
    return ChooserChain(choosers, advisor=book, referee=referee)
