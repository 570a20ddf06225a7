"""The practice routes of the web page: guess the next move of a game, and the joseki quiz.

The server judges (legality, the book's counts, the score: ``book.play.practice``); the page
(``static/practice.js``) draws and keeps the state in its address.  Like the rest of the API
these routes are stateless: each request names the game and move, or the quiz line, again.

Endpoints (GET; errors are ``{"error": message}`` with status 400, naming the point in Go
coordinates: ``Q16 is occupied``; 404 for a game the book lacks)::

    /api/practice/guess?game=ID&move=N&colour=B|W
        the question: the first move number >= N to guess (a board move; of ``colour`` when
        given) as ``move`` (null when the game has none left), the position before it
        (``position``), the game's header (``info``) and move count
    /api/practice/guess?game=ID&move=N&point=Q16&colour=&asked=&right=&shares=
        the guess judged: ``right``, the game's move (``actual``), the book's ``games`` of
        ``total`` that chose the guess there and its ``share`` (the same of the game's move),
        the most played moves (``best``), the ``score`` after it (asked, right, shares: the
        request's score plus this guess; ``average``: the mean share) and ``next``, the next
        question's move number (null: the game is over)
    /api/practice/joseki?min_games=M&seed=S
        a new quiz line: ``corner``, its ``moves`` (Black first, alternating), the ``position``
        to answer in; 404 when the corner book has no move of ``min_games`` games
    /api/practice/joseki?line=Q16,R17&corner=C&min_games=M
        that line's question again (a reloaded page)
    /api/practice/joseki?line=...&corner=C&point=R14&min_games=M&seed=S
        the answer judged: its ``games`` of the ``total`` games of the corner's moves there and
        ``share``, ``tenuki`` (players who left the corner, not in ``total``), the most played
        answers (``best``), with ``fuseki serve --ai`` KataGo's stored values of the answer and
        of each best one (``ai``: pending/ready/unavailable as on the rest of the page); ``next``: the line continued by
        the answer and a reply drawn from the corner book, null where it ends

What every route shares (an integer argument, a point as JSON) comes from ``api_args``; the rest of
the parsing (a colour, a point, a quiz line, a score) is this module's own. ``app`` imports it to
register the routes, so it cannot import ``app`` back (tests/test_layers.py refuses the circle).
"""

from __future__ import annotations

import random

from flask import Flask, jsonify, request

from fuseki.book.analysis.patterns.corners import CORNER_NAMES
from fuseki.book.formats.positions import board_after_record
from fuseki.book.play import practice
from fuseki.book.play.practice import PracticeError, QuizLine, Score
from fuseki.book.ui.web.api_args import MAX_ID, int_arg, point_json
from fuseki.engine.core import base
from fuseki.engine.core.base import BLACK, COLOUR_LETTER, WHITE

COLOURS = {letter: colour for colour, letter in COLOUR_LETTER.items()}  # "B": BLACK, "W": WHITE
MAX_MIN_GAMES = 10**6
MAX_LINE = 40  # moves of a quiz line (the page continues a line of MAX_DEPTH by two moves an answer)
DEFAULT_MIN_GAMES = 10


def add_practice_routes(app: Flask, shared) -> None:
    """Register the routes on ``app``; ``shared``: ``app._Shared`` (the book, the AI service)."""

    @app.errorhandler(PracticeError)
    def practice_error(exc: PracticeError):
        return jsonify(error=str(exc)), 400

    @app.get("/api/practice/guess")
    def practice_guess():
        record = shared.load_record(_required(int_arg("game", None, 1, MAX_ID), "game"))
        move = int_arg("move", 0, 0, len(record.moves))
        colour = _colour()
        if not request.args.get("point"):
            asked = practice.question_move(record, move, colour)
            board = board_after_record(record, asked if asked is not None else len(record.moves), strict=False)
            return jsonify(move=asked, move_count=len(record.moves), position=board_json(board),
                           info={k: getattr(record, k) for k in ("black", "white", "black_rank", "white_rank")})
        point = _point(record.size)
        judged = practice.guess(shared.book, record, move, point)
        score = Score(int_arg("asked", 0, 0, 10**6), int_arg("right", 0, 0, 10**6), _float("shares"))
        if score.right > score.asked:
            raise PracticeError(f"right ({score.right}) is more than asked ({score.asked})")
        score = score.add(judged.right, judged.share)
        size = record.size
        return jsonify(
            move=move, right=judged.right, colour=COLOUR_LETTER[judged.colour],
            point=point_json(point, size), actual=point_json(judged.actual, size),
            games=judged.games, total=judged.total, share=round(judged.share, 4),
            actual_games=judged.actual_games, actual_share=round(judged.actual_share, 4),
            best=[{**point_json(s.point, size), "games": s.games,
                   "share": round(s.games / judged.total, 4) if judged.total else 0.0} for s in judged.best],
            score={"asked": score.asked, "right": score.right, "shares": round(score.shares, 4),
                   "average": round(score.average, 4)},
            next=practice.question_move(record, move + 1, colour))

    @app.get("/api/practice/joseki")
    def practice_joseki():
        from fuseki.book.analysis.patterns import corners

        size = shared.default_size()
        min_games = int_arg("min_games", DEFAULT_MIN_GAMES, 1, MAX_MIN_GAMES)
        seed = int_arg("seed", None, 0, 2**63 - 1)
        rng = random.Random(seed)
        lookup = lambda board, colour: corners.of_book(shared.book, board, colour)
        if "line" not in request.args:
            line = practice.pick_line(lookup, size, rng, min_games)
            if line is None:
                return jsonify(error=f"the corner book has no move played in {min_games} games or more "
                                     "in an empty corner: lower min games"), 404
            return jsonify(question_json(line, min_games))
        corner = _required(int_arg("corner", None, 0, 3), "corner")
        line = QuizLine(size, corner, tuple(_points("line", size)))
        if any(base.PASS == p for p in line.moves):
            raise PracticeError("a quiz line has no passes")
        if not request.args.get("point"):
            line.board()  # an illegal line says so
            return jsonify(question_json(line, min_games))
        point = _point(size)
        answer = practice.answer_quiz(lookup, line, point)
        following = practice.continue_line(lookup, line, point, min_games, rng)
        best = [{**point_json(m.point, size), "points": [base.point_to_sgf(p, size) for p in m.points],
                 "games": m.games, "share": round(m.games / answer.total, 4) if answer.total else 0.0}
                for m in answer.best]
        found = {**point_json(point, size), "games": answer.games}
        body = {"point": found, "colour": COLOUR_LETTER[answer.colour], "games": answer.games, "total": answer.total,
                "share": round(answer.share, 4), "tenuki": answer.tenuki, "best": best,
                "next": question_json(following, min_games) if following is not None else None}
        if shared.ai is not None:
            body["ai"] = quiz_ai_json(shared.ai, line.board(), [found, *best], [point, *(m.point for m in answer.best)])
        return jsonify(body)


