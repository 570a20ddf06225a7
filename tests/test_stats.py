"""The move statistics value type: its arithmetic and its shares."""

from fuseki.book.model.stats import ZERO, Stats, ratio
from fuseki.engine.core.base import BLACK, WHITE


def test_stats_add_and_subtract_each_count():
    a, b = Stats(10, 6, 3), Stats(4, 1, 2)
    assert a + b == Stats(14, 7, 5)
    assert a - b == Stats(6, 5, 1)
    assert (a + b) - b == a
    assert a + ZERO == a
    assert sum((a, b), ZERO) == a + b


def test_stats_wins_and_winrate_by_colour():
    s = Stats(8, 5, 2)
    assert (s.wins(BLACK), s.wins(WHITE)) == (5, 2)
    assert s.winrate(BLACK) == 5 / 8
    assert s.winrate(WHITE) == 2 / 8
    assert ZERO.winrate(BLACK) == 0.0


def test_ratio_of_an_empty_whole_is_zero():
    assert ratio(3, 4) == 0.75
    assert ratio(3, 0) == 0.0
