"""What an import did (``importer.import_paths``'s answer), which its progress line shows as it goes.

Each skipped file and each anomaly is a :class:`Note`, with the file on disk and the archive
member apart; ``fuseki import --report FILE`` writes them as JSON lines as the import goes
(``ImportReport.listing``), so that a stopped import's file lists what was seen until then.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import TextIO

from fuseki.book.formats.sources import shown_name

SKIPPED, ANOMALY = "skipped", "anomaly"  # a Note's kinds
SUMMARY_NAMES = 3  # skipped files and anomalies the summary names; it counts the rest


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
    skipped: list[Note] = field(default_factory=list)  # files that could not be read, and why
    # an anomaly of a game added ("move 3 (B D16) is illegal: ..."; the docstring of book.analysis.pipeline.importer)
    anomalies: list[Note] = field(default_factory=list)
    positions: int = 0
    elapsed: float = 0.0
    stopped: bool = False  # ended early, asked to (``import_paths``'s ``stop``): a re-run adds the rest
    # CPU seconds of each stage: "reader", "parsers" (all of them), "writer" (its thread only);
    # the reader and parsers are known once every source was read (not after a stop or error)
    cpu: dict[str, float] = field(default_factory=dict)
    # where every note is written as a JSON line as it comes (``--report``): (its name, the open file)
    listing: tuple[str, TextIO] | None = field(default=None, repr=False, compare=False)

    def note(self, notes: list[Note]) -> None:
        """Add skipped files and anomalies, written to the listing at once."""
        for item in notes:
            (self.skipped if item.kind == SKIPPED else self.anomalies).append(item)
        if self.listing is not None and notes:
            out = self.listing[1]
            out.write("".join(item.json() + "\n" for item in notes))
            out.flush()  # a stopped or killed import leaves what it saw

    @property
    def rate(self) -> float:
        return (self.added + self.duplicates) / self.elapsed if self.elapsed > 0 else 0.0

    def __str__(self) -> str:
        text = f"{self.added:,} games added, {self.duplicates:,} duplicates, "
        text += f"{len(self.skipped):,} files skipped" + _named(self.skipped)
        text += f", {len(self.anomalies):,} anomalies" + _named(self.anomalies)
        text += f", {self.elapsed:.1f} s, {self.rate:,.0f} games/s"
        if self.listing is not None and (self.skipped or self.anomalies):
            text += f"; every skipped file and anomaly is listed in {self.listing[0]}"
        return text


def _named(notes: list[Note]) -> str:
    """The first SUMMARY_NAMES notes and how many more, in parentheses ("" for none)."""
    if not notes:
        return ""
    more = f"; {len(notes) - SUMMARY_NAMES:,} more" if len(notes) > SUMMARY_NAMES else ""
    return " (" + "; ".join(map(str, notes[:SUMMARY_NAMES])) + more + ")"
