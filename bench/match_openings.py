"""Openings for ``fuseki match --openings DIR``: the book's own openings, drawn by weight.

A deterministic policy (``sound``, ``best``) plays the same game every time against a
deterministic opponent; a match of such games measures one game twenty times.  Issue 56 asks
each game to start from a different opening of the book, drawn by weight (how often strong
players chose each move), and the same openings for every row of a match.  This asks
``fuseki-gtp --policy weighted --seed S`` (no fallback engine, so every move is the book's or
its corner book's) for ``--moves`` moves, both colours, for seeds 1, 2, ... until ``--count``
openings distinct under the board's 8 symmetries are drawn, and writes each as
``opening-NN.sgf``.  ``fuseki match`` plays each opening twice, colours swapped, so
``--games`` should be twice ``--count``.

Usage::

    python3 bench/match_openings.py DIR [--count 10] [--moves 4] [--engine CMD]
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
__import__("gtp_main").use_this_checkout()  # import fuseki from this checkout, installed or not

from sgfmill import sgf  # noqa: E402

from fuseki.engine.players.gtp_client import GtpClient  # noqa: E402

LETTERS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"
SEEDS_TRIED = 50  # a draw that keeps repeating itself is a book too small for --count


def draw(engine: str, seed: int, moves: int) -> list[str]:
    """The vertices ``engine --policy weighted --seed seed`` plays for both colours."""
    command = f"{engine} --policy weighted --seed {seed}"
    with GtpClient(command, timeout=120) as client:
        client.send("boardsize 19")
        client.send("clear_board")
        return [client.send(f"genmove {'b' if i % 2 == 0 else 'w'}").strip().upper() for i in range(moves)]


def canonical(vertices: tuple[str, ...]) -> tuple:
    """The smallest of the opening's 8 symmetric forms: twins are one opening, not two."""
    points = [(int(v[1:]) - 1, LETTERS.index(v[0])) for v in vertices]
    forms = []
    for swap in (False, True):
        for flip_row in (False, True):
            for flip_col in (False, True):
                form = []
                for row, col in points:
                    row, col = (col, row) if swap else (row, col)
                    form.append((18 - row if flip_row else row, 18 - col if flip_col else col))
                forms.append(tuple(form))
    return min(forms)


def write(path: Path, vertices: list[str], komi: float) -> None:
    game = sgf.Sgf_game(19)
    game.root.set("KM", komi)
    game.root.set("C", "drawn by weight from the book by bench/match_openings.py")
    for i, vertex in enumerate(vertices):
        row, col = int(vertex[1:]) - 1, LETTERS.index(vertex[0])
        game.extend_main_sequence().set_move("b" if i % 2 == 0 else "w", (row, col))
    path.write_bytes(game.serialise())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--count", type=int, default=10, help="distinct openings (default 10)")
    parser.add_argument("--moves", type=int, default=4, help="moves in each (default 4)")
    parser.add_argument("--komi", type=float, default=6.5)
    parser.add_argument("--engine", default=f"{shlex.quote(sys.executable)} {shlex.quote(str(ROOT / 'gtp_main.py'))}",
                        help="the fuseki-gtp command, without --policy or --seed (default: this checkout's)")
    args = parser.parse_args(argv)
    if args.count < 1 or args.moves < 1:
        parser.error("--count and --moves must be positive")
    args.folder.mkdir(parents=True, exist_ok=True)
    drawn: dict[tuple[str, ...], int] = {}
    forms: set[tuple] = set()
    for seed in range(1, args.count * SEEDS_TRIED + 1):
        vertices = tuple(draw(args.engine, seed, args.moves))
        if "PASS" in vertices or canonical(vertices) in forms:
            continue
        forms.add(canonical(vertices))
        drawn[vertices] = seed
        if len(drawn) == args.count:
            break
    else:
        raise SystemExit(f"only {len(drawn)} distinct openings of {args.moves} moves in "
                         f"{args.count * SEEDS_TRIED} draws")
    for number, (vertices, seed) in enumerate(drawn.items(), 1):
        write(args.folder / f"opening-{number:02d}.sgf", list(vertices), args.komi)
        print(f"opening-{number:02d}.sgf (seed {seed}): {' '.join(vertices)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
