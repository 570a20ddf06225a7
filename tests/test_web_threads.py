"""The explorer's requests run at once over one shared ``Book`` (book/ui/web/app.py, no global lock).

- Eight threads, each with its own Flask test client, ask the same mix of requests
  (positions with and without filters, game lists, records, downloads) in their own
  order, while a ninth drops the book's caches again and again: every answer equals the
  one a single thread got first.  Both backends (``book_url``); the cache of busy positions' rows is
  made to take every position (``BUSY_ROWS = 1``) so that its shared dict is in play.
- A request held inside a database query (SQLite's trace callback, or SQLAlchemy's
  ``before_cursor_execute`` on PostgreSQL, waits on an Event for the thread named ``held``)
  does not stop other requests: they are
  answered while it is still held.  Under the old one-lock app they waited for it.  The
  proof is in the order of events, not in timings.
- Sixteen threads asking at once for the same uncached position's games read its codes
  once and build the date ranks once (``Book``'s per-key and rank locks; 16 and 15 reads
  without them), the herd that timed out the load run on the 378k-game book.
- While another process imports 9x9 games into the same SQLite book, the threads' 19x19
  answers stay exactly those of the single thread (the new games cannot reach them), and
  they see the book grow batch by batch.  The import stops after each batch until every
  thread has answered again and a reader has seen the batch (``PacedImport``), so the
  overlap holds on a machine of any speed.
"""

from __future__ import annotations

import random
import threading
import time

import pytest
from sqlalchemy import event

from fuseki.book.storage import store
from fuseki.book.storage.position_index import busy_rows, segment_files

from conftest import PacedImport
from webbook import GAMES, import_games, request_paths, small_games

THREADS = 8





def answer(client, path: str) -> tuple[int, bytes]:
    response = client.get(path)
    return response.status_code, response.data


class Askers:
    """THREADS threads, each asking every path ``rounds`` times in its own shuffled order (and on
    until ``until`` is set, when given), while ``also`` runs beside them until they end."""

    def __init__(self, app, paths: list[str], rounds: int = 1, also=None, until: threading.Event | None = None):
        self.answers: list[dict] = [{} for _ in range(THREADS)]
        self.errors: list[str] = []
        self.asked = [0] * THREADS  # answers each thread has had so far
        self.start_together = threading.Barrier(THREADS + (also is not None))
        self.done = threading.Event()
        self.app, self.paths, self.rounds, self.also, self.until = app, paths, rounds, also, until
        self.threads = [threading.Thread(target=self.work, args=(n,)) for n in range(THREADS)]
        self.helper = threading.Thread(target=self.beside) if also else None

    def work(self, n: int) -> None:
        client = self.app.test_client()
        order = list(self.paths)
        self.start_together.wait(30)
        try:
            done_rounds = 0
            while done_rounds < self.rounds or (self.until is not None and not self.until.is_set()):
                random.Random(n * 1000 + done_rounds).shuffle(order)
                for path in order:
                    self.answers[n].setdefault(path, []).append(answer(client, path))
                    self.asked[n] += 1
                done_rounds += 1
        except Exception as exc:  # noqa: BLE001 - reported by the test
            self.errors.append(repr(exc))

    def beside(self) -> None:
        self.start_together.wait(30)
        while not self.done.wait(0.002):  # now and then: a busy loop would only take the GIL
            self.also()

    def start(self) -> Askers:
        for thread in self.threads + ([self.helper] if self.helper else []):
            thread.start()
        return self

    def finish(self) -> list[dict]:
        """Wait for the threads; one ``{path: [answers]}`` a thread."""
        for thread in self.threads:
            thread.join(300)
        self.done.set()
        if self.helper:
            self.helper.join(60)
        assert not self.errors, self.errors[:3]
        assert not any(thread.is_alive() for thread in self.threads)
        return self.answers


def ask_from_threads(app, paths: list[str], rounds: int = 1, also=None) -> list[dict]:
    """Every path ``rounds`` times from each of THREADS threads (see ``Askers``)."""
    return Askers(app, paths, rounds, also).start().finish()


