"""The book explorer's web application: a JSON API over ``book.storage.store.Book`` and one static page.

The API is stateless: the client sends the search position as its move sequence
(``moves=pd,dp,pp`` in SGF letters, or ``Q16,D4`` as GTP vertices, ``pass``
allowed; Black moves first and colours alternate) plus the filters, and the server
replays it with ``engine.core.board.Board`` on every request.  The Flask layer only
translates: queries go through the ``Book`` methods (bound parameters, never SQL
here), rules through ``Board``.

Endpoints (all GET; errors are ``{"error": message}`` with a 4xx status, or 503 for a request
whose ``within=`` searches spent its scan budget, ``api_args.SCAN_SECONDS``, with ``"scanned"``: the
games scanned; the message says what to narrow; or 503 with ``"busy": true`` for one that found
another request's scans running: ``book.ui.web.admission``.  A pattern search itself that spends
the budget answers 200 with what the games scanned so far gave and how far it got: its ``scan``)::

    /api/info                         book statistics, the default board size, max_download; ``ai``:
                                      the KataGo settings (null without --ai when no store of
                                      values exists), ``asks``: KataGo asked (--ai) or the stored
                                      values only (plain fuseki serve); ``note``: why
                                      a statistics book (the built-in one) lists no games
    /api/position?moves=&size=&year_from=&year_to=&player=&event=&winner=&won_by=&margin=&min_rank=&max_rank=
        &handicap=&komi= (the filters: book.model.filters; a bad one: 400 naming it)
                                      stones, captures, to_move, last move, next moves, totals;
                                      KataGo's stored values (``ai``, and each next move's ``ai``:
                                      book.ui.web.ai_service; ``none`` when none is stored), with
                                      ``fuseki serve --ai`` ``pending`` while KataGo works on
                                      them (then never kept in the cache);
                                      ``by_year=1&recent=K`` (a book without dates: ``years`` null
                                      and ``years_note``), ``trends=A-B:C-D`` (409 there):
                                      book.ui.present.years_text
    /api/games?moves=&...&after=&page_size=
                                      the games that reached the position, one page, newest first
                                      (date, then id); ``after``: the previous page's ``after`` (its
                                      last game's id; keyset paging), or ``page=`` (from 1) (a statistics
                                      book: no rows and a ``note``; its filters and downloads: 409)
    /api/games.sgf?moves=&...         those games as one SGF collection (the newest MAX_DOWNLOAD)
    /api/game/<id>?moves=&at=&sym=    a game's header, setup stones and moves; with the search moves
                                      and the move number ``at`` where the position occurred, shown
                                      in the search's orientation (``symmetry``), or under ``sym``
                                      (the page steps through them itself: one request a game)
    /api/game/<id>.sgf                the game's SGF
    /api/corners?moves=&size=          the corner book's continuations of each corner (each row's
                                      ``games`` and ``times``, each corner's ``games``, ``total``
                                      times: corner_rows.corners_json); with --ai,
                                      ``ai`` and each row's ``ai`` as the position's next moves'
    /api/pattern?moves=&size=&region=N19:T13&any=R17,S18&swap=1&year_from=...
        &empty_or_black=&empty_or_white=&fixed_colour=&to_move=&moves_from=&moves_to= (Kombilo's:
                                      ``reading.pattern_from_options``) the region of the position
                                      as a pattern: kind, ``options`` in words, total games, continuations
                                      as Kombilo counts them (letter, point, points, colour B/W, games, at_once,
                                      after_tenuki, wins, winrate of its player), tenuki; a bad region: 400; with
                                      --ai, ``ai`` as the position's for a whole-board pattern
                                      (else status "note": values only for a whole board);
                                      ``scan``: how far the scan got within the request's budget
                                      (``games`` the search's in all, ``before`` those below
                                      ``from``, ``scanned`` this answer's, ``percent`` scanned up to
                                      where it stopped, ``next``: the game id to go on from, null when
                                      it went to the end); ``from=ID``: scan the games from that id
                                      on (the page's "search on": its parts' counts add up),
                                      ``until=ID``: only those below it
    /api/pattern/games?...&page=&after=&until=
                                      the pattern's games, newest first, each at its matching move
                                      (of the games scanned: ``scan`` as above)
    /api/pattern/games.sgf?...        those games as one SGF collection (the newest MAX_DOWNLOAD)
    /api/player?name=&vs=&page=       a player's record by year, head-to-head, first moves and games;
    /api/players?q=                   names containing q (book.ui.web.player_routes)
    /api/within?within=&...           what the within= searches are: each in words with its games, and
                                      the games of all (every endpoint that filters takes within=: the
                                      games of earlier searches to search within, book.ui.web.within)

Points go out as SGF letters (``sgf``) and GTP vertices (``vertex``) of the board
the client shows.  The book is opened read-only; import stays a CLI command.

Requests run at once, without a lock of the application's: ``fuseki serve``
(``book.ui.web.server``) runs one application per process, each answering on a few threads
that share its ``Book``, which is safe to share between threads (see ``book.storage.store.Book``):
its engine's pool lends each query a connection of its own, and its caches hold arrays that
are complete before other threads can see them.  So a slow query (a common position on a big
book, a long game list) stalls only its own visitor; tests/test_web_threads.py holds one
request inside a query while others answer.
"""

