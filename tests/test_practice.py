"""Practice (book.play.practice, /api/practice/*) over a real book against counts written here.

The book is a real import of the first Tygem games of tygem-2016-07.tgz (19x19, no setup, legal,
each once; its corner book built by ``corner_build.update``), and the games are also read here with
sgfmill and replayed with ``Board``:

- guess the next move: for positions of random games, the games that chose a guess there and
  the games that reached the position are counted by a brute force that compares the stones of
  every position of every game with the asked one under each of the 8 symmetries (the side to
  move alike, each game once); a guess is right when a symmetry of the position takes the game's
  move to it.  The API's score after a run of guesses is their count and the sum of the shares;
- the joseki quiz: each answer's games, total and tenuki against test_corners' independent
  count of the same games (corners read as tuples of cells, no hashes); every line the quiz
  draws is made of continuations of at least ``min_games`` games in its corner, and lines are
  drawn in proportion to games;
- bad input answers 400 or 404 with a message naming the point, never 500.
"""

from __future__ import annotations

import random

import pytest

from fuseki.book.analysis.patterns import corner_build, corners
from fuseki.book.analysis.pipeline import importer
from fuseki.book.play import practice
from fuseki.book.storage.store import Book
from fuseki.engine.core import base, coords
from fuseki.engine.core.base import BLACK, PASS, WHITE, opponent, point_to_xy, xy_to_point
from fuseki.engine.core.board import Board

from conftest import sgfmill_main_line, write_archive
from cornercount import count_games, expected

pytestmark = pytest.mark.slow

GAMES = 400
FEW_STONES = 40  # the brute force keeps the positions with at most this many stones (questions are early)


@pytest.fixture(scope="module")
def real(tmp_path_factory, tygem_games):
    """(book, [(moves, winner)], their ids in the book, {stones count: [(game index, move, side, stones)]})."""
    from sgfmill import sgf

    members, games, early = [], [], {}
    for name, data in tygem_games:
        game = sgf.Sgf_game.from_bytes(data)
        if game.get_size() != 19 or game.get_root().has_setup_stones():
            continue
        moves = sgfmill_main_line(game)
        if not moves or any(moves == other for other, _ in games):
            continue
        board, seen = Board(19), []
        try:
            for colour, point in moves:
                seen.append(_position(board, colour))
                board.play(colour, point)
        except Exception:  # an illegal move: not a game the brute force can follow
            continue
        seen.append(_position(board, opponent(moves[-1][0])))
        for i, (count, side, stones) in enumerate(seen):
            if count <= FEW_STONES:
                early.setdefault(count, []).append((len(games), i, side, stones))
        members.append((name, data))
        games.append((moves, {"b": BLACK, "w": WHITE}.get(game.get_winner())))
        if len(games) == GAMES:
            break
    folder = tmp_path_factory.mktemp("practice")
    book = Book.open(str(folder / "book.sqlite"))
    importer.import_paths(book, [str(write_archive(folder / "games.tgz", members))], workers=0)
    corner_build.update(book, progress=None)
    with book.db.connect() as conn:
        id_of = {source: game_id for game_id, source in conn.exec_driver_sql("SELECT id, source FROM games")}
    ids = [next(i for source, i in id_of.items() if source.endswith(name)) for name, _ in members]
    yield book, games, ids, early
    book.close()


def _position(board, side):
    stones = frozenset((c, *point_to_xy(p, 19)) for c in (BLACK, WHITE) for p in board.stones(c))
    return len(stones), side, stones


def _turn(t, stones):
    return frozenset((c, *coords.transform_xy(t, x, y, 19)) for c, x, y in stones)


def brute_force(real, board, side, guess, actual):
    """(games that chose ``guess``, games that reached the position, right) by comparing stones."""
    _book, games, _ids, early = real
    count, _, stones = _position(board, side)
    turned = [_turn(t, stones) for t in range(8)]
    reached, chose = set(), set()
    for g, i, seen_side, seen in early.get(count, ()):
        if g in reached or seen_side != side:
            continue  # each game once, at its first visit
        matching = [t for t in range(8) if turned[t] == seen]
        if not matching:
            continue
        reached.add(g)
        moves = games[g][0]
        if i < len(moves) and moves[i][1] != PASS and any(
                coords.transform_point(t, guess, 19) == moves[i][1] for t in matching):
            chose.add(g)
    stabilizer = [t for t in range(8) if turned[t] == stones]
    right = any(coords.transform_point(t, actual, 19) == guess for t in stabilizer)
    return len(chose), len(reached), right


