"""The engine's contract with what answers ``genmove``: the result, the protocols, the chain.

Declared here, in the engine, so that the book (``book.play.book_chooser``) implements it and
the GTP layer (``engine.gtp``) calls it without knowing the book, and without probing
(``hasattr``/``getattr``) for what a chooser can do:

- ``MoveChoice``: what a chooser answers (as gomill's ``Move_generator_result``): the move
  (a point, ``PASS`` or ``RESIGN``), its ``source`` ("book", "corner book", "ai line",
  "fallback", "random": what ``--verbose`` names) and a ``comment`` (why, for ``--verbose``;
  may be empty).  A chooser answers None when it has nothing to say.
- ``Chooser``: ``choose(board, color) -> MoveChoice | None``, plus ``warm_up()`` (the GTP
  loop calls it on a thread once it starts: the book opens its database then) and
  ``close()`` (at the end of the process: the fallback engine is sent ``quit``).  A chooser
  must not change the board; it may propose a move it has not checked (the game checks
  legality and passes an illegal one over).  Subclass ``Chooser`` to inherit the no-op
  ``warm_up`` and ``close``.
- ``Advisor``: what the analysis commands (``book_moves``, ``lz-analyze``, ...) ask: the
  book's ``next_moves`` and ``min_games``, the corner book's ``corner_candidates`` and the
  stored KataGo values' ``ai_lines`` (each may answer None).
- ``Referee``: another GTP engine that the scoring commands consult (``ask``) and
  ``kgs-genmove_cleanup`` asks (``choose_cleanup``).
- ``ChooserChain``: the choosers ``genmove`` asks, in order, with the chain's advisor and
  referee named explicitly (None when absent) and the seeded random chooser that answers
  last.  ``fuseki-gtp`` (``gtp_main.build_engine``) builds it: book, fallback engine, random.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from fuseki.engine.core.base import PASS, RESIGN


@dataclass(frozen=True)
class MoveChoice:
    """A chooser's answer: ``move`` (a point, ``PASS`` or ``RESIGN``), where it came from
    (``source``, named by ``--verbose``) and why (``comment``, logged by ``--verbose``; may be "")."""

    move: int
    source: str
    comment: str = ""

    @property
    def is_pass(self) -> bool:
        return self.move == PASS

    @property
    def is_resign(self) -> bool:
        return self.move == RESIGN


def point_of(choice: MoveChoice | None) -> int | None:
    """The move of ``choice`` (a point, PASS or RESIGN), or None for no choice."""
    return None if choice is None else choice.move


class Chooser(Protocol):
    """What ``genmove`` asks (see the module docstring); ``name``: its place in the chain as
    ``--verbose`` says it ("book", "fallback", "random")."""

    name: str

    def choose(self, board, color: int) -> MoveChoice | None:
        """A move for ``color`` on ``board``, or None.  Leaves ``board`` unchanged."""
        ...

    def warm_up(self) -> None:
        """Prepare (on the GTP loop's warm-up thread, from the start); default: nothing."""

    def close(self) -> None:
        """Release what the chooser holds (at the end of the process); default: nothing."""


class Advisor(Protocol):
    """What the analysis commands show: the book's candidates (``engine.gtp.commands.analysis``)."""

    min_games: int

    def next_moves(self, board, color: int):
        """The book's ``NextMoves`` (``moves``: entries with ``point``, ``points``, ``games``,
        ``winrate``) for ``color`` on ``board``, or None without a book."""
        ...

    def corner_candidates(self, board, color: int) -> list | None:
        """The corner book's moves (entries as ``next_moves``'), or None without one."""
        ...

    def ai_lines(self, board, color: int, moves, rules: str | None = None,
                 komi: float | None = None) -> list | None:
        """Per move of ``moves``, its stored KataGo values (``winrate``, ``score_lead``, ``loss``,
        ``pv``, ``deep``, ...) or None; None when nothing is stored for the position."""
        ...


class Referee(Protocol):
    """Another GTP engine: the scoring commands ask it, and ``kgs-genmove_cleanup``."""

    def ask(self, board, command: str) -> str | None:
        """Its answer to ``command`` (``final_score``, ``final_status_list ...``) on ``board``, or None."""
        ...

    def choose_cleanup(self, board, color: int) -> MoveChoice | None:
        """Its ``kgs-genmove_cleanup`` move, or None when it does not know the command."""
        ...


def eligible(moves: Sequence, min_games: int) -> list:
    """The candidate moves a chooser may play: not a pass, and seen in at least ``min_games`` games."""
    return [m for m in moves if m.point != PASS and m.games >= min_games]


class RandomChooser(Chooser):
    """Uniformly random legal moves that never fill the player's own single-point eye.

    The same ``seed`` on the same sequence of positions gives the same moves;
    ``seed=None`` draws a fresh one.
    """

    name = "random"

    def __init__(self, seed: int | None = None):
        self.seed = seed
        self._rng = None

    @property
    def rng(self):
        """The numpy generator, made at first use: the GTP front end starts without numpy."""
        if self._rng is None:
            import numpy as np

            self._rng = np.random.default_rng(self.seed)
        return self._rng

    def choose(self, board, color: int) -> MoveChoice:
        return MoveChoice(board.random_move(color, self.rng), self.name)


@dataclass
class ChooserChain:
    """The choosers ``genmove`` asks, first to last (``choosers``), and the two optional faces
    the other commands use, named when the chain is built (None when absent): ``advisor``
    (the analysis commands) and ``referee`` (scoring, ``kgs-genmove_cleanup``).  ``last``
    answers when every chooser has nothing (``Game`` adds the seeded random chooser)."""

    choosers: list[Chooser] = field(default_factory=list)
    advisor: Advisor | None = None
    referee: Referee | None = None

    def names(self) -> list[str]:
        """The chain's order as ``--verbose`` names its sources (for the docs and the tests)."""
        return [c.name for c in self.choosers]

    def order(self, last: Chooser, cleanup: bool = False) -> list[Chooser]:
        """The choosers asked for ``genmove``, in order, then ``last``; for ``kgs-genmove_cleanup``
        (``cleanup``) without the advisor: an opening move means nothing there."""
        return [c for c in [*self.choosers, last] if not (cleanup and c is self.advisor)]

    def ask(self, chooser: Chooser, board, color: int, cleanup: bool = False) -> MoveChoice | None:
        """``chooser``'s answer: its ``choose``, or with ``cleanup`` the referee's ``choose_cleanup``
        (its ``kgs-genmove_cleanup``, None when it does not know the command)."""
        if cleanup and chooser is self.referee:
            return self.referee.choose_cleanup(board, color)
        return chooser.choose(board, color)

    def warm_up(self) -> None:
        for chooser in self.choosers:
            chooser.warm_up()

    def close(self, log=None) -> None:
        """Close every chooser; one that fails is said on ``log`` and the others still close."""
        for chooser in self.choosers:
            try:
                chooser.close()
            except Exception as exc:  # noqa: BLE001 - the others still close, the process still ends
                if log is not None:
                    log(f"{exc!r} while closing")
