"""Where game files come from: single files, folders and archives, read without extracting.

:func:`iter_sources` turns the paths a user names into a stream of
:class:`SourceFile` (a name and the file's bytes) and :class:`Skipped` (a name and the
reason nothing was read), in a deterministic order: paths in the order given, folders
walked recursively with names sorted, archive members in archive order.

- ``.sgf`` files (any case) are read; in folders and archives other files are passed
  over silently (the AI archive holds ``kifu.index`` files and bare move lists).
- ``.tgz``/``.tar.gz``/``.tar`` (also ``.tar.bz2``/``.tar.xz``) and ``.zip`` archives are
  streamed member by member, in folders too.  Archives inside archives are not opened.
- Only regular files are opened (links followed): a FIFO, socket or device named like a game
  file or an archive, in a folder or given by name, is a Skipped naming what it is.
- Names: a file's path as given or as found under the folder given; an archive member is
  ``"<archive path>:<member name>"`` -- the ``GameRecord.source`` convention -- and keeps
  its member name apart too (``member``; ``path`` is the file on disk).
- ``read=False`` leaves the files unread: each game file is a :class:`GameFile` (its path)
  and each archive an :class:`Archive` (its path and size) in its place in the order, for
  another process to read with ``iter_sources([path])`` (the import's parsers read their own
  files: ``book.pipeline.groups``).

Memory stays bounded against archive bombs (:class:`Limits`): a member or file larger
than ``max_file_bytes`` is refused with a Skipped, and so is a zip with more than
``max_members`` entries; a tar's members are only known while streaming, so a tar
reaching the limit yields what came before and one Skipped for the rest.  A corrupt
archive yields a Skipped naming it, after any members read before the damage.

Tars are read by a block reader of our own (3x faster than ``tarfile``, see the tar
section); what it does not know (GNU sparse members, multi-volume continuations, Solaris
headers, pax sparse records or a pax global path or size) or takes for damage is read by
``tarfile`` from that member on, so a variant costs speed, never games.

This module does not parse SGF (``book.formats.records`` does) and never raises for bad input.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field

# Suffixes of files handed on as SourceFile.  Other formats (a Fuego opening book, say)
# plug in by adding their suffix here and dispatching on the name in the importer.
GAME_SUFFIXES = (".sgf", ".fuego")
FUEGO_NAMES = ("book.dat",)  # Fuego's and Pachi's opening book file (text; book.formats.fuego reads it)
TAR_SUFFIXES = (".tgz", ".tar.gz", ".tar", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
ZIP_SUFFIXES = (".zip",)


@dataclass
class SourceFile:
    """One game file's bytes; ``name`` is what GameRecord.source will say; ``member``: the
    archive member's own name (``name`` is then "<archive path>:<member>"), or None."""

    name: str
    data: bytes
    member: str | None = field(default=None, compare=False)  # ``name`` holds it too

    @property
    def path(self) -> str:
        """The file on disk: the file itself, or the archive holding the member."""
        return on_disk(self.name, self.member)


@dataclass
class Skipped:
    """A file, member or archive that was not read, and why (``member``, ``path``: as SourceFile's)."""

    name: str
    reason: str
    member: str | None = field(default=None, compare=False)  # ``name`` holds it too

    @property
    def path(self) -> str:
        return on_disk(self.name, self.member)


def on_disk(name: str, member: str | None) -> str:
    """The archive path of a member's ``name`` ("<archive path>:<member>"), or ``name`` itself."""
    return name if member is None else name[: len(name) - len(member) - 1]


@dataclass
class Archive:
    """An archive left unread (``iter_sources(..., read=False)``); ``size``: its bytes on disk.

    ``iter_sources([name])`` gives what reading it in place would have given.
    """

    name: str
    size: int


@dataclass
class GameFile:
    """A game file left unread (``iter_sources(..., read=False)``).

    ``iter_sources([name])`` gives what reading it in place would have given.
    """

    name: str


