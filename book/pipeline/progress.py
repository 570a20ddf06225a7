"""The progress line of a long import: redrawn in place on a terminal, a line every few seconds elsewhere."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fuseki.book.pipeline.importer import ImportReport


class Progress:
    """A status line on stderr: redrawn in place on a terminal, else a line every few seconds."""

    def __init__(self, stream=None, every: float = 5.0):
        self.stream = stream if stream is not None else sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.every = 0.2 if self.tty else every
        self.start = time.perf_counter()
        self.last = self.start
        self.shown = False

    def update(self, report: ImportReport, force: bool = False) -> None:
        now = time.perf_counter()
        if not force and now - self.last < self.every:
            return
        self.last = now
        elapsed = now - self.start
        games = report.added + report.duplicates
        rate = games / elapsed if elapsed > 0 else 0.0
        width = 20
        filled = int(now * 4) % (width + 1) if self.tty else width
        bar = "#" * filled + "." * (width - filled)
        line = (f"[{bar}] {games:,} games ({report.added:,} new), {rate:,.0f} games/s, "
                f"{elapsed:.0f} s")
        if self.tty:
            self.stream.write("\r" + line + "\x1b[K")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
        self.shown = True

    def done(self) -> None:
        if self.tty and self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
