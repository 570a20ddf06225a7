"""The game filters by event, result, rank, handicap and komi (``book.model.filters``), exact
everywhere they are offered.

- The pure reading: ``parse_result``, ``rank_value``, ``parse_range`` and ``parse_filters``
  against hand-written cases, and against every distinct RE, BR, WR and KM of the real Tygem
  archive (no crash, the share read as expected).
- A real book, made by a real ``fuseki import`` of the whole Tygem archive (the session's, shared
  with other modules) and then, into a copy, of generated SGF games with varied headers: under
  each filter and combinations, ``next_moves`` at three positions, every page of ``games`` and a
  pattern search agree with a brute force written here, which reads
  every stored game with sgfmill, reads its headers with its own small parsers and replays its
  first moves on sgfmill's board under the 8 symmetries.
- The ways in: ``fuseki search`` (its total and its one-line errors), the shell's ``filter``
  command and the JSON API give the same counts; a bad value names itself and the reason.
- PostgreSQL: the same filters on a real server give the brute force's counts.
"""

from __future__ import annotations

import io
import multiprocessing
import re
import subprocess
import sys
import tarfile
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from sgfmill import boards, sgf

from fuseki.book.model.filters import (
    FilterError,
    Filters,
    parse_filters,
    parse_range,
    parse_result,
    rank_text,
    rank_value,
)

from games import generated_games

ROOT = Path(__file__).resolve().parent.parent
ARCHIVE = ROOT.parent / "shared" / "data" / "tygem-2016-07.tgz"
SIZE = 19

# --- the pure reading ------------------------------------------------------------------------


@pytest.mark.parametrize("text, winner, won_by, margin", [
    ("B+R", "B", "resign", None), ("W+Resign", "W", "resign", None), ("b+resignation", "B", "resign", None),
    ("B+3.5", "B", "points", 3.5), ("W+0.5", "W", "points", 0.5), ("B+12", "B", "points", 12.0),
    ("W+T", "W", "time", None), ("B+Time", "B", "time", None), ("B+F", "B", "forfeit", None),
    ("W+Forfeit", "W", "forfeit", None), ("W+Offline", "W", None, None), ("B+", "B", None, None),
    ("B", "B", None, None), (" w+r ", "W", "resign", None), ("W+2.5 points", "W", "points", 2.5),
    ("0", None, None, None), ("Draw", None, None, None), ("Void", None, None, None), ("?", None, None, None),
    ("", None, None, None), ("Jigo", None, None, None), ("B+abc", "B", None, None),
])
def test_results_are_read_as_written(text, winner, won_by, margin):
    found = parse_result(text)
    assert (found.winner, found.won_by, found.margin) == (winner, won_by, margin)


@pytest.mark.parametrize("text, value", [
    ("9d", 9), ("9D", 9), ("9 dan", 9), ("1d", 1), ("1d*", 1), ("3d?", 3), ("3p", 12), ("9p", 18), ("1P", 10),
    ("5k", -4), ("1k", 0), ("30k", -29), ("2 kyu", -1), ("7段", 7), ("5級", -4), ("3 pro", 12),
    ("", None), ("?", None), ("NR", None), ("10d", None), ("31k", None), ("0k", None), ("d", None), ("9x", None),
])
def test_ranks_are_read_leniently(text, value):
    assert rank_value(text) == value


def test_ranks_order_kyu_below_dan_below_pro_and_print_back():
    order = ["30k", "10k", "1k", "1d", "7d", "9d", "1p", "9p"]
    assert [rank_value(r) for r in order] == sorted(rank_value(r) for r in order)
    assert all(rank_text(rank_value(r)) == r for r in order)


@pytest.mark.parametrize("text, integer, bounds", [
    ("6.5", False, (6.5, 6.5)), ("5.5-7.5", False, (5.5, 7.5)), ("2-4", True, (2, 4)), ("0", True, (0, 0)),
    ("2-", True, (2, None)), ("-4", True, (None, 4)), ("-7.5--5.5", False, (-7.5, -5.5)), (" 1 - 3 ", True, (1, 3)),
])
def test_ranges(text, integer, bounds):
    assert parse_range(text, integer) == bounds


