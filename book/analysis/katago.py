"""A client for KataGo's JSON analysis engine (``katago analysis -model M -config C``).

The protocol (KataGo's docs/Analysis_Engine.md): one JSON query a line on KataGo's stdin,
one JSON answer a line on its stdout, answers matched to queries by ``id`` and possibly out
of order; a query with ``analyzeTurns`` gets one final answer per turn.  Errors come back as
``{"error": ..., "field": ..., "id": ...}`` (``id`` and ``field`` only when KataGo could
tell them), warnings as ``{"warning": ..., "field": ..., "id": ...}`` before the answer.

``KataGo(command)`` starts the process in its own process group and waits (``start_timeout``)
until it answers a ``query_version``: its network is loaded then (the first start on a new
machine also tunes OpenCL, minutes on a CPU).  ``analyze(...)`` sends one position and
returns an ``Analysis``; ``submit(...)`` sends it and returns a ``Pending`` to wait on
later, so that callers can keep several queries in flight.  A reader thread parses the
answers; every wait has a time-out (``timeout``, ``answer_timeout`` for the ways in).
``close()`` kills the process group: nothing is left behind.  A fuseki that stops without
closing it (SIGTERM, SIGHUP, kill -9: signals that do not reach KataGo's own group) takes it
along all the same on Linux: the kernel kills KataGo when the thread that started it ends
(``_die_with_parent``).

Every query asks KataGo for values from the side to move (``reportAnalysisWinratesAs`` in
``overrideSettings``), whatever the user's config says, so a candidate move's win rate and
score lead are those of the player who plays it.

Every way it can go wrong raises ``KataGoError`` with one line that says what happened and
how to fix it; ``KataGoQueryError`` (a subclass) is KataGo refusing one query (an illegal
move, a bad field): the client stays usable after it, and after a time-out.  A crash, an
exit, or output that is not JSON makes the client ``broken``: every later call raises at once.
An exit says which: KataGo killed by a signal (``kill -9``, the OOM killer) or exiting after
its start "died"; only an exit before it was ready points at the -model and -config paths.
``terminate_all()`` gives up on every query in flight: KataGo is told to stop them (its
``terminate`` action) and their waiters get ``KataGoTerminated`` at once, whatever KataGo
answers later (a search cut short is no answer at the visits asked).

Only the standard library: vertices here are KataGo's strings (``"Q16"``, ``"pass"``); the
callers convert them with the engine core's coordinates.
"""

from __future__ import annotations

import ctypes
import itertools
import json
import os
import queue
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from fuseki.engine.players.gtp_client import kill_group

COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"  # GTP columns (no I), as KataGo writes them
STDERR_KEEP = 200  # lines of KataGo's stderr kept, for the messages of its failures
ANSWER_TIMEOUT = 120.0  # seconds a query may wait for its answer unless the caller says otherwise
START_TIMEOUT = 900.0  # seconds KataGo may take to load its network (a first start tunes OpenCL)
# Ctrl-C on ``fuseki search --ai`` under load was lost about once in five: the main thread slept
# on in its wait for the answer.  A signal the kernel hands to another thread (a reader of
# KataGo's pipes) only sets Python's flag there.  So the client's threads block the signals that
# stop a command (STOP_SIGNALS: the kernel then hands them to a thread that takes them, the main
# thread in a command), and a waiting caller looks at the signals every SIGNAL_LOOK seconds.
STOP_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM, signal.SIGHUP})
SIGNAL_LOOK = 0.25
# the ways in (search, annotate, serve) wait for one answer answer_timeout(visits): a CPU does
# about one network evaluation a second, so a deep search may take minutes, never for ever
ANSWER_WAIT_MIN = 600.0  # seconds
ANSWER_WAIT_PER_VISIT = 10.0  # seconds
_PR_SET_PDEATHSIG = 1  # linux/prctl.h
# signals that come from outside KataGo (a user, the OOM killer), never from its own failure
KILLED_FROM_OUTSIDE = frozenset({signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGHUP})
FIX_HINT = ("name a KataGo analysis command with --katago or $FUSEKI_KATAGO "
            "(see docs/katago.md; `bash .ci/katago` gets one)")


class KataGoError(Exception):
    """Anything that went wrong with KataGo; the message says what and how to fix it."""


class KataGoQueryError(KataGoError):
    """KataGo refused one query (``{"error": ...}``); the client stays usable."""

    def __init__(self, message: str, field_name: str | None = None, query_id: str | None = None):
        where = f" (field {field_name!r})" if field_name else ""
        super().__init__(f"KataGo refused the query{where}: {message}")
        self.message = message
        self.field = field_name
        self.query_id = query_id


