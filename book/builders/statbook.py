"""Building a statistics book, and the built-in book shipped inside the package.

``build(paths, out, min_games, ...)`` imports the game records into a temporary book of
games with the real importer (``import_paths``: the same reading, replay, duplicates and
anomalies as ``fuseki import``), counts every position's next moves from it
(``statbook_table.from_book``), keeps the positions reached by at least ``min_games`` games,
and writes them as a statistics book (``statbook_table.write_file``), with a small JSON file
beside it naming what it holds (read by ``fuseki-gtp`` at start, without opening the
database).

The built-in book (``fuseki book build-builtin``) is built from the strong amateur games
in ``../shared/data``: the Tygem 9-dan archives of November 2005 to December 2009 and
the Tygem archive of July 2016, less one month held out (``HELD_OUT``) to measure the
book on games it has not seen (bench/agreement.py).  The same archives give the same
bytes: archives in name order, games numbered in source order (so the same duplicate is
kept), rows in key order, fixed page size, no timestamps, and VACUUM INTO a new file.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

# The corpus, relative to the data folder (../shared/data), and the month held out of it.
SOURCES = ("tygem-2005-2009/tygem-*.tgz", "tygem-2016-07.tgz")
HELD_OUT = "tygem-2005-2009/tygem-2009-12.tgz"
# Positions reached by fewer games are left out.  Measured with bench/agreement.py on the 8,689
# held-out games (moves 1-20, agreement with the move played / file size): 2 games 45.5% / 20.2 MB
# (over the 16 MB budget), 3: 43.9% / 11.8 MB, 4: 42.8% / 8.9 MB, 5: 42.0% / 7.3 MB,
# 8: 40.3% / 4.9 MB, 16: 37.6% / 2.8 MB; the whole book of games (1.9 GB) 47.9%.
MIN_GAMES = 3
# Corner-book continuations played fewer times are left out of the built-in book.  Measured with
# a scratch script (bench/agreement.py's moves 1-20 on 1,000 held-out games, whole-board book
# first): keeping those of >= 2 / 3 / 5 / 10 times: 58.1% / 57.9% / 57.5% / 56.9% agreement,
# 1,370,357 / 667,674 / 330,215 / 148,584 rows; with 5 the built-in book is 18.1 MB, over its
# 16 MB budget.
CORNER_MIN_GAMES = 10
TITLE = "the built-in book"


@dataclass(frozen=True)
class BuildReport:
    games: int      # games counted (the import's, duplicates left out)
    positions: int  # positions kept
    rows: int       # next-move rows kept
    file_bytes: int
    import_text: str  # the importer's summary line

    def __str__(self) -> str:
        return (f"{self.games:,} games, {self.positions:,} positions, {self.rows:,} rows, "
                f"{self.file_bytes / 1e6:.1f} MB")


def corpus(data: str, held_out: str | None = HELD_OUT) -> list[str]:
    """The built-in book's archives under the folder ``data``, in name order.

    Raises FileNotFoundError naming what is missing.
    """
    root = Path(data)
    paths: list[Path] = []
    for pattern in SOURCES:
        found = sorted(root.glob(pattern))
        if not found:
            raise FileNotFoundError(f"no {pattern} under {root}")
        paths += found
    skip = (root / held_out).resolve() if held_out else None
    return [str(p) for p in paths if p.resolve() != skip]


def build(paths: list[str], out: str, min_games: int = MIN_GAMES, title: str = TITLE,
          description: str = "", work: str | None = None, workers: int | None = None,
          progress=None, corner_min_games: int | None = CORNER_MIN_GAMES) -> BuildReport:
    """Import ``paths`` into a temporary book of games (in ``work``, default the system's
    temporary folder: about 5 KB a game) and write their statistics book to ``out``, with
    the corner book's continuations of at least ``corner_min_games`` (None: no corner book)."""
    from fuseki.book.analysis.pipeline import importer
    from fuseki.book.storage.store import Book

    with tempfile.TemporaryDirectory(prefix="fuseki-build-", dir=work) as folder:
        book = Book.open(os.path.join(folder, "games.sqlite"))
        try:
            imported = importer.import_paths(book, paths, workers=workers, progress=progress)
            if corner_min_games is not None:
                from fuseki.book.analysis.patterns import corner_build

                corner_build.update(book, progress=getattr(progress, "stream", None))  # its lines, as text
            report = write_statistics(book, out, min_games, title, description, corner_min_games)
        finally:
            book.close()
    return BuildReport(report.games, report.positions, report.rows, report.file_bytes, str(imported))


def write_statistics(book, out: str, min_games: int = MIN_GAMES, title: str = TITLE,
                     description: str = "", corner_min_games: int | None = None) -> BuildReport:
    """Write the statistics book of an open book of games to ``out`` (and ``info_path(out)``),
    with its corner book's continuations of at least ``corner_min_games`` when it has one."""
    from fuseki.book.storage.position_index import nextmoves, statbook_table

    if min_games < 1:
        raise ValueError("min_games must be at least 1")
    stats = book.stats()
    with book.db.connect() as conn:
        kept = list(statbook_table.from_book(conn, min_games))  # key ranges: no key in two of them
    positions = sum(nextmoves.positions(chunk) for chunk in kept)
    years = f"{stats.years[0]}-{stats.years[1]}" if stats.years else ""
    meta = {"title": title, "description": description, "games": str(stats.games),
            "min_games": str(min_games), "positions": str(positions), "years": years,
            "sizes": ",".join(f"{size}:{count}" for size, count in sorted(stats.sizes.items()))}
    corner_rows = []

    def corner_book(target) -> None:
        from fuseki.book.analysis.patterns import corner_build, corners

        with book.db.connect() as conn:
            if not corners.has_table(conn):
                return
        corner_rows.append(corner_build.copy_into(book, target, corner_min_games))

    rows = statbook_table.write_file(out, kept, meta, corner_book if corner_min_games is not None else None)
    info = {"title": title, "description": description, "games": stats.games, "min_games": min_games,
            "positions": positions, "rows": rows}
    if corner_rows:
        info.update(corner_min_games=corner_min_games, corner_rows=corner_rows[0])
    write_info(info_path(out), info)
    return BuildReport(stats.games, positions, rows, os.path.getsize(out), "")


def info_path(book_path: str) -> str:
    """The JSON file beside a statistics book: ``builtin.sqlite`` -> ``builtin.json``."""
    return str(Path(book_path).with_suffix(".json"))


def write_info(path: str, info: dict) -> None:
    temp = f"{path}.tmp{os.getpid()}"
    with open(temp, "w", encoding="utf-8", newline="\n") as handle:
        json.dump(info, handle, indent=1, sort_keys=True)
        handle.write("\n")
    os.replace(temp, path)
