"""Where game files come from: single files, folders and archives, read without extracting.

:func:`iter_sources` turns the paths a user names into a stream of
:class:`SourceFile` (a name and the file's bytes) and :class:`Skipped` (a name and the
reason nothing was read), in a deterministic order: paths in the order given, folders
walked recursively with names sorted, archive members in archive order.

- ``.sgf`` files (any case) are read; in folders and archives other files are passed
  over silently (the AI archive holds ``kifu.index`` files and bare move lists).
- ``.tgz``/``.tar.gz``/``.tar`` (also ``.tar.bz2``/``.tar.xz``) and ``.zip`` archives are
  streamed member by member, in folders too.  Archives inside archives are not opened.
- Names: a file's path as given or as found under the folder given; an archive member is
  ``"<archive path>:<member name>"`` -- the ``GameRecord.source`` convention.

Memory stays bounded against archive bombs (:class:`Limits`): a member or file larger
than ``max_file_bytes`` is refused with a Skipped, and so is a zip with more than
``max_members`` entries; a tar's members are only known while streaming, so a tar
reaching the limit yields what came before and one Skipped for the rest.  A corrupt
archive yields a Skipped naming it, after any members read before the damage.

This module does not parse SGF (``book.records`` does) and never raises for bad input.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import tarfile
import zipfile
import zlib
from dataclasses import dataclass
from typing import Iterator

# Suffixes of files handed on as SourceFile.  Other formats (a Fuego opening book, say)
# plug in by adding their suffix here and dispatching on the name in the importer.
GAME_SUFFIXES = (".sgf", ".fuego")
FUEGO_NAMES = ("book.dat",)  # Fuego's and Pachi's opening book file (text; book.fuego reads it)
TAR_SUFFIXES = (".tgz", ".tar.gz", ".tar", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
ZIP_SUFFIXES = (".zip",)


@dataclass
class SourceFile:
    """One game file's bytes; ``name`` is what GameRecord.source will say."""

    name: str
    data: bytes


@dataclass
class Skipped:
    """A file, member or archive that was not read, and why."""

    name: str
    reason: str


@dataclass(frozen=True)
class Limits:
    """Bounds against archive bombs (defaults: 10 MB per file, a million members)."""

    max_file_bytes: int = 10 * 1024 * 1024
    max_members: int = 1_000_000


def iter_sources(paths: list[str], limits: Limits = Limits()) -> Iterator[SourceFile | Skipped]:
    """Game files (and the reasons for what was not read) under ``paths``, in order."""
    for path in paths:
        if os.path.isdir(path):
            yield from _walk(path, limits)
        elif not os.path.exists(path):
            yield Skipped(path, "no such file or folder")
        elif _kind(path) is None:
            yield Skipped(path, "not an SGF file, a Fuego book.dat or a .tgz/.tar.gz/.tar/.zip archive")
        else:
            yield from _read_path(path, limits)


def _kind(name: str) -> str | None:
    lower = name.lower()
    if lower.endswith(GAME_SUFFIXES) or lower.rsplit("/", 1)[-1] in FUEGO_NAMES:
        return "game"
    if lower.endswith(TAR_SUFFIXES):
        return "tar"
    if lower.endswith(ZIP_SUFFIXES):
        return "zip"
    return None


def _walk(folder: str, limits: Limits) -> Iterator[SourceFile | Skipped]:
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
            yield from _walk(entry.path, limits)
        elif _kind(entry.name) is not None:
            yield from _read_path(entry.path, limits)


def _read_path(path: str, limits: Limits) -> Iterator[SourceFile | Skipped]:
    kind = _kind(path)
    if kind == "tar":
        yield from _read_tar(path, limits)
    elif kind == "zip":
        yield from _read_zip(path, limits)
    else:
        yield _read_file(path, limits)


def _too_big(name: str, size: int, limits: Limits) -> Skipped:
    return Skipped(name, f"{size} bytes uncompressed, over the limit of {limits.max_file_bytes}")


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

class _CheckedHeader(tarfile.TarInfo):
    """A TarInfo that reports damaged headers, which tarfile takes for the end of the archive.

    tarfile.TarFile.next() stops silently at an invalid or truncated header anywhere but
    the first; this records the reason on the TarFile so the reader can say so.
    """

    @classmethod
    def fromtarfile(cls, tar):
        try:
            return super().fromtarfile(tar)
        except (tarfile.InvalidHeaderError, tarfile.TruncatedHeaderError) as exc:
            tar.damage = f"bad member header ({exc})"
            raise