@pytest.mark.parametrize("text, integer", [("abc", False), ("", False), ("-", False), ("4-2", True),
                                           ("2.5", True), ("1-2-3", False), ("nan", False), ("inf", False)])
def test_bad_ranges_are_refused(text, integer):
    with pytest.raises(ValueError):
        parse_range(text, integer)


def test_filter_texts_and_errors_name_the_value_and_the_reason():
    fields = parse_filters({"event": " Meijin ", "winner": "black", "won_by": "R", "margin": "0.5-5",
                            "min_rank": "7d", "max_rank": "1p", "handicap": "2-4", "komi": "6.5", "player": "lee"})
    assert fields == {"event": "Meijin", "winner": "B", "won_by": "resign", "margin": (0.5, 5.0), "min_rank": 7,
                      "max_rank": 10, "handicap": (2, 4), "komi": (6.5, 6.5), "player": "lee"}
    assert parse_filters({"komi": "", "winner": None}) == {}
    cases = {("komi", "abc"): "--komi abc: not a number or range", ("handicap", "2.5"): "--handicap 2.5: not a whole",
             ("winner", "X"): "--winner X: not B, W", ("won_by", "luck"): "--won-by luck: not one of",
             ("min_rank", "12d"): "--min-rank 12d: not a rank", ("margin", "-5--3"): "--margin -5--3: a margin",
             ("event", "a\x00b"): "--event 'a\\x00b': has control", ("player", "x" * 101): "longer than 100"}
    for (name, text), message in cases.items():
        with pytest.raises(FilterError) as caught:
            parse_filters({name: text}, label=lambda n: "--" + n.replace("_", "-"))
        assert message in str(caught.value)
    with pytest.raises(FilterError, match="min_rank 1p is above max_rank 5k"):
        parse_filters({"min_rank": "1p", "max_rank": "5k"})


@pytest.mark.slow  # sgfmill reads all 11,365 games of the archive
def test_every_distinct_value_of_the_real_archive_is_read():
    values: dict[str, Counter] = {prop: Counter() for prop in ("RE", "BR", "WR", "KM")}
    with tarfile.open(ARCHIVE, "r|gz") as archive:
        for member in archive:
            if member.isfile():
                root = sgf.Sgf_game.from_bytes(archive.extractfile(member).read()).get_root()
                for prop, counter in values.items():
                    counter[root.get_raw(prop).decode() if root.has_property(prop) else ""] += 1
    games = sum(values["RE"].values())
    results = {text: parse_result(text) for text in values["RE"]}  # no crash on any of them
    with_winner = sum(n for text, n in values["RE"].items() if results[text].winner)
    with_kind = sum(n for text, n in values["RE"].items() if results[text].won_by)
    assert with_winner / games > 0.99 and with_kind / games > 0.97  # W+Offline: a winner, no kind named
    assert all(results[t].margin > 0 for t in values["RE"] if results[t].won_by == "points")
    for prop in ("BR", "WR"):
        assert sum(n for text, n in values[prop].items() if rank_value(text) is not None) / games > 0.99
    assert all(parse_range(text) == (float(text), float(text)) for text in values["KM"] if text)


# --- the brute force ------------------------------------------------------------------------------

def _result(text: str):
    """The test's own RE reading: (winner, how, margin)."""
    text = text.strip().upper()
    winner = text[0] if text[:2] in ("B+", "W+") or text in ("B", "W") else None
    rest = text[2:] if winner and len(text) > 1 else ""
    if re.fullmatch(r"\d+(\.\d+)?", rest):
        return winner, "points", float(rest)
    how = {"R": "resign", "RESIGN": "resign", "RESIGNATION": "resign", "T": "time", "TIME": "time",
           "F": "forfeit", "FORFEIT": "forfeit"}.get(rest)
    return winner, how, None


