"""SGF fuzz and archive bombs: the importer reports and skips bad input, never crashes,
never hangs, never loses the good games of the same archive, and stays in bounded memory.

Mutants of real Tygem games (seeded): truncation, unbalanced brackets and parentheses,
bad escapes, coordinates off the board, huge or odd ``SZ``, thousands of variations,
trees nested 50,000 deep, tens of thousands of moves, byte flips.  Each goes through
``batches.prepare`` (parse and replay, what the import worker does per file) under a
time limit; then all of them, shuffled among good games, go through a whole import.

Bombs, each imported in a subprocess whose peak RSS is measured (getrusage):
a 1 MB .tgz holding a 1 GiB member of zeros (built by a streaming writer, never on
disk), a .tgz of 120 members of 10 MB of zeros each (1.2 GB), and a zip listing
1,000,001 members; each may take at most 150 MB more than importing one game.
"""

from __future__ import annotations

import os
import random
import signal
import struct
import subprocess
import sys
import tarfile
import time
import zlib
from contextlib import contextmanager
from pathlib import Path

import pytest

from fuseki.book.analysis.pipeline.batches import fingerprint, prepare
from fuseki.book.analysis.pipeline.importer import import_paths
from fuseki.book.formats.sgf_reader import read_games
from fuseki.book.formats.sources import SourceFile
from fuseki.book.storage.store import Book

from conftest import ROOT, write_archive

pytestmark = pytest.mark.slow  # real archives and gigabyte bombs: about a minute
SEED = 4242
SECONDS_PER_FILE = 10.0  # generous: a loaded 2-core CI machine; parsing is linear
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


# --- mutants ---------------------------------------------------------------------------------

def _cut(rng, data):
    return data[:rng.randrange(len(data))]


def _drop_char(char):
    def mutate(rng, data):
        spots = [i for i, b in enumerate(data) if b == ord(char)]
        if not spots:
            return data
        i = rng.choice(spots)
        return data[:i] + data[i + 1:]
    return mutate


def _insert(*pieces):
    def mutate(rng, data):
        i = rng.randrange(len(data))
        return data[:i] + rng.choice(pieces) + data[i:]
    return mutate


def _bad_move(rng, data):
    value = rng.choice([b"zz", b"a{", b"AA", b"", b"aaa", b"\xff\xfe", b"ta", b"at", b"\\]", b"a"])
    i = data.find(b";B[", rng.randrange(len(data)))
    if i < 0:
        i = data.find(b";B[")
    j = data.find(b"]", i)
    return data[:i + 3] + value + data[j:]


def _size(rng, data):
    value = rng.choice([b"99999999999999999999", b"0", b"-1", b"1", b"26", b"52", b"19:13", b"25:25",
                        b"x", b"", b"1e9", b"\xef\xbc\x91\xef\xbc\x99"])
    if b"SZ[" in data:
        i = data.index(b"SZ[")
        return data[:i + 3] + value + data[data.index(b"]", i):]
    return data.replace(b"(;", b"(;SZ[" + value + b"]", 1)


