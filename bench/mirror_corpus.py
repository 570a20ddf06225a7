"""Mirror images and colour-swapped copies of SGF archives: the corpus of 1.5 million games (issue 42).

    python3 bench/mirror_corpus.py --into DIR [--variants mirror,colours,mirror-colours] [--workers N]
                                   [--level L] [--fingerprints] SOURCE...

Example (the whole shared data: 377,995 originals, three copies of each)::

    mkdir -p ../big/mirror
    nice -n 10 python3 bench/mirror_corpus.py --into ../big/mirror \\
        ../shared/data/tygem-2005-2009 ../shared/data/tygem-2016-07.tgz
    fuseki import ../shared/data/tygem-2005-2009 ../shared/data/tygem-2016-07.tgz ../big/mirror --book big.sqlite

A SOURCE is a .tgz (.tar.gz, .tar) archive or a folder of them.  For each source archive and
each variant one new archive is written into DIR (``tygem-2006-01.mirror.tgz``), holding every
SGF member of the source transformed, under the variant's folder (``mirror/tygem/82259393.sgf``)
so that names stay unique beside the originals; other members are left out, and the originals
are not copied (import them from where they are).  The variants:

- ``mirror``: every point reflected left-right (column x -> columns-1-x, the columns from SZ,
  19 without one) in every point-valued property: the moves B and W, the setup AB, AW, AE,
  and the markup TR, SQ, CR, MA, SL, TB, TW, DD, VW (and FF[3]'s L and M), LB's point, AR's
  and LN's two points.  Passes (``B[]``, and ``B[tt]`` on boards of 19 or less) stay passes;
  a compressed list (``AB[aa:cc]``) becomes the reflected rectangle, upper left first.
- ``colours``: Black and White swap their names: B <-> W, AB <-> AW, PB <-> PW, BR <-> WR,
  BT <-> WT, TB <-> TW, OB <-> OW, BL <-> WL, GB <-> GW (good for Black), PL's value, and RE's winner (``B+R`` <->
  ``W+R``, ``B+2.5`` <-> ``W+2.5``; ``0``, ``Draw``, ``Void``, ``?`` stay).  KM stays as the
  record gives it: the copy is the same game with the colours renamed, so the komi the record
  states is the komi that game was played under (the new "Black" received it), and a komi
  made up for the swapped colours would be a result the record never had.  HA stays (the
  handicap stones are the same stones, now White's).
- ``mirror-colours``: both.

Every copy is a new game for the book: ``fuseki import`` deduplicates by a fingerprint of the
setup and move points and colours (book/analysis/pipeline/batches.py ``fingerprint``), and a
mirrored or colour-swapped game has other points or colours (tests/test_mirror_corpus.py
imports original and copies into one book: four times the games, no duplicates).  A game
symmetric under the reflection (no moves at all, or passes alone) would be its own mirror image.

The copies are made on the SGF text, as bytes (Tygem's files may be GB18030 or EUC-KR: nothing
is decoded): a regular expression splits a file into properties, a property's values running
to the first unescaped ``]``, so comments and other text values are copied byte for byte; the
common ``;B[pd]`` goes through one dictionary look-up.  One process per core (``--workers``)
takes whole archives.  Progress goes to stderr (archives done, copies/s, time left from the
source bytes still to read); at the end stdout gets the exact count of games written per
variant and in all, with their bytes.  A game a variant cannot transform (a point off its
board) is left out of that variant and counted.  ``--fingerprints`` then reads originals and
copies as ``fuseki import`` does and counts their distinct fingerprints: the games a book of
them all holds (1,511,588 of the 1,511,980 on the shared data, docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import signal
import sys
import tarfile
import time
import zlib
from functools import cache
from pathlib import Path

from fuseki.book.analysis.pipeline import batches
from fuseki.book.formats import sources as sources_module
from fuseki.book.formats.sgf_reader import SgfError
from fuseki.engine.core.base import MAX_SIZE, MIN_SIZE

VARIANTS = ("mirror", "colours", "mirror-colours")
# A property value: to the first unescaped ``]`` (``\\]`` and ``\\\\`` are escapes inside it).
# (Unrolled, ``[^\\\]]*(?:\\.[^\\\]]*)*``: half the time of ``(?:[^\\\]]|\\.)*``.)
_VALUE = rb"\[[^\\\]]*(?:\\.[^\\\]]*)*\]"
# One property: its identifier and its values.  A bare value (no identifier, a broken file)
# is taken whole as well, so that a ``[`` inside it never starts a property of its own.
PROPERTY = re.compile(rb"([A-Z]*\s*" + _VALUE + rb"(?:\s*" + _VALUE + rb")*)", re.S)
VALUE = re.compile(rb"\[([^\\\]]*(?:\\.[^\\\]]*)*)\]", re.S)
IDENT = re.compile(rb"[A-Z]*")
SIZE = re.compile(rb"\s*(\d+)\s*(?::\s*(\d+)\s*)?$")

MOVES = {b"B", b"W"}
# Values that are points or compressed point lists (``aa:cc``).
POINT_LISTS = {b"AB", b"AW", b"AE", b"TR", b"SQ", b"CR", b"MA", b"SL", b"TB", b"TW", b"DD", b"VW",
               b"L", b"M"}
POINT_PAIRS = {b"AR", b"LN"}  # ``aa:cc``: from a point to a point (order kept: an arrow's direction)
LABELS = {b"LB"}  # ``aa:text``
_PAIRS = [(b"B", b"W"), (b"AB", b"AW"), (b"PB", b"PW"), (b"BR", b"WR"), (b"BT", b"WT"),
          (b"TB", b"TW"), (b"OB", b"OW"), (b"BL", b"WL"), (b"GB", b"GW")]
SWAPPED = {**{b: w for b, w in _PAIRS}, **{w: b for b, w in _PAIRS}}
_LETTERS = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_INDEX = {letter: i for i, letter in enumerate(_LETTERS)}
_OTHER = {ord("B"): b"W", ord("W"): b"B", ord("b"): b"w", ord("w"): b"b"}


class Untransformable(ValueError):
    """A game a variant cannot copy (a point off its board): left out of that variant."""


def _column(letter: int, columns: int) -> int:
    """The mirrored column of a coordinate letter."""
    x = _INDEX.get(letter)
    if x is None or x >= columns:
        raise Untransformable(f"column {chr(letter)!r} is off a board of {columns} columns")
    return _LETTERS[columns - 1 - x]


def _point(value: bytes, columns: int) -> bytes:
    if len(value) != 2:
        raise Untransformable(f"{value!r} is not a point")
    return bytes((_column(value[0], columns), value[1]))


def _point_list_value(value: bytes, columns: int) -> bytes:
    """A point, or a rectangle ``ul:lr``, reflected (the rectangle again upper left first)."""
    if not value:
        return value  # VW[]: the whole board
    first, colon, second = value.partition(b":")
    if not colon:
        return _point(first, columns)
    a, b = _point(first, columns), _point(second, columns)
    (left, right), (top, bottom) = sorted((a[0], b[0]), key=_INDEX.get), sorted((a[1], b[1]), key=_INDEX.get)
    return bytes((left, top)) + b":" + bytes((right, bottom))


def _move(value: bytes, columns: int) -> bytes:
    if not value.strip() or (value == b"tt" and columns <= 19):
        return value  # a pass stays a pass
    return _point(value, columns)


def _result(value: bytes) -> bytes:
    """RE with the winner's colour swapped: ``B+...``/``W+...`` and a bare ``B``/``W`` (as
    book.formats.sgf_headers reads a winner); draws, voids, ``0`` and ``?`` as they are."""
    stripped = value.lstrip()
    head = len(value) - len(stripped)
    if stripped and stripped[0] in _OTHER and (stripped[1:2] == b"+" or not stripped[1:].strip()):
        return value[:head] + _OTHER[stripped[0]] + stripped[1:]
    return value


def _player(value: bytes) -> bytes:
    stripped = value.strip()
    return _OTHER[stripped[0]] if len(stripped) == 1 and stripped[0] in _OTHER else value


def transform_property(chunk: bytes, columns: int, mirror: bool, colours: bool) -> bytes:
    """One property (identifier and values, as PROPERTY matched it), transformed; the same
    bytes when the variant leaves it as it is."""
    ident = IDENT.match(chunk).group()
    values = None
    if mirror:
        if ident in MOVES:
            values = [_move(v, columns) for v in VALUE.findall(chunk)]
        elif ident in POINT_LISTS:
            values = [_point_list_value(v, columns) for v in VALUE.findall(chunk)]
        elif ident in POINT_PAIRS:
            values = []
            for v in VALUE.findall(chunk):
                first, colon, second = v.partition(b":")
                if not colon:
                    raise Untransformable(f"{ident.decode()}[{v.decode('latin-1')}] is not two points")
                values.append(_point(first, columns) + b":" + _point(second, columns))
        elif ident in LABELS:
            values = []
            for v in VALUE.findall(chunk):
                point, colon, text = v.partition(b":")
                values.append(_point(point, columns) + colon + text)
    if colours:
        if ident == b"PL":
            values = [_player(v) for v in VALUE.findall(chunk)]
        elif ident == b"RE":
            values = [_result(v) for v in VALUE.findall(chunk)]
        new_ident = SWAPPED.get(ident, ident)
    else:
        new_ident = ident
    if values is None:
        if new_ident == ident:
            return chunk  # comments, names, everything else: byte for byte
        return new_ident + chunk[len(ident):]
    return new_ident + b"".join(b"[" + v + b"]" for v in values)


@cache
def _common(columns: int, mirror: bool, colours: bool) -> dict[bytes, bytes]:
    """The transformed ``B[xy]``/``W[xy]``/``B[]``/``W[]`` of a board: one look-up a move."""
    table = {}
    for colour in (b"B", b"W"):
        for value in [b""] + [bytes((x, y)) for x in _LETTERS[:columns] for y in _LETTERS[:columns]]:
            chunk = colour + b"[" + value + b"]"
            table[chunk] = transform_property(chunk, columns, mirror, colours)
        if columns <= 19:
            table[colour + b"[tt]"] = transform_property(colour + b"[tt]", columns, mirror, colours)
    return table


def _columns(chunk: bytes) -> int:
    value = VALUE.search(chunk)
    match = SIZE.match(value.group(1)) if value else None
    if not match or not 1 <= int(match.group(1)) <= 52:
        raise Untransformable(f"SZ {chunk[2:].decode('latin-1')!r} is no board size (1-52)")
    return int(match.group(1))


def transform(data: bytes, mirror: bool, colours: bool, name: str = "the game") -> bytes:
    """An SGF file's bytes as the variant copies them.  Raises Untransformable."""
    return transform_parts(PROPERTY.split(data), data, mirror, colours, name)


