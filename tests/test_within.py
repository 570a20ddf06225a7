"""Search within results (book/queries/gamesets.py, book/ui/within_options.py, book/ui/shell_within.py) on a
real book: ``fuseki import`` of the Tygem archive (11,364 games).

Every count within an earlier answer is checked against what the test computes by itself: the
games of each search done plainly (no restriction), intersected in Python, and each of those
games replayed here from its record (``Book.game``) to find its next move in the asked
orientation.  Positions and patterns, within one another, stacked in the shell and back, the
saved file read by another command, and a file of another book refused.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from fuseki.book.analysis.patterns.search import search
from fuseki.book.model.filters import Filters
from fuseki.book.queries.gamesets import GameSet, position_games
from fuseki.book.storage.store import Book
from fuseki.book.ui.reading import parse_moves, pattern_from_board
from fuseki.engine.core import base, coords
from fuseki.engine.core.base import BLACK, WHITE, IllegalMove
from fuseki.engine.core.board import Board

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def fuseki(*args: str) -> subprocess.CompletedProcess:
    """``python -m fuseki ARGS`` as a user runs it."""
    return subprocess.run([sys.executable, "-m", "fuseki", *args], cwd=ROOT, env=ENV, capture_output=True,
                          text=True, timeout=600)


@pytest.fixture(scope="module")
def book_path(month_book) -> str:
    return str(month_book)  # the month, imported once by ``fuseki import`` (conftest)


@pytest.fixture(scope="module")
def book(book_path):
    with Book.open(book_path) as opened:  # not read-only: the first pattern search builds the index
        yield opened


# --- what the test computes by itself -------------------------------------------------------------


def plain_games(book, moves: str, filters: Filters | None = None) -> set[int]:
    """The ids of every game of a plain position search (no restriction), page by page."""
    board = parse_moves(moves, 19)
    found, after = set(), None
    while True:
        page = book.games(board, filters=filters, page_size=100, after=after)
        found |= {row.id for row in page.rows}
        if page.after is None:
            return found
        after = page.after


def stones(board: Board) -> frozenset:
    return frozenset((colour, point) for colour in (BLACK, WHITE) for point in board.stones(colour))


def next_points(book, ids: set[int], asked: Board) -> tuple[Counter, int]:
    """Each game's move after its first visit of ``asked``'s position (any of the 8 orientations,
    the same player to move), in ``asked``'s orientation, replayed here; (points, games that ended there)."""
    size = asked.size
    target = stones(asked)
    found, ended = Counter(), 0
    for game_id in sorted(ids):
        record = book.game(game_id)
        assert not record.setup  # Tygem's games start from the empty board
        board = Board(size)
        for number in range(len(record.moves) + 1):
            mover = record.moves[number][0] if number < len(record.moves) else None
            if len(board.stones(BLACK)) + len(board.stones(WHITE)) == len(target) and (
                    mover in (None, asked.to_move)):
                here = stones(board)
                turns = [s for s in range(8)
                         if frozenset((c, coords.transform_point(s, p, size)) for c, p in here) == target]
                if turns:
                    if mover is None:
                        ended += 1
                    else:
                        found[coords.transform_point(turns[0], record.moves[number][1], size)] += 1
                    break
            if number == len(record.moves):
                raise AssertionError(f"game {game_id} never reached the position")
            try:
                board.play(*record.moves[number])
            except IllegalMove:
                raise AssertionError(f"game {game_id} stops before reaching the position") from None
    return found, ended


def assert_next_moves(found, expected: Counter, ended: int) -> None:
    """``Book.next_moves``' answer against the replayed next points (a row counts its orbit's points)."""
    assert found.total == sum(expected.values()) + ended
    assert found.ended == ended
    assert sum(m.games for m in found.moves) == sum(expected.values())
    for move in found.moves:
        assert move.games == sum(expected[p] for p in set(move.points)), base.point_to_vertex(move.point, 19)


# --- the library -----------------------------------------------------------------------------------


