"""book.formats.sources: files, folders and archives built here in tmp_path."""

from __future__ import annotations

import gzip
import io
import shutil
import subprocess
import tarfile

import pytest

from fuseki.book.formats import sources
from fuseki.book.formats.sources import Limits, Skipped, SourceFile, iter_sources

from archives import add_tar_member, make_tar, make_zip

GAME_A = b"(;SZ[9];B[ee])"
GAME_B = b"(;SZ[9];B[cc];W[gg])"
GAME_C = b"(;SZ[13];B[dd])"


def collect(paths, **kw):
    return list(iter_sources([str(p) for p in paths], **kw))


def names(items):
    return [(type(i).__name__, i.name) for i in items]


MEMBERS = {"games/a.sgf": GAME_A, "games/readme.txt": b"not a game", "games/b.SGF": GAME_B,
           "kifu.index": b"123\tC2017", "deep/er/c.sgf": GAME_C}
EXPECTED_MEMBERS = [("games/a.sgf", GAME_A), ("games/b.SGF", GAME_B), ("deep/er/c.sgf", GAME_C)]


def test_single_files_in_any_case_of_the_extension(tmp_path):
    (tmp_path / "x.sgf").write_bytes(GAME_A)
    (tmp_path / "Y.SGF").write_bytes(GAME_B)
    items = collect([tmp_path / "Y.SGF", tmp_path / "x.sgf"])
    assert items == [SourceFile(str(tmp_path / "Y.SGF"), GAME_B), SourceFile(str(tmp_path / "x.sgf"), GAME_A)]


