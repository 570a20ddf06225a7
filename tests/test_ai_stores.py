"""The one reader of stored AI values (``book.analysis.ai.AiValueStores``) and the human moves' values
(``book.analysis.ai.next_move_values``), with values stored through ``ai_values.put`` (storage, no mock).

The reading rule: of the rows of the rules and komi in all the stores (the book's own
``ai_values`` table: a book of games, or a statistics book's file, the built-in book ships
its values there; and the cache file), the named network's (any network's when none is
named), the deepest: the most visits, whichever store holds it.  A human move's values:
KataGo's values of the move when the row has them, else computed here, independently, from
the stored values of the position after the move (the mover's side of the child), in two
orientations of the position; the loss against the best of the moves evaluated (>= 0).
"""

from __future__ import annotations

from collections import namedtuple

import pytest
from sqlalchemy import create_engine

from fuseki.book.analysis.ai import CHILD, MISTAKE_POINTS, SEARCH, AiValueStores, marks, next_move_values
from fuseki.book.formats.positions import board_after_moves
from fuseki.book.storage.position_index.statistics_book import StatisticsTable
from fuseki.engine.core import base, coords

from aistores import engine_at, put

Human = namedtuple("Human", "point points")


def read(stores, moves: str):
    board = board_after_moves([m for m in moves.split(",") if m], 19)
    return stores.values(board)


def test_the_network_named_or_any_and_the_most_visits(tmp_path):
    cache = engine_at(tmp_path / "cache.sqlite")
    put(cache, "pd", "net-a", 1, root=(1, 0.41, -1.0))
    put(cache, "pd", "net-a", 8, root=(9, 0.42, -2.0))
    put(cache, "pd", "net-b", 32, root=(33, 0.43, -3.0))
    put(cache, "pd", "net-b", 64, root=(65, 0.44, -4.0), komi=7.5)  # another komi: never read for 6.5
    named = AiValueStores(None, cache, "japanese", 6.5, "net-a")
    found = read(named, "dd")  # another orientation of the position
    assert (found.settings.network, found.settings.visits, found.visits, found.score_lead) == ("net-a", 8, 9, -2.0)
    anyone = AiValueStores(None, cache, "japanese", 6.5, None)
    found = read(anyone, "pd")
    assert (found.settings.network, found.settings.visits, found.winrate) == ("net-b", 32, pytest.approx(0.43))
    assert read(AiValueStores(None, cache, "japanese", 6.5, "net-c"), "pd") is None
    assert read(AiValueStores(None, cache, "chinese", 6.5, ""), "pd") is None
    assert read(anyone, "pd,dd") is None
    cache.dispose()


def test_the_deepest_values_of_all_stores_answer_whichever_store_holds_them(tmp_path):
    book_db, cache = engine_at(tmp_path / "book.sqlite"), engine_at(tmp_path / "cache.sqlite")
    put(book_db, "pd", "net-a", 1, root=(1, 0.5, 1.0))
    put(cache, "pd", "net-a", 32, root=(33, 0.5, 2.0))  # the cache's deeper row beats the book's
    put(cache, "pd,dd", "net-a", 32, root=(33, 0.5, 3.0))
    put(book_db, "pd,dd,pp", "net-a", 16, root=(17, 0.5, 4.0))  # and the book's deeper one the cache's
    put(cache, "pd,dd,pp", "net-a", 4, root=(5, 0.5, 5.0))
    put(book_db, "qc", "net-a", 8, root=(9, 0.5, 6.0))  # of equal depth, the book's
    put(cache, "qc", "net-a", 8, root=(9, 0.5, 7.0))
    move = [("jj", 0.5, 0.0, 0.0)]  # as many moves, searched again with the move forced in the cache: the cache's
    put(book_db, "qd", "net-a", 8, root=(9, 0.5, 8.0), candidates=move, move_visits=3)
    put(cache, "qd", "net-a", 8, root=(9, 0.5, 9.0), candidates=move, move_visits=8)
    stores = AiValueStores(book_db, cache, "japanese", 6.5, "net-a")
    assert [read(stores, m).score_lead for m in ("pd", "pd,dd", "pd,dd,pp", "qc", "qd")] == [2.0, 3.0, 4.0, 6.0, 9.0]
    assert AiValueStores(cache, book_db, "japanese", 6.5, "net-a").values(
        board_after_moves(["pd"], 19)).score_lead == 2.0  # not the order of the stores
    bare = create_engine(f"sqlite:///{tmp_path / 'bare.sqlite'}")  # a book never annotated: no table
    assert read(AiValueStores(bare, cache, "japanese", 6.5, "net-a"), "pd").score_lead == 2.0
    for db in (book_db, cache, bare):
        db.dispose()