def test_filters_holding_games_stay_hashable_and_select_games():
    one, same, other = GameSet([3, 1, 2, 2]), GameSet([1, 2, 3]), GameSet([1, 2])
    assert one == same and hash(one) == hash(same) and one != other and len(one) == 3
    assert Filters(within=one) == Filters(within=same) and len({Filters(within=one), Filters(within=same)}) == 1
    assert Filters(within=one) != Filters(within=other)
    assert Filters(within=GameSet([])).selects_games() and not Filters().selects_games()
    assert not one.ids.flags.writeable and 2 in one and 4 not in one
    assert (one & GameSet([2, 3, 9])).ids.tolist() == [2, 3]


def test_a_position_within_a_later_position(book):
    # the games of Q16 that went on to Q16 D4 R4 D16 (by any order of moves, in any orientation)
    later = plain_games(book, "Q16 D4 R4 D16")
    board = parse_moves("Q16", 19)
    within = position_games(book, parse_moves("Q16 D4 R4 D16", 19), Filters())
    assert set(within.ids.tolist()) == later
    found = book.next_moves(board, filters=Filters(within=within))
    both = plain_games(book, "Q16") & later
    assert 50 < len(both) <= len(later) and found.total == len(both)
    expected, ended = next_points(book, both, board)
    assert_next_moves(found, expected, ended)
    assert len(found.moves) > 1  # transpositions: White's D4 and D16 both lead there
    page = book.games(board, filters=Filters(within=within), page_size=100)
    assert page.total == len(both) and {row.id for row in page.rows} <= both


def test_a_position_within_a_pattern_and_a_pattern_within_a_position(book):
    corner = pattern_from_board(parse_moves("Q16 R14", 19), "N19:T13", "", False)
    matched = search(book, corner).matches
    board = parse_moves("Q16 D4", 19)
    at_q16_d4 = plain_games(book, "Q16 D4")
    both = at_q16_d4 & set(matched)
    assert 100 < len(both) < min(len(matched), len(at_q16_d4))

    found = book.next_moves(board, filters=Filters(within=GameSet.of(matched)))
    expected, ended = next_points(book, both, board)
    assert_next_moves(found, expected, ended)

    inside = search(book, corner, Filters(within=position_games(book, board, Filters())))
    assert inside.matches == {game: move for game, move in matched.items() if game in both}
    assert inside.total == len(both) == sum(c.games for c in inside.continuations) + inside.tenuki.games


def test_within_and_a_player_filter_intersect(book):
    board = parse_moves("Q16 D4", 19)
    first = book.games(board, page_size=1).rows[0]
    player = first.black
    corner = GameSet.of(search(book, pattern_from_board(parse_moves("Q16 R14", 19), "N19:T13", "", False)).matches)
    filtered = Filters(player=player, within=corner)
    expected = plain_games(book, "Q16 D4", Filters(player=player)) & set(corner.ids.tolist())
    assert book.next_moves(board, filters=filtered).total == len(expected)
    assert book.games(board, filters=filtered).total == len(expected)


# --- the shell: a stack of restrictions, and back ----------------------------------------------------


def test_the_shell_stacks_restrictions_and_goes_back(book):
    import io

    from fuseki.book.ui.shell import BookShell

    shell = BookShell(book, stdout=io.StringIO())

    def run(line: str) -> str:
        shell.stdout.seek(0)
        shell.stdout.truncate()
        shell.onecmd(line)
        return shell.stdout.getvalue()

    def total(text: str) -> int:  # the last "total N games" line
        return int([line for line in text.splitlines() if line.startswith("total ")][-1].split()[1])

    assert "error: within needs an answer" in run("within")
    run("play Q16 D4")
    first = plain_games(book, "Q16 D4")
    assert total(run("search")) == len(first)
    assert f"within {len(first)} games" in run("within") and shell.prompt == f"fuseki (within {len(first)} games)> "
    run("play R4")
    second = first & plain_games(book, "Q16 D4 R4")
    assert total(run("search")) == len(second)
    assert f"page 1 of {-(-len(second) // 20)}, {len(second)} games" in run("games")
    run("within")
    assert shell.prompt == f"fuseki (within {len(second)} games)> "
    run("undo 3")
    run("play Q16 R14")
    corner = set(search(book, pattern_from_board(parse_moves("Q16 R14", 19), "N19:T13", "", False)).matches)
    assert total(run("pattern N19:T13")) == len(second & corner)
    run("within")
    assert shell.prompt == f"fuseki (within {len(second & corner)} games)> "
    assert "position Q16 D4 > position Q16 D4 R4 > pattern of Q16 R14" in shell.within_status()
    run("within back")
    assert shell.prompt == f"fuseki (within {len(second)} games)> "
    run("undo 2")
    run("play Q16 D4 R4")
    assert total(run("search")) == len(second)
    run("within back")
    assert shell.prompt == f"fuseki (within {len(first)} games)> " and total(run("search")) == len(second)
    run("within off")
    assert shell.prompt == "fuseki> " and total(run("search")) == len(plain_games(book, "Q16 D4 R4")) > len(second)
    assert "error: not searching within" in run("within back")
    assert "error: within takes nothing, back or off" in run("within sideways")


