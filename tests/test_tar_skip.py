"""Limits.max_skip_bytes: what a tar's members not read may cost to pass over.

In a compressed tar read as a stream, passing over a member means inflating it.  The bytes
inflated are counted here on the decompressed stream the reader is given (a wrapper on the
file object), not by the clock.  A plain tar on disk is passed over by seeking: its bytes
read are counted by the kernel (``/proc/self/io``'s ``rchar``).
"""

from __future__ import annotations

import io
import os
import tarfile

import pytest

from fuseki.book.formats import sources, tar_blocks
from fuseki.book.formats.sources import Limits, Skipped, SourceFile, iter_sources

GAME_A = b"(;SZ[9];B[ee])"
GAME_B = b"(;SZ[9];B[cc];W[gg])"
GAME_C = b"(;SZ[13];B[dd])"
BIG = 16 << 20  # a member of zeros: it compresses to a few kilobytes
LIMIT = 1 << 20


class Zeros(io.RawIOBase):
    """``size`` zero bytes, read without holding them."""

    def __init__(self, size: int):
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = min(len(buffer), self.left)
        buffer[:n] = bytes(n)
        self.left -= n
        return n


def add(tar: tarfile.TarFile, name: str, data: bytes | int) -> None:
    info = tarfile.TarInfo(name)
    info.size = data if isinstance(data, int) else len(data)
    tar.addfile(info, Zeros(data) if isinstance(data, int) else io.BytesIO(data))


def make(path, members: list[tuple[str, bytes | int]], mode: str = "w:gz"):
    with tarfile.open(path, mode) as tar:
        for name, data in members:
            add(tar, name, data)
    return str(path)


@pytest.fixture
def inflated(monkeypatch) -> list:
    """The decompressed streams the block reader was given; ``.bytes``: what each handed out."""
    streams = []
    original = tar_blocks.decompressed

    class Counting:
        def __init__(self, raw):
            self.raw, self.bytes = raw, 0

        def read(self, n: int = -1) -> bytes:
            data = self.raw.read(n)
            self.bytes += len(data)
            return data

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.raw.close()

    def counting(path):
        streams.append(Counting(original(path)))
        return streams[-1]

    monkeypatch.setattr(tar_blocks, "decompressed", counting)
    return streams


# Three non-games of 300 KB (900 KB passed over, under the limit), then one of 16 MB.
MEMBERS = [("a.sgf", GAME_A), *((f"notes{i}.txt", 300_000) for i in range(3)), ("b.sgf", GAME_B),
           ("big.bin", BIG), ("c.sgf", GAME_C)]


@pytest.mark.parametrize("mode, suffix", [("w:gz", "tgz"), ("w:bz2", "tar.bz2"), ("w:xz", "tar.xz")])
def test_a_compressed_tar_stops_before_a_member_that_would_pass_the_limit(tmp_path, inflated, mode, suffix):
    path = make(tmp_path / f"games.{suffix}", MEMBERS, mode)
    items = list(iter_sources([path], Limits(max_skip_bytes=LIMIT)))
    assert items == [SourceFile(f"{path}:a.sgf", GAME_A), SourceFile(f"{path}:b.sgf", GAME_B),
                     Skipped(path, f"stopped at member big.bin: passing over its {BIG} bytes would inflate more "
                                   f"than the limit of {LIMIT} bytes an archive may pass over; the rest is not read")]
    (stream,) = inflated
    assert stream.bytes <= LIMIT + tar_blocks.PIECE  # the limit and one piece read ahead, not 16 MB
    assert stream.bytes >= 900_000  # the three members under the limit were passed over


def test_under_the_limit_every_game_is_read(tmp_path):
    path = make(tmp_path / "games.tgz", MEMBERS)
    items = list(iter_sources([path], Limits(max_skip_bytes=BIG + 900_000)))
    assert items == [SourceFile(f"{path}:{name}", data) for name, data in MEMBERS if name.endswith(".sgf")]


def test_tarfile_where_the_block_reader_hands_over_keeps_the_same_limit(tmp_path):
    path = make(tmp_path / "games.tgz", MEMBERS)
    items = list(sources._read_tar_with_tarfile(path, Limits(max_skip_bytes=LIMIT), 0, None))
    assert [type(item).__name__ for item in items] == ["SourceFile", "SourceFile", "Skipped"]
    assert items[-1].name == path and items[-1].reason.startswith(f"stopped at member big.bin: passing over its {BIG}")