def question_json(line: QuizLine, min_games: int) -> dict:
    board = line.board()
    return {"size": line.size, "corner": line.corner, "corner_name": CORNER_NAMES[line.corner],
            "line": [point_json(p, line.size) for p in line.moves], "min_games": min_games,
            "to_move": COLOUR_LETTER[board.to_move], "position": board_json(board)}


def quiz_ai_json(service, board, rows: list[dict], points: list[int]) -> dict:
    """KataGo's stored values of each of ``points`` as the position's next moves (``book.analysis.ai.
    next_move_values``), as each row's ``ai`` (None where none is stored), and the status
    (``book.ui.web.ai_service.AiService.answer``: KataGo is asked in the background for a position it lacks)."""
    from fuseki.book.analysis.ai import OnePoint, next_move_values

    service.looking_at(board)  # the quiz's position: the visitor's earlier ones are left (book.ui.web.ai_service)
    status, got = service.answer(board)
    answer = {"status": status, "settings": service.settings_json()}
    for row in rows:
        row["ai"] = None
    if status in ("unavailable", "busy", "none"):  # busy: over KataGo's budget; none: not stored (ai_service)
        answer["reason"] = got
    if status != "ready":
        return answer
    moves = [OnePoint(p, (p,)) for p in points]  # the values of the point shown (a corner move may be two)
    for row, value in zip(rows, next_move_values(got, board, board.to_move, moves, service.stores.values)):
        if value is not None:
            row["ai"] = {"winrate": round(value.winrate, 4), "score_lead": round(value.score_lead, 2),
                         "loss": round(value.loss, 2) + 0.0, "visits": value.visits, "source": value.source}
    return answer


# --- answers and arguments -------------------------------------------------------------------


def board_json(board) -> dict:
    """What the page draws: stones (SGF points), the last move, the player to move."""
    size = board.size
    last = None
    if board.moves:
        colour, point = board.moves[-1]
        last = {"color": COLOUR_LETTER[colour], **point_json(point, size)} if point != base.PASS else None
    return {"size": size, "move_number": len(board.moves), "to_move": COLOUR_LETTER[board.to_move], "last": last,
            "stones": {COLOUR_LETTER[c]: sorted(base.point_to_sgf(p, size) for p in board.stones(c))
                       for c in (BLACK, WHITE)}}


def _text(name: str) -> str:
    return request.args.get(name, "").strip()[:4000]


def _required(value, name: str):
    if value is None:
        raise PracticeError(f"{name} is missing")
    return value


def _float(name: str) -> float:
    text = _text(name)
    try:
        value = float(text) if text else 0.0
    except ValueError:
        raise PracticeError(f"{name} must be a number, not '{text[:20]}'") from None
    if not 0.0 <= value <= 10**6:  # NaN fails too
        raise PracticeError(f"{name} must be between 0 and 1000000, not '{text[:20]}'")
    return value


def _colour() -> int | None:
    text = _text("colour").upper()
    if text and text not in COLOURS:
        raise PracticeError(f"colour must be B or W, not '{text[:10]}'")
    return COLOURS.get(text)


def _point(size: int) -> int:
    text = _text("point")
    try:
        point = base.parse_point(text, size)
    except base.CoordinateError as exc:
        raise PracticeError(f"point '{text[:10]}' is not a point of the {size}x{size} board: {exc}") from None
    if point == base.PASS:
        raise PracticeError("a pass cannot be guessed: click a point")
    return point


def _points(name: str, size: int) -> list[int]:
    tokens = [t for t in _text(name).split(",") if t.strip()]
    if len(tokens) > MAX_LINE:
        raise PracticeError(f"{name}: at most {MAX_LINE} moves, not {len(tokens)}")
    points = []
    for number, token in enumerate(tokens, 1):
        try:
            points.append(base.parse_point(token, size))
        except base.CoordinateError as exc:
            raise PracticeError(f"{name}: move {number} '{token.strip()[:10]}' is no point: {exc}") from None
    return points
