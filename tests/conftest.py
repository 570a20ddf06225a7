"""Shared test fixtures: the book's two backends, the real-data archives, required programs.

- ``book_url``: a fresh, empty book location, once for SQLite (a file in ``tmp_path``, given
  as a plain path, as a user types it) and once for PostgreSQL (a fresh database on the
  loopback server, given as a ``postgresql://`` URL, dropped after the test).  A test that
  takes ``book_url`` runs against both; ``pg_url_factory`` hands out more PostgreSQL
  databases for tests that need several (e.g. to compare two imports).
- ``shared_data``: the folder of real archives (``/work/shared/data`` next to the
  repository); tests using it skip when it is absent.
- ``require_executable(name)``: the program's path, else skip.

Missing services (PostgreSQL unreachable, a program not installed) skip the tests that
need them, except under ``FUSEKI_REQUIRE_SERVICES=1`` (set by ``.ci/run``), where they fail:
CI must not pass by skipping.

The server is ``$FUSEKI_TEST_POSTGRES`` (default
``postgresql://fuseki:fuseki@127.0.0.1:5432/fuseki_test``, what ``.ci/postgres`` creates);
its user needs CREATEDB.  Test databases are named ``fuseki_t_<pid>_<n>`` so that runs of
the suite side by side never share one, and a run's leftovers (a killed pytest) are dropped
by the next run once their pid is gone.
"""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

ROOT = Path(__file__).resolve().parents[1]


def _import_this_checkout() -> Path:
    """Make ``import fuseki`` load this checkout, here and in every subprocess a test starts.

    The repository's root is the package ``fuseki``; a link named ``fuseki`` to it, in a
    folder put first on ``sys.path`` and ``PYTHONPATH``, makes the tests test the tree they
    are in, whether fuseki is installed or not and whichever copy is.
    """
    folder = Path(tempfile.mkdtemp(prefix="fuseki-tests-"))
    (folder / "fuseki").symlink_to(ROOT, target_is_directory=True)
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    sys.path.insert(0, str(folder))
    sys.path.insert(1, str(ROOT))  # gtp_main (the engine's assembler), bench scripts
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(folder), str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    return folder


CHECKOUT_PATH = _import_this_checkout()
# the engine's book chooser reads the user's AI value cache: tests read none (a file not there)
# unless they name one, here and in the engines and commands they start
os.environ["FUSEKI_AI_CACHE"] = str(CHECKOUT_PATH / "no-ai-cache.sqlite")
SHARED_DATA = ROOT.parent / "shared" / "data"
POSTGRES_URL = os.environ.get("FUSEKI_TEST_POSTGRES",
                              "postgresql://fuseki:fuseki@127.0.0.1:5432/fuseki_test")
DB_PREFIX = "fuseki_t_"

# Hypothesis draws the same examples on every run (seeded from each test's own code, not
# from the clock), and keeps no example database between runs: a run's answer depends on the
# code alone (tests/test_reproducible.py checks both).  Nor on the machine's speed: no
# example has a deadline, and the health check that times the drawing of examples is off.
hypothesis_settings.register_profile("fuseki", derandomize=True, database=None, deadline=None,
                                     suppress_health_check=[HealthCheck.too_slow])
hypothesis_settings.load_profile("fuseki")


def services_required() -> bool:
    """True under CI (``FUSEKI_REQUIRE_SERVICES=1``): a missing service fails the test."""
    return os.environ.get("FUSEKI_REQUIRE_SERVICES", "") not in ("", "0")


def missing_service(reason: str):
    """Skip the current test for ``reason``, or fail it under ``FUSEKI_REQUIRE_SERVICES=1``."""
    if services_required():
        pytest.fail(f"{reason} (FUSEKI_REQUIRE_SERVICES=1: required in CI)", pytrace=False)
    pytest.skip(reason)


def find_program(name: str) -> str | None:
    """The full path of program ``name``: PATH, then /usr/games (where Debian puts gnugo)."""
    return shutil.which(name) or shutil.which(name, path="/usr/games:/usr/local/games")


def require_executable(name: str) -> str:
    """The full path of program ``name``, else skip (fail under ``FUSEKI_REQUIRE_SERVICES=1``)."""
    path = find_program(name)
    if path is None:
        missing_service(f"{name} is not installed (bash .ci/setup installs it)")
    return path