def _variations(rng, data):
    tail = data.rstrip()[:-1]
    branches = b"".join(b"(;B[%s%s];W[aa])" % (bytes([97 + i % 19]), bytes([97 + i // 19 % 19]))
                        for i in range(rng.randint(2000, 6000)))
    return tail + b"(;B[ss])" + branches + b")"


def _nested(rng, data):
    depth = 50_000
    return b"(;SZ[19]" + b"(;B[aa]" * depth + b")" * (depth + 1)


def _long_game(rng, data):
    moves = b"".join(b";B[tt];W[tt]" for _ in range(rng.randint(5000, 20000)))
    return b"(;SZ[19]" + moves + b")"


def _flip(rng, data):
    data = bytearray(data)
    for _ in range(rng.randint(1, 20)):
        data[rng.randrange(len(data))] = rng.randrange(256)
    return bytes(data)


def _escapes(rng, data):
    i = data.find(b"]", rng.randrange(len(data)))
    return data[:i] + b"\\" + data[i:] if i > 0 else data + b"\\"


MUTATIONS = {
    "truncated": _cut,
    "no ]": _drop_char("]"),
    "no [": _drop_char("["),
    "no )": _drop_char(")"),
    "no (": _drop_char("("),
    "extra brackets": _insert(b"[", b"]", b"(", b")", b"((", b"))", b";", b"[[", b"\\"),
    "bad escape": _escapes,
    "move off the board": _bad_move,
    "odd SZ": _size,
    "thousands of variations": _variations,
    "nested 50,000 deep": _nested,
    "20,000 moves": _long_game,
    "byte flips": _flip,
    "junk": lambda rng, data: rng.randbytes(rng.randint(0, 3000)),
}


def mutants(games: list[tuple[str, bytes]], per_kind: int, seed: int = SEED) -> list[tuple[str, str, bytes]]:
    """(kind, name, bytes) for ``per_kind`` mutants of each kind (only 2 of the big ones)."""
    rng = random.Random(seed)
    out = []
    for kind, mutate in MUTATIONS.items():
        count = 2 if kind in ("thousands of variations", "nested 50,000 deep", "20,000 moves") else per_kind
        for n in range(count):
            name, data = rng.choice(games)
            out.append((kind, f"bad/{kind.replace(' ', '_')}-{n}.sgf", mutate(rng, data)))
    return out


class TookTooLong(Exception):
    pass


@contextmanager
def time_limit(seconds: float):
    def expire(signum, frame):
        raise TookTooLong
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_mutated_sgf_is_reported_never_crashes_nor_hangs(tygem_games):
    prepare([SourceFile("warm-up.sgf", b"(;SZ[9];B[aa];W[aa])")])  # loads the kernels an anomaly needs
    outcomes = {}
    slowest = (0.0, "")
    for kind, name, data in mutants(tygem_games[:300], per_kind=25):
        started = time.perf_counter()
        try:
            with time_limit(SECONDS_PER_FILE):
                prepared = prepare([SourceFile(name, data)])
        except TookTooLong:
            pytest.fail(f"{kind}: {name} took over {SECONDS_PER_FILE} s: {data[:200]!r}")
        except Exception as exc:  # noqa: BLE001 - the point: nothing may escape
            pytest.fail(f"{kind}: {name} raised {type(exc).__name__}: {exc}\n{data[:300]!r}")
        slowest = max(slowest, (time.perf_counter() - started, name))
        for note in prepared.skipped:
            assert note.name == name and note.reason.strip(), prepared.skipped
        assert prepared.games or prepared.skipped, f"{name}: neither a game nor a reason"
        stored, skipped = outcomes.get(kind, (0, 0))
        outcomes[kind] = (stored + len(prepared.games), skipped + len(prepared.skipped))
    print(f"\nSGF fuzz (games stored, files skipped) by kind: {outcomes}; slowest {slowest[0]:.2f} s ({slowest[1]})")
    assert outcomes["junk"][1] >= 20 and outcomes["no ]"][1] >= 1


def test_an_archive_of_good_and_bad_files_keeps_every_good_game(tmp_path, tygem_games):
    good = tygem_games[300:700]
    bad = [(name, data) for _, name, data in mutants(tygem_games[:300], per_kind=10, seed=SEED + 1)]
    members = good + bad
    random.Random(SEED).shuffle(members)
    archive = write_archive(tmp_path / "mixed.tgz", members)
    with Book.open(str(tmp_path / "book.sqlite")) as book:
        report = import_paths(book, [str(archive)], workers=1, batch_games=100)
        with book.db.connect() as conn:
            stored = set(conn.exec_driver_sql("SELECT fingerprint FROM games").scalars())
    wanted = {fingerprint(read_games(data, name)[0]) for name, data in good}
    assert wanted <= stored, f"{len(wanted - stored)} good games lost; report: {report}"
    skipped = {note.member for note in report.skipped}
    assert skipped <= {name for name, _ in bad} and len(skipped) >= 30, report.skipped[:5]


# --- bombs -----------------------------------------------------------------------------------

PIECE = 1 << 20
ZEROS = bytes(PIECE)


def write_tgz_of_zeros(path: Path, members: list[tuple[str, bytes | int]]) -> int:
    """A .tgz of members (name, bytes or a size of zeros), never holding the zeros.

    The deflate stream is flushed (Z_FULL_FLUSH) after every piece, which resets the
    compressor, so a MiB of zeros always compresses to the same bytes: computed once,
    written as often as needed.  Returns the uncompressed size.
    """
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    crc, total, cached = 0, 0, None

    def piece(data: bytes) -> bytes:
        return packer.compress(data) + packer.flush(zlib.Z_FULL_FLUSH)

    with open(path, "wb") as out:
        out.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff")  # gzip header
        for name, content in members:
            info = tarfile.TarInfo(name)
            info.size = content if isinstance(content, int) else len(content)
            head = info.tobuf(format=tarfile.GNU_FORMAT)
            body = b"" if isinstance(content, int) else content + bytes(-len(content) % 512)
            for data in (head, body):
                out.write(piece(data))
                crc, total = zlib.crc32(data, crc), total + len(data)
            if isinstance(content, int):
                padded = -(-content // 512) * 512
                whole, rest = divmod(padded, PIECE)
                cached = cached or piece(ZEROS)
                for _ in range(whole):
                    out.write(cached)
                    crc = zlib.crc32(ZEROS, crc)
                out.write(piece(bytes(rest)))
                crc, total = zlib.crc32(bytes(rest), crc), total + padded
        out.write(packer.compress(bytes(1024)) + packer.flush())
        crc, total = zlib.crc32(bytes(1024), crc), total + 1024
        out.write(struct.pack("<II", crc, total & 0xFFFFFFFF))
    return total


def write_zip_listing(path: Path, entries: int, name: bytes = b"g.sgf", declared: int | None = None) -> None:
    """A ZIP64 whose central directory lists ``entries`` members, all one empty local file; its
    end records say ``declared`` members (default: ``entries``; fewer is a lie)."""
    said = entries if declared is None else declared
    local = struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 0, 0, 0x21, 0, 0, 0, len(name), 0) + name
    record = struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 45, 20, 0, 0, 0, 0x21, 0, 0, 0,
                         len(name), 0, 0, 0, 0, 0, 0) + name
    directory = record * entries
    end64 = struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, said, said,
                        len(directory), len(local))
    locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, len(local) + len(directory), 1)
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    with open(path, "wb") as out:
        for part in (local, directory, end64, locator, end):
            out.write(part)


