"""fuseki book build-builtin: rebuild the built-in opening book from the Tygem archives.

Example::

    fuseki book build-builtin --from ../shared/data --out book/data/builtin.sqlite

The same archives give the same bytes (``book.builders.statbook``); the book's JSON
file is written beside it.
"""

from __future__ import annotations

import os
import re
import sys


def add_commands(subparsers) -> None:
    from fuseki.book.builders import statbook as statbook_build
    from fuseki.book.ui.cli_shared import subcommands

    sub = subcommands(subparsers, "book")
    p = sub.add_parser(
        "build-builtin", help="build the built-in opening book from the Tygem archives",
        description="Import the Tygem archives into a temporary book, keep the positions reached by "
                    "--min-games games or more, and write their next-move statistics. Example: "
                    "fuseki book build-builtin --from ../shared/data --out book/data/builtin.sqlite")
    p.add_argument("--from", dest="data", required=True, metavar="DIR",
                   help=f"the data folder holding {' and '.join(statbook_build.SOURCES)}")
    p.add_argument("--out", required=True, metavar="FILE", help="the statistics book to write")
    p.add_argument("--min-games", type=int, default=statbook_build.MIN_GAMES, metavar="N",
                   help=f"keep positions reached by N games or more (default {statbook_build.MIN_GAMES})")
    p.add_argument("--hold-out", default=statbook_build.HELD_OUT, metavar="ARCHIVE",
                   help=f"the archive left out, to measure the book on (default {statbook_build.HELD_OUT}; "
                        "'none': none)")
    p.add_argument("--work", default=None, metavar="DIR",
                   help="where the temporary book of games goes (about 2 GB; default: the temporary folder)")
    p.add_argument("--corner-min-games", type=int, default=statbook_build.CORNER_MIN_GAMES, metavar="N",
                   help="keep the corner book's continuations played N times or more "
                        f"(default {statbook_build.CORNER_MIN_GAMES}; 0: no corner book)")
    p.add_argument("--workers", type=int, default=None, metavar="N", help="parser processes (as fuseki import)")
    p.set_defaults(run=run_build)


def describe(paths: list[str]) -> str:
    """``Tygem 2005-11 to 2009-11 and 2016-07`` from archive names ``tygem-YYYY-MM.tgz``."""
    names = (re.search(r"(\d{4})-(\d{2})\.", os.path.basename(p)) for p in paths)
    months = sorted({(int(m[1]), int(m[2])) for m in names if m})
    runs: list[list[tuple[int, int]]] = []
    for year, month in months:
        if runs and (year * 12 + month) - (runs[-1][-1][0] * 12 + runs[-1][-1][1]) == 1:
            runs[-1].append((year, month))
        else:
            runs.append([(year, month)])
    text = [f"{r[0][0]}-{r[0][1]:02d}" + (f" to {r[-1][0]}-{r[-1][1]:02d}" if len(r) > 1 else "") for r in runs]
    return "Tygem " + " and ".join(text) if text else "Tygem"


def run_build(args) -> int:
    import time

    from fuseki.book.analysis.pipeline.progress import Progress
    from fuseki.book.builders import statbook as statbook_build
    from fuseki.book.ui.cli_shared import CommandError
    from fuseki.book.ui.present.textboard import printable

    if args.min_games < 1:
        raise CommandError("--min-games must be at least 1")
    held_out = None if args.hold_out.lower() == "none" else args.hold_out
    paths = statbook_build.corpus(args.data, held_out)
    start = time.perf_counter()
    report = statbook_build.build(paths, args.out, args.min_games, description=describe(paths), work=args.work,
                              workers=args.workers, progress=Progress(sys.stderr, escape=printable),
                              corner_min_games=args.corner_min_games or None)
    print(f"fuseki book build-builtin: import: {report.import_text}", file=sys.stderr)
    print(f"fuseki book build-builtin: {args.out}: {report} "
          f"(positions reached by >= {args.min_games} games), {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return 0
