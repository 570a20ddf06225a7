"""fuseki import | search | stats: build the book from game records and query it.

Examples::

    fuseki import games/ tygem-2016-07.tgz --book games.sqlite
    fuseki search --moves "pd dp pp" --year 2010-2016 --player lee
    fuseki search --moves "pd dp" --winner W --won-by resign --min-rank 7d --game-komi 6.5
    fuseki search --sgf game.sgf --move 20
    fuseki stats --book postgresql://user@host/fuseki

The book is ``--book`` (a path or SQLAlchemy URL), else ``$FUSEKI_BOOK``, else
``[book] path`` of configs/fuseki.toml, else ~/.local/share/fuseki/book.sqlite -- the
same book as ``fuseki serve``, ``fuseki shell`` and the engine (``engine.config.book_location``).
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace

from fuseki.book.ui import within
from fuseki.book.ui.cli_shared import (
    add_book_option,
    add_filter_options,
    add_position_options,
    book_location,
    failed_text,
    filters_of,
    position_of,
    stop_on_signals,
    stopped_text,
)
from fuseki.book.ui.present import ai_text
from fuseki.book.ui.reading import filters_note, parse_periods


def add_commands(subparsers) -> None:
    p = subparsers.add_parser(
        "import", help="add the games of SGF files, folders and archives to the book",
        description="Add games to the book (re-importing adds nothing); the book's pattern index and "
                    "corner book are brought up to date with them. "
                    "Example: fuseki import games/ tygem.tgz --book games.sqlite")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="SGF files, folders, .tgz/.tar/.zip archives (none with --compact: compact only)")
    add_book_option(p)
    p.add_argument("--compact", action="store_true",
                   help="afterwards, merge the positions into one table and rewrite the file packed "
                        "(seldom needed: an import's own tables are packed as written; it helps a "
                        "book grown by many imports; it copies the file once)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="processes that parse, replay and write the positions (default: one per core, "
                        "up to 8, 3 for a book in memory; 0: none, all in this process)")
    p.add_argument("--report", metavar="FILE",
                   help="write every skipped file and every anomaly to FILE, one JSON object a line "
                        "(path, member, game, move, reason, kind), as the import goes")
    p.set_defaults(run=run_import)

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
    within.add_within_options(p)
    add_book_option(p)
    ai_text.add_ai_options(p)
    p.set_defaults(run=run_search)

    p = subparsers.add_parser("stats", help="games, positions, sizes, years and file size of the book",
                              description="What the book holds. Example: fuseki stats --book games.sqlite")
    add_book_option(p)
    p.set_defaults(run=run_stats)


def run_import(args) -> int:
    """Exit code 0; 130 or 143 if stopped by SIGINT (Ctrl-C) or SIGTERM, after the batch
    being written (the summary says what was committed; the same import again adds the rest).
    With ``--report FILE``, FILE lists every skipped file and anomaly, however the import ended.
    """
    from fuseki.book.ui.present.textboard import printable  # file and member names are anyone's text

    if not args.paths and not args.compact:
        print("fuseki import: give the SGF files, folders or archives to import (or --compact alone)",
              file=sys.stderr)
        return 2
    listing = None
    if args.report and args.paths:
        try:  # before the book: a report that cannot be written stops nothing half done
            listing = open(args.report, "w", encoding="utf-8")  # noqa: SIM115 - closed below
        except OSError as exc:
            print(f"fuseki import: cannot write the report {printable(args.report)}: {exc.strerror or exc}",
                  file=sys.stderr)
            return 2
    try:
        return _import(args, listing)
    finally:
        if listing is not None:
            listing.close()


def _import(args, listing) -> int:
    """run_import's work, ``listing`` (an open file, or None) receiving the report's notes."""
    from fuseki.book.analysis.pipeline import importer
    from fuseki.book.analysis.pipeline.progress import Progress
    from fuseki.book.analysis.pipeline.report import ImportReport
    from fuseki.book.analysis.pipeline.workers import StageFailed
    from fuseki.book.storage.store import Book
    from fuseki.book.ui.present.textboard import printable

    book = Book.open(book_location(args))
    try:
        if args.paths:
            report = ImportReport(listing=None if listing is None else (args.report, listing))
            with stop_on_signals() as stop:
                try:
                    importer.import_paths(book, args.paths, workers=args.workers, stop=stop, report=report,
                                          progress=Progress(sys.stderr, escape=printable))
                except StageFailed as exc:  # a process of the import died: one line, not a traceback
                    print(f"fuseki import: {printable(failed_text(exc, report))}", file=sys.stderr)
                    return 1
            if report.stopped:
                print(f"fuseki import: {printable(stopped_text(stop, report))}", file=sys.stderr)
                return 128 + stop.signum if stop.signum else 1
            print(f"fuseki import: {printable(str(report))}", file=sys.stderr)
            complete_book(book)
        if args.compact:
            start = time.perf_counter()
            book.compact()
            print(f"fuseki import: compacted in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    finally:
        book.close()
    return 0


def complete_book(book) -> None:
    """Leave the book complete after an import: its pattern index and its corner book hold every game.

    The import's batches wrote the pattern index with their games; ``index.update`` adds only
    the games an older import left without (it replays their stored SGF, once).  The corner
    book is then built from the index (``corner_build.update``, the table ``fuseki corners``
    builds: a numba pass over every game's events, with its own progress line where it is long),
    so the engine plays joseki from the new games, and a server or engine that opens the book
    read-only answers from them, right after the import.  The rows of busy positions are stored
    as one blob each (``book.storage.busy_rows``).
    """
    from fuseki.book.analysis.patterns import corner_build, index, index_map
    from fuseki.book.storage import busy_rows

    busy_rows.store(book)  # a busy position's games and filters read one blob, not a row per game
    indexed = index.update(book, progress=sys.stderr)
    if indexed:
        print(f"fuseki import: pattern index: {indexed:,} games of earlier imports indexed", file=sys.stderr)
    index_map.refresh(book)  # games index.update replayed: into the files (book.analysis.patterns.index_map)
    corner_build.update(book, progress=sys.stderr)  # its progress, then "corner book: N continuations in S s"


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
        games_within = within.within_of(args, book, board.size)
        filters = replace(filters, within=games_within)
        found = book.next_moves(board, filters=filters)
        if args.save_games:  # the games of this answer: those that reached the position, filtered
            from fuseki.book.queries.gamesets import position_games

            within.save_games(args, book, position_games(book, board, filters=filters),
                              f"position {within.asked_text(args)}", "search")
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
    note = (f"; {note}" if note else "") + within.within_note(args, games_within)
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


def run_stats(args) -> int:
    from fuseki.book.storage.store import Book

    location = book_location(args)
    book = Book.open(location, readonly=True)
    try:
        stats = book.stats()
    finally:
        book.close()
    sizes = ", ".join(f"{size}x{size}: {count:,}" for size, count in sorted(stats.sizes.items())) or "none"
    years = f"{stats.years[0]}-{stats.years[1]}" if stats.years else "unknown"
    print(f"book       {location}")
    print(f"games      {stats.games:,}")
    print(f"positions  {stats.positions:,}")
    print(f"sizes      {sizes}")
    print(f"years      {years}")
    if stats.file_bytes is not None:
        per_game = f" ({stats.file_bytes / stats.games:,.0f} bytes a game)" if stats.games else ""
        print(f"file size  {stats.file_bytes / 1e6:,.1f} MB{per_game}")
    return 0
