"""Which games count: :class:`Filters`, and the pure reading of the header values and filter texts
it needs (results, ranks, ranges).

A filter reads the header fields the ``games`` table keeps (``book.model.headers.HEADER_FIELDS``):

- ``event``: any part of EV, any case;
- ``winner`` (``B``/``W``), ``won_by`` (:data:`WON_BY`) and ``margin`` (a range of points), all
  from RE as :func:`parse_result` reads it (``B+R``, ``W+Resign``, ``B+3.5``, ``W+T``, ``B+F``);
  a margin filter keeps only games won on points;
- ``min_rank`` / ``max_rank``: the weaker player's rank (the lower of BR and WR as
  :func:`rank_value` reads them) is at least / at most this; a game where either rank is
  unknown matches no rank filter;
- ``handicap`` (HA) and ``komi`` (KM): a number or a range (:func:`parse_range`).

One parser serves every way in: :func:`parse_filters` reads the texts the CLI options and the
JSON API's parameters share the names of (:data:`FILTER_PARAMS`), and its errors name the value and
the reason (``--komi abc: not a number or range``).  ``book.storage.header_filter`` turns a
``Filters`` into the games it keeps.  Pure Python: no numpy, no SQL.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

WON_BY = ("resign", "points", "time", "forfeit")  # how a game was won, as RE says it
# RE's word after "B+" / "W+" (upper case, first letter or whole word) -> how it was won
_KINDS = {"R": "resign", "RESIGN": "resign", "RESIGNATION": "resign", "T": "time", "TIME": "time",
          "F": "forfeit", "FORFEIT": "forfeit"}
_NUMBER = r"[0-9]+(?:\.[0-9]+)?"
_MARGIN = re.compile(rf"({_NUMBER})(?:\s*(?:points?|pts?|moku|目))?$", re.IGNORECASE)
_RANK = re.compile(r"([0-9]+)\s*(k|kyu|級|级|d|dan|段|p|pro)$", re.IGNORECASE)
_RANGE = re.compile(rf"(-?{_NUMBER})?\s*-\s*(-?{_NUMBER})?$")
MAX_KYU, MAX_DAN, MAX_PRO = 30, 9, 9  # 30k .. 1k, 1d .. 9d, 1p .. 9p: other numbers are no rank
# The parameters the CLI (``--won-by``) and the JSON API (``won_by=``) share, besides years and player.
FILTER_PARAMS = ("event", "winner", "won_by", "margin", "min_rank", "max_rank", "handicap", "komi")
MAX_TEXT = 100  # the longest player or event filter


class FilterError(ValueError):
    """A filter text that cannot be read; the message names the value and the reason."""


@dataclass(frozen=True)
class Filters:
    """Which games count: years (inclusive), a player of either colour (substring, any case),
    ``min_games``, the fewest games a next move needs to be listed, ``within``, only the games of
    an earlier answer (a ``book.queries.gamesets.GameSet``, hashable: search within results; this
    model module names no storage type), and the header filters of the module docstring.  Ranges
    are (low, high) pairs, either end None for open; ranks are :func:`rank_value`'s numbers."""

    year_from: int | None = None
    year_to: int | None = None
    player: str | None = None
    min_games: int = 1
    within: object | None = None
    event: str | None = None
    winner: str | None = None  # "B" or "W"
    won_by: str | None = None  # one of WON_BY
    margin: tuple | None = None
    min_rank: int | None = None
    max_rank: int | None = None
    handicap: tuple | None = None
    komi: tuple | None = None

    def selects_games(self) -> bool:
        """True when some games may be left out (any filter but ``min_games`` is set)."""
        return self.year_from is not None or self.year_to is not None or self.reads_rows()

    def reads_rows(self) -> bool:
        """True when a filter other than years is set: the segments' next-move statistics count by year
        only, so every game of the position is read from its rows and kept or not by the mask."""
        return bool(self.player) or self.within is not None or self.reads_headers()

    def reads_headers(self) -> bool:
        """True when a filter of the module docstring's header values is set."""
        return bool(self.event) or any(getattr(self, name) is not None for name in FILTER_PARAMS if name != "event")

    def cache_key(self) -> tuple:
        """Every field that decides which games are kept (not ``min_games``), names folded."""
        return (self.year_from, self.year_to, (self.player or "").lower(), self.within, (self.event or "").lower(),
                self.winner, self.won_by, self.margin, self.min_rank, self.max_rank, self.handicap, self.komi)

    def describe(self) -> list[str]:
        """The header filters in words, as the CLI's notes and the shell's prompt show them."""
        parts = [f"event '{self.event}'"] if self.event else []
        parts += [f"{label} {value}" for label, value in (
            ("winner", self.winner), ("won by", self.won_by), ("margin", range_text(self.margin)),
            ("rank at least", rank_text(self.min_rank)), ("rank at most", rank_text(self.max_rank)),
            ("handicap", range_text(self.handicap)), ("komi", range_text(self.komi))) if value]
        return parts


@dataclass(frozen=True)
class Result:
    """RE read: ``winner`` ``B``/``W`` or None (draw, void, unknown); ``won_by`` one of
    :data:`WON_BY` or None (not said, or a word none of them names, as Tygem's ``Offline``);
    ``margin``: the points of a game won on points, else None."""

    winner: str | None
    won_by: str | None
    margin: float | None


