"""fuseki ai annotate: KataGo's values of the book's most played positions, kept for later;
fuseki ai copy: stored values from one file into a book's (how the built-in book gets them);
fuseki ai mistakes: the book's popular mistakes according to those values (``book.analysis.mistakes``).

Example::

    fuseki ai annotate --book games.sqlite --min-games 50 --visits 32

asks KataGo (``--katago``, else ``$FUSEKI_KATAGO``, else the settings file's ``[ai] katago``,
else the one ``bash .ci/katago`` installed) for every position at least ``--min-games``
games reached, most played first (``book.analysis.annotate``), ``--threads`` queries in flight (by
default twice KataGo's ``numAnalysisThreads``: enough to keep it busy), and
stores each answer as it arrives: in the book's own ``ai_values`` table for a book of games
(SQLite or PostgreSQL), in the user's AI value cache (``ai_cache_path()``) for the
read-only built-in book or another statistics book.  Positions already stored for the same
network, rules, komi and visits are skipped, so a run stopped by Ctrl-C or killed goes on
where it ended when started again.  Then each human move played in at least ``--moves-share``
of its position's games (default 0.01) that the position's search did not visit, or gave under a
quarter of its visits (``book.analysis.ai.deep_enough``), is asked
with the move forced (``book.analysis.annotate.annotate_moves``) and merged into the position's
values, resumable the same way.  ``--out FILE`` stores everything in a values file of its
own instead (for the built-in book's values computed on a machine with a GPU, then ``fuseki
ai copy FILE --into book/data/builtin.sqlite``).  ``fuseki search --ai`` reads the values
from there.
"""

from __future__ import annotations

import sys
import time

from fuseki.book.ui.cli_shared import CommandError, add_book_option, book_location, open_book
from fuseki.engine.config import ai_cache_path


def add_command(subparsers) -> None:
    p = subparsers.add_parser("ai", help="KataGo's values of the book's positions (annotate, copy, mistakes)",
                              description="KataGo beside the book (docs/katago.md).",
                              epilog="Example: fuseki ai annotate --book games.sqlite --min-games 50 (fuseki ai "
                                     "SUBCOMMAND --help says more)")
    commands = p.add_subparsers(dest="ai_command", metavar="SUBCOMMAND", required=True)
    a = commands.add_parser(
        "annotate", help="store KataGo's values of every position N games or more reached",
        description="Store KataGo's values of the positions at least --min-games games reached, most "
                    "played first, resumable (a re-run skips what is stored). Example: fuseki ai annotate "
                    "--book games.sqlite --min-games 50 --visits 32")
    add_book_option(a)
    a.add_argument("--min-games", type=int, required=True, metavar="N",
                   help="annotate the positions at least N games reached")
    a.add_argument("--limit", type=int, default=None, metavar="P", help="only the P most played of them")
    a.add_argument("--threads", type=int, default=None, metavar="T",
                   help="queries kept in flight at KataGo (default: twice the numAnalysisThreads of its -config, "
                        "so that each analysis thread always finds its next query waiting)")
    a.add_argument("--katago", metavar="CMD", help="KataGo's analysis command (default: $FUSEKI_KATAGO, "
                   "else the one bash .ci/katago installed)")
    a.add_argument("--visits", type=int, default=32, metavar="V", help="KataGo's visits a position (default 32)")
    a.add_argument("--rules", default="japanese", help="rules KataGo judges by (default japanese)")
    a.add_argument("--komi", type=float, default=6.5, help="komi KataGo judges with (default 6.5)")
    a.add_argument("--moves-share", type=float, default=0.01, metavar="S",
                   help="then ask KataGo, with the move forced, for each human move played in at least this share "
                        "of its position's games that the position's search did not visit or gave under a quarter "
                        "of its visits (default 0.01; 0: none)")
    a.add_argument("--out", metavar="FILE", help="store the values in this SQLite file (made if missing) instead of "
                   "the book or the AI value cache: for 'fuseki ai copy FILE --into BOOK' later, e.g. values "
                   "computed on a machine with a GPU for book/data/builtin.sqlite")
    a.set_defaults(run=run_annotate)
    c = commands.add_parser(
        "copy", help="copy stored AI values from a cache file or book into a book's file",
        description="Copy every stored AI value of FROM (an AI value cache file, or a book) into the book "
                    "file or URL INTO, keeping what INTO already holds for the same position and settings "
                    "unless FROM's row goes deeper (more moves evaluated, or as many with more visits: forced "
                    "moves added or searched again since): "
                    "values computed elsewhere (an annotate run on a machine with a GPU, or on the built-in "
                    "book, which writes to the cache) reach a book, the built-in book's file included. "
                    "Example: fuseki ai copy ~/.local/share/fuseki/ai-cache.sqlite --into book/data/builtin.sqlite")
    c.add_argument("source", metavar="FROM", help="an SQLite file (or database URL) holding an ai_values table")
    c.add_argument("--into", required=True, metavar="BOOK", help="the SQLite file or database URL to copy into")
    c.set_defaults(run=run_copy)
    m = commands.add_parser(
        "mistakes", help="the book's popular mistakes, from the stored AI values",
        description="List the moves played in at least 10% of a position's games (positions of at least "
                    "--min-games games) whose stored AI values say they lose at least 1.5 points clear of the "
                    "noise of their visits, from values of at least --visits-min visits: the moves the tables "
                    "mark ? (docs/katago.md, \"The marks\"); most played first, with the better move (the best "
                    "evaluated) and KataGo's line. Reads the values stored in the book and the AI value "
                    "cache (fuseki ai annotate stores them); never asks KataGo. Example: fuseki ai mistakes "
                    "--book games.sqlite --min-games 50 --sgf mistakes.sgf")
    add_book_option(m)
    m.add_argument("--min-games", type=int, default=None, metavar="N",
                   help="only positions at least N games reached (default 20)")
    m.add_argument("--visits-min", type=int, default=None, metavar="V",
                   help="only values of at least V visits (default 100: fewer are noise)")
    m.add_argument("--rules", default="japanese", help="the rules of the values read (default japanese)")
    m.add_argument("--komi", type=float, default=6.5, help="the komi of the values read (default 6.5)")
    m.add_argument("--limit", type=int, default=None, metavar="K", help="list only the K most played")
    m.add_argument("--sgf", metavar="FILE", help="also write them as one SGF file, a variation per mistake")
    m.set_defaults(run=run_mistakes)


