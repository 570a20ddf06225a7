"""``fuseki-gtp``: the fuseki engine on stdin/stdout, with the opening book in front.

This is the program that assembles the engine: it builds the move-chooser chain (the book,
then the fallback engine of the settings, then random moves) and hands it to the GTP
engine, which knows only the chooser interface.  ``python3 gtp_main.py [flags]`` runs it
from a checkout, installed or not.
"""

from __future__ import annotations

import os
import sys


def build_engine(settings=None, verbose: bool = False, log=None):
    """A GTP engine whose ``genmove`` asks the book, then the fallback engine, then random moves.

    Says first which book it uses (on ``log``, else stderr), without opening it.
    """
    from fuseki.book.play.book_chooser import book_choice, from_settings
    from fuseki.engine.gtp.commands.registry import REGISTRY
    from fuseki.engine.gtp.commands.state import Game
    from fuseki.engine.gtp.protocol import GtpEngine
    from fuseki.engine.players import engine_chain

    game = Game(settings)
    _location, line = book_choice(game.settings)
    if log is None:
        print(line, file=sys.stderr, flush=True)
    else:
        log(line)
    # the chain genmove asks, in this order (engine.players.chooser.ChooserChain): the book (also
    # the analysis commands' advisor), the settings' fallback engine (also the scoring commands'
    # referee), seeded random moves
    game.chain = engine_chain(game.settings, game, book=from_settings(game.settings, verbose, log))
    if verbose:
        game.log_source = log or (lambda text: print(text, file=sys.stderr, flush=True))
    return GtpEngine(game, REGISTRY, log)


# What the engine imports once it plays (found, not imported, at start: the first answer
# must not wait for numba).  pyproject.toml's dependencies are the full list.
ENGINE_NEEDS = ("numpy", "numba", "sgfmill", "sqlalchemy")
INSTALL = "python3 -m venv .venv && .venv/bin/python -m pip install -e ."


REEXEC_MARK = "FUSEKI_GTP_REEXEC"  # set once the checkout's .venv interpreter took over: never loop


def _checkout_venv_python() -> str | None:
    """The .venv interpreter of the checkout this file is in, if there is one and it is not this one."""
    from pathlib import Path

    candidate = Path(__file__).resolve().parent / ".venv" / "bin" / "python"
    if not candidate.exists() or Path(sys.prefix).resolve() == candidate.parent.parent.resolve():
        return None
    return str(candidate)


def missing_dependency() -> str | None:
    """The first package the engine needs that this interpreter cannot import, or None."""
    import importlib.util

    return next((name for name in ENGINE_NEEDS if importlib.util.find_spec(name) is None), None)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``fuseki-gtp`` console script."""
    from fuseki.engine.gtp.cli import main as serve_gtp

    missing = missing_dependency()
    if missing is not None:
        checkout_python = _checkout_venv_python()
        if checkout_python and os.environ.get(REEXEC_MARK) != "1":
            # run as `python3 gtp_main.py` by an interpreter without fuseki's packages (a GUI's
            # engine command, the system python3): the checkout's own .venv has them
            os.environ[REEXEC_MARK] = "1"
            os.execv(checkout_python, [checkout_python, __file__, *(sys.argv[1:] if argv is None else argv)])
        print(f"fuseki-gtp: the package {missing} is not installed for {sys.executable}; "
              f"install fuseki with its dependencies (in the checkout: {INSTALL})", file=sys.stderr)
        return 2
    return serve_gtp(argv, build_engine)


def use_this_checkout() -> None:
    """Make ``import fuseki`` load the checkout this file is in (run as a script from a clone,
    whether or not fuseki is installed, and whichever copy is)."""
    import importlib.util
    from pathlib import Path

    if "fuseki" in sys.modules:
        return
    root = Path(__file__).resolve().parent
    spec = importlib.util.spec_from_file_location("fuseki", root / "__init__.py",
                                                  submodule_search_locations=[str(root)])
    module = importlib.util.module_from_spec(spec)
    sys.modules["fuseki"] = module
    spec.loader.exec_module(module)


if __name__ == "__main__":
    use_this_checkout()
    raise SystemExit(main())
