"""Reading the game-header fields (``book.model.headers.HEADER_FIELDS``) from SGF.

:func:`read_header` reads the fields from a root node's raw properties (sgfmill's raw
property map, which both of ``book.formats.sgf_reader``' readers build).  Text encoding (``CA``):
the declared charset is honoured; GB2312/GBK are read as their superset GB18030.  When
the declared charset does not decode the header text (or there is none), the rule is: UTF-8;
then the legacy charset a detector picks from the whole game's text, comments included
(``charset-normalizer`` among Shift-JIS/CP932, GB18030 and EUC-KR/CP949; a CP949 reading
that mixes Hanja into Hangul is GB18030 text, as Korean records write names in Hangul;
without charset-normalizer installed, GB18030); else Latin-1, which reads any bytes (a
detector cannot tell Latin-1 from CP1252 or Latin-2 in a few names, and Latin-1 keeps
every byte as a character).  A short name alone is ambiguous (three GB2312 characters are
three valid CP949 ones): the detector reads the whole game, comments included, and where
fewer than 32 bytes of it are not ASCII and it reads as both, GB18030 is taken (Chinese
records go without CA more often than Korean ones).  A guess for a game without
``CA`` is noted with :data:`GUESS_NOTE` (the import names it in its report).  A multi-byte
character cut at the end of a value (a server truncating names bytewise) is kept as
``\\xNN`` escapes and noted, in a declared charset or UTF-8 only (a guessed one is read
strictly: ``Jos\\xe9`` is Latin-1, not a cut GB18030 character); no byte is ever dropped
silently.

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
_LAST_RESORT = "iso8859-1"  # names as codecs.lookup() gives them
_NO_DETECTOR = "gb18030"  # the legacy guess without charset-normalizer: the commonest in Go records
# The legacy charsets the detector chooses among (charset_normalizer's names): Go records come
# from Japanese, Chinese and Korean servers.  Big5 is left out: it read short GB2312 and EUC-KR
# names as Big5 more often than Big5 names turn up without CA.
# CP1252 competes so that European text is not read as a CJK charset it happens to decode in
# (``très``: \xe8s is a CP932 character); picked, the text is read as Latin-1 (every byte kept).
_DETECTED = ("cp932", "gb18030", "cp949", "cp1252")
_FEW_BYTES = 32  # fewer non-ASCII bytes than this (a few names) cannot tell CP949 from GB18030
_HANJA = re.compile("[\u4e00-\u9fff]")
GUESS_NOTE = "no CA"  # how a note about a guessed charset begins
_SUPERSETS = {"gb2312": "gb18030", "gbk": "gb18030", "euc_cn": "gb18030", "ascii": "utf-8"}


class HeaderTextError(ValueError):
    """Header text that the encoding asked for cannot decode."""


def read_header(root: dict[str, list[bytes]], notes: list[str],
                override: str | None = None, sample: bytes = b"") -> tuple[dict[str, object], str]:
    """Every header field of a root node's raw properties, and the codec its text was read with.

    ``root``: property -> raw values, as sgfmill's raw property map.  ``notes``: what
    was met and done (an unknown charset, a komi that is no number, ...) is appended.
    ``override``: a codec name (as ``codecs.lookup`` gives it) to read the text with,
    whatever CA says.  ``sample``: the game's bytes, comments included, which a guessed
    charset is detected from.  Raises HeaderTextError if ``override`` cannot decode the text.
    """
    text, encoding = _decode_header(root, notes, override, sample)
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


def _decode_header(root, notes, override: str | None, sample: bytes) -> tuple[dict[str, str], str]:
    """Header text fields decoded with the first charset that reads them all."""
    raws = {}
    for ident in _TEXT_PROPS:
        values = root.get(ident)
        if values:
            raw = values[0]
            raws[ident] = sgf_grammar.simpletext_value(raw) if _SPECIAL.search(raw) else raw
    declared = _declared(root, notes)
    if override is None and all(raw.isascii() for raw in raws.values()):
        if declared is None and not sample.isascii():  # the comments say which charset the game is in
            encoding, how = _guess(sample, {})
            if encoding != "utf-8":
                notes.append(f"{GUESS_NOTE}: text read as {encoding} ({how})")
            return {k: v.decode("ascii").strip() for k, v in raws.items()}, encoding
        return {k: v.decode("ascii").strip() for k, v in raws.items()}, declared or "utf-8"
    if override:
        decoded = _try_decode(raws, override)
        if decoded is None:
            raise HeaderTextError(f"header text cannot be decoded as {override}")
        encoding, how = override, ""
    else:
        decoded = _try_decode(raws, declared) if declared else None
        encoding, how = declared, ""
        if decoded is None:
            encoding, how = _guess(sample or b" ".join(raws.values()), raws)
            decoded = _try_decode(raws, encoding, cut=encoding == "utf-8")
            if declared:
                notes.append(f"header text is not {declared} as CA says; read as {encoding}")
            elif encoding != "utf-8":
                notes.append(f"{GUESS_NOTE}: text read as {encoding} ({how})")
    text, truncated = decoded
    for ident in truncated:
        notes.append(f"{ident} ends in a cut {encoding} character, kept as \\x escapes")
    return {k: v.strip() for k, v in text.items()}, encoding


def _guess(sample: bytes, raws: dict[str, bytes]) -> tuple[str, str]:
    """(codec, how it was chosen) for text with no charset declared (or a wrong one), by the
    module docstring's rule: UTF-8, the detector's legacy charset, Latin-1.  The header
    values ``raws`` must decode with it (UTF-8: a character cut at a value's end allowed)."""
    if _decodes(sample, "utf-8") and _try_decode(raws, "utf-8") is not None:
        return "utf-8", "valid UTF-8"
    for encoding, how in _legacy(sample):
        if _try_decode(raws, encoding, cut=False) is not None and _decodes(sample, encoding):
            return encoding, how
    return _LAST_RESORT, "Latin-1, the last resort"


def _decodes(data: bytes, encoding: str) -> bool:
    try:
        data.decode(encoding)
    except UnicodeDecodeError as exc:
        # a character cut at the very end (a server's bytewise cut) still says the charset
        return encoding == "utf-8" and exc.reason == "unexpected end of data" and exc.end == len(data)
    return True


def _legacy(sample: bytes):
    """(codec, how) candidates for non-UTF-8 text: the detector's pick, or GB18030 without it."""
    try:
        from charset_normalizer import from_bytes
    except ImportError:  # an optional speed-up of nothing but accuracy: the rule still ends
        yield _NO_DETECTOR, "no detector installed: GB18030 tried"
        return
    best = from_bytes(sample, cp_isolation=list(_DETECTED)).best()
    if best is None:
        return
    encoding = codecs.lookup(best.encoding).name
    if encoding == "cp1252":
        return  # Latin-1, the last resort
    if encoding == "cp949" and _decodes(sample, "gb18030"):
        if _HANJA.search(str(best)):
            yield "gb18030", "detected by charset-normalizer as CP949, but with Hanja: GB18030"
        elif sum(byte > 127 for byte in sample) < _FEW_BYTES:
            yield "gb18030", "too short to tell CP949 from GB18030: GB18030"
    yield _SUPERSETS.get(encoding, encoding), "detected by charset-normalizer"


def _try_decode(raws: dict[str, bytes], encoding: str, cut: bool = True):
    """(text, idents cut short) by strict decoding, or None if ``encoding`` does not fit.

    The one error tolerated (with ``cut``) is a multi-byte character cut off at a value's very
    end (servers truncating names bytewise): its bytes are kept as ``\\xNN`` escapes.
    """
    text, truncated = {}, []
    for ident, raw in raws.items():
        try:
            text[ident] = raw.decode(encoding)
        except UnicodeDecodeError as exc:
            if not cut or exc.reason != "unexpected end of data" or exc.end != len(raw):
                return None
            text[ident] = raw[: exc.start].decode(encoding) + raw[exc.start :].decode(
                encoding, "backslashreplace")
            truncated.append(ident)
    return text, truncated
