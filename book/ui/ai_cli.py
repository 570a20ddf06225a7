"""fuseki ai annotate: KataGo's values of the book's most played positions, kept for later;
fuseki ai copy: stored values from one file into a book's (how the built-in book gets them).

Example::

    fuseki ai annotate --book games.sqlite --min-games 50 --visits 32

asks KataGo (``--katago``, else ``$FUSEKI_KATAGO``, else the settings file's ``[ai] katago``,
else the one ``bash .ci/katago`` installed) for every position at least ``--min-games``
games reached, most played first (``book.annotate``), ``--threads`` queries in flight (by
default twice KataGo's ``numAnalysisThreads``: enough to keep it busy), and
stores each answer as it arrives: in the book's own ``ai_values`` table for a book of games
(SQLite or PostgreSQL), in the user's AI value cache (``ai_text.cache_path()``) for the
read-only built-in book or another statistics book.  Positions already stored for the same
network, rules, komi and visits are skipped, so a run stopped by Ctrl-C or killed goes on
where it ended when started again.  ``fuseki search --ai`` reads the values from there.
"""

from __future__ import annotations

import sys
import time

from fuseki.book.ui import ai_text
from fuseki.book.ui.cli_shared import CommandError, add_book_option, book_location


def add_commands(subparsers) -> None:
    p = subparsers.add_parser("ai", help="KataGo's values of the book's positions (annotate, copy)",
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
    a.set_defaults(run=run_annotate)
    c = commands.add_parser(
        "copy", help="copy stored AI values from a cache file or book into a book's file",
        description="Copy every stored AI value of FROM (an AI value cache file, or a book) into the book "
                    "file or URL INTO, keeping what INTO already holds for the same position and settings: "
                    "values computed elsewhere (an annotate run on a machine with a GPU, or on the built-in "
                    "book, which writes to the cache) reach a book, the built-in book's file included. "
                    "Example: fuseki ai copy ~/.local/share/fuseki/ai-cache.sqlite --into book/data/builtin.sqlite")
    c.add_argument("source", metavar="FROM", help="an SQLite file (or database URL) holding an ai_values table")
    c.add_argument("--into", required=True, metavar="BOOK", help="the SQLite file or database URL to copy into")
    c.set_defaults(run=run_copy)


def run_copy(args) -> int:
    """Exit code 0; 1 when FROM has no stored values or a file is missing."""
    import os

    from sqlalchemy import create_engine, inspect

    from fuseki.book.storage import ai_values

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
          f"({rows - added:,} were there)", file=sys.stderr)
    return 0


def run_annotate(args) -> int:
    """Exit code 0; 1 when KataGo is missing or fails; 130 (143) when stopped by Ctrl-C (SIGTERM)."""
    from sqlalchemy import create_engine

    from fuseki.book import annotate
    from fuseki.book.ai import AiJudge
    from fuseki.book.pipeline.progress import Steps
    from fuseki.book.storage.store import Book
    from fuseki.book.ui.book_cli import stop_on_signals
    from fuseki.engine import config
    from fuseki.engine.players.katago import (
        KataGo,
        KataGoError,
        answer_timeout,
        batch_command,
        network_name,
        queries_to_keep_in_flight,
    )

    if min(1 if args.threads is None else args.threads, args.visits, 1 if args.limit is None else args.limit) < 1:
        raise CommandError("--threads, --visits and --limit must be at least 1")
    command = batch_command(args.katago or annotate_command(config))  # many positions: one thread each
    threads = args.threads or queries_to_keep_in_flight(command)
    location = book_location(args)
    book = Book.open(location, readonly=True)  # a missing book is an error, not a new empty one
    if book.statistics is None:
        book.close()
        book = Book.open(location)
    cache = None
    try:
        if book.statistics is None:
            store, writing, where = book.db, book.writing, f"the book {location}"
        else:
            path = ai_text.cache_path()
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
        if not left:
            return 0
        finder = annotate.BoardFinder(book, [p.key for p in positions], annotate.walk_through(every, positions))
        started = time.perf_counter()
        reached = finder.prepare()
        if reached is not None:
            skipped = f" (the {len(positions) - reached:,} others are skipped)" if reached < len(positions) else ""
            say(f"{reached:,} of the {len(positions):,} positions reached from the empty board through positions "
                f"of {args.min_games}+ games in {time.perf_counter() - started:.1f} s{skipped}")
        steps = None
        started = time.perf_counter()
        with stop_on_signals() as stop:
            try:
                with KataGo(command, timeout=answer_timeout(args.visits)) as katago:
                    say(f"KataGo ready in {time.perf_counter() - started:.1f} s")
                    steps = Steps("annotate", left, unit="positions", digits=2)  # its clock starts now
                    judge.katago = katago
                    report = annotate.annotate(judge, positions, finder, writing, threads=threads,
                                               stop=stop, progress=lambda r: steps.update(r.done), warn=say,
                                               timeout=answer_timeout(args.visits))
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
        if report.stopped:
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


def annotate_command(config) -> str:
    from fuseki.engine.players.katago import find_command

    command = find_command(config.load().katago)
    if not command:
        raise CommandError("no KataGo: name one with --katago or $FUSEKI_KATAGO, or run `bash .ci/katago` "
                           "(docs/katago.md)")
    return command


def say(text: str) -> None:
    print(f"fuseki ai annotate: {text}", file=sys.stderr, flush=True)