def _rank(text: str):
    found = re.fullmatch(r"(\d+) ?(d|dan|k|kyu|p)\*?", text.strip().lower())
    if not found:
        return None
    n, unit = int(found.group(1)), found.group(2)[0]
    limits = {"k": (1, 30), "d": (1, 9), "p": (1, 9)}[unit]
    if not limits[0] <= n <= limits[1]:
        return None
    return {"k": 1 - n, "d": n, "p": 9 + n}[unit]


def _number(text, kind, default):
    try:
        return kind(text)
    except (TypeError, ValueError):
        return default


SYMMETRIES = [lambda r, c: (r, c), lambda r, c: (r, 18 - c), lambda r, c: (18 - r, c), lambda r, c: (18 - r, 18 - c),
              lambda r, c: (c, r), lambda r, c: (18 - c, r), lambda r, c: (c, 18 - r), lambda r, c: (18 - c, 18 - r)]


def _position(moves) -> frozenset:
    board = boards.Board(SIZE)
    for colour, point in moves:
        if point is not None:
            board.play(*point, colour)
    return frozenset((colour, point) for colour, point in board.list_occupied_points())


class Game:
    """A stored game as sgfmill reads it: its headers (the test's readings) and first moves."""

    def __init__(self, game_id: int, data: bytes):
        game = sgf.Sgf_game.from_bytes(data)
        root = game.get_root()
        text = {prop: (root.get(prop) if root.has_property(prop) else "") for prop in
                ("PB", "PW", "DT", "RE", "BR", "WR", "EV")}
        raw = {prop: root.get_raw(prop).decode() if root.has_property(prop) else None for prop in ("KM", "HA")}
        self.id, self.size = game_id, game.get_size()
        self.names = (text["PB"].lower(), text["PW"].lower())
        year = re.search(r"\d{4}", text["DT"])
        self.year = int(year.group()) if year else None
        self.winner, self.won_by, self.margin = _result(text["RE"])
        self.ranks = (_rank(text["BR"]), _rank(text["WR"]))
        self.event = text["EV"].lower()
        self.komi = _number(raw["KM"], float, None)
        self.handicap = _number(raw["HA"], int, 0)
        self.moves = [node.get_move() for node in game.get_main_sequence()[1:4]]
        self._next: dict = {}  # (target, depth) -> next_at's answer: the same for every filter


    def keeps(self, f: Filters) -> bool:
        """The filter, read straight from the definitions in book/model/filters.py."""
        ranks_known = None not in self.ranks
        weaker = min(self.ranks) if ranks_known else None
        return all([
            f.year_from is None or (self.year is not None and self.year >= f.year_from),
            f.year_to is None or (self.year is not None and self.year <= f.year_to),
            not f.player or any(f.player.lower() in name for name in self.names),
            not f.event or f.event.lower() in self.event,
            not f.winner or self.winner == f.winner, not f.won_by or self.won_by == f.won_by,
            f.margin is None or (self.margin is not None and _inside(self.margin, f.margin)),
            f.min_rank is None or (ranks_known and weaker >= f.min_rank),
            f.max_rank is None or (ranks_known and weaker <= f.max_rank),
            f.handicap is None or _inside(self.handicap, f.handicap),
            f.komi is None or (self.komi is not None and _inside(self.komi, f.komi))])

    def next_at(self, target: frozenset, depth: int, stabilizer):
        """The orbit (SGF points) of the move this game played from ``target`` (``depth`` moves
        in, Black to move at even depths), None when it never reached it."""
        key = (target, depth)
        if key not in self._next:
            self._next[key] = self._next_at(target, depth, stabilizer)
        return self._next[key]

    def _next_at(self, target: frozenset, depth: int, stabilizer):
        if self.size != SIZE or len(self.moves) < depth:
            return None
        if any(colour != "bw"[i % 2] for i, (colour, _) in enumerate(self.moves[:depth + 1])):
            return None
        here = _position(self.moves[:depth])
        for turn in SYMMETRIES:
            if frozenset((c, turn(*p)) for c, p in here) == target:
                if len(self.moves) == depth:
                    return "end"
                point = self.moves[depth][1]
                if point is None:
                    return frozenset({""})
                return frozenset(_sgf(*s(*turn(*point))) for s in stabilizer)
        return None