from __future__ import annotations

from pathlib import Path

from flask import Flask, Response, current_app, g, jsonify, request, send_from_directory
from werkzeug.exceptions import HTTPException

from fuseki.book.analysis.patterns.budget import BudgetSpent
from fuseki.book.formats.positions import PositionError, board_after_moves, board_after_record
from fuseki.book.model.headers import HEADER_NAMES
from fuseki.book.storage.position_index.statistics_book import StatisticsOnly
from fuseki.book.ui.present.textboard import SHORT_LETTERS
from fuseki.book.ui.present.years_text import years_answer
from fuseki.book.ui.reading import parse_periods
from fuseki.book.ui.web.admission import add_admission, admit
from fuseki.book.ui.web.api_args import (
    MAX_ID,
    MAX_PAGE,
    MAX_PAGE_SIZE,
    ApiError,
    after_arg,
    game_row_json,
    point_json,
    scan_budget,
)
from fuseki.book.ui.web.api_args import int_arg as _int_arg
from fuseki.book.ui.web.corner_rows import corners_json
from fuseki.book.ui.web.hosts import host_name
from fuseki.book.ui.web.practice_routes import add_practice_routes
from fuseki.book.ui.web.within import StageCache, add_within_route, within_arg
from fuseki.engine.core import base, coords
from fuseki.engine.core.base import BLACK, COLOUR_LETTER, EMPTY, WHITE
from fuseki.engine.core.board import Board

MAX_MOVES = 800          # longest move sequence a client may send
MAX_DOWNLOAD = 1000      # games in one SGF download
STATIC = Path(__file__).parent / "static"


# --- request parsing -----------------------------------------------------------------


def replay_moves(tokens: list[str], size: int) -> Board:
    """The board after the tokens, Black first, colours alternating; raises ApiError naming the move."""
    try:
        return board_after_moves(tokens, size)
    except PositionError as exc:
        raise ApiError(str(exc)) from None


def _moves_arg(size: int) -> list[str]:
    text = request.args.get("moves", "").strip()
    tokens = [t for t in text.replace(" ", ",").split(",") if t] if text else []
    if len(tokens) > MAX_MOVES:
        raise ApiError(f"at most {MAX_MOVES} moves, not {len(tokens)}")
    return tokens


def _filters_arg():
    """The filters of a request: years, and the player and header filters as the CLI reads them
    (``book.model.filters.parse_filters``: ``event=``, ``winner=``, ``won_by=``, ``komi=`` ...)."""
    from fuseki.book.model.filters import FilterError, Filters, parse_filters

    year_from = _int_arg("year_from", None, 0, 9999)
    year_to = _int_arg("year_to", None, 0, 9999)
    if year_from is not None and year_to is not None and year_from > year_to:
        raise ApiError(f"year_from {year_from} is after year_to {year_to}")
    try:
        fields = parse_filters(request.args)
    except FilterError as exc:
        raise ApiError(str(exc)) from None
    return Filters(year_from=year_from, year_to=year_to, within=_within_arg(), **fields)


