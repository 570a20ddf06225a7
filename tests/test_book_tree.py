"""``fuseki book tree`` (book.analysis.tree, book.ui.commands.book_command) read back with sgfmill, an SGF library
independent of our writer, and checked node by node against the book.

Each node's children must be exactly the moves ``Book.next_moves`` lists for the replayed
position with at least N games (less those illegal on the board: a ko), most played first,
their counts in the comments and their letters (LB) on the parent; no node deeper than the
depth; the corner variant against ``corners.of_book`` in the top-right corner; the file plain
UTF-8 with ``]`` and ``\\`` escaped in comments; the --max-nodes cap said where it cut.
"""

from __future__ import annotations

import re

import pytest
from sgfmill import sgf

from fuseki.book.analysis.patterns import corner_build, corners
from fuseki.book.analysis.pipeline import importer
from fuseki.book.model.filters import Filters
from fuseki.book.storage.store import Book
from fuseki.book.ui.fuseki_command import main
from fuseki.book.ui.present.textboard import LETTERS
from fuseki.engine.core import base
from fuseki.engine.core.base import BLACK, WHITE
from fuseki.engine.core.board import Board

from bookgames import KO_OTHER, build_book
from cornercount import make_games
from games import write_games

COUNT = re.compile(r"^(Black|White) ([A-T]\d+)(?: or its (\d+) symmetric points?)?: "
                   r"(?:(\d+) games?|played (\d+) times), \1 won (\d+\.\d)%", re.M)


@pytest.fixture(scope="module")
def small_book(tmp_path_factory) -> str:
    folder = tmp_path_factory.mktemp("tree")
    return build_book(folder / "b]a\\k.sqlite", folder / "sgf")  # a name to escape in the root comment


@pytest.fixture(scope="module")
def games_book(tmp_path_factory) -> str:
    """60 generated games of common openings, and a corner book from joseki-playing games."""
    folder = tmp_path_factory.mktemp("games")
    (folder / "games").mkdir()
    write_games(folder / "games", count=60, seed=3, length=14)
    make_games(folder / "games", 19, 60, seed=7)
    path = str(folder / "games.sqlite")
    with Book.open(path) as book:
        importer.import_paths(book, [str(folder / "games")], workers=0)
        corner_build.update(book, prune=1)
    return path


def write_tree(tmp_path, book: str, *options: str) -> tuple[sgf.Sgf_game, bytes]:
    out = tmp_path / "tree.sgf"
    assert main(["book", "tree", "--book", book, "--out", str(out), *options]) == 0
    data = out.read_bytes()
    data.decode("utf-8")  # plain UTF-8 (the root comment names the book)
    return sgf.Sgf_game.from_bytes(data), data


def point_of(node, size: int) -> tuple[int, int]:
    """(colour, point) of an sgfmill node's move (sgfmill's rows count from the bottom)."""
    colour, where = node.get_move()
    point = base.PASS if where is None else base.xy_to_point(where[1], size - 1 - where[0], size)
    return (BLACK if colour == "b" else WHITE), point


def labels(node, size: int) -> dict[int, str]:
    if not node.has_property("LB"):
        return {}
    return {base.xy_to_point(col, size - 1 - row, size): text for (row, col), text in node.get("LB")}


def check_tree(start_node, board: Board, expected_moves, size: int, min_games: int, depth: int,
               corner: bool = False) -> int:
    """Walk the tree below ``start_node`` (the position of ``board``); returns the nodes seen."""
    seen = 0
    stack = [(start_node, board, 0)]
    while stack:
        node, here, level = stack.pop()
        children = list(node)
        assert level <= depth
        if level == depth:
            assert not children
            continue
        wanted = [m for m in expected_moves(here) if m.games >= min_games
                  and (m.point == base.PASS or here.is_legal(here.to_move, m.point))]
        assert [point_of(c, size) for c in children] == [(here.to_move, m.point) for m in wanted]
        games = [m.games for m in wanted]
        assert games == sorted(games, reverse=True)
        marks = {}
        for letter, move in zip(LETTERS, wanted):
            for p in move.points:
                marks.setdefault(p, letter)
        assert labels(node, size) == marks
        for child, move in zip(children, wanted):
            found = COUNT.search(child.get("C"))
            assert found, child.get("C")
            assert found[2] == base.point_to_vertex(move.point, size)
            assert int(found[4] or found[5]) == move.games
            assert int(found[3] or 0) == len(move.points) - 1
            assert found[6] == f"{100 * move.winrate:.1f}"
            if corner:
                assert all(corners.corner_of_point(p, size) == 1 for p in move.points)
            after = here.copy()
            after.play(here.to_move, move.point)
            stack.append((child, after, level + 1))
            seen += 1
    return seen