def test_named_paths_that_cannot_be_read_are_skipped_with_a_reason(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    items = collect([tmp_path / "missing.sgf", tmp_path / "notes.txt"])
    assert [type(i) for i in items] == [Skipped, Skipped]
    assert "no such file" in items[0].reason
    assert "not an SGF file" in items[1].reason


@pytest.mark.parametrize("suffix, mode", [(".tgz", "w:gz"), (".tar.gz", "w:gz"), (".tar", "w"),
                                          (".TAR.GZ", "w:gz"), (".tar.bz2", "w:bz2")])
def test_tar_archives_are_read_without_extracting(tmp_path, suffix, mode):
    path = make_tar(tmp_path / f"games{suffix}", MEMBERS, mode)
    items = collect([path])
    assert items == [SourceFile(f"{path}:{name}", data) for name, data in EXPECTED_MEMBERS]
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # nothing extracted


def test_zip_archives_are_read_and_folders_in_them_ignored(tmp_path):
    path = make_zip(tmp_path / "games.ZIP", {**MEMBERS, "empty/": b""})
    assert collect([path]) == [SourceFile(f"{path}:{name}", data) for name, data in EXPECTED_MEMBERS]


def test_folders_are_walked_recursively_in_sorted_order(tmp_path):
    root = tmp_path / "root"
    (root / "b" / "deeper").mkdir(parents=True)
    (root / "a").mkdir()
    (root / "z.sgf").write_bytes(GAME_A)
    (root / "b" / "deeper" / "2.sgf").write_bytes(GAME_B)
    (root / "b" / "1.Sgf").write_bytes(GAME_C)
    (root / "b" / "skip.txt").write_bytes(b"x")
    (root / "a" / "kifu.index").write_bytes(b"x")
    make_zip(root / "a" / "inner.zip", {"m.sgf": GAME_A})
    items = collect([root])
    assert names(items) == [
        ("SourceFile", f"{root}/a/inner.zip:m.sgf"),
        ("SourceFile", f"{root}/b/1.Sgf"),
        ("SourceFile", f"{root}/b/deeper/2.sgf"),
        ("SourceFile", f"{root}/z.sgf"),
    ]
    assert [i.data for i in items] == [GAME_A, GAME_C, GAME_B, GAME_A]


def test_paths_keep_the_order_given(tmp_path):
    (tmp_path / "1.sgf").write_bytes(GAME_A)
    (tmp_path / "2.sgf").write_bytes(GAME_B)
    items = collect([tmp_path / "2.sgf", tmp_path / "1.sgf", tmp_path / "2.sgf"])
    assert [i.data for i in items] == [GAME_B, GAME_A, GAME_B]


# --- damage --------------------------------------------------------------------------------

def test_garbage_archives_are_skipped(tmp_path):
    for name in ("bad.tgz", "bad.tar", "bad.zip", "empty.zip", "empty.tar.gz"):
        (tmp_path / name).write_bytes(b"" if name.startswith("empty") else b"this is no archive" * 50)
    items = collect(sorted(tmp_path.iterdir()))
    assert [type(i) for i in items] == [Skipped] * 5
    assert all("corrupt or unreadable archive" in i.reason for i in items)


def test_truncated_tgz_yields_what_came_before_then_a_skipped(tmp_path):
    big = {f"g{n:03}.sgf": (b"(;C[%d]" % n) + bytes(range(256)) * 40 + b")" for n in range(30)}
    path = make_tar(tmp_path / "cut.tgz", big)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    items = collect([path])
    assert 0 < len(items) < 30
    assert all(isinstance(i, SourceFile) for i in items[:-1])
    assert isinstance(items[-1], Skipped) and items[-1].name == str(path)
    assert "corrupt or unreadable archive" in items[-1].reason


def test_tar_with_a_damaged_header_says_so(tmp_path):
    path = make_tar(tmp_path / "hdr.tar", {"a.sgf": GAME_A, "b.sgf": GAME_B, "c.sgf": GAME_C}, "w")
    data = bytearray(path.read_bytes())
    data[1024:1124] = b"\xff" * 100  # the second member's header (512 header + 512 data)
    path.write_bytes(bytes(data))
    items = collect([path])
    assert items[0] == SourceFile(f"{path}:a.sgf", GAME_A)
    assert isinstance(items[-1], Skipped) and "bad member header" in items[-1].reason


def test_zip_with_a_corrupt_member_skips_only_that_member(tmp_path):
    payload = b"(;C[" + bytes(range(97, 123)) * 200 + b"])"
    path = make_zip(tmp_path / "crc.zip", {"a.sgf": GAME_A, "b.sgf": payload, "c.sgf": GAME_C})
    data = bytearray(path.read_bytes())
    start = data.index(b"b.sgf") + len(b"b.sgf") + 10  # inside b.sgf's compressed data
    data[start : start + 20] = bytes(20)
    path.write_bytes(bytes(data))
    items = collect([path])
    assert names(items) == [("SourceFile", f"{path}:a.sgf"), ("Skipped", f"{path}:b.sgf"),
                            ("SourceFile", f"{path}:c.sgf")]
    assert "corrupt member" in items[1].reason


# --- limits --------------------------------------------------------------------------------

def test_members_over_the_size_limit_are_refused(tmp_path):
    limits = Limits(max_file_bytes=len(GAME_B) - 1)
    members = {"a.sgf": GAME_A, "b.sgf": GAME_B, "c.sgf": GAME_C}
    for path in (make_tar(tmp_path / "t.tgz", members), make_zip(tmp_path / "z.zip", members)):
        items = collect([path], limits=limits)
        assert names(items) == [("SourceFile", f"{path}:a.sgf"), ("Skipped", f"{path}:b.sgf"),
                                ("SourceFile", f"{path}:c.sgf")]
        assert f"{len(GAME_B)} bytes uncompressed, over the limit of {len(GAME_B) - 1}" == items[1].reason
    (tmp_path / "big.sgf").write_bytes(GAME_B)
    (item,) = collect([tmp_path / "big.sgf"], limits=limits)
    assert isinstance(item, Skipped) and "over the limit" in item.reason


def test_a_compression_bomb_is_refused_without_inflating_it(tmp_path):
    path = tmp_path / "bomb.tgz"
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("bomb.sgf")
        info.size = 64 * 1024 * 1024
        tar.addfile(info, io.BufferedReader(_Zeros(info.size)))
        add_tar_member(tar, "ok.sgf", GAME_A)
    assert path.stat().st_size < 1024 * 1024
    items = collect([path])
    assert names(items) == [("Skipped", f"{path}:bomb.sgf"), ("SourceFile", f"{path}:ok.sgf")]


class _Zeros(io.RawIOBase):
    def __init__(self, size):
        self.left = size

    def readable(self):
        return True

    def readinto(self, buffer):
        n = min(len(buffer), self.left)
        buffer[:n] = bytes(n)
        self.left -= n
        return n


def test_archives_with_too_many_members_are_refused(tmp_path):
    members = {f"{n}.sgf": GAME_A for n in range(5)}
    limits = Limits(max_members=3)
    zipped = make_zip(tmp_path / "many.zip", members)
    (item,) = collect([zipped], limits=limits)
    assert item == Skipped(str(zipped), "5 members, over the limit of 3")
    tarred = make_tar(tmp_path / "many.tgz", members)
    items = collect([tarred], limits=limits)
    assert [type(i) for i in items] == [SourceFile] * 3 + [Skipped]
    assert items[-1].reason == "more than 3 members; the rest is not read"


# --- the tar reader against tarfile (the reference) -------------------------------------------

def tarfile_games(path) -> list[SourceFile]:
    """What tarfile reads as game members, named as iter_sources names them."""
    with tarfile.open(path) as tar:
        return [SourceFile(f"{path}:{m.name}", tar.extractfile(m).read())
                for m in tar if m.isfile() and m.name.lower().endswith(".sgf")]


@pytest.mark.parametrize("fmt", [tarfile.GNU_FORMAT, tarfile.PAX_FORMAT, tarfile.USTAR_FORMAT])
@pytest.mark.parametrize("mode", ["w", "w:gz", "w:bz2", "w:xz"])
def test_tar_reader_reads_what_tarfile_reads(tmp_path, fmt, mode):
    path = tmp_path / ("t.tar" + {"w": "", "w:gz": ".gz", "w:bz2": ".bz2", "w:xz": ".xz"}[mode])
    long_folder = "/".join(["folder-with-a-long-name"] * 5)  # 119 characters: ustar's name prefix
    with tarfile.open(path, mode, format=fmt) as tar:
        folder = tarfile.TarInfo("games")
        folder.type = tarfile.DIRTYPE
        tar.addfile(folder)
        add_tar_member(tar, "games/a.sgf", GAME_A)
        add_tar_member(tar, f"{long_folder}/b.sgf", GAME_B)
        if fmt != tarfile.USTAR_FORMAT:  # ustar cannot hold these names
            add_tar_member(tar, "x" * 150 + ".sgf", GAME_C)
            add_tar_member(tar, "棋譜/李昌鎬.sgf", GAME_A)
        link = tarfile.TarInfo("games/link.sgf")
        link.type, link.linkname = tarfile.SYMTYPE, "a.sgf"
        tar.addfile(link)
        hard = tarfile.TarInfo("games/hard.sgf")
        hard.type, hard.linkname = tarfile.LNKTYPE, "games/a.sgf"
        tar.addfile(hard)
        add_tar_member(tar, "games/notes.txt", b"x" * 1000)
        add_tar_member(tar, "games/empty.sgf", b"")
        add_tar_member(tar, "games/odd.sgf", b"(;" + b"B[aa];" * 300 + b")")
    items = collect([path])
    ours = [item for item in items if isinstance(item, SourceFile)]
    assert ours == tarfile_games(path)
    assert len(ours) == (4 if fmt == tarfile.USTAR_FORMAT else 6)
    # the links are named, not read (tests/test_hostile.py: devices and FIFOs too)
    assert [(item.member, item.reason.split(",")[0]) for item in items if isinstance(item, Skipped)] == [
        ("games/link.sgf", "a symbolic link"), ("games/hard.sgf", "a hard link")]


def test_tar_reader_reads_gnu_base_256_sizes(tmp_path):
    path = make_tar(tmp_path / "t.tar", {"a.sgf": GAME_A, "b.sgf": GAME_B}, "w")
    data = bytearray(path.read_bytes())
    size = len(GAME_A)
    data[124:136] = b"\x80" + size.to_bytes(11, "big")  # as GNU tar writes sizes of 8 GB and more
    data[148:156] = b"        "
    data[148:156] = b"%06o\0 " % sum(data[:512])
    path.write_bytes(bytes(data))
    assert collect([path]) == [SourceFile(f"{path}:a.sgf", GAME_A), SourceFile(f"{path}:b.sgf", GAME_B)]


def test_tar_cut_inside_a_member_keeps_the_members_before(tmp_path):
    path = make_tar(tmp_path / "t.tar", {"a.sgf": GAME_A, "b.sgf": GAME_B * 100}, "w")
    path.write_bytes(path.read_bytes()[:512 + 512 + 512 + 100])  # inside b.sgf's data
    items = collect([path])
    assert items[0] == SourceFile(f"{path}:a.sgf", GAME_A)
    assert items[1] == Skipped(str(path), "corrupt or unreadable archive after 2 members: unexpected end of data")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["tygem-2016-07.tgz", "ai-games.tgz"])
