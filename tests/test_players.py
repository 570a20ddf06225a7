"""Player pages' numbers (book.queries.players, fuseki player) against a brute force.

A real book from a real import of ``tygem-2016-07.tgz`` (skips without ../shared); the brute
force reads every game of the archive again with sgfmill alone (names, result, date, first two
moves), drops the repeats as the importer does (same size and moves: the first one stays), and
counts per player, per year, per pair of players and per first move up to symmetry, with its
own table of the 8 symmetries.
"""

from __future__ import annotations

import re
import tarfile
from collections import Counter, defaultdict

import pytest
from sgfmill import sgf

from fuseki.book.analysis.pipeline import importer
from fuseki.book.queries import players
from fuseki.book.storage.store import Book
from fuseki.book.ui.fuseki_command import main
from fuseki.engine.core import base

from conftest import require_shared_file

pytestmark = pytest.mark.slow
ARCHIVE = "tygem-2016-07.tgz"
SIZE = 19
M = SIZE - 1
SYMMETRIES = [lambda x, y: (x, y), lambda x, y: (M - x, y), lambda x, y: (x, M - y), lambda x, y: (y, M - x),
              lambda x, y: (M - x, M - y), lambda x, y: (M - y, x), lambda x, y: (y, x), lambda x, y: (M - y, M - x)]


def brute_year(date: str) -> int | None:
    for found in re.finditer(r"(?<!\d)(\d{4})(?!\d)", date):
        if 1600 <= int(found.group(1)) <= 2100:
            return int(found.group(1))
    return None


def brute_winner(result: str) -> str | None:
    text = result.strip().upper()
    return "b" if text[:2] == "B+" or text == "B" else "w" if text[:2] == "W+" or text == "W" else None


def read_archive(path) -> list[dict]:
    """Every game of the archive once: black, white (folded), year, winner, first two moves (x, y)."""
    games, seen = [], set()
    with tarfile.open(path, "r|gz") as archive:
        for member in archive:
            if not (member.isfile() and member.name.lower().endswith(".sgf")):
                continue
            game = sgf.Sgf_game.from_bytes(archive.extractfile(member).read())
            root = game.get_root()
            setup = tuple(tuple(sorted(root.get(p))) if root.has_property(p) else () for p in ("AB", "AW"))
            moves = [node.get_move() for node in game.get_main_sequence()[1:]]
            # sgfmill counts rows from the bottom, SGF (and the book's x, y) from the top
            moves = [(c, None if m is None else (m[1], M - m[0])) for c, m in moves if c]
            fingerprint = (game.get_size(), setup, tuple(moves))
            if fingerprint in seen:
                continue
            seen.add(fingerprint)
            names = [(game.get_player_name(c) or "").strip().lower() for c in "bw"]
            date, result = (root.get(p) if root.has_property(p) else "" for p in ("DT", "RE"))
            games.append({"black": names[0], "white": names[1], "year": brute_year(date),
                          "date": date, "winner": brute_winner(result), "size": game.get_size(),
                          "first": moves[0][1] if moves and moves[0][0] == "b" and not any(setup) else "none",
                          "reply": moves[1][1] if len(moves) > 1 and moves[1][0] == "w" else "none"})
    return games


@pytest.fixture(scope="module")
def brute():
    return read_archive(require_shared_file(ARCHIVE)[0])


@pytest.fixture(scope="module")
def book(month_book):
    opened = Book.open(str(month_book), readonly=True)  # the month, imported once by ``fuseki import`` (conftest)
    yield opened
    opened.close()


def brute_record(games: list[dict], name: str) -> dict:
    r = Counter()
    for game in games:
        r["games"] += 1
        for colour in "bw":
            if game["black" if colour == "b" else "white"] != name:
                continue
            r[colour + "_games"] += 1
            if game["winner"] == colour:
                r[colour + "_wins"] += 1
            elif game["winner"] is not None:
                r[colour + "_losses"] += 1
    return {"games": r["games"], "wins": r["b_wins"] + r["w_wins"], "losses": r["b_losses"] + r["w_losses"],
            "black_games": r["b_games"], "black_wins": r["b_wins"], "black_losses": r["b_losses"],
            "white_games": r["w_games"], "white_wins": r["w_wins"], "white_losses": r["w_losses"]}


def games_of(brute: list[dict], name: str) -> list[dict]:
    return [g for g in brute if name in (g["black"], g["white"])]


def by_year(games: list[dict], name: str) -> dict:
    years = defaultdict(list)
    for game in games:
        years[game["year"]].append(game)
    return {year: brute_record(rows, name) for year, rows in years.items()}