def _inside(value, bounds) -> bool:
    return (bounds[0] is None or value >= bounds[0]) and (bounds[1] is None or value <= bounds[1])


def _sgf(row: int, col: int) -> str:
    return "abcdefghijklmnopqrs"[col] + "abcdefghijklmnopqrs"[18 - row]


def _target(moves: str):
    """(position, its stabilizer) after ``moves`` (SGF points), as sgfmill's board holds them."""
    played = [("bw"[i % 2], (18 - (ord(m[1]) - 97), ord(m[0]) - 97)) for i, m in enumerate(moves.split())]
    here = _position(played)
    return here, [s for s in SYMMETRIES if frozenset((c, s(*p)) for c, p in here) == here]


POSITIONS = ["", "pd", "pd dp"]
FILTERS = [
    Filters(event="meijin"), Filters(event="名人"), Filters(winner="B"), Filters(winner="W"),
    Filters(won_by="resign"), Filters(won_by="points"), Filters(won_by="time"), Filters(won_by="forfeit"),
    Filters(margin=(0.5, 5.0)), Filters(margin=(10.0, None)), Filters(min_rank=9), Filters(min_rank=10),
    Filters(max_rank=0), Filters(min_rank=-4, max_rank=9), Filters(handicap=(0, 0)), Filters(handicap=(2, 4)),
    Filters(handicap=(2, None)), Filters(komi=(6.5, 6.5)), Filters(komi=(5.5, 7.5)), Filters(komi=(None, 0.0)),
    Filters(winner="W", won_by="resign", year_from=2016), Filters(event="meijin", komi=(6.5, 6.5)),
    Filters(player="lee", margin=(0.5, 20.0)), Filters(min_rank=1, handicap=(0, 3), winner="B"),
    Filters(event="k", won_by="points", margin=(None, 3.0), year_to=2010),
]