def test_tar_reader_equals_tarfile_on_the_real_archives(shared_data, name):
    path = shared_data / name
    ours = collect([path])
    assert not [item for item in ours if isinstance(item, Skipped)]
    assert ours == tarfile_games(path)
    assert len(ours) > 5000


# --- tar variants the block reader hands to tarfile ---------------------------------------------
#
# Each archive has games before and after the variant: the block reader reads the first,
# tarfile the rest from the member where it stopped, and together they must read what
# tarfile reads alone -- no game lost, none twice.

def tarfile_outcome(path) -> tuple[list[SourceFile], str | None]:
    """What tarfile reads as game members and the error it stops with (None if it reads to the end)."""
    games: list[SourceFile] = []
    try:
        with tarfile.open(path) as tar:
            for m in tar:
                if m.isfile() and m.name.lower().endswith(".sgf"):
                    games.append(SourceFile(f"{path}:{m.name}", tar.extractfile(m).read()))
    except tarfile.ReadError as exc:
        return games, str(exc)
    return games, None


@pytest.fixture
def handed_over(monkeypatch) -> list[int]:
    """The member counts at which the block reader handed an archive to tarfile, one per hand-over."""
    calls: list[int] = []
    original = sources._read_tar_with_tarfile

    def spy(path, limits, skip, failure):
        calls.append(skip)
        return original(path, limits, skip, failure)

    monkeypatch.setattr(sources, "_read_tar_with_tarfile", spy)
    return calls


