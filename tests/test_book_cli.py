"""fuseki import / search / stats through book.ui.fuseki_command.main."""

from __future__ import annotations

import re

import pytest

from fuseki.book.storage.index_state import indexed_through
from fuseki.book.ui.fuseki_command import main
from fuseki.book.ui.reading import parse_years
from fuseki.engine.core import base
from fuseki.engine.core.base import BLACK, WHITE

from games import sgf_text

PD, DP, DD, PP, QC = (base.sgf_to_point(p, 19) for p in ("pd", "dp", "dd", "pp", "qc"))


@pytest.fixture
def book(tmp_path, capsys, book_url):
    games = [
        ([(BLACK, PD), (WHITE, DP), (BLACK, PP)], "Lee Sedol", "Gu Li", "2012-01-02", "B+R"),
        ([(BLACK, PD), (WHITE, DP), (BLACK, DD)], "Ke Jie", "Lee Sedol", "2015-01-02", "W+R"),
        ([(BLACK, DP), (WHITE, PD), (BLACK, PP)], "Ke Jie", "Gu Li", "2016-01-02", "B+2.5"),
        ([(BLACK, PD), (WHITE, DD), (BLACK, QC)], "Shin Jinseo", "Ke Jie", "2016-05-02", "B+R"),
    ]
    for i, (moves, black, white, date, result) in enumerate(games):
        (tmp_path / f"{i}.sgf").write_bytes(sgf_text(19, moves, black, white, date, result))
    path = book_url
    assert main(["import", str(tmp_path), "--book", path, "--workers", "0"]) == 0
    err = capsys.readouterr().err
    assert "4 games added, 0 duplicates, 0 files skipped, 0 anomalies" in err
    assert "compacted" not in err  # an import's own tables are packed as written
    return path


def search(capsys, *args) -> str:
    assert main(["search", *args]) == 0
    return capsys.readouterr().out


def test_search_prints_the_board_letters_hash_and_table(book, capsys):
    out = search(capsys, "--moves", "pd dp", "--book", book)
    lines = out.splitlines()
    assert lines[0].split() == list("ABCDEFGHJKLMNOPQRST")
    assert lines[20].split() == list("ABCDEFGHJKLMNOPQRST")
    assert lines[1].startswith("19 ") and lines[1].endswith(" 19")
    assert lines[19].startswith(" 1 ") and lines[19].rstrip().endswith(" 1")
    row16 = lines[4].split()  # the row of Q16 (Black) and D16 (the mirror of Q4, a letter)
    assert row16[0] == "16" and row16[16] == "X"
    assert lines[16].split()[4] == "O"  # D4
    assert lines[21] == "Black to play"  # the hash and canonical key only with --verbose
    assert lines[22].split() == ["move", "games", "win", "%"]
    # 3 games reached "pd dp" (one as "dp pd", rotated 180 degrees); the position is
    # symmetric about the anti-diagonal, so Q4 and D16 are one move: a at both, 2 of 3 won
    assert "total 3 games" in out
    table = [line for line in lines if line[1:4] == " - "]
    assert [line.split()[2:] for line in table] == [["D16", "3", "66.7%"]]
    assert lines[4].split()[4] == "a" and lines[16].split()[16] == "a"


def test_search_verbose_names_the_position_keys(book, capsys):
    line = search(capsys, "--moves", "pd dp", "--book", book, "--verbose").splitlines()[21]
    assert re.fullmatch(r"hash [0-9a-f]{16}  canonical [0-9a-f]{16}  Black to play", line), line


def test_search_accepts_gtp_vertices_and_an_sgf_position(book, capsys, tmp_path):
    sgf_out = search(capsys, "--moves", "pd dp", "--book", book)
    assert search(capsys, "--moves", "Q16 D4", "--book", book) == sgf_out
    (tmp_path / "one.sgf").write_bytes(sgf_text(19, [(BLACK, PD), (WHITE, DP), (BLACK, PP)]))
    assert search(capsys, "--sgf", str(tmp_path / "one.sgf"), "--move", "2", "--book", book) == sgf_out


def test_search_filters(book, capsys):
    assert "total 2 games" in search(capsys, "--moves", "pd dp", "--year", "2013-", "--book", book)
    assert "total 1 games" in search(capsys, "--moves", "pd dp", "--year", "2012", "--book", book)
    assert "total 2 games" in search(capsys, "--moves", "pd dp", "--player", "gu li", "--book", book)
    out = search(capsys, "--moves", "", "--min-games", "4", "--book", book)
    assert "total 4 games" in out and "a - " in out
    assert "no games reached" in search(capsys, "--moves", "pass pd", "--book", book)


