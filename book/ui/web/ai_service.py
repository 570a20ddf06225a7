"""KataGo beside the web page's next moves: values at once, KataGo behind (``fuseki serve --ai``).

Plain ``fuseki serve`` (``AiOptions.ask`` False) reads the stored values only: no KataGo looked
for or started, the cache file read when it exists (never made), a position no store has
answered ``{"status": "none", "reason": NOT_STORED}`` at once and for good (nothing queued).

A request never waits for KataGo.  ``AiService.answer(board)`` reads the position's values
(any orientation) through ``book.analysis.ai.AiValueStores``: the book's own ``ai_values`` table when
it has one (a book of games, or the built-in book's file), else the AI value cache file
(``engine.config.ai_cache_path``), the most searched of the KataGo's network (of any network
without a KataGo); a position neither has is put in the service's queue and answered
``{"status": "pending"}`` at once.  ``ai_json`` gives each human next move its values with
``book.analysis.ai.next_move_values`` (KataGo's candidate, else the stored position after the move), and
``corners_ai_json`` the corner book's continuations theirs.  One worker thread (started
with the first job) takes the newest job first (the position a visitor looks at now), starts
KataGo on its first job, asks it through ``book.analysis.ai.AiJudge`` and writes the values to the
cache file (the book may be read-only), where the page's next poll finds them.

``--visits V`` (``AiOptions.minimum``) means at least V, as in ``fuseki search --ai``: a
position whose deepest stored row has fewer visits is answered with that row at once and
queued at V (``AiService.deeper``, the answer's ``deeper``); without KataGo the stored row is
served and says its visits.  Of a ready position, each shown human move played in
``MOVES_SHARE`` of its games or more that the row lacks is queued, one job for the position,
to be asked with the move forced (``AiService.force``: ``book.analysis.ai.moves_to_force``, and
``AiJudge.force`` in the worker, at the row's visits); so is the last move played when the
position before it lacks it (the move the player clicked).  Meanwhile the row's
``ai_missing`` says why ("not evaluated yet", "AI busy: ...") and the answer's ``asking`` is
"pending" (the page polls) or "busy".  A forced move KataGo gives no value is not asked
again (``NO_FORCED_VALUE``).

KataGo's work is budgeted (docs/limits.md): a client address may queue at most
``CLIENT_RATE`` new positions in ``RATE_WINDOW`` seconds (polls of a queued position are
free), at most ``QUEUE`` positions wait in all, and the cache file is not filled past
``CACHE_ROWS`` positions; a deeper search and a position's forced moves are each one job,
budgeted as a new position.  Over any of them the position is answered
``{"status": "busy", "reason": "AI busy: ..."}`` at once, not queued (the page shows the
reason), and the human statistics answer as before; another client, or the same one a minute
later, is served.  A position already queued is not queued twice.  KataGo missing, failing to
start or breaking makes every position the cache lacks ``{"status": "unavailable", "reason":
one line}``.

**Positions left.**  A visitor walking through a line (ten clicks in a few seconds) queues a
position at each click, and KataGo on a CPU takes seconds for each: it went on for over a
minute on positions nobody looked at any more (issue 57).  So each client address keeps the
jobs of its ``VIEWS_KEPT`` newest positions only (``AiService.looking_at``, at each request that
shows KataGo's values: the page's polls of a pending position renew it): a job is held by the
views (client, position shown) whose requests asked for it, a position's own values and forced
moves and the clicked move forced in the position before; once none of its views is among
its client's newest, it is dropped from the queue, and when it is the one KataGo works on, its
queries are terminated (``KataGo.terminate_all``: the ``terminate`` action; a search cut short
is not stored) once the request has queued its own jobs: terminated before, the freed worker
took the newest job queued then, the position just left, and not the one shown now.
Two, not one: the position just left is usually the one under way (the worker
takes the newest first), nearly done, and a second tab or a visitor going back still gets
its answer; any older one costs KataGo nothing more.  Another visitor's view of the same
position keeps it.  What is stored already is never asked, so nothing cached is lost.  A
job cancelled in the instant between the worker's taking it and its queries' sending runs on
to its end.  Visitors behind one address (a proxy without ``--trust-proxy``) share its two
views.  ``dropped_jobs`` and ``terminated_queries`` count what was left.

The budget's address is ``client_address``'s: the socket's, or with ``fuseki serve
--trust-proxy`` the last address of ``X-Forwarded-For``; the server's own warm-up
(``WARM_UP`` in the request's WSGI environ) spends none.

Each server process has its own service (its own KataGo when one is needed): ``fuseki serve
--ai`` runs one process unless ``--workers`` says more.
"""

