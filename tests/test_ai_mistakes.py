"""``fuseki ai mistakes``: the book's popular mistakes from the stored values, against a brute force.

A real book of generated games (each position offers a few moves, drawn popular or rare from a
seeded generator, then a random tail keeps the games distinct; imported by ``fuseki import``
as ``test_ai_annotate`` does) gets values through ``ai_values.put`` (storage, no KataGo): every position of 2+
games, each of its next moves a KataGo candidate with a lead drawn from a seeded generator,
visits 50, 150 or 400, the loss the best lead minus the move's, and sometimes a move nobody
played as KataGo's best.  The brute force replays every game with the engine's ``Board``,
counts each position's games and each next move's, and picks the mistakes from the values it
wrote itself; ``book.analysis.mistakes.find`` reads the book.  Points are compared in canonical form
(the least image of the point under the symmetries that give the position's canonical key).
"""

from __future__ import annotations

import math
import random
from collections import defaultdict

import numpy as np
import pytest
from sgfmill import sgf

from fuseki.book.analysis import mistakes
from fuseki.book.analysis.ai import AiValueStores
from fuseki.book.queries import ai_values
from fuseki.book.queries.ai_values import AiSettings
from fuseki.book.storage.store import Book
from fuseki.book.ui.fuseki_command import main
from fuseki.engine.core import base, coords
from fuseki.engine.core.base import BLACK, WHITE, opponent
from fuseki.engine.core.board import Board

from games import import_games, menu_games

SETTINGS = AiSettings("japanese", 6.5, "net", 400)
SEED = 39


TABLES = coords.symmetry_table(19).tolist()


def canonizer(board, side):
    """point -> its canonical form on (``board``, ``side``)."""
    keys = board.symmetric_keys(side)
    own = [TABLES[s] for s in range(8) if keys[s] == min(keys)]
    return lambda point: min(table[point] for table in own)


def canon(board, side, point) -> int:
    return canonizer(board, side)(point)


def replay(games):
    """key -> {"board", "side", "games": set, "moves": canonical point -> (point on "board", set)}."""
    positions: dict[int, dict] = {}
    for index, moves in enumerate(games):
        board, side = Board(19), BLACK
        for color, point in [*moves, (None, None)]:
            key = min(board.symmetric_keys(side))
            at = positions.setdefault(key, {"board": board.copy(), "side": side, "games": set(),
                                            "moves": defaultdict(lambda: [None, set()])})
            at["games"].add(index)
            if color is None:
                break
            if "own" not in at:  # canonical point -> the point on the position's first board
                to_canon = canonizer(at["board"], side)
                at["own"] = {to_canon(p): p for p in base.board_points(19)}
            c = canon(board, side, point)
            own = at["own"][c]
            entry = at["moves"][c]
            entry[0] = own
            entry[1].add(index)
            board.play(color, point)
            side = opponent(color)
    return positions


def store_values(location, positions, rng) -> dict[int, list[tuple]]:
    """Values for every position of 2+ games: key -> its candidate rows (point on its board,
    visits, win rate, lead, loss, prior), best first."""
    written = {}
    with Book.open(location) as book, book.writing() as conn:
        ai_values.create(conn)
        for key, at in sorted(positions.items()):
            if len(at["games"]) < 2 or not at["moves"]:
                continue
            board, side = at["board"], at["side"]
            leads = {own: rng.uniform(-4.0, 1.0) for own, _ in at["moves"].values()}
            if rng.random() < 0.5:  # KataGo's best is a move nobody played
                to_canon = canonizer(board, side)
                free = [p for p in base.board_points(19) if board.is_legal(side, p)
                        and to_canon(p) not in at["moves"]]
                leads[rng.choice(free)] = 1.5
            best = max(leads.values())
            rows = sorted(((p, rng.choice((50, 150, 400)), 0.5, lead, best - lead, 0.01) for p, lead in leads.items()),
                          key=lambda r: r[4])
            ai_values.put(conn, board.symmetric_keys(side), 19, SETTINGS, (400, 0.5, best), rows)
            written[key] = rows
    return written


