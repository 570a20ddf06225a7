"""Compile the numba kernels the suite runs into this checkout's cache, once, before the tests.

numba compiles a kernel at its first call and keeps the machine code beside the module
(``__pycache__``, ``cache=True``).  In a fresh clone nothing is kept yet, so each of the suite's
two processes compiled the same kernels at its first tests (23 s of the first test's set-up on
a loaded machine, in each process), and every ``fuseki`` subprocess a test started before then
compiled them once more.  ``tests/conftest.py`` runs this script once a session, before the
tests start; after it each process loads the kernels (a fraction of a second).  What it does is
what the tests do first: import games of both sizes, build the corner book, search patterns,
count next moves, write and read a statistics book, play and score a game.  A kernel it misses
is compiled by the first test that needs it, as before: nothing depends on it but time.

    python tests/warmjit.py        (tests/conftest.py's ``pytest_configure`` runs it)
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path


def warm(folder: Path) -> None:
    import numpy as np

    from fuseki.book.analysis.patterns import corner_build
    from fuseki.book.analysis.patterns.search import search
    from fuseki.book.analysis.pipeline import batches, importer
    from fuseki.book.builders.statbook import write_statistics
    from fuseki.book.formats.sgf_reader import read_games
    from fuseki.book.storage.position_index import nextmoves, segments
    from fuseki.book.storage.store import Book
    from fuseki.engine.core.base import BLACK, opponent
    from fuseki.engine.core.board import Board

    from patterncount import make_games, pattern_of

    nextmoves.GAMES, segments.FANOUT = 2, 3  # (this process only) next-move statistics and merges, as test_store's
    rng = np.random.default_rng(1)
    for size in (19, 9):
        games_folder = folder / f"games{size}"
        games_folder.mkdir()
        games = make_games(games_folder, size, 12, seed=size)
        (games_folder / "variations.sgf").write_bytes(  # the sgfmill path's scan (sgf_reader._game_extent)
            b"(;GM[1]FF[4]SZ[%d]C[a comment];B[cc](;W[dd];B[ee])(;W[ff]))" % size)
        with Book.open(str(folder / f"book{size}.sqlite")) as book:
            importer.import_paths(book, [str(games_folder)], workers=0, batch_games=4)
            for kind in ("corner", "side", "anywhere"):
                search(book, pattern_of(games, rng, kind, size, any_points=1, swap=True)[0])
            if size == 19:
                corner_build.update(book, progress=None)
                more = folder / "more19"
                more.mkdir()
                make_games(more, size, 5, seed=5)
                importer.import_paths(book, [str(more)], workers=0, batch_games=4)
                corner_build.update(book, progress=None)  # merged into the corner book built before
                board = Board(19)
                board.play(*games[0][0][0])
                book.next_moves(board)
                book.next_moves(Board(19), BLACK)
                write_statistics(book, str(folder / "stats.sqlite"), min_games=1)
    for record in read_games((games_folder / "variations.sgf").read_bytes(), "variations.sgf"):
        batches.replay_record(record)  # one game replayed alone (a parser process's, a long game's)
        batches.game_events(record)
    board, colour = Board(19), BLACK  # past the rules core's interpreted first moves (lazy_jit)
    for _ in range(400):
        board.play(colour, board.random_move(colour, rng))
        colour = opponent(colour)
    board.score()


def main(done: str | None = None) -> None:
    """Compile; then create the file ``done`` (the suite's processes wait for it), also after a
    failure: a kernel missed is compiled by the test that needs it."""
    sys.path.insert(0, str(Path(__file__).parent))
    try:
        with tempfile.TemporaryDirectory(prefix="fuseki-warmjit-") as folder:
            warm(Path(folder))
    finally:
        if done:
            Path(done).touch()


if __name__ == "__main__":
    import conftest  # noqa: F401 - run by hand: ``import fuseki`` loads this checkout, as in the suite
    main()
