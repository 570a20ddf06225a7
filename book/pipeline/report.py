"""What an import did (``importer.import_paths``'s answer), which its progress line shows as it goes."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ImportReport:
    """What an import did; ``str()`` is the one-line summary."""

    added: int = 0
    duplicates: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (file, why it could not be read)
    # (file, the game's id in the book, what: "move 3 (B D16) is illegal: ...") of each game added
    # with an anomaly (the docstring of book.pipeline.importer)
    anomalies: list[tuple[str, int, str]] = field(default_factory=list)
    positions: int = 0
    elapsed: float = 0.0
    stopped: bool = False  # ended early, asked to (``import_paths``'s ``stop``): a re-run adds the rest
    # CPU seconds of each stage: "reader", "parsers" (all of them), "writer" (its thread only);
    # the reader and parsers are known once every source was read (not after a stop or error)
    cpu: dict[str, float] = field(default_factory=dict)

    @property
    def rate(self) -> float:
        return (self.added + self.duplicates) / self.elapsed if self.elapsed > 0 else 0.0

    def __str__(self) -> str:
        text = f"{self.added:,} games added, {self.duplicates:,} duplicates, "
        text += f"{len(self.skipped):,} files skipped"
        if self.skipped:
            named = "; ".join(f"{name}: {reason}" for name, reason in self.skipped[:3])
            more = f"; {len(self.skipped) - 3:,} more" if len(self.skipped) > 3 else ""
            text += f" ({named}{more})"
        text += f", {len(self.anomalies):,} anomalies"
        if self.anomalies:
            named = "; ".join(f"{name} game {game_id}: {reason}" for name, game_id, reason in self.anomalies[:3])
            more = f"; {len(self.anomalies) - 3:,} more" if len(self.anomalies) > 3 else ""
            text += f" ({named}{more})"
        text += f", {self.elapsed:.1f} s, {self.rate:,.0f} games/s"
        return text