@dataclass(frozen=True)
class Limits:
    """Bounds against archive bombs (defaults: 10 MB per file, a million members)."""

    max_file_bytes: int = 10 * 1024 * 1024
    max_members: int = 1_000_000


def iter_sources(paths: list[str], limits: Limits = Limits(),
                 read: bool = True) -> Iterator[SourceFile | Skipped | Archive | GameFile]:
    """Game files (and the reasons for what was not read) under ``paths``, in order; with
    ``read=False``, each game file as a :class:`GameFile` and each archive as an :class:`Archive`."""
    for path in paths:
        if os.path.isdir(path):
            yield from _walk(path, limits, read)
        elif not os.path.exists(path):
            yield Skipped(path, "no such file or folder")
        elif _kind(path) is None:
            yield Skipped(path, "not an SGF file, a Fuego book.dat or a .tgz/.tar.gz/.tar/.zip archive")
        else:
            yield from _read_path(path, limits, read)


def _kind(name: str) -> str | None:
    lower = name.lower()
    if lower.endswith(GAME_SUFFIXES) or lower.rsplit("/", 1)[-1] in FUEGO_NAMES:
        return "game"
    if lower.endswith(TAR_SUFFIXES):
        return "tar"
    if lower.endswith(ZIP_SUFFIXES):
        return "zip"
    return None


def _walk(folder: str, limits: Limits, read: bool) -> Iterator[SourceFile | Skipped | Archive | GameFile]:
    """Every game file and archive under ``folder`` in path order (a/x before b, b/y before c).

    Linked folders are not followed (no loops); a folder that cannot be listed is Skipped.
    """
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError as exc:
        yield Skipped(folder, f"cannot list folder: {exc.strerror or exc}")
        return
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            yield from _walk(entry.path, limits, read)
        elif _kind(entry.name) is not None:
            yield from _read_path(entry.path, limits, read)


def _read_path(path: str, limits: Limits, read: bool = True) -> Iterator[SourceFile | Skipped | Archive | GameFile]:
    not_regular = _not_regular(path)
    if not_regular is not None:
        yield Skipped(path, not_regular)
        return
    kind = _kind(path)
    if kind == "game" and not read:
        yield GameFile(path)
        return
    if kind in ("tar", "zip") and not read:
        try:
            yield Archive(path, os.path.getsize(path))
            return
        except OSError:
            pass  # read it here, which names the reason
    if kind == "tar":
        yield from _read_tar(path, limits)
    elif kind == "zip":
        yield from _read_zip(path, limits)
    else:
        yield _read_file(path, limits)


_SPECIAL_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                  (stat.S_ISBLK, "a block device"))


def _not_regular(path: str) -> str | None:
    """Why ``path`` (links followed) must not be opened, or None for a regular file.

    Opening a FIFO blocks until someone writes to it, and a device may never end
    (``/dev/zero``): the import would hang with nothing committed.  A name that cannot be
    looked at is left to the reader, which names the reason.
    """
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode):
        return None
    kind = next((name for test, name in _SPECIAL_KINDS if test(mode)), "not a regular file")
    return f"{kind}, not a regular file: not opened"


def _too_big(name: str, size: int, limits: Limits, member: str | None = None) -> Skipped:
    return Skipped(name, f"{size} bytes uncompressed, over the limit of {limits.max_file_bytes}", member)


def _read_file(path: str, limits: Limits) -> SourceFile | Skipped:
    try:
        size = os.path.getsize(path)
        if size > limits.max_file_bytes:
            return _too_big(path, size, limits)
        with open(path, "rb") as handle:
            return SourceFile(path, handle.read(limits.max_file_bytes + 1))
    except OSError as exc:
        return Skipped(path, f"cannot read: {exc.strerror or exc}")


