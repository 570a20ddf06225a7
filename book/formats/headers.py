"""The game-header fields, listed once (names, SGF properties, types, storage), and read from SGF.

:data:`HEADER_FIELDS` is the one list.  What takes it from here:

- ``book.records``: the fields of ``GameRecord`` (:func:`dataclass_fields`), their values
  (:func:`read_header`, below) and the text properties ``to_sgf`` writes back;
- ``book.schema``: the ``games`` table's header columns, in this order;
- ``book.store``: the fields of ``GameRow`` and the columns a games page reads;
- ``book.importer``: a record's header values in its games row (:meth:`HeaderField.stored`);
- the web app: a game's header in ``/api/game`` (``record_info``).

``tests/test_headers.py`` checks that each of these agrees with the list.

:func:`read_header` reads the fields from a root node's raw properties (sgfmill's raw
property map, which both of ``book.records``' readers build).  Text encoding (``CA``):
the declared charset is honoured; GB2312/GBK are read as their superset GB18030.  When
the declared charset does not decode the header text (or there is none), UTF-8, then
GB18030, then latin-1 are tried.  A multi-byte character cut at the end of a value (a
server truncating names bytewise) is kept as ``\\xNN`` escapes and noted; no byte is
ever dropped silently.

Pure Python and sgfmill: no numpy, no SQLAlchemy.
"""

from __future__ import annotations

import codecs
import dataclasses
import re
from dataclasses import dataclass

from sgfmill import sgf_grammar, sgf_properties

from fuseki.engine.core.base import BLACK, WHITE


@dataclass(frozen=True)
class HeaderField:
    """One header field of a game.

    ``name``: the attribute of ``GameRecord`` and ``GameRow``, the ``games`` column and the
    web API's key.  ``type`` and ``default``: the record's type, and its value when the SGF
    root does not give the field.  ``prop``: the SGF root property read and written, or
    None for a field derived from another (``year`` from DT, ``winner`` from RE).
    ``column``: the SQL type of the column (``text``, ``integer``, ``smallint`` or
    ``real``); ``stored_default``: the column's value for the record's default, None
    when the column is nullable and keeps None.
    """

    name: str
    type: object
    default: object
    prop: str | None
    column: str
    stored_default: object
    doc: str

    def stored(self, value):
        """``value`` as the games column holds it (the winner None is stored as 0)."""
        return self.stored_default if value is None else value


HEADER_FIELDS = (
    HeaderField("black", str, "", "PB", "text", "", "Black's name"),
    HeaderField("white", str, "", "PW", "text", "", "White's name"),
    HeaderField("black_rank", str, "", "BR", "text", "", "Black's rank as written (9d, 3p, 5k)"),
    HeaderField("white_rank", str, "", "WR", "text", "", "White's rank as written"),
    HeaderField("date", str, "", "DT", "text", "", "the date as written (FF[4]: YYYY-MM-DD, servers vary)"),
    HeaderField("year", int | None, None, None, "integer", None, "the date's first four-digit number"),
    HeaderField("event", str, "", "EV", "text", "", "the event or tournament"),
    HeaderField("result", str, "", "RE", "text", "", "the result as written (B+R, W+3.5, 0, ?)"),
    HeaderField("winner", int | None, None, None, "smallint", 0, "BLACK or WHITE from the result, else None"),
    HeaderField("komi", float | None, None, "KM", "real", None, "komi, None when absent or not a number"),
    HeaderField("handicap", int, 0, "HA", "integer", 0, "handicap stones, 0 when absent or not a number"),
    HeaderField("rules", str, "", "RU", "text", "", "the rules as written (Japanese, Chinese, Korean)"),
)

HEADER_NAMES = tuple(f.name for f in HEADER_FIELDS)
TEXT_FIELDS = tuple(f for f in HEADER_FIELDS if f.type is str)  # read from and written to SGF as text


def dataclass_fields() -> list[tuple[str, object, dataclasses.Field]]:
    """The header fields as ``dataclasses.make_dataclass`` takes them: keyword-only, with defaults."""
    return [(f.name, f.type, dataclasses.field(default=f.default, kw_only=True)) for f in HEADER_FIELDS]


# --- reading them from SGF -------------------------------------------------------------------

_TEXT_PROPS = tuple(f.prop for f in TEXT_FIELDS)  # PB, PW, BR, WR, DT, EV, RE, RU
_SPECIAL = re.compile(rb"[\\\n\r\t\f\v]")
_YEAR = re.compile(r"(?<![0-9])([0-9]{4})(?![0-9])")
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
    year = _YEAR.search(header["date"])
    header.update(year=int(year.group(1)) if year else None, winner=_winner(header["result"]),
                  komi=_komi(root, notes), handicap=_handicap(root, notes))
    return header, encoding


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
