"""The web tests' small book and KataGo's cached values, shared by the API and the browser tests
(a support module, not a test module: test modules import it, never each other).

The book is five short games written here and imported with the importer into a
temporary SQLite file:

- ``seigen``, ``takemiya``, ``cho`` start at the 4-4 point ``pd``; ``takemiya`` and
  ``cho`` reach the same position after four moves in another order (a transposition,
  and a position symmetric under the top-bottom flip);
- ``mirror`` is ``seigen``'s first five moves flipped left-right (starts at ``dd``);
- ``capture`` starts at the 3-4 point ``qd`` and Black captures at move 7.
"""

from __future__ import annotations

import random
import shlex
import sys

import numpy as np
import pytest

from fuseki.engine.core import base
from fuseki.engine.core.base import BLACK, WHITE
from fuseki.engine.core.board import Board

from services import FAKE_KATAGO

GAMES = {
    "seigen": b"(;GM[1]FF[4]SZ[19]PB[Go Seigen]BR[5d]PW[Honinbo Shusai]WR[9d]DT[1933-10-16]EV[Oteai]"
              b"RE[W+2]KM[0];B[pd];W[dp];B[pq];W[dd];B[fq];W[hq];B[cn])",
    "takemiya": b"(;GM[1]FF[4]SZ[19]PB[Takemiya Masaki]BR[9d]PW[Kato Masao]WR[9d]DT[1985-05-01]"
                b"RE[B+R]KM[5.5];B[pd];W[dp];B[pp];W[dd];B[jj];W[qf])",
    "cho": b"(;GM[1]FF[4]SZ[19]PB[Cho Chikun]BR[9d]PW[Kobayashi Koichi]WR[9d]DT[1990-03-02]"
           b"RE[W+R]KM[5.5];B[pd];W[dd];B[pp];W[dp];B[fc];W[cf])",
    "mirror": b"(;GM[1]FF[4]SZ[19]PB[Mirror Black]PW[Mirror White]DT[2001-07-07]RE[B+3.5]KM[6.5]"
              b";B[dd];W[pp];B[dq];W[pd];B[nq])",
    "capture": b"(;GM[1]FF[4]SZ[19]PB[Capture Black]PW[Capture White]DT[2010-01-01]RE[B+R]KM[6.5]"
               b";B[qd];W[qc];B[rc];W[dd];B[qb];W[dp];B[pc];W[pp])",
}
CAPTURE_LINE = "qd,qc,rc,dd,qb,dp,pc"  # Black's pc takes the white stone on qc


def build_book(path, games=GAMES):
    """A SQLite book at ``path`` holding ``games`` (name -> SGF bytes), imported by the importer."""
    import_games(str(path), path.parent / (path.stem + "-sgf"), games)
    return path


def import_games(location: str, folder, games=GAMES) -> None:
    """Write ``games`` as files into the new ``folder`` and import them into the book at ``location``."""
    from fuseki.book.analysis.pipeline import importer
    from fuseki.book.storage.store import Book

    folder.mkdir()
    for name, data in games.items():
        (folder / f"{name}.sgf").write_bytes(data)
    book = Book.open(location)
    try:
        importer.import_paths(book, [str(folder)], workers=0)
    finally:
        book.close()


def put_values(app, moves: str, values: dict[str, tuple[float, float, float]], network="test-net", visits=2,
               root=(20, 0.45, -1.0), move_visits=10, lines=None):
    """Store values (sgf -> (win rate, lead, loss), best first) of the position after ``moves``
    in ``app.cache_path`` (KataGo's cache file, as the server's worker writes it); ``lines``: each
    move's line (sgf points), or None."""
    from sqlalchemy import create_engine

    from fuseki.book.formats.positions import board_after_moves
    from fuseki.book.queries import ai_values
    from fuseki.book.queries.ai_values import AiSettings
    from fuseki.engine.core import base

    board = board_after_moves([m for m in moves.split(",") if m], 19)
    settings = AiSettings(rules="japanese", komi=6.5, network=network, visits=visits)
    rows = [(base.sgf_to_point(sgf, 19), move_visits, w, lead, loss, 0.1) for sgf, (w, lead, loss) in values.items()]
    pvs = None if lines is None else [[base.sgf_to_point(p, 19) for p in line] for line in lines]
    db = create_engine(f"sqlite:///{app.cache_path}")
    with db.begin() as conn:
        ai_values.create(conn)  # the server makes it too; a test may write first
        ai_values.put(conn, board.symmetric_keys(board.to_move), 19, settings, root, rows, pvs)
    db.dispose()


