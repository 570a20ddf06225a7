"""A merge of a book's segment files, timed beside reading the same rows: ``python3 bench/merge.py BOOK``.

The import merges ``segments.FANOUT`` segments of a level into one (``segment_files.merge``, in a
process of its own); at 1.5 million games that is three merges of 32 batches.  This merges the
oldest ``--parts`` level-0 segment files of BOOK (a SQLite book whose segments are files, made
by ``bench/book.py --corpus ... --into BOOK``) into a scratch file that is then removed: the
book is not changed.  Beside it, in the same run, the baseline: reading the same rows, a key
range at a time as the merge does (``segment_files._read_range``), the floor of any merge.
Prints the medians of ``--runs`` runs, wall and CPU, and the merge's share spent putting the
rows in order (``packed_segment._checked``: ``sqlite_image.ordered_rows``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

from fuseki.book.storage.position_index import packed_segment, segment_files, segments
from fuseki.book.storage.store import Book


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("book", help="a SQLite book whose segments are files")
    parser.add_argument("--parts", type=int, default=segments.FANOUT, help="level-0 segments merged (default FANOUT)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    with Book.open(args.book, readonly=True) as book, book.db.connect() as conn:
        parts = [segment for segment in segments.live(conn) if segment.level == 0][:args.parts]
        sources = segments.merge_sources(conn, parts)
    if not parts or any(source.table is not None for source in sources):
        print(f"{args.book}: needs level-0 segments in files (found {len(parts)})", file=sys.stderr)
        return 2
    rows = sum(part.rows for part in parts)
    print(f"{args.book}: {len(parts)} level-0 segments, {rows:,} rows")

    ordering = [0.0]
    checked = packed_segment._checked  # sqlite_image.ordered_rows, then the codes' range

    def timed_order(*given, **named):
        began = time.perf_counter()
        try:
            return checked(*given, **named)
        finally:
            ordering[0] += time.perf_counter() - began

    packed_segment._checked = timed_order  # this process's merge only: the figure's share
    merged, read = [], []
    with tempfile.TemporaryDirectory() as folder:
        for _run in range(args.runs):
            ordering[0] = 0.0
            wall, cpu = time.perf_counter(), time.process_time()
            name, written = segment_files.merge(sources, args.book, folder, os.getpid())
            merged.append((time.perf_counter() - wall, time.process_time() - cpu, ordering[0]))
            os.remove(os.path.join(folder, name))
            assert written == rows, (written, rows)

            wall, cpu = time.perf_counter(), time.process_time()
            readers = [packed_segment.Reader(source.path) for source in sources]
            try:
                for low, high in segment_files.key_ranges(max(1, rows // segment_files.MERGE_ROWS_PER_STEP)):
                    segment_files._read_range(None, readers, sources, low, high)
            finally:
                for reader in readers:
                    reader.close()
            read.append((time.perf_counter() - wall, time.process_time() - cpu))

    def median(values, at):
        return statistics.median(v[at] for v in values)

    print(f"    merge:                    median {median(merged, 0):6.2f} s wall, {median(merged, 1):6.2f} s CPU, "
          f"{rows / median(merged, 0) / 1e6:5.2f} M rows/s; putting rows in order {median(merged, 2):5.2f} s "
          f"(runs: {', '.join(f'{w:.2f}' for w, _c, _o in merged)} s)")
    print(f"    baseline, the rows read:  median {median(read, 0):6.2f} s wall, {median(read, 1):6.2f} s CPU, "
          f"{rows / median(read, 0) / 1e6:5.2f} M rows/s")
    print(f"    merge over reading: {median(merged, 0) / median(read, 0):.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
