"""The game-header fields, listed once: names, SGF properties, types, storage.

:data:`HEADER_FIELDS` is the one list.  What takes it from here:

- ``book.model.records``: the fields of ``GameRecord`` (:func:`dataclass_fields`);
- ``book.formats.sgf_headers``: their values read from an SGF root (``read_header``);
- ``book.storage.schema``: the ``games`` table's header columns, in this order;
- ``book.storage.store``: the fields of ``GameRow`` and the columns a games page reads;
- ``book.analysis.pipeline.batches``: a record's header values in its games row (:meth:`HeaderField.stored`);
- the web app: a game's header in ``/api/game`` (``record_info``).

``tests/test_headers.py`` checks that each of these agrees with the list.  The book's data
model: formats produce these values and storage keeps them, so neither imports the other
for them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass


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
    HeaderField("year", int | None, None, None, "integer", None,
                "the date's year of 1600-2100 (sgf_headers.date_year)"),
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