class KataGoTimeout(KataGoError):
    """No answer in the time allowed."""


class KataGoTerminated(KataGoError):
    """The query was terminated by its caller (``KataGo.terminate_all``): no answer is kept."""


# --- the values ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class MoveValue:
    """KataGo's judgement of one candidate move, for the player who plays it.

    ``loss`` is the best move's score lead minus this move's, in points: 0 for KataGo's best
    move (``order`` 0), positive for worse ones; it can be slightly negative for a move with
    few visits whose estimate is noisier than the best move's.
    """

    move: str  # KataGo's vertex: "Q16", "pass"
    visits: int
    winrate: float  # 0..1
    score_lead: float  # points
    loss: float  # points against KataGo's best move
    prior: float  # the network's policy for this move, 0..1
    order: int  # KataGo's ranking, 0 = best
    pv: tuple[str, ...] = ()


@dataclass(frozen=True)
class Analysis:
    """One final answer: the position's values and its candidate moves, best first.

    ``winrate`` and ``score_lead`` are the root's, for ``to_play``.  ``policy`` (only when
    asked for) is the raw network policy, row-major from the top-left point (A19 on 19x19)
    with pass last; -1 marks an illegal point.
    """

    id: str
    turn: int
    to_play: str  # "B" or "W"
    visits: int
    winrate: float
    score_lead: float
    moves: tuple[MoveValue, ...]
    x_size: int = 19
    y_size: int = 19
    policy: tuple[float, ...] | None = None
    warnings: tuple[str, ...] = ()
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    def best(self) -> MoveValue:
        return self.moves[0]

    def move(self, vertex: str) -> MoveValue | None:
        """The values of ``vertex`` if KataGo searched it, else None."""
        want = vertex.upper()
        return next((m for m in self.moves if m.move.upper() == want), None)

    def policy_vertex(self, index: int) -> str:
        """The vertex of entry ``index`` of ``policy``."""
        if index == self.x_size * self.y_size:
            return "pass"
        row, col = divmod(index, self.x_size)
        return f"{COLUMNS[col]}{self.y_size - row}"

    def policy_of(self, vertex: str) -> float:
        """The raw policy of ``vertex`` (requires ``include_policy``)."""
        if self.policy is None:
            raise ValueError("this analysis was asked without include_policy")
        text = vertex.upper()
        if text == "PASS":
            return self.policy[-1]
        col, row = COLUMNS.index(text[0]), self.y_size - int(text[1:])
        return self.policy[row * self.x_size + col]

    def policy_best(self) -> str:
        """The vertex the raw network likes best (requires ``include_policy``)."""
        if self.policy is None:
            raise ValueError("this analysis was asked without include_policy")
        return self.policy_vertex(max(range(len(self.policy)), key=self.policy.__getitem__))


def other(color: str) -> str:
    return "W" if color == "B" else "B"


def parse_analysis(answer: dict, query: dict, warnings: tuple[str, ...] = ()) -> Analysis:
    """An ``Analysis`` from one final answer of KataGo and the query it answers.

    The query gives what the answer leaves out: the board size and, for KataGo versions
    whose ``rootInfo`` has no ``currentPlayer``, the side to move.  Raises KataGoError when
    the answer lacks what an analysis must have.
    """
    try:
        root = answer["rootInfo"]
        infos = sorted(answer["moveInfos"], key=lambda info: info["order"])
        turn = int(answer["turnNumber"])
        to_play = root.get("currentPlayer") or _to_play(query, turn)
        best_lead = float(infos[0]["scoreLead"]) if infos else 0.0
        moves = tuple(
            MoveValue(move=str(info["move"]), visits=int(info["visits"]), winrate=float(info["winrate"]),
                      score_lead=float(info["scoreLead"]), loss=best_lead - float(info["scoreLead"]),
                      prior=float(info.get("prior", 0.0)), order=int(info["order"]),
                      pv=tuple(info.get("pv", ())))
            for info in infos)
        policy = answer.get("policy")
        return Analysis(
            id=str(answer["id"]), turn=turn, to_play=to_play, visits=int(root["visits"]),
            winrate=float(root["winrate"]), score_lead=float(root["scoreLead"]), moves=moves,
            x_size=int(query.get("boardXSize", 19)), y_size=int(query.get("boardYSize", 19)),
            policy=None if policy is None else tuple(float(p) for p in policy),
            warnings=warnings, raw=answer)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise KataGoError(f"KataGo's answer lacks an analysis field ({type(exc).__name__}: {exc}): "
                          f"{json.dumps(answer)[:200]}") from None


