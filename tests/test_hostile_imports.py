"""Hostile input from issue 59 ("Hardened, second round"), the import's half: each test is one of
its findings, which failed before its fix.

Memory is asserted as a fixed bound or a ratio between two sizes (tracemalloc), never a time.
"""

from __future__ import annotations

import gzip
import re
import tarfile

import pytest

from fuseki.book.formats import sources, tar_blocks
from fuseki.book.formats.sources import Limits, Skipped, SourceFile, iter_sources

from conftest import peak_memory

GAME = b"(;GM[1]SZ[19];B[pd];W[dp])"


# --- finding 1: every byte of a tar's headers is counted, whichever reader reads it ----------------

def _block(name: str, size: int, kind: bytes) -> bytes:
    info = tarfile.TarInfo(name)
    info.size, info.type = size, kind
    return info.tobuf(tarfile.GNU_FORMAT)


def _padded(data: bytes) -> bytes:
    return data + bytes(-len(data) % 512)


def _records(*pairs: tuple[str, str]) -> bytes:
    """pax records "length key=value\\n"."""
    out = b""
    for key, value in pairs:
        body = f" {key}={value}\n".encode()
        length = len(body) + len(str(len(body)))
        length = len(body) + len(str(length))  # the length counts its own digits
        out += str(length).encode() + body
    return out


def _extension(kind: bytes, data: bytes) -> bytes:
    return _block("././@PaxHeader", len(data), kind) + _padded(data)


def _member(name: str, data: bytes) -> bytes:
    return _block(name, len(data), tarfile.REGTYPE) + _padded(data)


# What the block reader hands to tarfile (tarfile then reads the archive from its first member)
HANDED_OVER = {
    "a pax global path": _extension(tarfile.XGLTYPE, _records(("path", "renamed.txt"))),
    "a GNU sparse member of size 0": _block("sparse.bin", 0, tarfile.GNUTYPE_SPARSE),
    "a pax sparse record": _extension(tarfile.XHDTYPE, _records(("GNU.sparse.size", "0")))
    + _member("sparse.bin", b""),
}


def _tgz(path, *parts: bytes) -> str:
    with gzip.open(path, "wb", compresslevel=1) as out:
        for part in parts:
            out.write(part)
        out.write(bytes(1024))
    return str(path)


@pytest.mark.parametrize("hand_over", HANDED_OVER)
def test_a_huge_pax_header_after_a_hand_over_to_tarfile_is_named_without_reading_it(tmp_path, hand_over):
    """A game, a variant the block reader leaves to tarfile, then a member whose pax header is
    20 MB: the game is read, the archive named with the limit, and the reader holds far less
    than the header.  Before: tarfile read the header whole (1,000 MB: 3.02 GB, 20-37 s) and
    the import named nothing."""
    header = 20 << 20
    path = _tgz(tmp_path / "hostile.tgz", _member("first.sgf", GAME), HANDED_OVER[hand_over],
                _extension(tarfile.XHDTYPE, _records(("comment", "x" * header))), _member("second.sgf", GAME))
    items, peak = peak_memory(lambda: list(iter_sources([path])))
    assert [type(item) for item in items] == [SourceFile, Skipped], items
    assert items[0].data == GAME
    assert items[1].name == path and f"limit of {tar_blocks.EXTENSION_LIMIT}" in items[1].reason
    assert "extension headers" in items[1].reason
    assert peak < header // 4, f"held {peak:,} bytes for a {header:,}-byte header"


def test_extension_headers_read_by_tarfile_count_as_passed_over(tmp_path):
    """After a hand-over, 30 members whose pax headers are 100 KB each (3 MB): with a limit of
    1 MB passed over, tarfile stops as the block reader would.  Before: their headers were not
    counted on tarfile's path, and every one was read."""
    comment = _records(("comment", "x" * 100_000))
    path = _tgz(tmp_path / "headers.tgz", _member("first.sgf", GAME), HANDED_OVER["a pax global path"],
                *(_extension(tarfile.XHDTYPE, comment) + _member(f"notes{i}.txt", b"") for i in range(30)),
                _member("last.sgf", GAME))
    items = list(iter_sources([path], Limits(max_skip_bytes=1 << 20)))
    assert [type(item) for item in items] == [SourceFile, Skipped], items
    assert items[1].reason.startswith("stopped at the extension headers of member ")
    assert "the limit of 1048576 bytes an archive may pass over" in items[1].reason


def test_pax_global_records_are_held_to_the_limit(tmp_path):
    """Global headers of 200 KB of records each, every one new: tarfile keeps them all (they apply
    to every member after them); past EXTENSION_LIMIT in all the archive is named.  Before: they
    were kept without a bound (20 of them: 4 MB held)."""
    globals_ = [_extension(tarfile.XGLTYPE, _records(*((f"k{n}.{i}", "v" * 1000) for i in range(200))))
                for n in range(20)]
    path = _tgz(tmp_path / "globals.tgz", _member("first.sgf", GAME), HANDED_OVER["a pax global path"],
                *(part + _member(f"notes{n}.txt", b"") for n, part in enumerate(globals_)))
    items = list(sources._read_tar_with_tarfile(path, Limits(), 0, None))
    assert [type(item) for item in items] == [SourceFile, Skipped], items
    assert "pax global records" in items[1].reason