def test_every_node_has_the_books_next_moves_of_n_games_most_played_first(games_book, tmp_path):
    game, _ = write_tree(tmp_path, games_book, "--min-games", "2", "--depth", "6")
    with Book.open(games_book, readonly=True) as book:
        def expected(board):
            return book.next_moves(board, filters=Filters(min_games=2)).moves

        seen = check_tree(game.get_root(), Board(19), expected, 19, 2, 6)
    assert seen > 20


def test_from_moves_the_start_is_the_first_nodes_and_the_depth_counts_from_there(small_book, tmp_path):
    game, _ = write_tree(tmp_path, small_book, "--moves", "R16", "--min-games", "1", "--depth", "2")
    start = game.get_root()[0]
    assert point_of(start, 19) == (BLACK, base.vertex_to_point("R16", 19))
    assert "the tree starts here" in start.get("C")
    board = Board(19)
    board.play(BLACK, base.vertex_to_point("R16", 19))
    with Book.open(small_book, readonly=True) as book:
        seen = check_tree(start, board, lambda b: book.next_moves(b).moves, 19, 1, 2)
    assert seen == 3 + 2 + 2  # D4, D16, Q4; after D4: Q3, C16; after D16: C3, C17


def test_a_ko_move_illegal_on_the_board_is_left_out_and_counted(small_book, tmp_path, capsys):
    game, _ = write_tree(tmp_path, small_book, "--size", "7", "--moves", "C6 D6 B5 E5 C4 D4 pass C5 D5",
                         "--min-games", "1", "--depth", "3")
    start = game.get_root()
    for _ in range(9):
        start = start[0]
    assert [point_of(c, 7) for c in start] == [(WHITE, base.vertex_to_point(KO_OTHER, 7))]
    assert "1 book moves illegal on this board (ko) left out" in start.get("C")
    assert "1 book moves illegal on the board left out" in capsys.readouterr().err


def test_the_corner_tree_is_the_corner_books_in_the_top_right_corner(games_book, tmp_path):
    game, _ = write_tree(tmp_path, games_book, "--corner", "--min-games", "2", "--depth", "5")
    with Book.open(games_book, readonly=True) as book:
        def expected(board):
            return corners.of_book(book, board, board.to_move)[1].moves

        seen = check_tree(game.get_root(), Board(19), expected, 19, 2, 5, corner=True)
    assert seen > 5
    assert "tenuki" in game.get_root().get("C")


def test_the_comments_escape_and_sabaki_style_readers_get_them_back(small_book, tmp_path):
    game, data = write_tree(tmp_path, small_book, "--min-games", "1", "--depth", "1")
    assert b"b\\]a\\\\k.sqlite" in data
    assert f"book {small_book}" in game.get_root().get("C")


def test_max_nodes_cuts_and_says_so(games_book, tmp_path, capsys):
    game, _ = write_tree(tmp_path, games_book, "--min-games", "1", "--depth", "8", "--max-nodes", "30")
    assert "cut by --max-nodes 30" in capsys.readouterr().err
    assert "cut at" in game.get_root().get("C")
    nodes, capped, stack = 0, 0, [game.get_root()]
    while stack:
        node = stack.pop()
        capped += "not followed" in (node.get("C") if node.has_property("C") else "")
        stack += list(node)
        nodes += len(node)
    assert 0 < nodes <= 30 and capped


def test_katagos_stored_values_are_in_the_comments_and_katago_is_never_asked(small_book, tmp_path, monkeypatch):
    from aistores import engine_at, put

    cache = tmp_path / "ai-cache.sqlite"
    # the loss is measured against the best move evaluated (book.analysis.ai): the 3-3 point's lead 0.2
    put(engine_at(cache), "", "net-a", 8, root=(9, 0.5, 0.2), candidates=[("cc", 0.52, 0.2, 0.0),
                                                                           ("dd", 0.48, -0.3, 0.5)])
    monkeypatch.setenv("FUSEKI_AI_CACHE", str(cache))
    monkeypatch.setenv("FUSEKI_KATAGO", "/nonexistent/katago")  # asked, it would fail the command
    game, _ = write_tree(tmp_path, small_book, "--min-games", "1", "--depth", "1")
    comments = {base.point_to_vertex(point_of(c, 19)[1], 19): c.get("C") for c in game.get_root()}
    assert "KataGo: 48.0% win for Black, lead -0.3, loss 0.5 points" in comments["D16"]
    assert "KataGo" not in comments["D17"]  # neither searched nor its position stored
