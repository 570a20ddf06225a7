"""``fuseki book``: the book's files: ``export`` writes it as a Fuego/Pachi opening book
(``book.formats.fuego``), ``build-builtin`` rebuilds the built-in opening book from the Tygem
archives (``book.builders.statbook``), ``tree`` writes the book from a position as one SGF game
tree, a joseki or fuseki dictionary (``book.analysis.tree``).

Examples::

    fuseki book export --fuego book.dat --min-games 20 --book games.sqlite
    fuseki book build-builtin --from ../shared/data --out book/data/builtin.sqlite
    fuseki book tree --book games.sqlite --moves "Q16 D4" --min-games 50 --depth 8 --out fuseki.sgf
    fuseki book tree --book games.sqlite --corner --min-games 20 --depth 12 --out joseki.sgf

``build-builtin``: the same archives give the same bytes; the book's JSON file is written beside it.
``tree``: each node is a move with its games and win rate (and KataGo's stored values, where the
book or the AI value cache has them) in its comment; its children are the moves ``fuseki search``
lists with ``--min-games N``, most played first, lettered on the board as search letters them.
``--corner`` walks the corner book in the top-right corner of an empty board instead.
"""

from __future__ import annotations

import os
import re
import sys

from fuseki.book.analysis.tree import MAX_NODES
from fuseki.book.formats.fuego import DEFAULT_MIN_GAMES, write_fuego_book
from fuseki.book.ui.cli_shared import (
    CommandError,
    add_book_option,
    add_filter_options,
    book_location,
    filters_of,
    open_book,
)


def add_command(subparsers) -> None:
    p = subparsers.add_parser(
        "book", help="book files: export for other engines, an SGF tree, build the built-in book",
        description="Write the book in other programs' formats or as one SGF game tree; build "
                    "the built-in book.",
        epilog="Example: fuseki book export --fuego book.dat --min-games 20 (fuseki book "
               "SUBCOMMAND --help says more)")
    sub = p.add_subparsers(dest="book_command", metavar="SUBCOMMAND", required=True)
    add_export(sub)
    add_build_builtin(sub)
    add_tree(sub)


def add_export(sub) -> None:
    p = sub.add_parser(
        "export", help="write the book as a Fuego/Pachi opening book (book.dat)",
        description="One line per position ('19 Q4 D16 | C4 D3'), for the moves played in at least "
                    "--min-games games. Example: fuseki book export --fuego book.dat --min-games 20")
    p.add_argument("--fuego", required=True, metavar="FILE", help="the file to write ('-': stdout)")
    p.add_argument("--min-games", type=int, default=DEFAULT_MIN_GAMES, metavar="N",
                   help=f"leave out moves played in fewer games (default {DEFAULT_MIN_GAMES})")
    p.add_argument("--max-moves", type=int, default=None, metavar="N",
                   help="no lines for positions after more than N moves (default: no limit)")
    add_book_option(p)
    p.set_defaults(run=run_export)


def add_build_builtin(sub) -> None:
    from fuseki.book.builders import statbook as statbook_build

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


def add_tree(sub) -> None:
    p = sub.add_parser(
        "tree", help="write the book from a position as one SGF game tree (a joseki/fuseki dictionary)",
        description="Write the book's next moves from a position, move after move, as one SGF game tree "
                    "for Sabaki or any SGF editor: each node's comment gives its games and win rate, its "
                    "variations are the moves played in --min-games games or more, most played first. "
                    "Example: fuseki book tree --book games.sqlite --moves \"Q16 D4\" --min-games 50 "
                    "--depth 8 --out fuseki.sgf")
    p.add_argument("--moves", default="", metavar="MOVES",
                   help="the start: moves from the empty board, Black first (SGF pd or GTP Q16 vertices); "
                        "they are the file's first nodes")
    p.add_argument("--size", type=int, default=19, help="board size (default 19)")
    p.add_argument("--corner", action="store_true",
                   help="the corner book (joseki) from an empty corner instead, drawn in the top-right corner")
    p.add_argument("--min-games", type=int, default=10, metavar="N",
                   help="follow the moves played in N games or more (default 10)")
    p.add_argument("--depth", type=int, default=10, metavar="D", help="moves after the start at most (default 10)")
    p.add_argument("--max-nodes", type=int, default=MAX_NODES, metavar="M",
                   help=f"stop growing the tree at M nodes, and say so (default {MAX_NODES:,})")
    p.add_argument("--out", required=True, metavar="FILE", help="the SGF file to write")
    p.add_argument("--rules", default="japanese", help="rules of the stored KataGo values shown (default japanese)")
    p.add_argument("--komi", type=float, default=6.5, help="komi of the stored KataGo values shown (default 6.5)")
    add_filter_options(p)
    add_book_option(p)
    p.set_defaults(run=run_tree)


