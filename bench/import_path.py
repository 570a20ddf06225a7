"""The modules an import passes through, call by call (issue 58: "stops" and "returns").

``python3 bench/import_path.py [TREE] [--archive TGZ] [--games 200] [--all]``: the first ``--games``
games of ``--archive`` (a .tgz of SGF files, copied into a small archive of their own) imported
as one batch into a new SQLite book, in this process (``workers=0``), with ``import_paths`` of
the checkout ``TREE`` (default: this one; any older checkout of fuseki too, which is how a
change is measured before and after in one run) followed under ``sys.setprofile``.

It follows the import as a reader would, each call once: a call from one function to another
is followed the first time it is made and passed over after that (the loops over games and
moves add nothing), and so are module bodies run by an import statement.  Along the calls
followed, the path is the modules of the import's write side (the pipeline and storage:
``import_paths`` -> book; ``--all``: every project module, the SGF reader and replay too) that
control is in, one after another:

- a *stop*: a call that enters another module of the path than its caller's;
- a *return*: a return that brings control back to another module of the path, one already
  on it (its caller's);
- a module's *visits*: the times the path arrives in it (by a stop or a return; the first,
  ``importer``, counts its start);
- the storage the pipeline enters: the storage modules and functions that a stop from a
  module of the pipeline enters (the write side's face, and whatever it reaches past).

Other code between two such frames (SQLAlchemy, numpy, the standard library, the project's
other layers) is not a module of the path: a function of the path it calls is a stop from the
frame of the path below it.  Prints the path, then the counts.
"""

from __future__ import annotations

import argparse
import collections
import sys
import tarfile
import tempfile
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent
ARCHIVE = CHECKOUT.parent / "shared" / "data" / "tygem-2016-07.tgz"
PROJECT = "fuseki."
WRITE_SIDE = ("fuseki.book.analysis.pipeline.", "fuseki.book.storage.")


class PathFollower:
    """A ``sys.setprofile`` function that keeps the path through the modules named by
    ``prefixes``, each call once."""

    def __init__(self, prefixes: tuple[str, ...]):
        self.prefixes = prefixes
        # each frame's (module of the path control is in, that module's function, passed over)
        self.frames: list[tuple[str | None, object, bool]] = []
        self.followed: set[tuple[object, object]] = set()  # (caller's code, callee's code)
        self.path: list[tuple[str, str, str, str | None]] = []  # (stop or return, module, function, from)

    def __call__(self, frame, event, _arg):
        if event == "call":
            self._call(frame)
        elif event == "return" and self.frames:
            self._return()

    def _call(self, frame):
        module, caller, passed = self.frames[-1] if self.frames else (None, None, False)
        code = frame.f_code
        name = frame.f_globals.get("__name__", "")
        passed = passed or code.co_name == "<module>" or (caller, code) in self.followed
        if not passed and name.startswith(self.prefixes):
            self.followed.add((caller, code))
            if module is None:
                self.path.append(("start", name, code.co_name, None))
            elif name != module:
                self.path.append(("stop", name, code.co_name, module))
            module, caller = name, code
        self.frames.append((module, caller, passed))

    def _return(self):
        module, _code, passed = self.frames.pop()
        if not passed and self.frames and self.frames[-1][0] not in (None, module):
            self.path.append(("return", self.frames[-1][0], "", module))


def small_archive(archive: Path, games: int, folder: Path) -> Path:
    """The first ``games`` SGF members of ``archive`` as an archive of their own in ``folder``."""
    made = folder / f"first-{games}.tgz"
    with tarfile.open(archive) as source, tarfile.open(made, "w:gz") as target:
        taken = 0
        for member in source:
            if member.isfile() and member.name.endswith(".sgf") and taken < games:
                target.addfile(member, source.extractfile(member))
                taken += 1
    return made


def short(module: str) -> str:
    return module.removeprefix(PROJECT)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", nargs="?", default=str(CHECKOUT), help="the checkout whose import is followed")
    parser.add_argument("--archive", default=str(ARCHIVE))
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--all", action="store_true", help="every project module, not only the write side's")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(args.tree).resolve()))
    __import__("gtp_main").use_this_checkout()  # import fuseki from TREE, installed or not
    from fuseki.book.analysis.pipeline.importer import import_paths
    from fuseki.book.storage.store import Book

    with tempfile.TemporaryDirectory() as folder:
        archive = small_archive(Path(args.archive), args.games, Path(folder))
        book = Book.open(str(Path(folder) / "book.db"))
        follower = PathFollower((PROJECT,) if args.all else WRITE_SIDE)
        sys.setprofile(follower)
        try:
            report = import_paths(book, [str(archive)], workers=0, batch_games=args.games)
        finally:
            sys.setprofile(None)
        games = book.stats().games
        book.close()
    print(f"{args.tree}: {report.added} games added in one batch, {games} in the book, {report.positions:,} positions")
    visits = collections.Counter()
    entered = collections.defaultdict(set)  # storage module -> its functions a pipeline module calls
    for kind, module, function, before in follower.path:
        if kind == "stop" and before.startswith(WRITE_SIDE[0]) and module.startswith(WRITE_SIDE[1]):
            entered[module].add(function)
        visits[module] += 1
        mark = {"start": "  ", "stop": "->", "return": "<-"}[kind]
        print(f"  {mark} {short(module)}{'.' + function if function else ''}")
    kinds = collections.Counter(kind for kind, *_rest in follower.path)
    again = sum(visits.values()) - len(visits)  # arrivals, by a stop or a return, in a module visited before
    print(f"{kinds['stop']} stops, {kinds['return']} returns ({again} arrivals in a module visited before), "
          f"{len(visits)} modules; visits:")
    for module, count in visits.most_common():
        print(f"  {count:3}  {short(module)}")
    print(f"the pipeline enters {len(entered)} storage modules, {sum(map(len, entered.values()))} functions:")
    for module, functions in sorted(entered.items()):
        print(f"  {short(module)}: {', '.join(sorted(functions))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