def parse_result(text: str) -> Result:
    """RE as written: ``B+R``, ``W+Resign``, ``B+3.5``, ``W+T``, ``B+F``, ``B`` (a bare winner, as
    ``book.formats.sgf_headers`` reads it too), ``0``, ``Draw``, ``Void``, ``?``; any case."""
    text = unicodedata.normalize("NFKC", text).strip().upper()
    head = text[:2] if len(text) > 1 else text + "+"
    if head not in ("B+", "W+"):
        return Result(None, None, None)
    rest = text[2:].strip()
    found = _MARGIN.match(rest)
    if found:
        return Result(head[0], "points", float(found.group(1)))
    return Result(head[0], _KINDS.get(rest), None)


def rank_value(text: str) -> int | None:
    """A rank as written, as a number that orders them: ``30k`` is -29 ... ``1k`` 0, ``1d`` 1 ...
    ``9d`` 9, ``1p`` 10 ... ``9p`` 18 (a professional above every amateur).  Lenient: any case,
    a space or the word (``9 dan``, ``5 kyu``, ``3 pro``), ``段``/``級``, a trailing ``*`` or ``?``
    (an unsure rank); None for anything else (``""``, ``?``, ``NR``, ``10d``, ``31k``)."""
    text = unicodedata.normalize("NFKC", text).strip().rstrip("*?").strip()
    found = _RANK.match(text)
    if not found:
        return None
    number, unit = int(found.group(1)), found.group(2).lower()
    if unit in ("k", "kyu", "級", "级"):
        return 1 - number if 1 <= number <= MAX_KYU else None
    if unit in ("d", "dan", "段"):
        return number if 1 <= number <= MAX_DAN else None
    return MAX_DAN + number if 1 <= number <= MAX_PRO else None


def rank_text(value: int | None) -> str | None:
    """The short form of a :func:`rank_value` (``5k``, ``7d``, ``3p``), None for None."""
    if value is None:
        return None
    return f"{1 - value}k" if value <= 0 else f"{value}d" if value <= MAX_DAN else f"{value - MAX_DAN}p"


def parse_range(text: str, integer: bool = False) -> tuple | None:
    """``6.5`` (exactly), ``5.5-7.5``, ``2-`` (at least), ``-4`` (at most) -> (low, high), None for
    an open end; a negative bound inside a range (``-7.5--5.5``).  ``integer``: whole numbers only.
    Raises ValueError for anything else and for low > high."""
    text = text.strip()
    kind = int if integer else float
    try:
        if re.fullmatch(_NUMBER, text):
            return kind(text), kind(text)
        found = _RANGE.match(text)
        if not found or not (found.group(1) or found.group(2)):
            raise ValueError
        low, high = (None if part is None else kind(part) for part in found.groups())
    except ValueError:
        raise ValueError("not a whole number or range" if integer else "not a number or range") from None
    if low is not None and high is not None and low > high:
        raise ValueError(f"{low} is above {high}")
    return low, high


def range_text(bounds: tuple | None) -> str | None:
    """A range as :func:`parse_range` reads it back, None for None."""
    if bounds is None:
        return None
    low, high = ("" if b is None else f"{b:g}" for b in bounds)
    return low if low == high else f"{low}-{high}"


def in_range(value, bounds: tuple | None) -> bool:
    """True when ``value`` (None: unknown, never) lies in ``bounds`` (None: no filter, always)."""
    if bounds is None:
        return True
    return value is not None and (bounds[0] is None or value >= bounds[0]) and (bounds[1] is None or value <= bounds[1])


def parse_filters(texts, label=lambda name: name) -> dict:
    """The ``Filters`` fields ``player`` and those of :data:`FILTER_PARAMS` from their texts (a
    mapping; missing, None or blank: not set).  ``label(name)``: how an error names the parameter
    (``--won-by``, ``won_by``).  Raises FilterError naming the value and the reason."""
    fields: dict = {}
    for name in ("player", *FILTER_PARAMS):
        text = texts.get(name)
        text = text.strip() if isinstance(text, str) else text
        if not text:
            continue
        try:
            fields[name] = _parse_one(name, text)
        except ValueError as exc:
            shown = text if text.isprintable() and len(text) <= 40 else ascii(text[:40])  # never a screenful
            raise FilterError(f"{label(name)} {shown}: {exc}") from None
    low, high = fields.get("min_rank"), fields.get("max_rank")
    if low is not None and high is not None and low > high:
        raise FilterError(f"{label('min_rank')} {rank_text(low)} is above {label('max_rank')} {rank_text(high)}")
    return fields


def _parse_one(name: str, text: str):
    if name in ("player", "event"):
        if len(text) > MAX_TEXT:
            raise ValueError(f"longer than {MAX_TEXT} characters")
        if not text.isprintable():  # SQLite ends a LIKE pattern at a NUL: "\x00" would match every game
            raise ValueError("has control characters")
        return text
    if name == "winner":
        winner = text.upper()[:1] if text.upper() in ("B", "W", "BLACK", "WHITE") else None
        if winner is None:
            raise ValueError("not B, W, black or white")
        return winner
    if name == "won_by":
        kind = _KINDS.get(text.upper(), text.lower())
        if kind not in WON_BY:
            raise ValueError(f"not one of {', '.join(WON_BY)}")
        return kind
    if name in ("min_rank", "max_rank"):
        value = rank_value(text)
        if value is None:
            raise ValueError("not a rank (30k-1k, 1d-9d, 1p-9p)")
        return value
    bounds = parse_range(text, integer=name == "handicap")
    if name == "margin" and any(b is not None and b < 0 for b in bounds):
        raise ValueError("a margin is not negative")
    return bounds