def run_export(args) -> int:
    from fuseki.book.storage.store import Book

    if args.min_games < 1:
        raise CommandError("--min-games must be at least 1")
    if args.max_moves is not None and args.max_moves < 0:
        raise CommandError("--max-moves must be at least 0")
    with Book.open(book_location(args), readonly=True) as book:
        if args.fuego == "-":
            count = write_fuego_book(book, sys.stdout, args.min_games, args.max_moves)
        else:
            temp = f"{args.fuego}.tmp{os.getpid()}"
            try:
                with open(temp, "w", encoding="ascii", newline="\n") as out:
                    count = write_fuego_book(book, out, args.min_games, args.max_moves)
                os.replace(temp, args.fuego)  # a reader never sees half a book
            finally:
                if os.path.exists(temp):
                    os.remove(temp)
    print(f"fuseki book export: {count} positions written to {args.fuego}", file=sys.stderr)
    return 0


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


def run_tree(args) -> int:
    from fuseki.book.analysis import tree as book_tree
    from fuseki.book.analysis.ai import AiValueStores
    from fuseki.book.ui.present.textboard import LETTERS, printable
    from fuseki.book.ui.reading import filters_note, parse_moves
    from fuseki.engine.config import ai_cache_path

    if args.min_games < 1 or args.depth < 0 or args.max_nodes < 1:
        raise CommandError("--min-games and --max-nodes must be at least 1, --depth at least 0")
    filters = filters_of(args)
    if args.corner and (args.moves or filters.selects_games()):
        raise CommandError("--corner starts from an empty corner and counts every game: no --moves, --year, "
                           "--player or other filter")
    board = parse_moves(args.moves, args.size)
    location = book_location(args)
    book = open_book(location, readonly=True)
    stores = AiValueStores.open(book, ai_cache_path(), args.rules, args.komi)
    try:
        if args.corner:
            tree = book_tree.walk_corner(book, args.size, args.min_games, args.depth, args.max_nodes,
                                         stores if stores.dbs else None)
            if tree is None:
                raise CommandError(f"the book has no corner book: fuseki corners --book {location} builds it")
        else:
            tree = book_tree.walk(book, board, args.min_games, args.depth, args.max_nodes,
                                  stores if stores.dbs else None, filters)
    finally:
        stores.close()
        book.close()
    what = "the corner book from an empty top-right corner" if args.corner else (
        f"the book after {args.moves}" if args.moves else "the book from the empty board")
    title = [f"fuseki book tree: {what}", f"book {location}",
             f"moves played in >= {args.min_games} games, at most {args.depth} moves deep"]
    if filters.selects_games():
        title.append(filters_note(filters))
    if tree.cut:
        title.append(f"cut at {tree.nodes} nodes (--max-nodes {args.max_nodes})")
    with open(args.out, "w", encoding="utf-8") as handle:
        handle.write(book_tree.sgf_text(tree, LETTERS, title))
    notes = [f"{tree.nodes:,} nodes"]
    if tree.cut:
        notes.append(f"cut by --max-nodes {args.max_nodes:,}: the nodes not followed say so in their comments")
    if tree.illegal:
        notes.append(f"{tree.illegal} book moves illegal on the board left out")
    print(f"fuseki book tree: {printable(args.out)}: {'; '.join(notes)}", file=sys.stderr)
    return 0
