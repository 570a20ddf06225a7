"""The move statistics value type: its wins by colour, and the one share."""

from fuseki.book.model.stats import Stats, ratio
from fuseki.engine.core.base import BLACK, WHITE


def test_stats_wins_and_winrate_by_colour():
    s = Stats(8, 5, 2)
    assert (s.games, s.wins(BLACK), s.wins(WHITE)) == (8, 5, 2)
    assert s.winrate(BLACK) == 5 / 8
    assert s.winrate(WHITE) == 2 / 8
    assert Stats(0, 0, 0).winrate(WHITE) == 0.0


def test_ratio_of_an_empty_whole_is_zero():
    assert ratio(3, 4) == 0.75
    assert ratio(3, 0) == 0.0
