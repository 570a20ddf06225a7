"""book.model.headers is the one list of the game-header fields; everything that names them agrees with it.

The places that once listed the fields each by hand -- ``GameRecord``, the ``games`` table,
``GameRow`` and the columns a games page reads, the importer's games row, the web app's
``record_info`` and ``game_row_json``, the SGF properties read and written -- are checked here field by field,
and a game whose every header field has a value of its own goes through all of them.
"""

from __future__ import annotations

import dataclasses
import typing

import pytest
from sqlalchemy import Float, Integer, SmallInteger, Text

from fuseki.book.analysis.pipeline import batches, importer
from fuseki.book.formats import sgf_headers
from fuseki.book.formats.sgf_reader import read_games
from fuseki.book.model.headers import HEADER_FIELDS, HEADER_NAMES
from fuseki.book.model.records import GameRecord
from fuseki.book.storage import schema, store
from fuseki.book.storage.store import Book, GameRow
from fuseki.book.ui.web.api_args import game_row_json
from fuseki.book.ui.web.app import record_info
from fuseki.engine.core.base import BLACK
from fuseki.engine.core.board import Board

# One value per field, each different from the default, as the SGF below gives them.
GAME = (b"(;GM[1]FF[4]CA[UTF-8]SZ[19]PB[Lee Sedol]PW[Gu Li]BR[9p]WR[8p]DT[2014-01-26]"
        b"EV[MLily Cup]RE[B+R]KM[7.5]HA[2]RU[Chinese];B[pd];W[dp])")
VALUES = {"black": "Lee Sedol", "white": "Gu Li", "black_rank": "9p", "white_rank": "8p",
          "date": "2014-01-26", "year": 2014, "event": "MLily Cup", "result": "B+R", "winner": BLACK,
          "komi": 7.5, "handicap": 2, "rules": "Chinese"}


def test_the_list_is_well_formed():
    assert len(set(HEADER_NAMES)) == len(HEADER_NAMES)
    props = [f.prop for f in HEADER_FIELDS if f.prop]
    assert len(set(props)) == len(props)
    assert set(VALUES) == set(HEADER_NAMES)  # the sample game below covers every field
    for f in HEADER_FIELDS:
        assert f.stored(f.default) == f.stored_default
        assert f.stored(VALUES[f.name]) == VALUES[f.name]
        assert isinstance(VALUES[f.name], typing.get_args(f.type) or f.type)


def header_part(cls) -> list[dataclasses.Field]:
    """The fields of ``cls`` named by the list, checked to stand together and in its order."""
    names = [f.name for f in dataclasses.fields(cls)]
    start = names.index(HEADER_NAMES[0])
    assert tuple(names[start:start + len(HEADER_NAMES)]) == HEADER_NAMES
    return dataclasses.fields(cls)[start:start + len(HEADER_NAMES)]


@pytest.mark.parametrize("cls", [GameRecord, GameRow])
def test_record_and_row_have_the_fields_with_their_types_and_defaults(cls):
    for field, header in zip(header_part(cls), HEADER_FIELDS):
        assert (field.type, field.default, field.kw_only) == (header.type, header.default, True)


def test_games_table_has_the_columns_in_order_after_the_id():
    columns = list(schema.games.columns)
    assert [c.name for c in columns[1:1 + len(HEADER_FIELDS)]] == list(HEADER_NAMES)
    sql_type = {"text": Text, "integer": Integer, "smallint": SmallInteger, "real": Float}
    for header in HEADER_FIELDS:
        column = schema.games.c[header.name]
        assert type(column.type) is sql_type[header.column]
        assert column.nullable == (header.stored_default is None)
        assert (column.default.arg if column.default is not None else None) == header.stored_default


def test_a_games_page_reads_every_row_field_but_the_move_number():
    assert [c.name for c in store._row_columns()] == [f.name for f in dataclasses.fields(GameRow)][:-1]
    assert dataclasses.fields(GameRow)[-1].name == "move_number"


def test_sgf_text_properties_are_the_lists_text_fields():
    assert sgf_headers._TEXT_PROPS == tuple(f.prop for f in HEADER_FIELDS if f.type is str)
    assert sgf_headers._TEXT_PROPS == ("PB", "PW", "BR", "WR", "DT", "EV", "RE", "RU")