_TAR_ERRORS = (tarfile.TarError, EOFError, OSError, zlib.error, lzma.LZMAError)
_OPENERS = ((b"\x1f\x8b", gzip.open), (b"BZh", bz2.open), (b"\xfd7zXZ\x00", lzma.open))


def _decompressed(path: str):
    """The tar stream of ``path``, decompressed by the gzip/bz2/lzma readers.

    Not tarfile's own "r|*" decompression: it keeps each decompressed block as one bytes
    object and copies what is left of it for every 10 KB read, which is quadratic on data
    that compresses well (skipping a 4 GB member of zeros took minutes).
    """
    with open(path, "rb") as handle:
        magic = handle.read(6)
    for prefix, opener in _OPENERS:
        if magic.startswith(prefix):
            return opener(path, "rb")
    return open(path, "rb")


def _read_tar(path: str, limits: Limits) -> Iterator[SourceFile | Skipped]:
    """Stream a tar (any compression tarfile knows) member by member."""
    count = 0
    try:
        with _decompressed(path) as stream, \
                tarfile.open(fileobj=stream, mode="r|", tarinfo=_CheckedHeader, bufsize=1 << 20) as tar:
            tar.damage = None
            while (member := tar.next()) is not None:
                tar.members.clear()  # tarfile keeps every header; we never look back
                count += 1
                if count > limits.max_members:
                    yield Skipped(path, f"more than {limits.max_members} members; the rest is not read")
                    return
                if not member.isfile() or _kind(member.name) != "game":
                    continue
                name = f"{path}:{member.name}"
                if member.size > limits.max_file_bytes:
                    yield _too_big(name, member.size, limits)
                    continue
                yield SourceFile(name, tar.extractfile(member).read())
            if tar.damage:
                yield Skipped(path, f"corrupt archive after {count} members: {tar.damage}")
    except _TAR_ERRORS as exc:
        yield Skipped(path, f"corrupt or unreadable archive after {count} members: {_reason(exc)}")


def _reason(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


# --- zip -----------------------------------------------------------------------------------

_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, zlib.error,
               RuntimeError, NotImplementedError)  # RuntimeError: encrypted member


def _declared_members(path: str) -> int | None:
    """The member count in a zip's end record (ZIP64's if there is one), or None if not found.

    Read before zipfile.ZipFile, which builds a ZipInfo for every member first: a zip
    listing a million members took 440 MB and 25 s just to be refused.
    """
    try:
        with open(path, "rb") as handle:
            end = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, end - (1 << 16) - 22 - 76))  # longest comment, ZIP64 record+locator
            tail = handle.read()
    except OSError:
        return None
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) - at < 22:
        return None
    count = int.from_bytes(tail[at + 10:at + 12], "little")
    at64 = tail.rfind(b"PK\x06\x06", 0, at)
    if count == 0xFFFF and at64 >= 0 and at - at64 >= 40:
        count = int.from_bytes(tail[at64 + 32:at64 + 40], "little")
    return count


def _read_zip(path: str, limits: Limits) -> Iterator[SourceFile | Skipped]:
    """Read a zip's game members; a damaged member is skipped and the rest still read."""
    declared = _declared_members(path)
    if declared is not None and declared > limits.max_members:
        yield Skipped(path, f"{declared} members, over the limit of {limits.max_members}")
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
            yield _read_zip_member(archive, info, f"{path}:{info.filename}", limits)


def _read_zip_member(archive, info, name: str, limits: Limits) -> SourceFile | Skipped:
    if info.file_size > limits.max_file_bytes:
        return _too_big(name, info.file_size, limits)
    try:
        with archive.open(info) as member:
            # read one byte more than allowed: a header may lie about the size
            data = member.read(limits.max_file_bytes + 1)
    except _ZIP_ERRORS as exc:
        return Skipped(name, f"corrupt member: {_reason(exc)}")
    if len(data) > limits.max_file_bytes:
        return _too_big(name, len(data), limits)
    return SourceFile(name, data)

