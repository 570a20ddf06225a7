"""Fuego/Pachi opening book files: the line format, reading (and its errors), the export walk on a
real book (tests/bookgames.py), and export -> import -> export giving the same book lines."""

from __future__ import annotations

import pytest

from fuseki.book.formats.fuego import (
    FuegoBookError,
    FuegoEntry,
    book_lines,
    fuego_line,
    fuego_records,
    is_fuego_book,
    leaf_lines,
    read_fuego_book,
    write_fuego_book,
)
from fuseki.book.formats.sgf_reader import read_games
from fuseki.book.storage.store import Book
from fuseki.book.ui import fuseki_command
from fuseki.engine.core.base import BLACK, PASS, WHITE, vertex_to_point
from fuseki.engine.core.board import Board

from bookgames import build_book

# The tiny book's lines for moves played in >= 2 games.  The walk plays each orbit's representative
# (the smallest padded index): D17 for the 3-4 points (T3 of R16, so D4 -> Q4, D16 -> D4, Q3 -> R16)
# and D16 for the star points (all three star games answered on the opposite corner).
EXPORT_MIN_2 = """\
19 | D17 D16
19 D17 | Q4 D4
19 D17 Q4 | R16
19 D16 | Q4
"""


@pytest.fixture(scope="module")
def book_path(tmp_path_factory):
    folder = tmp_path_factory.mktemp("book")
    return build_book(folder / "book.sqlite", folder / "sgf")


def v(text, size=19):
    return vertex_to_point(text, size)


def export(path, min_games=1, **options):
    import io

    out = io.StringIO()
    with Book.open(path, readonly=True) as book:
        write_fuego_book(book, out, min_games, **options)
    return out.getvalue()


def line_set(text):
    return {(e.size, e.moves, frozenset(e.replies)) for e in read_fuego_book(text)}


# --- the format ---------------------------------------------------------------------------------

def test_fuego_line_spacing_is_fuegos():
    assert fuego_line(19, [], [v("Q3"), v("Q4")]) == "19 | Q3 Q4"
    assert fuego_line(19, [v("Q4"), v("D16")], [v("C4")]) == "19 Q4 D16 | C4"
    assert fuego_line(9, [v("E5", 9)], [v("C3", 9), v("G7", 9)]) == "9 E5 | C3 G7"


def test_read_fuego_book():
    text = "19 | Q3 Q4\n\n# a comment\n19 Q4 D16 | c4 D3\n9 e5 pass | G7\n29 A1 | B2\n  13 K10 |  C3  \n"
    assert list(read_fuego_book(text)) == [
        FuegoEntry(19, (), (v("Q3"), v("Q4")), 1),
        FuegoEntry(19, (v("Q4"), v("D16")), (v("C4"), v("D3")), 4),
        FuegoEntry(9, (v("E5", 9), PASS), (v("G7", 9),), 5),
        FuegoEntry(13, (v("K10", 13),), (v("C3", 13),), 7),  # size 29 skipped, as Fuego skips it
    ]


@pytest.mark.parametrize("text, message", [
    ("19 Q4 D16\n", "line 1: no '|'"),
    ("19 | Q4\n19 Q4 |\n", "line 2: no move to play"),
    ("x | Q4\n", "line 1: invalid size 'x'"),
    ("1 | A1\n", "line 1: invalid size 1"),
    ("19 | Q4\n\n9 | J10\n", "line 3: 'J10' is not a point of a 9x9 board"),
    ("19 | I5\n", "line 1: 'I5' is not a point"),
    ("19 | Q4 D44\n", "line 1: 'D44' is not a point"),
])
def test_read_errors_name_the_line(text, message):
    with pytest.raises(FuegoBookError, match=message):
        list(read_fuego_book(text))


def test_is_fuego_book():
    assert is_fuego_book(b"\n19 | Q3 Q4\n19 Q3 | C4\n")
    assert not is_fuego_book(b"(;GM[1]SZ[19];B[pd])")
    assert not is_fuego_book(b"\x00\x01binary")


def test_leaf_lines_drop_prefixes_and_repeats():
    entries = read_fuego_book("19 | Q4 D4\n19 Q4 | D16\n19 Q4 D16 | C4\n19 | Q4\n9 | E5\n")
    assert list(leaf_lines(entries)) == [
        (19, (v("D4"),), 1), (19, (v("Q4"), v("D16"), v("C4")), 3), (9, (v("E5", 9),), 5)]


def test_fuego_records_alternate_colours_and_carry_their_sgf():
    records = list(fuego_records("19 Q4 | D16 D4\n", "book.dat"))
    assert [r.moves for r in records] == [[(BLACK, v("Q4")), (WHITE, v("D16"))],
                                          [(BLACK, v("Q4")), (WHITE, v("D4"))]]
    assert records[0].source == "book.dat:1" and records[0].winner is None
    (again,) = read_games(records[1].sgf, "x.sgf")
    assert again.size == 19 and again.moves == records[1].moves


# --- export from a real book -------------------------------------------------------------------

