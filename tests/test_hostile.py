"""Hostile and unlucky input from issue 40: each test is one of its findings, which failed before its fix.

Memory is asserted as a fixed bound or a ratio to the input (tracemalloc), never a time.
"""

from __future__ import annotations

import io
import json
import os
import stat
import tarfile
import zipfile

import pytest

from fuseki.book.analysis.pipeline import batches, importer
from fuseki.book.formats import sources
from fuseki.book.formats.sgf_reader import read_games
from fuseki.book.formats.sources import SourceFile, iter_sources
from fuseki.book.storage.store import Book

from conftest import peak_memory

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


# --- findings 1 and 6: every request costs what it is worth ------------------------------------

HUGE_AFTER = 10**9  # an id past the book: its rank array would be 8 GB (the worker kept 7.8 GB)
BOUND = 16 << 20  # bytes a refused request may allocate, whatever its numbers


@pytest.fixture(scope="module")
def small_book(tmp_path_factory):
    from webbook import build_book

    return build_book(tmp_path_factory.mktemp("hostile") / "book.sqlite")


@pytest.fixture
def web(small_book, monkeypatch):
    """The web API on a five-game book, every list sorted by the rank array (as a busy position's)."""
    from fuseki.book.storage import store
    from fuseki.book.ui.web.app import create_app

    monkeypatch.setattr(store, "FEW_GAMES", 0)
    app = create_app(book_url=str(small_book))
    app.config["TESTING"] = False
    yield app.test_client()
    app.extensions["fuseki_book"].close()


@pytest.mark.parametrize("url", ["/api/games?moves=pd", "/api/pattern/games?moves=pd&region=N19:T13",
                                 "/api/player?name=Kato%20Masao"])
def test_an_after_past_the_book_is_refused_before_any_work(web, url):
    """Before: /api/games?after=1000000000 built and kept an int64 array of 10^9 + 1 entries."""
    for after in (HUGE_AFTER, 2**63 - 1):
        answer, peak = peak_memory(lambda after=after: web.get(f"{url}&after={after}"))
        assert answer.status_code == 404, answer.get_json()
        assert f"no game {after}" in answer.get_json()["error"]
        assert peak < BOUND, f"{url} after={after} held {peak:,} bytes"
    first = web.get(f"{url}&page_size=1").get_json()  # a real cursor still pages
    games = first.get("games", first)
    if games["after"] is not None:
        assert web.get(f"{url}&page_size=1&after={games['after']}").status_code == 200


def test_the_book_refuses_an_after_past_it_before_building_ranks(small_book, monkeypatch):
    """Book.games (the CLI's and the shell's way in too) checks the cursor itself."""
    from fuseki.book.storage import store
    from fuseki.engine.core.board import Board

    monkeypatch.setattr(store, "FEW_GAMES", 0)
    with store.Book.open(str(small_book)) as book:
        def refused():
            with pytest.raises(ValueError, match=f"no game {HUGE_AFTER}"):
                book.games(Board(19), after=HUGE_AFTER)
        _, peak = peak_memory(refused)
    assert peak < BOUND


@pytest.mark.parametrize("value", [2**63, 2**64, 10**20, 100_001])
def test_a_move_range_past_any_game_is_400_not_500(web, value):
    """Before: moves_from/moves_to >= 2^63 raised OverflowError in the scan (HTTP 500)."""
    for name in ("moves_from", "moves_to"):
        answer = web.get(f"/api/pattern?moves=pd&region=N19:T13&{name}={value}")
        assert answer.status_code == 400, answer.data[:200]
        assert "at most 100,000" in answer.get_json()["error"]
    assert web.get("/api/pattern?moves=pd&region=N19:T13&moves_from=1&moves_to=100000").status_code == 200


def test_the_pattern_command_refuses_a_huge_move_number_in_one_line(small_book, capsys):
    """Before: ``fuseki pattern --moves-from 99999999999999999999`` printed a traceback."""
    from fuseki.book.ui.fuseki_command import main

    for option in ("--moves-from", "--moves-to"):
        code = main(["pattern", "--book", str(small_book), "--moves", "pd", "--region", "N19:T13",
                     option, "99999999999999999999"])
        err = capsys.readouterr().err
        assert code == 2  # as every bad pattern option
        assert err.count("\n") == 1 and err.startswith("fuseki pattern: bad move range"), err