def cached_ai(folder, positions: dict[str, tuple[dict, dict]]) -> tuple[tuple[str, ...], dict]:
    """``fuseki serve``'s arguments and environment for a page with KataGo on whose values are
    all cached: ``positions`` maps moves ("pd,dp") to (values, ``put_values``' options); the
    KataGo named never answers (``FAKE_KATAGO hang``), so the page shows only what is cached.
    Once for the browser tests that draw KataGo's columns and line."""
    script = folder / "fake_katago.py"
    script.write_text(FAKE_KATAGO)
    cache = folder / "ai-cache.sqlite"
    spot = type("App", (), {"cache_path": cache})
    for moves, (values, options) in positions.items():
        put_values(spot, moves, values, **{"network": "", **options})
    return ("--ai", "--katago", f"{sys.executable} {script} hang", "--visits", "2"), {"FUSEKI_AI_CACHE": str(cache)}


# --- the web tests' app helpers (once in test_web_api, test_web_ai, test_web_threads) ---------

MISSING = "/nowhere/katago analysis -model /nowhere/test-net.bin.gz -config /nowhere/analysis.cfg"


def ok(client, url):
    response = client.get(url)
    assert response.status_code == 200, (url, response.get_json())
    return response.get_json()


@pytest.fixture
def make_app(book_path, tmp_path):
    """``make_app(command, visits=2, **budget)``: the application with --ai (``budget``: AiOptions'
    client_rate, queue, cache_rows) and a fresh cache file;
    ``app.cache_path`` names the file."""
    from fuseki.book.ui.web.ai_service import AiOptions
    from fuseki.book.ui.web.app import create_app

    apps = []

    def make(command, visits=2, **budget):
        app = create_app(book_url=str(book_path), ai=AiOptions(command=command, visits=visits,
                                                                 cache=tmp_path / "ai-cache.sqlite", **budget))
        app.config["TESTING"] = False
        app.cache_path = tmp_path / "ai-cache.sqlite"
        apps.append(app)
        return app
    yield make
    for app in apps:
        app.extensions["fuseki_ai"].close()
        app.extensions["fuseki_book"].close()


@pytest.fixture
def fake(tmp_path):
    script = tmp_path / "fake_katago.py"
    script.write_text(FAKE_KATAGO)
    return lambda mode: shlex.join([sys.executable, str(script), mode])


LINES = ["", "pd", "pd,dp", "pd,dd", "dd,pp", "qd,qc,rc,dd,qb,dp,pc", "pd,dp,pq,dd,fq", "Q16,D4,pp"]
FILTERS = [{}, {"year_from": 1980}, {"year_to": 1995, "player": "ma"}]


def request_paths(client) -> list[str]:
    """The requests every thread makes: positions and lists under filters, each listed game's views."""
    paths = []
    for line in LINES:
        for query in FILTERS:
            args = "&".join([f"moves={line}", "size=19", *(f"{k}={v}" for k, v in query.items())])
            paths += [f"/api/position?{args}", f"/api/games?{args}&page_size=2"]
        paths.append(f"/api/games.sgf?moves={line}&size=19")
    for game_id in sorted({row["id"] for line in LINES
                           for row in client.get(f"/api/games?moves={line}&size=19").get_json()["rows"]}):
        paths += [f"/api/game/{game_id}?moves=pd&at=1", f"/api/game/{game_id}?at=3&sym=2",
                  f"/api/game/{game_id}.sgf"]
    paths += ["/api/game/99999", "/api/position?moves=zz"]  # errors are answers too
    return paths


def small_games(count: int, size: int = 9, seed: int = 0) -> dict[str, bytes]:
    """``count`` random games on a small board, as SGF (name -> bytes)."""
    rng = random.Random(seed)
    numbers = np.random.default_rng(seed)
    games = {}
    for n in range(count):
        board = Board(size)
        moves = []
        for k in range(rng.randint(8, 30)):
            colour = BLACK if k % 2 == 0 else WHITE
            point = board.random_move(colour, numbers)
            board.play(colour, point)
            moves.append(f";{'B' if colour == BLACK else 'W'}[{base.point_to_sgf(point, size)}]")
        games[f"small{n}"] = (f"(;GM[1]FF[4]SZ[{size}]PB[Small B{n}]PW[Small W{n}]DT[2020-01-01]RE[B+R]"
                              + "".join(moves) + ")").encode()
    return games