def test_export_lines(book_path):
    assert export(book_path, min_games=2) == EXPORT_MIN_2
    assert export(book_path, min_games=4) == "19 | D17\n19 D17 | Q4\n"
    assert export(book_path, min_games=8) == ""


def test_export_min_games_1_has_every_book_move_from_the_empty_board(book_path):
    text = export(book_path)
    assert text.startswith(EXPORT_MIN_2.split("\n")[0] + "\n19 D17 | Q4 D4 Q16\n19 D17 Q4 | R16 D3\n")
    assert "19 D17 Q4 R16 | K10 C3 R3\n" in text  # the three tails, tied at one game: point order
    assert all(line.startswith("19 ") for line in text.splitlines())  # 7x7 games start from setups


def test_export_max_moves(book_path):
    assert export(book_path, min_games=2, max_moves=0) == "19 | D17 D16\n"
    assert export(book_path, min_games=2, max_moves=1) == "19 | D17 D16\n19 D17 | Q4 D4\n19 D16 | Q4\n"


def test_export_writes_each_position_once(tmp_path):
    """Transpositions and mirror images: one line per position, or Fuego refuses the file."""
    from fuseki.book.analysis.pipeline.importer import import_paths

    from bookgames import game_sgf

    folder = tmp_path / "sgf"
    folder.mkdir()
    for n, moves in enumerate(["D4 Q16 Q4 D16", "Q4 Q16 D4 C3", "Q16 D4 D16 Q4", "D4 Q16 Q4 K10"]):
        (folder / f"{n}.sgf").write_text(game_sgf(moves, "B+R"))
    path = str(tmp_path / "t.sqlite")
    with Book.open(path) as book:
        import_paths(book, [str(folder)], workers=0)
    keys, entries = [], list(read_fuego_book(export(path)))
    for entry in entries:
        board = Board(entry.size)
        for i, point in enumerate(entry.moves):
            board.play(BLACK if i % 2 == 0 else WHITE, point)
        keys.append(min(board.symmetric_keys(BLACK if len(entry.moves) % 2 == 0 else WHITE)))
        for reply in entry.replies:  # every reply is legal there
            assert board.legal_reason(board.to_move, reply) is None
    assert len(keys) == len(set(keys)) == 5, entries
    # empty board, a star point, the opposite and the adjacent answers, then ONE line for the
    # position all four games reach after 3 moves (two orders and a rotation), with all three replies
    assert [len(e.moves) for e in entries] == [0, 1, 2, 3, 2] and len(entries[3].replies) == 3


def test_cli_export(book_path, tmp_path, capsys):
    out = tmp_path / "book.dat"
    assert fuseki_command.main(["book", "export", "--fuego", str(out), "--min-games", "2", "--book", book_path]) == 0
    assert out.read_text() == EXPORT_MIN_2
    assert "4 positions written" in capsys.readouterr().err
    assert fuseki_command.main(["book", "export", "--fuego", str(out), "--min-games", "0", "--book", book_path]) == 1
    assert "--min-games must be at least 1" in capsys.readouterr().err
    assert out.read_text() == EXPORT_MIN_2  # untouched
    assert fuseki_command.main(["book", "export", "--fuego", str(tmp_path / "x.dat"), "--book",
                     str(tmp_path / "missing.sqlite")]) == 1
    assert not (tmp_path / "x.dat").exists() and not (tmp_path / "missing.sqlite").exists()


# --- round trip ---------------------------------------------------------------------------------

@pytest.mark.parametrize("min_games", [1, 2])
def test_export_import_export_round_trip(book_path, tmp_path, min_games):
    from fuseki.book.analysis.pipeline.importer import import_paths

    first = export(book_path, min_games=min_games)
    folder = tmp_path / "from-fuego"
    folder.mkdir()
    records = list(fuego_records(first, "book.dat"))
    for n, record in enumerate(records):
        (folder / f"{n:03}.sgf").write_bytes(record.sgf)
    again = str(tmp_path / "again.sqlite")
    with Book.open(again) as book:
        report = import_paths(book, [str(folder)], workers=0)
    assert report.added == len(records) and not report.anomalies and not report.skipped
    second = export(again)  # every line of the file is one or more games: all of them come back
    assert line_set(second) == line_set(first)
    with Book.open(again, readonly=True) as book:  # a position's count: the file's leaf lines through it
        assert book.next_moves(Board(19)).total == len(records)
        assert len(list(book_lines(book, 19, min_games=1))) == len(first.splitlines())


def test_fuseki_import_reads_a_fuego_book_file_directly(book_path, tmp_path, capsys):
    first = export(book_path, min_games=1)
    (tmp_path / "book.dat").write_text(first, encoding="ascii")
    (tmp_path / "broken.fuego").write_text("19 Q16 | Z99\n", encoding="ascii")
    again = str(tmp_path / "again.sqlite")
    assert fuseki_command.main(["import", str(tmp_path / "book.dat"), str(tmp_path / "broken.fuego"),
                     "--book", again]) == 0
    assert "broken.fuego" in capsys.readouterr().err  # named and skipped, the rest imported
    assert line_set(export(again)) == line_set(first)
