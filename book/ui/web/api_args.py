"""What the web API's routes share (``app`` and ``player_routes``): the error a client must fix,
the bounds of the arguments, an integer argument, a point and a games-list row as JSON.

Below both: ``app`` registers ``player_routes``, which takes these from here, not from ``app``.
"""

from __future__ import annotations

import os
from functools import cache

from flask import current_app, g, request

from fuseki.book.model.headers import HEADER_NAMES
from fuseki.engine.core import base
from fuseki.engine.core.base import COLOUR_LETTER

MAX_PLAYER = 100         # longest player filter, or player's name
MAX_PAGE_SIZE = 100
MAX_ID = 2**63 - 1       # largest game id a database integer can hold
MAX_PAGE = 10**8         # page= of a game list (keyset paging with after= has no such bound)
# seconds of pattern scan one request may spend, its within= searches and its pattern search
# together (docs/limits.md): a corner pattern on 366,535 games scans in about 1 s, while 8
# within= searches of anywhere patterns with colours swapped took 15 s on 21k games and kept
# every thread; past it the scan stops and the request is answered 503 (app.budget_spent);
# FUSEKI_SCAN_SECONDS sets another (fuseki serve's workers read it; the tests: a small one)
SCAN_SECONDS = float(os.environ.get("FUSEKI_SCAN_SECONDS", 3))


class ApiError(Exception):
    """A request the client must fix: answered as JSON with ``status`` and the message."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.message = message
        self.status = status


def scan_budget():
    """The request's ``budget.Budget`` (``SCAN_SECONDS``, or the application's ``FUSEKI_SCAN_SECONDS``),
    shared by every scan the request makes."""
    from fuseki.book.analysis.patterns.budget import Budget

    if "fuseki_budget" not in g:
        g.fuseki_budget = Budget(current_app.config.get("FUSEKI_SCAN_SECONDS", SCAN_SECONDS))
    return g.fuseki_budget


def int_arg(name: str, default: int | None, low: int, high: int) -> int | None:
    """The argument as an integer of ``low..high``: ASCII digits only (``isdigit`` and ``int``
    also take ``١``, an Arabic-Indic one), at most 20 characters (any 64-bit integer)."""
    text = request.args.get(name, "").strip()
    if not text:
        return default
    digits = text[1:] if text[0] == "-" else text
    if not (digits.isascii() and digits.isdigit()) or len(text) > 20:
        raise ApiError(f"{name} must be an integer, not '{text[:20]}'")
    value = int(text)
    if not low <= value <= high:
        raise ApiError(f"{name} must be between {low} and {high}, not {value}")
    return value


def after_arg(book) -> int | None:
    """The ``after=`` cursor (a game id), checked against the book's largest id before any work:
    a page past an id is found through an array as long as the id (``Book._sorted_by_rank``),
    so ``after=1000000000`` kept 7.8 GB in the worker.  404 for an id past the book's."""
    after = int_arg("after", None, 1, MAX_ID)
    if after is not None and after > book.max_game_id():
        raise ApiError(f"no game {after} in the book", 404)
    return after


def point_json(point: int, size: int) -> dict:
    """``{"sgf": "pd", "vertex": "Q16"}`` (``sgf`` is ``""`` for a pass)."""
    sgf, vertex = _point_names(size)[point]
    return {"sgf": sgf, "vertex": vertex}


@cache
def _point_names(size: int) -> dict[int, tuple[str, str]]:
    """point -> (SGF, vertex) of every point and the pass: a game's page names hundreds of points."""
    return {point: (base.point_to_sgf(point, size), base.point_to_vertex(point, size))
            for point in (*base.board_points(size), base.PASS)}


def game_row_json(row) -> dict:
    """A games-list row: its id, the header fields (book.model.headers; the winner as a colour name),
    size, move count and the move number where the position occurred."""
    answer = {name: getattr(row, name) for name in ("id", *HEADER_NAMES, "size", "move_count", "move_number")}
    answer["winner"] = COLOUR_LETTER.get(row.winner)
    return answer