# --- tar -----------------------------------------------------------------------------------
#
# Read block by block here rather than with tarfile: on the Tygem archive (11,365 small
# members, 15.5 MB of SGF; Python 3.11) this reader takes 0.16 s of CPU, tarfile's stream
# mode 0.51 s (a TarInfo, an ExFileObject and small reads per member) and the
# decompression itself 0.06 s; 6.5 s against 18.4 s for the 50 archives of 2005-2009
# (bench/sgf_tiers.py prints both).  A whole import of the Tygem archive took 0.3-0.9 s
# less of its ~4 s (bench/book.py; 2 cores, the reader process given tarfile instead).  What is
# read is POSIX ustar, GNU (long names "L", base-256 sizes) and pax ("x" path and size),
# as tarfile reads them (tests/test_sources.py holds the two equal).  Anything else that
# changes which bytes a member holds raises _Unknown, and damage _TarDamage; either way
# tarfile reads the archive from the member where this reader stopped.

_BLOCK = 512
_PIECE = 1 << 20  # bytes asked of the decompressor at a time
_END_BLOCK = bytes(_BLOCK)
_NO_DATA_TYPES = frozenset(b"123456")  # links, devices, folders, FIFOs: tarfile ignores their size
_REGULAR_TYPES = frozenset(b"07\0")
# Types whose data or following headers this reader would misread; tarfile knows them.
# Other unknown types are skipped as tarfile skips them: not a file, ``size`` bytes of data.
_HANDED_OVER = {ord("S"): "a GNU sparse member", ord("M"): "a multi-volume continuation",
                ord("X"): "a Solaris extended header"}
_SPARSE_KEY = b"GNU.sparse."  # pax records of a sparse member (formats 0.0, 0.1, 1.0)
_GLOBAL_KEYS = (b"path", b"size")  # in a pax global header these would rename or resize members
_EXTENSION_LIMIT = 1 << 20  # a long name or a pax header larger than this is damage, not a name
_TAR_ERRORS = (OSError, EOFError, zlib.error, lzma.LZMAError)
_OPENERS = ((b"\x1f\x8b", gzip.open), (b"BZh", bz2.open), (b"\xfd7zXZ\x00", lzma.open))


class _TarDamage(Exception):
    """A header that is not a tar header, or an archive that ends inside a member."""


class _Unknown(Exception):
    """A tar variant this reader does not read as tarfile does (see _HANDED_OVER)."""


def _bad_header(reason: str) -> _TarDamage:
    return _TarDamage(f"bad member header ({reason})")


def _decompressed(path: str):
    """The tar stream of ``path``, decompressed by the gzip/bz2/lzma readers."""
    with open(path, "rb") as handle:
        magic = handle.read(6)
    for prefix, opener in _OPENERS:
        if magic.startswith(prefix):
            return opener(path, "rb")
    return open(path, "rb")


class _Stream:
    """A decompressed stream read in 1 MB pieces: ``take(n)`` bytes, ``skip(n)`` bytes."""

    def __init__(self, raw):
        self.raw = raw
        self.buffer = b""
        self.at = 0

    def take(self, n: int) -> bytes:
        """The next ``n`` bytes, or fewer at the end of the stream."""
        end = self.at + n
        if end > len(self.buffer):
            parts = [self.buffer[self.at:]]
            have = len(parts[0])
            while have < n:
                piece = self.raw.read(max(_PIECE, n - have))
                if not piece:
                    break
                parts.append(piece)
                have += len(piece)
            self.buffer, self.at, end = b"".join(parts), 0, n
        data = self.buffer[self.at:end]
        self.at += len(data)
        return data

    def skip(self, n: int) -> None:
        """Pass over ``n`` bytes, holding at most a piece of them at once."""
        while n > 0:
            got = len(self.take(min(n, _PIECE)))
            if not got:
                raise _TarDamage("unexpected end of data")
            n -= got

    def exactly(self, n: int) -> bytes:
        data = self.take(n)
        if len(data) < n:
            raise _TarDamage("unexpected end of data")
        return data