def test_a_game_over_the_file_limit_is_not_read_and_counts_as_passed_over(tmp_path):
    limits = Limits(max_file_bytes=1000, max_skip_bytes=5000)
    path = make(tmp_path / "games.tgz", [("a.sgf", GAME_A), ("big.sgf", 3000), ("c.sgf", GAME_C),
                                         ("huge.sgf", 4000), ("b.sgf", GAME_B)])
    items = list(iter_sources([path], limits))
    assert items == [SourceFile(f"{path}:a.sgf", GAME_A),
                     Skipped(f"{path}:big.sgf", "3000 bytes uncompressed, over the limit of 1000"),
                     SourceFile(f"{path}:c.sgf", GAME_C),
                     Skipped(path, "stopped at member huge.sgf: passing over its 4000 bytes would inflate more "
                                   "than the limit of 5000 bytes an archive may pass over; the rest is not read")]
    assert all(len(item.data) <= limits.max_file_bytes for item in items if isinstance(item, SourceFile))


def test_extension_headers_count_as_passed_over(tmp_path):
    long_name = "x" * 3000 + ".sgf"
    path = tmp_path / "games.tgz"
    with tarfile.open(path, "w:gz", format=tarfile.GNU_FORMAT) as tar:
        add(tar, "a.sgf", GAME_A)
        add(tar, long_name, GAME_B)
    items = list(iter_sources([str(path)], Limits(max_skip_bytes=2000)))
    assert items[0] == SourceFile(f"{path}:a.sgf", GAME_A)
    assert items[1] == Skipped(str(path), "stopped at an extension header (L): passing over its 3005 bytes would "
                                          "inflate more than the limit of 2000 bytes an archive may pass over; "
                                          "the rest is not read")
    assert len(items) == 2


def rchar() -> int:
    with open("/proc/self/io") as found:
        return next(int(line.split()[1]) for line in found if line.startswith("rchar:"))


@pytest.fixture
def sparse_tar(tmp_path) -> str:
    """A plain tar on disk: a game, a 1 GiB member of zeros (a hole in the file), a game."""
    path = tmp_path / "games.tar"
    size = 1 << 30
    with open(path, "wb") as out:
        for name, data in (("a.sgf", GAME_A),):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            out.write(info.tobuf() + data + bytes(-len(data) % 512))
        info = tarfile.TarInfo("big.bin")
        info.size = size
        out.write(info.tobuf())
        out.seek(size, os.SEEK_CUR)  # size is a multiple of 512: no padding
        info = tarfile.TarInfo("c.sgf")
        info.size = len(GAME_C)
        out.write(info.tobuf() + GAME_C + bytes(-len(GAME_C) % 512) + bytes(1024))
    if os.stat(path).st_blocks * 512 > 1 << 20:
        pytest.skip("this file system does not keep holes in files")
    return str(path)


def test_a_plain_tar_is_passed_over_by_seeking_without_a_limit(sparse_tar):
    before = rchar()
    items = list(iter_sources([sparse_tar], Limits(max_skip_bytes=1)))
    assert items == [SourceFile(f"{sparse_tar}:a.sgf", GAME_A), SourceFile(f"{sparse_tar}:c.sgf", GAME_C)]
    assert rchar() - before < 4 * tar_blocks.PIECE  # a few pieces, not the 1 GiB member


def test_tarfile_passes_over_a_plain_tar_by_seeking_too(sparse_tar):
    before = rchar()
    items = list(sources._read_tar_with_tarfile(sparse_tar, Limits(max_skip_bytes=1), 0, None))
    assert items == [SourceFile(f"{sparse_tar}:a.sgf", GAME_A), SourceFile(f"{sparse_tar}:c.sgf", GAME_C)]
    assert rchar() - before < 4 * tar_blocks.PIECE


def test_a_plain_tar_cut_inside_a_member_passed_over_is_still_damage(tmp_path):
    path = tmp_path / "cut.tar"
    with open(path, "wb") as out:
        info = tarfile.TarInfo("big.bin")
        info.size = 1 << 20
        out.write(info.tobuf() + bytes(1000))
    (item,) = iter_sources([str(path)])
    assert item.name == str(path) and "corrupt or unreadable archive" in item.reason
