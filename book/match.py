"""``fuseki match``: games between two GTP engines, in the spirit of gogui-twogtp.

Reading guide:

- ``MatchConfig`` holds the options; engine ``A`` is ``--black``, ``B`` is
  ``--white``.  Game ``i`` (from 0) swaps them when ``--alternate`` is given
  and ``i`` is odd; with ``--openings DIR`` each opening (the main line of one
  SGF file, sorted by name) is played twice, colours swapped.
- ``play_game`` plays one game with the rules core (``engine.board.Board``) as
  the arbiter: every move is checked before the opponent (and the referee) is
  told.  A game ends on two passes in a row, a resignation, the move cap, a
  resignation adjudicated (the referee's score shows the same clear winner N
  times in a row), or a fault: an illegal move, a protocol error (a ``?`` answer,
  garbage), a crash or a time-out, which loses the game for the engine at
  fault and is named in the results.
- A game that is not lost by resignation or fault is scored by the referee's
  ``final_score``, else by both engines' ``final_score`` when they agree, else
  by the area count ``Board.score()`` (Tromp-Taylor).
- ``Match.run`` plays the games not yet in ``results.jsonl`` (``--sgf-dir``:
  one JSON line per finished game, the whole file replaced atomically after
  each game, so an interrupted match resumes with the missing games only),
  ``--parallel K`` at once; each worker thread keeps its own engine processes
  and reuses them from game to game (``clear_board``), restarting any that
  died or misbehaved.
- ``results_table`` is the summary: wins per engine and per colour, win rate
  with a 95% Wilson interval, an Elo difference estimate, how games ended.

Diagnostics and progress go to stderr; the table to stdout.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from engine.gtp_client import EngineDead, GtpClient, GtpClientError, GtpFailure, GtpTimeout

RESULTS = "results.jsonl"
SETTINGS = "match.json"
LABELS = ("A", "B")
_SCORE = re.compile(r"([BW])\+([0-9]+(?:\.[0-9]+)?)|0|[Jj]igo|[Dd]raw")
_VERTEX = re.compile(r"[A-Za-z][0-9]{1,2}")
# what must match for a results file to be resumed
_IDENTITY = ("black", "white", "size", "komi", "alternate", "openings", "max_moves", "superko")


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

    def identity(self) -> dict:
        d = {k: getattr(self, k) for k in _IDENTITY}
        d["openings"] = [name for name, _ in self.openings]
        return d


@dataclass
class Fault:
    engine: str      # "A" or "B"
    kind: str        # illegal move | protocol error | crash | timeout
    detail: str


# --- engines --------------------------------------------------------------------------------

class Player:
    """One engine command, started on demand and restarted after it died or misbehaved."""

    def __init__(self, label: str, command: str, timeout: float):
        self.label, self.command, self.timeout = label, command, timeout
        self.client: GtpClient | None = None
        self.name = ""

    def start(self) -> GtpClient:
        """A live client; raises GtpClientError."""
        if self.client is not None and self.client.alive():
            return self.client
        self.stop()
        self.client = GtpClient(self.command, timeout=self.timeout)
        name, version = self.client.identity()
        self.name = " ".join(w for w in (name or self.command.split()[0], version) if w)
        self.client.list_commands()
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
        from engine.colors import BLACK

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
        from engine.board import Board

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
                self.players[label].start()
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
                "seconds": round(time.monotonic() - started, 2)}

    def _play_on(self) -> tuple[str, str, str | None]:
        from engine.colors import BLACK, opponent

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
        from engine import coords

        label = self.game.label(colour)
        answer = self._send(label, "genmove " + "bw"[colour - 1]).strip()
        self._stderr_comment(label)
        word = answer.lower()
        if word == "resign":
            return None
        if word == "pass":
            point = coords.PASS
        else:
            if not _VERTEX.fullmatch(word):
                raise _Lost(Fault(label, "protocol error", f"genmove answered {answer[:60]!r}"))
            try:
                point = coords.vertex_to_point(word, self.config.size)
            except coords.CoordinateError:
                raise _Lost(Fault(label, "illegal move", f"{answer} is off the board")) from None
        reason = self.board.legal_reason(colour, point)
        if reason is not None:
            raise _Lost(Fault(label, "illegal move", f"{answer.upper()} ({reason})"))
        self._play(colour, point, told=(label,))
        return point

    def _play(self, colour: int, point: int, told: tuple) -> None:
        """Play a legal move on the board and tell the engines that have not played it."""
        from engine import coords

        self.board.play(colour, point)
        self.game.moves.append((colour, point))
        command = f"play {'bw'[colour - 1]} {coords.point_to_vertex(point, self.config.size)}"
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


# --- SGF ------------------------------------------------------------------------------------

def game_sgf(config: MatchConfig, game: Game, result: dict) -> bytes:
    """The game as SGF: both engines' names, the result and why, comments on the moves."""
    from sgfmill import sgf

    from engine import coords

    size = config.size
    tree = sgf.Sgf_game(size)
    root = tree.get_root()
    root.set("KM", config.komi)
    root.set("AP", ("fuseki match", "0.1.0"))
    names = result["names"]
    root.set("PB", names.get(game.black) or game.black)
    root.set("PW", names.get(game.white) or game.white)
    root.set("RE", "Draw" if result["result"] == "0" else result["result"])
    root.set("DT", time.strftime("%Y-%m-%d"))
    root.set("GN", f"game {game.index + 1}")
    commands = {"A": config.black, "B": config.white}
    why = [f"Black: {game.black} = {commands[game.black]}", f"White: {game.white} = {commands[game.white]}",
           f"Result: {result['result']} ({result['reason']}"
           + (f", scored by {result['scorer']}" if result["scorer"] else "") + ")"]
    if game.opening:
        why.append(f"Opening: {game.opening[0]}")
    if 0 in game.comments:  # a fault before the first move
        why.append(game.comments[0])
    root.set("C", "\n".join(why))
    for number, (colour, point) in enumerate(game.moves, 1):
        node = tree.extend_main_sequence()
        move = None
        if point != coords.PASS:
            x, y = coords.point_to_xy(point, size)
            move = (size - 1 - y, x)
        node.set_move("b" if colour == 1 else "w", move)
        if number in game.comments:
            node.set("C", game.comments[number])
    if len(game.moves) + 1 in game.comments:  # stderr of a move that never came, a fault
        node = tree.get_last_node()
        text = game.comments[len(game.moves) + 1]
        node.set("C", (node.get("C") + "\n" if node.has_property("C") else "") + text)
    return tree.serialise()


