"""What an import did (``importer.import_paths``'s answer), which its progress line shows as it goes.

Each skipped file and each anomaly is a :class:`Note`, with the file on disk and the archive
member apart; ``fuseki import --report FILE`` writes them as JSON lines as the import goes
(``ImportReport.listing``), so that a stopped import's file lists what was seen until then.
The report keeps the first ``NOTES_KEPT`` of each kind and counts the rest (``counts``): an
archive of a million empty members must not cost a note each (587 MB).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import TextIO

from fuseki.book.formats.sources import shown_name

SKIPPED, ANOMALY = "skipped", "anomaly"  # a Note's kinds
SUMMARY_NAMES = 3  # skipped files and anomalies the summary names; it counts the rest
NOTES_KEPT = 1000  # skipped files, and anomalies, an ImportReport keeps (and the terminal names); the rest counted


@dataclass(frozen=True)
class Note:
    """A skipped file (or member, or archive) or an anomaly of a game added, as one line of the report file.

    ``path``: the file or archive on disk; ``member``: the archive member, or None; ``game``:
    the game's id in the book (anomalies), or None; ``move``: the move it is about (an
    illegal move, the first move not kept), or None; ``reason``: why.
    """

    kind: str
    path: str
    member: str | None
    reason: str
    game: int | None = None
    move: int | None = None

    @property
    def name(self) -> str:
        """The file's name as the import says it: "<archive path>:<member>" for a member, the
        bytes that are not UTF-8 written ``\\xNN`` (``sources.shown_name``)."""
        return shown_name(self.path if self.member is None else f"{self.path}:{self.member}")

    def __str__(self) -> str:
        game = f" game {self.game}" if self.game is not None else ""
        return f"{self.name}{game}: {self.reason}"

    def json(self) -> str:
        """One line of the report file (names that are not UTF-8 keep their escapes: ``\\udcff``)."""
        fields = asdict(self)
        return json.dumps({key: fields[key] for key in ("path", "member", "game", "move", "reason", "kind")})


@dataclass
class ImportReport:
    """What an import did; ``str()`` is the one-line summary."""

    added: int = 0
    duplicates: int = 0
    # files that could not be read, and why: the first NOTES_KEPT (``counts[SKIPPED]``: all of them)
    skipped: list[Note] = field(default_factory=list)
    # an anomaly of a game added ("move 3 (B D16) is illegal: ..."; the docstring of
    # book.analysis.pipeline.importer): the first NOTES_KEPT (``counts[ANOMALY]``: all of them)
    anomalies: list[Note] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: {SKIPPED: 0, ANOMALY: 0})  # notes of each kind
    positions: int = 0
    elapsed: float = 0.0
    stopped: bool = False  # ended early, asked to (``import_paths``'s ``stop``): a re-run adds the rest
    # CPU seconds of each stage: "reader", "parsers" (all of them), "writer" (its thread only);
    # the reader and parsers are known once every source was read (not after a stop or error)
    cpu: dict[str, float] = field(default_factory=dict)
    # where every note is written as a JSON line as it comes (``--report``): (its name, the open file)
    listing: tuple[str, TextIO] | None = field(default=None, repr=False, compare=False)

    def note(self, notes: list[Note]) -> None:
        """Add skipped files and anomalies, written to the listing at once; past ``NOTES_KEPT``
        of a kind, they are counted, not kept."""
        for item in notes:
            kept = self.skipped if item.kind == SKIPPED else self.anomalies
            if len(kept) < NOTES_KEPT:
                kept.append(item)
            self.counts[item.kind] = self.counts.get(item.kind, 0) + 1
        if self.listing is not None and notes:
            out = self.listing[1]
            out.write("".join(item.json() + "\n" for item in notes))
            out.flush()  # a stopped or killed import leaves what it saw

    @property
    def rate(self) -> float:
        return (self.added + self.duplicates) / self.elapsed if self.elapsed > 0 else 0.0

    def __str__(self) -> str:
        text = f"{self.added:,} games added, {self.duplicates:,} duplicates, "
        skipped, anomalies = self.counted(SKIPPED), self.counted(ANOMALY)
        text += f"{skipped:,} files skipped" + _named(self.skipped, skipped)
        text += f", {anomalies:,} anomalies" + _named(self.anomalies, anomalies)
        text += f", {self.elapsed:.1f} s, {self.rate:,.0f} games/s"
        if self.listing is not None and (skipped or anomalies):
            text += f"; every skipped file and anomaly is listed in {self.listing[0]}"
        elif skipped > len(self.skipped) or anomalies > len(self.anomalies):
            text += f"; the first {NOTES_KEPT:,} of each were named: --report FILE lists every one"
        return text

    def counted(self, kind: str) -> int:
        """The notes of ``kind`` (SKIPPED, ANOMALY) noted, kept or not (at least those kept:
        a report whose lists were filled by hand counts them)."""
        return max(self.counts.get(kind, 0), len(self.skipped if kind == SKIPPED else self.anomalies))


def _named(notes: list[Note], count: int) -> str:
    """The first SUMMARY_NAMES notes and how many more of ``count``, in parentheses ("" for none)."""
    if not notes:
        return ""
    more = f"; {count - SUMMARY_NAMES:,} more" if count > SUMMARY_NAMES else ""
    return " (" + "; ".join(map(str, notes[:SUMMARY_NAMES])) + more + ")"