from __future__ import annotations

import atexit
import threading
import time
from collections import OrderedDict, deque
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from fuseki.book.analysis.ai import (
    MARK_TEXT,
    MARK_VISITS,
    MOVES_SHARE,
    NOT_YET,
    AiValueStores,
    marks,
    missing_reason,
    moves_to_force,
    next_move_values,
)
from fuseki.book.analysis.ai import NO_KATAGO as NO_KATAGO_WORDS  # the row's words (above: the status's)
from fuseki.book.queries import ai_values
from fuseki.book.queries.ai_values import AiSettings, AiValues
from fuseki.engine.core import base
from fuseki.engine.core.base import IllegalMove, opponent

QUEUE = 32  # positions waiting for KataGo, per server process
VIEWS_KEPT = 2  # positions per client address whose jobs stay asked (see "Positions left" above)
CLIENT_RATE = 10  # new positions one client address may give KataGo in RATE_WINDOW, per server process
RATE_WINDOW = 60.0  # seconds
CLIENTS_KEPT = 4096  # client addresses whose recent positions are counted (the least recent leave)
CACHE_ROWS = 200_000  # positions the AI value cache file may hold before serve --ai stops adding
TRIED_KEPT = 100_000  # forced moves remembered as asked (KataGo gave no value: not asked again)
NO_FORCED_VALUE = "KataGo gave no value with the move forced"
UNDER_SHARE = f"played in under {MOVES_SHARE:.0%} of the games: asked when played on the board"
NO_KATAGO = ("no KataGo: name one with fuseki serve --katago CMD or $FUSEKI_KATAGO, or run "
             "`bash .ci/katago` (docs/katago.md)")
# plain ``fuseki serve`` (``AiOptions.ask`` False): the stored values only, KataGo never asked
NOT_STORED = "no KataGo values stored for this position (fuseki serve --ai asks KataGo for them)"
NOT_STORED_MOVE = "not stored"  # a row's cell: short (the status line says what --ai does)
WARM_UP = "fuseki.warm_up"  # the WSGI environ key of the server's own warm-up requests (server._warm_up)


@dataclass(frozen=True)
class AiOptions:
    """What ``fuseki serve --ai`` asks for: KataGo's command (None: none found), the
    settings the values are for, and the cache file.  ``ask`` False (plain ``fuseki serve``):
    the stored values only (the book's table, the cache file when it exists, never made nor
    written), no KataGo started, a position none has answered ``{"status": "none"}``."""

    command: str | None
    rules: str = "japanese"
    komi: float = 6.5
    visits: int = 32
    cache: Path | None = None  # None: engine.config.ai_cache_path()
    minimum: bool = False  # --visits given: a stored row of fewer visits is asked again at ``visits``
    client_rate: int = CLIENT_RATE  # the budget: see the module docstring
    queue: int = QUEUE
    cache_rows: int = CACHE_ROWS
    ask: bool = True  # False: read the stores only (see above)