def run_copy(args) -> int:
    """Exit code 0; 1 when FROM has no stored values or a file is missing."""
    import os

    from sqlalchemy import create_engine, inspect

    from fuseki.book.queries import ai_values

    def engine(location: str):
        if "://" in location:
            return create_engine(location)
        if not os.path.isfile(location):
            raise CommandError(f"{location}: no such file")
        return create_engine(f"sqlite:///{location}")

    source, target = engine(args.source), engine(args.into)
    try:
        if not inspect(source).has_table("ai_values"):
            raise CommandError(f"{args.source}: no stored AI values (no ai_values table)")
        with source.connect() as read, target.begin() as write:
            rows, added = ai_values.copy(read, write)
    finally:
        source.dispose()
        target.dispose()
    print(f"fuseki ai copy: {rows:,} positions' values read from {args.source}, {added:,} added to {args.into} "
          f"({rows - added:,} were there: each kept, or replaced where FROM's row goes deeper)", file=sys.stderr)
    return 0


def run_annotate(args) -> int:
    """Exit code 0; 1 when KataGo is missing or fails; 130 (143) when stopped by Ctrl-C (SIGTERM)."""
    from sqlalchemy import create_engine

    from fuseki.book.analysis import annotate
    from fuseki.book.analysis.ai import AiJudge
    from fuseki.book.analysis.katago import KataGo, KataGoError, answer_timeout, network_name
    from fuseki.book.analysis.katago_config import batch_command, queries_to_keep_in_flight
    from fuseki.book.analysis.pipeline.progress import Steps
    from fuseki.book.storage.store import Book
    from fuseki.book.ui.cli_shared import stop_on_signals
    from fuseki.engine import config

    if min(1 if args.threads is None else args.threads, args.visits, 1 if args.limit is None else args.limit) < 1:
        raise CommandError("--threads, --visits and --limit must be at least 1")
    if not 0.0 <= args.moves_share <= 1.0:
        raise CommandError(f"--moves-share {args.moves_share:g}: a share of the games, from 0 to 1")
    command = batch_command(args.katago or annotate_command(config))  # many positions: one thread each
    threads = args.threads or queries_to_keep_in_flight(command)
    location = book_location(args)
    Book.open(location, readonly=True).close()  # a missing book is an error, not a new empty one
    book = Book.open(location)  # a statistics book opens read-only whatever is asked
    cache = None
    try:
        if args.out:
            cache = create_engine(f"sqlite:///{args.out}")
            store, writing, where = cache, cache.begin, f"the values file {args.out}"
        elif not book.readonly:  # a book of games keeps its values itself
            store, writing, where = book.db, book.writing, f"the book {location}"
        else:
            path = ai_cache_path()
            path.parent.mkdir(parents=True, exist_ok=True)
            cache = create_engine(f"sqlite:///{path}")
            store, writing, where = cache, cache.begin, f"the AI value cache {path}"
        judge = AiJudge(store, None, args.rules, args.komi, args.visits, network=network_name(command))
        every = annotate.popular_positions(book, args.min_games)
        positions = every[: args.limit] if args.limit else every
        with store.connect() as conn:
            left = len([p for p in positions if p.key not in annotate.cached_keys(conn, judge.settings)])
        say(f"{len(positions):,} positions of {args.min_games}+ games; {len(positions) - left:,} already "
            f"stored in {where}, {left:,} to ask KataGo ({judge.settings.network or 'its network'}, "
            f"{args.visits} visit(s))")
        finder = annotate.BoardFinder(book, [p.key for p in positions], annotate.walk_through(every, positions))
        if not left and not (args.moves_share and annotate.moves_wanted(judge, positions, finder, args.moves_share)):
            return 0
        started = time.perf_counter()
        reached = finder.prepare()
        if reached is not None:
            skipped = f" (the {len(positions) - reached:,} others are skipped)" if reached < len(positions) else ""
            say(f"{reached:,} of the {len(positions):,} positions reached from the empty board through positions "
                f"of {args.min_games}+ games in {time.perf_counter() - started:.1f} s{skipped}")
        steps, forced = None, None
        started = time.perf_counter()
        with stop_on_signals() as stop:
            try:
                with KataGo(command, timeout=answer_timeout(args.visits)) as katago:
                    say(f"KataGo ready in {time.perf_counter() - started:.1f} s")
                    steps = Steps("annotate", left, unit="positions", digits=2) if left else None  # clock starts now
                    judge.katago = katago
                    report = annotate.annotate(judge, positions, finder, writing, threads=threads,
                                               stop=stop, progress=lambda r: steps.update(r.done), warn=say,
                                               timeout=answer_timeout(args.visits))
                    if steps is not None:
                        steps.close()
                        steps = None
                    if args.moves_share and not report.stopped:
                        forced = forced_moves(judge, positions, finder, writing, args, stop, threads)
            except KataGoError as exc:
                raise CommandError(str(exc)) from None
            except KeyboardInterrupt:  # a second Ctrl-C: stopped where it was, the answer being stored rolled back
                report = annotate.AnnotateReport(total=len(positions), stopped=True)
                with store.connect() as conn:
                    report.cached = len([p for p in positions if p.key in annotate.cached_keys(conn, judge.settings)])
            finally:
                if steps is not None:
                    steps.close()
        rate = report.done / report.seconds if report.seconds else 0.0
        summary = (f"{report.done:,} positions asked in {report.seconds:.1f} s ({rate:.2f} positions/s); "
                   f"{report.stored():,} of {report.total:,} stored in {where}")
        if report.missing or report.refused:
            summary += (f"; {report.missing:,} without a board found (reached only through positions of "
                        f"fewer games), {report.refused:,} refused by KataGo")
        if forced is not None:
            summary += (f"; then {forced.done:,} of {forced.wanted:,} human moves of {args.moves_share * 100:g}%+ "
                        f"of their position's games asked with the move forced in {forced.seconds:.1f} s"
                        + (f" ({forced.refused:,} refused)" if forced.refused else ""))
        if report.stopped or (forced is not None and forced.stopped):
            import signal

            signum = stop.signum or signal.SIGINT
            say(f"stopped by {signal.Signals(signum).name}; {report.stored():,} positions cached, re-run to go on "
                f"({summary})")
            return 128 + signum
        say(summary)
        return 0
    finally:
        book.close()
        if cache is not None:
            cache.dispose()


