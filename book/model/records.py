"""Game records: what the formats read a game into and the importer replays.

A :class:`GameRecord` holds one game's header (``book.model.headers``), setup and main
line; :class:`Moves` is the compact form of the main line that the SGF fast path gives.
A record keeps at most :func:`move_limit` moves (``MOVES_PER_POINT`` times the board's points):
the formats cut a longer game there and say how long it was (``cut_from``).
Conventions: points are padded indexes (``engine.core.coords``), ``PASS = -1``; colours are
``engine.core.base`` codes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field, make_dataclass

import numpy as np

from fuseki.book.model.headers import dataclass_fields

# The moves a record keeps (MOVES_PER_POINT x the board's points): the engine's (loadsgf's too)
from fuseki.engine.core.base import MOVES_PER_POINT, move_limit


def move_limit_text(played: int, size: int) -> str:
    """What the import says of a game of ``played`` moves cut at the limit."""
    return (f"game has {played} moves; kept the first {move_limit(size)} "
            f"(limit: {MOVES_PER_POINT} \u00d7 the board's points)")

GameRecord = make_dataclass(
    "GameRecord",
    [
        ("size", int),
        ("setup", list[tuple[int, int]]),  # root AB/AW/AE as (colour, point); AE gives (EMPTY, point)
        ("moves", Sequence[tuple[int, int]]),  # main line (colour, point), PASS = -1: a list, or Moves
        ("source", str),  # file name, or "archive.tgz:member/name.sgf"
        ("sgf", bytes),  # the game's own SGF bytes, from "(;" to its closing ")"
        *dataclass_fields(),  # black, white, ..., rules: listed once, in book.model.headers
        ("encoding", str, field(default="utf-8")),  # codec the header text was decoded with
        ("notes", list[str], field(default_factory=list)),  # quirks met and what was done about them
        # the moves of the game in its file where it had more than move_limit(size): ``moves``
        # and ``sgf`` hold the first move_limit(size); None: the game is whole
        ("cut_from", int | None, field(default=None)),
    ],
    slots=True,
    namespace={"__module__": __name__, "__doc__": """One game's header, setup and main line, from SGF.

    The header fields (``black``, ``white``, ..., ``rules``) are those of
    ``book.model.headers.HEADER_FIELDS``, keyword-only, each with its default.
    """},
)


class Moves(Sequence):
    """A record's moves held as an (n, 2) integer array of (colour, point) rows.

    Reads as a list of ``(colour, point)`` tuples (indexing, slicing gives a list,
    iteration, ``len``, ``==`` with any sequence of pairs); ``array`` is the array
    itself, which the importer replays without building a tuple per move.  The fast
    path's records have these; 2.3 M tuples for the Tygem archive were a fifth of
    its parsing time.
    """

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray):
        self.array = array

    def __len__(self) -> int:
        return len(self.array)

    def __getitem__(self, index):
        if isinstance(index, slice):
            rows = self.array[index]
            return list(zip(rows[:, 0].tolist(), rows[:, 1].tolist()))
        colour, point = self.array[index].tolist()
        return colour, point

    def __iter__(self):
        return zip(self.array[:, 0].tolist(), self.array[:, 1].tolist())

    def __eq__(self, other) -> bool:
        if isinstance(other, Moves):
            return np.array_equal(self.array, other.array)
        return isinstance(other, Sequence) and list(self) == list(other)

    def __repr__(self) -> str:
        return repr(list(self))

    def __reduce__(self):
        return Moves, (self.array,)