GNUGO = find_program("gnugo")


@pytest.fixture
def gnugo() -> str:
    """GNU Go's path (the rules oracle and referee); skips without it, fails in CI."""
    return require_executable("gnugo")


needs_gnugo = pytest.mark.usefixtures("gnugo")


# --- PostgreSQL ------------------------------------------------------------------------------

def _with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + name))


class _Postgres:
    """Creates and drops the test databases through one admin connection (psycopg2, autocommit)."""

    def __init__(self, url: str):
        import psycopg2

        self.url = url
        self.conn = psycopg2.connect(url, connect_timeout=3)
        self.conn.autocommit = True
        self.counter = itertools.count()
        self._dropper: threading.Thread | None = None
        self._drop_leftovers()

    def _drop_leftovers(self) -> None:
        with self.conn.cursor() as cur:
            cur.execute("select datname from pg_database where datname like %s", (DB_PREFIX + "%",))
            names = [row[0] for row in cur.fetchall()]
        for name in names:
            pid = name[len(DB_PREFIX):].split("_")[0]
            if pid.isdigit() and not _alive(int(pid)):
                self.drop(name)

    def create(self) -> str:
        name = f"{DB_PREFIX}{os.getpid()}_{next(self.counter)}"
        with self.conn.cursor() as cur:
            cur.execute(f'drop database if exists "{name}" with (force)')
            cur.execute(f'create database "{name}"')
        return _with_database(self.url, name)

    def drop(self, name: str, conn=None) -> None:
        # FORCE (PostgreSQL 13+): a test that left a connection open must not block the drop.
        # An autovacuum worker on it is the server's: a role without pg_signal_backend (granted
        # by .ci/postgres) cannot stop it, so wait for it to finish.
        import psycopg2.errors

        for attempt in range(20):
            try:
                with (conn or self.conn).cursor() as cur:
                    cur.execute(f'drop database if exists "{name}" with (force)')
                return
            except psycopg2.errors.InsufficientPrivilege:
                if attempt == 19:
                    raise
                time.sleep(0.5)

    def drop_later(self, name: str) -> None:
        """Drop ``name`` on a thread of its own: DROP DATABASE waits for a checkpoint, which took
        30 s after the killed-import test's database on a busy machine, and nothing of the test
        that made it needs to wait for that.  ``close`` waits for every drop asked."""
        if self._dropper is None:
            import queue

            self._drops = queue.Queue()
            self._dropper = threading.Thread(target=self._drop_each, name="pg-drops", daemon=True)
            self._dropper.start()
        self._drops.put(name)

    def _drop_each(self) -> None:
        import psycopg2

        conn = psycopg2.connect(self.url, connect_timeout=3)  # its own: create() goes on meanwhile
        conn.autocommit = True
        try:
            while (name := self._drops.get()) is not None:
                try:
                    self.drop(name, conn)
                except Exception as exc:  # noqa: BLE001 - a leftover is dropped by the next session
                    print(f"could not drop the test database {name}: {exc}", file=sys.stderr)
        finally:
            conn.close()

    def close(self) -> None:
        if self._dropper is not None:
            self._drops.put(None)
            self._dropper.join()
        self.conn.close()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@pytest.fixture(scope="session")
def _postgres():
    """The admin connection, or the reason there is none (psycopg2 missing, server down)."""
    try:
        server = _Postgres(POSTGRES_URL)
    except Exception as exc:  # noqa: BLE001 - ImportError or any driver error means "no server"
        yield f"PostgreSQL not reachable at {POSTGRES_URL}: {type(exc).__name__}: {str(exc).strip()}"
        return
    yield server
    server.close()


@pytest.fixture
def pg_url_factory(_postgres):
    """``make() -> url``: fresh, empty PostgreSQL databases, all dropped after the test."""
    if isinstance(_postgres, str):
        missing_service(_postgres)
    made: list[str] = []

    def make() -> str:
        url = _postgres.create()
        made.append(url)
        return url

    yield make
    for url in made:
        _postgres.drop_later(urlsplit(url).path.lstrip("/"))


@pytest.fixture
def pg_url(pg_url_factory) -> str:
    """One fresh PostgreSQL database (``postgresql://`` URL)."""
    return pg_url_factory()


