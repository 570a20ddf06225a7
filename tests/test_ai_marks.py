"""KataGo's judgement as a player meets it: one value per point of a symmetric position (the
deepest of its twins), losses against the best *deep* move, and the one rule of the marks
(``book.analysis.ai.marks``, ``loses``, ``noise_margin``) that the tables, the page,
``fuseki ai mistakes``, ``--by-year`` and GTP share.

Values are written by the test through ``ai_values.put`` (storage, no mock); the expected
figures are worked out here from the numbers written, not read back from the code.
"""

from __future__ import annotations

import math
from collections import namedtuple

import pytest
from sqlalchemy import create_engine

from fuseki.book.analysis import ai
from fuseki.book.analysis.ai import (
    CHOICE,
    MARK_VISITS,
    MISTAKE,
    MISTAKE_POINTS,
    AiValueStores,
    MoveValues,
    marks,
    moves_to_force,
    next_move_values,
    noise_margin,
)
from fuseki.book.formats.positions import board_after_moves
from fuseki.book.queries import ai_values
from fuseki.book.queries.ai_values import AiSettings
from fuseki.engine.core import base, coords

Human = namedtuple("Human", "point points games")
SETTINGS = AiSettings("japanese", 6.5, "net", 400)


def store(tmp_path, moves: str, candidates, root=(400, 0.5, 0.0)):
    """Values of the position after ``moves`` (SGF, comma separated): ``candidates`` are
    (sgf, visits, lead), best first as KataGo orders them; a store reading them."""
    db = create_engine(f"sqlite:///{tmp_path / 'values.sqlite'}")
    board = board_after_moves([m for m in moves.split(",") if m], 19)
    rows = [(base.sgf_to_point(sgf, 19), visits, 0.5, lead, 0.0, 0.1) for sgf, visits, lead in candidates]
    with db.begin() as conn:
        ai_values.create(conn)
        ai_values.put(conn, board.symmetric_keys(board.to_move), 19, SETTINGS, root, rows)
    return db, board


def point(sgf: str, turn: int = 0) -> int:
    return coords.transform_point(turn, base.sgf_to_point(sgf, 19), 19)


@pytest.mark.parametrize("turn", [0, 3, 6])  # the board as stored, and two other orientations
def test_a_symmetric_positions_twin_points_are_one_move_with_the_deepest_values(tmp_path, turn):
    # The empty board: D17 ("dc") and C16 ("cd") are one move (the diagonal maps one onto the
    # other), and so are Q17 ("pc") and C4 ("cp") and the rest.  KataGo's search gave the
    # first copy of D17 82 visits; a search of its own with the move forced gave its twin 399.
    db, _ = store(tmp_path, "", [("pd", 300, -0.30), ("dc", 82, -0.60), ("cq", 3, 0.90), ("cd", 399, -0.40)])
    board = board_after_moves([], 19)
    shown = board_after_moves([], 19)  # the empty board is its own image under every turn
    stores = AiValueStores(db, None, "japanese", 6.5)
    values = stores.values(shown)
    d17 = values.move(point("dc", turn))
    assert d17 is not None and d17.visits == 399 and d17.score_lead == pytest.approx(-0.40)
    assert values.move(point("cd", turn)) is d17  # both twins name the same move
    # one entry for the orbit, in the place of KataGo's first copy (second, after Q16's)
    assert [m.visits for m in values.moves] == [300, 399, 3]
    # the loss is against the best deep move (Q16's -0.30 at 300 visits), never against the
    # 3-visit C3 that shows +0.90: D17 loses 0.10, C3 "loses" nothing
    assert values.best_lead == pytest.approx(-0.30) and values.best_visits == 300
    assert d17.loss == pytest.approx(0.10)
    assert values.move(point("cq", turn)).loss == 0.0
    # annotate does not ask again for a move whose twin is deep
    humans = [Human(point("dc", turn), (point("dc", turn),), 60), Human(point("pd", turn), (point("pd", turn),), 40)]
    assert moves_to_force(values, board, board.to_move, humans, 100, 0.01, min_visits=ai.deep_enough(400)) == []
    got = next_move_values(values, board, board.to_move, humans, stores.values)
    assert got[0].visits == 399 and got[0].best_visits == 300
    db.dispose()


def test_a_shallow_candidate_never_sets_the_best_and_without_any_deep_one_the_best_of_all_does(tmp_path):
    db, board = store(tmp_path, "pd", [("dp", 120, 1.0), ("dd", 2, 3.0), ("qp", 99, 2.0)])
    values = AiValueStores(db, None, "japanese", 6.5).values(board)
    assert (values.best_lead, values.best_visits) == (pytest.approx(1.0), 120)
    assert [round(m.loss, 6) for m in values.moves] == [0.0, 0.0, 0.0]  # better than the best deep: 0, not negative
    db.dispose()
    db, board = store(tmp_path, "pd,dd", [("dp", 20, 1.0), ("qp", 30, 2.5)])
    values = AiValueStores(db, None, "japanese", 6.5).values(board)
    assert (values.best_lead, values.best_visits) == (pytest.approx(2.5), 30)
    db.dispose()


