"""A book whose path holds ``#``, ``?``, ``%``, ``&``, spaces and an accent: the import writes that
file and its folders (not a file cut short at the ``#`` or the ``?``), merges its segment files,
and a read-only open, the command line's search and a statistics book read it, with the same
answers as the same games in a book at a plain path."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

from fuseki.book.analysis.pipeline import importer
from fuseki.book.storage.position_index import segment_files, segments
from fuseki.book.storage.store import Book
from fuseki.engine.core.base import BLACK, WHITE, vertex_to_point
from fuseki.engine.core.board import Board

from bookrows import answers, as_dict
from games import write_games
from replay import board_after, sample_positions

ROOT = Path(__file__).resolve().parent.parent

ODD = "odd #dir?x%20y & ü"


def test_a_book_at_an_odd_path_is_that_file_and_answers_as_one_at_a_plain_path(tmp_path, monkeypatch):
    monkeypatch.setattr(segments, "FANOUT", 2)  # segment files merge, in a process of their own (workers=1)
    folder = tmp_path / "games"
    folder.mkdir()
    games = write_games(folder, count=40, seed=5)
    plain, odd = tmp_path / "plain" / "book.sqlite", tmp_path / ODD / "book.sqlite"
    for path in (plain, odd):
        path.parent.mkdir()
        with Book.open(str(path)) as book:
            importer.import_paths(book, [str(folder)], workers=1, batch_games=6)
            with book.db.connect() as conn:
                assert segment_files.in_files(conn) and any(s.level > 0 for s in segments.live(conn))  # merged
    assert sorted(os.listdir(tmp_path)) == sorted(["games", "plain", ODD])  # nothing beside, under a cut name
    assert sorted(os.listdir(odd.parent)) == sorted(os.listdir(plain.parent))
    boards = sample_positions(games, np.random.default_rng(5))
    with Book.open(str(plain), readonly=True) as at_plain, Book.open(str(odd), readonly=True) as at_odd:
        assert answers(at_odd, boards) == answers(at_plain, boards)

    def search(path):
        run = subprocess.run([sys.executable, "-m", "fuseki", "search", "--book", str(path), "--moves", "Q16"],
                             cwd=ROOT.parent, capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr
        return run.stdout

    assert search(odd) == search(plain)


def test_a_statistics_book_at_an_odd_path_opens_and_answers_as_at_its_own(tmp_path):
    """The built-in book (a statistics book: ``statistics_book.open_index``) copied under the odd name."""
    builtin = ROOT / "book" / "data" / "builtin.sqlite"
    (tmp_path / ODD).mkdir()
    copy = tmp_path / ODD / "builtin.sqlite"
    shutil.copyfile(builtin, copy)
    q16, d4 = vertex_to_point("Q16", 19), vertex_to_point("D4", 19)
    boards = [Board(19), board_after([(BLACK, q16)]), board_after([(BLACK, q16), (WHITE, d4)])]
    with Book.open(str(builtin), readonly=True) as there, Book.open(str(copy), readonly=True) as here:
        assert [as_dict(here.next_moves(b)) for b in boards] == [as_dict(there.next_moves(b)) for b in boards]
        assert here.next_moves(Board(19)).total > 0
