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
  file or an archive, in a folder or given by name, is a Skipped naming what it is; so is an
  archive's member that is a link, a device or a FIFO (a tar's header type, a zip's Unix mode).
- Names that are not UTF-8 (a folder's, a tar's or a zip's, common in old Japanese, Korean
  and European collections) are kept as Python keeps them from the disk: their bytes, with
  those that are not UTF-8 as surrogate escapes (``os.fsdecode``), so the file can be opened
  again; :func:`shown_name` writes them with ``\\xNN`` escapes for the book and the terminal.
  A zip member's name is its bytes read the same way (UTF-8 flag or not: the flag is often
  missing on UTF-8 names, and a name under it may still not be UTF-8).
- Names: a file's path as given or as found under the folder given; an archive member is
  ``"<archive path>:<member name>"`` -- the ``GameRecord.source`` convention -- and keeps
  its member name apart too (``member``; ``path`` is the file on disk).
- ``read=False`` leaves the files unread: each game file is a :class:`GameFile` (its path)
  and each archive an :class:`Archive` (its path and size) in its place in the order, for
  another process to read with ``iter_sources([path])`` (the import's parsers read their own
  files: ``book.analysis.pipeline.groups``).

Memory stays bounded against archive bombs (:class:`Limits`): a member or file larger
than ``max_file_bytes`` is refused with a Skipped, and so is a zip with more than
``max_members`` entries; a tar's members are only known while streaming, so a tar
reaching the limit yields what came before and one Skipped for the rest.  Time stays
bounded too: passing over a compressed tar's member means inflating it, so a tar whose
members not read (not games, or games over ``max_file_bytes``) would inflate more than
``max_skip_bytes`` stops at that member, decided from its header, with one Skipped naming
it (a plain tar on disk is passed over by seeking, and has no such limit).  A corrupt
archive yields a Skipped naming it, after any members read before the damage.

Tars are read by a block reader of our own (3x faster than ``tarfile``:
``book.formats.tar_blocks``); what it does not know (GNU sparse members, multi-volume
continuations, Solaris headers, pax sparse records or a pax global path or size) or takes for
damage is read by ``tarfile`` from that member on, so a variant costs speed, never games.
Both readers hold a member's extension headers to ``tar_blocks.EXTENSION_LIMIT`` and count them
against ``max_skip_bytes``: tarfile reads through ``_Fence``, which refuses it a read past where
the member's headers may end (it would read a 1,000 MB pax header whole).

This module does not parse SGF (``book.formats.sgf_reader`` does) and never raises for bad input.
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field

from fuseki.book.formats import tar_blocks
from fuseki.engine.core.base import MAX_RECORD_BYTES