def test_a_game_reads_and_stores_every_field():
    (record,) = read_games(GAME, "game.sgf")
    assert {name: getattr(record, name) for name in HEADER_NAMES} == VALUES

    row = dict(zip(batches.GAME_COLUMNS[1:], batches.game_row(record, None, 7)))
    assert {name: row[name] for name in HEADER_NAMES} == VALUES

    info = record_info(record)
    assert set(info) == {"size", *HEADER_NAMES, "move_count"}
    assert info["winner"] == "B" and info["size"] == 19 and info["move_count"] == 2
    assert {name: info[name] for name in HEADER_NAMES if name != "winner"} == {
        k: v for k, v in VALUES.items() if k != "winner"}


def test_defaults_are_stored_as_the_column_defaults():
    (record,) = read_games(b"(;SZ[9];B[ee])", "bare.sgf")
    assert {name: getattr(record, name) for name in HEADER_NAMES} == {f.name: f.default for f in HEADER_FIELDS}
    row = dict(zip(batches.GAME_COLUMNS[1:], batches.game_row(record, None, 7)))
    assert {name: row[name] for name in HEADER_NAMES} == {f.name: f.stored_default for f in HEADER_FIELDS}
    assert row["winner"] == 0


def test_a_stored_game_lists_every_field(tmp_path):
    (tmp_path / "game.sgf").write_bytes(GAME)
    with Book.open(str(tmp_path / "book.sqlite")) as book:
        importer.import_paths(book, [str(tmp_path / "game.sgf")], workers=0)
        (row,) = book.games(Board(19)).rows
    assert {name: getattr(row, name) for name in HEADER_NAMES} == VALUES
    assert (row.size, row.move_count, row.source, row.move_number) == (19, 2, str(tmp_path / "game.sgf"), 0)
    listed = game_row_json(row)  # the web page's games column
    assert set(listed) == {"id", *HEADER_NAMES, "size", "move_count", "move_number"} and listed["winner"] == "B"
    assert {name: listed[name] for name in HEADER_NAMES if name != "winner"} == {
        k: v for k, v in VALUES.items() if k != "winner"}


def test_headers_needs_neither_numpy_nor_sqlalchemy():
    source = open(sgf_headers.__file__, encoding="utf-8").read()
    assert "import numpy" not in source and "sqlalchemy import" not in source


# DT values as servers, databases and people write them, and the year each gives (None: no date).
DATES = [
    ("2014-01-26", 2014),                     # FF[4]
    ("2007.03.05", 2007),                     # GoGoD-style dots
    ("2007-03-05,06", 2007),                  # a game over two days (FF[4] shorthand)
    ("2007-03-05,2007-03-06", 2007),
    ("2007/03/05", 2007),
    ("2007", 2007),
    ("2007-03", 2007),
    ("March 5, 2007", 2007),
    ("5 March 2007", 2007),
    ("05.03.2007", 2007),                     # European order
    ("5/3/2007", 2007),
    ("2007年3月5日", 2007),                    # Chinese, Japanese
    ("２００７年３月５日", 2007),              # full-width digits
    ("2016-07-01 14:30:00", 2016),            # Tygem, with the time
    ("2007-03-05T10:00:00+09:00", 2007),
    ("[2003-12-10]", 2003),
    ("1846-09-11", 1846),                     # the Ear-reddening game
    ("Meiji 30 (1897)", 1897),
    ("Round 3, 2009-11-18", 2009),
    ("game 1234 on 2009-11-18", 2009),        # 1234 is no year (before 1600)
    ("20070305", 2007),                       # compact YYYYMMDD
    ("0000-00-00", None),
    ("07-03-05", None),                       # a two-digit year: ambiguous, left out
    ("?", None),
    ("", None),
    ("unknown", None),
    ("3000-01-01", None),
    ("12345", None),                          # five digits: no year
]


@pytest.mark.parametrize(("text", "year"), DATES)
def test_date_year_reads_real_world_dt_values(text, year):
    assert sgf_headers.date_year(text) == year


def test_a_game_without_a_date_is_kept_with_no_year():
    games = read_games(b"(;GM[1]FF[4]SZ[19]PB[a]PW[b];B[pd];W[dp])(;GM[1]FF[4]SZ[19]DT[?];B[pd])", "two.sgf")
    assert [(g.date, g.year) for g in games] == [("", None), ("?", None)]