def transform_parts(parts: list[bytes], data: bytes, mirror: bool, colours: bool, name: str = "the game") -> bytes:
    """``transform`` of a file already split by PROPERTY (``parts``: split once for every variant)."""
    out = parts.copy()
    chunks = parts[1::2]
    try:
        sizes = data.count(b"SZ")  # SZ[...] is in the root node: the first found is the board
        if sizes <= 1:  # (one SZ, or none: 19; "SZ" in a comment only costs the scan)
            width = next((_columns(c) for c in chunks if c[:2] == b"SZ" and IDENT.match(c).group() == b"SZ"),
                         19) if sizes else 19
            common = _common(width, mirror, colours)
            out[1::2] = [common.get(c) or transform_property(c, width, mirror, colours) for c in chunks]
        else:  # maybe games of several sizes in one file: each property under the SZ before it
            width = 19
            for i in range(1, len(out), 2):
                if out[i][:2] == b"SZ" and IDENT.match(out[i]).group() == b"SZ":
                    width = _columns(out[i])
                out[i] = transform_property(out[i], width, mirror, colours)
    except Untransformable as error:
        raise Untransformable(f"{name}: {error}") from None
    return b"".join(out)


FLAGS = {"mirror": (True, False), "colours": (False, True), "mirror-colours": (True, True)}