def load_openings(folder: str, size: int) -> list:
    """[(file name, [(colour, point)])] of the ``*.sgf`` files in ``folder``, by name.

    Raises MatchError for a file that cannot be read, has another board size,
    setup stones, or an illegal move.
    """
    from sgfmill import sgf

    from engine.board import Board, IllegalMove
    from engine import coords

    paths = sorted(Path(folder).glob("*.sgf"))
    if not paths:
        raise MatchError(f"no .sgf files in {folder}")
    openings = []
    for path in paths:
        try:
            tree = sgf.Sgf_game.from_bytes(path.read_bytes())
        except (OSError, ValueError) as exc:
            raise MatchError(f"{path}: cannot read the opening ({exc})") from None
        if tree.get_size() != size:
            raise MatchError(f"{path}: board size {tree.get_size()}, the match is {size}x{size}")
        board, moves = Board(size), []
        for node in tree.get_main_sequence():
            if node.has_setup_stones():
                raise MatchError(f"{path}: setup stones are not supported in openings")
            colour, move = node.get_move()
            if colour is None:
                continue
            point = coords.PASS if move is None else coords.xy_to_point(move[1], size - 1 - move[0], size)
            c = 1 if colour == "b" else 2
            try:
                board.play(c, point)
            except IllegalMove as exc:
                raise MatchError(f"{path}: illegal move {len(moves) + 1} ({exc.reason})") from None
            moves.append((c, point))
        openings.append((path.name, moves))
    return openings