class JobQueue:
    """Positions waiting for KataGo: newest first, at most ``limit`` (the oldest go), each once."""

    def __init__(self, limit: int = QUEUE):
        self.limit = limit
        self._jobs: OrderedDict[tuple, tuple] = OrderedDict()  # (kind, canonical key) -> job
        self._ready = threading.Condition()

    def put(self, key, job: tuple) -> bool:
        """Queue ``job`` under ``key``; False when it is queued already or the queue is full."""
        with self._ready:
            if key in self._jobs or len(self._jobs) >= self.limit:
                return False
            self._jobs[key] = job
            self._ready.notify()
            return True

    def __contains__(self, key) -> bool:
        with self._ready:
            return key in self._jobs

    def full(self) -> bool:
        with self._ready:
            return len(self._jobs) >= self.limit

    def holds(self, key, job: tuple) -> bool:
        """``job`` itself is queued under ``key`` (not dropped since, nor queued again)."""
        with self._ready:
            return self._jobs.get(key) is job

    def keys(self) -> list:
        """The keys queued, oldest first (the job under way among them)."""
        with self._ready:
            return list(self._jobs)

    def take(self, timeout: float | None = None) -> tuple | None:
        """The newest job (its key stays queued until ``done``), or None after ``timeout``."""
        with self._ready:
            if not self._ready.wait_for(lambda: self._jobs, timeout):
                return None
            key = next(reversed(self._jobs))
            return key, self._jobs[key]

    def done(self, key, job: tuple | None = None) -> None:
        """``key``'s job leaves the queue (``job`` given: only if it is still that one)."""
        with self._ready:
            if job is None or self._jobs.get(key) is job:
                self._jobs.pop(key, None)

    def clear(self) -> None:
        with self._ready:
            self._jobs.clear()

    def __len__(self) -> int:
        with self._ready:
            return len(self._jobs)


class ClientBudget:
    """How many new positions each client address gave KataGo in the last ``window`` seconds:
    ``take(address)`` counts one more unless ``rate`` are counted already.  At most
    ``CLIENTS_KEPT`` addresses are remembered (a flood of addresses costs no more memory)."""

    def __init__(self, rate: int = CLIENT_RATE, window: float = RATE_WINDOW, clock=time.monotonic):
        self.rate, self.window, self.clock = rate, window, clock
        self._asked: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, address: str | None) -> bool:
        now = self.clock()
        with self._lock:
            times = self._asked.pop(address, None) or deque()
            while times and times[0] <= now - self.window:
                times.popleft()
            self._asked[address] = times  # the most recent last
            while len(self._asked) > CLIENTS_KEPT:
                self._asked.popitem(last=False)
            if len(times) >= self.rate:
                return False
            times.append(now)
            return True


def client_address() -> str | None:
    """The address whose budget the request being answered spends (None outside a request,
    ``WARM_UP`` for the server's own warm-up, which spends none): the socket's address, or
    with ``fuseki serve --trust-proxy`` (the app's ``FUSEKI_TRUST_PROXY``) the last address of
    ``X-Forwarded-For``, the one the trusted reverse proxy appended (the addresses before it
    are the client's to write).  Without ``--trust-proxy`` the header is ignored."""
    from flask import current_app, has_request_context, request

    if not has_request_context():
        return None
    if request.environ.get(WARM_UP):  # a WSGI environ key: no header can set it
        return WARM_UP
    if current_app.config.get("FUSEKI_TRUST_PROXY"):
        forwarded = [a.strip() for a in request.headers.get("X-Forwarded-For", "").split(",")]
        if forwarded[-1]:
            return forwarded[-1]
    return request.remote_addr


def _move_key(board, side: int, point: int) -> int:
    """The position after ``side`` plays ``point``, as a key the same in every orientation (so
    a move and its images under the position's symmetry are one move)."""
    child = board.copy()
    try:
        child.play(side, point)
    except IllegalMove:
        return -point - 1
    return min(child.symmetric_keys(opponent(side)))