def _to_play(query: dict, turn: int) -> str:
    moves = query.get("moves", [])
    if turn == 0:
        return str(query.get("initialPlayer", "W" if moves and moves[0][0] == "W" else "B")).upper()
    return other(str(moves[turn - 1][0]).upper())


def make_query(query_id: str, moves, *, rules: str = "japanese", komi: float = 6.5, size: int = 19,
               max_visits: int | None = None, analyze_turns: list[int] | None = None,
               include_policy: bool = False, initial_player: str | None = None,
               initial_stones=(), override: dict | None = None,
               allow_moves: list[tuple[str, str]] | None = None) -> dict:
    """The query dict for a position reached by ``moves`` ([(colour, vertex), ...]).

    ``initial_stones`` ([(colour, vertex), ...]) sets up a position without its history (a
    book's position is its stones); ``initial_player`` says who moves first then.
    ``override`` adds KataGo search settings for this query (``overrideSettings``), e.g.
    ``{"rootNumSymmetriesToSample": 8}`` to average the root's network evaluation over the
    8 symmetries.  ``allow_moves`` ([(colour, vertex), ...]) restricts the root's search to
    those moves (KataGo's ``allowMoves`` with ``untilDepth`` 1): a move evaluated by a search of
    its own when the position's search would not visit it (a human move KataGo dislikes).
    """
    query = {"id": query_id, "moves": [[str(c).upper(), str(v)] for c, v in moves], "rules": rules,
             "komi": komi, "boardXSize": size, "boardYSize": size,
             "overrideSettings": {**(override or {}), "reportAnalysisWinratesAs": "SIDETOMOVE"}}
    if max_visits is not None:
        query["maxVisits"] = int(max_visits)
    if analyze_turns is not None:
        query["analyzeTurns"] = list(analyze_turns)
    if include_policy:
        query["includePolicy"] = True
    if initial_stones:
        query["initialStones"] = [[str(c).upper(), str(v)] for c, v in initial_stones]
    if initial_player is not None:
        query["initialPlayer"] = initial_player
    if allow_moves:
        query["allowMoves"] = [{"player": str(c).upper(), "moves": [str(v)], "untilDepth": 1}
                               for c, v in allow_moves]
    return query


def answer_timeout(visits: int) -> float:
    """How long the ways in wait for the answer to a search of ``visits`` before giving up
    with one line (``KataGoTimeout``): ``ANSWER_WAIT_MIN``, or ``ANSWER_WAIT_PER_VISIT`` a visit."""
    return max(ANSWER_WAIT_MIN, ANSWER_WAIT_PER_VISIT * visits)


# --- one query in flight --------------------------------------------------------------------

class Pending:
    """A query sent and not yet fully answered: ``result`` waits for its analyses."""

    def __init__(self, client: KataGo, query: dict):
        self.client = client
        self.query = query
        self.expected = len(query["analyzeTurns"]) if "analyzeTurns" in query else 1
        self.answers: list[Analysis] = []
        self.warnings: list[str] = []
        self.error: KataGoError | None = None
        self.action_answer: dict = {}
        self.done = threading.Event()

    def result(self, timeout: float | None = None) -> list[Analysis]:
        """The analyses, by turn; raises KataGoError (see the module docstring)."""
        wait = self.client.timeout if timeout is None else timeout
        if not _wait_looking_at_signals(self.done.wait, wait):
            self.client._give_up_on(self.query["id"])
            raise KataGoTimeout(self.client._timeout_text(f"no answer to query {self.query['id']!r}", wait))
        if self.error is not None:
            raise self.error
        return sorted(self.answers, key=lambda a: a.turn)

    def _finish(self, error: KataGoError | None = None) -> None:
        self.error = self.error or error
        self.done.set()
        with self.client._answered:
            self.client._answered.notify_all()


def _signals_blocked(run):
    """``run`` in a thread that blocks ``STOP_SIGNALS`` (see there)."""
    def blocked() -> None:
        if hasattr(signal, "pthread_sigmask"):  # POSIX only
            signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        run()
    return blocked