def test_a_chain_of_extension_headers_is_named_not_a_crash(tmp_path):
    """3,000 empty pax headers before one member: tarfile reads such a chain by recursion.
    Before: RecursionError out of the reader (the import stopped)."""
    empty = _extension(tarfile.XHDTYPE, b"")
    path = _tgz(tmp_path / "chain.tgz", _member("first.sgf", GAME), HANDED_OVER["a pax global path"],
                empty * 3000, _member("last.sgf", GAME))
    items = list(iter_sources([path]))
    assert [type(item) for item in items] == [SourceFile, Skipped], items
    assert items[1].name == path


def test_a_gnu_sparse_member_cut_short_is_named_not_a_crash(tmp_path):
    """A GNU sparse header that says more sparse blocks follow, at the end of the archive: tarfile
    reads a block that is not there.  Before: IndexError out of the reader (the import stopped)."""
    block = bytearray(_block("sparse.bin", 0, tarfile.GNUTYPE_SPARSE))
    block[482] = 1  # "isextended"
    block[148:156] = b" " * 8
    block[148:156] = b"%06o\0 " % sum(block)
    path = tmp_path / "cut.tgz"
    with gzip.open(path, "wb") as out:
        out.write(_member("first.sgf", GAME) + bytes(block))
    items = list(iter_sources([str(path)]))
    assert [type(item) for item in items] == [SourceFile, Skipped], items
    assert items[1].reason.startswith("corrupt or unreadable archive after 1 members")


# --- finding 2: the import's report is bounded, whatever the number of skipped members ----------------

def _empty_members(path, count: int) -> str:
    """A .tar.xz of ``count`` empty .sgf members (each skipped: "no SGF data found")."""
    import lzma

    info = tarfile.TarInfo("x.sgf")
    with lzma.open(path, "wb", preset=0) as out:
        for i in range(count):
            info.name = f"g{i}.sgf"
            out.write(info.tobuf(tarfile.USTAR_FORMAT))
        out.write(bytes(1024))
    return str(path)


@pytest.mark.slow  # 25,100 members imported under tracemalloc: 8.5 s of the quick suite, loaded
def test_an_archive_of_empty_members_costs_the_same_memory_at_four_times_the_members(tmp_path):
    """5,000 and 20,000 empty members: the report keeps NOTES_KEPT of them, counts all, and
    writes every one to the listing as it comes; the import holds as much for both.  Before:
    every note was kept (1,000,000 in an 82 KB .tar.xz: 587 MB, 48 MB of stderr)."""
    from fuseki.book.analysis.pipeline.importer import import_paths
    from fuseki.book.analysis.pipeline.report import ImportReport
    from fuseki.book.storage.store import Book

    peaks, reports = [], []
    for count in (100, 5_000, 20_000):  # the first: the import's own first costs (caches, compiled code)
        path = _empty_members(tmp_path / f"empty{count}.tar.xz", count)
        listed = tmp_path / f"report{count}.jsonl"
        with Book.open(str(tmp_path / f"book{count}.sqlite")) as book, open(listed, "w") as out:
            into = ImportReport(listing=(str(listed), out))
            report, peak = peak_memory(lambda: import_paths(book, [path], workers=0, batch_games=500,  # noqa: B023
                                                      report=into))  # noqa: B023 - called at once
        peaks.append(peak)
        reports.append((count, report, listed))
    # before: 5.4 MB and 10.6 MB; now 5.2 MB for both (batches of 500 files, as many notes at most)
    assert peaks[2] < 1.3 * peaks[1], f"held {peaks[1]:,} bytes for 5,000 members, {peaks[2]:,} for 20,000"
    from fuseki.book.analysis.pipeline.report import NOTES_KEPT, SKIPPED

    for count, report, listed in reports:
        assert report.counts[SKIPPED] == count and len(report.skipped) == min(count, NOTES_KEPT)
        assert f"{count:,} files skipped" in str(report)
        with open(listed) as found:
            assert sum(1 for _ in found) == count  # every note, written as it came


# --- finding 3: loadsgf is bounded by the import's limits on property values -----------------------

@pytest.mark.parametrize("data", [b"(;GM[1]SZ[19]XX" + b"[]" * 500_000 + b")",  # one node of empty values
                                  b"(;GM[1]SZ[19]AB" + b"[aa]" * 300_000 + b")"],  # one list of setup stones
                         ids=["empty values", "setup stones"])
