"""``fuseki import --report FILE``: every skipped file and anomaly as a JSON line, through the real
command on a real archive, and the moves-per-game limit (``book.model.records.move_limit``)."""

from __future__ import annotations

import json
from contextlib import contextmanager

import pytest

from fuseki.book.storage.store import Book
from fuseki.book.ui import cli_shared
from fuseki.book.ui.commands import import_command
from fuseki.book.ui.fuseki_command import main
from fuseki.engine.core import base
from fuseki.engine.core.base import BLACK, WHITE, move_limit

from conftest import write_archive
from games import sgf_text

PD, DD = base.sgf_to_point("pd", 19), base.sgf_to_point("dd", 19)
LONG = move_limit(9) + 500  # 824 moves of a 9x9 game: 500 past its limit of 324


def long_game(moves: int) -> bytes:
    """A 9x9 game of ``moves`` moves: the corners, then passes (every move legal)."""
    corners = [base.sgf_to_point(p, 9) for p in ("cc", "gg", "cg", "gc")]
    return sgf_text(9, [(BLACK if i % 2 == 0 else WHITE, corners[i] if i < 4 else base.PASS)
                        for i in range(moves)])


@pytest.fixture
def inputs(tmp_path):
    """(paths to import, archive path): a .tgz of good, broken, non-SGF, illegal and long games, and a .txt."""
    archive = write_archive(tmp_path / "games.tgz", [
        ("g/a-ok.sgf", sgf_text(19, [(BLACK, PD)])),
        ("g/b-broken.sgf", b"(;GM[1]SZ[19];B[pd];W["),
        ("g/c-not-sgf.sgf", b"hello, not a game record"),
        ("g/d-illegal.sgf", sgf_text(19, [(BLACK, PD), (WHITE, DD), (BLACK, DD)])),
        ("g/e-long.sgf", long_game(LONG)),
    ])
    (tmp_path / "readme.txt").write_text("not a game")
    return [str(archive), str(tmp_path / "readme.txt")], str(archive)


def read_lines(path) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


@pytest.mark.parametrize("workers", ["0", "1"])
def test_the_report_file_lists_each_skipped_file_and_anomaly_with_its_fields(tmp_path, inputs, workers, capsys):
    paths, archive = inputs
    report = tmp_path / "report.jsonl"
    book_path = str(tmp_path / "book.sqlite")
    assert main(["import", *paths, "--book", book_path, "--workers", workers, "--report", str(report)]) == 0
    lines = read_lines(report)
    assert all(list(line) == ["path", "member", "game", "move", "reason", "kind"] for line in lines)
    skipped = {(line["path"], line["member"]): line for line in lines if line["kind"] == "skipped"}
    assert set(skipped) == {(archive, "g/b-broken.sgf"), (archive, "g/c-not-sgf.sgf"), (paths[1], None)}
    assert all(line["game"] is None and line["move"] is None for line in skipped.values())
    assert "cannot parse SGF" in skipped[archive, "g/b-broken.sgf"]["reason"]
    assert skipped[archive, "g/c-not-sgf.sgf"]["reason"] == "no SGF data found"
    assert skipped[paths[1], None]["reason"].startswith("not an SGF file")
    anomalies = {line["member"]: line for line in lines if line["kind"] == "anomaly"}
    assert set(anomalies) == {"g/d-illegal.sgf", "g/e-long.sgf"}
    illegal, long = anomalies["g/d-illegal.sgf"], anomalies["g/e-long.sgf"]
    assert (illegal["path"], illegal["move"]) == (archive, 3)
    assert illegal["reason"] == "move 3 (B D16) is illegal: occupied"
    assert (long["path"], long["move"]) == (archive, move_limit(9) + 1)  # the first move not kept
    assert long["reason"] == (f"game has {LONG} moves; kept the first {move_limit(9)} "
                              "(limit: 4 \u00d7 the board's points)")
    with Book.open(book_path, readonly=True) as book:
        assert book.game(illegal["game"]).source == f"{archive}:g/d-illegal.sgf"
        assert book.game(long["game"]).source == f"{archive}:g/e-long.sgf"
        assert book.stats().games == 3
    err = capsys.readouterr().err
    assert "3 files skipped" in err and "2 anomalies" in err
    assert f"every skipped file and anomaly is listed in {report}" in err


def test_a_game_past_the_move_limit_is_stored_up_to_the_limit(tmp_path):
    (tmp_path / "long.sgf").write_bytes(long_game(LONG))
    book_path = str(tmp_path / "book.sqlite")
    assert main(["import", str(tmp_path / "long.sgf"), "--book", book_path, "--workers", "0"]) == 0
    with Book.open(book_path, readonly=True) as book:
        [game_id] = book.game_ids()
        stored = book.game(game_id)
        assert len(stored.moves) == move_limit(9) and stored.cut_from is None  # the stored SGF ends there
        assert stored.moves == read_back_moves(long_game(move_limit(9)))
        assert book.game_sgf(game_id).count(b";") == 1 + move_limit(9)  # the root, then one node a move
        assert book.stats().positions == move_limit(9) + 1  # the empty board, then after each move kept
        with book.db.connect() as conn:
            move_count, anomaly = conn.exec_driver_sql("SELECT move_count, anomaly FROM games").one()
    assert move_count == move_limit(9) and anomaly.startswith(f"game has {LONG} moves; kept the first 324")


def read_back_moves(data: bytes):
    from fuseki.book.formats.sgf_reader import read_games

    return list(read_games(data, "x")[0].moves)


def test_a_stopped_import_leaves_the_report_of_what_it_saw(tmp_path, monkeypatch):
    games = [(f"g/ok{i}.sgf", sgf_text(19, [(BLACK, PD), (WHITE, base.sgf_to_point(p, 19))]))
             for i, p in enumerate(["dd", "dp", "pp", "qd", "cc", "oo"])]
    illegal = sgf_text(19, [(BLACK, PD), (WHITE, PD)])
    archive = str(write_archive(tmp_path / "games.tgz", [("g/a-broken.sgf", b"(;GM[1]SZ[19];B[pd];W["), *games,
                                                         ("g/z-illegal.sgf", illegal)]))
    report = tmp_path / "report.jsonl"
    real = cli_shared.stop_on_signals

    def asked_to_stop():  # as if Ctrl-C came while the first batch was written
        context = real()
        stop = context.__enter__()
        stop.signum = 2
        stop.set()
        try:
            yield stop
        finally:
            context.__exit__(None, None, None)

    monkeypatch.setattr(import_command, "stop_on_signals", contextmanager(asked_to_stop))
    monkeypatch.setattr("fuseki.book.analysis.pipeline.importer.BATCH_GAMES", 2)
    code = main(["import", archive, "--book", str(tmp_path / "book.sqlite"), "--workers", "0",
                 "--report", str(report)])
    assert code == 130
    [line] = read_lines(report)  # the first batch's broken file, not the last batch's anomaly
    assert line == {"path": archive, "member": "g/a-broken.sgf", "game": None, "move": None,
                    "reason": line["reason"], "kind": "skipped"}
    assert line["reason"].startswith("cannot parse SGF")


def test_a_report_that_cannot_be_written_stops_before_the_book(tmp_path, inputs, capsys):
    paths, _ = inputs
    code = main(["import", *paths, "--book", str(tmp_path / "book.sqlite"),
                 "--report", str(tmp_path / "no-folder" / "r.jsonl")])
    assert code == 2 and "cannot write the report" in capsys.readouterr().err
    assert not (tmp_path / "book.sqlite").exists()