def _number(field: bytes) -> int:
    """A header's numeric field: octal text, or GNU base-256 (first byte 0x80 or 0xff)."""
    if field[:1] in (b"\x80", b"\xff"):
        value = int.from_bytes(field[1:], "big")
        return value - (1 << (8 * len(field) - 8)) if field[0] == 0xFF else value
    text = field.split(b"\0", 1)[0].strip()
    try:
        return int(text or b"0", 8)
    except ValueError:
        raise _bad_header(f"invalid number field {text[:12]!r}") from None


def _check(block: bytes) -> None:
    """Raise _TarDamage unless the header's checksum is right (unsigned or signed sums, as tar writes)."""
    expected = _number(block[148:156])
    unsigned = sum(block) - sum(block[148:156]) + 8 * 32
    if expected != unsigned:
        signed = unsigned - 256 * sum(1 for b in block[:148] + block[156:] if b > 127)
        if expected != signed:
            raise _bad_header("bad checksum")


def _pax_fields(data: bytes) -> dict[bytes, bytes]:
    """The "length key=value\\n" records of a pax extended header."""
    fields, at = {}, 0
    while at < len(data) and data[at] != 0:
        space = data.find(b" ", at)
        try:
            length = int(data[at:space])
        except ValueError:
            raise _bad_header("bad pax record") from None
        record = data[space + 1:at + length]
        if length <= 0 or not record.endswith(b"\n") or b"=" not in record:
            raise _bad_header("bad pax record")
        key, value = record[:-1].split(b"=", 1)
        fields[key] = value
        at += length
    return fields


def _extension(kind: int, data: bytes) -> dict[bytes, bytes]:
    """The pax records of an "x" or "g" header; _Unknown for records this reader does not apply."""
    fields = _pax_fields(data)
    if any(key.startswith(_SPARSE_KEY) for key in fields):
        raise _Unknown("a pax sparse member")
    if kind == ord("g") and any(key in fields for key in _GLOBAL_KEYS):
        raise _Unknown("a pax global header with a path or size")
    return fields  # a global header's other records (a comment, times, owners) change no member's bytes


def _members(stream: _Stream) -> Iterator[tuple[str, int, bool]]:
    """(name, size, regular file?) of each member; its data is next in ``stream``.

    The caller must take or skip exactly ``size`` bytes before asking for the next one.
    Ends at the end-of-archive block or at the end of the stream between members.
    Raises _Unknown at a header of a variant tarfile must read (before yielding it).
    """
    long_name = None
    pax: dict[bytes, bytes] = {}
    first = True
    while True:
        block = stream.take(_BLOCK)
        if not block:
            if first:
                raise _TarDamage("empty file")
            return
        if len(block) < _BLOCK:
            raise _bad_header("truncated header")
        if block == _END_BLOCK:
            return
        _check(block)
        first = False
        kind = block[156]
        if kind in _HANDED_OVER:
            raise _Unknown(_HANDED_OVER[kind])
        size = _number(block[124:136])
        if kind in b"LKxg":  # extension headers: they describe the member that follows
            if not 0 <= size <= _EXTENSION_LIMIT:
                raise _bad_header(f"extension header of {size} bytes")
            data = stream.exactly(size)
            stream.skip(-size % _BLOCK)
            if kind == ord("L"):
                long_name = data.split(b"\0", 1)[0]
            elif kind == ord("x"):
                pax = _extension(kind, data)
            elif kind == ord("g"):
                _extension(kind, data)
            continue
        raw_name = block[:100].split(b"\0", 1)[0]
        if block[257:263] == b"ustar\0" and block[345] != 0:  # POSIX ustar: a name prefix
            raw_name = block[345:500].split(b"\0", 1)[0] + b"/" + raw_name
        raw_name = pax.get(b"path", long_name or raw_name)
        if b"size" in pax:
            try:
                size = int(pax[b"size"])
            except ValueError:
                raise _bad_header("bad pax size") from None
        long_name, pax = None, {}
        if size < 0:
            raise _bad_header(f"negative member size {size}")
        if kind in _NO_DATA_TYPES:
            size = 0
        regular = kind in _REGULAR_TYPES and not (kind == 0 and raw_name.endswith(b"/"))
        yield raw_name.decode("utf-8", "surrogateescape"), size, regular
        # the caller has now taken or skipped the data; the padding is ours
        stream.skip(-size % _BLOCK)


