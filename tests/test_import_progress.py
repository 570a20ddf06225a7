"""The import's progress: bytes of the input read (InputBytes), the plain lines, the tqdm bar.

The archives are real .tgz files, read by the real reader: the within-archive position
comes from the decompressor's open file, so it is tested by reading, not by a stand-in.
"""

from __future__ import annotations

import io
import os
import re
import select
import subprocess
import sys
import time

import pytest

from fuseki.book.analysis.pipeline import importer
from fuseki.book.analysis.pipeline.progress import InputBytes, Progress, Steps
from fuseki.book.analysis.pipeline.report import ImportReport
from fuseki.book.formats.sources import iter_sources
from fuseki.book.storage.store import Book

from conftest import ROOT, write_archive
from games import archive_games


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    """A .tgz of 3,000 generated games (2.8 MB of SGF, 1 MB compressed)."""
    return write_archive(tmp_path_factory.mktemp("archive") / "games.tgz", archive_games(3000))


def test_input_bytes_follow_the_archive_as_it_is_read(tmp_path, archive):
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "b.sgf").write_bytes(b"(;SZ[9];B[ee])")
    (tmp_path / "folder" / "a.sgf").write_bytes(b"(;SZ[9];B[cc])")
    (tmp_path / "folder" / "notes.txt").write_text("not read, not counted")
    paths = [str(tmp_path / "folder"), str(archive), str(tmp_path / "missing.sgf")]
    meter = InputBytes(paths)
    assert meter.total == archive.stat().st_size + 2 * 14

    positions = [meter.position(item.name) for item in iter_sources(paths)]
    assert positions[:2] == [14, 28]  # the folder's files, by name: a.sgf, then b.sgf
    inside = [p for p in positions[2:-1] if 28 < p < meter.total]
    assert positions == sorted(positions)
    assert len(set(inside)) >= 3, "the archive's position should move while its members are read"
    assert positions[-1] == meter.total  # "missing.sgf" is skipped: nothing left to read


def test_plain_lines_off_a_terminal_grow_to_100_percent(tmp_path, archive):
    stream = io.StringIO()
    with Book.open(str(tmp_path / "book.sqlite")) as book:
        report = importer.import_paths(book, [str(archive)], workers=1, batch_games=250,
                                       progress=Progress(stream, every=0))
    assert report.added == 3000
    named = [line for line in stream.getvalue().splitlines() if line.startswith("anomaly ")]
    assert len(named) == len(report.anomalies)  # the random games' illegal moves, each named once
    lines = [line for line in stream.getvalue().splitlines() if not line.startswith("anomaly ")]
    assert "\r" not in stream.getvalue() and len(lines) >= 10
    shares = [int(re.match(r"(\d+)% of [\d.,]+ [kMG]?B read, ", line).group(1)) for line in lines]
    assert shares == sorted(shares) and shares[-1] == 100
    assert len({s for s in shares if 0 < s < 100}) >= 3, shares
    assert "3,000 games (3,000 added, 0 duplicates)" in lines[-1]
    assert all(re.search(r"[\d,]+ games/s, \d+ s", line) for line in lines)
    assert any(line.endswith(" left") for line in lines[:-1])


def test_the_interval_between_plain_lines():
    stream = io.StringIO()
    progress = Progress(stream, every=60)
    progress.start(1000)
    report = ImportReport(added=10, duplicates=2)
    progress.update(report, 100)  # within the first minute: nothing
    progress.update(report, 500, force=True)
    progress.done()
    assert stream.getvalue().startswith("50% of 1.0 kB read, 12 games (10 added, 2 duplicates), ")
    assert stream.getvalue().count("\n") == 1


def run_in_terminal(argv: list[str], columns: int = 120, timeout: float = 120) -> tuple[int, str]:
    """Run ``argv`` with stdin, stdout and stderr on a pseudo-terminal; (exit code, what it wrote)."""
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    process = subprocess.Popen(argv, cwd=ROOT, stdin=slave, stdout=slave, stderr=slave, close_fds=True)
    os.close(slave)
    out = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if select.select([master], [], [], 0.5)[0]:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: every writer has closed the terminal
                    break
                if not chunk:
                    break
                out += chunk
            elif process.poll() is not None:
                break
        return process.wait(timeout=10), out.decode(errors="replace")
    finally:
        if process.poll() is None:
            process.kill()
        os.close(master)


def test_a_terminal_gets_a_tqdm_bar_with_a_percentage(tmp_path, archive):
    code, out = run_in_terminal([sys.executable, "-m", "fuseki", "import", str(archive),
                                 "--book", str(tmp_path / "book.sqlite"), "--workers", "1"])
    assert code == 0, out[-3000:]
    bars = re.findall(r"\r *(\d+)%\|[^\r]*\| [\d.]+k?M?B/[\d.]+MB, ([\d,]+) added, ([\d,]+) duplicates, "
                      r"[\d,]+ games/s, [\d:?]+ left", out)
    assert bars, out[-3000:]
    assert [int(share) for share, _, _ in bars] == sorted(int(share) for share, _, _ in bars)
    last = out.rstrip().splitlines()[-2:]  # the summary, then the corner book the import built
    assert last[0].startswith("fuseki import: 3,000 games added, 0 duplicates")
    assert re.match(r"corner book: [\d,]+ continuations in [\d.]+ s", last[1]), last
    assert "Traceback" not in out


