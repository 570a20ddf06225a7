"""The real KataGo at tiny visits (slow): deepest-first across stores, ``--visits`` as a minimum,
a forced move's values, loss >= 0, the line (``--pv``) mapped through the 8 orientations, and
``fuseki ai annotate``'s forced moves written to a values file, resumable.

KataGo is the one ``bash .ci/katago`` installed (skipped without it, a failure under
``FUSEKI_REQUIRE_SERVICES=1``); every search is 2 to 8 visits (about one a second here).
"""

from __future__ import annotations

import re

import pytest
from sqlalchemy import create_engine

from fuseki.book.analysis import annotate
from fuseki.book.analysis.ai import AiJudge, AiValueStores
from fuseki.book.analysis.katago import network_name
from fuseki.book.formats.positions import board_after_moves
from fuseki.book.queries import ai_values
from fuseki.book.queries.ai_values import AiSettings
from fuseki.book.storage.store import Book
from fuseki.book.ui.fuseki_command import main
from fuseki.engine.core import base, coords
from fuseki.engine.core.base import BLACK, WHITE
from fuseki.engine.core.board import Board

from services import real_katago_command

PD, DP, DD, PP, QC, CP = (base.sgf_to_point(p, 19) for p in ("pd", "dp", "dd", "pp", "qc", "cp"))


@pytest.fixture
def book(ai_test_book):
    """After B Q16 W D16 (no symmetry): B Q4 in 2 games, B D4 in 1, B C4 in 1 (4 games)."""
    games = [[(BLACK, PD), (WHITE, DD), (BLACK, PP)], [(BLACK, PD), (WHITE, DD), (BLACK, DP)],
             [(BLACK, PD), (WHITE, DD), (BLACK, PP), (WHITE, QC)], [(BLACK, PD), (WHITE, DD), (BLACK, CP)]]
    return ai_test_book(games)


def table_rows(out: str) -> dict[str, list[str]]:
    """vertex -> the words of its lettered row; ``line`` -> the line under it (``--pv``)."""
    rows, last = {}, None
    for line in out.splitlines():
        words = line.split()
        if line[:4] in {f"{c} - " for c in "abcdefgh"}:
            last = words[2]
            rows[last] = words
        elif line.strip().startswith("line:"):
            if last is not None:
                rows[f"{last} line"] = words[1:]
        else:  # an AI row, the footer: its line is not the last lettered row's
            last = None
    return rows


def footer_visits(out: str) -> int:
    return int(re.search(r"komi 6\.5, (\d+) visits", out).group(1))