def margin(v: int, w: int) -> float:
    """The rule's noise margin, written out: two standard deviations of a difference of two
    leads whose noise is 0.7 / sqrt(visits) each (docs/katago.md, "How sure a mark is")."""
    return 2.0 * math.hypot(0.7 / math.sqrt(v), 0.7 / math.sqrt(w))


def value(lead: float, loss: float, visits: int = 400, position: int = 400, best: int = 400) -> MoveValues:
    return MoveValues(0.5, lead, loss, visits, "search", (), position, best)


def test_the_noise_margin_is_the_documented_figure_and_shrinks_as_visits_grow():
    assert noise_margin(400, 400) == pytest.approx(margin(400, 400))
    assert noise_margin(100, 400) == pytest.approx(margin(100, 400))
    assert noise_margin(100, 100) > noise_margin(400, 400) > noise_margin(1600, 1600)
    assert noise_margin(1600, 1600) == pytest.approx(noise_margin(400, 400) / 2)


def test_a_popular_mistake_clears_the_threshold_by_the_noise_of_its_visits():
    games, total = [60, 30], 100  # the second is popular (30%)
    edge = MISTAKE_POINTS + margin(400, 400)
    assert marks(games, total, [value(0.0, 0.0), value(-edge - 0.01, edge + 0.01)])[1] == MISTAKE
    assert marks(games, total, [value(0.0, 0.0), value(-edge + 0.01, edge - 0.01)])[1] is None
    # the same loss from fewer visits (the move's, or the best's) is not clear of the noise
    shallow_edge = MISTAKE_POINTS + margin(MARK_VISITS, 400)
    assert edge + 0.01 < shallow_edge
    assert marks(games, total, [value(0.0, 0.0), value(-edge - 0.01, edge + 0.01, visits=MARK_VISITS)])[1] is None
    assert marks(games, total, [value(0.0, 0.0), value(-edge - 0.01, edge + 0.01, best=MARK_VISITS)])[1] is None
    # under MARK_VISITS anywhere (the move, its position's search, the best move): no mark at all
    big = value(-5.0, 5.0)
    assert marks(games, total, [value(0.0, 0.0), big])[1] == MISTAKE
    for shallow in (dict(visits=MARK_VISITS - 1), dict(position=MARK_VISITS - 1), dict(best=MARK_VISITS - 1)):
        assert marks(games, total, [value(0.0, 0.0), value(-5.0, 5.0, **shallow)])[1] is None
    # not popular: no ?, however much it loses
    assert marks([90, 9], total, [value(0.0, 0.0), big]) == [None, None]


def test_the_ais_choice_is_rated_at_least_as_well_as_the_most_played_move_clear_of_the_noise():
    total = 10_000
    top = value(0.30, 0.10)  # the most played move, 0.1 under KataGo's best
    clear = 0.30 + margin(400, 400)
    # a rare move (1%) KataGo rates above the most played by more than the noise: !
    assert marks([6000, 100], total, [top, value(clear + 0.01, 0.0)])[1] == CHOICE
    # as good as the most played, or better by less than the noise: the figures do not say it is
    # at least as good, so no !
    assert marks([6000, 100], total, [top, value(0.30, 0.10)])[1] is None
    assert marks([6000, 100], total, [top, value(clear - 0.01, 0.0)])[1] is None
    # the margin of fewer visits is wider: the same lead from 100 visits of its own is not clear
    assert clear + 0.01 < 0.30 + margin(100, 400)
    assert marks([6000, 100], total, [top, value(clear + 0.01, 0.0, visits=100)])[1] is None
    # P4 after Q16 D4 R4: 0.37 points under the most played D16 at 400 visits each: no !
    assert marks([6000, 100], total, [top, value(0.30 - 0.37, 0.47)])[1] is None
    # better than the most played, but 0.5 or more from KataGo's best: not near the best, no !
    worse_top = value(-0.70, 1.0)
    assert marks([6000, 100], total, [worse_top, value(-0.40, 0.7)])[1] is None
    # played in 2% or more: not rare
    assert marks([6000, 200], total, [top, value(clear + 0.01, 0.0)])[1] is None
    # the most played move without deep values: nothing to compare with, no !
    assert marks([6000, 100], total, [value(0.30, 0.1, visits=50), value(clear + 0.01, 0.0)])[1] is None
    assert marks([6000, 100], total, [None, value(clear + 0.01, 0.0)])[1] is None
    # the most played is the one of most games wherever it stands in the list
    assert marks([100, 6000], total, [value(clear + 0.01, 0.0), top])[0] == CHOICE
