"""One game of ``fuseki match`` between two GTP engines, in the spirit of gogui-twogtp.

- ``MatchConfig`` holds the options; engine ``A`` is ``--black``, ``B`` is
  ``--white``.  Game ``i`` (from 0) swaps them when ``--alternate`` is given
  and ``i`` is odd; with ``--openings DIR`` each opening (the main line of one
  SGF file, sorted by name) is played twice, colours swapped (``plan``).
- ``play_game`` plays one game with the rules core (``engine.core.board.Board``) as
  the arbiter: every move is checked before the opponent (and the referee) is
  told.  A game ends on two passes in a row, a resignation, the move cap, a
  resignation adjudicated (the referee's score shows the same clear winner N
  times in a row), or a fault: an illegal move, a protocol error (a ``?`` answer,
  garbage), a crash or a time-out, which loses the game for the engine at
  fault and is named in the results.
- A game that is not lost by resignation or fault is scored by the referee's
  ``final_score``, else by both engines' ``final_score`` when they agree, else
  by the area count ``Board.score()`` (Tromp-Taylor).

The match of many games is ``match.Match``; what it leaves behind, ``match_report``.
"""

from __future__ import annotations

import re
import sys
import threading
import time
from dataclasses import asdict, dataclass, field

from fuseki.engine.players.gtp_client import EngineDead, GtpClient, GtpClientError, GtpFailure, GtpTimeout

RESULTS = "results.jsonl"
SETTINGS = "match.json"
LABELS = ("A", "B")
_SCORE = re.compile(r"([BW])\+([0-9]+(?:\.[0-9]+)?)|0|[Jj]igo|[Dd]raw")
_VERTEX = re.compile(r"[A-Za-z][0-9]{1,2}")
# what must match for a results file to be resumed
IDENTITY = ("black", "white", "size", "komi", "alternate", "openings", "max_moves", "superko")


class MatchError(ValueError):
    """A match that cannot be played as asked (bad openings, results of another match...)."""


class Interrupted(Exception):
    """The match is stopping: the game in progress is not recorded."""


@dataclass
class MatchConfig:
    black: str
    white: str
    games: int
    size: int = 19
    komi: float = 7.5
    alternate: bool = False
    openings: list = field(default_factory=list)  # [(name, [(colour, point), ...])]
    sgf_dir: str | None = None
    referee: str | None = None
    max_moves: int = 1000
    adjudicate_resign: int = 0      # moves of agreement needed; 0: never adjudicate
    adjudicate_margin: float = 20.0
    adjudicate_every: int = 1       # moves between two checks
    parallel: int = 1
    timeout: float = 60.0           # seconds per answer
    stderr_comments: bool = False
    superko: bool = False
    seed: int = 1                   # game i starts its engines with {seed} = seed + i

    def seed_of(self, index: int) -> int:
        """The seed game ``index`` gives the engine commands' ``{seed}``."""
        return self.seed + index

    def identity(self) -> dict:
        d = {k: getattr(self, k) for k in IDENTITY}
        d["openings"] = [name for name, _ in self.openings]
        return d


@dataclass
class Fault:
    engine: str      # "A" or "B"
    kind: str        # illegal move | protocol error | crash | timeout
    detail: str


# --- engines --------------------------------------------------------------------------------

SEED = "{seed}"  # in an engine command: replaced by the game's seed (the engine restarts per game)
# seconds for an engine's first answers (name, version, list_commands): it may be loading a
# network (KataGo's: 10-20 s on 2 cores), which is no move, while --timeout bounds each move
START_WAIT = 600.0