def test_a_statistics_books_own_table_is_read(tmp_path):
    from fuseki.book.builders.statbook import write_statistics
    from fuseki.book.storage.store import Book

    from webbook import build_book

    source = build_book(tmp_path / "games.sqlite")
    out = tmp_path / "stats.sqlite"
    with Book.open(str(source), readonly=True) as book:
        write_statistics(book, str(out), min_games=1)
    shipped = engine_at(out)  # as the built-in book will ship them: its own file, the same table
    put(shipped, "pd", "kata1-shipped", 16, root=(17, 0.46, -0.5))
    shipped.dispose()
    with Book.open(str(out)) as stats:
        assert isinstance(stats.index, StatisticsTable)
        stores = AiValueStores.open(stats, tmp_path / "no-cache.sqlite", "japanese", 6.5, None)
        found = read(stores, "pd")
        stores.close()
    assert (found.settings.network, found.visits) == ("kata1-shipped", 17)
    assert not (tmp_path / "no-cache.sqlite").exists()  # reading makes no cache file


# After B Q16 (pd), White to move; the parent's search visited only D4 (dp).  D16 (dd) and
# Q4 (qp)'s children are stored; R14 (qf)'s is not.
PARENT = (40, 0.47, -0.8)
SEARCHED = ("dp", 0.48, -0.6, 0.0)
CHILDREN = {"dd": (9, 0.58, 3.7), "qp": (7, 0.40, 0.3)}  # Black to move after White's move: root values


def expected(best_lead: float, child_root) -> tuple:
    """The mover's win rate and lead are the child's, turned round; the loss against the best
    of the moves evaluated for the position (the child's own lead among them)."""
    _visits, child_winrate, child_lead = child_root
    mover_lead = -child_lead
    return 1 - child_winrate, mover_lead, max(best_lead, mover_lead) - mover_lead


@pytest.mark.parametrize("turn", [0, 5])  # the position as stored, and flipped and turned
def test_a_human_moves_values_come_from_the_search_else_from_the_position_after_it(tmp_path, turn):
    def sgf(point: str) -> str:
        return base.point_to_sgf(coords.transform_point(turn, base.sgf_to_point(point, 19), 19), 19)

    cache = engine_at(tmp_path / "cache.sqlite")
    put(cache, "pd", "net-a", 8, root=PARENT, candidates=[SEARCHED])  # stored as seen, unturned
    for move, root in CHILDREN.items():
        put(cache, f"pd,{move}", "net-a", 2, root=root)
    put(cache, "pd,qf", "net-b", 2, root=(3, 0.1, 9.0))  # another network's child: not mixed in
    stores = AiValueStores(None, cache, "japanese", 6.5, None)
    board = board_after_moves([sgf("pd")], 19)
    parent = stores.values(board)
    assert parent.settings.network == "net-a"
    humans = [Human(base.sgf_to_point(sgf(m), 19), (base.sgf_to_point(sgf(m), 19),))
              for m in ("dp", "dd", "qp", "qf")]
    got = next_move_values(parent, board, board.to_move, humans, stores.values)
    assert got[0].source == SEARCH
    assert (got[0].winrate, got[0].score_lead, got[0].loss) == pytest.approx(SEARCHED[1:])
    for value, move in zip(got[1:3], ("dd", "qp")):
        assert value.source == CHILD and value.visits == CHILDREN[move][0]
        assert (value.winrate, value.score_lead, value.loss) == pytest.approx(expected(SEARCHED[2], CHILDREN[move]))
    assert got[3] is None
    # D16 loses 3.1 points against D4's -0.6; Q4's -0.3 is better than D4: no negative loss, 0
    assert got[1].loss == pytest.approx(3.1) and got[2].loss == 0.0
    assert all(v.position_visits == PARENT[0] for v in got[:3])
    # values of 5 to 9 visits: no mark, whatever they lose (tests/test_ai_marks.py has the rule)
    assert got[1].loss >= 2 * MISTAKE_POINTS and marks([30, 30, 30, 10], 100, got) == [None] * 4
    cache.dispose()