def _read_tar(path: str, limits: Limits) -> Iterator[SourceFile | Skipped]:
    """Stream a tar (plain, gzip, bzip2 or xz) member by member.

    Where the block reader stops (a variant it does not know, or what it takes for
    damage), tarfile reads on from that member: _read_tar_with_tarfile.
    """
    count = done = 0  # members whose header was read / which were read or passed over
    try:
        with _decompressed(path) as raw:
            stream = _Stream(raw)
            for member, size, regular in _members(stream):
                count += 1
                if count > limits.max_members:
                    yield _too_many(path, limits)
                    return
                name = f"{path}:{member}"
                if not regular or _kind(member) != "game":
                    stream.skip(size)
                    item = None
                elif size > limits.max_file_bytes:
                    stream.skip(size)
                    item = _too_big(name, size, limits, member)
                else:
                    item = SourceFile(name, stream.exactly(size), member)
                done = count
                if item is not None:
                    yield item
        return
    except _Unknown:
        failure = None
    except (_TarDamage, *_TAR_ERRORS) as exc:
        failure = count, _reason(exc)
    yield from _read_tar_with_tarfile(path, limits, done, failure)


# What tarfile raises for bad input: its own errors, the decompressors', and ValueError from
# a number field it cannot parse in a variant's extra headers.
_TARFILE_ERRORS = (tarfile.TarError, ValueError, *_TAR_ERRORS)


def _read_tar_with_tarfile(path: str, limits: Limits, skip: int,
                           failure: tuple[int, str] | None) -> Iterator[SourceFile | Skipped]:
    """The members of ``path`` after the first ``skip``, read by tarfile in stream mode.

    ``failure``: (members, reason) where the block reader met damage, or None if it met
    a variant it does not read.  If tarfile gets no further, that failure is the one
    reported, in the block reader's words (tarfile ends quietly at a bad header after the
    first); if it reads past it, the damage was a variant.
    """
    count, error = 0, None
    try:
        with tarfile.open(path, "r|*", encoding="utf-8", errors="surrogateescape") as tar:
            while (info := tar.next()) is not None:
                tar.members.clear()  # stream mode keeps every TarInfo otherwise; none is asked for again
                count += 1
                if count <= skip:
                    continue
                if count > limits.max_members:
                    yield _too_many(path, limits)
                    return
                if not info.isfile() or _kind(info.name) != "game":
                    continue
                name = f"{path}:{info.name}"
                if info.size > limits.max_file_bytes:
                    yield _too_big(name, info.size, limits, info.name)
                    continue
                yield SourceFile(name, tar.extractfile(info).read(), info.name)
    except _TARFILE_ERRORS as exc:
        error = _reason(exc)
    if failure is not None and count <= failure[0]:
        count, error = failure
    if error is not None:
        yield Skipped(path, f"corrupt or unreadable archive after {count} members: {error}")


def _too_many(path: str, limits: Limits) -> Skipped:
    return Skipped(path, f"more than {limits.max_members} members; the rest is not read")


def _reason(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


# --- zip -----------------------------------------------------------------------------------

_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, zlib.error,
               RuntimeError, NotImplementedError)  # RuntimeError: encrypted member