def shown(point) -> tuple[int, int]:
    """The image of the point in the upper right corner, on or right of its diagonal."""
    return min((s(*point) for s in SYMMETRIES), key=lambda p: (-p[0], p[1]))


def sgf_point(xy) -> str:
    return "abcdefghijklmnopqrs"[xy[0]] + "abcdefghijklmnopqrs"[xy[1]]


def brute_repertoire(games: list[dict], name: str):
    """({first move shown: [games, wins]} as Black, {first shown: {reply orbit: [games, wins]}} as White)."""
    black, white = defaultdict(lambda: [0, 0]), defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for game in games:
        if game["first"] == "none" or game["first"] is None or game["size"] != SIZE:
            continue  # no first move by Black on an empty board (or a pass: none in this archive)
        first = shown(game["first"])
        if game["black"] == name:
            black[sgf_point(first)][0] += 1
            black[sgf_point(first)][1] += game["winner"] == "b"
        if game["white"] == name:
            turn = next(s for s in SYMMETRIES if s(*game["first"]) == first)
            fixing = [s for s in SYMMETRIES if s(*first) == first]
            orbit = "none" if game["reply"] in ("none", None) else \
                frozenset(sgf_point(s(*turn(*game["reply"]))) for s in fixing)
            row = white[sgf_point(first)][orbit]
            row[0] += 1
            row[1] += game["winner"] == "w"
    return black, white


def chosen_players(brute: list[dict]) -> list[str]:
    """The five players of most games, and every 97th name of the rest (a spread of small ones)."""
    counts = Counter(n for g in brute for n in {g["black"], g["white"]} if n)
    ordered = [n for n, _ in counts.most_common()]
    return ordered[:5] + ordered[5::97]


def test_record_by_year_and_in_all(book, brute):
    for name in chosen_players(brute):
        mine = games_of(brute, name)
        report = players.player_report(book, name.upper())  # any case
        assert report.total.__dict__ == brute_record(mine, name), name
        assert {y.year: y.record.__dict__ for y in report.years} == by_year(mine, name), name
        assert report.name.lower() == name
        counts = Counter(o for g in mine for o in {g["black"], g["white"]} - {name} if o)
        met = {n.lower(): c for n, c in report.opponents}  # named as written: the brute force folds
        assert met == {n: counts[n] for n in met}
        assert [c for _, c in report.opponents] == sorted(counts.values(), reverse=True)[:len(report.opponents)]


def test_a_game_without_a_winner_is_neither_win_nor_loss(tmp_path):
    """The month has no such game: a few written here, imported for real."""
    results = ["B+R", "W+3.5", "0", "Draw", "?", "Void", None, "B+T"]
    folder = tmp_path / "sgf"
    folder.mkdir()
    for n, result in enumerate(results):
        black, white = ("Ann", "bob") if n % 2 == 0 else ("BOB", "ann")
        re_prop = f"RE[{result}]" if result is not None else ""
        (folder / f"g{n}.sgf").write_text(f"(;GM[1]FF[4]SZ[19]PB[{black}]PW[{white}]DT[201{n % 3}-01-02]{re_prop}"
                                          f";B[pd];W[{'dp' if n % 2 else 'dd'}];B[{'abcdefgh'[n]}a])")
    with Book.open(str(tmp_path / "draws.sqlite")) as written:
        importer.import_paths(written, [str(folder)], workers=0)
        report = players.player_report(written, "ANN", vs="Bob")
    # Ann: Black in 0 (B+R win), 2 (0), 4 (?), 6 (no RE); White in 1 (W+ win), 3 (Draw), 5 (Void), 7 (B+T loss)
    assert report.total == players.PlayerRecord(8, 2, 1, 4, 1, 0, 4, 1, 1)
    # the names as written in their newest game (2012, the last imported: g5, BOB - ann)
    assert report.vs_total == report.total and (report.name, report.vs) == ("ann", "BOB")
    assert {y.year: y.record.games for y in report.years} == {2010: 3, 2011: 3, 2012: 2}
    assert [(base.point_to_vertex(m.point, SIZE), m.games, m.stats.black_wins, m.stats.white_wins)
            for m in report.as_black] == [("Q16", 4, 1, 0)]
    assert [(base.point_to_vertex(a.first.point, SIZE), [(base.point_to_vertex(m.point, SIZE), m.games)
                                                            for m in a.replies]) for a in report.as_white] \
        == [("Q16", [("D4", 4)])]


