"""The tar reader's blocks: a tar stream read header by header, as ``tarfile`` reads it, 3x faster.

``book.formats.sources`` reads tars with it (``members``) and hands what it does not know
(``Unknown``) or takes for damage (``TarDamage``) to ``tarfile``.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import zlib
from collections.abc import Iterator

# Read block by block here rather than with tarfile: on the Tygem archive (11,365 small
# members, 15.5 MB of SGF; Python 3.11) this reader takes 0.16 s of CPU, tarfile's stream
# mode 0.51 s (a TarInfo, an ExFileObject and small reads per member) and the
# decompression itself 0.06 s; 6.5 s against 18.4 s for the 50 archives of 2005-2009
# (bench/sgf_tiers.py prints both).  A whole import of the Tygem archive took 0.3-0.9 s
# less of its ~4 s (bench/book.py; 2 cores, the reader process given tarfile instead).  What is
# read is POSIX ustar, GNU (long names "L", base-256 sizes) and pax ("x" path and size),
# as tarfile reads them (tests/test_sources.py holds the two equal).  Anything else that
# changes which bytes a member holds raises Unknown, and damage TarDamage; either way
# tarfile reads the archive from the member where this reader stopped.

BLOCK = 512
PIECE = 1 << 20  # bytes asked of the decompressor at a time
_END_BLOCK = bytes(BLOCK)
_NO_DATA_TYPES = frozenset(b"123456")  # links, devices, folders, FIFOs: tarfile ignores their size
_REGULAR_TYPES = frozenset(b"07\0")
# Types whose data or following headers this reader would misread; tarfile knows them.
# Other unknown types are skipped as tarfile skips them: not a file, ``size`` bytes of data.
_HANDED_OVER = {ord("S"): "a GNU sparse member", ord("M"): "a multi-volume continuation",
                ord("X"): "a Solaris extended header"}
_SPARSE_KEY = b"GNU.sparse."  # pax records of a sparse member (formats 0.0, 0.1, 1.0)
_GLOBAL_KEYS = (b"path", b"size")  # in a pax global header these would rename or resize members
# A member's extension headers together (long names, pax headers; in tarfile's hands sparse maps too)
# larger than this are damage, not a name: checked from each header's size before it is read
EXTENSION_LIMIT = 1 << 20
TAR_ERRORS = (OSError, EOFError, zlib.error, lzma.LZMAError)
_OPENERS = ((b"\x1f\x8b", gzip.open), (b"BZh", bz2.open), (b"\xfd7zXZ\x00", lzma.open))


class TarDamage(Exception):
    """A header that is not a tar header, or an archive that ends inside a member."""


class Unknown(Exception):
    """A tar variant this reader does not read as tarfile does (see _HANDED_OVER)."""


def _bad_header(reason: str) -> TarDamage:
    return TarDamage(f"bad member header ({reason})")


class HeaderTooLarge(Exception):
    """An extension header (a GNU long name, a pax header) of ``size`` bytes, over ``EXTENSION_LIMIT``:
    no name or record is that long; reading it whole (as tarfile would) cost 3.17 GB for a 1 GB
    pax header in a 1 MB .tgz, so the archive is read no further."""

    def __init__(self, what: str, size: int):
        super().__init__(what, size)
        self.what, self.size = what, size


class PassLimit(Exception):
    """Passing over ``size`` more bytes of ``what`` would inflate more than ``Stream.most_passed``."""

    def __init__(self, what: str, size: int):
        super().__init__(what, size)
        self.what, self.size = what, size


def _opener(path: str):
    with open(path, "rb") as handle:
        magic = handle.read(6)
    return next((opener for prefix, opener in _OPENERS if magic.startswith(prefix)), None)


def compressed(path: str) -> bool:
    """Whether ``path`` is gzip, bzip2 or xz (else a plain tar: passing over its data is a seek)."""
    return _opener(path) is not None


def decompressed(path: str):
    """The tar stream of ``path``, decompressed by the gzip/bz2/lzma readers."""
    opener = _opener(path)
    return opener(path, "rb") if opener else open(path, "rb")


class Stream:
    """A decompressed stream read in 1 MB pieces: ``take(n)`` bytes, ``skip(n)`` bytes.

    Data not read (``pass_over``, ``take_passed``) is counted in ``passed`` and refused past
    ``most_passed`` (PassLimit, before any of it is inflated): in a compressed tar, passing
    over a member means inflating it.  A plain tar on disk is passed over by seeking, free.
    """

    def __init__(self, raw, most_passed: int | None = None):
        self.raw = raw
        self.buffer = b""
        self.at = 0
        self.end = os.fstat(raw.fileno()).st_size if isinstance(raw, io.BufferedReader) else None  # a plain file
        self.most_passed = most_passed
        self.passed = 0

    def count(self, what: str, n: int) -> None:
        """Count ``n`` bytes of ``what`` as passed over (read elsewhere); PassLimit past ``most_passed``."""
        if self.end is None and self.most_passed is not None:
            if self.passed + n > self.most_passed:
                raise PassLimit(what, n)
            self.passed += n

    def pass_over(self, what: str, n: int) -> None:
        """``skip`` the ``n`` bytes of ``what``, a member not read; PassLimit past ``most_passed``."""
        self.count(what, n)
        self.skip(n)

    def take_passed(self, what: str, n: int) -> bytes:
        """``exactly`` ``n`` bytes of ``what``, an extension header, counted as ``pass_over`` counts."""
        self.count(what, n)
        return self.exactly(n)

    def take(self, n: int) -> bytes:
        """The next ``n`` bytes, or fewer at the end of the stream."""
        end = self.at + n
        if end > len(self.buffer):
            parts = [self.buffer[self.at:]]
            have = len(parts[0])
            while have < n:
                piece = self.raw.read(max(PIECE, n - have))
                if not piece:
                    break
                parts.append(piece)
                have += len(piece)
            self.buffer, self.at, end = b"".join(parts), 0, n
        data = self.buffer[self.at:end]
        self.at += len(data)
        return data

    def skip(self, n: int) -> None:
        """Pass over ``n`` bytes, holding at most a piece of them at once (a plain file: a seek)."""
        if self.end is not None:
            held = min(n, len(self.buffer) - self.at)
            self.at += held
            if n > held and self.raw.seek(n - held, os.SEEK_CUR) > self.end:
                raise TarDamage("unexpected end of data")
            return
        while n > 0:
            got = len(self.take(min(n, PIECE)))
            if not got:
                raise TarDamage("unexpected end of data")
            n -= got

    def exactly(self, n: int) -> bytes:
        data = self.take(n)
        if len(data) < n:
            raise TarDamage("unexpected end of data")
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
    """Raise TarDamage unless the header's checksum is right (unsigned or signed sums, as tar writes)."""
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
    """The pax records of an "x" or "g" header; Unknown for records this reader does not apply."""
    fields = _pax_fields(data)
    if any(key.startswith(_SPARSE_KEY) for key in fields):
        raise Unknown("a pax sparse member")
    if kind == ord("g") and any(key in fields for key in _GLOBAL_KEYS):
        raise Unknown("a pax global header with a path or size")
    return fields  # a global header's other records (a comment, times, owners) change no member's bytes


