"""A move's statistics: the games that played it and each colour's wins among them.

``Stats`` is the one value type of a next move's counts.  Unlike lichess-openingexplorer's
``Stats`` it has no ``+`` or ``-``: counts are added and taken out in bulk, as arrays
(``nextmoves.combine`` and ``subtract`` for stored counts, ``orbits.merge_orbits`` for the
points of an orbit, where a ``Stats`` a point, added, made the empty board's merge 18 % slower), and
never one move's at a time, so an operator would have no caller.
``MoveStat`` (``book.storage.position_index.orbits``: a point and its ``Stats``) carries it to every reader:
the next-move tables, the shell and the page, the players' first moves, practice's best moves
and the years of a position.  Bulk counts on the storage path stay numpy arrays
(``nextmoves.NextMoveStats``: one row of counts per key, year and next point); a ``Stats`` is
made only for the moves an answer shows.

``ratio`` is the one share: a part over its whole, 0 for an empty whole (a win rate, a
guess's share of the games, a year's share of the book).
"""

from __future__ import annotations

from typing import NamedTuple

from fuseki.engine.core.base import BLACK


def ratio(part: float, whole: float) -> float:
    """``part / whole``, 0.0 when ``whole`` is 0 (no games: no share, no win rate)."""
    return part / whole if whole else 0.0


class Stats(NamedTuple):
    """Games and each colour's wins among them; the rest (``games - black_wins - white_wins``)
    ended without a winner (a draw, a void or unknown result).

    A NamedTuple, not a frozen dataclass: one is made for every move an answer shows, on the
    path of every query and ``genmove``, and a frozen dataclass cost 430 ns to make against
    250 (CPython 3.11)."""

    games: int
    black_wins: int
    white_wins: int

    def wins(self, colour: int) -> int:
        """The games ``colour`` (BLACK or WHITE) won."""
        return self.black_wins if colour == BLACK else self.white_wins

    def winrate(self, colour: int) -> float:
        """``colour``'s wins over the games (0..1; 0 without games)."""
        return ratio(self.wins(colour), self.games)