def header(name: str, kind: bytes, size: int, fmt=tarfile.GNU_FORMAT) -> bytes:
    info = tarfile.TarInfo(name)
    info.type, info.size = kind, size
    return info.tobuf(fmt)


def member(name: str, data: bytes, kind: bytes = tarfile.REGTYPE) -> bytes:
    """One member's header, data and padding, as a tar writer lays them out."""
    return header(name, kind, len(data)) + data + bytes(-len(data) % 512)


def pax_records(fields: dict[str, str]) -> bytes:
    """A pax header's "length key=value\\n" records (the length counts its own digits)."""
    out = b""
    for key, value in fields.items():
        body = f" {key}={value}\n".encode()
        length = len(body) + 1
        while len(str(length)) + len(body) != length:
            length += 1
        out += str(length).encode() + body
    return out


def write_tar(path, *members: bytes):
    """Members laid end to end, then the end-of-archive blocks; gzip'd for a .tgz path."""
    data = b"".join(members) + bytes(1024)
    path.write_bytes(gzip.compress(data) if str(path).endswith(".tgz") else data)
    return path


MULTIVOL = b"M"  # GNU tar's multi-volume continuation type (tarfile has no name for it)
BIG = b"(;SZ[19]C[" + b"x" * 700 + b"];B[pd])"  # spans two blocks