def questions(real, count, seed):
    """(game index, move number) of random early positions whose next move is a board move."""
    _book, games, _ids, _early = real
    rng = random.Random(seed)
    found = []
    while len(found) < count:
        g = rng.randrange(len(games))
        moves = games[g][0]
        move = rng.randrange(min(30, len(moves)))
        if moves[move][1] != PASS:
            found.append((g, move))
    return found


def test_guess_shares_equal_the_brute_force(real):
    book, games, ids, _ = real
    rng = random.Random(7)
    checked = rights = 0
    for g, move in questions(real, 40, seed=1):
        record = book.game(ids[g])
        board = Board(19)
        for colour, point in games[g][0][:move]:
            board.play(colour, point)
        side, actual = games[g][0][move]
        empty = [p for p in base.board_points(19) if board.legal_reason(side, p) is None]
        stats = book.next_moves(board, to_move=side).moves
        for point in {actual, *(s.point for s in stats[:3]), rng.choice(empty), rng.choice(empty)}:
            judged = practice.guess(book, record, move, point)
            chose, reached, right = brute_force(real, board, side, point, actual)
            assert (judged.games, judged.total, judged.right) == (chose, reached, right), (g, move, point)
            assert judged.actual == actual and judged.colour == side
            checked += 1
            rights += right
    assert checked > 120 and 40 <= rights < checked  # the actual move is always right; random points rarely


def test_a_symmetric_position_takes_an_equivalent_point_as_right(real):
    book, games, ids, _ = real
    g = next(i for i, (moves, _) in enumerate(games) if moves[0][1] != PASS)
    record = book.game(ids[g])
    actual = games[g][0][0][1]
    mirrored = coords.transform_point(3, actual, 19)  # the empty board: every symmetry is its own
    judged = practice.guess(book, record, 0, mirrored)
    assert judged.right and judged.point == mirrored and judged.actual == actual


def test_question_move_skips_passes_and_the_other_colour():
    record = type("Record", (), {"moves": [(BLACK, 5), (WHITE, PASS), (BLACK, 7), (WHITE, 9), (BLACK, PASS)]})()
    assert [practice.question_move(record, n) for n in range(6)] == [0, 2, 2, 3, None, None]
    assert [practice.question_move(record, n, WHITE) for n in range(5)] == [3, 3, 3, 3, None]
    assert practice.question_move(record, 0, BLACK) == 0


def test_the_api_score_is_the_count_and_the_sum_of_shares(real):
    from fuseki.book.ui.web.app import create_app

    book, games, ids, _ = real
    client = create_app(book=book, cache_bytes=0).test_client()
    g = 3
    moves = games[g][0]
    score = {"asked": 0, "right": 0, "shares": 0.0}
    shares, right = [], 0
    for move in range(6):
        board = Board(19)
        for colour, point in moves[:move]:
            board.play(colour, point)
        side, actual = moves[move]
        guess = actual if move % 2 else next(p for p in (xy_to_point(9, 9, 19), xy_to_point(0, 0, 19))
                                             if board.legal_reason(side, p) is None)
        chose, reached, is_right = brute_force(real, board, side, guess, actual)
        shares.append(chose / reached)
        right += is_right
        answer = client.get(f"/api/practice/guess?game={ids[g]}&move={move}"
                            f"&point={base.point_to_vertex(guess, 19)}&asked={score['asked']}"
                            f"&right={score['right']}&shares={score['shares']}").get_json()
        assert answer["right"] == is_right and answer["games"] == chose and answer["total"] == reached
        assert answer["next"] == practice.question_move(book.game(ids[g]), move + 1)
        score = answer["score"]
    assert score["asked"] == 6 and score["right"] == right
    assert score["shares"] == pytest.approx(sum(shares), abs=1e-3)
    assert score["average"] == pytest.approx(sum(shares) / 6, abs=1e-3)
    # the question skips to the colour asked for
    question = client.get(f"/api/practice/guess?game={ids[g]}&move=0&colour=W").get_json()
    assert question["move"] == practice.question_move(book.game(ids[g]), 0, WHITE)
    assert question["position"]["to_move"] == "W"


