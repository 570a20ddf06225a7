"""How often each reading of the SGF fast path is taken, and what each costs (prints figures).

``book.formats.sgf_reader.read_games`` reads a file's moves with the first of
``sgf_reader._MOVE_READINGS`` that takes them and hands everything else to sgfmill (the
fourth reading, and the reference).  For each corpus (an archive, or a folder of them):

(a) every file is read once as the importer reads it, each reading and sgfmill timed: the
    files each one takes, its time on them, and its time on the files it passes on;
(b) for each reading, the files it took are read again with and without it (best of
    ``--repeats``): what they cost without it (in a later reading or in sgfmill) less what
    they cost with it, less its time on the files it passed on, is what it saves -- the
    reading pays for itself when that is positive;
(c) sgfmill alone (``fast=False``) on a sample of files spread over the corpus, for what
    the fast path as a whole saves;
(d) the archives read by ``book.formats.sources`` (its own tar reader) and by ``tarfile``: the
    measured reason for the hand-written tar reader.

Times are CPU seconds of this process (``time.process_time``), so that other work on a
shared machine does not count.

Usage::

    python3 bench/sgf_tiers.py [PATH ...] [--sample N] [--repeats R]

Default paths: ../shared/data/tygem-2016-07.tgz, ai-games.tgz and tygem-2005-2009/ (its
50 archives, 366,630 games; about three minutes).
"""

from __future__ import annotations

import argparse
import sys
import tarfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
sys.path.insert(0, str(ROOT))
__import__("gtp_main").use_this_checkout()  # import fuseki from this checkout, installed or not

from fuseki.book.formats import sgf_reader  # noqa: E402
from fuseki.book.formats.sgf_reader import SgfError, read_games  # noqa: E402
from fuseki.book.formats.sources import SourceFile, iter_sources  # noqa: E402

SGFMILL = "sgfmill"


class Tally:
    """Counts and seconds of one corpus, added up archive by archive."""

    def __init__(self):
        self.files = self.games = 0
        self.taken = Counter()  # reading (or SGFMILL, or "error") -> files
        self.why_sgfmill = Counter()  # why a file went to sgfmill -> files
        self.time_taken = defaultdict(float)  # reading -> seconds on the files it took
        self.time_passed = defaultdict(float)  # reading -> seconds on the files it passed on
        self.total = 0.0  # read_games, every file
        self.with_reading = defaultdict(float)  # (b): a reading's files, read with it ...
        self.without_reading = defaultdict(float)  # ... and without it
        self.sample_files = 0
        self.sample_fast = self.sample_sgfmill = 0.0
        self.block_reader = self.tarfile_reader = 0.0


def timed_readings(outcome: dict) -> tuple:
    """_MOVE_READINGS wrapped to note, in ``outcome``, each one's time and whether it took the moves."""
    def wrap(reading):
        def timed(data, position, close, size):
            start = time.process_time()
            found = reading(data, position, close, size)
            outcome["readings"].append((reading.__name__, found is not None, time.process_time() - start))
            return found
        return timed
    return tuple(wrap(reading) for reading in sgf_reader._MOVE_READINGS)


def read_instrumented(files: list[SourceFile], tally: Tally) -> dict[str, list[SourceFile]]:
    """(a): read every file, note what read it and the time; the files each reading took."""
    readings, sgfmill_games = sgf_reader._MOVE_READINGS, sgf_reader._sgfmill_games
    outcome: dict = {}

    def timed_sgfmill(data, source, encoding):
        start = time.process_time()
        try:
            return sgfmill_games(data, source, encoding)
        finally:
            outcome["sgfmill"] = time.process_time() - start

    sgf_reader._MOVE_READINGS, sgf_reader._sgfmill_games = timed_readings(outcome), timed_sgfmill
    taken_files: dict[str, list[SourceFile]] = defaultdict(list)
    try:
        for item in files:
            outcome.clear()
            outcome["readings"] = []
            start = time.process_time()
            try:
                tally.games += len(read_games(item.data, item.name))
                failed = False
            except SgfError:
                failed = True
            tally.total += time.process_time() - start
            took = next((name for name, hit, _ in outcome["readings"] if hit), None)
            for name, hit, seconds in outcome["readings"]:
                (tally.time_taken if hit and "sgfmill" not in outcome else tally.time_passed)[name] += seconds
            if "sgfmill" in outcome:
                tally.time_taken[SGFMILL] += outcome["sgfmill"]
                tally.why_sgfmill[why_sgfmill(outcome["readings"], took)] += 1
                took = "error" if failed else SGFMILL
            tally.taken[took] += 1
            taken_files[took].append(item)
    finally:
        sgf_reader._MOVE_READINGS, sgf_reader._sgfmill_games = readings, sgfmill_games
    tally.files += len(files)
    return taken_files


def why_sgfmill(readings: list, took: str | None) -> str:
    if not readings:
        return "root, setup or start not simple"
    if took is None:
        return "no reading took the moves"
    return "more than one game"


def read_all(files: list[SourceFile], fast: bool = True) -> float:
    start = time.process_time()
    for item in files:
        try:
            read_games(item.data, item.name, fast=fast)
        except SgfError:
            pass
    return time.process_time() - start


