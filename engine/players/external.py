"""A move chooser backed by another GTP engine (``--fallback-engine "gnugo --mode gtp"``).

``ExternalChooser(command, game=...)`` starts the engine on first use and
keeps it in step *lazily*: before each question it compares what the engine
has been told (size, komi, the list of record entries, the clock) with the
game, then

- sends only the new record entries (``play``; handicap stones with
  ``set_free_handicap``, other setup stones as ``play``) when what it was told
  is a prefix of the game's record (the usual case: one or two moves);
- sends ``undo`` for moves taken back, when the engine knows ``undo``;
- otherwise starts again: ``boardsize``, ``clear_board``, ``komi`` and the
  whole record (after ``loadsgf``, a new game, or anything unexpected).

``game`` is anything with ``record`` (``engine.gtp.commands.state.Game``'s
entries: ``("move", colour, point)``, ``("handicap", points)``,
``("setup", colour, points)``) and ``clock``; without it the board's own
``moves`` are the record.  Time settings and ``time_left`` are forwarded when
they change.

``choose`` returns a ``MoveChoice`` (a point, ``PASS`` or ``RESIGN``; source "fallback"), or
None when the engine has no usable answer, so the caller asks its own chooser instead.
``choose_cleanup`` is the same with ``kgs-genmove_cleanup``, and None when the
engine does not list that command.  It never
raises: an engine that dies, times out, answers garbage or an illegal move
(checked with ``board.legal_reason``) is reported on stderr and left alone
for the rest of that game (a new ``clear_board``/``boardsize``/``loadsgf``
gives it another chance, restarted if it died, at most ``max_restarts``
times).  A position the engine cannot be told (e.g. SGF stones removed with
AE, or a move it refuses) costs only that one question.

Only the standard library and the core's numpy-free ``base`` are imported here, so the
GTP front end still starts without numpy.
"""

from __future__ import annotations

import atexit
import re
import sys
from collections.abc import Callable

from fuseki.engine.core.base import BLACK, EMPTY, PASS, RESIGN, CoordinateError, point_to_vertex, vertex_to_point
from fuseki.engine.players.chooser import Chooser, MoveChoice
from fuseki.engine.players.gtp_client import GtpClient, GtpClientError, GtpFailure

CLEANUP = "kgs-genmove_cleanup"  # KGS's genmove for the cleanup phase: capture dead stones, no pass
_VERTEX = re.compile(r"[A-Za-z][0-9]{1,2}")
_SCORE = re.compile(r"0|[BW]\+[0-9]+(\.[0-9]+)?|[BW]\+R(esign)?", re.IGNORECASE)


class OutOfStep(Exception):
    """The engine cannot be told the current position."""


def _stderr(text: str) -> None:
    print(f"fuseki: fallback engine: {text}", file=sys.stderr, flush=True)