def wait_until(condition, what: str, within: float = 120.0) -> None:
    """Wait for ``condition()`` to hold; a generous deadline, only so that a bug fails, not hangs."""
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, f"waited {within} s for {what}"
        time.sleep(0.005)


def assert_same_answers(expected: dict, answers: list[dict]) -> None:
    for per_thread in answers:
        assert per_thread.keys() == expected.keys()
        for path, got in per_thread.items():
            for status_and_body in got:
                assert status_and_body == expected[path], (path, status_and_body[1][:300], expected[path][1][:300])


def test_threads_get_the_answers_one_thread_gets(book_url, tmp_path, monkeypatch):
    from fuseki.book.ui.web.app import create_app

    monkeypatch.setattr(busy_rows, "BUSY_ROWS", 1)  # every position goes through the shared cache
    import_games(book_url, tmp_path / "sgf")
    app = create_app(book_url=book_url)
    book = app.extensions["fuseki_book"]
    try:
        client = app.test_client()
        paths = request_paths(client)
        expected = {path: answer(client, path) for path in paths}
        assert sum(status == 200 for status, _ in expected.values()) > 60
        book.forget_caches()
        assert_same_answers(expected, ask_from_threads(app, paths, rounds=2, also=book.forget_caches))
    finally:
        book.close()


def on_statements(db, callback) -> None:
    """``callback(sql)`` as each statement of ``db``'s connections starts: on SQLite from
    the driver (the book's reads go to the driver's cursor, past SQLAlchemy), elsewhere from
    SQLAlchemy's ``before_cursor_execute``."""
    if db.dialect.name == "sqlite":
        @event.listens_for(db, "checkout")
        def trace(dbapi_connection, _record, _proxy):
            dbapi_connection.set_trace_callback(callback)
    else:
        event.listen(db, "before_cursor_execute", lambda _conn, _cursor, statement, *_args: callback(statement))


def test_a_request_held_inside_a_query_does_not_stop_the_others(book_url, tmp_path):
    from fuseki.book.ui.web.app import create_app

    import_games(book_url, tmp_path / "sgf")
    app = create_app(book_url=book_url)
    book = app.extensions["fuseki_book"]
    client = app.test_client()
    wanted = {name: client.get(path).get_json() for name, path in (
        ("held", "/api/position?moves=pd,dp&size=19"), ("position", "/api/position?moves=pd&size=19"),
        ("games", "/api/games?moves=pd&size=19"), ("info", "/api/info"))}
    wanted["game"] = client.get(f"/api/game/{wanted['games']['rows'][0]['id']}").get_json()
    inside, release = threading.Event(), threading.Event()

    def hold(*_args):  # the thread named "held" waits inside its first query (test only)
        if threading.current_thread().name == "held" and not release.is_set():
            inside.set()
            release.wait(30)

    on_statements(book.db, hold)
    held: dict = {}
    holder = threading.Thread(name="held", target=lambda: held.update(
        answer=app.test_client().get("/api/position?moves=pd,dp&size=19").get_json()))
    others: dict = {}

    def ask_others() -> None:
        client = app.test_client()
        others["position"] = client.get("/api/position?moves=pd&size=19").get_json()
        others["games"] = client.get("/api/games?moves=pd&size=19").get_json()
        others["game"] = client.get(f"/api/game/{others['games']['rows'][0]['id']}").get_json()
        others["info"] = client.get("/api/info").get_json()

    try:
        holder.start()
        assert inside.wait(30), "the held request never reached the book"
        asker = threading.Thread(target=ask_others)
        asker.start()
        asker.join(20)
        # the other requests were answered while the held one is still inside its query
        assert not asker.is_alive(), "the other requests waited for the held one"
        assert holder.is_alive() and not held
        assert others == {name: wanted[name] for name in others} and len(others) == 4
        assert others["info"]["games"] == len(GAMES)
    finally:
        release.set()
        holder.join(30)
        book.close()
    assert held["answer"] == wanted["held"]


