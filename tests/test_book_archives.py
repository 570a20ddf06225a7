"""The book built from the real archives (slow): counts, anomalies and answers stay sane.

Skips when ``/work/shared/data`` (next to the repository) is missing.
"""

from __future__ import annotations

import random
import re

import pytest
from sqlalchemy import select

from fuseki.book.analysis.pipeline import batches, importer
from fuseki.book.formats.sgf_reader import SgfError, read_games
from fuseki.book.formats.sources import SourceFile, iter_sources
from fuseki.book.storage import schema
from fuseki.book.storage.store import Book
from fuseki.engine.core import coords
from fuseki.engine.core.base import BLACK
from fuseki.engine.core.board import Board

from conftest import require_shared_file
from replay import as_dict, transformed

pytestmark = pytest.mark.slow
ARCHIVES = ("tygem-2016-07.tgz", "ai-games.tgz")


@pytest.fixture(scope="module")
def archives():
    return [str(p) for p in require_shared_file(*ARCHIVES)]


@pytest.fixture(scope="module")
def records(archives):
    """Every game of the archives, read independently of the importer (fingerprint -> record)."""
    found = {}
    for item in iter_sources(archives):
        if isinstance(item, SourceFile):
            try:
                games = read_games(item.data, item.name)
            except SgfError:
                continue
            for record in games:
                found.setdefault(batches.fingerprint(record), record)
    return found


@pytest.fixture(scope="module")
def built(archives, tmp_path_factory):
    path = tmp_path_factory.mktemp("book") / "archives.sqlite"
    book = Book.open(str(path))
    report = importer.import_paths(book, archives, workers=1)
    yield book, report
    book.close()


def test_every_game_is_stored_once(built, records):
    book, report = built
    assert report.added == len(records) == book.stats().games
    assert report.added > 18_000 and report.duplicates < 100
    assert report.added + report.duplicates == 11_365 + 7_259 - len(report.skipped)
    assert len(report.anomalies) <= 10


def test_each_game_has_exactly_its_positions(built):
    book, _ = built
    with book.db.connect() as conn:
        games = conn.execute(select(schema.games.c.move_count, schema.games.c.anomaly)).all()
    expected = 0
    for move_count, anomaly in games:
        if anomaly is None:
            expected += move_count + 1
        else:
            match = re.match(r"move (\d+) \(. [A-Z]\d+\) is illegal: (occupied|suicide|ko)$", anomaly)
            assert match, anomaly
            expected += int(match.group(1))
    assert book.stats().positions == expected


def test_the_empty_board_counts_games_starting_from_it(built, records):
    book, _ = built
    starting = sum(1 for r in records.values()
                   if r.size == 19 and not r.setup and (not r.moves or r.moves[0][0] == BLACK))
    found = book.next_moves(Board(19))
    assert found.total == starting
    assert sum(m.games for m in found.moves) == found.total - found.ended
    assert found.moves[0].games > found.total // 3  # the 4-4 point, all four corners as one move
    assert len(found.moves[0].points) == 4


def test_real_positions_commute_with_the_symmetries(built, records):
    book, _ = built
    rng = random.Random(3)
    sample = rng.sample([r for r in records.values() if r.size == 19 and not r.setup], 40)
    for record in sample:
        board = Board(19)
        for colour, point in record.moves[: rng.randint(0, 40)]:
            board.play(colour, point)
        base = book.next_moves(board)
        assert base.total >= 1
        assert sum(m.games for m in base.moves) == base.total - base.ended
        for t in range(1, 8):
            image = book.next_moves(transformed(board, t))
            mapped = {frozenset(coords.transform_point(t, p, 19) for p in points): counts
                      for points, counts in as_dict(base).items()}
            assert as_dict(image) == mapped


def test_reimport_adds_nothing(built, archives):
    book, _ = built
    before = book.stats()
    report = importer.import_paths(book, archives[:1], workers=1)
    assert report.added == 0 and report.duplicates == 11_365
    assert (book.stats().games, book.stats().positions) == (before.games, before.positions)