def sparse_parts(real_size: int):
    """A game with holes: (offset, bytes) chunks and the whole file (holes are zeros)."""
    chunks = [(0, BIG[:10]), (1024, BIG[10:-8]), (real_size - 8, BIG[-8:])]
    whole = bytearray(real_size)
    for offset, data in chunks:
        whole[offset:offset + len(data)] = data
    return chunks, bytes(whole)


def gnu_sparse_member(name: str, chunks, real_size: int) -> bytes:
    """An old-GNU "S" member: up to 4 (offset, length) pairs and the real size in its header."""
    stored = b"".join(data for _, data in chunks)
    block = bytearray(header(name, tarfile.GNUTYPE_SPARSE, len(stored)))
    for i, (offset, data) in enumerate(chunks):
        block[386 + 24 * i: 410 + 24 * i] = b"%011o\0%011o\0" % (offset, len(data))
    block[483:495] = b"%011o\0" % real_size
    block[148:156] = b"        "
    block[148:156] = b"%06o\0 " % sum(block)
    return bytes(block) + stored + bytes(-len(stored) % 512)


def pax_sparse_member(name: str, chunks, real_size: int) -> bytes:
    """A pax sparse member, format 1.0 (GNU tar's default): the map is the first data block."""
    sparse_map = f"{len(chunks)}\n".encode() + b"".join(b"%d\n%d\n" % (o, len(d)) for o, d in chunks)
    data = sparse_map + bytes(-len(sparse_map) % 512) + b"".join(d for _, d in chunks)
    records = pax_records({"GNU.sparse.major": "1", "GNU.sparse.minor": "0", "GNU.sparse.name": name,
                           "GNU.sparse.realsize": str(real_size)})
    folder, base = name.rsplit("/", 1)
    return member("PaxHeaders/x", records, tarfile.XHDTYPE) + member(f"{folder}/GNUSparseFile.0/{base}", data)


@pytest.mark.parametrize("suffix", [".tar", ".tgz"])
@pytest.mark.parametrize("variant", ["gnu", "pax"])
def test_sparse_members_are_read_by_tarfile(tmp_path, handed_over, suffix, variant):
    chunks, whole = sparse_parts(5000)
    make = gnu_sparse_member if variant == "gnu" else pax_sparse_member
    path = write_tar(tmp_path / f"sparse{suffix}", member("games/a.sgf", GAME_A),
                     make("games/big.sgf", chunks, len(whole)), member("games/b.sgf", GAME_B))
    games, error = tarfile_outcome(path)
    assert error is None and games[1] == SourceFile(f"{path}:games/big.sgf", whole)  # the builders are right
    assert collect([path]) == games
    assert handed_over == [1]  # after a.sgf, read by the block reader


def test_a_multi_volume_continuation_is_read_by_tarfile(tmp_path, handed_over):
    # The second volume of a GNU multi-volume archive starts with the tail of a member
    # ("M"); tarfile passes over it as a member of a type it does not read.
    path = write_tar(tmp_path / "volume-2.tar", member("games/c.sgf", BIG[300:], MULTIVOL),
                     member("games/a.sgf", GAME_A), member("games/b.sgf", GAME_B))
    games, error = tarfile_outcome(path)
    assert error is None and len(games) == 2
    assert collect([path]) == games
    assert handed_over == [0]


def test_a_solaris_extended_header_is_read_by_tarfile(tmp_path, handed_over):
    path = write_tar(tmp_path / "solaris.tar", member("games/a.sgf", GAME_A),
                     member("X/b", pax_records({"path": "games/renamed.sgf"}), b"X"),
                     member("games/b.sgf", GAME_B))
    games, error = tarfile_outcome(path)
    assert error is None and games[1].name.endswith(":games/renamed.sgf")
    assert collect([path]) == games
    assert handed_over == [1]