@pytest.mark.slow  # an import in another process
def test_threads_answer_exactly_while_an_import_writes(tmp_path, monkeypatch):
    """The import stops after each batch until the readers have seen it, and the threads ask
    from before its first batch until after its end: the overlap is made, not hoped for."""
    from fuseki.book.ui.web.app import create_app

    monkeypatch.setattr(busy_rows, "BUSY_ROWS", 1)
    path = str(tmp_path / "book.sqlite")
    import_games(path, tmp_path / "sgf")
    folder = tmp_path / "small"
    folder.mkdir()
    for name, data in small_games(300).items():
        (folder / f"{name}.sgf").write_bytes(data)
    app = create_app(book_url=path)
    book = app.extensions["fuseki_book"]
    importing, ended = None, threading.Event()
    try:
        client = app.test_client()
        paths = [p for p in request_paths(client) if "size=19" in p or "/api/game/" in p]
        expected = {p: answer(client, p) for p in paths}
        sizes: list[int] = []
        askers = Askers(app, paths, rounds=1, until=ended,
                        also=lambda: sizes.append(client.get("/api/info").get_json()["games"])).start()
        # the import starts once every thread has answered and the book's size was seen: it
        # commits its first batch as soon as it runs, before anyone could release it
        wait_until(lambda: all(askers.asked) and sizes, "every thread's first answer")
        importing = PacedImport(path, [folder], batch_games=20)
        committed = [0]
        for added in importing.batches():
            # every thread answers again, and the sampler sees this batch, before the import goes on
            committed.append(added)
            asked, games = list(askers.asked), len(GAMES) + added
            wait_until(lambda n=games: n in sizes, f"a reader to see the book at {games} games")
            wait_until(lambda then=asked: all(map(int.__gt__, askers.asked, then)), "each thread to answer")
            importing.release()
        added = importing.finish()[0]
        ended.set()
        answers = askers.finish()
        assert_same_answers(expected, answers)
        # the readers saw the book grow batch by batch, and never saw it shrink
        assert sizes == sorted(sizes) and sizes[0] == len(GAMES), sizes[:5]
        assert sorted(set(sizes)) == sorted({len(GAMES) + n for n in committed}), sorted(set(sizes))
        assert len(set(committed)) > 5 and book.stats().games == len(GAMES) + added and added == 300
    finally:
        ended.set()  # the threads stop asking, whatever failed
        if importing is not None:
            importing.close()
        book.close()


def test_threads_missing_the_same_cache_entry_read_it_once(book_url, tmp_path, monkeypatch):
    from fuseki.book.formats.positions import board_after_moves

    monkeypatch.setattr(busy_rows, "BUSY_ROWS", 1)
    monkeypatch.setattr(store, "FEW_GAMES", 0)  # every list sorts by the rank array
    monkeypatch.setattr(segment_files, "ENABLED", False)  # its reads counted as the book's statements
    import_games(book_url, tmp_path / "sgf")
    book = store.Book.open(book_url, readonly=True)
    reads = {"codes": 0, "ranks": 0}

    def count(statement):
        # the rank array's build asks the largest id first (its own query goes through the driver)
        kind = ("codes" if "positions_" in statement and "segments" not in statement
                else "ranks" if "max(games.id)" in statement else None)
        if kind:
            reads[kind] += 1
            time.sleep(0.2)  # long enough for every other thread to miss the cache too, without the locks

    on_statements(book.db, count)
    board = board_after_moves(["pd"], 19)
    start = threading.Barrier(16)
    pages = []

    def ask() -> None:
        start.wait(10)
        pages.append(book.games(board, page_size=3))

    threads = [threading.Thread(target=ask) for _ in range(16)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    finally:
        book.close()
    assert len(pages) == 16 and all(page == pages[0] for page in pages) and pages[0].total >= 3
    assert reads == {"codes": 1, "ranks": 1}