# --- the joseki quiz -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def corner_count(real):
    _book, games, _ids, _early = real
    return count_games(games, 19)


def lookup_of(book):
    return lambda board, colour: corners.of_book(book, board, colour)


def _expected_corner(corner_count, board, corner):
    """({points: games}, tenuki games, the corner's games) of the independent count."""
    moves, (_, tenuki), games = expected(corner_count, board, board.to_move, corner_build.PRUNE)[corner]
    return {points: in_games for points, (_, _, in_games) in moves.items()}, tenuki, games


def test_quiz_answers_equal_the_independent_corner_count(real, corner_count):
    book = real[0]
    lookup = lookup_of(book)
    rng = random.Random(3)
    answered = 0
    for seed in range(30):
        line = practice.pick_line(lookup, 19, random.Random(seed), min_games=3)
        assert line is not None
        board = line.board()
        moves, tenuki, corner_games = _expected_corner(corner_count, board, line.corner)
        in_corner = [p for p in base.board_points(19) if corners.corner_of_point(p, 19) == line.corner
                     and board.legal_reason(board.to_move, p) is None]
        for point in {*(p for points in list(moves)[:3] for p in points), rng.choice(in_corner)}:
            answer = practice.answer_quiz(lookup, line, point)
            games = next((in_games for points, in_games in moves.items() if point in points), 0)
            assert (answer.games, answer.total, answer.tenuki) == (games, corner_games, tenuki), (seed, point)
            assert [m.games for m in answer.best] == sorted(moves.values(), reverse=True)[:3]
            answered += 1
    assert answered > 60


def test_quiz_lines_are_continuations_of_min_games(real, corner_count):
    book = real[0]
    lookup = lookup_of(book)
    continued = 0
    for seed in range(40):
        min_games = (3, 10, 30)[seed % 3]
        line = practice.pick_line(lookup, 19, random.Random(seed), min_games=min_games)
        board = Board(19)
        for point in line.moves:
            assert corners.corner_of_point(point, 19) == line.corner
            moves = _expected_corner(corner_count, board, line.corner)[0]
            assert any(point in points and played >= min_games for points, played in moves.items())
            board.play(board.to_move, point)
        moves = _expected_corner(corner_count, board, line.corner)[0]  # the question has an answer
        assert any(played >= min_games for played in moves.values())
        assert len(line.moves) <= practice.MAX_DEPTH
        # continuing with the most played answer: that answer, then a continuation of min_games
        best = max(moves.items(), key=lambda item: item[1])[0]
        point = min(p for p in best if board.legal_reason(board.to_move, p) is None)
        after = practice.continue_line(lookup, line, point, min_games, random.Random(seed))
        board.play(board.to_move, point)
        replies = _expected_corner(corner_count, board, line.corner)[0]
        leading = []  # the replies of min_games after which an answer of min_games follows
        for points, played in replies.items():
            for reply in points:
                if played >= min_games and board.legal_reason(board.to_move, reply) is None:
                    then = board.copy()
                    then.play(then.to_move, reply)
                    if any(n >= min_games for n in _expected_corner(corner_count, then, line.corner)[0].values()):
                        leading.append(reply)
        assert (after is not None) == bool(leading), (seed, line, point)
        if after is not None:
            assert after.moves[:-1] == (*line.moves, point) and after.moves[-1] in leading
            continued += 1
    assert continued > 10


def test_quiz_lines_are_drawn_in_proportion_to_games(real, corner_count):
    book = real[0]
    lookup = lookup_of(book)
    first: dict[frozenset, int] = {}
    draws = 600
    moves = _expected_corner(corner_count, Board(19), 0)[0]  # the empty corner's moves, each game once
    for seed in range(draws):
        line = practice.pick_line(lookup, 19, random.Random(seed), min_games=10, depth=1, corner=0)
        if not line.moves:  # a rare first move with no answer of 10 games: the question went back before it
            continue
        point = line.moves[0]
        key = next(points for points in moves if point in points)
        first[key] = first.get(key, 0) + 1
    eligible = {points: played for points, played in moves.items() if played >= 10}
    total = sum(eligible.values())
    for points, played in sorted(eligible.items(), key=lambda item: -item[1])[:2]:
        share = played / total
        spread = 5 * (share * (1 - share) / draws) ** 0.5  # five standard deviations: never by chance
        assert abs(first.get(points, 0) / draws - share) < spread, (points, first.get(points, 0), share)


