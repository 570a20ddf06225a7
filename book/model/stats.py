"""A move's statistics: the games that played it and each colour's wins among them.

``Stats`` is the one value type of a next move's counts (as lichess-openingexplorer's
``Stats``: added up over the points of an orbit or the parts of a book, subtracted when
games are taken out).  ``MoveStat`` (``book.storage.orbits``: a point and its ``Stats``)
carries it to every reader: the next-move tables, the shell and the page, the players'
first moves, practice's best moves and the years of a position.  Bulk counts on the
storage path stay numpy arrays (``nextmoves.NextMoveStats``: one row of counts per key,
year and next point); a ``Stats`` is made only for the moves an answer shows.

``ratio`` is the one share: a part over its whole, 0 for an empty whole (a win rate, a
guess's share of the games, a year's share of the book).
"""

from __future__ import annotations

from dataclasses import dataclass

from fuseki.engine.core.base import BLACK


def ratio(part: float, whole: float) -> float:
    """``part / whole``, 0.0 when ``whole`` is 0 (no games: no share, no win rate)."""
    return part / whole if whole else 0.0


@dataclass(frozen=True, slots=True)
class Stats:
    """Games and each colour's wins among them; the rest (``games - black_wins - white_wins``)
    ended without a winner (a draw, a void or unknown result)."""

    games: int = 0
    black_wins: int = 0
    white_wins: int = 0

    def __add__(self, other: Stats) -> Stats:
        return Stats(self.games + other.games, self.black_wins + other.black_wins,
                     self.white_wins + other.white_wins)

    def __sub__(self, other: Stats) -> Stats:
        return Stats(self.games - other.games, self.black_wins - other.black_wins,
                     self.white_wins - other.white_wins)

    def wins(self, colour: int) -> int:
        """The games ``colour`` (BLACK or WHITE) won."""
        return self.black_wins if colour == BLACK else self.white_wins

    def winrate(self, colour: int) -> float:
        """``colour``'s wins over the games (0..1; 0 without games)."""
        return ratio(self.wins(colour), self.games)


ZERO = Stats()  # the sum of no moves
