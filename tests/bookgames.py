"""A tiny real book for the book chooser, GTP book and Fuego tests: SGF games written here,
imported with ``book.analysis.pipeline.importer`` into a SQLite file.

19x19 games (B first, results as given):

    R16 D4 Q3 .. B+R  x3     after R16, white has D4 (4 games, won 1), D16 (2, won 2),
    R16 D4 C16   W+R         Q4 (1, won 1); after R16 D4, black has Q3 (3) and C16 (1)
    R16 D16 ..   W+R  x2
    R16 Q4      W+R
    Q16 D4      B+R          the star points: one orbit of 3 games on the empty board,
    D4 Q16      B+R          next to the 3-4 points' orbit of 7
    Q4 D16      B+R

7x7 ko games (setup stones, white to play): in ``KO_BEFORE`` black takes the ko at
``KO_TAKE``; the records start from the position after the capture, where white retook
at ``KO_RETAKE`` in 2 games and played ``KO_OTHER`` in 1 -- legal there (a setup is no
capture), illegal for a board that just saw black take.
"""

from __future__ import annotations

from pathlib import Path

GAMES_19 = [  # the same moves twice would be one game (the importer's fingerprint): tails differ
    ("R16 D4 Q3 C3", "B+R"), ("R16 D4 Q3 C17", "B+R"), ("R16 D4 Q3 K10", "B+R"), ("R16 D4 C16", "W+R"),
    ("R16 D16 C3", "W+R"), ("R16 D16 C17", "W+R"), ("R16 Q4", "W+R"),
    ("Q16 D4", "B+R"), ("D4 Q16", "B+R"), ("Q4 D16", "B+R"),
]

KO_BEFORE = """\
. . . . . . .
. . X O . . .
. X O . O . .
. . X O . . .
. . . . . . .
. . . . . . .
. . . . . . .
"""
KO_TAKE = "D5"      # black takes the white stone on C5
KO_RETAKE = "C5"    # white retakes: illegal right after KO_TAKE
KO_OTHER = "F2"
# the position after KO_TAKE, as SGF setup (x, y from the top-left corner)
KO_AB = ["bc", "cb", "cd", "dc"]
KO_AW = ["db", "dd", "ec"]


def vertex_to_sgf(vertex: str, size: int) -> str:
    columns = "ABCDEFGHJKLMNOPQRSTUVWXYZ"
    x = columns.index(vertex[0].upper())
    y = size - int(vertex[1:])
    return "abcdefghijklmnopqrstuvwxyz"[x] + "abcdefghijklmnopqrstuvwxyz"[y]


def game_sgf(moves: str, result: str, size: int = 19, first: str = "B", setup: str = "") -> str:
    colors = ("B", "W") if first == "B" else ("W", "B")
    nodes = "".join(f";{colors[i % 2]}[{vertex_to_sgf(v, size)}]" for i, v in enumerate(moves.split()))
    return f"(;GM[1]FF[4]SZ[{size}]KM[6.5]RE[{result}]DT[2016-07-01]{setup}{nodes})\n"


def write_games(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for n, (moves, result) in enumerate(GAMES_19):
        paths.append(folder / f"g{n:02}.sgf")
        paths[-1].write_text(game_sgf(moves, result))
    ko_setup = "AB" + "".join(f"[{p}]" for p in KO_AB) + "AW" + "".join(f"[{p}]" for p in KO_AW) + "PL[W]"
    for n, (move, result) in enumerate([(KO_RETAKE + " B2", "W+R"), (KO_RETAKE + " F6", "W+R"),
                                        (KO_OTHER, "B+R")]):
        paths.append(folder / f"ko{n}.sgf")
        paths[-1].write_text(game_sgf(move, result, size=7, first="W", setup=ko_setup))
    return paths


def build_book(path: Path, sgf_folder: Path) -> str:
    """Import the games (written to ``sgf_folder``) into a new SQLite book at ``path``."""
    from fuseki.book.analysis.pipeline.importer import import_paths
    from fuseki.book.storage.store import Book

    write_games(sgf_folder)
    with Book.open(str(path)) as book:
        report = import_paths(book, [str(sgf_folder)], workers=0)
    assert report.added == len(GAMES_19) + 3 and not report.anomalies, report
    return str(path)
