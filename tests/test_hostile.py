"""Hostile and unlucky input from issue 40: each test is one of its findings, which failed before its fix.

Memory is asserted as a fixed bound or a ratio to the input (tracemalloc), never a time.
"""

from __future__ import annotations

import io
import os
import tarfile
import zipfile

import pytest

from fuseki.book.formats.records import read_games
from fuseki.book.formats.sources import SourceFile
from fuseki.book.pipeline import batches, importer
from fuseki.book.storage.store import Book

# --- finding 3: bytes are never text by accident ------------------------------------------------

GAME = b"(;GM[1]SZ[19];B[pd];W[dp])"
# Names as old collections write them: (bytes of the name, its form in the book: the bytes read
# as UTF-8, those that are not written \xNN; EUC-KR's \xcc\xbc happens to be UTF-8's U+033C)
NAMES = [(raw, raw.decode("utf-8", "backslashreplace")) for raw in (
    "秀策".encode("shift_jis"), "柯洁".encode("gb2312"), "이세돌".encode("euc_kr"), "José".encode("latin-1"), b"\xff")]


def _game(n: int) -> bytes:
    """A distinct game (its n-th move differs), so that no file is a duplicate of another."""
    letters = "abcdefghijklmnopqrs"
    return b"(;GM[1]SZ[19];B[pd];W[dp];B[%s])" % f"{letters[n % 19]}{letters[n // 19]}".encode()


def test_names_that_are_not_utf8_are_kept_escaped_and_the_import_goes_on(tmp_path, book_url):
    """A folder, a tar and a zip (flagged UTF-8 or not) of games whose names are Shift-JIS, GB2312,
    EUC-KR, Latin-1 and a lone 0xff: every game is added, each source shown with \\x escapes.
    Before: the first such name stopped the import with nothing added (UnicodeEncodeError
    writing the source; a flagged zip raised UnicodeDecodeError opening the zip)."""
    root = os.fsencode(tmp_path)
    folder = os.path.join(root, b"d")
    os.mkdir(folder)
    n = 0
    expected = set()
    for raw, shown in NAMES:
        with open(os.path.join(folder, raw + b".sgf"), "wb") as handle:
            handle.write(_game(n))
        expected.add(f"{tmp_path}/d/{shown}.sgf")
        n += 1
    tar_path = tmp_path / "games.tgz"
    with tarfile.open(tar_path, "w:gz", format=tarfile.GNU_FORMAT, encoding="utf-8", errors="surrogateescape") as tar:
        for raw, shown in NAMES:
            info = tarfile.TarInfo(os.fsdecode(raw + b".sgf"))
            data = _game(n)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
            expected.add(f"{tar_path}:{shown}.sgf")
            n += 1
    for flagged in (False, True):
        zip_path = tmp_path / f"games-{flagged}.zip"
        _zip_with_names(zip_path, [(raw, _game(n + i)) for i, (raw, _) in enumerate(NAMES)], flagged)
        expected.update(f"{zip_path}:{shown}.sgf" for _, shown in NAMES)
        n += len(NAMES)
    paths = [os.fsdecode(folder), str(tar_path), str(tmp_path / "games-False.zip"), str(tmp_path / "games-True.zip")]
    with Book.open(book_url) as book:
        report = importer.import_paths(book, paths, workers=0)
        with book.db.connect() as conn:
            sources = {row[0] for row in conn.exec_driver_sql("SELECT source FROM games")}
    assert report.skipped == []
    assert report.added == 4 * len(NAMES)
    assert sources == expected


def _zip_with_names(path, games: list[tuple[bytes, bytes]], flagged: bool) -> None:
    """A zip of ``(name bytes, game)`` with the UTF-8 flag set or clear on every entry, as broken
    zippers (set) and old Windows ones (clear) write names that are not UTF-8: zipfile writes
    a stand-in of the same length, whose bytes are then replaced."""
    stand_ins = [("abcdefghij"[i] * len(raw)).encode() + b".sgf" for i, (raw, _) in enumerate(games)]
    with zipfile.ZipFile(path, "w") as archive:  # stored: the names are found in the bytes
        for stand_in, (_, game) in zip(stand_ins, games):
            archive.writestr(stand_in.decode(), game)
    data = path.read_bytes()
    for stand_in, (raw, _) in zip(stand_ins, games):
        assert data.count(stand_in) == 2  # its local header and its central directory entry
        data = data.replace(stand_in, raw + b".sgf")
    data = bytearray(data)
    for signature, flags_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = data.find(signature)
        while at >= 0:
            flags = int.from_bytes(data[at + flags_at:at + flags_at + 2], "little")
            flags = flags | (1 << 11) if flagged else flags & ~(1 << 11)
            data[at + flags_at:at + flags_at + 2] = flags.to_bytes(2, "little")
            at = data.find(signature, at + 4)
    path.write_bytes(bytes(data))


# Text without CA: names and comments as Japanese, Chinese, Korean and European records write them
TEXTS = [
    ("shift_jis", "井山裕太", "黒の一手目は星です。白は小目に打ちました。", "cp932"),
    ("gb2312", "柯洁", "黑棋第一手下在星位，白棋应对小目。", "gb18030"),
    ("euc_kr", "이세돌", "흑의 첫 수는 화점이고 백은 소목에 두었습니다.", "cp949"),
    ("latin-1", "José", "Noir joue le premier coup au hoshi, très fort.", "iso8859-1"),
]


@pytest.mark.parametrize("charset, name, comment, read_as", TEXTS)
@pytest.mark.parametrize("fast", [True, False])
def test_text_without_ca_is_read_by_the_rule_and_the_guess_is_reported(charset, name, comment, read_as, fast):
    """UTF-8, then the detector's legacy charset, else Latin-1; the guess is an anomaly of the
    import.  Before: the Shift-JIS and EUC-KR names were read as GB18030 (mojibake), ``José``
    as a cut GB18030 character (``Jos\\xe9``), and the guess was said nowhere."""
    data = b"(;GM[1]SZ[19]PB[%s]PW[Xu];B[pd]C[%s];W[dp])" % (name.encode(charset), comment.encode(charset))
    (game,) = read_games(data, "t.sgf", fast=fast)
    assert (game.black, game.encoding) == (name, read_as)
    prepared = batches.prepare([SourceFile("t.sgf", data)], fast)
    (notes,) = prepared.anomalies.values()
    assert [note.reason.split(" (")[0] for note in notes] == [f"no CA: text read as {read_as}"]
    assert all(note.move is None for note in notes)
    # the comment alone (ASCII names) says the charset too
    data = b"(;GM[1]SZ[19]PB[Xu];B[pd]C[%s];W[dp])" % comment.encode(charset)
    assert read_games(data, "t.sgf", fast=fast)[0].encoding == read_as


def test_utf8_and_declared_text_is_no_guess():
    for data in (b"(;PB[%s];B[pd])" % "柯洁".encode(), b"(;CA[Shift_JIS]PB[%s];B[pd])" % "井山".encode("shift_jis")):
        prepared = batches.prepare([SourceFile("t.sgf", data)])
        assert prepared.anomalies == {}