def forced_moves(judge, positions, finder, writing, args, stop, threads: int):
    """``annotate``'s second pass (``book.analysis.annotate.annotate_moves``) with its progress line."""
    from fuseki.book.analysis import annotate
    from fuseki.book.analysis.ai import deep_enough
    from fuseki.book.analysis.katago import answer_timeout
    from fuseki.book.analysis.pipeline.progress import Steps

    wanted = annotate.moves_wanted(judge, positions, finder, args.moves_share)
    say(f"{len(wanted):,} human moves of {args.moves_share * 100:g}%+ of their position's games that its search "
        f"did not visit or gave under {deep_enough(args.visits)} visits: asking KataGo with each forced "
        f"({args.visits} visit(s))")
    if not wanted:
        return annotate.MovesReport()
    steps = Steps("forced moves", len(wanted), unit="moves", digits=2)
    try:
        return annotate.annotate_moves(judge, wanted, writing, threads=threads, stop=stop,
                                       progress=lambda r: steps.update(r.done), warn=say,
                                       timeout=answer_timeout(args.visits))
    finally:
        steps.close()


def annotate_command(config) -> str:
    from fuseki.book.analysis.katago import find_command

    command = find_command(config.load().katago)
    if not command:
        raise CommandError("no KataGo: name one with --katago or $FUSEKI_KATAGO, or run `bash .ci/katago` "
                           "(docs/katago.md)")
    return command