# --- the commands: a saved answer, used again, and refused by another book ---------------------------


def cli_total(done: subprocess.CompletedProcess) -> int:
    assert done.returncode == 0, done.stderr
    line = next(line for line in done.stdout.splitlines() if line.startswith("total "))
    return int(line.split()[1])


def test_save_games_then_search_within_them(book_path, book, tmp_path):
    saved = tmp_path / "q16-d4.json"
    done = fuseki("search", "--book", book_path, "--moves", "Q16 D4", "--save-games", str(saved))
    first = plain_games(book, "Q16 D4")
    assert cli_total(done) == len(first) and f"{len(first)} games saved to {saved}" in done.stderr
    body = json.loads(saved.read_text())
    assert set(body["games"]) == first and body["query"] == "position Q16 D4"

    later = first & plain_games(book, "Q16 D4 R4")
    done = fuseki("search", "--book", book_path, "--moves", "Q16 D4 R4", "--within", str(saved))
    assert cli_total(done) == len(later)
    assert cli_total(fuseki("search", "--book", book_path, "--moves", "Q16 D4 R4",
                            "--within-moves", "Q16 D4")) == len(later)
    deeper = later & plain_games(book, "Q16 D4 R4 D16")
    assert cli_total(fuseki("search", "--book", book_path, "--moves", "Q16 D4 R4", "--within", str(saved),
                            "--within-moves", "Q16 D4 R4 D16")) == len(deeper)

    corner = tmp_path / "corner.json"
    done = fuseki("pattern", "--book", book_path, "--moves", "Q16 R14", "--region", "N19:T13",
                  "--within", str(saved), "--save-games", str(corner))
    matched = set(search(book, pattern_from_board(parse_moves("Q16 R14", 19), "N19:T13", "", False)).matches)
    assert cli_total(done) == len(first & matched)
    assert set(json.loads(corner.read_text())["games"]) == first & matched
    assert f"within {len(first)} games ({saved})" in done.stdout


def test_a_file_of_another_book_is_refused(book_path, tmp_path):
    from bookgames import build_book

    small = build_book(tmp_path / "small.sqlite", tmp_path / "sgf")
    mine = tmp_path / "small.json"
    assert fuseki("search", "--book", small, "--moves", "R16", "--save-games", str(mine)).returncode == 0
    done = fuseki("search", "--book", book_path, "--moves", "Q16", "--within", str(mine))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"fuseki search: {mine} was saved from another book" in done.stderr

    theirs = tmp_path / "tygem.json"
    assert fuseki("search", "--book", book_path, "--moves", "Q16", "--save-games", str(theirs)).returncode == 0
    done = fuseki("pattern", "--book", small, "--moves", "R16", "--region", "O19:T14", "--within", str(theirs))
    assert done.returncode == 1 and "was saved from another book" in done.stderr and "Traceback" not in done.stderr

    (tmp_path / "bad.json").write_text("[1, 2]")
    done = fuseki("search", "--book", small, "--within", str(tmp_path / "bad.json"))
    assert done.returncode == 1 and "is not a games file of fuseki" in done.stderr
    done = fuseki("search", "--book", small, "--within-moves", "R16 R16")
    assert done.returncode == 1 and 'fuseki search: --within-moves "R16 R16": move 2' in done.stderr
