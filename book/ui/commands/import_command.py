"""``fuseki import``: add the games of SGF files, folders and archives to the book, then leave the
book complete (its pattern index and corner book hold every game: ``complete_book``).

Examples::

    fuseki import games/ tygem-2016-07.tgz --book games.sqlite
    fuseki import --compact --book games.sqlite

The book is ``--book`` (a path or SQLAlchemy URL), else ``$FUSEKI_BOOK``, else
``[book] path`` of configs/fuseki.toml, else ~/.local/share/fuseki/book.sqlite -- the
same book as ``fuseki serve``, ``fuseki shell`` and the engine (``engine.config.book_location``).
"""

from __future__ import annotations

import sys
import time

from fuseki.book.ui.cli_shared import add_book_option, book_location, failed_text, stop_on_signals, stopped_text


def add_command(subparsers) -> None:
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