@pytest.mark.slow
def test_real_the_deepest_row_of_any_store_then_visits_as_a_minimum_and_forced_moves(book, tmp_path, capsys,
                                                                                     real_katago):
    command = real_katago_command()
    network = network_name(command)
    board = board_after_moves(["pd", "dd"], 19)
    side = board.to_move
    cache = create_engine(f"sqlite:///{tmp_path / 'ai-cache.sqlite'}")
    katago = real_katago  # the session's (tests/services.py); the searches below start their own
    with Book.open(book) as games:
        # the book's own table at 2 visits, the cache file at 4: the cache's deeper row must win
        AiJudge(games.db, katago, "japanese", 6.5, 2).values([(board, side)])
        AiJudge(cache, katago, "japanese", 6.5, 4).values([(board, side)])
        stores = AiValueStores(games.db, cache, "japanese", 6.5, network)
        assert stores.values(board).settings.visits == 4
        stores = AiValueStores(cache, games.db, "japanese", 6.5, network)  # whatever the stores' order
        assert stores.values(board).settings.visits == 4
        # an asymmetric position's line read in the 8 orientations: the stored line turned alike
        asym = board_after_moves(["pd", "dd", "qc"], 19)
        AiJudge(cache, katago, "japanese", 6.5, 8).values([(asym, asym.to_move)])  # 8: lines of 2+ moves
    stores = AiValueStores(None, cache, "japanese", 6.5, network)
    first = stores.values(asym)
    assert any(len(m.pv) > 1 for m in first.moves) and all(m.pv[0] == m.point for m in first.moves)
    for turn in range(8):
        turned = Board(19)
        for color in (BLACK, WHITE):
            turned.set_stones(color, [coords.transform_point(turn, p, 19) for p in asym.stones(color)])
        got = stores.values(turned, asym.to_move)
        assert [m.pv for m in got.moves] == [tuple(coords.transform_point(turn, p, 19) for p in m.pv)
                                             for m in first.moves], turn

    # search: the cache's 4 visits, not the book's 2; each human move (25% of the games) that the
    # search did not visit is asked with the move forced, at 4 visits, and stored in the row
    assert main(["search", "--moves", "pd dd", "--book", book, "--ai", "--pv", "--katago", command]) == 0
    shown = capsys.readouterr()
    assert "for this position" not in shown.err
    with cache.connect() as conn:
        row4 = ai_values.get(conn, board.symmetric_keys(side), 19, AiSettings("japanese", 6.5, network, 4))
    assert footer_visits(shown.out) == row4.visits
    rows = table_rows(shown.out)
    for vertex in ("Q4", "D4", "C4"):
        words = rows[vertex]
        assert "no" not in words, shown.out  # every human move has values of its own
        visits, loss = int(words[-1]), float(words[-2].rstrip("*"))
        assert visits >= 1 and loss >= 0 and not words[-2].endswith("*")  # KataGo's values of the move itself
        assert row4.move(base.vertex_to_point(vertex, 19)) is not None
        assert rows[f"{vertex} line"][0] == vertex  # --pv: the line starts with the move

    assert "shallow values" in shown.out and "popular mistake" not in shown.out

    # --visits 8, above the 4 stored: KataGo is asked at 8, stored, shown
    assert main(["search", "--moves", "pd dd", "--book", book, "--ai", "--visits", "8", "--katago", command]) == 0
    shown = capsys.readouterr()
    assert "asking KataGo" in shown.err and "8 visits) for this position" in shown.err
    with cache.connect() as conn:
        row8 = ai_values.get(conn, board.symmetric_keys(side), 19, AiSettings("japanese", 6.5, network, 8))
    assert row8 is not None and footer_visits(shown.out) == row8.visits >= 8 - 1
    # at or under what is stored, no KataGo: the deepest stored answers
    assert main(["search", "--moves", "pd dd", "--book", book, "--ai", "--visits", "3", "--katago", command]) == 0
    shown = capsys.readouterr()
    assert "for this position" not in shown.err and footer_visits(shown.out) == row8.visits
    cache.dispose()


@pytest.mark.slow
def test_real_annotate_forces_the_human_moves_into_a_values_file_and_resumes(book, tmp_path, capsys):
    command = real_katago_command()
    out = tmp_path / "values.sqlite"
    argv = ["ai", "annotate", "--book", book, "--min-games", "4", "--limit", "2", "--visits", "2",
            "--moves-share", "0.01", "--out", str(out), "--katago", command]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "stored in the values file" in err and "asked with the move forced" in err, err
    settings = AiSettings("japanese", 6.5, network_name(command), 2)
    db = create_engine(f"sqlite:///{out}")
    with Book.open(book, readonly=True) as games, db.connect() as conn:
        # the two positions of 4 games chosen (of the empty board, after Q16 and after Q16 D16): every
        # human move there has values of its own, loss >= 0, a line from the move
        chosen = annotate.popular_positions(games, 4, limit=2)
        finder = annotate.BoardFinder(games, [p.key for p in chosen])
        assert len(chosen) == 2
        for p in chosen:
            board, side = finder.find(p.key)
            values = ai_values.get(conn, board.symmetric_keys(side), 19, settings)
            assert values is not None
            for move in games.next_moves(board, side).moves:
                assert values.move(move.point) is not None, (p.key, move.point)
            assert all(m.loss >= 0 and m.pv and m.pv[0] == m.point for m in values.moves)
    db.dispose()
    assert main(argv) == 0  # everything there: nothing asked
    err = capsys.readouterr().err
    assert "0 to ask KataGo" in err and "asking KataGo with each forced" not in err, err
    # the values file reaches a book's file as fuseki ai copy brings the GPU machine's
    assert main(["ai", "copy", str(out), "--into", book]) == 0
    assert "2 added" in capsys.readouterr().err