def archive_stem(path: Path) -> str:
    name = path.name
    for suffix in (".tar.gz", ".tgz", ".tar"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def sources(paths: list[str]) -> list[Path]:
    """The archives named or inside the folders named, in order; SystemExit for a bad path."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            inside = sorted(p for p in path.rglob("*") if p.is_file() and p.name.endswith((".tgz", ".tar.gz", ".tar")))
            if not inside:
                raise SystemExit(f"{raw}: no .tgz archive in this folder")
            found += inside
        elif path.is_file():
            if not path.name.endswith((".tgz", ".tar.gz", ".tar")):
                raise SystemExit(f"{raw}: not a .tgz, .tar.gz or .tar archive")
            found.append(path)
        else:
            raise SystemExit(f"{raw}: no such file or folder")
    return found


_BLOCK = 512
_RECORD = 20 * _BLOCK  # tar's blocking: the archive's length a multiple of it, as tarfile writes
_ZEROS = bytes(_RECORD)


def tar_header(name: str, size: int, mtime: int) -> bytes:
    """A member's ustar header (a regular file, mode 644), made here: tarfile's TarInfo takes
    longer than the game's copy (a long name gets tarfile's GNU header)."""
    raw = name.encode("utf-8", "surrogateescape")
    if len(raw) > 100 or not 0 <= mtime < 8 ** 11:
        info = tarfile.TarInfo(name)
        info.size, info.mtime, info.mode = size, max(0, min(mtime, 8 ** 11 - 1)), 0o644
        return info.tobuf(tarfile.GNU_FORMAT, "utf-8", "surrogateescape")
    block = bytearray(_BLOCK)
    block[:len(raw)] = raw
    block[100:148] = b"0000644\0" + b"0000000\0" * 2 + b"%011o\0" % size + b"%011o\0" % mtime
    block[148:156] = b" " * 8  # the checksum counts its own field as spaces
    block[156] = ord("0")
    block[257:265] = b"ustar\x0000"
    block[148:156] = b"%06o\0 " % sum(block)
    return bytes(block)


class TarWriter:
    """A .tgz written member by member: headers from tar_header, gzip through zlib in pieces of
    about a megabyte."""

    def __init__(self, path: Path, level: int):
        self.file = open(path, "wb")
        self.zip = zlib.compressobj(level, zlib.DEFLATED, 31)  # 31: a gzip header and trailer
        self.pending: list[bytes] = []
        self.pending_bytes = self.length = 0

    def add(self, name: str, data: bytes, mtime: int) -> None:
        header = tar_header(name, len(data), mtime)
        pad = _ZEROS[:-len(data) % _BLOCK]
        self.pending += (header, data, pad)
        size = len(header) + len(data) + len(pad)
        self.pending_bytes += size
        self.length += size
        if self.pending_bytes >= 1 << 20:
            self._flush()

    def _flush(self) -> None:
        self.file.write(self.zip.compress(b"".join(self.pending)))
        self.pending, self.pending_bytes = [], 0

    def close(self) -> None:
        """The end: two zero blocks, zeros to the record's end, the gzip trailer."""
        end = 2 * _BLOCK
        self.pending.append(_ZEROS[:end + (-(self.length + end) % _RECORD)])
        self._flush()
        self.file.write(self.zip.flush())
        self.file.close()

    def abandon(self) -> None:
        self.file.close()