def brute_force(positions, written, min_games, visits_min):
    """(key, canonical move, games, total, loss, visits, canonical better move), most played
    first.  The rule, written out: a move of 10%+ of the position's games whose loss against
    the best lead of the candidates of 100+ visits (all of them when none has 100), floored at
    0, is at least 1.5 points plus the noise margin 2 * 0.7 * sqrt(1/v + 1/v_best), its own,
    the position's (400) and the best move's visits at least ``visits_min``; the better move
    the least loss among the others (those of ``visits_min`` visits when there are any), of
    equal loss the most visits, then the higher lead."""
    found = []
    for key, rows in written.items():
        at = positions[key]
        board, side, total = at["board"], at["side"], len(at["games"])
        if total < min_games:
            continue
        leads = [(p, v, float(np.float32(lead))) for p, v, _w, lead, _loss, _prior in rows]  # as stored
        deep = [r for r in leads if r[1] >= 100] or leads
        _p, best_visits, best = max(deep, key=lambda r: (r[2], r[1]))

        def loss(row, best=best):
            return max(0.0, best - row[2])

        for c, (_own, ids) in at["moves"].items():
            if len(ids) < 0.10 * total:
                continue
            mine = next(r for r in leads if canon(board, side, r[0]) == c)
            if min(mine[1], best_visits) < visits_min:
                continue
            if loss(mine) < 1.5 + 2 * 0.7 * math.sqrt(1 / mine[1] + 1 / best_visits):
                continue
            others = [r for r in leads if canon(board, side, r[0]) != c]
            others = [r for r in others if r[1] >= visits_min] or others
            better = min(others, key=lambda r: (loss(r), -r[1], -r[2]))
            if loss(better) >= loss(mine):
                continue
            found.append((key, c, len(ids), total, round(loss(mine), 4), mine[1], canon(board, side, better[0])))
    return sorted(found, key=lambda m: (-m[2], -m[4], m[0]))


def seen(found):
    return [(m.key, canon(m.board, m.to_move, m.point), m.games, m.total, round(m.loss, 4), m.visits,
             canon(m.board, m.to_move, m.better)) for m in found]


