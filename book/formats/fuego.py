"""Fuego/Pachi opening book files: writing the book as one, and reading one back.

The format (Fuego's ``GoBook::Write``/``GoBook::Read``, ``book/book.dat`` in
Fuego; Pachi reads the same files) is one position a line::

    19 Q4 D16 | C4 D3

the board size, the moves that lead to the position from the empty board
(black first, alternating), ``|``, then the moves to play there.  Fuego
stores every line in its 8 rotations and refuses a line whose position (in
any rotation) another line already gave ("Entry duplicates line"), so a
position is written once, at the first move order that reaches it.  Empty
lines are skipped; we also skip lines starting with ``#`` (Fuego itself has
no comments, so we never write them).

- :func:`write_fuego_book` walks the book from the empty board of each size:
  a position gets a line when some non-pass move was played from it in at
  least ``min_games`` games, and the walk goes on through those moves.
- :func:`read_fuego_book` parses a file into :class:`FuegoEntry` values
  (points as padded indexes, ``engine.core.coords``); it checks the syntax only,
  legality is the importer's replay's job.
- :func:`fuego_records` turns a file into game records for the importer: one
  game per leaf of the file's move tree (a line followed to a move after
  which the file gives no further line), so a position's book count is the
  number of book lines through it.  Such games have no players, result or
  winner.
- ``fuseki book export`` (``book.ui.commands.book_command``) writes a book as one.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TextIO

from fuseki.engine.core import base
from fuseki.engine.core.base import BLACK, COLOUR_LETTER, WHITE

DEFAULT_MIN_GAMES = 10


@dataclass(frozen=True)
class FuegoEntry:
    """One line of a Fuego book: ``size``, the moves to the position, the replies, its line number."""

    size: int
    moves: tuple[int, ...]
    replies: tuple[int, ...]
    line: int


# --- writing ----------------------------------------------------------------------------

def fuego_line(size: int, moves: Iterable[int], replies: Iterable[int]) -> str:
    """``"19 Q4 D16 | C4 D3"``: exactly the spacing of Fuego's ``GoBook::Write``."""
    seq = "".join(base.point_to_vertex(p, size) + " " for p in moves)
    return f"{size} {seq}|" + "".join(" " + base.point_to_vertex(p, size) for p in replies)


def book_lines(book, size: int, min_games: int = DEFAULT_MIN_GAMES,
               max_moves: int | None = None) -> Iterator[tuple[tuple[int, ...], list[int]]]:
    """(moves to the position, replies) for every book position worth a line on ``size``.

    Depth first from the empty board, replies most played first; a position met
    again (another move order, or a rotation of one already written) is not
    written or walked again.  ``max_moves``: no lines for positions after more moves.
    """
    from fuseki.engine.core.board import Board

    board, seq, seen = Board(size), [], set()

    def replies_here() -> list[int]:
        mover = BLACK if len(seq) % 2 == 0 else WHITE
        key = min(board.symmetric_keys(mover))
        if key in seen or (max_moves is not None and len(seq) > max_moves):
            return []
        seen.add(key)
        found = book.next_moves(board, to_move=mover)  # all of them: min_games is applied here
        return [m.point for m in found.moves
                if m.games >= min_games and m.point != base.PASS
                and board.legal_reason(mover, m.point) is None]

    stack = []
    replies = replies_here()
    if replies:
        yield (), replies
    stack.append(iter(replies))
    while stack:
        point = next(stack[-1], None)
        if point is None:
            stack.pop()
            if stack:
                board.undo()
                seq.pop()
            continue
        board.play(BLACK if len(seq) % 2 == 0 else WHITE, point)
        seq.append(point)
        replies = replies_here()
        if replies:
            yield tuple(seq), replies
        stack.append(iter(replies))


def write_fuego_book(book, out: TextIO, min_games: int = DEFAULT_MIN_GAMES,
                     max_moves: int | None = None, sizes: Iterable[int] | None = None) -> int:
    """Write the book's lines for each size (default: every size in the book); returns the line count."""
    sizes = sorted(book.stats().sizes) if sizes is None else list(sizes)
    written = 0
    for size in sizes:
        if not base.MIN_SIZE <= size <= base.MAX_SIZE:
            continue
        for moves, replies in book_lines(book, size, min_games, max_moves):
            out.write(fuego_line(size, moves, replies) + "\n")
            written += 1
    return written