def copy_archive(job: tuple[str, str, tuple[str, ...], int]) -> dict:
    """Write one archive's copies (one per variant) into the folder; returns the counts.

    The archive is read as ``fuseki import`` reads it (book.formats.sources.iter_sources: the
    same members, the same limits); what it skips is counted, not copied."""
    source, into, variants, level = job
    stem = archive_stem(Path(source))
    targets = {v: Path(into) / f"{stem}.{v}.tgz" for v in variants}
    parts = {v: Path(f"{t}.part") for v, t in targets.items()}
    outs = {v: TarWriter(parts[v], level) for v in variants}
    flags = [(v, *FLAGS[v]) for v in variants]
    written = dict.fromkeys(variants, 0)
    left_out: dict[str, list[str]] = {v: [] for v in variants}
    originals, unread, mtime = 0, [], int(os.stat(source).st_mtime)
    try:
        for item in sources_module.iter_sources([source]):
            if isinstance(item, sources_module.Skipped):
                unread.append(f"{item.name}: {item.reason}")
                continue
            if not (item.member or "").lower().endswith(".sgf"):
                continue  # not a game file (a Fuego book.dat inside an archive, say)
            originals += 1
            data = item.data
            split = PROPERTY.split(data)
            for variant, mirror, colours in flags:
                try:
                    copy = transform_parts(split, data, mirror, colours, name=item.name)
                except Untransformable as error:
                    left_out[variant].append(str(error))
                    continue
                outs[variant].add(f"{variant}/{item.member.lstrip('/')}", copy, mtime)
                written[variant] += 1
    except BaseException:
        for variant in variants:
            outs[variant].abandon()
            parts[variant].unlink(missing_ok=True)
        raise
    for variant in variants:
        outs[variant].close()
        os.replace(parts[variant], targets[variant])
    return {"source": source, "originals": originals, "written": written, "left_out": left_out,
            "unread": unread, "bytes": {v: targets[v].stat().st_size for v in variants}}