class ExternalChooser(Chooser):
    """``choose(board, color)`` answered by a GTP engine subprocess; see the module docstring.
    A ``Chooser`` and the chain's ``Referee`` (``engine.players.chooser``).

    ``timeout`` bounds each answer (seconds); ``log`` receives one line per
    problem (default: stderr).  Starting the process is deferred to the first
    question.
    """

    name = "fallback"

    def __init__(self, command: str, game=None, timeout: float = 60.0,
                 log: Callable[[str], None] | None = None, max_restarts: int = 3):
        self.command = command
        self.game = game
        self.timeout = timeout
        self.log = log or _stderr
        self.max_restarts = max_restarts
        self.client: GtpClient | None = None
        self.starts = 0
        self.disabled: str | None = None   # why the engine is not asked in this game
        self._disabled_in = None           # the record list of the game it failed in
        self._forget()
        atexit.register(self.close)

    def _forget(self) -> None:
        """Nothing is known about the engine's state: the next question resynchronises."""
        self._size: int | None = None
        self._komi: float | None = None
        self._sent: list[tuple] = []
        self._clock: tuple | None = None
        self._left: dict = {}

    # --- the chooser -----------------------------------------------------------------------

    def choose(self, board, color: int) -> MoveChoice | None:
        """The engine's move for ``color`` (point, PASS or RESIGN), or None; never raises."""
        client = self._ready(board)
        return None if client is None else self._generate(client, board, color, "genmove")

    def choose_cleanup(self, board, color: int) -> MoveChoice | None:
        """The engine's ``kgs-genmove_cleanup`` move for ``color``, or None when it does not
        know the command (or has no usable answer); never raises.

        Plain ``genmove`` is no substitute: an engine such as GNU Go passes there with
        dead stones still on the board, which is what the cleanup phase must remove.
        """
        client = self._ready(board)
        if client is None or not client.knows(CLEANUP):
            return None
        return self._generate(client, board, color, CLEANUP)

    def _generate(self, client: GtpClient, board, color: int, command: str) -> MoveChoice | None:
        """``command`` (genmove or its cleanup form, which play the move) for ``color``."""
        try:
            self._sync(client, board)
            answer = client.send(f"{command} " + ("b" if color == BLACK else "w"), self.timeout)
            point = self._parse_move(answer, board)
        except OutOfStep as exc:
            self.log(f"cannot follow this position ({exc}); fuseki chooses this move itself")
            self._forget()
            return None
        except (GtpClientError, ValueError) as exc:
            self._fail(str(exc))
            return None
        if point == RESIGN:
            return MoveChoice(RESIGN, self.name)
        reason = board.legal_reason(color, point)
        if reason is not None:
            self._fail(f"answered the illegal move '{answer}' ({reason})")
            return None
        self._sent.append(("move", color, point))  # genmove (and cleanup) play it in the engine
        return MoveChoice(point, self.name)

    def ask(self, board, command: str) -> str | None:
        """The answer to ``final_score`` or ``final_status_list STATUS`` in the current
        position, checked to be well-formed; None when the engine does not know the command
        or cannot answer it.  Never raises."""
        client = self._ready(board)
        if client is None or not client.knows(command.split()[0]):
            return None
        try:
            self._sync(client, board)
            answer = client.send(command, self.timeout)
        except OutOfStep:
            self._forget()
            return None
        except GtpFailure:
            return None
        except GtpClientError as exc:
            self._fail(str(exc))
            return None
        if command == "final_score":
            return answer.upper() if _SCORE.fullmatch(answer) else None
        return answer if all(_VERTEX.fullmatch(w) for w in answer.split()) else None

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None

    # --- process and failures --------------------------------------------------------------

    def _ready(self, board) -> GtpClient | None:
        """A live client for this game, started or restarted as needed; None when not to ask."""
        if self.disabled is not None:
            if self._token(board) is self._disabled_in:
                return None
            self.disabled = None  # a new game: try again
        if self.client is not None and self.client.alive():
            return self.client
        if self.client is not None and self.disabled is None:  # died since the last question
            code = self.client.proc.poll()
            self._fail(f"'{self.command}' is gone (exit code {code})", board)
            return None
        self.close()
        if self.starts > self.max_restarts:
            return None
        self.starts += 1
        self._forget()
        try:
            self.client = GtpClient(self.command, timeout=self.timeout)
            self.client.list_commands()
        except GtpClientError as exc:
            self._fail(str(exc), board)
            return None
        if self.starts > 1:
            self.log(f"restarted '{self.command}'")
        return self.client

    def _fail(self, why: str, board=None) -> None:
        self.log(f"{why}; fuseki plays on its own for the rest of this game")
        self.disabled = why
        self._disabled_in = self._token(board)
        if self.client is not None and not self.client.alive():
            self.close()
        self._forget()

    def _token(self, board):
        """The list object holding this game's record: a new game gets a new one."""
        if self.game is not None:
            return self.game.record
        return board.moves if board is not None else None

    # --- keeping the engine in step ------------------------------------------------------

    def _record(self, board) -> list[tuple]:
        if self.game is not None:
            return list(self.game.record)
        return [("move", c, p) for c, p in board.moves]

    def _sync(self, client: GtpClient, board) -> None:
        """Tell the engine what changed since it was last told; raises OutOfStep, GtpClientError.

        When the quick way fails (say ``undo`` refused), starts again from an empty board once.
        """
        try:
            self._sync_once(client, board)
        except OutOfStep:
            self._forget()
            self._sync_once(client, board)

    def _sync_once(self, client: GtpClient, board) -> None:
        target = self._record(board)
        if self._size != board.size or not self._can_reach(client, target):
            self._restart_game(client, board.size)
        if self._komi != board.komi:
            self._send(client, f"komi {board.komi:g}")
            self._komi = board.komi
        while len(self._sent) > len(target) or self._sent != target[:len(self._sent)]:
            self._send(client, "undo")
            self._sent.pop()
        for entry in target[len(self._sent):]:
            self._tell(client, entry, board.size)
            self._sent.append(entry)
        self._sync_clock(client)

    def _can_reach(self, client: GtpClient, target: list[tuple]) -> bool:
        """True when the engine's record can become ``target`` by undoing moves and playing on."""
        common = 0
        for a, b in zip(self._sent, target):
            if a != b:
                break
            common += 1
        extra = self._sent[common:]
        if not extra:
            return True
        # undo only where it is cheaper than replaying the game (not after loadsgf, say)
        return len(extra) <= common and client.knows("undo") and all(e[0] == "move" for e in extra)

    def _restart_game(self, client: GtpClient, size: int) -> None:
        self._send(client, f"boardsize {size}")
        self._send(client, "clear_board")
        self._size, self._komi, self._sent = size, None, []

    def _tell(self, client: GtpClient, entry: tuple, size: int) -> None:
        if entry[0] == "move":
            self._send(client, f"play {_colour(entry[1])} {_vertex(entry[2], size)}")
        elif entry[0] == "handicap" and client.knows("set_free_handicap"):
            self._send(client, "set_free_handicap " + " ".join(_vertex(p, size) for p in entry[1]))
        else:
            colour, points = (BLACK, entry[1]) if entry[0] == "handicap" else entry[1:]
            if colour == EMPTY:
                raise OutOfStep("stones removed by setup")
            for p in points:
                self._send(client, f"play {_colour(colour)} {_vertex(p, size)}")

    def _sync_clock(self, client: GtpClient) -> None:
        clock = getattr(self.game, "clock", None)
        if clock is None:
            return
        settings = (clock.system, clock.main_time, clock.period_time, clock.period_count)
        if settings != self._clock and (self._clock is not None or settings != ("none", 0, 0, 0)):
            self._clock, self._left = settings, {}
            self._quietly(client, _time_settings(client, *settings))
        for colour, left in clock.left.items():
            if self._left.get(colour) != left:
                self._left[colour] = left
                self._quietly(client, f"time_left {_colour(colour)} {left[0]} {left[1]}")

    def _send(self, client: GtpClient, command: str) -> str:
        try:
            return client.send(command, self.timeout)
        except GtpFailure as exc:
            raise OutOfStep(f"'{command}' refused: {exc.message}") from None

    def _quietly(self, client: GtpClient, command: str) -> None:
        """Time commands: an engine that does not take them still plays."""
        try:
            client.send(command, self.timeout)
        except GtpFailure:
            pass

    def _parse_move(self, answer: str, board) -> int:
        """PASS, RESIGN or a point; ValueError for anything else."""
        word = answer.strip().lower()
        if word == "resign":
            return RESIGN
        if word == "pass":
            return PASS
        if not _VERTEX.fullmatch(word):
            raise ValueError(f"answered garbage to genmove: {answer[:80]!r}")
        try:
            return vertex_to_point(word, board.size)
        except CoordinateError:
            raise ValueError(f"answered a vertex off the board: {answer!r}") from None


def _colour(colour: int) -> str:
    return "b" if colour == BLACK else "w"


def _vertex(point: int, size: int) -> str:
    return point_to_vertex(point, size)


def _time_settings(client: GtpClient, system: str, main: int, period: int, count: int) -> str:
    """The GTP command for a clock (GTP 4.2 spells no limit as period > 0 with 0 stones)."""
    if system == "byoyomi":
        if client.knows("kgs-time_settings"):
            return f"kgs-time_settings byoyomi {main} {period} {count}"
        return f"time_settings {main} {period} 1"  # nearest canadian: one stone per period
    if system == "absolute":
        return f"time_settings {main} 0 0"
    if system == "canadian":
        return f"time_settings {main} {period} {count}"
    return "time_settings 0 1 0"