# --- reading ----------------------------------------------------------------------------

class FuegoBookError(ValueError):
    """A line that is not Fuego book syntax; the message names the line."""


def _point(word: str, size: int, number: int) -> int:
    if word.lower() == "pass":
        return base.PASS
    try:
        return base.vertex_to_point(word, size)
    except base.CoordinateError:
        raise FuegoBookError(f"line {number}: {word!r} is not a point of a {size}x{size} board") from None


def read_fuego_book(text: str) -> Iterator[FuegoEntry]:
    """The entries of a Fuego book file's text, in file order.

    Raises FuegoBookError (a ValueError) naming the line for a bad size, a
    missing ``|``, no reply, or a word that is not a point.  Lines for boards
    over 25x25 are skipped, as Fuego skips sizes over its maximum.
    """
    for number, raw in enumerate(text.splitlines(), 1):
        words = raw.split()
        if not words or words[0].startswith("#"):
            continue
        if not words[0].isascii() or not words[0].isdigit() or int(words[0]) < 1:
            raise FuegoBookError(f"line {number}: invalid size {words[0]!r}")
        size = int(words[0])
        if size > base.MAX_SIZE:
            continue
        if size < 2:
            raise FuegoBookError(f"line {number}: invalid size {size}")
        if "|" not in words:
            raise FuegoBookError(f"line {number}: no '|' between the moves and the replies")
        bar = words.index("|")
        moves = tuple(_point(w, size, number) for w in words[1:bar])
        replies = tuple(_point(w, size, number) for w in words[bar + 1:])
        if not replies:
            raise FuegoBookError(f"line {number}: no move to play after '|'")
        yield FuegoEntry(size, moves, replies, number)


def leaf_lines(entries: Iterable[FuegoEntry]) -> Iterator[tuple[int, tuple[int, ...], int]]:
    """(size, moves, line number) for each leaf of the entries' move tree, in file order.

    Each entry gives the lines ``moves + (reply,)``; a line that is the start of
    another is not a leaf.  Repeated lines count once.
    """
    trie: dict = {}
    order: list[tuple[int, tuple[int, ...], int]] = []
    for entry in entries:
        for reply in entry.replies:
            node = trie.setdefault(entry.size, {})
            line = entry.moves + (reply,)
            new = False
            for point in line:
                if point not in node:
                    node[point], new = {}, True
                node = node[point]
            if new:
                order.append((entry.size, line, entry.line))
    for size, line, number in order:
        node = trie[size]
        for point in line:
            node = node[point]
        if not node:
            yield size, line, number


def fuego_records(text: str, source: str) -> Iterator:
    """``book.model.records.GameRecord`` values for the importer: one per leaf line (see the module doc).

    ``source`` names the file; each record's source is ``"<source>:<line number>"``.
    Raises FuegoBookError as ``read_fuego_book``.
    """
    from fuseki.book.model.records import GameRecord

    for size, line, number in leaf_lines(read_fuego_book(text)):
        moves = [(BLACK if i % 2 == 0 else WHITE, p) for i, p in enumerate(line)]
        sgf = f"(;GM[1]FF[4]SZ[{size}]" + "".join(
            f";{COLOUR_LETTER[c]}[{'' if p == base.PASS else base.point_to_sgf(p, size)}]"
            for c, p in moves) + ")"
        yield GameRecord(size=size, setup=[], moves=moves, komi=None, handicap=0, black="", white="",
                         black_rank="", white_rank="", date="", year=None, event="", result="",
                         winner=None, rules="", source=f"{source}:{number}", sgf=sgf.encode("ascii"),
                         notes=[f"line {number} of a Fuego opening book"])


def is_fuego_book(head: bytes) -> bool:
    """True when the first non-blank line of ``head`` looks like a Fuego book line (``19 ... | ...``)."""
    for raw in head.splitlines():
        words = raw.split()
        if words:
            return words[0].isdigit() and b"|" in words
    return False
