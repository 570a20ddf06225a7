"""Game records for the tests: the one SGF writer and the one random legal game, and the sets of
games the tests import, each built on them.

- ``sgf_text``: an SGF file from (colour, point) moves and the headers;
- ``random_game``: a random legal game from a seeded generator (an opening in a random
  orientation, then ``random_moves``, the rules core's random legal moves);
- ``write_games``/``import_forty``: the 40 games of the book-query tests (tests/test_store.py);
- ``random_games``/``import_games``: small distinct games sharing a few openings (the AI tests);
  ``menu_games``: distinct games whose positions have popular and rare moves (the mistakes
  tests); both drawn by ``distinct_games``;
- ``generated_games``: games with varied, sometimes malformed headers (the filter tests);
- ``archive_games``: many long games for archives (the import progress and stop tests).

Not a test module: test modules import from here (and from conftest.py), never from each other.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from fuseki.book.analysis.pipeline import importer
from fuseki.book.storage.store import Book
from fuseki.book.ui.fuseki_command import main
from fuseki.engine.core import base, coords
from fuseki.engine.core.base import BLACK, WHITE, opponent
from fuseki.engine.core.board import Board

OPENINGS = [["pd", "dp"], ["pd", "dd"], ["jj"], ["pd", "pp", "dd"], ["pd", "dp", "pp", "dd"], []]
PLAYERS = ["Lee Sedol", "Park Junghwan", "Ke Jie", "Iyama Yuta", "Shin Jinseo", "Gu Li"]


# --- the writer and the generator --------------------------------------------------------

def sgf_text(size, moves, black="Black", white="White", date="2014-05-01", result="B+R",
             setup=(), handicap=0) -> bytes:
    """An SGF file for a game: (colour, point) moves, setup as (colour, point)."""
    head = f"(;GM[1]FF[4]CA[UTF-8]SZ[{size}]KM[6.5]PB[{black}]PW[{white}]DT[{date}]RE[{result}]"
    if handicap:
        head += f"HA[{handicap}]"
    for colour, ident in ((BLACK, "AB"), (WHITE, "AW")):
        points = [p for c, p in setup if c == colour]
        if points:
            head += ident + "".join(f"[{base.point_to_sgf(p, size)}]" for p in points)
    body = "".join(f";{'B' if c == BLACK else 'W'}[{base.point_to_sgf(p, size)}]" for c, p in moves)
    return (head + body + ")\n").encode()


def random_moves(board: Board, colour: int, rng, count: int) -> int:
    """Play ``count`` random legal moves (the rules core's draw) from ``colour`` on; the colour to move after."""
    for _ in range(count):
        point = board.random_move(colour, rng)
        board.play(colour, point)
        colour = opponent(colour)
    return colour


def random_game(rng, size=19, opening=(), length=30):
    """(colour, point) moves: the opening in a random orientation, then random legal play."""
    board = Board(size)
    t = int(rng.integers(8))
    colour = BLACK
    for text in opening:
        board.play(colour, coords.transform_point(t, base.sgf_to_point(text, size), size))
        colour = opponent(colour)
    random_moves(board, colour, rng, length)
    return list(board.moves)


# --- the book-query games (tests/test_store.py and the modules checking the same book) ----

def write_games(folder, count=40, seed=1, size=19, length=30):
    """Write ``count`` generated games as SGF files; returns [(moves, winner, year, black, white)]."""
    rng = np.random.default_rng(seed)
    games = []
    for i in range(count):
        opening = OPENINGS[i % len(OPENINGS)] if size == 19 else ["cc", "gg"][: i % 3]
        moves = random_game(rng, size, opening, length=int(rng.integers(0, length)))
        winner = [BLACK, WHITE, None][i % 3]
        result = {BLACK: "B+R", WHITE: "W+3.5", None: "Void"}[winner]
        year = 2010 + i % 7
        black, white = PLAYERS[i % len(PLAYERS)], PLAYERS[(i * 5 + 1) % len(PLAYERS)]
        path = folder / f"g{size}_{i:03d}.sgf"
        path.write_bytes(sgf_text(size, moves, black, white, f"{year}-03-0{1 + i % 9}", result))
        games.append((moves, winner, year, black, white))
    return games


def import_forty(tmp_path, book_url):
    """(the open book, its games, their folder): ``write_games``' 40 games imported in batches of 7."""
    folder = tmp_path / "games"
    folder.mkdir()
    games = write_games(folder)
    book = Book.open(book_url)
    report = importer.import_paths(book, [str(folder)], workers=0, batch_games=7)
    assert report.added == len({tuple(g[0]) for g in games}), report
    return book, games, folder


# --- the AI tests' games ----------------------------------------------------------------

SHARED_OPENINGS = [["pd", "dp", "pp", "dd"], ["pd", "dd", "pp"], ["dp", "pd"], ["qd", "dc"]]


def distinct_games(count: int, seed: int, points) -> list[list[tuple[int, int]]]:
    """``count`` distinct 19x19 games (the importer keeps one of identical games), colours
    alternating from Black: each game's points are drawn by the generator ``points(rng, board,
    moves)``, which sees the board and the moves as they are played."""
    rng = random.Random(seed)
    games: list[list[tuple[int, int]]] = []
    while len(games) < count:
        board, moves = Board(19), []
        for point in points(rng, board, moves):
            moves.append((board.to_move, point))
            board.play(board.to_move, point)
        if moves not in games:
            games.append(moves)
    return games


def legal_points(board) -> list[int]:
    """The points the player to move may play."""
    return [p for p in base.board_points(19) if board.is_legal(board.to_move, p)]


def random_games(count: int, seed: int = 7) -> list[list[tuple[int, int]]]:
    """Distinct games that share a few openings (1-4 moves), then go on at random (0-3 moves)."""
    def points(rng, board, moves):
        yield from (base.sgf_to_point(sgf, 19) for sgf in rng.choice(SHARED_OPENINGS)[: rng.randint(1, 4)])
        for _ in range(rng.randint(0, 3)):
            yield rng.choice(legal_points(board))

    return distinct_games(count, seed, points)


def menu_games(count: int, seed: int, depth: int = 6) -> list[list[tuple[int, int]]]:
    """Distinct games: ``depth`` moves each from its position's menu of three (drawn 6:3:1, so
    that positions have popular and rare moves), then two random moves."""
    menus: dict[tuple, list[int]] = {}

    def points(rng, board, moves):
        for n in range(depth + 2):
            legal = legal_points(board)
            if n < depth:
                menu = menus.setdefault(tuple(moves), rng.sample(legal, 3))
                yield rng.choices(menu, weights=(6, 3, 1))[0]
            else:
                yield rng.choice(legal)

    return distinct_games(count, seed, points)


def import_games(folder: Path, games, location: str) -> str:
    folder.mkdir()
    for i, moves in enumerate(games):
        (folder / f"{i}.sgf").write_bytes(sgf_text(19, moves, "a", "b", "2016-01-02", "B+R"))
    assert main(["import", str(folder), "--book", location, "--workers", "0"]) == 0
    return location


# --- the filter tests' games: headers as varied (and as broken) as real archives' ---------

EVENTS = ["Meijin League", "19th MEIJIN final", "Kisei", "", "名人戦 本戦", "Friendly"]
RESULTS = ["B+R", "W+Resign", "B+3.5", "W+0.5", "W+T", "B+F", "W+12.5", "B+7", "0", "Void", "?", "W+Offline",
           "b+r", "Draw", "B+Time", "W+2.5"]
RANKS = ["9d", "9D", "9 dan", "3p", "5k", "30k", "1d*", "", "?", "2 kyu", "7d", "1p", "4d"]
KOMIS = ["6.5", "5.5", "7.5", "0", "-6.5", None, "abc", "0.5"]
HANDICAPS = [None, "0", "2", "3", "4", "9", "x"]
NAMES = ["Lee Sedol", "lee changho", "Cho Chikun", "Ke Jie", "Park Junghwan", "Iyama Yuta"]
OPENING_POINTS = ["pd", "dp", "dd", "pp", "qd", "dq", "pc", "cp", "qp", "dc", "pq", "cd"]


def generated_games(count: int = 90, seed: int = 32) -> dict[str, bytes]:
    """SGF games with varied headers; their first two moves from a few opening points."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrs"
    games = {}
    for n in range(count):
        moves = rng.sample(OPENING_POINTS, 2)
        while len(moves) < rng.randint(4, 14):
            point = rng.choice(letters) + rng.choice(letters)
            if point not in moves:
                moves.append(point)
        head = [f"PB[{rng.choice(NAMES)}]PW[{rng.choice(NAMES)}]DT[{rng.randint(2000, 2016)}-0{rng.randint(1, 9)}-11]",
                f"RE[{rng.choice(RESULTS)}]BR[{rng.choice(RANKS)}]WR[{rng.choice(RANKS)}]"]
        event = rng.choice(EVENTS)
        head += [f"EV[{event}]" if event else ""]
        komi, handicap = rng.choice(KOMIS), rng.choice(HANDICAPS)
        head += [f"KM[{komi}]" if komi is not None else "", f"HA[{handicap}]" if handicap is not None else ""]
        body = "".join(f";{'BW'[i % 2]}[{m}]" for i, m in enumerate(moves))
        games[f"gen-{n:03}"] = f"(;GM[1]FF[4]CA[UTF-8]SZ[19]{''.join(head)}{body})".encode()
    return games


# --- many long games for archives ----------------------------------------------------------

LETTERS = "abcdefghijklmnopqrs"


def archive_games(count: int, moves: int = 150, seed: int = 5) -> list[tuple[str, bytes]]:
    """``count`` 19x19 games as (member name, SGF bytes): ``moves`` moves on distinct random points.

    Enough bytes that the reader decompresses an archive of them in several pieces
    (3,000 games are 2.8 MB of SGF), and quick to make (no Board).
    """
    rng = np.random.default_rng(seed)
    games = []
    for i in range(count):
        points = rng.permutation(361)[:moves]
        body = "".join(f";{'BW'[k % 2]}[{LETTERS[p % 19]}{LETTERS[p // 19]}]" for k, p in enumerate(points))
        games.append((f"g/{i:05d}.sgf", f"(;GM[1]FF[4]SZ[19]PB[b{i}]PW[w{i}]RE[B+R]{body})\n".encode()))
    return games