def _wait_looking_at_signals(wait, timeout: float) -> bool:
    """``wait(seconds) -> bool`` for up to ``timeout`` seconds in slices of ``SIGNAL_LOOK``, so that
    a signal handled meanwhile (a KeyboardInterrupt, a stop handler) takes effect at once."""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if wait(max(0.0, min(left, SIGNAL_LOOK))):
            return True
        if left <= SIGNAL_LOOK:
            return False


# --- the process ------------------------------------------------------------------------------

class KataGo:
    """One ``katago analysis`` process; see the module docstring.

    ``timeout`` (seconds) is the default wait for an answer; ``start_timeout`` the wait for
    KataGo to load its network (the first start on a machine tunes OpenCL: minutes).
    """

    def __init__(self, command: str | list[str], timeout: float = ANSWER_TIMEOUT,
                 start_timeout: float = START_TIMEOUT, env: dict | None = None):
        argv = _split(command)
        self.command = shlex.join(argv)
        self.network = network_name(argv)  # what the values were computed by
        self.timeout = timeout
        self.broken: str | None = None
        self._pending: dict[str, Pending] = {}
        self._lock = threading.Lock()  # guards _pending and broken
        self._outbox: queue.Queue = queue.Queue()  # lines for the writer thread; None ends it
        self._ids = itertools.count(1)
        self._stderr: deque[str] = deque(maxlen=STDERR_KEEP)
        self._errors: deque[str] = deque(maxlen=5)  # KataGo's errors that named no query
        self._ready = False  # set once KataGo answered query_version: its network is loaded
        self._answered = threading.Condition()  # notified whenever a query is finished (wait_any)
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, env=env, start_new_session=True,
                                         preexec_fn=_die_with_parent())
        except OSError as exc:
            raise KataGoError(f"cannot start KataGo ({argv[0]}: {exc.strerror or exc}): {FIX_HINT}") from None
        self._stderr_reader = threading.Thread(target=_signals_blocked(self._read_stderr), daemon=True,
                                               name="katago-stderr")
        self._stderr_reader.start()
        self._threads = [self._stderr_reader]
        for target, name in ((self._read_stdout, "katago-stdout"), (self._write_stdin, "katago-stdin")):
            self._threads.append(threading.Thread(target=_signals_blocked(target), daemon=True, name=name))
            self._threads[-1].start()
        try:
            answer = self.action("query_version", timeout=start_timeout)
        except KataGoTimeout:
            self.close()
            raise KataGoTimeout(f"KataGo did not get ready within {start_timeout:g}s (is the command "
                                f"`katago analysis ...`? last stderr: {self._last_stderr()})") from None
        except KataGoError:
            self.close()
            raise
        self.version = str(answer.get("version", ""))
        self._ready = True

    # --- sending ------------------------------------------------------------------------------

    def submit(self, moves=(), **settings) -> Pending:
        """Send the position reached by ``moves``; ``settings`` as for ``make_query``."""
        return self.send(make_query(f"q{next(self._ids)}", moves, **settings))

    def analyze(self, moves=(), timeout: float | None = None, **settings) -> Analysis:
        """The analysis of the position reached by ``moves`` (the last turn of the query)."""
        return self.submit(moves, **settings).result(timeout)[-1]

    def send(self, query: dict) -> Pending:
        """Send a query dict (it must have a fresh ``id``); a ``Pending`` for its answers."""
        pending = Pending(self, query)
        line = json.dumps(query, separators=(",", ":")) + "\n"
        with self._lock:
            if self.broken is not None:
                raise KataGoError(self.broken)
            if query["id"] in self._pending:
                raise ValueError(f"query id {query['id']!r} is already in flight")
            self._pending[query["id"]] = pending
        self._outbox.put(line.encode("utf-8"))
        return pending

    def action(self, name: str, timeout: float | None = None, **fields) -> dict:
        """A special action (``query_version``, ``clear_cache``, ``terminate``): its echo."""
        pending = self.send({"id": f"a{next(self._ids)}", "action": name, **fields})
        pending.result(timeout)
        return pending.action_answer

    def wait_any(self, pendings, timeout: float) -> bool:
        """Wait until one of ``pendings`` is finished (answered, refused or failed), at most
        ``timeout`` seconds; whether one is.  Wakes at the answer, not at a polling tick: a
        GPU answers hundreds of queries a second."""
        def answered(seconds: float) -> bool:
            with self._answered:
                return self._answered.wait_for(lambda: any(p.done.is_set() for p in pendings), seconds)
        return _wait_looking_at_signals(answered, timeout)

    def _forget(self, query_id: str) -> None:
        with self._lock:
            self._pending.pop(query_id, None)

    def in_flight(self) -> int:
        """Queries sent and not yet answered (actions not counted)."""
        with self._lock:
            return sum("action" not in p.query for p in self._pending.values())

    def terminate_all(self) -> int:
        """Give up on every query in flight (not the actions): KataGo is told to terminate each,
        and each waiter gets ``KataGoTerminated`` at once (see the module docstring); how many."""
        with self._lock:
            queries = [p for p in self._pending.values() if "action" not in p.query]
        for pending in queries:
            self._give_up_on(pending.query["id"])
            pending._finish(KataGoTerminated(f"query {pending.query['id']!r} terminated by its caller"))
        return len(queries)

    def _give_up_on(self, query_id: str) -> None:
        """Forget a timed-out query and ask KataGo to stop working on it (best effort)."""
        self._forget(query_id)
        line = json.dumps({"id": f"t{next(self._ids)}", "action": "terminate", "terminateId": query_id})
        self._outbox.put(line.encode("utf-8") + b"\n")

    # --- reading ------------------------------------------------------------------------------

    def _read_stdout(self) -> None:
        try:
            for raw in self.proc.stdout:
                self._receive(raw.decode("utf-8", "replace").strip())
                if self.broken is not None:
                    break
        except (OSError, ValueError):
            pass
        code = self._exit_code()
        self._stderr_reader.join(timeout=2.0)  # its last lines say why KataGo exited
        self._break(self._exit_text(code))

    def _exit_text(self, code: int | None) -> str:
        """Why KataGo's output ended, in one line.  After a good start any exit is KataGo
        dying (a crash, the OOM killer, a kill -9), and so is a signal only others send
        (``KILLED_FROM_OUTSIDE``) at any time: not a wrong command line.  Before its start
        an exit or its own abort (a missing model file is SIGABRT) points at the paths."""
        last = f"last stderr: {self._last_stderr()}"
        how = f"exit code {code}" if code is not None else "closed its output"
        if code is not None and code < 0:
            try:
                how = f"signal {-code}, {signal.Signals(-code).name}"
            except ValueError:
                how = f"signal {-code}"
            how += " (killed)" if -code == signal.SIGKILL else ""
            if self._ready or -code in KILLED_FROM_OUTSIDE:
                when = "while answering" if self._ready else "while starting"
                return f"KataGo died {when}: {how}; the answers it had not given are lost ({last})"
        if self._ready:
            return f"KataGo died while answering ({how}; {last}); start the command again"
        return f"KataGo exited ({how}; {last}): check its -model and -config paths, or {FIX_HINT}"

    def _write_stdin(self) -> None:
        """Write the queued lines: a KataGo that stops reading blocks this thread, never a caller."""
        while (line := self._outbox.get()) is not None:
            try:
                self.proc.stdin.write(line)
                self.proc.stdin.flush()
            except (OSError, ValueError):
                return  # the stdout reader sees the exit and fails every pending query with the reason
        try:
            self.proc.stdin.close()
        except OSError:
            pass

    def _read_stderr(self) -> None:
        try:
            for raw in self.proc.stderr:
                self._stderr.append(raw.decode("utf-8", "replace").rstrip())
        except (OSError, ValueError):
            pass

    def _receive(self, line: str) -> None:
        """Route one line of KataGo's output to the query it answers."""
        if not line:
            return
        try:
            answer = json.loads(line)
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            self._break(f"KataGo answered something that is not JSON: {line[:80]!r} (is the command "
                        f"`katago analysis ...`, not `katago gtp`?)")
            return
        with self._lock:
            pending = self._pending.get(str(answer.get("id")))
        if "error" in answer:
            error = KataGoQueryError(str(answer["error"]), answer.get("field"), answer.get("id"))
            if pending is None:
                self._errors.append(str(error))
            else:
                self._forget(pending.query["id"])
                pending._finish(error)
            return
        if pending is None:
            return  # an answer to a query given up on (time-out)
        if "warning" in answer:
            pending.warnings.append(f"{answer.get('field', '')}: {answer['warning']}")
            return
        if "action" in answer:
            pending.action_answer = answer
            self._forget(pending.query["id"])
            pending._finish()
            return
        if answer.get("isDuringSearch"):
            return
        if answer.get("noResults"):
            pending.expected -= 1  # terminated before any visit
        else:
            try:
                pending.answers.append(parse_analysis(answer, pending.query, tuple(pending.warnings)))
            except KataGoError as exc:
                self._forget(pending.query["id"])
                pending._finish(exc)
                return
        if len(pending.answers) >= pending.expected:
            self._forget(pending.query["id"])
            pending._finish()

    def _break(self, reason: str) -> None:
        """Give up on the process: every pending and later query fails with ``reason``."""
        with self._lock:
            if self.broken is None:
                self.broken = reason
            reason = self.broken
            pending, self._pending = list(self._pending.values()), {}
        for p in pending:
            p._finish(KataGoError(reason))

    # --- messages -----------------------------------------------------------------------------

    def _exit_code(self) -> int | None:
        try:
            return self.proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            return None

    def _last_stderr(self) -> str:
        lines = [line for line in list(self._stderr) if line.strip()]
        return " | ".join(lines[-2:]) if lines else "nothing"

    def _timeout_text(self, what: str, wait: float) -> str:
        errors = f"; KataGo's last error: {self._errors[-1]}" if self._errors else ""
        return f"{what} within {wait:g}s (KataGo hangs or is too slow for this many visits){errors}"

    def stderr_lines(self) -> list[str]:
        return list(self._stderr)

    # --- closing ------------------------------------------------------------------------------

    def alive(self) -> bool:
        return self.broken is None and self.proc.poll() is None

    def close(self) -> None:
        """Kill KataGo's process group (what it started too) and reap it; idempotent."""
        with self._lock:
            self.broken = self.broken or "the KataGo client is closed"
        kill_group(self.proc, 10.0)
        self._outbox.put(None)  # the writer closes stdin
        # stdout and stderr are left to the reader threads, which end at their EOF: closing a
        # pipe a thread is reading blocks until the read returns, forever if a process that
        # escaped the group still holds the pipe's other end
        self._break(self.broken)

    def __enter__(self) -> KataGo:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _die_with_parent():
    """A ``preexec_fn`` that makes the kernel SIGKILL KataGo when the thread that started it
    ends (Linux's PR_SET_PDEATHSIG): however fuseki stops (SIGTERM, SIGHUP, a kill -9), its
    KataGo, in a process group of its own that the signal did not reach, goes too.  None
    elsewhere (``close`` and the ``with`` blocks remain).  The thread, not the process: a
    client must be started by a thread that outlives it (the main thread, or the web
    service's worker, which closes it before it ends).

    The function is looked up before the fork: the child only calls it (no allocation).
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent, kill = os.getpid(), int(signal.SIGKILL)

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, kill, 0, 0, 0)
        if os.getppid() != parent:  # fuseki died before prctl: no signal will come
            os._exit(1)
    return preexec


def _split(command: str | list[str]) -> list[str]:
    try:
        argv = shlex.split(command) if isinstance(command, str) else list(command)
    except ValueError as exc:
        raise KataGoError(f"cannot parse the KataGo command {command!r}: {exc}") from None
    if not argv:
        raise KataGoError(f"the KataGo command is empty: {FIX_HINT}")
    if os.sep not in argv[0]:
        argv[0] = shutil.which(argv[0]) or argv[0]
    return argv


# --- finding one ------------------------------------------------------------------------------

def cache_folder() -> Path:
    """Where ``.ci/katago`` puts KataGo (``$FUSEKI_KATAGO_DIR``, else ~/.cache/fuseki/katago)."""
    return Path(os.environ.get("FUSEKI_KATAGO_DIR") or Path.home() / ".cache" / "fuseki" / "katago")


def find_command(configured: str | None = None) -> str | None:
    """The KataGo analysis command to run: ``$FUSEKI_KATAGO``, else ``configured`` (the settings
    file's ``[ai] katago``), else the one ``.ci/katago`` installed, else None."""
    named = os.environ.get("FUSEKI_KATAGO", "").strip() or (configured or "").strip()
    if named:
        return named
    folder = cache_folder()
    parts = [folder / "katago", folder / "model.bin.gz", folder / "analysis.cfg"]
    if all(p.exists() for p in parts):
        return shlex.join([str(parts[0]), "analysis", "-model", str(parts[1]), "-config", str(parts[2])])
    return None


def network_name(command: str | list[str]) -> str:
    """The network a KataGo command line loads: its ``-model`` file's name (links followed)
    without ``.bin.gz``; '' when the command names none."""
    argv = shlex.split(command) if isinstance(command, str) else list(command)
    if "-model" not in argv[:-1]:
        return ""
    name = Path(argv[argv.index("-model") + 1]).resolve().name
    for suffix in (".bin.gz", ".txt.gz", ".gz", ".bin"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name