def _within_arg():
    """The games of the request's ``within=`` searches (``book.ui.web.within``); None without one."""
    shared = current_app.extensions["fuseki_shared"]
    size = _int_arg("size", shared.default_size(), base.MIN_SIZE, base.MAX_SIZE)
    try:
        return within_arg(shared.stages, shared.book, size)
    except ValueError as exc:
        raise ApiError(str(exc)) from None


# --- answers ---------------------------------------------------------------------------


def budget_message(budget) -> str:
    """The 503's one line: what was spent, and what to narrow."""
    return (f"search too costly for this server: its pattern scans stopped after {budget.seconds:g} s "
            f"({budget.scanned:,} games scanned); narrow it: fewer within searches, a corner or side pattern "
            f"rather than one anywhere, colours not swapped, or a move range (moves_from, moves_to)")


def position_json(board: Board, symmetry: int = 0) -> dict:
    """Stones, prisoners, the player to move and the last move, points under ``symmetry``."""
    size = board.size

    def show(point: int) -> dict:
        return point_json(coords.transform_point(symmetry, point, size), size)

    last = None
    if board.moves:
        colour, point = board.moves[-1]
        last = {"color": COLOUR_LETTER[colour], **show(point)}
    return {
        "size": size,
        "move_number": len(board.moves),
        "stones": {COLOUR_LETTER[c]: sorted(show(p)["sgf"] for p in board.stones(c)) for c in (BLACK, WHITE)},
        "captures": {COLOUR_LETTER[c]: n for c, n in board.captures.items()},
        "to_move": COLOUR_LETTER[board.to_move],
        "last": last,
    }


def next_moves_json(next_moves, size: int) -> dict:
    """The next-move table: letters for the first ones, win rates of the player to move."""
    rows = []
    for index, stat in enumerate(next_moves.moves):
        rows.append({
            "letter": SHORT_LETTERS[index] if index < len(SHORT_LETTERS) else None,
            **point_json(stat.point, size),
            "points": [base.point_to_sgf(p, size) for p in stat.points if p != base.PASS],
            "games": stat.games,
            "black_wins": stat.stats.black_wins,
            "white_wins": stat.stats.white_wins,
            "winrate": stat.winrate,
        })
    return {"total": next_moves.total, "ended": next_moves.ended, "next": rows}


def pattern_json(result) -> dict:
    """A pattern search's answer: its continuations (``search.Continuation``, Kombilo's
    counting), a point's Black and White rows sharing its letter."""
    from fuseki.book.ui.present.textboard import row_letters
    from fuseki.book.ui.reading import options_text

    size = result.pattern.size
    rows = [{"letter": letter, **point_json(c.point, size),
             "points": [base.point_to_sgf(p, size) for p in c.points],
             "colour": COLOUR_LETTER[c.colour], "games": c.games, "at_once": c.at_once,
             "after_tenuki": c.after_tenuki, "wins": c.wins, "winrate": c.winrate}
            for letter, c in zip(row_letters(result.continuations, SHORT_LETTERS), result.continuations)]
    tenuki = result.tenuki
    return {"kind": result.pattern.kind, "options": options_text(result.pattern), "total": result.total, "next": rows,
            "tenuki": {"games": tenuki.games, "black": tenuki.black, "white": tenuki.white, "ended": tenuki.ended},
            "scan": scan_json(result)}


def scan_json(result) -> dict:
    """How far a pattern search's scan got (``search.PatternResult``): the search's games, those
    before the part asked for, those it scanned, the percent scanned up to where it stopped and
    the game id to go on from (None: to the end)."""
    return {"games": result.games, "before": result.before, "scanned": result.scanned,
            "percent": round(result.percent, 1), "next": result.next_id}


def record_info(record) -> dict:
    """A GameRecord's size, header fields (book.model.headers; the winner as a colour name) and move count."""
    answer = {name: getattr(record, name) for name in ("size", *HEADER_NAMES)}
    answer["winner"] = COLOUR_LETTER.get(record.winner)
    answer["move_count"] = len(record.moves)
    return answer


def replay_record(record, upto: int) -> Board:
    """The record's board after ``upto`` moves, tolerant of moves the rules refuse."""
    return board_after_record(record, upto, strict=False)