# --- finding 2: a slow or idle connection holds no worker --------------------------------------

IDLE = 100  # connections that each send one byte and wait (40 froze the server before)


def test_serve_answers_while_idle_connections_hold_one_byte_each(small_book):
    """A real ``fuseki serve`` (2 workers x 2 threads) with 100 connections that sent ``G`` and
    wait answers another client: before, each such connection held a thread until it closed, and
    with 40 every other request timed out.  Then a slow head is closed after REQUEST_WAIT, not held."""
    import socket

    from browsing import start_serve

    process, port = start_serve(str(small_book), "--workers", "2")
    idle = []
    try:
        for _ in range(IDLE):
            sock = socket.create_connection(("127.0.0.1", port), timeout=30)
            sock.sendall(b"G")
            idle.append(sock)
        for _ in range(5):  # the generous deadline: the same 30 s as each idle socket's
            with socket.create_connection(("127.0.0.1", port), timeout=30) as other:
                other.sendall(b"GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                answer = b""
                while chunk := other.recv(65536):
                    answer += chunk
            assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
        # the idle ones are still open (closed only after REQUEST_WAIT), and a head that completes is answered
        idle[0].sendall(b"ET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        assert idle[0].recv(12) == b"HTTP/1.1 200"
    finally:
        for sock in idle:
            sock.close()
        process.terminate()
        process.communicate(timeout=30)


def test_a_head_that_never_ends_is_closed(small_book):
    """The worker closes a connection whose head is not whole within REQUEST_WAIT (here 1 s, set by
    FUSEKI_REQUEST_WAIT), rather than keep it (and before, a thread) for ever."""
    import re
    import socket
    import subprocess
    import sys

    from browsing import ENV, ROOT

    process = subprocess.Popen([sys.executable, "-m", "fuseki", "serve", "--book", str(small_book), "--port", "0",
                                "--workers", "1"], cwd=ROOT, env={**ENV, "FUSEKI_REQUEST_WAIT": "1"},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        port = int(re.search(r"at http://127\.0\.0\.1:(\d+)/", process.stdout.readline()).group(1))
        with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
            sock.sendall(b"GET /api/info HTTP/1.1\r\n")
            assert sock.recv(100) == b""  # closed by the server, long before the 60 s time-out
    finally:
        process.terminate()
        process.communicate(timeout=30)


# --- finding 5: a small archive cannot make the import read without end --------------------------

def test_members_read_as_games_count_against_a_budget_per_archive(tmp_path):
    """A .tar.xz of one large game copied 40 times (a few KB on disk) stops at the budget, named;
    the games before are read.  Before: every copy was read and parsed (9.4 KB: 1.7 GB, 154 s)."""
    from fuseki.book.formats.sources import Limits, Skipped

    game = b"(;GM[1]SZ[19]C[" + b"x" * 1_000_000 + b"];B[pd])"
    path = tmp_path / "bomb.tar.xz"
    with tarfile.open(path, "w:xz") as tar:
        for i in range(40):
            info = tarfile.TarInfo(f"g{i:02d}.sgf")
            info.size = len(game)
            tar.addfile(info, io.BytesIO(game))
    assert path.stat().st_size < 20_000
    limits = Limits(min_read_bytes=10 * len(game))
    assert limits.read_budget(path.stat().st_size) == 10 * len(game)
    for items in (list(iter_sources([str(path)], limits)),
                  list(sources._read_tar_with_tarfile(str(path), limits, 0, None))):
        assert [item.name for item in items[:-1]] == [f"{path}:g{i:02d}.sgf" for i in range(10)]
        assert isinstance(items[-1], Skipped) and "member g10.sgf" in items[-1].reason
        assert f"more than {10 * len(game)} bytes" in items[-1].reason
    zipped = tmp_path / "bomb.zip"
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as archive:
        for i in range(40):
            archive.writestr(f"g{i:02d}.sgf", game)
    items = list(iter_sources([str(zipped)], limits))
    assert len(items) == 11 and "member g10.sgf" in items[-1].reason


def test_a_zip_whose_entries_overlap_is_refused(tmp_path):
    """20 central directory entries pointing at one compressed game (a 3.4 KB zip took 58 s)."""
    from fuseki.book.formats.sources import Skipped

    one = tmp_path / "one.zip"
    with zipfile.ZipFile(one, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("g.sgf", GAME)
    data = one.read_bytes()
    central = data.index(b"PK\x01\x02")
    end = data.index(b"PK\x05\x06")
    entry = data[central:end]
    records = bytearray(data[end:])
    records[8:10] = records[10:12] = (20).to_bytes(2, "little")  # entries on this disk, in all
    records[12:16] = (20 * len(entry)).to_bytes(4, "little")  # the directory's size
    bomb = tmp_path / "bomb.zip"
    bomb.write_bytes(data[:central] + entry * 20 + bytes(records))
    (item,) = list(iter_sources([str(bomb)]))
    assert isinstance(item, Skipped) and "overlap" in item.reason
    (good,) = list(iter_sources([str(one)]))  # one entry: read
    assert good.data == GAME


# --- finding 4: memory bounded by input size ----------------------------------------------------

def test_a_huge_pax_header_is_named_without_reading_it(tmp_path):
    """A .tgz holding a game, then a member whose pax header is 20 MB: the game is read, the
    header named, and the reader holds far less than the header.  Before: the block reader took
    it for damage and tarfile read it whole (a 1,000 MB header: 3.17 GB), naming nothing."""
    from fuseki.book.formats.sources import Skipped
    from fuseki.book.formats.tar_blocks import EXTENSION_LIMIT

    path = tmp_path / "pax.tgz"
    header = 20 << 20
    with tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("first.sgf")
        info.size = len(GAME)
        tar.addfile(info, io.BytesIO(GAME))
        info = tarfile.TarInfo("second.sgf")
        info.size = len(GAME)
        info.pax_headers = {"comment": "x" * header}
        tar.addfile(info, io.BytesIO(GAME))
    items, peak = peak_memory(lambda: list(iter_sources([str(path)])))
    assert [type(item) for item in items] == [SourceFile, Skipped]
    assert items[0].data == GAME
    assert "extension header (x)" in items[1].reason and f"limit of {EXTENSION_LIMIT}" in items[1].reason
    assert peak < header // 4, f"held {peak:,} bytes for a {header:,}-byte header"


WORKER_PEAK = """
import resource, sys
from fuseki.book.analysis.pipeline.importer import import_paths
from fuseki.book.storage.store import Book
with Book.open(sys.argv[1]) as book:
    report = import_paths(book, [sys.argv[2]], workers=1)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, report.added)
for note in report.anomalies + report.skipped:
    print(note.reason)
"""


def _worker_peak(book: str, path) -> tuple[int, int, list[str]]:
    """(peak RSS in bytes of the import's one worker, games added, anomalies and skipped files):
    ``path`` imported into ``book`` by a fresh process, whose only child is the worker."""
    import subprocess
    import sys

    from browsing import ENV, ROOT

    run = subprocess.run([sys.executable, "-c", WORKER_PEAK, book, str(path)], cwd=ROOT, env=ENV,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    head, *notes = run.stdout.splitlines()
    rss, added = map(int, head.split())
    return rss * 1024, added, notes


@pytest.fixture(scope="module")
def one_game_worker(tmp_path_factory) -> int:
    """The peak RSS of the worker importing one short game of setup stones (the sgfmill path)."""
    one = tmp_path_factory.mktemp("one") / "one.sgf"
    one.write_bytes(b"(;GM[1]SZ[19]AB[dd][pp]AW[dp][pd];B[qf];W[fq])")
    base, added, notes = _worker_peak(str(one.with_suffix(".sqlite")), one)
    assert (added, notes) == (1, [])
    return base


SETUP = b"(;GM[1]SZ[19]AB[dd][pp]AW[dp][pd]"  # AW: the fast path leaves the game to sgfmill
LONG_GAMES = {  # about 9.8 MB each, under the file limit; what the worker held before, and in how long
    # 2.1 M moves: cut at 1,444 and named (1.66 GB, 51 s)
    "moves": (SETUP + b";B[];W[];B[tt];W[];B[];W[tt]" * 350_000 + b")", 1,
              ["game has 2100000 moves; kept the first 1444 (limit: 4 \u00d7 the board's points)"]),
    # 1.95 M comment nodes after one move: refused and named (1.9 M: 1.06 GB)
    "comment nodes": (SETUP + b";B[qf]" + b";C[x]" * 1_950_000 + b")", 0,
                      ["1950001 nodes without a move on the main line (limit: 4 \u00d7 the board's points)"]),
    # 2.4 M comments in one node: refused and named (0.49 GB)
    "values": (SETUP + b";B[qf]" + b"C[x]" * 2_400_000 + b")", 0,
               ["2400007 property values on the main line (limit: 32 \u00d7 4 \u00d7 the board's points)"]),
    # 2.4 M moves in the second variation: the main line is read, and the game kept whole (1.88 GB)
    "a variation": (SETUP + b";B[qf](;W[cc])(" + b";B[];W[]" * 1_220_000 + b"))", 1, []),
    # a root of 2.4 M setup stones and no AW: the fast path met it first, and its root regex held
    # 1.0 GB before the game reached the sgfmill reader; now it goes there at once, refused and named
    "a root's values": (b"(;GM[1]SZ[19]AB" + b"[aa]" * 2_400_000 + b";B[qf])", 0,
                        ["2400002 property values on the main line (limit: 32 \u00d7 4 \u00d7 the board's points)"]),
}


@pytest.mark.parametrize("kind", LONG_GAMES)
def test_a_long_game_on_the_sgfmill_path_holds_what_its_record_keeps(tmp_path, kind, one_game_worker):
    """A 9.8 MB game of setup stones (which the fast path leaves to sgfmill) whose moves, whose
    main line's nodes without a move or property values, or whose variations are past the
    move limit, or a root of 2.4 M values (which the fast path leaves to sgfmill as too many):
    read (the moves cut at 1,444, the variation kept but not parsed) or refused,
    and named, the worker's
    peak RSS within 3 times the file's size of a one-game import's (it holds the file's bytes as
    sent to it, and the text sgfmill reads: a ratio to the input, since the base RSS is the
    machine's).  Before: sgfmill parsed the whole game, then the main line was cut (the worker
    held 0.49 to 1.88 GB: 50 to 190 times the file; now 5 to 11 MB more than for one game)."""
    from fuseki.engine.core.base import move_limit

    data, added, notes = LONG_GAMES[kind]
    assert 9_500_000 < len(data) < 10_000_000
    path = tmp_path / "long.sgf"
    path.write_bytes(data)
    peak, got_added, got_notes = _worker_peak(str(tmp_path / "long.sqlite"), path)
    assert peak - one_game_worker < 3 * len(data), f"worker {peak:,} bytes, {one_game_worker:,} for one game"
    assert (got_added, [note.split(": ", 1)[-1] if note.startswith(str(path)) else note for note in got_notes]) \
        == (added, notes)
    if added:
        with Book.open(str(tmp_path / "long.sqlite"), readonly=True) as book:
            [game_id] = book.game_ids()
            assert len(book.game(game_id).moves) == (move_limit(19) if kind == "moves" else 2)  # B[qf];W[cc]

def test_a_fallback_engine_answering_without_end_is_cut_off(tmp_path):
    """An engine answering ``= x`` then 1 MB lines (200 of them here, then silence): the client
    gives up at RESPONSE_LIMIT holding a bounded amount.  Before: it kept every line (2.8 GB in
    30 s, then MemoryError), and here would hold all 200 MB until its time-out."""
    import sys

    from fuseki.engine.players.gtp_client import QUEUED, RESPONSE_LIMIT, GtpClient, GtpGarbage

    engine = tmp_path / "endless.py"
    engine.write_text("import sys, time\n"
                      "sys.stdin.readline()\n"
                      "sys.stdout.write('= x\\n')\n"
                      "line = 'y' * 1_000_000 + '\\n'\n"
                      "for _ in range(200):\n"
                      "    sys.stdout.write(line)\n"
                      "sys.stdout.flush()\n"
                      "time.sleep(600)\n")

    def ask():
        with GtpClient([sys.executable, str(engine)], timeout=120) as client:
            with pytest.raises(GtpGarbage, match="longer than"):
                client.send("name")
    _, peak = peak_memory(ask)
    # the response's lines and the queue's pieces, each at most a line
    bound = 3 * RESPONSE_LIMIT + (QUEUED + 2) * (1 << 20)
    assert peak < bound, f"held {peak:,} bytes"


# --- finding 6: everything skipped is named -------------------------------------------------------

@pytest.mark.parametrize("compression", ["gz", ""])
def test_links_devices_and_fifos_inside_a_tar_are_named(tmp_path, compression, book_url):
    """``*.sgf`` members that are links, devices or FIFOs are skipped and named, in the summary
    and in --report, by the block reader and by tarfile.  Before: dropped without a word."""
    from fuseki.book.analysis.pipeline.report import SKIPPED
    from fuseki.book.formats.sources import Skipped

    path = tmp_path / f"odd.tar{'.' + compression if compression else ''}"
    kinds = {tarfile.SYMTYPE: "a symbolic link", tarfile.LNKTYPE: "a hard link", tarfile.CHRTYPE: "a character device",
             tarfile.BLKTYPE: "a block device", tarfile.FIFOTYPE: "a FIFO"}
    with tarfile.open(path, f"w:{compression}") as tar:
        info = tarfile.TarInfo("real.sgf")
        info.size = len(GAME)
        tar.addfile(info, io.BytesIO(GAME))
        for n, kind in enumerate(kinds):
            info = tarfile.TarInfo(f"odd{n}.sgf")
            info.type = kind
            info.linkname = "real.sgf" if kind in (tarfile.SYMTYPE, tarfile.LNKTYPE) else ""
            tar.addfile(info)
    expected = [(f"odd{n}.sgf", f"{what}, not a regular file: not read") for n, what in enumerate(kinds.values())]
    by_tarfile = list(sources._read_tar_with_tarfile(str(path), sources.Limits(), 0, None))
    for items in (list(iter_sources([str(path)])), by_tarfile):
        assert isinstance(items[0], SourceFile)
        assert [(item.member, item.reason) for item in items[1:] if isinstance(item, Skipped)] == expected
    report_path = tmp_path / "report.jsonl"
    with Book.open(book_url) as book, open(report_path, "w", encoding="utf-8") as listing:
        report = importer.import_paths(book, [str(path)], workers=0, report=_report(listing))
    assert report.added == 1
    assert [(note.member, note.reason) for note in report.skipped] == expected
    assert f"{path}:odd0.sgf: a symbolic link" in str(report)
    lines = [json.loads(line) for line in report_path.read_text(encoding="utf-8").splitlines()]
    assert [(line["member"], line["reason"]) for line in lines if line["kind"] == SKIPPED] == expected


def test_links_devices_and_fifos_inside_a_zip_are_named(tmp_path, book_url):
    """A zip made on Unix keeps each member's mode: ``zip -y`` stores a symbolic link as a member
    whose data is its target.  Such ``*.sgf`` members are named as what they are and not read
    (before: the link's target text was read as a game and skipped as "no SGF data found"); a
    member without a mode (a zip made elsewhere) is read."""
    path = tmp_path / "odd.zip"
    kinds = {stat.S_IFLNK: "a symbolic link", stat.S_IFCHR: "a character device", stat.S_IFIFO: "a FIFO"}
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("real.sgf", GAME)
        for n, kind in enumerate(kinds):
            info = zipfile.ZipInfo(f"odd{n}.sgf")
            info.create_system, info.external_attr = 3, (kind | 0o644) << 16
            archive.writestr(info, b"real.sgf")
        plain = zipfile.ZipInfo("plain.sgf")
        plain.create_system, plain.external_attr = 0, 0  # made on another system: no mode
        archive.writestr(plain, GAME)
    expected = [(f"odd{n}.sgf", f"{what}, not a regular file: not read") for n, what in enumerate(kinds.values())]
    items = list(iter_sources([str(path)]))
    assert [item.name for item in items if isinstance(item, SourceFile)] == [f"{path}:real.sgf", f"{path}:plain.sgf"]
    assert [(item.member, item.reason) for item in items if not isinstance(item, SourceFile)] == expected
    with Book.open(book_url) as book:
        report = importer.import_paths(book, [str(path)], workers=0)
    assert report.added == 1 and report.duplicates == 1  # plain.sgf is the same game
    assert [(note.member, note.reason) for note in report.skipped] == expected
    assert f"{path}:odd0.sgf: a symbolic link" in str(report)


def _report(listing):
    from fuseki.book.analysis.pipeline.report import ImportReport

    return ImportReport(listing=(listing.name, listing))


def test_a_running_engine_sees_games_imported_after_it_opened_the_book(tmp_path):
    """fuseki-gtp answers book-counts from a book, then another process imports two games into
    it: the next answer counts them.  Before: the engine's kept answers were never dropped."""
    import subprocess
    import sys

    from browsing import ENV, ROOT

    first, more = tmp_path / "first", tmp_path / "more"
    first.mkdir()
    more.mkdir()
    (first / "a.sgf").write_bytes(b"(;SZ[19];B[pd];W[dp])")
    (more / "b.sgf").write_bytes(b"(;SZ[19];B[dd];W[pp])")
    (more / "c.sgf").write_bytes(b"(;SZ[19];B[dd];W[pq])")
    book = str(tmp_path / "book.sqlite")
    with Book.open(book) as opened:
        importer.import_paths(opened, [str(first)], workers=0)
    engine = subprocess.Popen([sys.executable, "-m", "fuseki.gtp_main", "--book", book], cwd=ROOT, env=ENV,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    def ask(command: str) -> str:
        engine.stdin.write(command + "\n")
        engine.stdin.flush()
        lines = []
        while (line := engine.stdout.readline()).strip() or not lines:
            lines.append(line.strip())
        return " ".join(lines)

    try:
        assert ask("book-counts") == "= D16 1 Q16 1 D4 1 Q4 1"
        with Book.open(book) as opened:
            importer.import_paths(opened, [str(more)], workers=0)
        assert ask("book-counts") == "= D16 3 Q16 3 D4 3 Q4 3"
    finally:
        engine.stdin.close()
        engine.wait(30)


@pytest.mark.parametrize("root", [b"(;GM[1]SZ[19]", b"(;GM[1]SZ[19]AB[dd][pp]AW[dp][pd]"])
def test_loadsgf_refuses_a_file_of_too_many_nodes_before_parsing_it(tmp_path, root):
    """1 MB of passes (about 125,000 nodes), alone or after setup stones (the import's sgfmill
    path; loadsgf has its own reader, engine/ cannot use book/'s): refused holding about the
    file's size.  Before: sgfmill built every node (10 MB: 2.1 GB and 58 s), then replayed them."""
    from fuseki.engine.gtp.commands import new_engine
    from fuseki.engine.gtp.commands.sgf import MAX_FILE_BYTES, MAX_NODES

    engine = new_engine(log=lambda text: None)
    data = root + b";B[];W[]" * 65_000 + b")"
    path = tmp_path / "passes.sgf"
    path.write_bytes(data)
    answer, peak = peak_memory(lambda: engine.handle_line(f"loadsgf {path}"))
    assert answer.startswith("? cannot load file")  # its 130,000 values are over their limit too (issue 59)
    # the read's buffer (MAX_FILE_BYTES, whatever the file) and a few times the file
    assert peak < MAX_FILE_BYTES + 3 * len(data), f"held {peak:,} bytes for a {len(data):,}-byte file"
    fits = tmp_path / "fits.sgf"  # as many nodes as allowed, brackets in comments not counted
    fits.write_bytes(root + b"C[;;;]" + b";B[]C[a;b]" * (MAX_NODES - 1) + b")")
    assert engine.handle_line(f"loadsgf {fits}") == "=\n\n"
    assert engine.handle_line("printsgf").count(";") == MAX_NODES