def test_loadsgf_refuses_too_many_property_values_before_parsing_them(tmp_path, data):
    """A file of more values than the largest board allows (VALUES_PER_MOVE x its move limit:
    80,000) is refused before sgfmill parses it, saying why, and holds nothing after.  Before:
    sgfmill parsed them all and the game loaded (5.2 M empty values, 10.4 MB: 3.6 s, 434 MB)."""
    import tracemalloc

    from fuseki.engine.gtp.commands import new_engine
    from fuseki.engine.gtp.commands.sgf import MAX_FILE_BYTES

    engine = new_engine(log=lambda text: None)
    path = tmp_path / "values.sgf"
    path.write_bytes(data)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        answer = engine.handle_line(f"loadsgf {path}")
        held, peak = (figure - base for figure in tracemalloc.get_traced_memory())
    finally:
        tracemalloc.stop()
    assert answer.startswith("? cannot load file: over 80000 property values"), answer
    assert peak < MAX_FILE_BYTES + 3 * len(data), f"held {peak:,} bytes for a {len(data):,}-byte file"
    assert held < 1 << 20, f"{held:,} bytes still held after the refusal"


def test_loadsgf_loads_as_many_values_as_the_largest_board_allows():
    """80,000 values (VALUES_PER_MOVE x the move limit of 25x25), brackets inside a comment not
    counted, load; one more is refused."""
    import tempfile

    from fuseki.engine.core.base import MAX_SIZE, VALUES_PER_MOVE, move_limit
    from fuseki.engine.gtp.commands import new_engine

    most = VALUES_PER_MOVE * move_limit(MAX_SIZE)
    engine = new_engine(log=lambda text: None)
    with tempfile.TemporaryDirectory() as folder:
        for extra, expected in ((0, "=\n\n"), (1, f"? cannot load file: over {most} property values")):
            path = f"{folder}/{extra}.sgf"
            with open(path, "wb") as out:  # GM, SZ, the comment's values and B: ``most`` + extra
                out.write(b"(;GM[1]SZ[19]C[[[[\\]]" + b"[x]" * (most - 4 + extra) + b";B[cc])")
            assert engine.handle_line(f"loadsgf {path}").startswith(expected)


# --- finding 4: a process of the import that dies ends it in one line, nothing lost ------------------

DYING_IMPORT = """
import os, signal, sys
from fuseki.book.analysis.pipeline import importer
from fuseki.book.ui.fuseki_command import main

victim = sys.argv[1]
if victim == "reader":  # the reader kills itself before dealing its third group
    dealt = importer._dealt
    def _dealt(*args):
        for turn, item in enumerate(dealt(*args)):
            if turn == 2:
                os.kill(os.getpid(), signal.SIGKILL)
            yield item
    importer._dealt = _dealt
elif victim == "parser":  # a parser kills itself before its second batch
    batches = importer._batches
    made = []
    def _batches(*args):
        for batch in batches(*args):
            made.append(batch)
            if len(made) == 2:
                os.kill(os.getpid(), signal.SIGKILL)
            yield batch
    importer._batches = _batches
sys.exit(main(["import", *sys.argv[2:], "--workers", "2"]))
"""


@pytest.mark.slow  # a crash test: a process of the import killed, the import run again (docs/testing.md)
@pytest.mark.parametrize("victim", ["reader", "parser"])
def test_a_process_of_the_import_that_dies_is_one_line_and_a_rerun_completes(tmp_path, victim):
    """The reader, or a parser, killed (SIGKILL, as the OOM killer does) halfway through an import
    of 2,000 games: `fuseki import` exits 1 with one line naming the process and how it died,
    that nothing is lost and how to go on; the same import again completes the book.  Before:
    a traceback (RuntimeError: the import's reader process died)."""
    import subprocess
    import sys

    from browsing import ENV, ROOT
    from conftest import write_archive
    from games import archive_games

    archive = write_archive(tmp_path / "games.tgz", archive_games(2000))
    book = str(tmp_path / "book.sqlite")
    run = subprocess.run([sys.executable, "-c", DYING_IMPORT, victim, str(archive), "--book", book], cwd=ROOT,
                         env=ENV, capture_output=True, text=True, timeout=300)
    assert run.returncode == 1, run.stderr[-3000:]
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    last = run.stderr.strip().splitlines()[-1]
    name = "import reader" if victim == "reader" else "import parser [01]"
    assert re.fullmatch(rf"fuseki import: stopped: {name} \(process \d+\) died \(killed by signal 9\); nothing is "
                        r"lost: the [\d,]+ games committed before are in the book \(the same import again adds "
                        r"the rest\)", last), last
    again = subprocess.run([sys.executable, "-m", "fuseki", "import", str(archive), "--book", book, "--workers", "2"],
                           cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    from fuseki.book.storage.store import Book

    with Book.open(book, readonly=True) as opened:
        assert opened.stats().games == 2000