MEASURE = """
import os, resource, sys, time
from fuseki.book.analysis.pipeline.importer import import_paths
from fuseki.book.storage.store import Book
start = time.perf_counter()
with Book.open(sys.argv[1]) as book:
    report = import_paths(book, sys.argv[2:], workers=int(os.environ.get("WORKERS", "0")))
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(report.added, max(peak, children) // 1024, f"{time.perf_counter() - start:.1f}")
for note in report.skipped[:5]:
    print(note.name, "|", note.reason)
"""


def import_measured(tmp_path: Path, paths: list[Path], workers: int = 0, timeout: float = 120):
    """(games added, peak RSS in MB, seconds, skipped lines) of an import in a subprocess."""
    run = subprocess.run([sys.executable, "-c", MEASURE, str(tmp_path / "book.sqlite"), *map(str, paths)],
                         cwd=ROOT, env={**ENV, "WORKERS": str(workers)}, capture_output=True, text=True,
                         timeout=timeout)
    assert run.returncode == 0, run.stderr[-3000:]
    head, *skipped = run.stdout.splitlines()
    added, rss, seconds = head.split()
    return int(added), int(rss), float(seconds), skipped


@pytest.fixture(scope="module")
def rss_limit(tmp_path_factory, tygem_games) -> int:
    """Peak RSS (MB) allowed for a bomb's import: a one-game import's, plus 150 MB.

    The base varies with the machine and with numba's cache (compiling takes memory);
    before the fixes the bombs below took 440 MB and 1,000 MB more than it.
    """
    folder = tmp_path_factory.mktemp("baseline")
    name, game = tygem_games[0]
    (folder / "one.sgf").write_bytes(game)
    _, rss, _, _ = import_measured(folder, [folder / "one.sgf"], workers=1)
    return rss + 150


