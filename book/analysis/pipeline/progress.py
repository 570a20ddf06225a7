"""The progress of a long import: how much of the input is read, and how that is shown.

- :class:`InputBytes` measures the input in bytes of the files as they lie on disk:
  game files by their size, archives by their compressed size.  The total is known
  before anything is read (a walk of the paths, as ``sources.iter_sources`` walks them),
  and the reader asks it how far it has got after each group of games.
- :class:`Progress` shows it on stderr: on a terminal a tqdm bar (percent of the bytes,
  games added, duplicates, games/s, time left); elsewhere (a log, a pipe) a plain line
  every few seconds.  The summary line at the end is the caller's.
"""

from __future__ import annotations

import os
import sys
import time

from tqdm import tqdm

from fuseki.book.analysis.pipeline.report import ImportReport
from fuseki.book.formats.sources import _kind as source_kind  # which files iter_sources opens


class _CurrentStderr:
    """``sys.stderr`` as it is when written to, not when a default argument was made (a
    test's captured stream, closed since, or a stream a program swapped in later)."""

    def __getattr__(self, name):
        return getattr(sys.stderr, name)


STDERR = _CurrentStderr()  # the default stream of long work's progress lines


class InputBytes:
    """Bytes of the inputs read so far, out of ``total`` (known before reading).

    ``position(name)`` is asked in the process that reads, with the name of the last
    source it produced (a ``SourceFile``'s or ``Skipped``'s name).  A game file counts
    whole once produced.  An archive member counts the archive's bytes up to where the
    decompressor's file descriptor stands: ``iter_sources`` does not say how far into an
    archive it is, but the open file does (found through ``/dev/fd`` by its inode; where
    there is none, an archive counts at its end only).  Positions never go back.
    """

    def __init__(self, paths: list[str]):
        self.files: list[tuple[str, int, tuple[int, int] | None]] = []  # (path, size, archive's (dev, inode))
        for path in paths:
            if os.path.isdir(path):
                self._walk(path)
            elif source_kind(path) is not None:
                self._add(path)
        self.total = sum(size for _, size, _ in self.files)
        self.cursor = 0  # index in files of the file being read
        self.before = 0  # bytes of files[:cursor]
        self.read = 0
        self._fd: int | None = None

    def _walk(self, folder: str) -> None:
        try:  # sorted by name, links to folders not followed: as sources._walk
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError:
            return
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                self._walk(entry.path)
            elif source_kind(entry.name) is not None:
                self._add(entry.path)

    def _add(self, path: str) -> None:
        try:
            stat = os.stat(path)
        except OSError:
            return  # iter_sources skips it: no bytes to read
        archive = (stat.st_dev, stat.st_ino) if source_kind(path) in ("tar", "zip") else None
        self.files.append((path, stat.st_size, archive))

    def position(self, name: str) -> int:
        """Bytes read once the source ``name`` (``path`` or ``path:member``) is read."""
        for i in range(self.cursor, len(self.files)):
            path, size, archive = self.files[i]
            if name == path or (archive and name.startswith(path + ":")):
                break
        else:
            return self.read  # a name that is no file's (a folder that cannot be listed)
        self.before += sum(size for _, size, _ in self.files[self.cursor:i])
        self.cursor = i
        if archive is None or name == path:  # a game file, or a whole archive skipped
            self.read = max(self.read, self.before + size)
        else:
            self.read = max(self.read, self.before + min(size, self._offset(archive)))
        return self.read

    def _offset(self, archive: tuple[int, int]) -> int:
        """Where the open file ``archive`` (dev, inode) is read to, 0 if it cannot be found."""
        if self._fd is not None and _identity(self._fd) == archive:
            return os.lseek(self._fd, 0, os.SEEK_CUR)
        try:
            fds = [int(fd) for fd in os.listdir("/dev/fd")]
        except OSError:
            return 0
        for fd in fds:
            if _identity(fd) == archive:
                self._fd = fd
                return os.lseek(fd, 0, os.SEEK_CUR)
        return 0


def _identity(fd: int) -> tuple[int, int] | None:
    try:
        stat = os.fstat(fd)
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


def _bytes(n: float) -> str:
    for unit in ("bytes", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:,.0f} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1000
    raise AssertionError("unreachable")


def _duration(seconds: float) -> str:
    seconds = int(seconds + 0.5)
    return f"{seconds // 60}:{seconds % 60:02d}" if seconds >= 60 else f"{seconds} s"