def say(text: str) -> None:
    print(f"fuseki ai annotate: {text}", file=sys.stderr, flush=True)


def run_mistakes(args) -> int:
    """Exit code 0 (also when there are none); 1 for a bad option or a book that cannot be read."""
    from fuseki.book.analysis import mistakes
    from fuseki.book.analysis.ai import AiValueStores

    min_games = mistakes.MIN_GAMES if args.min_games is None else args.min_games
    visits_min = mistakes.default_visits() if args.visits_min is None else args.visits_min
    if min_games < 1 or visits_min < 1 or (args.limit is not None and args.limit < 1):
        raise CommandError("--min-games, --visits-min and --limit must be at least 1")
    if args.komi * 2 != int(args.komi * 2):
        raise CommandError(f"--komi {args.komi:g}: values are stored for whole or half komi only")
    location = book_location(args)
    book = open_book(location, readonly=True)
    try:
        stores = AiValueStores.open(book, ai_cache_path(), args.rules, args.komi)
        try:
            if not stores.dbs:
                raise CommandError(f"no stored AI values in {location} or {ai_cache_path()} "
                                   "(fuseki ai annotate --book B stores them)")
            found, scan = mistakes.find(book, stores, min_games, visits_min)
        finally:
            stores.close()
    finally:
        book.close()
    shown = found[: args.limit] if args.limit else found
    for number, m in enumerate(shown, 1):
        print(mistake_text(number, m))
    missing = f" ({scan.missing:,} of them with no board found)" if scan.missing else ""
    print(f"fuseki ai mistakes: {len(found):,} popular mistakes (moves in >= {mistakes.POPULAR_SHARE:.0%} of a "
          f"position's games losing >= {mistakes.MISTAKE_POINTS:g} points clear of the noise, at >= {visits_min} "
          f"visits: the tables' ? marks) in "
          f"{scan.positions:,} positions of {min_games}+ games with values for {args.rules} rules, komi "
          f"{args.komi:g}{missing}", file=sys.stderr)
    if args.sgf:
        with open(args.sgf, "w", encoding="utf-8") as out:
            out.write(mistakes.sgf_text(shown, args.komi))
        print(f"fuseki ai mistakes: {len(shown):,} variations written to {args.sgf}", file=sys.stderr)
    return 0


def mistake_text(number: int, m) -> str:
    """Two lines: where and what (games, share, loss, visits), then the better move and its line."""
    from fuseki.book.analysis.mistakes import vertices
    from fuseki.engine.core.base import COLOUR_LETTER

    size = m.board.size
    who = COLOUR_LETTER[m.to_move]
    moves = [p for _, p in m.board.moves]
    where = f"after {vertices(moves, size)}" if moves else "the empty board"
    if moves and len(moves) != len(m.board.stones(1)) + len(m.board.stones(2)):
        where += " (with setup stones)"
    return (f"{number:3}. {where}, {who} to play, {m.total} games: {vertices([m.point], size)} in {m.games} "
            f"({m.share:.0%}) loses {m.loss:.1f} points ({m.visits} visits)\n"
            f"     better {vertices([m.better], size)} (loss {m.better_loss:.1f}, {m.better_visits} visits): "
            f"{vertices(m.better_line, size)}")
