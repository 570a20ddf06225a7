"""``fuseki search`` and ``fuseki pattern`` within results: ``--within FILE``, ``--within-moves
MOVES`` and ``--save-games FILE``.

Kombilo's "search within": a position or a pattern searched only in the games of an earlier
answer.  The library's part is ``book.queries.gamesets`` (``GameSet``, saved files, the
``Filters.within`` field); here are the options both commands take.  ``--save-games`` writes
the answer's games: a position's, those that reached it (filters and ``--within`` included),
a pattern's, those that matched.  Several ``--within`` and ``--within-moves`` intersect; a
``--within-moves`` position's games are taken without the filters (a filter keeps or drops
each game by itself, so it makes no difference to the answer).
"""

from __future__ import annotations

import sys

# --- fuseki search and fuseki pattern --------------------------------------------------------


def add_within_options(p) -> None:
    """``--within FILE``, ``--within-moves MOVES`` (each may repeat: they intersect) and ``--save-games FILE``."""
    p.add_argument("--within", action="append", default=[], metavar="FILE",
                   help="only the games saved in FILE by --save-games (an earlier answer of this book; "
                        "repeat to intersect)")
    p.add_argument("--within-moves", action="append", default=[], metavar="MOVES",
                   help="only the games that reached the position after MOVES (e.g. \"Q16 D4\"; any orientation; "
                        "repeat to intersect)")
    p.add_argument("--save-games", metavar="FILE",
                   help="write the games of this answer to FILE (JSON, with the book's identity), for --within")


def within_of(args, book, size: int):
    """The GameSet the ``--within`` files and ``--within-moves`` positions all hold (None: no restriction)."""
    if not args.within and not args.within_moves:  # the usual search: nothing of gamesets is needed
        return None
    from fuseki.book.formats.positions import PositionError, board_after_moves
    from fuseki.book.model.filters import Filters
    from fuseki.book.queries.gamesets import intersect, load, position_games

    sets = [load(path, book)[0] for path in args.within]
    for moves in args.within_moves:
        try:
            sets.append(position_games(book, board_after_moves(moves.replace(",", " ").split(), size), Filters()))
        except PositionError as exc:
            raise PositionError(f"--within-moves \"{moves[:60]}\": {exc}") from None
    return intersect(sets)


def within_note(args, games) -> str:
    """What the answer is within, for the line under the table ('' when nothing)."""
    if games is None:
        return ""
    parts = list(args.within) + [f"position {' '.join(m.replace(',', ' ').split())}" for m in args.within_moves]
    return f"; within {len(games)} games ({', '.join(parts)})"


def asked_text(args) -> str:
    """The position a command was asked about, in words (what a saved file says found its games)."""
    if getattr(args, "sgf", None):
        return f"{args.sgf} after {args.move} moves"
    return " ".join(args.moves.replace(",", " ").split()) or "the empty board"


def save_games(args, book, games, query: str, command: str) -> None:
    """``--save-games``: write the answer's games (a GameSet) and say so on stderr."""
    from fuseki.book.queries.gamesets import save

    if not args.save_games:
        return
    save(args.save_games, book, games, query)
    print(f"fuseki {command}: {len(games)} games saved to {args.save_games} (use them with --within "
          f"{args.save_games})", file=sys.stderr)