class Progress:
    """The import's progress on stderr: a tqdm bar on a terminal, else a line every ``every`` s.

    ``import_paths`` calls ``start(total)`` with the input's bytes, ``update(report, read)``
    after each batch it commits, ``merging(segments, rows)`` before a merge (a progress of
    one's own may leave it out), and ``done()`` at the end, however it ends.

    Every file skipped and every game kept with an anomaly is named on a line of its own as
    soon as the report holds it (``skipped FILE: reason``, ``anomaly FILE game ID: reason``),
    above the bar on a terminal; ``escape`` makes the names safe to show (they are anyone's
    text: the command line passes ``textboard.printable``).
    """

    def __init__(self, stream=None, every: float = 5.0, escape=str):
        self.stream = stream if stream is not None else sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.every = every
        self.escape = escape
        self.total = 0
        self.bar = None
        self.report: ImportReport | None = None
        self.named = (0, 0)  # the skipped files and the anomalies named so far
        self.start_time = self.last = time.perf_counter()

    def start(self, total: int) -> None:
        """The input holds ``total`` bytes; the clock starts now."""
        self.total = total
        self.start_time = self.last = time.perf_counter()
        if self.tty:
            try:  # a terminal that says it has no width (a bare pty) gets 80 columns, not nothing
                width = {"dynamic_ncols": True} if os.get_terminal_size(self.stream.fileno()).columns else {}
            except (OSError, ValueError, AttributeError):
                width = {}
            self.bar = _Bar(total=max(total, 1), file=self.stream, unit_scale=True, leave=False,
                            smoothing=0.1, **(width or {"ncols": 80}),
                            bar_format="{percentage:3.0f}%|{bar}| {n_fmt}B/{total_fmt}B{postfix}, "
                                       "{remaining} left")

    def update(self, report: ImportReport, read: int, force: bool = False) -> None:
        """``read`` bytes of the input are read and their games in ``report``."""
        self.report = report
        self._name_new()
        now = time.perf_counter()
        games = report.added + report.duplicates
        rate = games / (now - self.start_time) if now > self.start_time else 0.0
        if self.bar is not None:
            self.bar.set_postfix_str(f"{report.added:,} added, {report.duplicates:,} duplicates, "
                                     f"{rate:,.0f} games/s", refresh=False)
            self.bar.update(min(read, self.total) - self.bar.n)  # the bar redraws at most 10 times a second
            return
        if not force and now - self.last < self.every:
            return
        self.last = now
        elapsed = now - self.start_time
        share = read / self.total if self.total else 1.0
        left = f", {_duration(elapsed * (1 - share) / share)} left" if 0 < share < 1 else ""
        self.stream.write(f"{100 * share:.0f}% of {_bytes(self.total)} read, {games:,} games "
                          f"({report.added:,} added, {report.duplicates:,} duplicates), "
                          f"{rate:,.0f} games/s, {_duration(elapsed)}{left}\n")
        self.stream.flush()

    def merging(self, segments: int, rows: int) -> None:
        """A merge of ``segments`` holding ``rows`` positions begins: no batch is written until
        it ends (a minute or more at a million games), which the bar or a line says."""
        text = f"merging {segments} segments of {rows:,} positions into one"
        if self.bar is not None:
            self.bar.set_postfix_str(text, refresh=True)  # the next batch's update replaces it
            return
        self.stream.write(text + "\n")
        self.stream.flush()

    def done(self) -> None:
        """The import has ended: the bar goes, so that the summary line stands alone."""
        self._name_new()
        _close_bar(self)

    def _name_new(self) -> None:
        """Name the skipped files and the anomalies the report gained since the last call."""
        report = self.report
        if report is None:
            return
        skips, anomalies = self.named
        lines = [f"skipped {note}" for note in report.skipped[skips:]]
        lines += [f"anomaly {note}" for note in report.anomalies[anomalies:]]
        self.named = (len(report.skipped), len(report.anomalies))
        for line in lines:
            if self.bar is not None:
                self.bar.write(self.escape(line), file=self.stream)  # above the bar, which is drawn again
            else:
                self.stream.write(self.escape(line) + "\n")
        if lines:
            self.stream.flush()


def _close_bar(shown) -> None:
    """Close the tqdm bar of a Progress or Steps, if it has one."""
    if shown.bar is not None:
        shown.bar.close()
        shown.bar = None


class _Bar(tqdm):
    # No monitor thread: the import forks its workers after the bar is drawn, and a
    # thread's locks do not survive a fork; the bar is updated after every batch anyway.
    monitor_interval = 0


class Steps:
    """The progress of work counted in items (games indexed, games counted): a tqdm bar on a
    terminal, else a line every ``every`` s with the percentage, the rate and the time left.

    ``update(done)`` with the items done so far; ``close()`` at the end (the bar goes).
    ``digits``: decimals of the rate (work slower than an item a second needs some)."""

    def __init__(self, label: str, total: int, unit: str = "games", stream=None, every: float = 2.0,
                 digits: int = 0):
        self.label, self.total, self.unit, self.every = label, max(total, 1), unit, every
        self.digits = digits
        self.stream = stream if stream is not None else sys.stderr
        self.start_time = self.last = time.perf_counter()
        self.bar = None
        if hasattr(self.stream, "isatty") and self.stream.isatty():
            self.bar = _Bar(total=self.total, file=self.stream, desc=label, unit=f" {unit}", unit_scale=True,
                            leave=False, smoothing=0.1, dynamic_ncols=True)

    def update(self, done: int) -> None:
        """``done`` of the ``total`` items are done."""
        done = min(done, self.total)
        if self.bar is not None:
            self.bar.update(done - self.bar.n)
            return
        now = time.perf_counter()
        if now - self.last < self.every:
            return
        self.last = now
        elapsed = now - self.start_time
        rate = done / elapsed if elapsed > 0 else 0.0
        left = f", {_duration((self.total - done) / rate)} left" if 0 < done < self.total and rate else ""
        self.stream.write(f"{self.label}: {100 * done // self.total}% ({done:,} of {self.total:,} {self.unit}), "
                          f"{rate:,.{self.digits}f} {self.unit}/s, {_duration(elapsed)}{left}\n")
        self.stream.flush()

    def close(self) -> None:
        """The work has ended: the bar goes, so that a summary line stands alone."""
        _close_bar(self)