# --- the API's errors ------------------------------------------------------------------------------


def test_bad_input_is_named_and_never_crashes(real):
    from fuseki.book.ui.web.app import create_app

    book, games, ids, _ = real
    client = create_app(book=book, cache_bytes=0).test_client()
    first = base.point_to_vertex(games[0][0][0][1], 19)
    cases = {
        f"/api/practice/guess?game={ids[0]}&move=1&point={first}": (400, f"{first} is occupied"),
        f"/api/practice/guess?game={ids[0]}&move=1&point=Z99": (400, "Z99"),
        f"/api/practice/guess?game={ids[0]}&move=1&point=pass": (400, "pass"),
        f"/api/practice/guess?game={ids[0]}&move=x": (400, "move must be an integer"),
        f"/api/practice/guess?game={ids[0]}&move=99999": (400, "move must be between"),
        f"/api/practice/guess?game={ids[0]}&move=1&point=K10&shares=nan": (400, "shares"),
        f"/api/practice/guess?game={ids[0]}&move=1&point=K10&asked=1&right=2": (400, "right"),
        f"/api/practice/guess?game={ids[0]}&colour=green": (400, "colour"),
        "/api/practice/guess?move=1": (400, "game is missing"),
        "/api/practice/guess?game=999999999": (404, "no game"),
        "/api/practice/joseki?line=Q16&corner=1&point=Q16": (400, "Q16 is occupied"),
        "/api/practice/joseki?line=Q16&corner=1&point=K10": (400, "K10 is not in the quiz's corner (top right)"),
        "/api/practice/joseki?line=Q16,Q16&corner=1": (400, "move 2 (Q16) is illegal"),
        "/api/practice/joseki?line=Q16&corner=7": (400, "corner must be between"),
        "/api/practice/joseki?line=Q16": (400, "corner is missing"),
        "/api/practice/joseki?line=Q16,xx9&corner=1": (400, "move 2"),
        "/api/practice/joseki?min_games=0": (400, "min_games"),
        "/api/practice/joseki?min_games=1000000": (404, "lower min games"),
    }
    for url, (status, words) in cases.items():
        answer = client.get(url)
        assert answer.status_code == status, (url, answer.get_data(as_text=True))
        assert words in answer.get_json()["error"], (url, answer.get_json())


def test_quiz_answers_carry_katagos_stored_values(real, tmp_path):
    """With ``fuseki serve --ai``: the stored values of the answer and of each most played answer
    (KataGo's candidates, as the page's tables show them); a position with none stored and no
    KataGo: ``unavailable``, the counts as without AI."""
    from fuseki.book.ui.web.ai_service import AiOptions
    from fuseki.book.ui.web.app import create_app

    from webbook import put_values

    book = real[0]
    spot = type("App", (), {"cache_path": tmp_path / "ai-cache.sqlite"})
    # (a loss is the best lead stored minus the move's: 0.2 - (-1.0))
    put_values(spot, "pd", {"nc": (0.47, 0.2, 0.0), "qc": (0.40, -1.0, 1.2)}, network="")
    client = create_app(book=book, cache_bytes=0, ai=AiOptions(command=None, cache=spot.cache_path)).test_client()
    answer = client.get("/api/practice/joseki?line=Q16&corner=1&point=R17&min_games=10").get_json()
    assert answer["ai"]["status"] == "ready"
    assert answer["point"]["ai"] == {"winrate": 0.4, "score_lead": -1.0, "loss": 1.2, "visits": 10,
                                     "source": "search"}
    for row in answer["best"]:
        assert row["ai"] == ({"winrate": 0.47, "score_lead": 0.2, "loss": 0.0, "visits": 10, "source": "search"}
                             if row["sgf"] in ("nc", "qf") else None), row
    plain = create_app(book=book, cache_bytes=0).test_client().get(
        "/api/practice/joseki?line=Q16&corner=1&point=R17&min_games=10").get_json()
    assert "ai" not in plain and (plain["games"], plain["total"]) == (answer["games"], answer["total"])
    none = client.get("/api/practice/joseki?line=Q16,R14&corner=1&point=R17&min_games=10").get_json()
    assert none["ai"]["status"] == "unavailable" and none["point"]["ai"] is None