def fingerprints(path: str) -> tuple[str, list[int], int]:
    """(path, the fingerprints of its games, files fuseki import would skip) of one archive, read
    and parsed as ``fuseki import`` does (book.analysis.pipeline.batches.read_source)."""
    found, skipped = [], 0
    for item in sources_module.iter_sources([path]):
        if isinstance(item, sources_module.Skipped):
            skipped += 1
            continue
        try:
            records = batches.read_source(item)
        except (SgfError, UnicodeDecodeError):
            skipped += 1
            continue
        found += [batches.fingerprint(r) for r in records if MIN_SIZE <= r.size <= MAX_SIZE]
    return path, found, skipped


def count_fingerprints(originals: list[Path], copies: dict[str, list[Path]], workers: int, log=sys.stderr) -> dict:
    """The games ``fuseki import`` would add from the originals and each variant's copies: their
    distinct fingerprints, and how many of a variant's are also another set's."""
    sets = {"originals": [str(p) for p in originals], **{v: [str(p) for p in ps] for v, ps in copies.items()}}
    owner = {path: name for name, paths in sets.items() for path in paths}
    seen: dict[str, set[int]] = {name: set() for name in sets}
    games = dict.fromkeys(sets, 0)
    skipped = dict.fromkeys(sets, 0)
    began = time.perf_counter()
    pool = multiprocessing.Pool(workers, _worker_start) if workers > 1 else None
    try:
        results = pool.imap_unordered(fingerprints, list(owner)) if pool else map(fingerprints, list(owner))
        for n, (path, found, unread) in enumerate(results, 1):
            seen[owner[path]].update(found)
            games[owner[path]] += len(found)
            skipped[owner[path]] += unread
            if n % 20 == 0 or n == len(owner):
                print(f"  fingerprints: {n}/{len(owner)} archives, {sum(games.values()):,} games, "
                      f"{time.perf_counter() - began:,.0f} s", file=log, flush=True)
    finally:
        if pool:
            pool.terminate()
            pool.join()
    everything = set().union(*seen.values())
    shared = {name: sum(len(seen[name] & seen[other]) for other in sets if other != name) for name in sets}
    return {"games": games, "distinct": {n: len(seen[n]) for n in sets}, "skipped": skipped, "shared": shared,
            "all": len(everything), "read": sum(games.values())}


