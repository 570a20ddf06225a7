"""``fuseki search``: the next moves played from a position, on a text board.

Examples::

    fuseki search --moves "pd dp pp" --year 2010-2016 --player lee
    fuseki search --moves "pd dp" --winner W --won-by resign --min-rank 7d --game-komi 6.5
    fuseki search --sgf game.sgf --move 20

The book is ``--book`` (a path or SQLAlchemy URL), else ``$FUSEKI_BOOK``, else
``[book] path`` of configs/fuseki.toml, else ~/.local/share/fuseki/book.sqlite -- the
same book as ``fuseki serve``, ``fuseki shell`` and the engine (``engine.config.book_location``).
"""

from __future__ import annotations

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
from fuseki.book.ui.reading import filters_note, parse_periods


def add_command(subparsers) -> None:
    p = subparsers.add_parser(
        "search", help="the next moves played from a position, on a text board",
        description="Next moves from a position. Example: fuseki search --moves \"pd dp pp\" --year 2010-2016 "
                    "--winner B --min-rank 7d; within an earlier answer: fuseki search --moves \"Q16 D4\" "
                    "--save-games q16d4.json, then fuseki search --moves \"Q16 D4 R4\" --within q16d4.json")
    add_position_options(p)
    add_filter_options(p)
    p.add_argument("--min-games", type=int, default=1, metavar="N", help="list moves played in N games or more")
    p.add_argument("--verbose", action="store_true", help="also print the position's hash and canonical key")
    p.add_argument("--by-year", action="store_true",
                   help="also the position's games per year (YEAR GAMES SHARE: of that year's games) and each "
                        "next move's first and last year and trend (rising or falling over the last --recent years); "
                        "with --ai, each year's share of games that played a move KataGo's values judge a mistake")
    p.add_argument("--recent", type=int, default=3, metavar="K",
                   help="with --by-year: a trend compares the last K years with the years before (default 3)")
    p.add_argument("--trends", metavar="A-B:C-D",
                   help="also the next moves whose share of the position's games rose or fell most from the "
                        "years A-B to C-D (e.g. 2005-2007:2008-2009)")
    within_options.add_within_options(p)
    add_book_option(p)
    ai_text.add_ai_options(p)
    p.set_defaults(run=run_search)


def run_search(args) -> int:
    from fuseki.book.storage.store import Book
    from fuseki.book.ui.present import textboard, years_text

    filters = filters_of(args, min_games=max(1, args.min_games))
    periods = parse_periods(args.trends) if args.trends else None
    if args.recent < 1:
        raise ValueError("--recent must be at least 1")
    board = position_of(args)
    book = Book.open(book_location(args), readonly=True)
    try:
        games_within = within_options.within_of(args, book, board.size)
        filters = replace(filters, within=games_within)
        found = book.next_moves(board, filters=filters)
        if args.save_games:  # the games of this answer: those that reached the position, filtered
            from fuseki.book.queries.gamesets import position_games

            within_options.save_games(args, book, position_games(book, board, filters=filters),
                              f"position {within_options.asked_text(args)}", "search")
        profile = None
        if args.by_year or periods:  # only then: the years' module is not needed for the moves alone
            from fuseki.book.queries import years as dates

            profile = dates.date_profile(book, board, filters=filters, recent=args.recent)
        # the book's own values first (fuseki ai annotate), then the cache, then KataGo
        if args.ai:  # --by-year judges every move, the table shows the lettered ones
            shown = None if args.by_year else len(textboard.LETTERS)
            # nothing stored and no KataGo: the human statistics, and a line saying why no AI columns
            values, move_values = ai_text.ai_values_for(args, board, found, book, shown, ask_unless_none=True)
    finally:
        book.close()
    note = filters_note(filters)
    note = (f"; {note}" if note else "") + within_options.within_note(args, games_within)
    text = textboard.search_text(board, found, note=note, verbose=args.verbose)
    if args.ai and values is None:
        text += f"\n{ai_text.NO_VALUES}"
    elif args.ai:  # the human table is replaced by one with KataGo's columns beside it
        table = textboard.move_table(found, board.size)
        shown = move_values[: len(textboard.LETTERS)]
        text = (text[: len(text) - len(table)] + ai_text.ai_table(found, values, shown, board.size,
                                                                        textboard.LETTERS, args.pv)
                + "\n" + table.rsplit("\n", 1)[-1])
    if args.by_year:
        text += "\n\n" + years_text.year_text(profile, board.size)
    if args.by_year and args.ai and values is not None:
        from fuseki.book.analysis import mistakes

        visits_min = mistakes.default_visits()
        # a cell without a value (ai_text.NoValue, saying why) is a move the years cannot judge
        by_points = {move.points: None if isinstance(ai, ai_text.NoValue) else ai
                     for move, ai in zip(found.moves, move_values)}
        rows, mistaken = mistakes.years_of_mistakes(profile, [by_points.get(e.move.points) for e in profile.moves],
                                                    visits_min)
        text += "\n\n" + years_text.mistakes_text(rows, mistaken, board.size, visits_min, mistakes.MISTAKE_POINTS)
    if periods:
        text += "\n\n" + years_text.trends_text(profile, *periods, board.size)
    print(text)
    return 0