class AiService:
    """See the module docstring.  ``book_db``: the book's SQLAlchemy engine (its ``ai_values``
    table is read if it has one)."""

    def __init__(self, options: AiOptions, book_db=None):
        from sqlalchemy import create_engine

        from fuseki.book.analysis.katago import network_name
        from fuseki.engine.config import ai_cache_path as cache_path

        self.options = options
        network = network_name(options.command) if options.command and options.ask else ""
        self.settings = AiSettings(rules=options.rules, komi=options.komi, network=network, visits=options.visits)
        self.settings.row_key()  # a komi that is no whole or half number fails here, at start
        path = options.cache or cache_path()
        if options.ask:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.cache_db = create_engine(f"sqlite:///{path}", connect_args={"timeout": 30})
            with self.cache_db.begin() as conn:
                ai_values.create(conn)
        else:  # read only: a cache file not there is skipped, never made
            self.cache_db = (create_engine(f"sqlite:///{path}", connect_args={"timeout": 30})
                             if path.exists() else None)
        self.stores = AiValueStores(book_db, self.cache_db, options.rules, options.komi, network or None)
        self.unavailable: str | None = (None if options.command else NO_KATAGO) if options.ask else NOT_STORED
        self.queue = JobQueue(options.queue)
        self.budget = ClientBudget(options.client_rate)
        self._cached_rows = self._count_rows()
        self._admit_lock = threading.Lock()  # a check of the budget and the queueing are one step
        self._failed: dict[tuple, str] = {}  # jobs KataGo refused or timed out on, and why
        self._tried: set[tuple[int, int]] = set()  # (position, move) forced already, whatever came
        # positions left (the module docstring), guarded by _admit_lock: each client's newest
        # views (position keys, newest last), each queued job's holders (client, view), the
        # key of the job the worker runs
        self._views: OrderedDict[str | None, list[int]] = OrderedDict()
        self._holders: dict[tuple, set[tuple]] = {}
        self._running: tuple | None = None
        self.dropped_jobs = 0  # jobs dropped from the queue, their visitors gone
        self.terminated_queries = 0  # KataGo queries terminated, their visitors gone
        self._lock = threading.Lock()  # guards the worker's start and close
        self._worker: threading.Thread | None = None
        self._katago = None
        self._closed = False

    # --- the request's side ---------------------------------------------------------------------

    @contextmanager
    def looking_at(self, board, client: str | None = None):
        """Within this block the request's client (default: its address) shows ``board``: the
        jobs it asks are held by this view, and the client's views beyond its ``VIEWS_KEPT``
        newest are left (see "Positions left" in the module docstring).  A queued job left is
        dropped at once; the search KataGo runs for one is terminated at the block's end, once
        the request has queued its own jobs, so that the worker, freed, takes the position
        shown now and not the one just left (the newest in the queue until then)."""
        from flask import g, has_request_context

        if not self.options.ask:
            yield
            return
        client = client_address() if client is None else client
        view = min(board.symmetric_keys(board.to_move))
        if has_request_context():
            g.fuseki_ai_view = (client, view)
        with self._admit_lock:
            views = [v for v in self._views.pop(client, []) if v != view] + [view]
            left = [(client, v) for v in views[:-VIEWS_KEPT]]
            self._views[client] = views[-VIEWS_KEPT:]
            while len(self._views) > CLIENTS_KEPT:  # a flood of addresses: the least recent go
                gone, gone_views = self._views.popitem(last=False)
                left += [(gone, v) for v in gone_views]
            running_left = [key for holder in left for key in self._leave(holder)]
        try:
            yield
        finally:
            if running_left:
                self._terminate(running_left[0])

    def _leave(self, holder: tuple) -> list[tuple]:
        """``holder`` (client, view) holds no job any more: a job nobody holds is dropped; the
        key of the one KataGo works on, if so left, is returned for ``_terminate``.  Under
        ``_admit_lock``."""
        running = []
        for key in [k for k, holders in self._holders.items() if holder in holders]:
            holders = self._holders[key]
            holders.discard(holder)
            if holders:
                continue  # another view (another visitor, another tab) still shows it
            del self._holders[key]
            self.queue.done(key)
            if key != self._running:
                self.dropped_jobs += 1
            else:
                running.append(key)
        return running

    def _terminate(self, key: tuple) -> None:
        """KataGo's queries for ``key`` are terminated, unless the worker has left that job since
        or a view has asked for it again."""
        with self._admit_lock:
            if key == self._running and key not in self._holders and self._katago is not None:
                self.terminated_queries += self._katago.terminate_all()  # every query in flight is its

    def _holder(self, key: tuple, client: str | None) -> tuple:
        """The view (client, position) of the request asking ``key``'s job: ``looking_at``'s,
        else (outside a request, or none said) the job's own position."""
        from flask import g, has_request_context

        if has_request_context():
            said = g.get("fuseki_ai_view")
            if said is not None and said[0] == client:
                return said
        return (client, key[1])

    def answer(self, board, client: str | None = None) -> tuple[str, AiValues | str | None]:
        """("ready", values), ("pending", None) with the position queued, ("busy", reason) over
        the budget, or ("unavailable", reason).  ``client``: the asking address (default: the
        request's)."""
        side = board.to_move
        values = self.stores.values(board, side)
        if values is not None:
            return "ready", values
        if not self.options.ask:
            return "none", NOT_STORED
        status, reason = self._ask(("values", min(board.symmetric_keys(side))), ("values", board, side), client)
        return status, reason

    def deeper(self, board, values: AiValues, client: str | None = None) -> dict | None:
        """With ``--visits`` (``options.minimum``) above the visits of the stored ``values``:
        the position queued at ``options.visits`` (its deeper values replace these once stored)
        and ``{"visits": V, "status": "pending"}``, or ``"busy"``/``"unavailable"`` with a
        ``reason``; None when the values are deep enough or no minimum was asked."""
        wanted = self.options.visits
        if not self.options.minimum or values.settings.visits >= wanted:
            return None
        side = board.to_move
        status, reason = self._ask(("values", min(board.symmetric_keys(side))), ("values", board, side), client)
        if status == "unavailable":
            reason = f"{reason}; the {values.settings.visits} visits stored are shown"
        return {"visits": wanted, "status": status, **({"reason": reason} if reason else {})}

    def force(self, board, values: AiValues, moves, total: int, asked=(),
              client: str | None = None) -> tuple[str | None, dict[int, str]]:
        """The moves of ``moves`` (``point``, ``games``) played in ``MOVES_SHARE`` of the ``total``
        games or more, and ``asked``, that ``values``' row lacks, queued for KataGo with each
        move forced (``book.analysis.ai.moves_to_force``, ``AiJudge.force`` in the worker: one job for
        the position): (``"pending"``, ``"busy"`` or None when nothing is asked, why each of
        those points has no value meanwhile: ``missing_reason``'s, the budget's "AI busy: ...",
        or KataGo's failure)."""
        if self.unavailable:
            return None, {}  # the rows say "no KataGo" (missing_reason), or not stored (no --ai)
        side = board.to_move
        key = min(board.symmetric_keys(side))
        wanted = moves_to_force(values, board, side, moves, total, MOVES_SHARE, asked)
        tried = {p for p in wanted if (key, _move_key(board, side, p)) in self._tried}
        reasons = dict.fromkeys(tried, NO_FORCED_VALUE)
        points = [p for p in wanted if p not in tried]
        if not points:
            return None, reasons
        status, reason = self._ask(("force", key), ("force", board, side, points), client)
        if status == "pending":
            reason = missing_reason(board, side, points[0], True)  # "not evaluated yet"
        elif status == "unavailable":
            reason = f"KataGo failed: {reason}"
        reasons.update(dict.fromkeys(points, reason))
        return (status if status in ("pending", "busy") else None), reasons

    def _ask(self, key: tuple, job: tuple, client: str | None) -> tuple[str, str | None]:
        """``job`` queued for the worker within the budget: ("pending", None), else ("busy", why)
        or ("unavailable", why: no KataGo, or KataGo failed on this job before)."""
        reason = self.unavailable or self._failed.get(key)
        if reason:
            return "unavailable", reason
        busy = self._admit(key, job, client_address() if client is None else client)
        if busy:
            return "busy", busy
        self._start_worker()
        return "pending", None

    def _admit(self, key: tuple, job: tuple, client: str | None) -> str | None:
        """Queue ``job`` within the budget; None when queued (or queued already), else why not."""
        with self._admit_lock:
            if key in self.queue:
                self._holders.setdefault(key, set()).add(self._holder(key, client))
                return None  # a poll of a waiting position costs nothing more
            if self._cached_rows >= self.options.cache_rows:
                return (f"AI busy: the AI value cache holds {self._cached_rows:,} positions, the most this "
                        f"server adds to (docs/limits.md); stored positions still answer")
            if self.queue.full():
                return (f"AI busy: {self.queue.limit} positions are waiting for KataGo; ask again in a "
                        f"minute")
            if client != WARM_UP and not self.budget.take(client):  # the server's warm-up is no visitor
                return (f"AI busy: {self.budget.rate} new positions from this address in the last "
                        f"{self.budget.window:g} s, the most KataGo takes from one visitor; ask again in a minute")
            self.queue.put(key, job)
            self._holders[key] = {self._holder(key, client)}
            return None

    def _count_rows(self) -> int:
        from sqlalchemy import func, select

        if self.cache_db is None:
            return 0
        with self.cache_db.connect() as conn:
            return conn.execute(select(func.count()).select_from(ai_values.ai_values)).scalar_one()

    def settings_json(self) -> dict:
        s = self.settings
        return {"network": s.network, "rules": s.rules, "komi": s.komi, "visits": s.visits}

    # --- the worker -----------------------------------------------------------------------------

    def _start_worker(self) -> None:
        with self._lock:
            if self._worker is None and not self._closed:
                atexit.register(self.close)  # a stopping server process takes its KataGo along
                self._worker = threading.Thread(target=self._work, daemon=True, name="fuseki-katago")
                self._worker.start()

    def _work(self) -> None:
        from fuseki.book.analysis.ai import AiJudge
        from fuseki.book.analysis.katago import KataGoError, KataGoTerminated, answer_timeout

        judge = AiJudge(self.cache_db, None, self.settings.rules, self.settings.komi, self.settings.visits,
                        network=self.settings.network)
        while not self._closed and self.unavailable is None:
            job = self.queue.take(timeout=1.0)
            if job is None:
                continue
            key, body = job
            kind, board, side, *points = body
            with self._admit_lock:
                if not self.queue.holds(key, body):
                    continue  # dropped since: its visitors left it
                self._running = key
            try:
                if kind == "values":
                    if self._lacks(board, side):  # another server process may have asked meanwhile
                        if not self._start_katago(judge):
                            break
                        judge.values([(board, side)], timeout=answer_timeout(self.settings.visits))
                else:
                    self._force(judge, board, side, points[0])
            except KataGoTerminated:
                pass  # its visitors left it (``_leave``): nothing stored, nothing failed
            except KataGoError as exc:
                if judge.katago is None or judge.katago.broken:
                    self.unavailable = str(exc)  # KataGo is gone: no later job can be answered
                    self.queue.clear()
                else:
                    self._failed[key] = str(exc)  # this job only (a refusal, a time-out)
            except Exception as exc:  # noqa: BLE001  # a worker that dies would leave every visitor pending
                self._failed[key] = f"{type(exc).__name__}: {exc}"
            finally:
                with self._admit_lock:
                    self._running = None
                    self.queue.done(key, body)
                    if key not in self.queue:
                        self._holders.pop(key, None)
                try:
                    self._cached_rows = self._count_rows()  # other processes add to the file too
                except Exception:  # noqa: BLE001  # a locked file: the last count stands
                    pass
        self.close()

    def _lacks(self, board, side: int) -> bool:
        """No stored values, or (``options.minimum``) fewer visits than asked."""
        values = self.stores.values(board, side)
        return values is None or (self.options.minimum and values.settings.visits < self.options.visits)

    def _start_katago(self, judge) -> bool:
        """``judge`` given the service's KataGo, started at the first job; False once closed."""
        from fuseki.book.analysis.katago import KataGo

        if judge.katago is None:
            katago = KataGo(self.options.command)
            with self._lock:
                self._katago = katago
                if self._closed:
                    return False
            judge.katago = katago
        return True

    def _force(self, judge, board, side: int, points: list[int]) -> None:
        """The ``points`` the stored row still lacks evaluated with each move forced, at the
        row's visits (``AiJudge.force``, merged into the cache file's row); each remembered as
        asked, so that a move KataGo gives no value is not asked again."""
        from fuseki.book.analysis.katago import answer_timeout

        values = self.stores.values(board, side)
        if values is None:
            return
        key = min(board.symmetric_keys(side))
        points = [p for p in points if values.move(p) is None]
        try:
            if points and self._start_katago(judge):
                judge.force(values, board, side, points,
                            timeout=answer_timeout(values.settings.visits * len(points)))
        finally:
            if len(self._tried) > TRIED_KEPT:
                self._tried.clear()
            self._tried.update((key, _move_key(board, side, p)) for p in points)

    def close(self) -> None:
        """Stop the worker and KataGo (their threads and process); the cache file stays."""
        with self._lock:
            self._closed = True
            katago, self._katago = self._katago, None
        if katago is not None:
            katago.close()