def _worker_start() -> None:
    """A worker leaves Ctrl-C to the main process, which ends the pool (SIGTERM: see main)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60} min {seconds % 60:02d} s" if seconds >= 60 else f"{seconds} s"


def build(paths: list[Path], into: Path, variants: tuple[str, ...], workers: int, level: int = 1,
          log=sys.stderr) -> dict:
    """Copy every archive with ``workers`` processes; returns the totals (progress on ``log``)."""
    into.mkdir(parents=True, exist_ok=True)
    stems = [archive_stem(p) for p in paths]
    twice = sorted({s for s in stems if stems.count(s) > 1})
    if twice:
        raise SystemExit(f"two source archives named {twice[0]}: their copies would have one name in {into}")
    inside = [p for p in paths if p.resolve().parent == into.resolve()]
    if inside:
        raise SystemExit(f"{inside[0]}: a source inside --into {into} (its copies would be copied again)")
    sizes = {str(p): p.stat().st_size for p in paths}
    total_bytes = sum(sizes.values()) or 1
    # The biggest first: the last archive a process takes is a small one.
    jobs = [(str(p), str(into), variants, level) for p in sorted(paths, key=lambda p: -sizes[str(p)])]
    totals = {"originals": 0, "unread": [], "written": dict.fromkeys(variants, 0), "bytes": dict.fromkeys(variants, 0),
              "left_out": {v: [] for v in variants}}
    began, done_bytes = time.perf_counter(), 0
    pool = multiprocessing.Pool(workers, _worker_start) if workers > 1 else None
    try:
        results = pool.imap_unordered(copy_archive, jobs) if pool else map(copy_archive, jobs)
        for n, result in enumerate(results, 1):
            totals["originals"] += result["originals"]
            totals["unread"] += result["unread"]
            for v in variants:
                totals["written"][v] += result["written"][v]
                totals["bytes"][v] += result["bytes"][v]
                totals["left_out"][v] += result["left_out"][v]
            done_bytes += sizes[result["source"]]
            elapsed = time.perf_counter() - began
            copies = sum(totals["written"].values())
            left = elapsed * (total_bytes - done_bytes) / max(done_bytes, 1)
            print(f"[{n}/{len(jobs)}] {Path(result['source']).name}: {result['originals']:,} games; "
                  f"{copies:,} copies so far, {copies / max(elapsed, 1e-9):,.0f} copies/s, "
                  f"{_duration(left)} left", file=log, flush=True)
        if pool:
            pool.close()
            pool.join()
    finally:
        if pool:
            pool.terminate()  # an interrupted run leaves no worker behind (their .part files are removed)
            pool.join()
            for variant in variants:
                for path in paths:
                    Path(f"{into / archive_stem(path)}.{variant}.tgz.part").unlink(missing_ok=True)
    totals["seconds"] = time.perf_counter() - began
    return totals


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 bench/mirror_corpus.py", description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n  nice -n 10 python3 bench/mirror_corpus.py --into ../big/mirror "
               "../shared/data/tygem-2005-2009 ../shared/data/tygem-2016-07.tgz\n"
               "  (3 x 377,995 copies: one archive a source and variant, e.g. tygem-2006-01.mirror.tgz)")
    parser.add_argument("sources", nargs="+", metavar="SOURCE", help="a .tgz archive or a folder of them")
    parser.add_argument("--into", required=True, metavar="DIR", help="the folder the copies are written into")
    parser.add_argument("--variants", default=",".join(VARIANTS),
                        help=f"comma-separated, of {', '.join(VARIANTS)} (default: all three)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="processes (default: one a core)")
    parser.add_argument("--level", type=int, default=1, choices=range(1, 10), metavar="1-9",
                        help="gzip level of the copies (default 1: level 6 takes 6x the CPU for 20%% fewer bytes)")
    parser.add_argument("--fingerprints", action="store_true",
                        help="then read originals and copies as fuseki import does and count their distinct "
                             "fingerprints: the games a book of them all would hold")
    args = parser.parse_args(argv)
    variants = tuple(v.strip() for v in args.variants.split(",") if v.strip())
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown or not variants:
        parser.error(f"--variants: {unknown[0] if unknown else 'none'} is not one of {', '.join(VARIANTS)}")
    paths = sources(args.sources)
    # A kill (SIGTERM) ends like Ctrl-C: the workers are ended and no half-written .part is left
    # (the workers inherit it: each removes its own .part when the pool ends it).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    try:
        totals = build(paths, Path(args.into), variants, args.workers, args.level)
    except KeyboardInterrupt:
        print(f"interrupted: the archives copied so far are in {args.into}, none half-written", file=sys.stderr)
        return 130
    print(f"originals read (not copied): {totals['originals']:,} games in {len(paths)} archives")
    if totals["unread"]:
        unread = totals["unread"]
        print(f"members not read (as fuseki import skips them): {len(unread):,}, first: {unread[0]}")
    for v in variants:
        left = totals["left_out"][v]
        print(f"{v}: {totals['written'][v]:,} games written, {totals['bytes'][v]:,} bytes"
              + (f"; {len(left):,} left out (first: {left[0]})" if left else ""))
    copies = sum(totals["written"].values())
    print(f"copies: {copies:,} games, {sum(totals['bytes'].values()):,} bytes, in {_duration(totals['seconds'])}"
          f" ({copies / max(totals['seconds'], 1e-9):,.0f} copies/s)")
    print(f"with the originals: {copies + totals['originals']:,} games")
    if args.fingerprints:
        into = Path(args.into)
        made = {v: [into / f"{archive_stem(p)}.{v}.tgz" for p in paths] for v in variants}
        found = count_fingerprints(paths, made, args.workers)
        for name, games in found["games"].items():
            print(f"fingerprints of {name}: {games:,} games read ({found['skipped'][name]:,} files skipped), "
                  f"{found['distinct'][name]:,} distinct, {found['shared'][name]:,} also in another set")
        print(f"a book of them all would hold {found['all']:,} games ({found['read'] - found['all']:,} duplicates)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