@pytest.mark.parametrize("fields, handed", [({"comment": "4b825dc642cb6eb9a060e54bf8d69288fbee4904"}, []),
                                            ({"path": "games/every.sgf"}, [0])])
def test_pax_global_headers(tmp_path, handed_over, fields, handed):
    # git archive writes a global header with a comment (the commit id): the block reader
    # reads on; a global path or size renames or resizes the members after it: tarfile reads.
    path = tmp_path / "global.tar"
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT, pax_headers=fields) as tar:
        for name, data in (("games/a.sgf", GAME_A), ("games/b.sgf", GAME_B)):
            add_tar_member(tar, name, data)
    games, error = tarfile_outcome(path)
    assert error is None and len(games) == 2
    assert collect([path]) == games
    assert handed_over == handed


def test_what_the_block_reader_takes_for_damage_tarfile_may_read(tmp_path, handed_over):
    # A pax header ending in bytes that are no record: tarfile stops reading records there.
    records = pax_records({"path": "games/renamed.sgf"}) + b"trailing words"
    path = write_tar(tmp_path / "odd.tar", member("games/a.sgf", GAME_A),
                     member("PaxHeaders/b", records, tarfile.XHDTYPE), member("games/b.sgf", GAME_B),
                     member("games/c.sgf", GAME_C))
    games, error = tarfile_outcome(path)
    # what tarfile makes of such a header changed within 3.11 (Debian 12's 3.11.2 stops after a.sgf,
    # 3.11.4+ reads the rename): whichever it is, the import hands over and reads the same
    assert error is None and [g.name.rsplit(":", 1)[1] for g in games] in (
        ["games/a.sgf", "games/renamed.sgf", "games/c.sgf"], ["games/a.sgf"])
    found = collect([path])
    assert found[:len(games)] == games
    # where tarfile stops silently, the import also names the archive and the damage it met
    rest = [] if len(games) == 3 else [Skipped(str(path), found[-1].reason)]
    assert found[len(games):] == rest
    if rest:
        assert "pax record" in rest[0].reason
    assert handed_over == [1]


def test_damage_tarfile_cannot_read_either_is_reported_once(tmp_path, handed_over):
    path = write_tar(tmp_path / "cut.tar", member("games/a.sgf", GAME_A), member("games/b.sgf", BIG))
    path.write_bytes(path.read_bytes()[:512 * 4])  # inside b.sgf's data
    assert collect([path]) == [SourceFile(f"{path}:games/a.sgf", GAME_A),
                               Skipped(str(path), "corrupt or unreadable archive after 2 members: "
                                                  "unexpected end of data")]
    assert handed_over == [1]


def test_tarfile_keeps_the_member_limit(tmp_path):
    path = write_tar(tmp_path / "many.tar", member("games/c.sgf", BIG, MULTIVOL),
                     *(member(f"games/{n}.sgf", GAME_A) for n in range(5)))
    items = collect([path], limits=Limits(max_members=3))
    assert names(items) == [("SourceFile", f"{path}:games/0.sgf"), ("SourceFile", f"{path}:games/1.sgf"),
                            ("Skipped", str(path))]
    assert items[-1].reason == "more than 3 members; the rest is not read"


# GNU tar itself, where installed: its sparse formats and a multi-volume archive.

def gnu_tar() -> str:
    path = shutil.which("tar")
    if path is None or b"GNU tar" not in subprocess.run([path, "--version"], capture_output=True).stdout:
        pytest.skip("GNU tar is not installed")
    return path


def make_holes(path, whole: bytes) -> None:
    """Write ``whole`` with its runs of 4 KB zero blocks as holes."""
    with open(path, "wb") as handle:
        for at in range(0, len(whole), 4096):
            piece = whole[at:at + 4096]
            if piece.count(0) == len(piece):
                handle.seek(len(piece), 1)
            else:
                handle.write(piece)
        handle.truncate(len(whole))