def test_search_errors_are_one_line_and_exit_1(book, capsys):
    for args in (["--moves", "pd pd"], ["--moves", "zz"], ["--year", "2016-2010"], ["--moves", "I5"]):
        assert main(["search", *args, "--book", book]) == 1
        err = capsys.readouterr().err
        assert err.startswith("fuseki search: ") and err.count("\n") == 1


def test_stats_and_reimport(book, capsys, tmp_path):
    assert main(["stats", "--book", book]) == 0
    out = capsys.readouterr().out
    assert "games      4" in out and "19x19: 4" in out and "2012-2016" in out and "bytes a game" in out
    assert main(["import", str(tmp_path), "--book", book, "--workers", "0", "--compact"]) == 0
    err = capsys.readouterr().err
    assert "0 games added, 4 duplicates" in err and "compacted" in err
    assert main(["stats", "--book", book]) == 0
    assert "games      4" in capsys.readouterr().out


def test_search_on_a_missing_book_fails_cleanly(tmp_path, capsys):
    assert main(["search", "--book", str(tmp_path / "none.sqlite")]) == 1
    assert "no book" in capsys.readouterr().err


def test_parse_years():
    assert parse_years("2010-2016") == (2010, 2016)
    assert parse_years("2010-") == (2010, None)
    assert parse_years("-2016") == (None, 2016)
    assert parse_years("2014") == (2014, 2014)
    for bad in ("x", "-", "2016-2010"):
        with pytest.raises(ValueError):
            parse_years(bad)