def orientation(record, at: int, search: Board) -> int:
    """The symmetry n that turns the record's position after ``at`` moves into the search position (0 if none)."""
    if not search.moves or at > len(record.moves):
        return 0
    game = replay_record(record, at)
    keys = game.symmetric_keys(search.to_move)
    target = search.position_key()
    return keys.index(target) if target in keys else 0


# --- the application ------------------------------------------------------------------------


class _Shared:
    """What every route reads: the open book, shared by every request's thread without a lock
    (see the module docstring), the book's default board size once asked, and the request
    arguments that several routes parse alike."""

    def __init__(self, book):
        self.book = book
        self.ai = None  # book.ui.web.ai_service.AiService: fuseki serve's (stored values), --ai's (KataGo asked)
        self.stages = StageCache()  # the games of within= searches (book.ui.web.within)
        self._default_size: int | None = None

    def default_size(self) -> int:
        """The size most games in the book have (19 for an empty book), asked once."""
        if self._default_size is None:  # two first requests may both ask: the same answer, set whole
            sizes = self.book.stats().sizes
            self._default_size = max(sizes, key=lambda s: (sizes[s], s == 19)) if sizes else 19
        return self._default_size

    def search_board(self) -> Board:
        """The board after the request's ``moves``, on its ``size`` (default: the book's)."""
        size = _int_arg("size", self.default_size(), base.MIN_SIZE, base.MAX_SIZE)
        return replay_moves(_moves_arg(size), size)

    def load_record(self, game_id: int):
        """The book's game ``game_id``; ApiError 404 if there is none (a statistics book's says why:
        it holds no games at all)."""
        why_none = self.book.stored_games.why_none
        why = f": {why_none}" if why_none else ""
        if game_id > MAX_ID:  # beyond SQLite's integers: no such game, and no driver error
            raise ApiError(f"no game with id {game_id}{why}", 404)
        try:
            return self.book.game(game_id)
        except KeyError:
            raise ApiError(f"no game with id {game_id}{why}", 404) from None

    def pattern_result(self):
        """The pattern search of the request's region of the search board."""
        from fuseki.book.analysis.patterns.pattern import PatternError
        from fuseki.book.analysis.patterns.search import search
        from fuseki.book.storage.connect import BookError
        from fuseki.book.ui.reading import pattern_from_options

        board = self.search_board()
        try:
            pattern = pattern_from_options(board, request.args.get("region", ""), request.args.get)
        except PatternError as exc:
            raise ApiError(str(exc), 400) from None
        try:
            filters = _filters_arg()  # its within= searches take the scan slot themselves if they scan
            admit()  # one request's scans at a time in the whole server (book.ui.web.admission)
            # past its budget the answer is what the games scanned so far gave (the first part
            # at least), with where to go on from (from=): never a bare refusal (issue 61)
            return search(self.book, pattern, filters, scan_budget(), from_id=_int_arg("from", 0, 0, MAX_ID),
                          until_id=_int_arg("until", None, 0, MAX_ID), partial=True)
        except BookError as exc:  # a statistics book, or an index a read-only server cannot build
            raise ApiError(str(exc), 409) from None