# What a member that is not a regular file is, in the words the import names it with.
MEMBER_KINDS = {ord("1"): "a hard link", ord("2"): "a symbolic link", ord("3"): "a character device",
                ord("4"): "a block device", ord("5"): "a folder", ord("6"): "a FIFO"}
# named by the import where their name is a game's (a folder is not; other types tarfile reads on)
NAMED_KINDS = frozenset(kind for kind in MEMBER_KINDS.values() if kind != "a folder")


def not_regular(kind: int) -> str:
    """What a member of type ``kind`` (a header's type byte) is, for one that is no regular file."""
    return MEMBER_KINDS.get(kind, f"a member of type {chr(kind)!r}")


def members(stream: Stream) -> Iterator[tuple[str, int, str | None]]:
    """(name, size, None for a regular file or what it is: "a symbolic link", ...) of each member;
    its data is next in ``stream``.

    The caller must take or skip exactly ``size`` bytes before asking for the next one.
    Ends at the end-of-archive block or at the end of the stream between members.
    Raises Unknown at a header of a variant tarfile must read (before yielding it),
    PassLimit at an extension header whose block, data or padding would pass the stream's
    ``most_passed``, and HeaderTooLarge at one that takes a member's extension headers over
    ``EXTENSION_LIMIT`` (before reading any of it).
    """
    long_name = None
    pax: dict[bytes, bytes] = {}
    first = True
    headers = 0  # bytes of the extension headers of the member to come
    while True:
        block = stream.take(BLOCK)
        if not block:
            if first:
                raise TarDamage("empty file")
            return
        if len(block) < BLOCK:
            raise _bad_header("truncated header")
        if block == _END_BLOCK:
            return
        _check(block)
        first = False
        kind = block[156]
        if kind in _HANDED_OVER:
            raise Unknown(_HANDED_OVER[kind])
        size = _number(block[124:136])
        if kind in b"LKxg":  # extension headers: they describe the member that follows
            if size < 0:
                raise _bad_header(f"extension header of {size} bytes")
            headers += size
            if headers > EXTENSION_LIMIT:
                alone = headers == size
                raise HeaderTooLarge(f"an extension header ({chr(kind)})" if alone else
                                     f"extension headers (the last ({chr(kind)}) of {size} bytes)", headers)
            stream.count(f"an extension header ({chr(kind)})", BLOCK)  # its block and padding: passed over too
            data = stream.take_passed(f"an extension header ({chr(kind)})", size)
            stream.pass_over(f"an extension header ({chr(kind)})", -size % BLOCK)
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
        long_name, pax, headers = None, {}, 0
        if size < 0:
            raise _bad_header(f"negative member size {size}")
        if kind in _NO_DATA_TYPES:
            size = 0
        regular = kind in _REGULAR_TYPES and not (kind == 0 and raw_name.endswith(b"/"))
        yield raw_name.decode("utf-8", "surrogateescape"), size, None if regular else not_regular(kind)
        # the caller has now taken or skipped the data; the padding is ours
        stream.skip(-size % BLOCK)
