"""The player page's API: a player's record, head-to-head, repertoire and games (``book.queries.players``).

Endpoints (GET; errors as the rest of the API: ``{"error": message}`` with a 4xx status)::

    /api/player?name=&vs=&page=&after=&page_size=
        ``name`` (exact, any case) and ``total``, ``years`` (each ``year``, null for no date, and
        the counts: games, wins, losses, black_games, black_wins, black_losses, white_games, ...),
        ``opponents`` (name, games), ``size``, ``as_black`` (first moves shown in the upper right
        corner: sgf, vertex, points, games, wins, losses, winrate), ``as_white`` (``first`` as
        those, ``replies`` to it), with ``vs`` also ``vs``, ``vs_total`` and ``vs_years``; and
        ``games``: one page of the player's games (with ``vs``: their games together), newest
        first, as /api/games pages them (``after``: keyset; or ``page=``).  No such player: 404
        with ``similar``, the names containing it (or, for ``vs``, their opponents'); a
        statistics book: 409.
    /api/players?q=TEXT               ``players``: name and games of the players whose name
                                      contains TEXT, most games first (at most 20)

``app.create_app`` registers them (``add_player_routes``); the page is ``static/player.js``.
"""

from __future__ import annotations

from dataclasses import asdict

from flask import Flask, jsonify, request

from fuseki.book.storage.position_index.statistics_book import StatisticsOnly
from fuseki.book.ui.web.api_args import MAX_PAGE, MAX_PAGE_SIZE, MAX_PLAYER, ApiError, after_arg, game_row_json, int_arg
from fuseki.engine.core import base
from fuseki.engine.core.base import opponent

FOUND = 20  # names /api/players lists


def _name_arg(key: str, required: bool) -> str | None:
    text = request.args.get(key, "").strip()
    if not text:
        if required:
            raise ApiError(f"{key} is required: a player's name (/api/players?q=TEXT finds names)")
        return None
    if len(text) > MAX_PLAYER:
        raise ApiError(f"{key} is longer than {MAX_PLAYER} characters")
    if not text.isprintable():
        raise ApiError(f"{key} has control characters")
    return text


def move_json(stat, size: int) -> dict:
    """A first move or a reply: its point (SGF, vertex; a pass has sgf ""), the points equivalent
    to it, games, the player's wins and losses and win rate (a game with no winner is neither)."""
    wins, losses = stat.stats.wins(stat.to_move), stat.stats.wins(opponent(stat.to_move))
    return {"sgf": base.point_to_sgf(stat.point, size), "vertex": base.point_to_vertex(stat.point, size),
            "points": [base.point_to_sgf(p, size) for p in stat.points if p != base.PASS],
            "games": stat.games, "wins": wins, "losses": losses, "winrate": stat.winrate}


def years_json(years) -> list[dict]:
    return [{"year": y.year, **asdict(y.record)} for y in years]


def report_json(report) -> dict:
    size = report.size
    answer = {"name": report.name, "total": asdict(report.total), "years": years_json(report.years),
              "opponents": [{"name": n, "games": g} for n, g in report.opponents], "size": size,
              "as_black": [move_json(m, size) for m in report.as_black],
              "as_white": [{"first": move_json(a.first, size), "replies": [move_json(m, size) for m in a.replies]}
                           for a in report.as_white],
              "vs": report.vs}
    if report.vs is not None:
        answer.update(vs_total=asdict(report.vs_total), vs_years=years_json(report.vs_years))
    return answer


def add_player_routes(app: Flask, shared) -> None:
    """/api/player and /api/players over ``shared.book`` (``app._Shared``)."""
    from fuseki.book.queries import players

    @app.get("/api/player")
    def player():
        name = _name_arg("name", True)
        vs = _name_arg("vs", False)
        page = int_arg("page", 1, 1, MAX_PAGE)
        page_size = int_arg("page_size", 20, 1, MAX_PAGE_SIZE)
        after = after_arg(shared.book)  # before any work
        try:
            report = players.player_report(shared.book, name, vs)
            found = players.player_games(shared.book, name, vs, page=page, page_size=page_size, after=after)
        except players.NoPlayer as exc:
            return jsonify(error=str(exc), similar=[{"name": n, "games": g} for n, g in exc.similar]), 404
        except StatisticsOnly:  # a ValueError too: the application's handler answers it (409)
            raise
        except ValueError as exc:  # an after= that is no game of the book
            raise ApiError(str(exc), 404) from None
        if page > max(found.pages, 1):
            raise ApiError(f"page {page} is out of range: there are {found.pages} pages", 404)
        games = {"total": found.total, "page": found.page, "pages": found.pages, "after": found.after,
                 "rows": [game_row_json(row) for row in found.rows]}
        return jsonify(**report_json(report), games=games)

    @app.get("/api/players")
    def player_names():
        text = _name_arg("q", True)
        return jsonify(players=[{"name": n, "games": g} for n, g in players.find_players(shared.book, text, FOUND)])
