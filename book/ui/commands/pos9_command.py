"""``fuseki pos9 ...``: view, count, merge, export and score the 9x9 research files.

A thin layer over ``book.formats.pos9``: each command reads with the library, prints,
and lets ``RecordError`` (a ValueError) reach ``book.ui.fuseki_command.main``, which prints
it as one line and exits 1 -- after the good records before it were printed.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from fuseki.book.ui.cli_shared import CommandError

if TYPE_CHECKING:
    import numpy as np

# The file formats (and numpy) are imported by the command that runs, not here: every
# ``fuseki ... --help`` builds the parser, which imports this module.

VIEW_BLOCK_BYTES = 64 << 10  # small blocks, so the first board prints at once


def add_command(subparsers) -> None:
    parser = subparsers.add_parser("pos9", help="9x9 research files: positions, scores, Zobrist table",
                                   description=__doc__.splitlines()[0],
                                   epilog="Example: fuseki pos9 view positions.dat | less (fuseki pos9 "
                                          "SUBCOMMAND --help says more)")
    sub = parser.add_subparsers(dest="pos9_command", metavar="SUBCOMMAND", required=True)

    p = sub.add_parser("view", help="print each position as a 9x9 board",
                       description="Print each record with its hash, player to move and board. "
                                   "Example: fuseki pos9 view positions.dat | less")
    p.add_argument("file")
    p.add_argument("--table", help="zobrist_board_81.dat used to check the hashes (default: the project's)")
    p.set_defaults(run=run_view)

    p = sub.add_parser("histogram", help="count positions by number of stones",
                       description="Example: fuseki pos9 histogram positions.dat")
    p.add_argument("file")
    p.set_defaults(run=run_histogram)

    p = sub.add_parser("merge", help="join position files, dropping repeated PositionIDs",
                       description="Keep the first record of each PositionID, in argument order. "
                                   "Example: fuseki pos9 merge all.dat a.dat b.dat")
    p.add_argument("out")
    p.add_argument("inputs", nargs="+", metavar="in")
    p.set_defaults(run=run_merge)

    p = sub.add_parser("export", help="write the 9x9 positions of the book or of SGF files as a position file",
                       description="One record per position before each main-line move; extra info is "
                                   "(source id, 0, move number); prints which source id is which game "
                                   "(with --book the source id is the book's game id). "
                                   "Example: fuseki pos9 export games.dat game1.sgf game2.sgf, or "
                                   "fuseki pos9 export book9.dat --book book.sqlite")
    p.add_argument("out")
    p.add_argument("sgf", nargs="*")
    p.add_argument("--book", metavar="URL", help="export the 9x9 games of this book instead of SGF files")
    p.add_argument("--plain", action="store_true",
                   help="write the plain hash, not the rotation-normalised one")
    p.add_argument("--table", help="zobrist_board_81.dat to hash with (default: the project's)")
    p.set_defaults(run=run_export)

    p = sub.add_parser("scores", help="print a scored position file",
                       description="Example: fuseki pos9 scores fuego_chinese.dat")
    p.add_argument("file")
    p.set_defaults(run=run_scores)

    p = sub.add_parser("table", help="write a zobrist_board_81.dat table file",
                       description="Without --seed, the project's table; with it, SplitMix64 from SEED. "
                                   "Example: fuseki pos9 table zobrist_board_81.dat --seed 0x1234")
    p.add_argument("out")
    p.add_argument("--seed", type=lambda text: int(text, 0), help="seed (decimal or 0x hex)")
    p.set_defaults(run=run_table)


def run_view(args) -> int:
    from fuseki.book.formats import pos9
    from fuseki.engine.core.base import COLOUR_NAME, parse_color

    table = pos9.read_table(args.table) if args.table else pos9.default_table()
    out = sys.stdout
    for block in pos9.iter_positions(args.file, VIEW_BLOCK_BYTES):
        plain = table.hashes(block.board)
        normal, sym = table.normalised_hashes(block.board)
        stones = block.stones()
        for i in range(len(block)):
            h, to_move, board, extra = block.record(i)
            if h == normal[i]:
                check = f"normalised, symmetry {sym[i]}"
            else:
                check = "plain, not normalised" if h == plain[i] else "does not match the board"
            where = f"source {extra[0]} variation {extra[1]} move {extra[2]}" if extra else "no extra info"
            out.write(f"record {block.first_record + i} at byte {block.offset[i]}: hash {h:016x} ({check})\n"
                      f"{COLOUR_NAME[parse_color(to_move)]} to move, {stones[i]} stones, {where}\n"
                      f"{render(board)}\n")
    return 0


def render(board: str) -> str:
    """A 9x9 record's board as text: the file's own ``#`` and ``O`` (81 characters, row by row
    from the top), drawn by ``Board.diagram`` as marks on an empty board (a record need not be
    a legal position)."""
    from fuseki.engine.core import base
    from fuseki.engine.core.board import Board

    stones = {base.xy_to_point(i % 9, i // 9, 9): char for i, char in enumerate(board) if char != "."}
    return "\n".join(Board(9).diagram(marks=stones)) + "\n"


def run_histogram(args) -> int:
    import numpy as np

    from fuseki.book.formats import pos9

    counts = np.zeros(pos9.POINTS + 1, np.int64)
    try:
        for block in pos9.iter_positions(args.file):
            counts += np.bincount(block.stones(), minlength=pos9.POINTS + 1)
    except pos9.RecordError:  # the histogram of the good records, then the error
        _print_histogram(counts)
        raise
    _print_histogram(counts)
    return 0


def _print_histogram(counts: np.ndarray) -> None:
    import numpy as np

    present = np.flatnonzero(counts)
    print("stones  positions")
    if len(present):
        for stones in range(present[0], present[-1] + 1):
            print(f"{stones:6}  {counts[stones]:9}")
    print(f"total   {counts.sum():9}")


def run_merge(args) -> int:
    from fuseki.book.formats import pos9

    written, dropped, errors = pos9.merge_files(args.out, args.inputs)
    print(f"{args.out}: {written} positions written, {dropped} repeated PositionIDs dropped")
    for exc in errors:
        print(f"fuseki pos9 merge: {exc.path}: {exc} (its records before this were merged)", file=sys.stderr)
    return 1 if errors else 0


def run_export(args) -> int:
    from fuseki.book.formats import pos9

    if bool(args.book) == bool(args.sgf):
        raise CommandError("give SGF files or --book URL (one of the two)")
    table = pos9.read_table(args.table) if args.table else pos9.default_table()
    total, games, failed, sizes = 0, 0, 0, Counter()
    with open(args.out, "wb") as out:
        for source, name, game in _export_games(args):
            if game is None:
                failed += 1
                continue
            if game.size != pos9.SIZE:
                sizes[game.size] += 1
                continue
            block, note = pos9.game_positions(game.size, game.setup, game.moves, source, table,
                                              normalise=not args.plain)
            out.write(block.to_bytes())
            total += len(block)
            games += 1
            print(f"{source}\t{name}\t{len(block)} positions" + (f"\t{note}" if note else ""))
    skipped = ", ".join(f"{count} {size}x{size}" for size, count in sorted(sizes.items()))
    print(f"{args.out}: {total} positions from {games} games" + (f"; skipped {skipped}" if skipped else ""))
    if failed:
        raise CommandError(f"{failed} of {len(args.sgf)} files could not be read")
    return 0


def _export_games(args):
    """(source id, name, GameRecord or None if unreadable) for each game to export."""
    from fuseki.book.formats import pos9

    if args.book:
        from fuseki.book.storage.store import Book  # the book's source id is its game id, so files and book agree

        with Book.open(args.book, readonly=True) as book:
            for game_id in book.game_ids(pos9.SIZE):
                game = book.game(game_id)
                yield game_id, game.source, game
        return
    from fuseki.book.formats.sgf_reader import SgfError, read_games  # sgfmill: only this command needs it

    source = 0
    for path in args.sgf:
        try:
            games = read_games(Path(path).read_bytes(), path)
        except (OSError, SgfError) as exc:
            print(f"fuseki pos9 export: {exc}", file=sys.stderr)
            yield 0, path, None
            continue
        for n, game in enumerate(games, start=1):
            if game.size == pos9.SIZE:
                source += 1
            yield source, (path if len(games) == 1 else f"{path} game {n}"), game


def run_scores(args) -> int:
    from fuseki.book.formats import pos9_scores

    print("hash              to_move  score  confidence")
    for block in pos9_scores.iter_scores(args.file):
        for h, to_move, score, confidence in zip(block.hash, block.to_move, block.score, block.confidence):
            shown = {pos9_scores.SCORE_MIN: f"<={score}", pos9_scores.SCORE_MAX: f">={score}"}.get(score, str(score))
            print(f"{int(h):016x}  {chr(to_move):7}  {shown:5}  {confidence:10}")
    return 0


def run_table(args) -> int:
    from fuseki.book.formats import pos9

    table = pos9.generate_table(args.seed) if args.seed is not None else pos9.default_table()
    pos9.write_table(args.out, table)
    origin = f"seed {args.seed:#x}" if args.seed is not None else "the project's table"
    print(f"{args.out}: 81 rows, {origin}")
    return 0