def test_a_gigabyte_member_is_refused_and_the_next_game_read(tmp_path, tygem_games, rss_limit):
    name, game = tygem_games[0]
    bomb = tmp_path / "bomb.tgz"
    size = write_tgz_of_zeros(bomb, [("zeros.sgf", 1 << 30), (name, game)])
    assert size > 1 << 30 and bomb.stat().st_size < 2 << 20
    added, rss, seconds, skipped = import_measured(tmp_path, [bomb])
    print(f"\n1 GiB member in a {bomb.stat().st_size:,}-byte .tgz: refused in {seconds} s, peak RSS {rss} MB")
    assert added == 1
    assert skipped == [f"{bomb}:zeros.sgf | {1 << 30} bytes uncompressed, over the limit of {10 << 20}"]
    assert rss < rss_limit


def test_many_large_members_stay_in_bounded_memory(tmp_path, rss_limit):
    bomb = tmp_path / "wide.tgz"
    write_tgz_of_zeros(bomb, [(f"zeros/{i}.sgf", 10 << 20) for i in range(120)])
    added, rss, seconds, skipped = import_measured(tmp_path, [bomb], workers=1, timeout=240)
    print(f"\n120 members of 10 MiB zeros in a {bomb.stat().st_size:,}-byte .tgz: {seconds} s, "
          f"peak RSS {rss} MB")
    assert added == 0 and len(skipped) == 5
    assert rss < rss_limit, f"peak RSS {rss} MB: the importer holds the members of a whole chunk at once"


def test_a_zip_listing_a_million_members_is_refused_in_bounded_memory(tmp_path, tygem_games, rss_limit):
    bomb = tmp_path / "million.zip"
    write_zip_listing(bomb, 1_000_001)
    name, game = tygem_games[0]
    (tmp_path / "good.sgf").write_bytes(game)
    added, rss, seconds, skipped = import_measured(tmp_path, [bomb, tmp_path / "good.sgf"])
    print(f"\nzip listing 1,000,001 members ({bomb.stat().st_size:,} bytes): refused in {seconds} s, "
          f"peak RSS {rss} MB")
    assert added == 1
    assert skipped == [f"{bomb} | 1000001 members, over the limit of 1000000"]
    assert rss < rss_limit  # its time is printed, never asserted: it depends on the machine


def test_a_zip_whose_end_record_lies_about_its_members_is_refused_at_once(tmp_path, tygem_games, rss_limit):
    bomb = tmp_path / "liar.zip"
    write_zip_listing(bomb, 1_000_001, declared=1)  # zipfile would build a ZipInfo for each listed one
    name, game = tygem_games[0]
    (tmp_path / "good.sgf").write_bytes(game)
    added, rss, seconds, skipped = import_measured(tmp_path, [bomb, tmp_path / "good.sgf"])
    print(f"\nzip listing 1,000,001 members, its end records saying 1: refused in {seconds} s, peak RSS {rss} MB")
    assert added == 1
    assert skipped == [f"{bomb} | more than 1000000 members listed (its end record says 1), over the limit of 1000000"]
    assert rss < rss_limit
