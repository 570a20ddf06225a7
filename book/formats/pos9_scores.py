"""The 9x9 scored-position file (issue 5): 12-byte records of a PositionID, a score and a confidence.

Byte order, the ``PositionID`` layout and the error conventions are those of
``book.formats.pos9`` (read its docstring first)::

    scored file record: PositionID (10) + score (1 byte, 3..8: 3 means
    "3 or less", 8 "8 or more") + confidence (1 byte, 0..100) => 12 bytes.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from fuseki.book.formats.pos9 import RecordError

SCORE_RECORD = 12   # PositionID + PositionScore
SCORE_MIN, SCORE_MAX = 3, 8

SCORE_DTYPE = np.dtype([("hash", ">u8"), ("tie", "u1"), ("to_move", "u1"),
                        ("score", "u1"), ("confidence", "u1")])


@dataclass
class Scores:
    """Scored records: ``hash`` uint64, ``to_move`` uint8 (ASCII), ``score`` uint8 3..8,
    ``confidence`` uint8 0..100."""

    hash: np.ndarray
    to_move: np.ndarray
    score: np.ndarray
    confidence: np.ndarray
    first_record: int = 1

    def __len__(self) -> int:
        return len(self.hash)

    def to_bytes(self) -> bytes:
        out = np.zeros(len(self), dtype=SCORE_DTYPE)
        for name in ("hash", "to_move", "score", "confidence"):
            out[name] = getattr(self, name)
        return out.tobytes()

    @classmethod
    def from_records(cls, records) -> Scores:
        """Build from ``(hash, 'B'|'W', score, confidence)``; scores are clamped to 3..8.

        Raises ValueError for a bad colour or a confidence outside 0..100.
        """
        records = list(records)
        for _, to_move, _, conf in records:
            if to_move not in ("B", "W") or not 0 <= conf <= 100:
                raise ValueError(f"bad scored record: player {to_move!r}, confidence {conf}")
        return cls(np.array([r[0] for r in records], np.uint64),
                   np.array([ord(r[1]) for r in records], np.uint8),
                   np.array([min(max(r[2], SCORE_MIN), SCORE_MAX) for r in records], np.uint8),
                   np.array([r[3] for r in records], np.uint8))


def iter_scores(path: str | os.PathLike, block_records: int = 1 << 18) -> Iterator[Scores]:
    """Yield the records of a scored file in blocks.

    Raises RecordError, after the good records before it, for a truncated
    record, a tie-breaker other than 0, a player other than B/W, a score
    outside 3..8 or a confidence above 100.
    """
    record = 1
    with open(path, "rb") as f:
        while True:
            data = f.read(block_records * SCORE_RECORD)
            whole = len(data) // SCORE_RECORD
            rec = np.frombuffer(data[:whole * SCORE_RECORD], dtype=SCORE_DTYPE)
            checks = [(8, rec["tie"] == 0, "tie-breaker is {}, expected 0"),
                      (9, (rec["to_move"] == ord("B")) | (rec["to_move"] == ord("W")),
                       "player to move is {}, expected 'B' or 'W'"),
                      (10, (rec["score"] >= SCORE_MIN) & (rec["score"] <= SCORE_MAX),
                       "score is {}, expected 3..8"),
                      (11, rec["confidence"] <= 100, "confidence is {}, expected 0..100")]
            bad = min([(int(np.argmin(ok)), pos, why) for pos, ok, why in checks if not ok.all()],
                      default=None)  # the first bad record; in it, the first bad byte
            good = rec[:bad[0]] if bad else rec
            if len(good):
                yield Scores(good["hash"].astype(np.uint64), good["to_move"].copy(), good["score"].copy(),
                             good["confidence"].copy(), first_record=record)
            file_base = (record - 1) * SCORE_RECORD
            if bad:
                i, pos, why = bad
                value = data[i * SCORE_RECORD + pos]
                raise RecordError(record + i, file_base + i * SCORE_RECORD + pos, why.format(value))
            if len(data) % SCORE_RECORD:
                raise RecordError(record + whole, file_base + len(data),
                                  f"truncated record: {len(data) % SCORE_RECORD} of {SCORE_RECORD} bytes "
                                  "before the end of the file")
            if len(data) < block_records * SCORE_RECORD:
                return
            record += whole


def read_scores(path: str | os.PathLike) -> Scores:
    """All records of a scored file; RecordError carries the good ones in ``partial``."""
    parts = []
    try:
        for block in iter_scores(path):
            parts.append(block)
    except RecordError as exc:
        exc.partial = _concat_scores(parts)
        raise
    return _concat_scores(parts)


def _concat_scores(parts: list[Scores]) -> Scores:
    if not parts:
        return Scores(np.zeros(0, np.uint64), *(np.zeros(0, np.uint8) for _ in range(3)))
    fields = ("hash", "to_move", "score", "confidence")
    return Scores(*(np.concatenate([getattr(p, f) for p in parts]) for f in fields))