@pytest.mark.parametrize("options", [["--format=gnu"], ["--format=posix", "--sparse-version=0.0"],
                                     ["--format=posix", "--sparse-version=0.1"],
                                     ["--format=posix", "--sparse-version=1.0"]])
def test_sparse_members_written_by_gnu_tar(tmp_path, handed_over, options):
    tar = gnu_tar()
    folder = tmp_path / "games"
    folder.mkdir()
    (folder / "a.sgf").write_bytes(GAME_A)
    whole = BIG[:10] + bytes(40_000) + BIG[10:-8] + bytes(40_000) + BIG[-8:]
    make_holes(folder / "big.sgf", whole)
    (folder / "c.sgf").write_bytes(GAME_C)
    path = tmp_path / "sparse.tar"
    subprocess.run([tar, "--sparse", *options, "-cf", str(path), "-C", str(tmp_path),
                    "games/a.sgf", "games/big.sgf", "games/c.sgf"], check=True)
    with tarfile.open(path) as archive:
        if not archive.getmember("games/big.sgf").sparse:
            pytest.skip("this filesystem keeps no holes, so tar wrote no sparse member")
    games, error = tarfile_outcome(path)
    assert error is None and games[1] == SourceFile(f"{path}:games/big.sgf", whole)
    assert collect([path]) == games
    assert handed_over == [1]


def test_multi_volume_archives_written_by_gnu_tar(tmp_path):
    tar = gnu_tar()
    folder = tmp_path / "games"
    folder.mkdir()
    for name, data in (("a.sgf", GAME_A), ("c.sgf", b"(;SZ[19]C[" + b"x" * 25_000 + b"];B[aa])"),
                       ("b.sgf", GAME_B)):
        (folder / name).write_bytes(data)
    volumes = [tmp_path / "v1.tar", tmp_path / "v2.tar"]
    subprocess.run([tar, "-cM", "-L", "20", "-f", str(volumes[0]), "-f", str(volumes[1]),
                    "-C", str(tmp_path), "games/a.sgf", "games/c.sgf", "games/b.sgf"],
                   check=True, stdin=subprocess.DEVNULL)
    # volume 1 ends inside c.sgf: both readers stop there, after a.sgf
    games, error = tarfile_outcome(volumes[0])
    items = collect([volumes[0]])
    assert error == "unexpected end of data" and games == [SourceFile(f"{volumes[0]}:games/a.sgf", GAME_A)]
    assert items[:-1] == games
    assert items[-1] == Skipped(str(volumes[0]), "corrupt or unreadable archive after 2 members: "
                                                 "unexpected end of data")
    # volume 2 starts with c.sgf's tail ("M"), then b.sgf
    games, error = tarfile_outcome(volumes[1])
    assert error is None and games == [SourceFile(f"{volumes[1]}:games/b.sgf", GAME_B)]
    assert collect([volumes[1]]) == games


def test_the_listed_member_count_equals_zipfiles(tmp_path):
    """sources._zip_members steps over the central directory's entries; zipfile reads them
    all: the counts are equal, names and comments long enough to cross its 1 MB reads."""
    import random
    import zipfile

    from fuseki.book.formats.sources import _zip_members

    rng = random.Random(7)
    for trial in range(12):
        path = tmp_path / f"{trial}.zip"
        with zipfile.ZipFile(path, "w") as archive:
            for i in range(rng.randint(0, 1500)):
                info = zipfile.ZipInfo("x" * rng.randint(1, 3000) + f"{i}.sgf")
                info.comment = b"c" * rng.randint(0, 300)
                archive.writestr(info, b"(;GM[1])")
            archive.comment = b"note" * rng.randint(0, 100)
        with zipfile.ZipFile(path) as archive:
            count = len(archive.infolist())
        assert _zip_members(str(path), 10**6) == (count, count)
        assert _zip_members(str(path), 3) == (count, min(count, 4))