# --- the match ------------------------------------------------------------------------------

def _write_atomically(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def read_results(folder: Path) -> list[dict]:
    """The finished games of ``folder/results.jsonl`` (unreadable lines skipped)."""
    path = folder / RESULTS
    if not path.exists():
        return []
    results = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("game"), int):
            results.append(entry)
    return results


class Match:
    """Plays the games of ``config`` not yet recorded; see the module docstring."""

    def __init__(self, config: MatchConfig, log: Callable[[str], None] | None = None):
        self.config = config
        self.log = log or (lambda text: print(text, file=sys.stderr, flush=True))
        self.folder = Path(config.sgf_dir) if config.sgf_dir else None
        self.results: dict[int, dict] = {}
        self.stop = threading.Event()
        self._lock = threading.Lock()
        self._local = threading.local()
        self._seats: list[tuple] = []
        if config.adjudicate_resign and not config.referee:
            raise MatchError("--adjudicate-resign needs a --referee")
        if self.folder is not None:
            self._resume()

    def _resume(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self._lock_folder()
        try:
            self._check_settings()
        except BaseException:
            self._lockfile.close()
            raise
        for entry in read_results(self.folder):
            self.results[entry["game"]] = entry

    def _check_settings(self) -> None:
        settings = self.folder / SETTINGS
        identity = self.config.identity()
        if settings.exists():
            old = json.loads(settings.read_text(encoding="utf-8"))
            different = [k for k in _IDENTITY if old.get(k) != identity[k]]
            if different:
                raise MatchError(f"{self.folder} holds another match (different {', '.join(different)}); "
                                 "use another --sgf-dir")
        else:
            _write_atomically(settings, json.dumps(identity, indent=1).encode() + b"\n")

    def _lock_folder(self) -> None:
        """Two matches writing one results file would each overwrite the other's games."""
        import fcntl

        self._lockfile = open(self.folder / ".lock", "w")
        try:
            fcntl.flock(self._lockfile, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._lockfile.close()
            raise MatchError(f"another match is running in {self.folder}") from None

    def missing(self) -> list[int]:
        return [i for i in range(self.config.games) if i not in self.results]

    def run(self) -> list[dict]:
        """Play the missing games; the results of games 0 .. games-1 in order."""
        todo = self.missing()
        if len(todo) < self.config.games:
            self.log(f"fuseki match: resuming, {self.config.games - len(todo)} games already played")
        pool = ThreadPoolExecutor(max_workers=max(1, self.config.parallel))
        try:
            for future in [pool.submit(self._one, i) for i in todo]:
                future.result()
        except BaseException:
            self.stop.set()  # games in progress end at their next move and are not recorded
            with self._lock:
                for player in (p for seat in self._seats for p in seat if p and p.client):
                    player.client.kill()  # so that no game waits on a slow genmove
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            for seat in self._seats:
                for player in seat:
                    if player is not None:
                        player.stop()
            if getattr(self, "_lockfile", None) is not None:
                self._lockfile.close()  # releases the lock
                self._lockfile = None
        return [self.results[i] for i in sorted(self.results) if i < self.config.games]

    def _one(self, index: int) -> None:
        if self.stop.is_set():
            return
        seat = getattr(self._local, "seat", None)
        if seat is None:
            config = self.config
            seat = (Player("A", config.black, config.timeout), Player("B", config.white, config.timeout),
                    Player("referee", config.referee, config.timeout) if config.referee else None)
            self._local.seat = seat
            with self._lock:
                self._seats.append(seat)
        try:
            result, game = play_game(self.config, index, {"A": seat[0], "B": seat[1]}, seat[2], self.stop)
        except Interrupted:
            return
        if self.stop.is_set():
            return  # engines may have been killed under it: do not record
        self._record(game, result)

    def _record(self, game: Game, result: dict) -> None:
        if self.folder is not None:
            name = f"game-{game.index + 1:04d}.sgf"
            _write_atomically(self.folder / name, game_sgf(self.config, game, result))
            result["sgf"] = name
        with self._lock:
            self.results[game.index] = result
            if self.folder is not None:
                lines = [json.dumps(self.results[i], sort_keys=True) for i in sorted(self.results)]
                _write_atomically(self.folder / RESULTS, ("\n".join(lines) + "\n").encode())
            done = sum(1 for i in self.results if i < self.config.games)
        fault = result["fault"]
        note = f", {fault['engine']} {fault['kind']}: {fault['detail']}" if fault else ""
        self.log(f"fuseki match: game {game.index + 1} ({done}/{self.config.games}): "
                 f"{result['black']} (black) vs {result['white']}: {result['result']} "
                 f"({result['reason']}, {result['moves']} moves{note})")


# --- the table ------------------------------------------------------------------------------

def wilson(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a proportion (draws counted as half a win)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def elo(p: float) -> float:
    """Elo difference for an expected score ``p`` (+-inf at 1 and 0)."""
    if p <= 0:
        return -math.inf
    if p >= 1:
        return math.inf
    return -400 * math.log10(1 / p - 1)


def _elo_text(value: float) -> str:
    return ("+inf" if value > 0 else "-inf") if math.isinf(value) else f"{value:+.0f}"


def results_table(results: list[dict], config: MatchConfig) -> str:
    """The summary of ``results``: see the module docstring."""
    names = {}
    for r in results:
        names.update({k: v for k, v in r.get("names", {}).items() if v})
    commands = {"A": config.black, "B": config.white}
    n = len(results)
    lines = [f"{n} games, {config.size}x{config.size}, komi {config.komi:g}", ""]
    header = (f"{'engine':<40} {'wins':>5} {'draws':>5} {'losses':>6} {'as black':>9} {'as white':>9}"
              "   win rate (95% CI)")
    lines += [header, "-" * len(header)]
    rate = {}
    for label in LABELS:
        mine = [r for r in results if label in (r["black"], r["white"])]
        wins = sum(r["winner"] == label for r in mine)
        draws = sum(r["winner"] is None for r in mine)
        as_black = [r for r in mine if r["black"] == label]
        as_white = [r for r in mine if r["white"] == label]
        score = wins + draws / 2
        low, high = wilson(score, len(mine))
        rate[label] = (score / len(mine) if mine else 0.5, low, high)
        who = f"{label}: {names.get(label) or commands[label]}"[:40]
        lines.append(f"{who:<40} {wins:>5} {draws:>5} {len(mine) - wins - draws:>6} "
                     f"{sum(r['winner'] == label for r in as_black):>4}/{len(as_black):<4} "
                     f"{sum(r['winner'] == label for r in as_white):>4}/{len(as_white):<4}   "
                     f"{100 * rate[label][0]:5.1f}% [{100 * low:.1f}%, {100 * high:.1f}%]")
    lines.append("")
    black_wins = sum(r["winner"] is not None and r["winner"] == r["black"] for r in results)
    white_wins = sum(r["winner"] is not None and r["winner"] == r["white"] for r in results)
    lines.append(f"Black won {black_wins}, White won {white_wins}, drawn {n - black_wins - white_wins}")
    p, low, high = rate["A"]
    if n:
        lines.append(f"Elo A - B: {_elo_text(elo(p))} (95%: {_elo_text(elo(low))} to {_elo_text(elo(high))})")
    reasons: dict[str, int] = {}
    for r in results:
        key = r["reason"] if not r["fault"] else f"{r['reason']} by {r['fault']['engine']}"
        reasons[key] = reasons.get(key, 0) + 1
    lines.append("Ended by: " + ", ".join(f"{k} {v}" for k, v in sorted(reasons.items())))
    faults = [r for r in results if r["fault"]]
    for r in faults[:20]:
        f = r["fault"]
        lines.append(f"  game {r['game'] + 1}: {f['engine']} {f['kind']}: {f['detail']}")
    if len(faults) > 20:
        lines.append(f"  ... and {len(faults) - 20} more faults in {RESULTS}")
    return "\n".join(lines)


# --- command line ---------------------------------------------------------------------------

def add_commands(subparsers) -> None:
    p = subparsers.add_parser(
        "match", help="play games between two GTP engines and tabulate the results",
        description="Play games between two GTP engines (gogui-twogtp style), write one SGF per game "
                    "and a results table. Example: fuseki match --black 'python gtp_main.py --seed 1' "
                    "--white 'gnugo --mode gtp --level 0' --games 10 --size 9 --alternate "
                    "--sgf-dir runs/m1 --parallel 2")
    p.add_argument("--black", required=True, metavar="CMD", help="engine A, Black in the first game")
    p.add_argument("--white", required=True, metavar="CMD", help="engine B, White in the first game")
    p.add_argument("--games", type=int, required=True, metavar="N")
    p.add_argument("--size", type=int, default=19, metavar="N")
    p.add_argument("--komi", type=float, default=7.5, metavar="K")
    p.add_argument("--alternate", action="store_true", help="swap colours every other game")
    p.add_argument("--openings", metavar="DIR",
                   help="SGF files whose main lines start the games; each is played twice, colours swapped")
    p.add_argument("--sgf-dir", metavar="DIR",
                   help=f"write game-NNNN.sgf and {RESULTS} here; an interrupted match resumes from it")
    p.add_argument("--referee", metavar="CMD", help="GTP engine whose final_score decides finished games")
    p.add_argument("--max-moves", type=int, default=1000, metavar="N", help="stop and score a game here")
    p.add_argument("--adjudicate-resign", type=int, default=0, metavar="N",
                   help="end a game as a resignation once N referee scores in a row agree on the winner")
    p.add_argument("--adjudicate-margin", type=float, default=20.0, metavar="POINTS",
                   help="the lead each of those scores must show (default 20)")
    p.add_argument("--adjudicate-every", type=int, default=1, metavar="K",
                   help="ask the referee every K moves (its final_score can be slow mid-game)")
    p.add_argument("--parallel", type=int, default=1, metavar="K", help="games played at once")
    p.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS",
                   help="time allowed for each answer; longer loses the game (default 60)")
    p.add_argument("--stderr-comments", action="store_true",
                   help="put each engine's stderr lines into the SGF as comments on its moves")
    p.add_argument("--superko", action="store_true", help="forbid positional superko (default: simple ko)")
    p.set_defaults(run=run_match)


def config_from(args) -> MatchConfig:
    if min(args.games, args.parallel, args.max_moves, args.adjudicate_every) < 1 or args.timeout <= 0:
        raise MatchError("--games, --parallel, --max-moves, --adjudicate-every and --timeout "
                         "must be positive")
    if not 2 <= args.size <= 25:
        raise MatchError("--size must be from 2 to 25")
    return MatchConfig(
        black=args.black, white=args.white, games=args.games, size=args.size, komi=args.komi,
        alternate=args.alternate, openings=load_openings(args.openings, args.size) if args.openings else [],
        sgf_dir=args.sgf_dir, referee=args.referee, max_moves=args.max_moves,
        adjudicate_resign=args.adjudicate_resign, adjudicate_margin=args.adjudicate_margin,
        adjudicate_every=args.adjudicate_every,
        parallel=args.parallel, timeout=args.timeout, stderr_comments=args.stderr_comments,
        superko=args.superko)


def run_match(args) -> int:
    config = config_from(args)
    match = Match(config)
    results = match.run()
    table = results_table(results, config)
    print(table)
    if match.folder is not None:
        _write_atomically(match.folder / "results.txt", (table + "\n").encode())
    return 0
