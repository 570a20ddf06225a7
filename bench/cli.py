"""Start-up of the ``fuseki`` command, as a shell sees it (a script that prints figures, not a test).

``python3 bench/cli.py [--book BOOK] [--runs 10] [--tree PATH]``: the wall time of whole
processes, each started as a shell starts it, for ``python3 -c pass`` (the interpreter's own
start-up, the floor), ``fuseki --help``, every ``fuseki SUBCOMMAND --help`` (subcommands of
subcommands too), and with ``--book``, ``fuseki search`` and ``fuseki pattern`` on that book
and a fresh ``fuseki-gtp --book`` session (``name``, the first ``book_moves``, ``quit``, the end).
Median and p99 of ``--runs`` runs each, the rounds interleaved so that a busy moment of the
machine falls on every command alike; one untimed run of each first (a pattern search builds
the book's pattern index once).  ``--tree`` runs the fuseki of another checkout (a copy of the
code before a change, for a baseline from the same run); default: the one this file is in.

Targets (issue "CLI and engine that answer at once"): ``fuseki --help`` and every
``SUBCOMMAND --help`` <= 0.3 s; ``fuseki search`` and ``fuseki pattern`` on the 11,365-game
book of tygem-2016-07.tgz <= 1 s, start-up included.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEARCH = ["search", "--moves", "Q16 D4 Q3 D16"]
PATTERN = ["pattern", "--moves", "Q16 R14 O17", "--region", "N19:T13"]
# the subcommands of each command, asked of the tree's own parser (old and new trees alike)
LIST_COMMANDS = """
import argparse
from fuseki.book.ui import cli
def names(parser, prefix):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                print(" ".join(prefix + [name]))
                names(sub, prefix + [name])
names(cli.build_parser(), [])
"""


def fuseki_path(tree: Path) -> str:
    """A folder holding a link ``fuseki`` to ``tree``: first on PYTHONPATH, ``import fuseki`` is that tree."""
    folder = Path(tempfile.mkdtemp(prefix="fuseki-bench-cli-"))
    (folder / "fuseki").symlink_to(tree.resolve(), target_is_directory=True)
    return str(folder)


def timed(argv: list[str], env: dict) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 2):  # 2: argparse's own exit for a bare command group
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return elapsed


def gtp_session(tree: Path, env: dict, book: str) -> dict[str, float]:
    """Seconds of one fresh ``gtp_main.py --book``: its start to the answer of ``name``; then the first
    ``book_moves``; then ``quit`` to its answer, and to the end of the process (GUIs wait for it)."""
    process = subprocess.Popen([sys.executable, str(tree / "gtp_main.py"), "--book", book], env=env,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def ask(command: str) -> None:
        process.stdin.write(command.encode() + b"\n")
        process.stdin.flush()
        while process.stdout.readline() not in (b"\n", b""):
            pass

    began = time.perf_counter()
    ask("name")
    named = time.perf_counter()
    ask("book_moves")
    answered = time.perf_counter()
    ask("quit")
    quit_answered = time.perf_counter()
    process.wait(60)
    ended = time.perf_counter()
    return {"fuseki-gtp: start to the answer of name": named - began,
            "fuseki-gtp: then the first book_moves": answered - named,
            "fuseki-gtp: quit to its answer": quit_answered - answered,
            "fuseki-gtp: quit to the end of the process": ended - answered}


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--book", metavar="PATH", help="a book for fuseki search and fuseki pattern (else skipped)")
    parser.add_argument("--runs", type=int, default=10, metavar="N", help="timed runs of each command (default 10)")
    parser.add_argument("--tree", type=Path, default=ROOT, metavar="PATH",
                        help="the checkout whose fuseki runs (default: this one)")
    args = parser.parse_args()
    folder = fuseki_path(args.tree)
    try:
        env = dict(os.environ, PYTHONPATH=folder)
        python = sys.executable
        fuseki = [python, "-m", "fuseki"]
        listed = subprocess.run([python, "-c", LIST_COMMANDS], env=env, capture_output=True, text=True, check=True)
        commands = {"python3 -c pass": [python, "-c", "pass"], "fuseki --help": fuseki + ["--help"]}
        for line in listed.stdout.splitlines():
            commands[f"fuseki {line} --help"] = fuseki + line.split() + ["--help"]
        if args.book:
            book = ["--book", str(Path(args.book).resolve())]
            commands["fuseki " + " ".join(SEARCH)] = fuseki + SEARCH + book
            commands["fuseki " + " ".join(PATTERN)] = fuseki + PATTERN + book
        times: dict[str, list[float]] = {name: [] for name in commands}
        for argv in commands.values():
            timed(argv, env)  # untimed: the pattern index, the OS's file cache
        for _ in range(args.runs):
            for name, argv in commands.items():
                times[name].append(timed(argv, env))
            if args.book:
                for name, seconds in gtp_session(args.tree.resolve(), env, book[1]).items():
                    times.setdefault(name, []).append(seconds)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    width = max(len(name) for name in times)
    print(f"tree {args.tree.resolve()}, {args.runs} runs each, {python}")
    print(f"{'command':<{width}}  median s   p99 s")
    for name, values in times.items():
        print(f"{name:<{width}}  {statistics.median(values):8.3f}  {p99(values):6.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