SECURITY_HEADERS = {
    # the page loads only its own files; nothing may frame it
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; object-src 'none'; "
                               "base-uri 'none'; frame-ancestors 'none'; form-action 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


# answers that depend on the games only (book.ui.web.cache)
CACHED_ENDPOINTS = {"position", "games", "game", "player", "player_names"}


def create_app(book=None, book_url: str | None = None, trusted_hosts: list[str] | None = None,
               cache_bytes: int | None = None, ai=None, scan_seconds: float | None = None,
               trust_proxy: bool = False) -> Flask:
    """The Flask application over an open ``Book`` or one opened read-only from ``book_url``.

    ``trusted_hosts``: the Host header values to answer (others get 400); ``fuseki serve``
    on loopback passes ``LOOPBACK_NAMES``, so a page elsewhere cannot reach the book by
    pointing a DNS name at 127.0.0.1 (DNS rebinding).  ``cache_bytes``: the answers kept
    per URL while the book is unchanged (``book.ui.web.cache``; None: its default, 0: none).
    ``ai``: a ``book.ui.web.ai_service.AiOptions`` to put KataGo's values beside the next moves (with
    ``ask`` False, plain ``fuseki serve``, only when some store of values exists: the book's
    ``ai_values`` table, the AI value cache file).
    ``scan_seconds``: the pattern scan a request may spend (None: ``api_args.SCAN_SECONDS``).
    ``trust_proxy`` (``fuseki serve --trust-proxy``): KataGo's budget is keyed on the last
    address of ``X-Forwarded-For`` (``book.ui.web.ai_service.client_address``), not the socket's.
    """
    from fuseki.book.ui.web.cache import MAX_BYTES, ResponseCache
    from fuseki.book.ui.web.player_routes import add_player_routes

    if book is None:
        from fuseki.book.storage.store import Book

        book = Book.open(book_url, readonly=True)
    app = Flask(__name__, static_folder=None)
    app.json.sort_keys = False
    if scan_seconds is not None:
        app.config["FUSEKI_SCAN_SECONDS"] = scan_seconds
    app.config["FUSEKI_TRUST_PROXY"] = trust_proxy
    shared = app.extensions["fuseki_shared"] = _Shared(book)
    app.extensions["fuseki_book"] = book
    if ai is not None:
        from fuseki.book.ui.web.ai_service import AiService

        service = AiService(ai, getattr(book, "db", None))
        if ai.ask or service.stores.dbs:
            shared.ai = app.extensions["fuseki_ai"] = service
        else:  # plain fuseki serve, and no store of values anywhere: no AI columns, as without AI
            service.close()
    cache = ResponseCache(MAX_BYTES if cache_bytes is None else cache_bytes)
    app.extensions["fuseki_cache"] = cache
    _add_request_guards(app, shared, {host_name(h) or h for h in trusted_hosts} if trusted_hosts else None, cache)
    add_admission(app)  # the scan slot given back, and 503 "server busy" (book.ui.web.admission)
    _add_page_routes(app, shared)
    _add_position_routes(app, shared)
    _add_pattern_routes(app, shared)
    _add_game_routes(app, shared)
    add_player_routes(app, shared)
    add_within_route(app, shared, shared.stages)
    add_practice_routes(app, shared)  # guess the next move, the joseki quiz
    return app


def _add_request_guards(app: Flask, shared: _Shared, trusted: set[str] | None, cache) -> None:
    """What every request goes through: the Host check, the answers' cache, the security
    headers, and errors answered as JSON."""

    @app.before_request
    def refuse_other_hosts():
        if trusted is not None and host_name(request.headers.get("Host")) not in trusted:
            return jsonify(error="400 Bad Request: host not trusted; this server answers only on "
                                 + ", ".join(sorted(trusted))), 400
        return None

    @app.before_request
    def answer_from_cache():
        if not cache.max_bytes or request.endpoint not in CACHED_ENDPOINTS:
            return None
        g.fuseki_version = shared.book.version()  # before the answer: it is never older than this
        kept = cache.get(request.full_path, g.fuseki_version)
        if kept is None:
            return None
        del g.fuseki_version  # kept already
        return Response(kept[0], mimetype=kept[1])

    @app.after_request
    def keep_in_cache(response: Response) -> Response:
        version = g.pop("fuseki_version", None)
        if version is not None and response.status_code == 200:
            cache.put(request.full_path, version, response.get_data(), response.mimetype)
        return response

    @app.after_request
    def security_headers(response: Response) -> Response:
        response.headers.update(SECURITY_HEADERS)
        return response

    @app.errorhandler(ApiError)
    def api_error(exc: ApiError):
        return jsonify(error=exc.message), exc.status

    @app.errorhandler(BudgetSpent)
    def budget_spent(exc: BudgetSpent):  # a within= chain or a pattern search past the request's scan budget
        return jsonify(error=budget_message(exc.budget), scanned=exc.budget.scanned), 503

    @app.errorhandler(StatisticsOnly)
    def statistics_only(exc: StatisticsOnly):  # a filter or a download asked of a book without games
        return jsonify(error=str(exc)), 409

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException):
        return jsonify(error=f"{exc.code} {exc.name}: {exc.description}"), exc.code