def test_head_to_head(book, brute):
    pairs = Counter(frozenset((g["black"], g["white"])) for g in brute if g["black"] != g["white"])
    for pair, count in pairs.most_common(4):
        name, other = sorted(pair)
        together = [g for g in brute if {g["black"], g["white"]} == {name, other}]
        report = players.player_report(book, name, vs=other.upper())
        assert report.vs.lower() == other and report.vs_total.games == count
        assert report.vs_total.__dict__ == brute_record(together, name)
        assert {y.year: y.record.__dict__ for y in report.vs_years} == by_year(together, name)
        listed = []
        page = players.player_games(book, name, other, page_size=7)
        while True:
            listed += page.rows
            if page.after is None:
                break
            page = players.player_games(book, name, other, page_size=7, after=page.after)
        assert len(listed) == count == len({row.id for row in listed})
        assert all({row.black.lower(), row.white.lower()} == {name, other} for row in listed)


def test_games_pages_newest_first(book, brute):
    name = chosen_players(brute)[0]
    mine = games_of(brute, name)
    first = players.player_games(book, name, page_size=50)
    assert first.total == len(mine) and first.pages == -(-len(mine) // 50)
    rows = list(first.rows)
    for number in range(2, first.pages + 1):
        rows += players.player_games(book, name, page=number, page_size=50).rows
    assert len({row.id for row in rows}) == len(mine)
    assert sorted(row.date for row in rows) == sorted(g["date"] for g in mine)
    order = [(row.date, row.id) for row in rows]
    assert order == sorted(order, reverse=True)


def test_repertoire_as_black_and_as_white(book, brute):
    for name in chosen_players(brute):
        black, white = brute_repertoire(games_of(brute, name), name)
        report = players.player_report(book, name)
        assert report.size == SIZE
        got = {base.point_to_sgf(m.point, SIZE): [m.games, m.stats.black_wins] for m in report.as_black}
        assert got == {k: list(v) for k, v in black.items()}, name
        counts = [m.games for m in report.as_black]
        assert counts == sorted(counts, reverse=True)
        answers = {}
        for answer in report.as_white:
            first = base.point_to_sgf(answer.first.point, SIZE)
            rows = {frozenset(base.point_to_sgf(p, SIZE) for p in m.points): [m.games, m.stats.white_wins]
                    for m in answer.replies}
            unanswered = answer.first.games - sum(m.games for m in answer.replies)
            if unanswered:
                rows["none"] = [unanswered, answer.first.stats.white_wins
                                - sum(m.stats.white_wins for m in answer.replies)]
            answers[first] = rows
            assert base.point_to_sgf(answer.replies[0].point, SIZE) in {
                base.point_to_sgf(p, SIZE) for p in answer.replies[0].points} if answer.replies else True
        assert answers == {k: {o: list(v) for o, v in rows.items()} for k, rows in white.items()}, name


def test_find_players_by_substring(book, brute):
    counts = Counter(n for g in brute for n in {g["black"], g["white"]} if n)
    for part in ("ki", "A", "zz", "1"):
        expected = sorted(((n, c) for n, c in counts.items() if part.lower() in n), key=lambda i: (-i[1], i[0]))
        assert players.find_players(book, part, 15) == expected[:15]


def test_unknown_names_say_what_there_is(book, brute):
    name = chosen_players(brute)[0]
    with pytest.raises(players.NoPlayer) as missing:
        players.player_report(book, name[:-1])
    assert name in str(missing.value) and (name, len(games_of(brute, name))) in missing.value.similar
    with pytest.raises(players.NoPlayer, match=f"(?i){re.escape(name)} never met 'nobody at all' in the book"):
        players.player_report(book, name, vs="nobody at all")
    with pytest.raises(ValueError, match="empty"):
        players.player_report(book, "  ")


def test_the_command_prints_the_same_tables(book, brute, capsys):
    name = chosen_players(brute)[0]
    record = brute_record(games_of(brute, name), name)
    assert main(["player", name.upper(), "--book", book.path, "--page-size", "3"]) == 0
    out = capsys.readouterr().out
    total = next(line for line in out.splitlines() if line.startswith("total"))
    assert total.split()[1:4] == [str(record["games"]), str(record["wins"]), str(record["losses"])]
    assert f"{record['black_games']} ({record['black_wins']}-{record['black_losses']})" in total
    assert "as Black, first moves" in out and "as White, answers" in out
    assert main(["player", "--find", name[:3], "--book", book.path]) == 0
    assert name in capsys.readouterr().out
    for argv, message in ((["player", name[:-1]], "names containing it"),
                          (["player", name, "--page", "0"], "at least 1"),
                          (["player", name, "--page", "99999"], "out of range"),
                          (["player", name, "--book", "builtin"], "without players")):
        if "--book" not in argv:
            argv = [*argv, "--book", book.path]
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
