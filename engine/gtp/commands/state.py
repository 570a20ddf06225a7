"""The game state the GTP handlers share: settings, the board, the record, the chooser chain.

The ``Board`` (numba) is created on first use, so that ``name`` or
``list_commands`` are answered before numba is even imported.  Every method
that changes the state either succeeds completely or raises before changing
anything, which is how a failing command leaves the state as it was.

``record`` mirrors the board's undo history, one entry per board change:
``("move", color, point)``, ``("handicap", points)`` or
``("setup", color, points)`` (SGF AB/AW/AE; ``EMPTY`` removes).  ``undo``
takes back moves only (GTP 6.3.1: handicap and setup stones are not moves),
and ``printsgf`` writes the record.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fuseki.engine.config import Settings
from fuseki.engine.core.base import COLOUR_LETTER, PASS, RESIGN, point_to_vertex
from fuseki.engine.players.chooser import Advisor, Chooser, ChooserChain, RandomChooser, Referee


@dataclass
class Clock:
    """What the controller told us about time (seconds); stored, not yet used to think."""
    system: str = "none"            # none | absolute | byoyomi | canadian
    main_time: int = 0
    period_time: int = 0
    period_count: int = 0           # byoyomi periods, or stones per canadian period
    left: dict = field(default_factory=dict)  # colour -> (seconds, stones)


class Game:
    """One game as seen through GTP."""

    def __init__(self, settings: Settings | None = None, chain: ChooserChain | None = None):
        self.settings = settings or Settings()
        self.size = self.settings.board_size
        self.komi = self.settings.komi
        self.rules: str | None = None  # as told by kgs-rules; the rules options come from settings
        self.clock = Clock()
        self.quit = False
        self.command_names: list[str] = []
        self.chain = chain or ChooserChain()  # what genmove asks, first to last (engine.players.chooser)
        self._fallback = None
        self._board = None
        self.record: list[tuple] = []
        # with --verbose: told where each chosen move came from ("fuseki: genmove B Q16: corner book")
        self.log_source = None

    # --- the board ---------------------------------------------------------------

    @property
    def board(self):
        """The current Board, created (and numba loaded) on first use."""
        if self._board is None:
            self._board = self.new_board(self.size)
        return self._board

    def new_board(self, size: int):
        from fuseki.engine.core.board import Board  # numba: only when a command needs the board

        return Board(size, komi=self.komi, superko=self.settings.superko,
                     allow_suicide=self.settings.suicide)

    def set_size(self, size: int) -> None:
        """A new empty board of ``size`` (checked by the caller)."""
        self.size = size
        self._board = None
        self.record = []

    def clear(self) -> None:
        if self._board is not None:
            self._board.clear()
        self.record = []

    def set_komi(self, komi: float) -> None:
        self.komi = komi
        if self._board is not None:
            self._board.komi = komi

    def replace(self, board, record: list[tuple]) -> None:
        """Adopt a board built elsewhere (loadsgf) with its record."""
        self.size, self.komi = board.size, board.komi
        self._board, self.record = board, record

    def is_empty(self) -> bool:
        """No stone on the board (passes do not count, as in GNU Go)."""
        return self._board is None or self._board.is_empty()

    # --- changes -------------------------------------------------------------------

    def play(self, color: int, point: int) -> None:
        """Play a move; raises the board's IllegalMove, leaving everything unchanged."""
        self.board.play(color, point)
        self.record.append(("move", color, point))

    def place_handicap(self, points: list[int]) -> None:
        self.board.place_handicap(points)
        self.record.append(("handicap", list(points)))

    def undo(self, moves: int = 1) -> bool:
        """Take back the last ``moves`` moves (>= 1), all or nothing.

        False (nothing changed) when fewer than ``moves`` moves follow the last
        handicap or setup entry: those are not moves and are never taken back.
        """
        trailing = 0
        for entry in reversed(self.record):
            if entry[0] != "move" or trailing >= moves:
                break
            trailing += 1
        if moves < 1 or trailing < moves:
            return False
        for _ in range(moves):
            self.board.undo()
            self.record.pop()
        return True

    @property
    def handicap(self) -> list[int]:
        return next((e[1] for e in self.record if e[0] == "handicap"), [])

    # --- choosing ------------------------------------------------------------------

    @property
    def choosers(self) -> list:
        """The chain's choosers, first to last (``chain.choosers``)."""
        return self.chain.choosers

    @property
    def advisor(self) -> Advisor | None:
        """The chain's advisor (the analysis commands' candidates: the book), or None."""
        return self.chain.advisor

    @property
    def referee(self) -> Referee | None:
        """The chain's other GTP engine (the scoring commands, ``kgs-genmove_cleanup``), or None."""
        return self.chain.referee

    @property
    def fallback(self) -> Chooser:
        """The seeded random chooser that answers when every chooser of the chain has nothing."""
        if self._fallback is None:
            self._fallback = RandomChooser(self.settings.seed)
        return self._fallback

    def choose(self, color: int) -> int:
        """A legal move for ``color``, RESIGN, or PASS.

        Asks each chooser of the chain in turn (a chooser's ``RESIGN`` is passed
        on); a chooser that answers None or an illegal move is passed over, and
        after the chain the seeded random chooser answers; PASS when none has a
        legal move.
        """
        return self._first_move(color)

    def choose_cleanup(self, color: int) -> int:
        """``choose`` for KGS's cleanup phase, where the dead stones must be captured.

        The book (the chain's advisor) is not asked: an opening move means nothing there.
        The referee (another engine) is asked for ``kgs-genmove_cleanup`` (its
        ``choose_cleanup``), which answers None when it does not know that command: its
        plain ``genmove`` may pass with dead stones on the board (GNU Go does).
        Other choosers answer as for ``genmove``; then the seeded random chooser,
        which never passes while it has a legal move that fills no eye of its own.
        """
        return self._first_move(color, cleanup=True)

    def _first_move(self, color: int, cleanup: bool = False) -> int:
        """The first legal move the chain's choosers answer in order (``ChooserChain.order``,
        then the seeded random chooser), RESIGN, or PASS.  With ``log_source`` (``--verbose``):
        the choice's comment, then its source."""
        board = self.board
        for chooser in self.chain.order(self.fallback, cleanup):
            choice = self.chain.ask(chooser, board, color, cleanup)
            if choice is None:
                continue
            point = choice.move
            if point == RESIGN:
                return RESIGN
            if point == PASS or board.is_legal(color, point):
                if self.log_source is not None:
                    who = COLOUR_LETTER[color]
                    if choice.comment:
                        self.log_source(f"fuseki: genmove {who}: {choice.comment}")
                    self.log_source(f"fuseki: genmove {who} "
                                    f"{point_to_vertex(int(point), board.size)}: {choice.source}")
                return int(point)
        return PASS
