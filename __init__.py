"""fuseki: a Go engine speaking GTP v2 that plays its openings from a database of real games.

The repository's root is the package ``fuseki``:

- ``fuseki.engine``: the rules core (``engine.core``), GTP (``engine.gtp``) and the players
  that answer ``genmove`` (``engine.players``: random, another GTP engine, matches);
- ``fuseki.book``: the game database (``book.storage``, ``book.formats``, ``book.analysis.pipeline``)
  and the ways in for people (``book.ui``: the ``fuseki`` command, the shell, the web page);
- ``fuseki.gtp_main``: ``fuseki-gtp``, which builds the move-chooser chain and starts the engine.

Imports only point down: ``engine`` never imports ``book`` (a test checks it).
"""

from __future__ import annotations


def _version() -> str:
    """The version in the package metadata; pyproject.toml's in a checkout that is not installed.

    pyproject.toml is the one place the version is written; installing copies it into the
    metadata that ``importlib.metadata`` reads.
    """
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("fuseki")
    except PackageNotFoundError:
        import tomllib
        from pathlib import Path

        with open(Path(__file__).resolve().parent / "pyproject.toml", "rb") as f:
            return tomllib.load(f)["project"]["version"]


def __getattr__(name: str):
    # computed on first use: reading the metadata costs milliseconds the engine's start-up keeps
    if name == "__version__":
        global __version__
        __version__ = _version()
        return __version__
    raise AttributeError(f"module 'fuseki' has no attribute {name!r}")