# Suffixes of files handed on as SourceFile.  Other formats (a Fuego opening book, say)
# plug in by adding their suffix here and dispatching on the name in the importer.
GAME_SUFFIXES = (".sgf", ".fuego")
FUEGO_NAMES = ("book.dat",)  # Fuego's and Pachi's opening book file (text; book.formats.fuego reads it)
TAR_SUFFIXES = (".tgz", ".tar.gz", ".tar", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
ZIP_SUFFIXES = (".zip",)


def shown_name(name: str) -> str:
    """``name`` with the bytes that are not UTF-8 (its surrogate escapes) written ``\\xNN``:
    text a database, a terminal and a JSON reader take.  A UTF-8 name is itself."""
    try:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate no byte gave (not from the disk): escape it as it is
        return name.encode("utf-8", "backslashreplace").decode("utf-8")


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
    """Bounds against archive bombs (defaults: 10 MB per file, a million members, and 1 GiB
    inflated to pass over what a compressed tar holds besides the games it reads)."""

    max_file_bytes: int = MAX_RECORD_BYTES  # loadsgf's too
    max_members: int = 1_000_000
    max_skip_bytes: int = 1 << 30
    # Members read as games, in bytes: at most this many times the archive's size on disk (and
    # never less than ``min_read_bytes``).  Real archives of SGF inflate 3-10 times; a 9.4 KB
    # .tar.xz of copies of one 10 MB game inflated 1.7 GB of games that took 154 s to parse.
    read_ratio: int = 100
    min_read_bytes: int = 64 << 20

    def read_budget(self, archive_bytes: int) -> int:
        """The bytes an archive of ``archive_bytes`` on disk may hand on as games."""
        return max(self.min_read_bytes, self.read_ratio * archive_bytes)


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


_SPECIAL_KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                  (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def _mode_kind(mode: int) -> str:
    """What a file of st_mode ``mode`` that is no regular file is: "a FIFO", ... (a folder's
    entry, followed through links, or a zip member's Unix mode, where a link is itself)."""
    return next((name for test, name in _SPECIAL_KINDS if test(mode)), "not a regular file")


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
    return f"{_mode_kind(mode)}, not a regular file: not opened"


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


# --- tar (read by book.formats.tar_blocks; tarfile where it stops) ---------------------------

def _read_tar(path: str, limits: Limits) -> Iterator[SourceFile | Skipped]:
    """Stream a tar (plain, gzip, bzip2 or xz) member by member.

    Where the block reader stops (a variant it does not know, or what it takes for
    damage), tarfile reads on from that member: _read_tar_with_tarfile.
    """
    count = done = 0  # members whose header was read / which were read or passed over
    budget = _budget(path, limits)
    try:
        with tar_blocks.decompressed(path) as raw:
            stream = tar_blocks.Stream(raw, limits.max_skip_bytes)
            for member, size, special in tar_blocks.members(stream):
                count += 1
                if count > limits.max_members:
                    yield _too_many(path, limits)
                    return
                name = f"{path}:{member}"
                if special is not None or _kind(member) != "game":
                    stream.pass_over(f"member {member}", size)
                    named = special in tar_blocks.NAMED_KINDS and _kind(member) == "game"
                    item = _special(name, special, member) if named else None
                elif size > limits.max_file_bytes:
                    stream.pass_over(f"member {member}", size)
                    item = _too_big(name, size, limits, member)
                else:
                    budget -= size
                    if budget < 0:
                        yield _over_budget(path, member, limits)
                        return
                    item = SourceFile(name, stream.exactly(size), member)
                done = count
                if item is not None:
                    yield item
        return
    except tar_blocks.PassLimit as exc:
        yield _passing_over(path, exc.what, exc.size, limits)
        return
    except tar_blocks.HeaderTooLarge as exc:  # not handed to tarfile, which would read it whole
        yield Skipped(path, f"stopped at {exc.what} of {exc.size} bytes after {count} members: over the "
                            f"limit of {tar_blocks.EXTENSION_LIMIT} bytes a member's long names and pax "
                            "headers may have; the rest is not read")
        return
    except tar_blocks.Unknown:
        failure = None
    except (tar_blocks.TarDamage, *tar_blocks.TAR_ERRORS) as exc:
        failure = count, _reason(exc)
    yield from _read_tar_with_tarfile(path, limits, done, failure)


# What tarfile raises for bad input: its own errors, the decompressors', ValueError from a
# number field it cannot parse in a variant's extra headers, IndexError from a GNU sparse header
# cut short, and RecursionError: it reads a chain of extension headers by recursion.
_TARFILE_ERRORS = (tarfile.TarError, ValueError, IndexError, RecursionError, *tar_blocks.TAR_ERRORS)
# What tarfile may read past the bytes of a member's extension headers: its own header blocks (a
# GNU sparse member's extra ones too, each 512 bytes) and its stream's read-ahead (10,240 bytes)
_FENCE_SLACK = 64 << 10


class _Fenced(Exception):
    """tarfile asked for bytes past ``_Fence.fence`` (a member's headers over EXTENSION_LIMIT), or
    its pax global records grew past it; ``str()``: which."""


class _Fence:
    """The tar stream as tarfile reads it, which it may read up to ``fence`` and no further.

    tarfile reads a member's extension headers whole (a pax header, a long name in one read; a
    GNU sparse member's extra blocks and a pax sparse map block by block, as many as they say):
    a 1,000 MB pax header cost 3 GB.  ``fence`` is set before each ``next()`` to where the
    member's headers may end (``EXTENSION_LIMIT`` and ``_FENCE_SLACK`` past its first header,
    which is also past the data of the member before, a game read after its ``next()``); a read
    past it raises ``_Fenced``, having read nothing.
    """

    def __init__(self, raw):
        self.raw, self.at, self.fence = raw, 0, tar_blocks.EXTENSION_LIMIT + _FENCE_SLACK

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0 or self.at + n > self.fence:
            raise _Fenced("the next member's extension headers (long names, pax headers, sparse maps) pass")
        data = self.raw.read(n)
        self.at += len(data)
        return data

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        self.at = self.raw.seek(offset, whence)
        return self.at

    def tell(self) -> int:
        return self.at

    def __enter__(self) -> _Fence:
        return self

    def __exit__(self, *exc) -> None:
        self.raw.close()


class _GlobalRecords(dict):
    """tarfile's pax global records (they apply to every member after them), held to
    ``EXTENSION_LIMIT`` bytes in all: each global header's records are added to them."""

    held = 0

    def __setitem__(self, key: str, value: str) -> None:
        held = self.held + len(key) + len(value) - (len(key) + len(self[key]) if key in self else 0)
        if held > tar_blocks.EXTENSION_LIMIT:
            raise _Fenced("its pax global records (kept for every member after them) pass")
        self.held = held
        super().__setitem__(key, value)


def _read_tar_with_tarfile(path: str, limits: Limits, skip: int,
                           failure: tuple[int, str] | None) -> Iterator[SourceFile | Skipped]:
    """The members of ``path`` after the first ``skip``, read by tarfile (in stream mode where
    compressed; a plain tar is passed over by seeking).  The limit on what is passed over
    counts from the first member again: the members it passes over are inflated again.

    ``failure``: (members, reason) where the block reader met damage, or None if it met
    a variant it does not read.  If tarfile gets no further, that failure is the one
    reported, in the block reader's words (tarfile ends quietly at a bad header after the
    first); if it reads past it, the damage was a variant.
    """
    count, error, passed = 0, None, 0
    budget = _budget(path, limits)
    try:
        inflated = tar_blocks.compressed(path)
        with (_Fence(tar_blocks.decompressed(path)) as stream,  # noqa: SIM117 - the stream outlives the tar
              tarfile.open(fileobj=stream, mode="r|" if inflated else "r:", encoding="utf-8",
                           errors="surrogateescape", format=tarfile.PAX_FORMAT, pax_headers=_GlobalRecords()) as tar):
            start = 0  # where the member's headers begin
            while (info := tar.next()) is not None:
                tar.members.clear()  # tarfile keeps every TarInfo otherwise; none is asked for again
                count += 1
                game = info.isfile() and _kind(info.name) == "game"
                headers = info.offset_data - start - tar_blocks.BLOCK  # its extension headers
                start = stream.fence = tar.offset
                stream.fence += tar_blocks.EXTENSION_LIMIT + _FENCE_SLACK
                if inflated and headers > 0:
                    passed += headers
                    if passed > limits.max_skip_bytes:  # read: counted as the block reader counts them
                        yield _passing_over(path, f"the extension headers of member {info.name}", headers, limits)
                        return
                if inflated and not (game and info.size <= limits.max_file_bytes):
                    passed += info.size
                    if passed > limits.max_skip_bytes:  # tar.next() would inflate it
                        yield _passing_over(path, f"member {info.name}", info.size, limits)
                        return
                if count <= skip:
                    continue
                if count > limits.max_members:
                    yield _too_many(path, limits)
                    return
                if not game:
                    if tar_blocks.not_regular(info.type[0]) in tar_blocks.NAMED_KINDS and _kind(info.name) == "game":
                        yield _special(f"{path}:{info.name}", tar_blocks.not_regular(info.type[0]), info.name)
                    continue
                name = f"{path}:{info.name}"
                if info.size > limits.max_file_bytes:
                    yield _too_big(name, info.size, limits, info.name)
                    continue
                budget -= info.size
                if budget < 0:
                    yield _over_budget(path, info.name, limits)
                    return
                yield SourceFile(name, tar.extractfile(info).read(), info.name)
    except _Fenced as exc:
        yield Skipped(path, f"stopped after {count} members: {exc} the limit of {tar_blocks.EXTENSION_LIMIT} "
                            "bytes of extension headers; the rest is not read")
        return
    except _TARFILE_ERRORS as exc:
        error = _reason(exc)
    if failure is not None and count <= failure[0]:
        count, error = failure
    if error is not None:
        yield Skipped(path, f"corrupt or unreadable archive after {count} members: {error}")


def _special(name: str, what: str, member: str) -> Skipped:
    """A member named like a game that is a link, a device, a FIFO...: named, never followed."""
    return Skipped(name, f"{what}, not a regular file: not read", member)


def _budget(path: str, limits: Limits) -> int:
    try:
        return limits.read_budget(os.path.getsize(path))
    except OSError:
        return limits.min_read_bytes


def _over_budget(path: str, member: str, limits: Limits) -> Skipped:
    try:
        size = os.path.getsize(path)
    except OSError:
        size = 0
    return Skipped(path, f"stopped at member {member}: the members read as games would inflate to more than "
                         f"{limits.read_budget(size)} bytes ({limits.read_ratio} times the archive's {size}, "
                         f"at least {limits.min_read_bytes}); the rest is not read")


def _passing_over(path: str, what: str, size: int, limits: Limits) -> Skipped:
    return Skipped(path, f"stopped at {what}: passing over its {size} bytes would inflate more than the limit of "
                         f"{limits.max_skip_bytes} bytes an archive may pass over; the rest is not read")


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
        archive = _open_zip(path)
    except _ZIP_ERRORS as exc:
        yield Skipped(path, f"corrupt or unreadable archive: {_reason(exc)}")
        return
    with archive, (archive.fp if isinstance(archive.fp, _NoUtf8Flags) else contextlib.nullcontext()):
        infos = archive.infolist()
        for info in infos:
            info.filename = _zip_name(info)
        if len(infos) > limits.max_members:
            yield Skipped(path, f"{len(infos)} members, over the limit of {limits.max_members}")
            return
        overlap = _overlapping(infos)
        if overlap is not None:
            yield Skipped(path, f"members {overlap[0]} and {overlap[1]} overlap (a zip bomb's trick: one "
                                "compressed game read again and again); not read")
            return
        budget = _budget(path, limits)
        for info in infos:
            if info.is_dir() or _kind(info.filename) != "game":
                continue
            special = _zip_special(info)
            if special is not None:
                yield _special(f"{path}:{info.filename}", special, info.filename)
                continue
            item = _read_zip_member(archive, info, path, limits)
            if isinstance(item, SourceFile):
                budget -= len(item.data)
                if budget < 0:
                    yield _over_budget(path, info.filename, limits)
                    return
            yield item


ZIP_UNIX = 3  # a zip entry's "made by" system whose external attributes hold a Unix st_mode


def _zip_special(info: zipfile.ZipInfo) -> str | None:
    """What a zip member is when its Unix mode (``zip -y`` stores a symbolic link as a member
    whose data is the link's target) says it is no regular file: "a symbolic link", ...; None
    for a regular file or a zip made elsewhere (no mode to go by)."""
    mode = info.external_attr >> 16
    if info.create_system != ZIP_UNIX or not stat.S_IFMT(mode) or stat.S_ISREG(mode):
        return None
    return _mode_kind(mode)


def _overlapping(infos: list[zipfile.ZipInfo]) -> tuple[str, str] | None:
    """Two members whose stored bytes overlap (by their central directory entries), or None.

    Each member's local header (30 bytes and its name, at least) and compressed data must end
    before the next member's header begins: entries that point into one another's data make a
    3.4 KB zip read one game 20 times (58 s).  A directory or empty member counts as its header.
    """
    ordered = sorted(infos, key=lambda info: info.header_offset)
    for before, after in zip(ordered, ordered[1:]):
        name = before.orig_filename.encode("utf-8" if before.flag_bits & _UTF8_FLAG else "cp437")
        end = before.header_offset + 30 + len(name) + before.compress_size
        if after.header_offset < end:
            return before.filename, after.filename
    return None


_UTF8_FLAG = 1 << 11  # a zip entry's "name is UTF-8" flag


class _NoUtf8Flags(io.RawIOBase):
    """A zip file read with the UTF-8 flag of each central-directory entry cleared.

    zipfile decodes a flagged name strictly and raises UnicodeDecodeError for the whole zip if
    one is not UTF-8; cleared, every name is read as CP437, which keeps its bytes
    (``_zip_name`` reads them again).  The flag's byte is found where zipfile reads it: the
    central directory is read in one ``read`` from its start, entries 46 bytes plus names,
    and a member's local header in one of 30 bytes.
    """

    def __init__(self, path: str):
        self.handle = open(path, "rb")  # noqa: SIM115 - closed by _read_zip (zipfile leaves a file it was given open)
        self.name = path

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        return self.handle.seek(offset, whence)

    def tell(self) -> int:
        return self.handle.tell()

    def read(self, n: int = -1) -> bytes:
        data = self.handle.read(n)
        if data.startswith(b"PK\x03\x04") and len(data) == 30:  # a local header, read when opening a member
            return data[:7] + bytes([data[7] & ~(_UTF8_FLAG >> 8) & 0xFF]) + data[8:]
        if not data.startswith(b"PK\x01\x02"):
            return data
        patched, at = bytearray(data), 0
        while patched[at:at + 4] == b"PK\x01\x02" and at + 46 <= len(patched):
            patched[at + 9] &= ~(_UTF8_FLAG >> 8) & 0xFF
            at += 46 + sum(int.from_bytes(patched[at + k:at + k + 2], "little") for k in (28, 30, 32))
        return bytes(patched)

    def close(self) -> None:
        self.handle.close()
        super().close()


def _open_zip(path: str) -> zipfile.ZipFile:
    """The zip at ``path``; one whose UTF-8-flagged names are not all UTF-8 is read through
    _NoUtf8Flags (a local header's flag is read again when a member is opened: cleared too)."""
    try:
        return zipfile.ZipFile(path)
    except UnicodeDecodeError:
        return zipfile.ZipFile(_NoUtf8Flags(path))


def _zip_name(info: zipfile.ZipInfo) -> str:
    """A member's name from its bytes, as a folder's names are read: UTF-8, surrogate escapes
    for the bytes that are not (zipfile read an unflagged name as CP437, which keeps them)."""
    name = info.filename
    if name.isascii() or info.flag_bits & _UTF8_FLAG:
        return name
    return name.encode("cp437").decode("utf-8", "surrogateescape")


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

