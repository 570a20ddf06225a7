"""Start-up of the ``fuseki`` command, as a shell sees it (a script that prints figures, not a test).

``python3 bench/cli.py [--book BOOK] [--runs 10] [--tree PATH] [--baseline PATH]``: the wall time of whole
processes, each started as a shell starts it, for ``python3 -c pass`` (the interpreter's own
start-up, the floor), ``python3 -c "import numpy"`` (the floor of every command that touches a board:
numpy is the one library they all need), ``fuseki --help``, every ``fuseki SUBCOMMAND --help`` (subcommands of
subcommands too), ``fuseki search`` with no ``--book`` (the built-in book, unless a book lies at
the default location: the row says which), and with ``--book``, ``fuseki search`` and ``fuseki
pattern`` on that book and a fresh ``fuseki-gtp --book`` session (``name``, the first
``book_moves``, ``quit``, the end).  ``--baseline PATH`` runs a second checkout's commands in the
same rounds and prints them beside (``--no-subcommand-help`` leaves out the many help rows).
Median and p99 of ``--runs`` runs each, the rounds interleaved so that a busy moment of the
machine falls on every command alike, and the median CPU seconds of each run (user and system, all
its threads: on a machine shared with other work, the wall time is that plus the waits for a core,
so the CPU column is close to what an idle machine's wall clock would say of a single-threaded
command); one untimed run of each first (a pattern search builds
the book's pattern index once).  ``--tree`` runs the fuseki of another checkout (a copy of the
code before a change, for a baseline from the same run); default: the one this file is in.

Targets (issue "CLI and engine that answer at once"): ``fuseki --help`` and every
``SUBCOMMAND --help`` <= 0.3 s; ``fuseki search`` and ``fuseki pattern`` on the 11,365-game
book of tygem-2016-07.tgz <= 1 s, start-up included.  Issue 42: ``fuseki search`` on the
built-in book <= 0.5 s, ``fuseki pattern`` on the 11k book <= 0.8 s.  Issue 61: ``fuseki search``
on the built-in book <= 0.35 s, ``fuseki pattern`` on the 11k book <= 0.6 s, read beside the numpy floor.
"""

from __future__ import annotations

import argparse
import os
import resource
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
from fuseki.book.ui import fuseki_command
def names(parser, prefix):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                print(" ".join(prefix + [name]))
                names(sub, prefix + [name])
names(fuseki_command.build_parser(), [])
"""
# which book ``fuseki search`` without --book reads, asked of the tree's own resolution
DEFAULT_BOOK = """
import argparse
from fuseki.book.model import builtin
from fuseki.book.ui.cli_shared import book_location
where = book_location(argparse.Namespace(book=None, command="search"))
print("the built-in book" if where == str(builtin.PATH) else where)
"""


def fuseki_path(tree: Path) -> str:
    """A folder holding a link ``fuseki`` to ``tree``: first on PYTHONPATH, ``import fuseki`` is that tree."""
    folder = Path(tempfile.mkdtemp(prefix="fuseki-bench-cli-"))
    (folder / "fuseki").symlink_to(tree.resolve(), target_is_directory=True)
    return str(folder)


def children_cpu() -> float:
    """CPU seconds (user and system) of this process's children that ended, all threads of each."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def timed(argv: list[str], env: dict, cpu: list[float] | None = None) -> float:
    """Wall seconds of one run of ``argv``; appends its CPU seconds to ``cpu``."""
    before = children_cpu()
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if cpu is not None:
        cpu.append(children_cpu() - before)
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


def tree_commands(tree: Path, env: dict, book: list[str], helps: bool) -> dict[str, list[str]]:
    """The timed commands of one tree, by row name (the same names for every tree)."""
    python = sys.executable
    fuseki = [python, "-m", "fuseki"]
    commands = {"python3 -c pass": [python, "-c", "pass"],
                'python3 -c "import numpy"': [python, "-c", "import numpy"],
                "fuseki --help": fuseki + ["--help"]}
    if helps:
        listed = subprocess.run([python, "-c", LIST_COMMANDS], env=env, capture_output=True, text=True, check=True)
        for line in listed.stdout.splitlines():
            commands[f"fuseki {line} --help"] = fuseki + line.split() + ["--help"]
    default = subprocess.run([python, "-c", DEFAULT_BOOK], env=env, capture_output=True, text=True, check=True)
    commands[f"fuseki {' '.join(SEARCH)} ({default.stdout.strip()})"] = fuseki + SEARCH
    if book:
        commands["fuseki " + " ".join(SEARCH)] = fuseki + SEARCH + book
        commands["fuseki " + " ".join(PATTERN)] = fuseki + PATTERN + book
    return commands


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--book", metavar="PATH", help="a book for fuseki search and fuseki pattern (else skipped)")
    parser.add_argument("--runs", type=int, default=10, metavar="N", help="timed runs of each command (default 10)")
    parser.add_argument("--tree", type=Path, default=ROOT, metavar="PATH",
                        help="the checkout whose fuseki runs (default: this one)")
    parser.add_argument("--baseline", type=Path, metavar="PATH",
                        help="a second checkout (the code before a change) whose commands run in the same "
                             "rounds, interleaved, and are printed beside")
    parser.add_argument("--no-subcommand-help", action="store_true",
                        help="leave out the rows of every SUBCOMMAND --help")
    args = parser.parse_args()
    trees = [args.tree] + ([args.baseline] if args.baseline else [])
    folders = [fuseki_path(tree) for tree in trees]
    book = ["--book", str(Path(args.book).resolve())] if args.book else []
    try:
        envs = [dict(os.environ, PYTHONPATH=folder) for folder in folders]
        commands = [tree_commands(tree, env, book, not args.no_subcommand_help) for tree, env in zip(trees, envs)]
        times: list[dict[str, list[float]]] = [{name: [] for name in each} for each in commands]
        cpus: list[dict[str, list[float]]] = [{name: [] for name in each} for each in commands]
        for each, env in zip(commands, envs):
            for argv in each.values():
                timed(argv, env)  # untimed: the pattern index, the OS's file cache, numba's cache
        for _ in range(args.runs):
            for i, (each, env) in enumerate(zip(commands, envs)):
                for name, argv in each.items():
                    times[i][name].append(timed(argv, env, cpus[i][name]))
            for i, (tree, env) in enumerate(zip(trees, envs)):
                if book:
                    for name, seconds in gtp_session(tree.resolve(), env, book[1]).items():
                        times[i].setdefault(name, []).append(seconds)
    finally:
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)
    names = list(dict.fromkeys(name for each in times for name in each))
    width = max(len(name) for name in names)
    for i, tree in enumerate(trees):
        print(f"{'tree' if i == 0 else 'baseline'} {tree.resolve()}")
    print(f"{args.runs} runs each, {sys.executable}")
    header = f"{'command':<{width}}  median s   p99 s   cpu s"
    print(header + ("   baseline median s   p99 s   cpu s" if args.baseline else ""))
    for name in names:
        cells = [f"{statistics.median(each[name]):8.3f}  {p99(each[name]):6.3f}  "
                 + (f"{statistics.median(cpu[name]):6.3f}" if cpu.get(name) else f"{'-':>6}") if name in each
                 else f"{'-':>8}  {'-':>6}  {'-':>6}" for each, cpu in zip(times, cpus)]
        print(f"{name:<{width}}  " + cells[0] + "".join(f"   {cell:>{len(cell) + 10}}" for cell in cells[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