# --- the answer's JSON -------------------------------------------------------------------------


def ai_json(service: AiService, board, next_rows: list[dict], found) -> dict:
    """The ``ai`` of a position answer (``settings``: those of the values found once ready);
    adds each human row's ``ai`` (None when neither KataGo's search nor the position after the
    move has values; ``source`` says which gave them) to ``next_rows``
    (``app.next_moves_json``'s rows, whose ``points`` are SGF), and to a row without values its
    ``ai_missing``, why (``book.analysis.ai.missing_reason``, or the budget's "AI busy: ...").
    ``found``: ``total`` and ``moves`` (each ``point``, ``points``, ``games``): the book's next
    moves, or a whole-board pattern's continuations.

    KataGo is asked for more behind the answer: the position again at ``--visits`` when the
    stored values have fewer (``deeper``: ``AiService.deeper``), the shown moves of
    ``MOVES_SHARE`` of the games that the row lacks with each move forced (``AiService.force``;
    once the position is searched deep enough), and the last move played, forced in the
    position before it when that position's values lack it (the move the player clicked).
    ``asking``: "pending" while any of it waits for KataGo (the page asks again), "busy" when
    some was refused over the budget, else None."""
    with service.looking_at(board):
        return _ai_json(service, board, next_rows, found)


def _ai_json(service: AiService, board, next_rows: list[dict], found) -> dict:
    asking = [_force_clicked(service, board)]
    answer, got = _status_json(service, board, [next_rows])
    if got is None:
        answer["asking"] = _asking(asking)
        return answer
    size = board.size
    stats = found.moves[:len(next_rows)]
    reasons: dict[int, str] = {}
    deeper = service.deeper(board, got)
    answer["deeper"] = deeper
    if deeper is not None:
        asking.append(deeper["status"])
    if deeper is None or deeper["status"] != "pending":  # forced at the row's visits: the deeper row's
        state, reasons = service.force(board, got, stats, found.total)
        asking.append(state)
    for move in stats:  # a rarer move is asked only when played on the board: say so, not "not yet"
        if move.point not in reasons and move.games < MOVES_SHARE * max(found.total, 1) and \
                missing_reason(board, board.to_move, move.point, service.unavailable is None) == NOT_YET:
            reasons[move.point] = UNDER_SHARE
    played = _fill_rows(service, got, board, next_rows, stats, found.total, reasons=reasons)
    moves = []
    for move in got.moves:
        if move.point == base.PASS:
            continue
        mine = not set(move.points) & played
        moves.append({"sgf": base.point_to_sgf(move.point, size), "vertex": base.point_to_vertex(move.point, size),
                      "points": [base.point_to_sgf(p, size) for p in move.points], **_values(move, size),
                      "played": not mine, "mark": "ai" if mine else None})
    answer.update(visits=got.visits, winrate=got.winrate, score_lead=got.score_lead, moves=moves,
                  mark_visits=MARK_VISITS, asking=_asking(asking))
    return answer