def test_a_book_that_cannot_be_opened_is_one_line(tmp_path, capsys):
    target = str(tmp_path / "no" / "such" / "folder" / "b.sqlite")
    assert main(["import", str(tmp_path), "--book", target, "--workers", "0"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("fuseki import: cannot open the book") and err.count("\n") == 1


def test_pattern_prints_the_region_continuations_tenuki_and_total(book, capsys):
    assert main(["pattern", "--book", book, "--moves", "pd dp", "--region", "N19:T13"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split() == list("NOPQRST")  # the region's columns only
    assert "corner pattern" in out
    # every game has Black on a 4-4 point with its corner empty after move 1; White answered
    # elsewhere, so each continuation (the next move inside the region, Kombilo's) came after tenuki
    assert lines[-1] == "total 4 games"
    head = lines.index("    move  colour  games  at once  after tenuki   win %")
    rows = [line.split() for line in lines[head + 1:-2]]
    assert rows and all(r[1] == "-" and r[3] in ("Black", "White") and r[5] == "0" and r[4] == r[6] for r in rows)
    tenuki = int(lines[-2].split()[1])
    assert lines[-2] == f"tenuki {tenuki} (no later move inside the region)"
    assert sum(int(r[4]) for r in rows) + tenuki == 4


def test_pattern_options_reach_the_search(book, capsys):
    """Kombilo's options on the command line: the wildcards drawn x/o, the options said in words
    after the kind, and the total the library gives for the same Pattern."""
    from fuseki.book.analysis.patterns.pattern import EMPTY_OR_BLACK, EMPTY_OR_WHITE, Pattern
    from fuseki.book.analysis.patterns.search import search
    from fuseki.book.storage.store import Book
    from fuseki.engine.core.base import EMPTY

    assert main(["pattern", "--book", book, "--moves", "pd", "--region", "N19:T13", "--empty-or-black", "Q16",
                 "--empty-or-white", "R17", "--swap-colours", "--to-move", "white", "--moves-from", "1",
                 "--moves-to", "9"]) == 0
    out = capsys.readouterr().out
    assert "corner pattern, colours also exchanged, White to move, moves 1-9" in out
    assert " x " in out and " o " in out
    cells = {base.parse_point(f"{c}{r}", 19): EMPTY for c in "NOPQRST" for r in range(13, 20)}
    cells[base.parse_point("Q16", 19)] = EMPTY_OR_BLACK
    cells[base.parse_point("R17", 19)] = EMPTY_OR_WHITE
    with Book.open(book) as opened:
        expected = search(opened, Pattern(19, (12, 0, 18, 6), cells, True, WHITE, 1, 9))
    assert f"total {expected.total} games" in out
    for fixed in ([], ["--fixed-colour"]):  # the default, and the flag that names it
        assert main(["pattern", "--book", book, "--moves", "pd", "--region", "N19:T13", *fixed]) == 0
        assert "corner pattern, fixed colour\n" in capsys.readouterr().out


@pytest.mark.parametrize("args, message", [
    (["--region", "N19:T13", "--any", "Q16", "--empty-or-black", "Q16"], "given twice"),
    (["--region", "N19:T13", "--empty-or-white", "A1"], "outside the region"),
    (["--region", "N19:T13", "--moves-from", "9", "--moves-to", "3"], "bad move range"),
    (["--region", "N19:N19"], "one point"),
    (["--region", "N19"], "two opposite corners"),
    (["--region", "N19:T13", "--any", "A1"], "outside the region"),
    (["--region", "A1:Z30"], "bad region"),
])
def test_pattern_errors_are_one_line_and_exit_2(book, capsys, args, message):
    assert main(["pattern", "--book", book, "--moves", "pd", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err


def test_an_import_keeps_the_pattern_index_a_book_has(book, capsys, tmp_path):
    from fuseki.book.analysis.patterns import index
    from fuseki.book.storage.store import Book

    assert main(["pattern", "--moves", "Q16", "--region", "N19:T13", "--book", book]) == 0  # builds the index
    more = tmp_path / "more"
    more.mkdir()
    (more / "5.sgf").write_bytes(sgf_text(19, [(BLACK, PD), (WHITE, QC)], "New Player", "Gu Li", "2017-01-02", "B+R"))
    capsys.readouterr()
    assert main(["import", str(more), "--book", book, "--workers", "0"]) == 0
    assert "pattern index" not in capsys.readouterr().err  # the import's writer indexed the game
    with Book.open(book, readonly=True) as reader:  # as fuseki serve opens it: the search works
        assert index.update(reader) == 0
        with reader.db.connect() as conn:
            assert indexed_through(conn) == reader.max_game_id(conn) == 5


def test_an_import_leaves_a_fresh_book_indexed(book, capsys):
    from fuseki.book.storage.store import Book

    with Book.open(book, readonly=True) as reader, reader.db.connect() as conn:
        assert indexed_through(conn) == reader.max_game_id(conn) > 0
    assert "pattern index" not in capsys.readouterr().err  # written with the games: no pass after


def test_pattern_budget_prints_how_far_it_got_and_from_goes_on(book, capsys, monkeypatch, tmp_path):
    """Issue 61: ``--budget 0`` (spent before the scan begins: no timing) scans one part (one
    game here), prints its counts, how far it got and the ``--from`` to go on with; following
    the ``--from``s tiles the book, and the parts' totals add up to the plain search's."""
    from fuseki.book.analysis.patterns import scan

    asked = ["pattern", "--book", book, "--moves", "pd", "--region", "N19:T13"]
    assert main(asked) == 0
    whole = capsys.readouterr().out
    assert "scanned" not in whole and whole.splitlines()[-1] == "total 4 games"  # no budget: every game, as before
    monkeypatch.setattr(scan, "PART_GAMES", 1)
    totals, start, lines = [], None, []
    for _ in range(10):
        assert main([*asked, "--budget", "0", *(["--from", str(start)] if start else [])]) == 0
        lines = capsys.readouterr().out.splitlines()
        totals.append(int(re.fullmatch(r"total (\d+) games", lines[-2]).group(1)))
        found = re.search(r"go on with --from (\d+)$", lines[-1])
        if not found:
            break
        assert re.match(rf"stopped at the budget: {len(totals)} of 4 games scanned \({25 * len(totals)}\.0%\)",
                        lines[-1])
        start = int(found.group(1))
    assert len(totals) == 4 and sum(totals) == 4
    # the games saved of a part say that they are a part's (a search within them is within those only)
    saved = tmp_path / "part.json"
    assert main([*asked, "--budget", "0", "--save-games", str(saved)]) == 0
    capsys.readouterr()
    assert "stopped at the budget: 1 of 4 games scanned" in saved.read_text()
    assert re.fullmatch(r"scanned to the end: 4 of 4 games \(100\.0%\) \(this part: 1 games from game id \d+\)",
                        lines[-1])