def test_counted_work_says_percent_rate_and_time_left_in_plain_lines():
    stream = io.StringIO()
    steps = Steps("pattern index", 1000, stream=stream, every=0)
    for done in (250, 600, 1000):
        time.sleep(0.01)
        steps.update(done)
    steps.close()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 3, lines
    found = [re.fullmatch(r"pattern index: (\d+)% \(([\d,]+) of 1,000 games\), ([\d,]+) games/s, \d+ s(, \d+ s left)?",
                          line) for line in lines]
    assert all(found), lines
    assert [int(m.group(1)) for m in found] == [25, 60, 100]
    assert found[0].group(4) and not found[2].group(4)  # time left while there is some
    quiet = io.StringIO()
    steps = Steps("corner book", 10, stream=quiet, every=60)
    steps.update(5)  # within the first minute: nothing
    assert quiet.getvalue() == ""


def test_the_pattern_index_shows_a_bar_on_a_terminal(tmp_path, archive, monkeypatch):
    book = str(tmp_path / "book.sqlite")
    with Book.open(book) as opened:
        importer.import_paths(opened, [str(archive)], workers=0)
        with opened.writing() as conn:  # as a book imported before the import wrote the index
            conn.exec_driver_sql("DELETE FROM pattern_events")
            conn.exec_driver_sql("DELETE FROM meta WHERE name = 'pattern_events_through'")
    script = ("import sys; from fuseki.book.analysis.patterns import index; index.CHUNK = 500; "
              "from fuseki.book.storage.store import Book; b = Book.open(sys.argv[1]); "
              "print('indexed', index.update(b, progress=sys.stderr)); b.close()")
    code, out = run_in_terminal([sys.executable, "-c", script, book])
    assert code == 0 and "Traceback" not in out, out[-3000:]
    shares = [int(share) for share in re.findall(r"pattern index: +(\d+)%\|", out)]
    # tqdm draws at most every 0.1 s: some chunks are not drawn (the last one, even: the bar goes)
    assert len(shares) >= 2 and shares == sorted(shares) and shares[-1] > 0, out[-3000:]
    assert "indexed 3000" in out


def test_the_default_progress_stream_is_stderr_as_it_is_when_written(monkeypatch):
    """A default argument bound sys.stderr when the module was imported: a pattern search run
    by a test after the one that imported it wrote into that test's closed capture."""
    import io
    import sys

    from fuseki.book.analysis.pipeline.progress import STDERR

    swapped = io.StringIO()
    monkeypatch.setattr(sys, "stderr", swapped)
    print("indexing", file=STDERR, flush=True)
    assert swapped.getvalue() == "indexing\n"


def test_a_merge_is_announced_before_it_runs(tmp_path, archive, monkeypatch):
    """The writer writes no batch while it merges (minutes at a million games): the progress
    says so first, with the number of segments and positions merged."""
    from fuseki.book.storage import segments

    monkeypatch.setattr(segments, "FANOUT", 4)
    said: list[tuple[int, int]] = []
    real_sources = segments.merge_sources  # what a merge of segment files reads, as it begins

    def merge_sources(conn, parts):
        said.append((len(parts), sum(part.rows for part in parts)))
        return real_sources(conn, parts)

    monkeypatch.setattr(segments, "merge_sources", merge_sources)
    stream = io.StringIO()
    with Book.open(str(tmp_path / "book.sqlite")) as book:
        importer.import_paths(book, [str(archive)], workers=0, batch_games=250, progress=Progress(stream, every=1e9))
    announced = [(int(m.group(1)), int(m.group(2).replace(",", "")))
                 for m in re.finditer(r"^merging (\d+) segments of ([\d,]+) positions into one$",
                                      stream.getvalue(), re.MULTILINE)]
    assert len(said) >= 2 and announced == said


def test_every_skipped_file_and_every_anomaly_is_named_as_the_import_goes(tmp_path):
    from fuseki.book.ui.present.textboard import printable

    folder = tmp_path / "games"
    folder.mkdir()
    good = archive_games(30, moves=20)
    for name, data in good:
        (folder / name.replace("/", "-")).write_bytes(data)
    broken = [f"broken{n}\x1b[31m.sgf" for n in range(5)]  # more than the summary's three
    for name in broken:
        (folder / name).write_bytes(b"(;GM[1]SZ[19];B[pd];W[")
    # a game kept up to its illegal move: W plays on Black's stone
    (folder / "zz-anomaly.sgf").write_bytes(b"(;GM[1]SZ[19]PB[x]PW[y];B[pd];W[pd])")
    stream = io.StringIO()
    with Book.open(str(tmp_path / "book.sqlite")) as book:
        report = importer.import_paths(book, [str(folder)], workers=0, batch_games=7,
                                       progress=Progress(stream, every=3600, escape=printable))
    lines = stream.getvalue().splitlines()
    skipped = [line for line in lines if line.startswith("skipped ")]
    anomalies = [line for line in lines if line.startswith("anomaly ")]
    assert len(report.skipped) == 5 and len(skipped) == 5  # each named once, none left to "N more"
    assert sorted(line.split(": ")[0] for line in skipped) == sorted(
        f"skipped {printable(str(folder / name))}" for name in broken)
    assert "\x1b" not in stream.getvalue() and "\\x1b[31m" in skipped[0]
    assert len(report.anomalies) == 1 and len(anomalies) == 1
    assert anomalies[0].startswith(f"anomaly {folder / 'zz-anomaly.sgf'} game ") and "illegal" in anomalies[0]
