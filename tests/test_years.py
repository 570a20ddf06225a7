"""Openings through the years (book.queries.years): ``fuseki search --by-year`` / ``--trends``,
``/api/position?by_year=1`` and the shell's ``years`` against a count made here.

The games are replayed with the engine's Board (``replay.expected``, once per year) and
counted by year; the command's table and the API's numbers must equal that count exactly, in
two orientations of the position, with games without a date among them ("no date").
"""

from __future__ import annotations

import io
import re
from collections import Counter

import numpy as np
import pytest

from fuseki.book.analysis.pipeline import importer
from fuseki.book.model.builtin import PATH as BUILTIN
from fuseki.book.queries import years
from fuseki.book.storage.store import Book
from fuseki.book.ui.fuseki_command import main
from fuseki.engine.core import base, coords
from fuseki.engine.core.base import BLACK, WHITE

from games import random_game, sgf_text
from replay import board_after, expected

# (DT as written, the year it gives): undated games are kept as "no date"
DATES = [("2005-03-01", 2005), ("2006.05.02", 2006), ("5 March 2007", 2007), ("2008/01/01", 2008),
         ("2009-11-18,19", 2009), ("2009", 2009), ("", None), ("?", None)]
OPENING = ["pd", "dp"]


def write(folder, count=70, seed=5):
    """Games from a few openings (in random orientations), dated from DATES; [(moves, winner, year)]."""
    rng = np.random.default_rng(seed)
    games = []
    for i in range(count):
        opening = [OPENING, ["pd", "dd"], ["pd"], []][i % 4]
        moves = random_game(rng, 19, opening, length=int(rng.integers(4, 12)))
        date, year = DATES[int(rng.integers(len(DATES)))]
        winner = [BLACK, WHITE][i % 2]
        (folder / f"y{i:03d}.sgf").write_bytes(sgf_text(19, moves, date=date, result="B+R" if winner == BLACK
                                                        else "W+R"))
        games.append((moves, winner, year))
    return games


@pytest.fixture(params=["rows", "next_stats"])
def dated(request, tmp_path, monkeypatch):
    """A SQLite book of 70 games; "next_stats": its busy positions are read from the segments'
    next-move statistics."""
    from fuseki.book.storage import nextmoves, segments

    if request.param == "next_stats":
        monkeypatch.setattr(nextmoves, "GAMES", 2)
        monkeypatch.setattr(segments, "FANOUT", 3)
    folder = tmp_path / "games"
    folder.mkdir()
    games = write(folder)
    path = str(tmp_path / "book.sqlite")
    with Book.open(path) as book:
        assert importer.import_paths(book, [str(folder)], workers=0, batch_games=9).added == len(games)
    return path, games


def moves_text(t: int) -> str:
    """OPENING under symmetry t, as --moves takes it."""
    return " ".join(base.point_to_sgf(coords.transform_point(t, base.sgf_to_point(m, 19), 19), 19)
                    for m in OPENING)


def count_here(games, t: int):
    """{year: (games reaching, book games)}, {year: {orbit: games}}: the replayed count."""
    board = board_after([(BLACK if i % 2 == 0 else WHITE, base.sgf_to_point(m, 19)) for i, m in
                         enumerate(moves_text(t).split())])
    in_book = Counter(g[2] for g in games)
    rows, moves = {}, {}
    for year in in_book:
        total, _ended, found = expected(board, games, keep=lambda game, y=year: game[2] == y)
        if total:
            rows[year] = (total, in_book[year])
            moves[year] = {orbit: g for orbit, (g, _b, _w) in found.items()}
    return board, rows, moves


def trend_here(moves, rows, orbit, k=3):
    """The documented rule, computed here with fractions."""
    dated = sorted(y for y in rows if y is not None)
    start = dated[-1] - k + 1
    recent = [y for y in dated if y >= start]
    before = [y for y in dated if y < start]
    if not before:
        return None
    share = [sum(moves[y].get(orbit, 0) for y in span) / sum(rows[y][0] for y in span) for span in (before, recent)]
    change = share[1] - share[0]
    return "rising" if change >= 0.01 - 1e-12 else "falling" if change <= -0.01 + 1e-12 else "steady"