@pytest.fixture(params=["sqlite", "postgresql"])
def book_url(request, tmp_path) -> str:
    """A fresh, empty book: a SQLite file path, or a fresh PostgreSQL database's URL."""
    if request.param == "sqlite":
        return str(tmp_path / "book.sqlite")
    return request.getfixturevalue("pg_url")


@pytest.fixture(params=["sqlite", "postgresql"])
def new_book(request, tmp_path):
    """``new_book() -> location``: a fresh, empty book each call, on one backend."""
    if request.param == "postgresql":
        return request.getfixturevalue("pg_url_factory")
    counter = iter(range(1_000_000))
    return lambda: str(tmp_path / f"book{next(counter)}.sqlite")


def is_sqlite(url: str) -> bool:
    """True for a SQLite book (a plain path or a ``sqlite:`` URL)."""
    return "://" not in url or url.startswith("sqlite")


# --- real data -------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The folder of real archives (tygem-2016-07.tgz, ai-games.tgz); skips when absent
    (fails under ``FUSEKI_REQUIRE_SERVICES=1``: CI has ``../shared`` beside the clone)."""
    if not SHARED_DATA.is_dir():
        missing_service(f"no shared data folder at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(scope="session")
def month_book(shared_data, tmp_path_factory) -> Path:
    """A book of the whole Tygem month (``tygem-2016-07.tgz``), made once by ``fuseki import`` as a
    user makes one (pattern index, corner book, busy positions' rows), for the modules that only
    read it (players, search within): one import of 11,364 games instead of one each.  Under
    pytest-xdist the processes share one: the first to need it imports it under a file lock in the
    run's common temporary folder, the other waits for it (two imports side by side took a core
    each for some 30 s of the suite's time on 2 cores)."""
    import fcntl

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the folder every process of this run shares
    folder = root / "month-book"
    folder.mkdir(exist_ok=True)
    path, made = folder / "tygem.sqlite", folder / "made"
    with open(folder / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, by a failed import too
        if not made.exists():
            for leftover in folder.glob("tygem.sqlite*"):  # what a failed import of another process left
                shutil.rmtree(leftover) if leftover.is_dir() else leftover.unlink()
            env = {**os.environ,
                   "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
            done = subprocess.run([sys.executable, "-m", "fuseki", "import", str(shared_data / "tygem-2016-07.tgz"),
                                   "--book", str(path), "--workers", "1"], cwd=ROOT, env=env,
                                  capture_output=True, text=True, timeout=900)
            assert done.returncode == 0, done.stderr[-2000:]
            made.touch()
    return path


def copy_book(source: Path, target: Path) -> Path:
    """A copy of the SQLite book ``source`` at ``target``, with the folders beside it (its segment
    files and its pattern index map): for a module that writes to the session's ``month_book``
    (adds games, builds something), which the other modules read as it was made.  SQLite's
    backup copies the file, what its write-ahead log holds included."""
    import sqlite3

    with sqlite3.connect(f"file:{source}?mode=ro", uri=True) as origin, sqlite3.connect(target) as copy:
        origin.backup(copy)
    origin.close()
    copy.close()
    for suffix in ("-segments", "-patterns"):
        if Path(f"{source}{suffix}").is_dir():
            shutil.copytree(f"{source}{suffix}", f"{target}{suffix}")
    return target


def require_shared_file(*names: str) -> list[Path]:
    """The named files of the shared data folder; skips (fails in CI) when one is missing."""
    missing = [name for name in names if not (SHARED_DATA / name).exists()]
    if missing:
        missing_service(f"missing {', '.join(missing)} in {SHARED_DATA}")
    return [SHARED_DATA / name for name in names]


@pytest.fixture(scope="session")
def tygem_games(shared_data) -> list[tuple[str, bytes]]:
    """The first 3,000 game files of the Tygem archive as (member name, bytes), read once."""
    import tarfile

    games: list[tuple[str, bytes]] = []
    with tarfile.open(shared_data / "tygem-2016-07.tgz", "r|gz") as archive:
        for member in archive:
            if member.isfile() and member.name.lower().endswith(".sgf"):
                games.append((member.name, archive.extractfile(member).read()))
                if len(games) >= 3000:
                    break
    return games


def sgfmill_main_line(game) -> list[tuple[int, int]]:
    """An sgfmill game's main line as (colour: 1 Black, 2 White, point; PASS for a pass), read by
    sgfmill alone: the brute forces' moves (sgfmill counts rows from the bottom)."""
    from fuseki.engine.core.base import BLACK, PASS, WHITE, xy_to_point

    size, moves = game.get_size(), []
    for node in game.get_main_sequence()[1:]:
        colour, move = node.get_move()
        if colour is not None:
            point = PASS if move is None else xy_to_point(move[1], size - 1 - move[0], size)
            moves.append((BLACK if colour == "b" else WHITE, point))
    return moves


def peak_memory(call) -> tuple[object, int]:
    """(call's answer, the most bytes it held at once beyond what was held before: tracemalloc's)."""
    import tracemalloc

    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        answer = call()
        return answer, tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def write_archive(path: Path, members: list[tuple[str, bytes]]) -> Path:
    """A .tgz at ``path`` holding ``members`` ((name, bytes), in order); returns ``path``."""
    import io
    import tarfile

    with tarfile.open(path, "w:gz", compresslevel=1) as archive:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


# An import in its own process, as ``fuseki import`` runs it but with a chosen batch size
# (the CLI's 2,000-game batches would make a test archive one transaction).
IMPORT_SCRIPT = """
import sys
from fuseki.book.analysis.pipeline.importer import import_paths
from fuseki.book.storage.store import Book
book_url, batch, workers, announce, *paths = sys.argv[1:]


class Batches:  # says each committed batch on stdout, so that a test can time a kill into the writing
    def start(self, total):
        pass

    def update(self, report, read, force=False):
        print("batch", report.added, flush=True)
        if announce == "paced":  # the test lets the writer go on when it has seen what it waits for
            sys.stdin.readline()

    def done(self):
        pass


book = Book.open(book_url)
print("open", flush=True)
report = import_paths(book, paths, workers=int(workers), batch_games=int(batch),
                      progress=Batches() if announce != "0" else None)
book.close()
print(report.added, report.duplicates, len(report.skipped), flush=True)
"""


def import_command(book: str, paths: list, batch_games: int = 100, workers: int = 0,
                   announce_batches: bool | str = False) -> list[str]:
    """argv of a subprocess importing ``paths`` into ``book`` (run it with cwd=ROOT).

    It prints ``open`` once the book is open, ``batch N`` after each batch it commits (N: the
    games added so far) when ``announce_batches``, then ``added duplicates skipped`` at the end.
    With ``announce_batches="paced"`` it also stops after each ``batch N`` line until a line
    comes on its stdin (see ``PacedImport``).
    """
    import sys

    announce = "paced" if announce_batches == "paced" else "1" if announce_batches else "0"
    return [sys.executable, "-c", IMPORT_SCRIPT, str(book), str(batch_games), str(workers),
            announce, *map(str, paths)]


class PacedImport:
    """An import in another process that stops after each committed batch until it is released.

    Tests of readers beside a writer use it to prove the overlap by synchronising, not by speed:
    ``for added in importing.batches(): wait for the readers to see it; importing.release()``.
    The import cannot end before the readers have seen every batch, however slow the machine.
    """

    def __init__(self, book: str, paths: list, batch_games: int = 20, workers: int = 0, env=None):
        import queue
        import threading

        self.log = tempfile.TemporaryFile()  # stderr: a pipe nobody reads could fill and block the import
        self.process = subprocess.Popen(import_command(book, paths, batch_games, workers, "paced"), cwd=ROOT,
                                        env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log)
        self.summary: list[int] | None = None
        # Lines are read by a thread, so that a stuck import fails the test after ``wait`` seconds
        # with its stderr instead of blocking the whole suite in readline.
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read_lines, daemon=True).start()
        line = self.next_line()
        if line.strip() != b"open":
            self.fail(f"the import did not open the book: {line!r}")

    def _read_lines(self) -> None:
        for line in iter(self.process.stdout.readline, b""):
            self.lines.put(line)
        self.lines.put(b"")  # the end

    WAIT = 600  # seconds for the import's next line: generous, a bound on a hang, not a speed target

    def next_line(self) -> bytes:
        import queue

        try:
            return self.lines.get(timeout=self.WAIT)
        except queue.Empty:
            self.fail(f"the import said nothing for {self.WAIT} s")

    def batches(self):
        """The games added so far after each batch, while the import waits; ends with the import's
        last line (``summary``: added, duplicates, skipped)."""
        while line := self.next_line():
            word, *numbers = line.split()
            if word != b"batch":
                self.summary = [int(word), *map(int, numbers)]
                return
            yield int(numbers[0])
        self.fail("the import ended without its summary")

    def release(self) -> None:
        """Let the import go on past the batch it stopped at."""
        self.process.stdin.write(b"go\n")
        self.process.stdin.flush()

    def finish(self, timeout: float = 120) -> list[int]:
        """Wait for the import to end; its summary.  Fails with its stderr if it did not succeed."""
        if self.process.wait(timeout) != 0 or self.summary is None:
            self.fail(f"the import exited with {self.process.returncode}")
        return self.summary

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(30)
        self.process.stdin.close()  # stdout is the reader thread's: it ends at the killed import's EOF
        self.log.close()

    def fail(self, reason: str):
        if self.process.poll() is None:
            self.process.kill()
        self.log.seek(0)
        pytest.fail(f"{reason}\n{self.log.read().decode(errors='replace')[-3000:]}")


@pytest.fixture
def ai_test_book(tmp_path, capsys, monkeypatch):
    """``ai_test_book(games)``: a SQLite book of ``games`` (each a list of (colour, point)) made
    by ``fuseki import``, and an empty AI value cache beside it (``$FUSEKI_AI_CACHE``): what the
    KataGo tests ask about must come from KataGo or the book.  Gives the book's path."""
    from fuseki.book.ui.fuseki_command import main

    from games import sgf_text

    def make(games) -> str:
        folder = tmp_path / "ai-test-games"
        folder.mkdir()
        for i, moves in enumerate(games):
            (folder / f"{i}.sgf").write_bytes(sgf_text(19, moves, "a", "b", "2016-01-02", "B+R"))
        path = str(tmp_path / "book.sqlite")
        assert main(["import", str(folder), "--book", path, "--workers", "0"]) == 0
        capsys.readouterr()
        monkeypatch.setenv("FUSEKI_AI_CACHE", str(tmp_path / "ai-cache.sqlite"))
        return path

    return make


# --- the longest modules start first ------------------------------------------------------------

# pytest-xdist's --dist loadfile hands out whole modules in collection order (``--no-loadscope-reorder``
# in pyproject.toml; its default would order them by their number of tests, which put these, a few
# long tests each, last: a worker then ran test_katago's 73-second test alone at the end).  The
# modules whose tests took longest, in that order (seconds summed over their tests, setup included,
# ``pytest -n 2 --dist loadfile --durations=0`` on an idle machine, 2026-11-28); the rest follow in
# their usual order.  tests/test_suite_shape.py checks that each is still a module here.
LONGEST_FIRST = (
    "test_katago.py",  # 84 s
    "test_ai_annotate.py",  # 72
    "test_ai_deep.py",  # 49
    "test_katago_stops.py",  # 46 then; 20 s alone since it waits for KataGo's logged query (5ca0f03)
    "test_crash_import.py",  # 40
    "test_patterns.py",  # 36
    "test_filters.py",  # 31
    "test_web_ai.py",  # 31
    "test_import_stops.py",  # 28
    "test_web_hand.py",  # 26
    "test_web_layout.py",  # 26
    "test_web_clicks.py",  # 24
    "test_web_browser.py",  # 24
    "test_import_complete.py",  # 23
    "test_store.py",  # 22
    "test_web_load.py",  # 21
    "test_practice.py",  # 20
    "test_web_links.py",  # 20
    "test_web_attacks.py",  # 20 (the trickling tests wait out their 4 s deadline; 32 with the slow one)
)


def pytest_collection_modifyitems(config, items) -> None:
    rank = {name: place for place, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: a module's own order stays


# --- numba's kernels compiled once, before the two processes run tests (tests/warmjit.py) -------

# In a fresh clone both of xdist's processes compiled the same kernels at their first tests (some
# 20 s each on a loaded machine).  The controller starts tests/warmjit.py as it starts, the two
# processes collect meanwhile and wait for it before their first test, then load the kernels from
# numba's cache; so do the ``fuseki`` commands the tests start.  A plain one-process run skips it.
WARM_JIT_WAIT = 600  # seconds: a bound on a hang, not a speed target; past it a process compiles itself


def pytest_configure(config) -> None:
    if hasattr(config, "workerinput"):
        return
    import hostspeed

    config._host_speed_at_start = hostspeed.figures()  # before any process of the suite starts
    if not getattr(config.option, "numprocesses", None):
        return
    folder = Path(tempfile.mkdtemp(prefix="fuseki-warmjit-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    config._warm_jit_done = folder / "done"
    log = open(folder / "log", "wb")  # the process writes its errors here (not read: a miss costs time only)
    config._warm_jit = subprocess.Popen(
        [sys.executable, "-c", "import sys, warmjit; warmjit.main(sys.argv[1])", str(config._warm_jit_done)],
        cwd=Path(__file__).parent, stdout=log, stderr=subprocess.STDOUT)
    log.close()


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook, on the controller: what each process is told
def pytest_configure_node(node) -> None:
    node.workerinput["warm_jit_done"] = str(node.config._warm_jit_done)
    node.workerinput["warm_jit_pid"] = node.config._warm_jit.pid


def pytest_unconfigure(config) -> None:
    process = getattr(config, "_warm_jit", None)
    if process is not None and process.poll() is None:
        process.kill()
        process.wait()


def _running(pid: int) -> bool:
    """The process is there and not a zombie (one that died before it said it was done)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session) -> None:
    told = getattr(session.config, "workerinput", {})
    done, pid = told.get("warm_jit_done"), told.get("warm_jit_pid")
    deadline = time.monotonic() + WARM_JIT_WAIT
    while done and not os.path.exists(done) and _running(pid) and time.monotonic() < deadline:
        time.sleep(0.05)


# --- the host's speed under the result (tests/hostspeed.py) --------------------------------------

def pytest_terminal_summary(terminalreporter, config) -> None:
    if hasattr(config, "workerinput"):
        return
    import hostspeed

    terminalreporter.write_line(f"host: {hostspeed.processor()}; at the start {config._host_speed_at_start}, "
                                f"at the end {hostspeed.figures()} (tests/hostspeed.py; README.md's suite "
                                f"times say theirs)")


# --- a hung test fails instead of holding the suite (tests/hangguard.py) --------------------------

from hangguard import _hung_test_ends  # noqa: E402, F401

# --- shared fixtures and helpers moved out of the test modules (issue 41: no test module imports
# another; the helpers themselves live in the support modules beside this file) -----------------

@pytest.fixture(scope="module")
def small_games_book(tmp_path_factory) -> str:
    """A SQLite book of 30 generated 19x19 games (tests/games.py, seed 17): its path.  For tests
    of a whole command's process (start-up, the numba cache) that need a book, not its contents."""
    from fuseki.book.analysis.pipeline import importer
    from fuseki.book.storage.store import Book

    from games import write_games

    folder = tmp_path_factory.mktemp("smallbook")
    (folder / "games").mkdir()
    write_games(folder / "games", count=30, seed=17)
    location = str(folder / "book.sqlite")
    with Book.open(location) as book:
        importer.import_paths(book, [str(folder / "games")], workers=0)
    return location


@pytest.fixture(scope="module")
def corner_ways_book(tmp_path_factory) -> str:
    """The corner-ways book (tests/cornerways.py's five games) with its corner book built: its path."""
    from fuseki.book.analysis.patterns import corner_build
    from fuseki.book.analysis.pipeline import importer
    from fuseki.book.storage.store import Book

    from cornerways import GAMES, moves_of
    from games import sgf_text

    folder = tmp_path_factory.mktemp("cornerbook")
    for i, game in enumerate(GAMES):
        (folder / f"g{i}.sgf").write_bytes(sgf_text(19, moves_of(game), result="B+R"))
    path = str(folder / "book.sqlite")
    with Book.open(path) as book:
        importer.import_paths(book, [str(folder)], workers=0)
        corner_build.update(book, progress=None)
    return path


# The browser tests' fixtures (tests/browsing.py): one Chromium for the session, lent clean to
# each test (``browser``), and one ``fuseki serve`` of the small book a module (``server``).
from browsing import browser, server, shared_chromium  # noqa: E402, F401

# The session's one real KataGo, for the tests that query it directly (tests/services.py)
from services import _session_katago, real_katago  # noqa: E402, F401

# The web AI tests' app with --ai and a fake KataGo (tests/webbook.py)
from webbook import fake, make_app  # noqa: E402, F401