def _ids(f: Filters) -> str:
    return ",".join(f"{k}={v}" for k, v in vars(f).items() if v is not None and k != "min_games") or "none"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, month_book):
    """(book path, every stored Game): the archive's book (conftest's ``month_book``, imported once
    a session by ``fuseki import``), copied, then ``fuseki import`` of the generated games into it
    (their headers are the filters' edge cases: the month's games alone leave some filters empty)."""
    from fuseki.book.storage import segments
    from fuseki.book.storage.store import Book
    from fuseki.engine.core.zobrist import to_signed

    from conftest import copy_book

    folder = tmp_path_factory.mktemp("filters")
    games = folder / "generated"
    games.mkdir()
    for name, data in generated_games().items():
        (games / f"{name}.sgf").write_bytes(data)
    book_path = copy_book(month_book, folder / "book.sqlite")
    run = subprocess.run([sys.executable, "-m", "fuseki", "import", str(games), "--book", str(book_path),
                          "--workers", "0"], cwd=ROOT.parent, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    with Book.open(str(book_path)) as book:
        from fuseki.book.analysis.patterns import index

        index.update(book, progress=None)  # the pattern search's index, built once with write access
    with Book.open(str(book_path), readonly=True) as book:
        ids = list(book.game_ids())
    # sgfmill reads the 11,000 games in two processes: most of this fixture's time, and the
    # suite leaves the second core idle
    with multiprocessing.get_context("fork").Pool(2) as pool:
        stored = [game for part in pool.map(_read_games, [(str(book_path), ids[0::2]), (str(book_path), ids[1::2])])
                  for game in part]
    stored.sort(key=lambda game: game.id)
    with Book.open(str(book_path), readonly=True) as book:
        with book.db.connect() as conn:  # the import stored the busy positions' rows: the brute force checks them
            snap = segments.snapshot(conn)
            for moves in POSITIONS:
                board = _board(moves)
                assert book.source.stored_rows.codes(conn, snap, to_signed(min(board.symmetric_keys(board.to_move)))) \
                    is not None, moves
    assert len(stored) > 11_000 and sum(g.event != "" for g in stored) > 50
    return book_path, stored


def _read_games(job) -> list[Game]:
    from fuseki.book.storage.store import Book

    location, ids = job
    with Book.open(location, readonly=True) as book:
        return [Game(game_id, book.game_sgf(game_id)) for game_id in ids]


def _board(moves: str):
    from fuseki.book.ui.reading import parse_moves

    return parse_moves(moves, SIZE)


def _expected(stored, f: Filters, moves: str):
    """(games reaching the position that the filter keeps: id -> its next orbit or "end")."""
    target, stabilizer = _target(moves)
    depth = len(moves.split())
    found = {}
    for game in stored:
        if game.keeps(f):
            orbit = game.next_at(target, depth, stabilizer)
            if orbit is not None:
                found[game.id] = orbit
    return found


def _next_moves_seen(found) -> tuple[int, int, Counter]:
    from fuseki.engine.core import base

    orbits = Counter({frozenset(base.point_to_sgf(p, SIZE) if p != base.PASS else "" for p in m.points): m.games
                      for m in found.moves})
    return found.total, found.ended, orbits


@pytest.mark.slow
@pytest.mark.parametrize("f", FILTERS, ids=_ids)
def test_next_moves_games_and_patterns_match_the_brute_force(corpus, f):
    from fuseki.book.analysis.patterns.search import search
    from fuseki.book.storage.store import Book
    from fuseki.book.ui.reading import pattern_from_board

    book_path, stored = corpus
    with Book.open(str(book_path), readonly=True) as book:
        for moves in POSITIONS:
            expected = _expected(stored, f, moves)
            orbits = Counter(v for v in expected.values() if v != "end")
            ended = sum(v == "end" for v in expected.values())
            assert _next_moves_seen(book.next_moves(_board(moves), filters=f)) == (len(expected), ended, orbits), moves
            ids, after, pages = [], None, 0
            while True:
                page = book.games(_board(moves), filters=f, page_size=37, after=after)
                ids += [row.id for row in page.rows]
                pages += 1
                assert page.total == len(expected)
                if page.after is None:
                    break
                after = page.after
            assert len(ids) == len(set(ids)) and set(ids) == set(expected), moves
        board = _board("pd dp")
        pattern = pattern_from_board(board, "N19:T13", "", False)
        every = search(book, pattern).matches
        kept = {g.id for g in stored if g.keeps(f)}
        filtered = search(book, pattern, f)
        assert filtered.matches == {i: m for i, m in every.items() if i in kept}
        assert filtered.total == len(filtered.matches)


@pytest.mark.slow
def test_header_filters_and_search_within_together(corpus):
    """A header filter within an earlier answer's games (``Filters.within``) keeps the games both keep."""
    from fuseki.book.queries.gamesets import GameSet
    from fuseki.book.storage.store import Book

    book_path, stored = corpus
    within = GameSet([g.id for g in stored if g.id % 3])
    with Book.open(str(book_path), readonly=True) as book:
        for f in (Filters(winner="B"), Filters(won_by="time", komi=(6.5, 6.5)), Filters(event="meijin")):
            for moves in ("", "pd"):
                expected = {i for i in _expected(stored, f, moves) if i % 3}
                both = replace(f, within=within)
                assert book.next_moves(_board(moves), filters=both).total == len(expected)
                assert book.games(_board(moves), filters=both, page_size=5).total == len(expected)


@pytest.mark.slow
def test_the_filters_keep_some_games_and_leave_some_out(corpus):
    """The brute force's own sanity: each single filter keeps some of the stored games and drops
    some, so that the comparisons above can fail."""
    _book_path, stored = corpus
    for f in FILTERS[:20]:
        kept = sum(g.keeps(f) for g in stored)
        assert 0 < kept < len(stored), f


# --- the ways in ---------------------------------------------------------------------------------


def _fuseki(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fuseki", *args], cwd=ROOT.parent, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.slow
def test_the_cli_shell_and_api_count_as_the_brute_force(corpus):
    from fuseki.book.storage.store import Book
    from fuseki.book.ui.shell import BookShell
    from fuseki.book.ui.web.app import create_app

    book_path, stored = corpus
    f = Filters(winner="W", won_by="resign", min_rank=9, komi=(6.5, 6.5), event=None)
    expected = len(_expected(stored, f, "pd"))
    assert expected > 100
    run = _fuseki("search", "--book", str(book_path), "--moves", "pd", "--winner", "w", "--won-by", "Resign",
                  "--min-rank", "9d", "--game-komi", "6.5")
    assert run.returncode == 0 and f"total {expected} games" in run.stdout
    assert "winner W; won by resign; rank at least 9d; komi 6.5" in run.stdout
    tree = _fuseki("pattern", "--book", str(book_path), "--moves", "pd", "--region", "N19:T13", "--margin", "0.5-5")
    assert tree.returncode == 0 and "total" in tree.stdout
    for args, message in [(["--game-komi", "abc"], "--game-komi abc: not a number or range"),
                          (["--min-rank", "12d"], "--min-rank 12d: not a rank"),
                          (["--handicap", "4-2"], "--handicap 4-2: 4 is above 2"),
                          (["--won-by", "luck"], "--won-by luck: not one of resign, points, time, forfeit")]:
        bad = _fuseki("search", "--book", str(book_path), *args)
        assert bad.returncode != 0 and message in bad.stderr and "Traceback" not in bad.stderr
        assert len(bad.stderr.strip().splitlines()) == 1

    with Book.open(str(book_path), readonly=True) as book:
        out = io.StringIO()
        shell = BookShell(book, stdout=out)
        for line in ("play pd", "filter winner W", "filter won_by resign", "filter min_rank 9d", "filter komi 6.5",
                     "search", "filter komi abc"):
            shell.onecmd(line)
        text = out.getvalue()
        assert f"total {expected} games" in text and "komi abc: not a number or range" in text
        assert shell.filters == replace(f, player=None)
        shell.onecmd("filter off")
        assert not shell.filters.selects_games()

    client = create_app(book_url=str(book_path)).test_client()
    query = "moves=pd&winner=W&won_by=resign&min_rank=9d&komi=6.5"
    assert client.get(f"/api/position?{query}").get_json()["total"] == expected
    assert client.get(f"/api/games?{query}&page_size=5").get_json()["total"] == expected
    both = Filters(event="meijin", handicap=(2, 4))
    assert client.get("/api/games?event=MEIJIN&handicap=2-4").get_json()["total"] == len(_expected(stored, both, ""))
    for query, message in [("komi=abc", "komi abc: not a number or range"), ("winner=X", "winner X: not B, W"),
                           ("margin=5-1", "margin 5-1: 5.0 is above 1.0"), ("min_rank=1p&max_rank=5k", "above")]:
        answer = client.get(f"/api/position?{query}")
        assert answer.status_code == 400 and message in answer.get_json()["error"]


@pytest.mark.slow
def test_postgresql_filters_as_sqlite(pg_url, tygem_games, tmp_path):
    from fuseki.book.analysis.pipeline.importer import import_paths
    from fuseki.book.storage.store import Book

    from conftest import write_archive

    folder = tmp_path / "generated"
    folder.mkdir()
    for name, data in generated_games().items():
        (folder / f"{name}.sgf").write_bytes(data)
    archive = write_archive(tmp_path / "part.tgz", tygem_games[:1500])
    with Book.open(pg_url) as book:
        import_paths(book, [str(folder), str(archive)], workers=0)
    with Book.open(pg_url, readonly=True) as book:
        stored = [Game(game_id, book.game_sgf(game_id)) for game_id in book.game_ids()]
        for f in FILTERS:
            for moves in ("", "pd"):
                expected = _expected(stored, f, moves)
                assert book.next_moves(_board(moves), filters=f).total == len(expected), (f, moves)
                assert book.games(_board(moves), filters=f, page_size=3).total == len(expected)