@pytest.mark.parametrize("t", [0, 5])
def test_by_year_equals_a_replayed_count(dated, capsys, t):
    path, games = dated
    board, rows, moves = count_here(games, t)
    assert None in rows and len(rows) >= 4  # undated games reach it too
    assert main(["search", "--book", path, "--moves", moves_text(t), "--by-year"]) == 0
    out = capsys.readouterr().out
    table = {}
    for line in out.split("YEAR ")[1].split("\n\n")[0].splitlines()[1:]:
        name, games_, share = line.rsplit(None, 2)
        table[None if name == "no date" else int(name)] = (int(games_), share)
    assert table == {y: (g, f"{100 * g / n:.2f}%") for y, (g, n) in rows.items()}

    with Book.open(path, readonly=True) as book:
        profile = years.date_profile(book, board)
    assert profile.total == sum(g for g, _n in rows.values())
    assert profile.moves and any(entry.trend for entry in profile.moves)
    for entry in profile.moves:
        orbit = frozenset(entry.move.points)
        mine = {y: found[orbit] for y, found in moves.items() if orbit in found}
        assert entry.by_year == mine
        dated_years = sorted(y for y in mine if y is not None)
        assert (entry.first, entry.last) == ((dated_years[0], dated_years[-1]) if dated_years else (None, None))
        assert entry.trend == trend_here(moves, rows, orbit)
        vertex = base.point_to_vertex(entry.move.point, 19)
        first, last = ("-" if y is None else str(y) for y in (entry.first, entry.last))
        assert re.search(rf" - {vertex} +{entry.move.games} +{first} +{last}  {entry.trend or '-'}\n", out + "\n")


@pytest.mark.parametrize("t", [0, 3])
def test_api_years_and_trends_equal_the_count(dated, t):
    from fuseki.book.ui.web.app import create_app

    path, games = dated
    board, rows, moves = count_here(games, t)
    app = create_app(book_url=path)
    try:
        client = app.test_client()
        moves_arg = moves_text(t).replace(" ", ",")
        answer = client.get(f"/api/position?moves={moves_arg}&by_year=1&trends=2005-2006:2008-2009").get_json()
        assert "error" not in answer, answer
        assert {r["year"]: (r["games"], r["book_games"]) for r in answer["years"]["rows"]} == rows
        for r in answer["years"]["rows"]:
            assert r["share"] == r["games"] / r["book_games"]
        assert [m["games"] for m in answer["years"]["moves"]] == [m["games"] for m in answer["next"]]
        for entry in answer["years"]["moves"]:
            mine = {"none" if y is None else str(y): g for y, found in moves.items()
                    for orbit, g in found.items() if entry["point"] in orbit}
            assert entry["by_year"] == mine
        periods = ((2005, 2006), (2008, 2009))
        totals = [sum(rows[y][0] for y in rows if y is not None and lo <= y <= hi) for lo, hi in periods]
        assert answer["trends"]["games"] == totals
        by_point = {m["point"]: m for m in answer["years"]["moves"]}
        for change in answer["trends"]["moves"]:
            entry = by_point[change["point"]]
            counts = [sum(g for y, g in entry["by_year"].items() if y != "none" and lo <= int(y) <= hi)
                      for lo, hi in periods]
            assert change["games"] == counts
            assert change["shares"] == [g / n if n else 0.0 for g, n in zip(counts, totals)]
        assert client.get(f"/api/position?moves={moves_arg}&trends=2005").status_code == 400
    finally:
        app.extensions["fuseki_book"].close()


def test_a_year_filter_counts_only_its_years_and_their_games(dated):
    path, games = dated
    board, rows, _moves = count_here(games, 0)
    from fuseki.book.model.filters import Filters

    with Book.open(path, readonly=True) as book:
        profile = years.date_profile(book, board, filters=Filters(year_from=2006, year_to=2008))
    assert {r.year: (r.games, r.book_games) for r in profile.years} == {
        y: v for y, v in rows.items() if y is not None and 2006 <= y <= 2008}


def test_trends_text_and_the_shell(dated, capsys):
    from fuseki.book.ui.shell import BookShell

    path, games = dated
    assert main(["search", "--book", path, "--moves", "pd dp", "--trends", "2005-2006:2008-2009"]) == 0
    out = capsys.readouterr().out
    assert "RISING" in out and "FALLING" in out and re.search(r"position: \d+ games in 2005-2006", out)
    with Book.open(path, readonly=True) as book:
        stdout = io.StringIO()
        shell = BookShell(book, path, stdout=stdout)
        for line in ("play pd dp", "years", "years 2", "years 2005-2006:2008-2009", "years x"):
            shell.onecmd(line)
    said = stdout.getvalue()
    assert "YEAR" in said and "no date" in said and "recent 2008-2009" in said and "RISING" in said
    assert "positive whole number" in said


def test_the_builtin_book_says_it_has_no_dates(capsys):
    assert main(["search", "--book", str(BUILTIN), "--moves", "pd", "--by-year"]) != 0
    assert "this book has no dates" in capsys.readouterr().err