def _asking(states) -> str | None:
    return "pending" if "pending" in states else "busy" if "busy" in states else None


def _force_clicked(service: AiService, board) -> str | None:
    """The last move played (the one the player clicked), forced in the position before it
    when that position's stored values lack it (``AiService.force``'s state; None: nothing
    asked)."""
    if not board.moves or board.moves[-1][1] == base.PASS:
        return None
    point = board.moves[-1][1]
    parent = board.copy()
    parent.undo()
    values = service.stores.values(parent, parent.to_move)
    if values is None or values.move(point) is not None:
        return None
    state, _ = service.force(parent, values, [], 0, asked=[point])
    return state


def corners_ai_json(service: AiService, board, corners: list[tuple[list[dict], list, int]]) -> dict:
    """The ``ai`` of a corner book answer, as ``ai_json``'s without KataGo's own moves: each
    corner's (rows, ``CornerMove``s, total) gets each row's ``ai``, the values of the move's one
    point (``book.analysis.ai.one_point_each``); a tenuki is no row and gets none."""
    from fuseki.book.analysis.ai import one_point_each

    with service.looking_at(board):
        answer, got = _status_json(service, board, [rows for rows, _, _ in corners])
    if got is None:
        return answer
    for rows, moves, total in corners:
        _fill_rows(service, got, board, rows, one_point_each(moves[:len(rows)]), total, moves)
    answer.update(visits=got.visits, winrate=got.winrate, score_lead=got.score_lead, mark_visits=MARK_VISITS)
    return answer