class Player:
    """One engine command, started on demand and restarted after it died or misbehaved.

    A command holding ``{seed}`` is started anew for each game with that game's seed, so that
    deterministic engines (a book with ``--policy best``, GNU Go) do not replay one game.
    """

    def __init__(self, label: str, command: str, timeout: float):
        self.label, self.command, self.timeout = label, command, timeout
        self.client: GtpClient | None = None
        self.name = ""
        self.running = ""  # the command line the client was started with

    def start(self, seed: int | None = None) -> GtpClient:
        """A live client (of the command with ``seed`` put in); raises GtpClientError."""
        command = self.command.replace(SEED, str(seed)) if seed is not None else self.command
        if self.client is not None and self.client.alive() and command == self.running:
            return self.client
        self.stop()
        self.running = command
        self.client = GtpClient(command, timeout=self.timeout)
        wait = max(self.timeout, START_WAIT)
        name, version = self.client.identity(wait)
        self.name = " ".join(w for w in (name or self.command.split()[0], version) if w)
        self.client.list_commands(wait)
        return self.client

    def send(self, command: str) -> str:
        if self.client is None:
            raise EngineDead("not started")
        return self.client.send(command)

    def stop(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None


def _fault(label: str, exc: GtpClientError) -> Fault:
    kind = ("timeout" if isinstance(exc, GtpTimeout) else "crash" if isinstance(exc, EngineDead)
            else "protocol error")
    return Fault(label, kind, str(exc))


class _Lost(Exception):
    """A fault ended the game."""

    def __init__(self, fault: Fault):
        super().__init__(fault.detail)
        self.fault = fault


# --- one game -------------------------------------------------------------------------------

@dataclass
class Game:
    index: int
    black: str                       # "A" or "B"
    opening: tuple | None            # (name, moves)
    moves: list = field(default_factory=list)      # (colour, point)
    comments: dict = field(default_factory=dict)   # move number (1-based) -> text

    @property
    def white(self) -> str:
        return "B" if self.black == "A" else "A"

    def label(self, colour: int) -> str:
        from fuseki.engine.core.base import BLACK

        return self.black if colour == BLACK else self.white


def plan(config: MatchConfig, index: int) -> Game:
    """Who plays Black in game ``index`` and from which opening."""
    opening = None
    swapped = config.alternate and index % 2 == 1
    if config.openings:
        opening = config.openings[(index // 2) % len(config.openings)]
        swapped = index % 2 == 1
    return Game(index, "B" if swapped else "A", opening)


def play_game(config: MatchConfig, index: int, players: dict, referee: Player | None = None,
              stop: threading.Event | None = None) -> tuple[dict, Game]:
    """(result, game) of game ``index`` of the match (see the module docstring).

    ``players`` maps "A"/"B" to Players (started here if needed).  Engine faults
    become results, never exceptions; raises Interrupted when ``stop`` gets set.
    """
    game = plan(config, index)
    return _GameRun(config, game, players, referee, stop).run(), game


class _GameRun:
    """The state of one game being played; ``run`` returns its result dict."""

    def __init__(self, config: MatchConfig, game: Game, players: dict, referee: Player | None,
                 stop: threading.Event | None):
        from fuseki.engine.core.board import Board

        self.config, self.game, self.players, self.stop = config, game, players, stop
        self.referee = referee
        self.board = Board(config.size, komi=config.komi, superko=config.superko)
        self.marks: dict[str, int] = {}
        self.leader, self.agreement = 0, 0  # who leads (+1 Black, -1 White) and for how many moves

    # sending, with faults attributed --------------------------------------------------------

    def _send(self, label: str, command: str) -> str:
        try:
            return self.players[label].send(command)
        except GtpClientError as exc:
            if not isinstance(exc, GtpFailure):
                self.players[label].stop()
            raise _Lost(_fault(label, exc)) from None

    def _referee(self, command: str) -> str | None:
        if self.referee is None:
            return None
        try:
            return self.referee.send(command)
        except GtpClientError as exc:
            print(f"fuseki match: game {self.game.index + 1}: referee dropped: {exc}", file=sys.stderr)
            if not isinstance(exc, GtpFailure):
                self.referee.stop()
            self.referee = None
            return None

    def _new_game(self) -> None:
        for label in LABELS:
            try:
                self.players[label].start(self.config.seed_of(self.game.index))
            except GtpClientError as exc:
                raise _Lost(_fault(label, exc)) from None
            for command in (f"boardsize {self.config.size}", "clear_board", f"komi {self.config.komi:g}"):
                self._send(label, command)
            self.marks[label] = self.players[label].client.stderr_mark()
        if self.referee is not None:
            try:
                self.referee.start()
            except GtpClientError as exc:
                print(f"fuseki match: referee cannot start: {exc}", file=sys.stderr)
                self.referee = None
            for command in (f"boardsize {self.config.size}", "clear_board", f"komi {self.config.komi:g}"):
                self._referee(command)

    # the game ---------------------------------------------------------------------------------

    def run(self) -> dict:
        started = time.monotonic()
        fault, reason, result, scorer = None, None, None, None
        try:
            self._new_game()
            for colour, point in (self.game.opening[1] if self.game.opening else []):
                self._play(colour, point, told=())
                self.game.comments[len(self.game.moves)] = "opening"
            reason, result, scorer = self._play_on()
        except _Lost as lost:
            fault = lost.fault
            reason = fault.kind
            winner_colour = "W" if fault.engine == self.game.black else "B"
            result = f"{winner_colour}+{'T' if fault.kind == 'timeout' else 'F'}"
            self.game.comments[len(self.game.moves)] = (
                self.game.comments.get(len(self.game.moves), "") + f"\n{fault.engine} ({fault.kind}): "
                f"{fault.detail}").strip()
        winner = None
        if result.startswith("B+"):
            winner = self.game.black
        elif result.startswith("W+"):
            winner = self.game.white
        return {"game": self.game.index, "black": self.game.black, "white": self.game.white,
                "winner": winner, "result": result, "reason": reason, "scorer": scorer,
                "fault": asdict(fault) if fault else None, "moves": len(self.game.moves),
                "opening": self.game.opening[0] if self.game.opening else None,
                "names": {k: p.name for k, p in self.players.items()},
                "seed": self.config.seed_of(self.game.index),
                "fingerprint": fingerprint(self.game.black, self.game.moves),
                "seconds": round(time.monotonic() - started, 2)}

    def _play_on(self) -> tuple[str, str, str | None]:
        from fuseki.engine.core.base import BLACK, opponent

        colour = opponent(self.game.moves[-1][0]) if self.game.moves else BLACK
        passes = 0
        while True:
            if self.stop is not None and self.stop.is_set():
                raise Interrupted()
            if len(self.game.moves) >= self.config.max_moves:
                return ("move cap",) + self._score()
            point = self._genmove(colour)
            if point is None:  # resignation
                return "resignation", ("W+R" if colour == BLACK else "B+R"), None
            passes = passes + 1 if point < 0 else 0
            if passes >= 2:
                return ("two passes",) + self._score()
            adjudicated = self._adjudicate()
            if adjudicated:
                return "adjudicated", adjudicated, "referee"
            colour = opponent(colour)

    def _genmove(self, colour: int) -> int | None:
        """The mover's move, checked and played everywhere; None for a resignation."""
        from fuseki.engine.core import base

        label = self.game.label(colour)
        answer = self._send(label, "genmove " + "bw"[colour - 1]).strip()
        self._stderr_comment(label)
        word = answer.lower()
        if word == "resign":
            return None
        if word == "pass":
            point = base.PASS
        else:
            if not _VERTEX.fullmatch(word):
                raise _Lost(Fault(label, "protocol error", f"genmove answered {answer[:60]!r}"))
            try:
                point = base.vertex_to_point(word, self.config.size)
            except base.CoordinateError:
                raise _Lost(Fault(label, "illegal move", f"{answer} is off the board")) from None
        reason = self.board.legal_reason(colour, point)
        if reason is not None:
            raise _Lost(Fault(label, "illegal move", f"{answer.upper()} ({reason})"))
        self._play(colour, point, told=(label,))
        return point

    def _play(self, colour: int, point: int, told: tuple) -> None:
        """Play a legal move on the board and tell the engines that have not played it."""
        from fuseki.engine.core import base

        self.board.play(colour, point)
        self.game.moves.append((colour, point))
        command = f"play {'bw'[colour - 1]} {base.point_to_vertex(point, self.config.size)}"
        for label in LABELS:
            if label not in told:
                try:
                    self._send(label, command)
                except _Lost as lost:
                    if lost.fault.kind == "protocol error":
                        lost.fault.detail = f"refused the legal move '{command}': {lost.fault.detail}"
                    raise
        self._referee(command)

    def _stderr_comment(self, label: str) -> None:
        if not self.config.stderr_comments:
            return
        client = self.players[label].client
        lines = client.take_stderr(self.marks[label])
        self.marks[label] = client.stderr_mark()
        if lines:
            self.game.comments[len(self.game.moves) + 1] = f"{label} stderr:\n" + "\n".join(lines)

    # scoring --------------------------------------------------------------------------------

    def _score(self) -> tuple[str, str]:
        """(result, scorer) of a finished game: referee, else agreeing engines, else area."""
        score = parse_score(self._referee("final_score"))
        if score is not None:
            return score_text(score), "referee"
        scores = []
        for label in LABELS:
            client = self.players[label].client
            if client is not None and client.knows("final_score"):
                try:
                    scores.append(parse_score(client.send("final_score")))
                except GtpClientError:
                    scores.append(None)
        if len(scores) == 2 and scores[0] is not None and scores[0] == scores[1]:
            return score_text(scores[0]), "engines"
        return score_text(self.board.score()), "area"

    def _adjudicate(self) -> str | None:
        """'B+R'/'W+R' once the referee's ``final_score`` has shown the same winner, by at
        least the margin, at ``adjudicate_resign`` checks in a row (one check every
        ``adjudicate_every`` moves); else None.

        The area count is no judge here: stones left in the opponent's area make it
        neutral, so a lost game of a weak engine counts near even.  GNU Go's final_score
        reads the game out mid-game (seconds a call at its default level, under 1 s at
        --level 0 on 9x9), hence the spacing.
        """
        config = self.config
        if not config.adjudicate_resign or self.referee is None \
                or len(self.game.moves) % config.adjudicate_every:
            return None
        score = parse_score(self._referee("final_score"))
        leader = 0
        if score is not None and abs(score) >= config.adjudicate_margin:
            leader = 1 if score > 0 else -1
        self.agreement = self.agreement + 1 if leader and leader == self.leader else int(bool(leader))
        self.leader = leader
        if self.agreement >= config.adjudicate_resign:
            return "B+R" if leader > 0 else "W+R"
        return None


def fingerprint(black: str, moves: list) -> str:
    """The same engine as Black playing the same moves gives the same text: a repeated game."""
    import hashlib

    text = black + ";" + ";".join(f"{colour}{point}" for colour, point in moves)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def repeats(results: list[dict]) -> dict[int, int]:
    """{game: the earlier game whose moves it repeats} (with the same engine as Black)."""
    first: dict[str, int] = {}
    found = {}
    for r in sorted(results, key=lambda r: r["game"]):
        key = r.get("fingerprint")
        if key is None:
            continue
        if key in first:
            found[r["game"]] = first[key]
        else:
            first[key] = r["game"]
    return found


def parse_score(text: str | None) -> float | None:
    """'B+3.5' -> 3.5, 'W+2' -> -2.0, '0' -> 0.0; None for anything else."""
    if text is None:
        return None
    m = _SCORE.fullmatch(text.strip())
    if not m:
        return None
    if not m.group(1):
        return 0.0
    return float(m.group(2)) * (1 if m.group(1) == "B" else -1)


def score_text(score: float) -> str:
    return "0" if score == 0 else ("B+%g" if score > 0 else "W+%g") % abs(score)