def _zip_members(path: str, most: int) -> tuple[int, int] | None:
    """(members the end record declares, members the central directory lists, counted up to
    ``most + 1`` and no further) of a zip, ZIP64's figures where it has them; None when its end
    record cannot be found.

    Read before zipfile.ZipFile, which builds a ZipInfo for every entry of the directory
    whatever the end record says: a zip listing a million members took 440 MB and 25 s just
    to be refused, one whose end record claimed one member 540 MB.  Here the entries are only
    stepped over, a megabyte of the directory at a time.
    """
    try:
        with open(path, "rb") as handle:
            start = max(0, handle.seek(0, os.SEEK_END) - (1 << 16) - 22 - 76)  # longest comment, ZIP64
            handle.seek(start)
            tail = handle.read()
            at = tail.rfind(b"PK\x05\x06")
            if at < 0 or len(tail) - at < 22:
                return None
            declared, size = (int.from_bytes(tail[at + 10:at + 12], "little"),
                              int.from_bytes(tail[at + 12:at + 16], "little"))
            at64 = tail.rfind(b"PK\x06\x06", 0, at)
            if at64 >= 0 and at - at64 >= 56 and 0xFFFF in (declared, size & 0xFFFF):
                declared, size = (int.from_bytes(tail[at64 + k:at64 + k + 8], "little") for k in (32, 40))
                at = at64  # the directory ends where the ZIP64 end record begins
            if start + at - size < 0:
                return declared, 0
            handle.seek(start + at - size)  # as zipfile finds it: right before the end record
            listed, buffer, offset, left = 0, b"", 0, size
            while listed <= most:
                if len(buffer) - offset < 46:
                    if offset > len(buffer):  # the last entry's names ran past what was read
                        handle.seek(offset - len(buffer), os.SEEK_CUR)
                        left -= offset - len(buffer)
                        buffer, offset = b"", 0
                    chunk = handle.read(max(0, min(left, 1 << 20)))
                    left -= len(chunk)
                    buffer, offset = buffer[offset:] + chunk, 0
                if len(buffer) - offset < 46 or buffer[offset:offset + 4] != b"PK\x01\x02":
                    break
                offset += 46 + sum(int.from_bytes(buffer[offset + k:offset + k + 2], "little") for k in (28, 30, 32))
                listed += 1
            return declared, listed
    except OSError:
        return None


def _read_zip(path: str, limits: Limits) -> Iterator[SourceFile | Skipped]:
    """Read a zip's game members; a damaged member is skipped and the rest still read."""
    declared, listed = _zip_members(path, limits.max_members) or (0, 0)
    if max(declared, listed) > limits.max_members:
        said = (f"{declared} members" if declared > limits.max_members else
                f"more than {limits.max_members} members listed (its end record says {declared})")
        yield Skipped(path, f"{said}, over the limit of {limits.max_members}")
        return
    try:
        archive = zipfile.ZipFile(path)
    except _ZIP_ERRORS as exc:
        yield Skipped(path, f"corrupt or unreadable archive: {_reason(exc)}")
        return
    with archive:
        infos = archive.infolist()
        if len(infos) > limits.max_members:
            yield Skipped(path, f"{len(infos)} members, over the limit of {limits.max_members}")
            return
        for info in infos:
            if info.is_dir() or _kind(info.filename) != "game":
                continue
            yield _read_zip_member(archive, info, path, limits)


def _read_zip_member(archive, info, path: str, limits: Limits) -> SourceFile | Skipped:
    name, member = f"{path}:{info.filename}", info.filename
    if info.file_size > limits.max_file_bytes:
        return _too_big(name, info.file_size, limits, member)
    try:
        with archive.open(info) as stream:
            # read one byte more than allowed: a header may lie about the size
            data = stream.read(limits.max_file_bytes + 1)
    except _ZIP_ERRORS as exc:
        return Skipped(name, f"corrupt member: {_reason(exc)}", member)
    if len(data) > limits.max_file_bytes:
        return _too_big(name, len(data), limits, member)
    return SourceFile(name, data, member)