def _add_page_routes(app: Flask, shared: _Shared) -> None:
    """The static page and its files, and the book's description."""

    @app.get("/")
    def index():
        return send_from_directory(STATIC, "index.html")

    @app.get("/static/<path:name>")
    def static_file(name: str):
        return send_from_directory(STATIC, name)

    @app.get("/api/info")
    def info():
        stats = shared.book.stats()
        return jsonify(games=stats.games, positions=stats.positions,
                       sizes={str(k): v for k, v in sorted(stats.sizes.items())},
                       years=list(stats.years) if stats.years else None,
                       default_size=shared.default_size(), letters=SHORT_LETTERS, max_download=MAX_DOWNLOAD,
                       ai={**shared.ai.settings_json(), "asks": shared.ai.options.ask} if shared.ai else None,
                       note=shared.book.stored_games.why_none)  # a statistics book has no games to list


def _add_position_routes(app: Flask, shared: _Shared) -> None:
    """The search position: its next moves, its games (a page, or SGF), its corners."""

    @app.get("/api/position")
    def position():
        board = shared.search_board()
        filters = _filters_arg()
        found = shared.book.next_moves(board, filters=filters)
        answer = {**position_json(board), **next_moves_json(found, board.size)}
        trends = request.args.get("trends", "").strip()
        if _int_arg("by_year", 0, 0, 1) or trends:
            try:
                periods = parse_periods(trends) if trends else None
            except ValueError as exc:
                raise ApiError(str(exc)) from None
            try:
                answer.update(years_answer(shared.book, board, filters, periods, _int_arg("recent", 3, 1, 100)))
            except StatisticsOnly as exc:
                if trends:  # asked to compare periods of a book without dates: 409, as its filters
                    raise
                # The page asks every position's years; a book without dates (the built-in book) is
                # no fault of the request: no chart, and why (a 409 was a console error a click).
                answer.update(years=None, years_note=str(exc))
        if shared.ai is not None:
            from fuseki.book.ui.web.ai_service import ai_json

            answer["ai"] = ai_json(shared.ai, board, answer["next"], found)
            _final_unless_pending(answer["ai"])
        return jsonify(answer)

    @app.get("/api/games")
    def games():
        after = after_arg(shared.book)  # before any work
        board = shared.search_board()
        filters = _filters_arg()
        page = _int_arg("page", 1, 1, MAX_PAGE)
        page_size = _int_arg("page_size", 20, 1, MAX_PAGE_SIZE)
        try:
            found = shared.book.games(board, filters=filters, page=page, page_size=page_size, after=after)
        except StatisticsOnly as exc:  # said in the games column, in place of the list
            return jsonify(total=0, page=1, pages=0, rows=[], after=None, note=str(exc))
        except ValueError as exc:  # an after= that is no game of the book
            raise ApiError(str(exc), 404) from None
        if page > max(found.pages, 1):
            raise ApiError(f"page {page} is out of range: there are {found.pages} pages", 404)
        return jsonify(total=found.total, page=found.page, pages=found.pages, after=found.after,
                       rows=[game_row_json(row) for row in found.rows])

    @app.get("/api/games.sgf")
    def games_sgf():
        board = shared.search_board()
        filters = _filters_arg()
        # the newest MAX_DOWNLOAD games, in one query
        found = shared.book.games(board, filters=filters, page=1, page_size=MAX_DOWNLOAD)
        body = b"\n".join(shared.book.game_sgf(row.id).rstrip() for row in found.rows) + b"\n"
        return _sgf_response(body, "fuseki-games.sgf")

    @app.get("/api/corners")
    def corners_view():
        from fuseki.book.play.book_chooser import book_corners

        board = shared.search_board()
        # games, as the engine's analysis commands show them (an older corner book counts times only)
        found = book_corners(shared.book, board, board.to_move)
        if found is None:
            return jsonify(corners=[], note="this book has no corner book: fuseki corners --book BOOK builds it")
        answer = {"corners": corners_json(found, board, SHORT_LETTERS), "note": None}
        if shared.ai is not None:
            from fuseki.book.ui.web.ai_service import corners_ai_json

            moves = {c.corner: c.moves for c in found}
            answer["ai"] = corners_ai_json(shared.ai, board, [(c["next"], moves[c["corner"]], c["games"])
                                                              for c in answer["corners"]])
            _final_unless_pending(answer["ai"])
        return jsonify(answer)