def compare_without(taken_files: dict[str, list[SourceFile]], tally: Tally, repeats: int) -> None:
    """(b): each reading's files read with all readings and with that one left out."""
    readings = sgf_reader._MOVE_READINGS
    try:
        for reading in readings:
            files = taken_files.get(reading.__name__, [])
            if not files:
                continue
            best_with = best_without = float("inf")
            for _ in range(repeats):
                sgf_reader._MOVE_READINGS = readings
                best_with = min(best_with, read_all(files))
                sgf_reader._MOVE_READINGS = tuple(r for r in readings if r is not reading)
                best_without = min(best_without, read_all(files))
            tally.with_reading[reading.__name__] += best_with
            tally.without_reading[reading.__name__] += best_without
    finally:
        sgf_reader._MOVE_READINGS = readings


def sample_sgfmill(files: list[SourceFile], tally: Tally, count: int) -> None:
    """(c): ``count`` files spread over ``files``, read by the fast path and by sgfmill alone."""
    sample = files[::max(1, len(files) // count)][:count] if count > 0 else []
    tally.sample_files += len(sample)
    tally.sample_fast += read_all(sample)
    tally.sample_sgfmill += read_all(sample, fast=False)


def archive_reading(path: Path, tally: Tally) -> list[SourceFile]:
    """(d): the files of one archive, read by book.formats.sources and again by tarfile (CPU seconds)."""
    start = time.process_time()
    files = [item for item in iter_sources([str(path)]) if isinstance(item, SourceFile)]
    tally.block_reader += time.process_time() - start
    if path.name.endswith((".tgz", ".tar.gz", ".tar")):
        start = time.process_time()
        with tarfile.open(path, "r|*") as tar:
            for member in tar:
                if member.isfile() and member.name.lower().endswith(".sgf"):
                    tar.extractfile(member).read()
        tally.tarfile_reader += time.process_time() - start
    return files


def measure(corpus: Path, sample: int, repeats: int) -> Tally:
    archives = sorted(corpus.glob("*.tgz")) if corpus.is_dir() else [corpus]
    tally = Tally()
    for archive in archives:
        files = archive_reading(archive, tally)
        taken_files = read_instrumented(files, tally)
        compare_without(taken_files, tally, repeats)
        sample_sgfmill(files, tally, -(-sample // len(archives)))
    return tally


def report(name: str, tally: Tally) -> None:
    print(f"\n{name}: {tally.files:,} files, {tally.games:,} games; read_games {tally.total:.2f} s "
          f"({tally.total / max(1, tally.files) * 1e6:.0f} us/file)")
    print(f"  {'reading':<16}{'files':>9}{'share':>8}{'s on files taken':>18}{'us/file':>9}"
          f"{'s on files passed':>19}{'saves (b)':>11}")
    for name_ in [r.__name__ for r in sgf_reader._MOVE_READINGS] + [SGFMILL, "error"]:
        files = tally.taken[name_]
        seconds = tally.time_taken[name_]
        saving = ""
        if name_ in tally.with_reading:
            saved = tally.without_reading[name_] - tally.with_reading[name_] - tally.time_passed[name_]
            saving = f"{saved:+.3f} s"
        print(f"  {name_:<16}{files:>9,}{files / max(1, tally.files):>8.2%}{seconds:>18.3f}"
              f"{seconds / files * 1e6 if files else 0:>9.0f}{tally.time_passed[name_]:>19.3f}{saving:>11}")
    for why, files in tally.why_sgfmill.most_common():
        print(f"    to sgfmill: {why}: {files:,}")
    for name_ in tally.with_reading:
        print(f"  (b) {name_}: its {tally.taken[name_]:,} files take {tally.with_reading[name_]:.3f} s with it, "
              f"{tally.without_reading[name_]:.3f} s without it")
    if tally.sample_files:
        fast = tally.sample_fast / tally.sample_files * 1e6
        slow = tally.sample_sgfmill / tally.sample_files * 1e6
        print(f"  (c) sample of {tally.sample_files:,} files: fast path {fast:.0f} us/file, sgfmill alone "
              f"{slow:.0f} us/file ({slow / fast:.0f}x); the corpus by sgfmill alone ~{slow * tally.files / 1e6:.0f} s")
    if tally.tarfile_reader:
        print(f"  (d) archives read, CPU: book.formats.sources {tally.block_reader:.2f} s, tarfile "
              f"{tally.tarfile_reader:.2f} s ({tally.tarfile_reader / tally.block_reader:.1f}x)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", type=Path,
                        default=[DATA / "tygem-2016-07.tgz", DATA / "ai-games.tgz", DATA / "tygem-2005-2009"])
    parser.add_argument("--sample", type=int, default=2000, help="files per corpus read by sgfmill alone (c)")
    parser.add_argument("--repeats", type=int, default=3, help="best of R timings in (b)")
    args = parser.parse_args(argv)
    read_games(b"(;SZ[9];B[ee])", "warm-up")  # numba's kernel loaded before any timing
    readings = ", ".join(r.__name__ for r in sgf_reader._MOVE_READINGS)
    print(f"readings, in order: {readings}, then sgfmill")
    for path in args.paths:
        if not path.exists():
            print(f"\n{path}: not here, skipped")
            continue
        report(path.name, measure(path, args.sample, args.repeats))


if __name__ == "__main__":
    main()
