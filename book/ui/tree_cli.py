"""fuseki book tree: the book from a position as one SGF game tree, a joseki or fuseki dictionary.

Examples::

    fuseki book tree --book games.sqlite --moves "Q16 D4" --min-games 50 --depth 8 --out fuseki.sgf
    fuseki book tree --book games.sqlite --corner --min-games 20 --depth 12 --out joseki.sgf

Each node is a move with its games and win rate (and KataGo's stored values, where the book
or the AI value cache has them) in its comment; its children are the moves ``fuseki search``
lists with ``--min-games N``, most played first, lettered on the board as search letters them.
``--corner`` walks the corner book in the top-right corner of an empty board instead
(``book.analysis.tree`` builds and writes the tree).
"""

from __future__ import annotations

import sys

from fuseki.book.analysis.tree import MAX_NODES


def add_commands(subparsers) -> None:
    from fuseki.book.ui.cli_shared import add_book_option, add_filter_options, subcommands

    sub = subcommands(subparsers, "book")
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


def run_tree(args) -> int:
    from fuseki.book.analysis import tree as book_tree
    from fuseki.book.analysis.ai import AiValueStores
    from fuseki.book.ui.cli_shared import CommandError, book_location, filters_of, open_book
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