@pytest.fixture(scope="module")
def judged_book(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mistakes")
    games = menu_games(150, seed=SEED)
    location = import_games(folder / "games", games, str(folder / "book.sqlite"))
    positions = replay(games)
    written = store_values(location, positions, random.Random(SEED))
    return location, positions, written


@pytest.mark.parametrize("min_games,visits_min", [(2, 100), (3, 100), (2, 300), (5, 1)])
def test_the_popular_mistakes_are_the_brute_forces(judged_book, min_games, visits_min):
    location, positions, written = judged_book
    expected = brute_force(positions, written, min_games, visits_min)
    with Book.open(location, readonly=True) as book:
        stores = AiValueStores(book.db, None, "japanese", 6.5)
        found, scan = mistakes.find(book, stores, min_games, visits_min)
    assert seen(found) == expected
    assert len(expected) >= 3  # the case is not empty: some positions have mistakes
    assert scan.positions == len([k for k in written if len(positions[k]["games"]) >= min_games])
    for m in found:  # the lines start at their move, on the position's board
        assert m.line[0] == m.point and m.better_line[0] == m.better
        assert min(m.board.symmetric_keys(m.to_move)) == m.key


def test_no_values_for_the_komi_or_rules_asked_no_mistakes(judged_book):
    location, _positions, _written = judged_book
    with Book.open(location, readonly=True) as book:
        for rules, komi in (("japanese", 7.5), ("chinese", 6.5)):
            found, scan = mistakes.find(book, AiValueStores(book.db, None, rules, komi), 2, 100)
            assert (found, scan.positions) == ([], 0)


def test_the_command_lists_them_and_writes_one_variation_each(judged_book, tmp_path, capsys, monkeypatch):
    location, positions, written = judged_book
    monkeypatch.setenv("FUSEKI_AI_CACHE", str(tmp_path / "no-cache.sqlite"))  # the user's cache stays out
    out = tmp_path / "mistakes.sgf"
    assert main(["ai", "mistakes", "--book", location, "--min-games", "2", "--sgf", str(out)]) == 0
    printed = capsys.readouterr()
    expected = brute_force(positions, written, 2, 100)
    listed = [line for line in printed.out.splitlines() if line[:4].strip().rstrip(".").isdigit()]
    assert len(listed) == len(expected)
    assert f"{len(expected)} popular mistakes" in printed.err
    root = sgf.Sgf_game.from_bytes(out.read_bytes()).get_root()
    assert len(root) == len(expected)
    for variation, (key, move, games, total, loss, visits, better) in zip(root, expected):
        board, node = Board(19), variation
        while True:  # the moves to the position, then the mistake's line and the better move's as branches
            color, point = node.get_move()
            if color is not None:
                board.play(BLACK if color == "b" else WHITE, base.sgf_to_point(sgf_point(point), 19))
            if len(node) == 2:
                break
            node = node[0]
        mistake, alternative = node[0], node[1]
        mover = BLACK if mistake.get_move()[0] == "b" else WHITE
        assert min(board.symmetric_keys(mover)) == key
        assert canon(board, mover, base.sgf_to_point(sgf_point(mistake.get_move()[1]), 19)) == move
        assert canon(board, mover, base.sgf_to_point(sgf_point(alternative.get_move()[1]), 19)) == better
        text = mistake.get("C")
        assert f"played in {games} of the position's {total} games ({games / total:.0%})" in text
        assert f"loses {loss:.1f} points (KataGo, {visits} visits)" in text


def sgf_point(move) -> str:
    row, col = move
    return "abcdefghijklmnopqrs"[col] + "abcdefghijklmnopqrs"[18 - row]


def test_bad_options_are_one_line_errors(judged_book, capsys):
    location, _p, _w = judged_book
    assert main(["ai", "mistakes", "--book", location, "--min-games", "0"]) == 1
    assert "--min-games, --visits-min and --limit must be at least 1" in capsys.readouterr().err
    assert main(["ai", "mistakes", "--book", location, "--komi", "6.3"]) == 1
    assert "--komi 6.3" in capsys.readouterr().err


# --- fuseki search --by-year --ai ------------------------------------------------------------------

# after pd, white's moves and the values stored for them: (loss, visits); None: no value
# (no two in one orbit: the position after pd is symmetric about the line through pd and dp)
JUDGED = {"dp": (0.0, 400), "dd": (2.0, 400), "cq": (3.0, 50), "cc": None}
YEAR_GAMES = {"2014": ["dd", "dd", "dd", "dp", "cq"], "2018": ["dd", "dp", "dp", "dp", "cc"], "": ["dp"]}


def test_by_year_with_ai_gives_each_years_share_of_mistakes(tmp_path, capsys, monkeypatch):
    from fuseki.book.analysis import katago

    from games import sgf_text

    folder = tmp_path / "games"
    folder.mkdir()
    tails = iter(base.board_points(19)[100:])  # a third move each, so that no two games are one
    for year, replies in YEAR_GAMES.items():
        for n, reply in enumerate(replies):
            moves = [(BLACK, base.sgf_to_point("pd", 19)), (WHITE, base.sgf_to_point(reply, 19)),
                     (BLACK, next(tails))]
            (folder / f"{year or 'none'}-{n}.sgf").write_bytes(sgf_text(19, moves, "a", "b", year, "B+R"))
    location = str(tmp_path / "book.sqlite")
    assert main(["import", str(folder), "--book", location, "--workers", "0"]) == 0
    board = Board(19)
    board.play(BLACK, base.sgf_to_point("pd", 19))
    best = 0.0
    rows = [(base.sgf_to_point(v, 19), visits, 0.5, best - loss, loss, 0.1)
            for v, judged in JUDGED.items() if judged is not None for loss, visits in [judged]]
    with Book.open(location) as book, book.writing() as conn:
        ai_values.create(conn)
        ai_values.put(conn, board.symmetric_keys(WHITE), 19, SETTINGS, (400, 0.5, best), rows)
    monkeypatch.setattr(katago, "find_command", lambda configured=None: None)  # none installed: stored values
    monkeypatch.setenv("FUSEKI_AI_CACHE", str(tmp_path / "no-cache.sqlite"))
    capsys.readouterr()
    assert main(["search", "--moves", "pd", "--book", location, "--by-year", "--ai"]) == 0
    out = capsys.readouterr().out.splitlines()
    start = next(i for i, line in enumerate(out) if line.startswith("AI MISTAKES"))
    mistakes_named = [v for v, j in JUDGED.items() if j is not None and j[0] >= 1.5 and j[1] >= 100]
    unjudged = [v for v, j in JUDGED.items() if j is None or j[1] < 100]
    assert mistakes_named == ["dd"] and out[start].endswith("D16 2.0 (400 visits)")
    table = out[start + 2:]
    expected = []
    for year in sorted((y for y in YEAR_GAMES if y), key=int) + [""]:
        replies = YEAR_GAMES[year]
        bad = sum(r in mistakes_named for r in replies)
        expected.append([year or "no", str(len(replies)), str(bad), f"{100 * bad / len(replies):.1f}%",
                         str(sum(r in unjudged for r in replies))])
    got = [line.replace("no date", "no").split() for line in table[: len(expected)]]
    assert got == expected


def test_the_list_and_the_tables_question_marks_name_the_same_moves(judged_book):
    """The table's marks (``marks`` over a position's next moves, as ``search --ai`` and the page
    draw them) and ``mistakes.find`` are two paths through the book: the same moves."""
    from fuseki.book.analysis.ai import MISTAKE, marks, next_move_values

    location, positions, written = judged_book
    marked = set()
    with Book.open(location, readonly=True) as book:
        stores = AiValueStores(book.db, None, "japanese", 6.5)
        found, _ = mistakes.find(book, stores, 2)
        for key in written:
            board, side = positions[key]["board"], positions[key]["side"]
            nexts = book.next_moves(board, side)
            if nexts.total < 2:
                continue
            values = next_move_values(stores.values(board, side), board, side, nexts.moves, stores.values)
            kinds = marks([m.games for m in nexts.moves], nexts.total, values)
            marked |= {(key, canon(board, side, m.point)) for m, kind in zip(nexts.moves, kinds) if kind == MISTAKE}
    listed = {(m.key, canon(m.board, m.to_move, m.point)) for m in found}
    assert listed == marked and len(listed) >= 3
