"""``fuseki pattern``: the games that reach a corner, side or anywhere pattern, and their continuations.

The pattern is the region ``--region A:B`` (two opposite corner vertices) of a position
(``--moves`` or ``--sgf``/``--move``, as for ``fuseki search``); ``--any`` points match
anything, ``--empty-or-black``/``--empty-or-white`` points (Kombilo's ``x``/``o``) anything
but a white/black stone. Kombilo's options (``pattern.Pattern``): ``--fixed-colour`` (the
default) or ``--swap-colours``, ``--to-move black|white`` (who moves next),
``--moves-from``/``--moves-to`` (the move range; ``--moves-to`` is Kombilo's move limit).
Output: the region drawn as text with the continuations lettered, the table (letter, vertex,
colour of the player who played it, games, at once, after tenuki, that player's win rate:
``search.Continuation``, counted as Kombilo does; Black's and White's moves at one point are
two rows with one letter), ``tenuki N``, ``total N games``. A pattern that cannot be
searched for prints one line and exits with 2.

``--budget S`` stops the scan after about S seconds (one part of the games past it at most:
``scan.PART_GAMES``, ``PART_SECONDS``) and prints what the games scanned so far gave, how far it
got (games scanned of the search's games, percent) and the ``--from ID`` that goes on from
there; ``--from ID`` scans the games from that id on (their counts add to the earlier answer's).
Without ``--budget`` every game is scanned.

With ``--ai`` (``book.ui.present.ai_text.add_ai_options``) a whole-board pattern (the region is
the board, no "any" point: ``Pattern.whole_board``) is a position, and its continuations its
next moves: each gets KataGo's win rate, lead and loss for the player to move, and the marks, as
``fuseki search --ai`` gives them (``book.ui.present.pattern_text.pattern_ai``: the searched
position's values, stored or asked, in the orientation the pattern was entered).  A smaller
region says ``WHOLE_BOARD_ONLY`` (``book.analysis.ai``) once instead.
"""

from __future__ import annotations

import sys
from dataclasses import replace

from fuseki.book.ui import within_options
from fuseki.book.ui.cli_shared import (
    add_book_option,
    add_filter_options,
    add_position_options,
    book_location,
    filters_of,
    position_of,
)
from fuseki.book.ui.present import ai_text
from fuseki.book.ui.present.pattern_text import pattern_ai, progress_line, result_text
from fuseki.book.ui.reading import TO_MOVE, pattern_from_board


def add_command(subparsers) -> None:
    p = subparsers.add_parser(
        "pattern", help="games reaching a corner, side or anywhere pattern, and what was played next",
        description="Pattern search. Example: fuseki pattern --moves \"Q16 R14\" --region N19:T13; within "
                    "an earlier answer: add --save-games p.json, then fuseki pattern --moves \"Q16 R14 O17\" "
                    "--region N19:T13 --within p.json (or --within-moves \"Q16 D4\")")
    add_position_options(p)
    p.add_argument("--region", required=True, metavar="A:B",
                   help="the pattern's rectangle by two opposite corners, e.g. N19:T13 (a corner region)")
    p.add_argument("--any", default="", metavar="POINTS", help="points of the region that match anything: R17,S18")
    p.add_argument("--empty-or-black", default="", metavar="POINTS",
                   help="points of the region that match empty or a black stone (Kombilo's x): R17,S18")
    p.add_argument("--empty-or-white", default="", metavar="POINTS",
                   help="points of the region that match empty or a white stone (Kombilo's o)")
    colours = p.add_mutually_exclusive_group()
    colours.add_argument("--fixed-colour", dest="swap_colours", action="store_false", default=False,
                         help="Black's stones must be black (Kombilo's fixed colour; the default)")
    colours.add_argument("--swap-colours", dest="swap_colours", action="store_true",
                         help="also find the pattern with colours exchanged (then who moves next too)")
    p.add_argument("--to-move", default="either", choices=["either", "black", "white"],
                   help="who moves next after the matched position, in the pattern's colours (default either)")
    p.add_argument("--moves-from", type=int, default=0, metavar="M",
                   help="count a match only after at least M moves (default 0)")
    p.add_argument("--moves-to", type=int, default=None, metavar="N",
                   help="count a match only after at most N moves (Kombilo's move limit; default none)")
    p.add_argument("--budget", type=float, default=None, metavar="S",
                   help="stop after about S seconds of scan, print what the games scanned gave and how "
                        "far it got, and the --from that goes on (default: scan every game)")
    p.add_argument("--from", dest="from_id", type=int, default=0, metavar="ID",
                   help="scan only the games from game id ID on (where a --budget answer stopped)")
    add_filter_options(p)
    within_options.add_within_options(p)
    add_book_option(p)
    ai_text.add_ai_options(p)
    p.set_defaults(run=run_pattern)


def run_pattern(args) -> int:
    from fuseki.book.analysis.patterns.pattern import PatternError

    filters = filters_of(args)
    try:
        board = position_of(args)
        pattern = pattern_from_board(board, args.region, args.any, args.swap_colours, args.empty_or_black,
                                     args.empty_or_white, TO_MOVE[args.to_move], args.moves_from, args.moves_to)
    except PatternError as exc:
        print(f"fuseki pattern: {exc}", file=sys.stderr)
        return 2
    location = book_location(args)
    budget = None
    if args.budget is not None:
        from fuseki.book.analysis.patterns.budget import Budget

        budget = Budget(max(args.budget, 0.0))
    result = plain_search(args, filters, location, pattern, budget)
    if result is not None:
        print(result_text(board, result))
        return 0
    from fuseki.book.analysis.patterns.search import search
    from fuseki.book.queries.gamesets import GameSet
    from fuseki.book.storage.store import Book

    book = Book.open(location)
    try:
        games_within = within_options.within_of(args, book, board.size)
        result = search(book, pattern, replace(filters, within=games_within), budget, from_id=max(args.from_id, 0),
                        partial=True)
        if args.save_games:  # the games of this answer: those that matched
            # a search cut short by --budget (or begun at --from) saves the matches of the games it scanned, and says so
            part = "" if result.complete and not result.before else f" ({progress_line(result).split(';')[0]})"
            within_options.save_games(args, book, GameSet(result.match_ids),
                              f"pattern {args.region} of {within_options.asked_text(args)}{part}", "pattern")
        ai = pattern_ai(args, board, result, book) if args.ai else None  # the book's own values first
    finally:
        book.close()
    note = within_options.within_note(args, games_within)
    print(result_text(board, result, ai) + (f"\n{note.lstrip('; ')}" if note else ""))
    return 0


def plain_search(args, filters, location: str, pattern, budget=None):
    """The answer of a search of every game of a SQLite book file read through ``sqlite3`` alone
    (``search.search_file``: no SQLAlchemy, no ``Book``, ~0.1-0.45 s of a start: issue 61, bench/cli.py),
    when nothing asked needs the ``Book`` (no filter, ``--within``, ``--save-games`` or ``--ai``) and
    the book's index can be scanned as it stands; else None, and ``run_pattern`` opens the ``Book``."""
    if (filters.selects_games() or args.within or args.within_moves or args.save_games or args.ai
            or "://" in location):
        return None
    import os

    from fuseki.book.analysis.patterns.search import search_file

    path = os.path.realpath(os.path.expanduser(location))  # as Book.open resolves a path
    if not os.path.isfile(path):
        return None
    return search_file(path, pattern, budget, max(args.from_id, 0), partial=True)
