"""Reading the game-header fields (``book.model.headers.HEADER_FIELDS``) from SGF.

:func:`read_header` reads the fields from a root node's raw properties (sgfmill's raw
property map, which both of ``book.formats.records``' readers build).  Text encoding (``CA``):
the declared charset is honoured; GB2312/GBK are read as their superset GB18030.  When
the declared charset does not decode the header text (or there is none), UTF-8, then
GB18030, then latin-1 are tried.  A multi-byte character cut at the end of a value (a
server truncating names bytewise) is kept as ``\\xNN`` escapes and noted; no byte is
ever dropped silently.

The year (``date_year``) is read leniently from DT as written: the first four-digit number
of 1600-2100 standing alone (``2007-03-05``, ``2007.03.05,06``, ``5 March 2007``,
``2007年3月5日``; full-width digits too), else the first eight digits ``YYYYMMDD`` of such a year;
a date without one (``?``, ``07-03-05``, none) is None: the game is kept, with no year.

Pure Python and sgfmill: no numpy, no SQLAlchemy.
"""

from __future__ import annotations

import codecs
import re
import unicodedata

from sgfmill import sgf_grammar, sgf_properties

from fuseki.book.model.headers import TEXT_FIELDS
from fuseki.engine.core.base import BLACK, WHITE

# --- reading them from SGF -------------------------------------------------------------------

_TEXT_PROPS = tuple(f.prop for f in TEXT_FIELDS)  # PB, PW, BR, WR, DT, EV, RE, RU
_SPECIAL = re.compile(rb"[\\\n\r\t\f\v]")
_YEAR = re.compile(r"(?<![0-9])([0-9]{4})(?![0-9])")
_COMPACT_DATE = re.compile(r"(?<![0-9])([0-9]{4})(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])(?![0-9])")
YEARS = (1600, 2100)  # the years a date may give (a 4-digit number outside them is not a year)
_FALLBACKS = ("utf-8", "gb18030", "iso8859-1")  # names as codecs.lookup() gives them
_SUPERSETS = {"gb2312": "gb18030", "gbk": "gb18030", "euc_cn": "gb18030", "ascii": "utf-8"}


class HeaderTextError(ValueError):
    """Header text that the encoding asked for cannot decode."""


def read_header(root: dict[str, list[bytes]], notes: list[str],
                override: str | None = None) -> tuple[dict[str, object], str]:
    """Every header field of a root node's raw properties, and the codec its text was read with.

    ``root``: property -> raw values, as sgfmill's raw property map.  ``notes``: what
    was met and done (an unknown charset, a komi that is no number, ...) is appended.
    ``override``: a codec name (as ``codecs.lookup`` gives it) to read the text with,
    whatever CA says.  Raises HeaderTextError if ``override`` cannot decode the text.
    """
    text, encoding = _decode_header(root, notes, override)
    header: dict[str, object] = {f.name: text.get(f.prop, "") for f in TEXT_FIELDS}
    header.update(year=date_year(header["date"]), winner=_winner(header["result"]),
                  komi=_komi(root, notes), handicap=_handicap(root, notes))
    return header, encoding


def date_year(date: str) -> int | None:
    """The year of a DT value as written (see the module docstring), or None."""
    if not date.isascii():
        date = unicodedata.normalize("NFKC", date)  # full-width digits: ２００７
    for pattern in (_YEAR, _COMPACT_DATE):
        for found in pattern.finditer(date):
            year = int(found.group(1))
            if YEARS[0] <= year <= YEARS[1]:
                return year
    return None


def _komi(root, notes) -> float | None:
    raw = root.get("KM", [None])[0]
    if raw is None:
        return None
    try:
        komi = sgf_properties.interpret_real(raw.strip())
    except ValueError:
        notes.append(f"komi KM[{raw.decode('latin-1')}] is not a number; left unknown")
        return None
    return komi


def _handicap(root, notes) -> int:
    raw = root.get("HA", [None])[0]
    if raw is None:
        return 0
    try:
        return sgf_properties.interpret_number(raw.strip())
    except ValueError:
        notes.append(f"handicap HA[{raw.decode('latin-1')}] is not a number; read as 0")
        return 0


def _winner(result: str) -> int | None:
    """BLACK for ``B+...``, WHITE for ``W+...``; None for draws, voids, ``?`` and the rest.

    A bare ``B`` or ``W`` also names the winner: Wbaduk writes ``RE[B]`` (44 games of
    the AI archive, whose file names say ``[B]``/``[W]``).
    """
    text = result.strip().upper()
    head = text[:2] if len(text) > 1 else text + "+"
    return BLACK if head == "B+" else WHITE if head == "W+" else None


def _declared(root, notes) -> str | None:
    raw = root.get("CA", [None])[0]
    if raw is None:
        return None
    name = raw.decode("latin-1").strip()
    try:
        codec = codecs.lookup(name).name
    except LookupError:
        notes.append(f"unknown charset CA[{name}]; guessed instead")
        return None
    return _SUPERSETS.get(codec, codec)


def _decode_header(root, notes, override: str | None) -> tuple[dict[str, str], str]:
    """Header text fields decoded with the first charset that reads them all."""
    raws = {}
    for ident in _TEXT_PROPS:
        values = root.get(ident)
        if values:
            raw = values[0]
            raws[ident] = sgf_grammar.simpletext_value(raw) if _SPECIAL.search(raw) else raw
    declared = _declared(root, notes)
    if override is None and all(raw.isascii() for raw in raws.values()):
        return {k: v.decode("ascii").strip() for k, v in raws.items()}, declared or "utf-8"
    candidates = [override] if override else [declared, *_FALLBACKS]
    for encoding in dict.fromkeys(c for c in candidates if c):
        decoded = _try_decode(raws, encoding)
        if decoded is None:
            continue
        text, truncated = decoded
        if declared and encoding != declared:
            notes.append(f"header text is not {declared} as CA says; read as {encoding}")
        for ident in truncated:
            notes.append(f"{ident} ends in a cut {encoding} character, kept as \\x escapes")
        return {k: v.strip() for k, v in text.items()}, encoding
    raise HeaderTextError(f"header text cannot be decoded as {override}")


def _try_decode(raws: dict[str, bytes], encoding: str):
    """(text, idents cut short) by strict decoding, or None if ``encoding`` does not fit.

    The one error tolerated is a multi-byte character cut off at a value's very end
    (servers truncating names bytewise): its bytes are kept as ``\\xNN`` escapes.
    """
    text, truncated = {}, []
    for ident, raw in raws.items():
        try:
            text[ident] = raw.decode(encoding)
        except UnicodeDecodeError as exc:
            if exc.reason != "unexpected end of data" or exc.end != len(raw):
                return None
            text[ident] = raw[: exc.start].decode(encoding) + raw[exc.start :].decode(
                encoding, "backslashreplace")
            truncated.append(ident)
    return text, truncated