def _final_unless_pending(ai: dict) -> None:
    """An answer KataGo may still change (the position pending or busy, or more of it asked:
    ``asking``) is not kept."""
    if ai["status"] not in ("ready", "note") or ai.get("asking"):
        g.pop("fuseki_version", None)  # not final: the answer cache must not keep it


def pattern_ai_json(shared: _Shared, result, rows: list[dict]) -> dict:
    """A pattern answer's ``ai``: a whole-board pattern's continuations are the searched
    position's next moves (``ai_json``); a smaller one's is ``{"status": "note", "reason": ...}``."""
    from types import SimpleNamespace

    from fuseki.book.analysis.ai import WHOLE_BOARD_ONLY
    from fuseki.book.ui.web.ai_service import ai_json

    if not result.pattern.whole_board:
        for row in rows:
            row["ai"] = None
        return {"status": "note", "reason": WHOLE_BOARD_ONLY, "settings": shared.ai.settings_json()}
    found = SimpleNamespace(total=result.total, moves=result.continuations)
    return ai_json(shared.ai, shared.search_board(), rows, found)


def _add_pattern_routes(app: Flask, shared: _Shared) -> None:
    """A region of the search position as a pattern: its continuations and its games."""

    @app.get("/api/pattern")
    def pattern():
        result = shared.pattern_result()
        answer = pattern_json(result)
        if shared.ai is not None:
            answer["ai"] = pattern_ai_json(shared, result, answer["next"])
            _final_unless_pending(answer["ai"])
        return jsonify(answer)

    @app.get("/api/pattern/games")
    def pattern_games():
        after = after_arg(shared.book)  # before the search
        page = _int_arg("page", 1, 1, MAX_PAGE)
        page_size = _int_arg("page_size", 20, 1, MAX_PAGE_SIZE)
        result = shared.pattern_result()
        try:
            found = shared.book.page_of_games(result.matches, page=page, page_size=page_size, after=after)
        except ValueError as exc:
            raise ApiError(str(exc), 404) from None
        return jsonify(total=found.total, page=found.page, pages=found.pages, after=found.after,
                       rows=[game_row_json(row) for row in found.rows], scan=scan_json(result))

    @app.get("/api/pattern/games.sgf")
    def pattern_games_sgf():
        result = shared.pattern_result()
        # the newest MAX_DOWNLOAD of the pattern's matches, as /api/games.sgf gives the position's
        found = shared.book.page_of_games(result.matches, page=1, page_size=MAX_DOWNLOAD)
        body = b"\n".join(shared.book.game_sgf(row.id).rstrip() for row in found.rows) + b"\n"
        return _sgf_response(body, "fuseki-pattern-games.sgf")


def _add_game_routes(app: Flask, shared: _Shared) -> None:
    """One game of the book: its moves (the page replays them itself), its SGF."""

    @app.get("/api/game/<int:game_id>")
    def game(game_id: int):
        record = shared.load_record(game_id)
        at = _int_arg("at", 0, 0, len(record.moves))
        symmetry = _int_arg("sym", -1, 0, 7)  # a link's orientation, else the search's
        if symmetry < 0:
            symmetry = 0
            if request.args.get("moves"):
                search = replay_moves(_moves_arg(record.size), record.size)
                symmetry = orientation(record, at, search)
        size = record.size

        def shown(point: int) -> dict:
            return point_json(coords.transform_point(symmetry, point, size), size)

        moves = [{"color": COLOUR_LETTER[c], **shown(p)} for c, p in record.moves]
        # the setup stones (SGF AB, AW, AE), which the page puts down before the moves
        setup = {name: [shown(p)["sgf"] for c, p in record.setup if c == colour]
                 for name, colour in (("B", BLACK), ("W", WHITE), ("E", EMPTY))}
        return jsonify(id=game_id, info=record_info(record), symmetry=symmetry, at=at, setup=setup, moves=moves)

    @app.get("/api/game/<int:game_id>.sgf")
    def game_sgf(game_id: int):
        shared.load_record(game_id)
        return _sgf_response(shared.book.game_sgf(game_id), f"fuseki-game-{game_id}.sgf")


def _sgf_response(body: bytes, filename: str) -> Response:
    return Response(body, mimetype="application/x-go-sgf",
                    headers={"Content-Disposition": f'attachment; filename="{filename}"'})