def _status_json(service: AiService, board, row_lists) -> tuple[dict, AiValues | None]:
    """The answer's status and settings, every row's ``ai`` None; the values once ready."""
    status, got = service.answer(board)
    answer = {"status": status, "settings": service.settings_json()}
    for rows in row_lists:
        for row in rows:
            row["ai"] = None
    if status in ("unavailable", "busy", "none"):
        answer["reason"] = got
    if status != "ready":
        return answer, None
    s = got.settings
    answer["settings"] = {"network": s.network, "rules": s.rules, "komi": s.komi, "visits": s.visits}
    return answer, got


def _fill_rows(service: AiService, got: AiValues, board, rows, moves, total: int, counted=None,
               reasons: dict[int, str] | None = None) -> set[int]:
    """Each row's ``ai`` from ``next_move_values`` of its move (``counted``: whose ``games``
    mark it, default ``moves``), a row without its ``ai_missing`` (``reasons``' for its point,
    else ``missing_reason``'s); the points of the moves."""
    played: set[int] = set()
    counted = moves if counted is None else counted
    found = next_move_values(got, board, board.to_move, moves, service.stores.values)
    kinds = marks([human.games for human in counted[:len(found)]], total, found)
    for row, move, value, kind in zip(rows, moves, found, kinds):
        played.update(move.points)
        if value is not None:
            row["ai"] = {**_values(value, board.size), "source": value.source, "mark": kind,
                         "mark_text": MARK_TEXT.get(kind)}
        else:  # the page says why the cell is empty
            row["ai_missing"] = (reasons or {}).get(move.point) or _missing(service, board, move.point)
    return played


def _missing(service: AiService, board, point: int) -> str:
    """``missing_reason``'s words; without ``--ai`` "not stored" where they say "no KataGo"."""
    reason = missing_reason(board, board.to_move, point, service.unavailable is None)
    return NOT_STORED_MOVE if reason == NO_KATAGO_WORDS and not service.options.ask else reason


def _values(move, size: int) -> dict:
    """A move's values; ``pv``: KataGo's line from the move on, SGF points (``[]``: none stored)."""
    return {"winrate": round(move.winrate, 4), "score_lead": round(move.score_lead, 2),
            "loss": round(move.loss, 2) + 0.0, "visits": move.visits,
            "pv": [base.point_to_sgf(p, size) for p in move.pv]}
