"""Files and archives read by the parsers (``book.analysis.pipeline.groups``): the same book as read by the reader."""

from __future__ import annotations

import os

import pytest

from fuseki.book.analysis.pipeline import groups, importer
from fuseki.book.formats.sources import Archive, GameFile, SourceFile, iter_sources
from fuseki.book.storage.store import Book

from archives import make_tar, make_zip
from bookrows import ids, next_stats_rows, rows
from games import write_games


def corpus(tmp_path):
    """Archives of several sizes, a zip, a damaged archive, loose files (one broken) and junk, in one folder.

    Returns (folder, the archives' names by size class)."""
    made = tmp_path / "made"
    made.mkdir()
    write_games(made, count=70, seed=11)
    games = sorted(made.iterdir())
    data = {path.name: path.read_bytes() for path in games}
    names = list(data)
    folder = tmp_path / "collection"
    (folder / "loose").mkdir(parents=True)
    make_tar(folder / "a-small.tgz", {n: data[n] for n in names[:3]} | {"kifu.index": b"not a game"})
    make_tar(folder / "b-medium.tar.gz", {f"month/{n}": data[n] for n in names[3:15]} | {"bad.sgf": b"(;SZ[19];B[pd]"})
    make_tar(folder / "c-big.tgz", {n: data[n] for n in names[15:45]})  # read by the reader (see below)
    make_zip(folder / "d.zip", {n: data[n] for n in names[45:52]})
    make_tar(folder / "e-copies.tgz", {f"again-{n}": data[n] for n in names[2:6]})  # duplicates of earlier games
    whole = (folder / "c-big.tgz").read_bytes()
    (folder / "f-truncated.tgz").write_bytes(whole[: len(whole) // 2])
    for n in names[52:]:
        (folder / "loose" / n).write_bytes(data[n])
    (folder / "loose" / "zz-broken.sgf").write_bytes(b"(;SZ[19];B[pd]")
    sizes = {path.name: path.stat().st_size for path in folder.iterdir() if path.is_file()}
    return folder, sizes


@pytest.fixture
def small_archives(monkeypatch):
    """Archive game guesses made for the test's archives: 100 bytes a game (generated games compress to ~70)."""
    monkeypatch.setattr(groups, "ARCHIVE_BYTES_A_GAME", 100)


def test_the_reader_deals_small_archives_unread_and_reads_big_ones(tmp_path, small_archives):
    folder, sizes = corpus(tmp_path)
    batch_games = 8
    assert sizes["c-big.tgz"] // 100 > groups.ARCHIVE_GAMES_A_TURN * batch_games >= sizes["d.zip"] // 100
    dealt = [item for group, _ in groups.groups([str(folder)], batch_games, None) for item in group]
    archives = [os.path.basename(item.name) for item in dealt if isinstance(item, Archive)]
    assert archives == ["a-small.tgz", "b-medium.tar.gz", "d.zip", "e-copies.tgz", "f-truncated.tgz"]
    assert any(isinstance(item, SourceFile) and item.name.startswith(str(folder / "c-big.tgz:")) for item in dealt)
    loose = [item for item in dealt if item.name.startswith(str(folder / "loose"))]
    assert len(loose) == 19 and all(isinstance(item, GameFile) for item in loose)  # dealt by name
    # fewer archives than two a parser: all read by the reader, or one parser would do the import
    for paths, parsers in (([str(folder / "a-small.tgz")], 1), ([str(folder)], 3), ([str(folder)], 4)):
        dealt = [item for group, _ in groups.groups(paths, batch_games, None, parsers=parsers) for item in group]
        assert any(isinstance(item, Archive) for item in dealt) == (parsers == 3), (paths, parsers)
    # expanded, the groups give exactly what reading everything in place gives, in order
    expanded = [source for group, read in groups.groups([str(folder)], batch_games, None)
                for batch, _, _ in groups.cut(group, read, batch_games) for source in batch]
    assert expanded == list(iter_sources([str(folder)]))


def test_a_group_is_cut_into_bounded_batches_with_reads_that_never_go_back(tmp_path, small_archives):
    folder, sizes = corpus(tmp_path)
    group = [Archive(str(folder / name), sizes[name]) for name in ("b-medium.tar.gz", "a-small.tgz")]
    read = 10_000_000
    learnt = groups.ArchiveGames()
    assert learnt.guess(group[0]) == sizes["b-medium.tar.gz"] // groups.ARCHIVE_BYTES_A_GAME  # the first guess
    cut = list(groups.cut(group, read, 4, learnt))  # batches of at most 5 files (OVERFILL)
    files = [[s for s in batch if isinstance(s, SourceFile)] for batch, _, _ in cut]
    assert [len(f) for f in files] == [5, 5, 5, 1]  # 13 SGF files (one broken) + 3
    assert [last for _, _, last in cut] == [False, False, False, True]
    reads = [r for _, r, _ in cut]
    assert reads == sorted(reads) and reads[-1] == read
    assert reads[0] == read - sizes["b-medium.tar.gz"] - sizes["a-small.tgz"]  # inside the first archive
    assert reads[2] == read - sizes["a-small.tgz"]  # b read to its end, a not yet
    assert list(groups.cut([], 5, 8)) == [([], 5, True)]  # an empty group still takes its turn
    # what the archives held, for the reader's next guesses: 16 game files in both archives' bytes
    both = sizes["b-medium.tar.gz"] + sizes["a-small.tgz"]
    assert learnt.counts[:] == [both, 16, 1]  # and one group cut
    assert learnt.guess(Archive("x.tgz", both * 10)) == 160


class Reads:
    """A progress that keeps what the import says it read."""

    def start(self, total):
        self.total, self.reads = total, []

    def update(self, report, read, force=False):
        self.reads.append(read)

    def merging(self, segments, rows):
        pass

    def done(self):
        pass


@pytest.mark.parametrize("files", [True, False], ids=["segment-files", "book-tables"])
def test_archives_read_by_the_parsers_give_the_same_book(tmp_path, small_archives, monkeypatch, files):
    from fuseki.book.storage.position_index import segment_files

    monkeypatch.setattr(segment_files, "ENABLED", files)
    folder, _ = corpus(tmp_path)
    made = {}
    for name, parsers_read, workers in [("reader", False, 0), ("parsers0", True, 0), ("parsers2", True, 2),
                                        ("reader2", False, 2), ("parsers3", True, 3)]:
        monkeypatch.setattr(groups, "PARSERS_READ", parsers_read)
        book = Book.open(str(tmp_path / f"{name}.sqlite"))
        progress = Reads()
        report = importer.import_paths(book, [str(folder)], workers=workers, batch_games=8, progress=progress)
        assert progress.reads == sorted(progress.reads) and progress.reads[-1] == progress.total
        made[name] = (book, report)
    base, base_report = made["reader"]
    # 70 games (one broken file is skipped); copies: 4 in e-copies, what the truncated copy of c-big holds
    assert base_report.added == 70 and 4 < base_report.duplicates < 4 + 30
    skipped = [os.path.basename(note.path) for note in base_report.skipped]
    assert skipped == ["b-medium.tar.gz", "f-truncated.tgz", "zz-broken.sgf"]
    for name, (book, report) in made.items():
        assert (report.added, report.duplicates, report.positions, report.skipped) == \
            (base_report.added, base_report.duplicates, base_report.positions, base_report.skipped), name
        assert [source for _, source in ids(book)] == [source for _, source in ids(base)], name  # source order
        assert rows(book) == rows(base), name
        if files:
            assert next_stats_rows(book) == next_stats_rows(base), name
    for book, _ in made.values():
        book.close()


def test_batches_are_sized_to_the_corpus_and_the_parsers(tmp_path, small_archives, monkeypatch):
    """``sized_batch``: full batches where the paths hold WAVES of them for each parser, else the
    games guessed (archives by their size, a game file one game) over WAVES x parsers, never
    under SMALLEST_BATCH; one parser always gets full batches."""
    folder, sizes = corpus(tmp_path)
    paths = [str(folder)]
    # the slow guess: every archive's bytes over ARCHIVE_BYTES_A_GAME, every loose SGF file one game
    archives = [name for name in sizes if name.endswith((".tgz", ".tar.gz", ".zip"))]
    guess = sum(max(1, sizes[name] // 100) for name in archives) + len(list((folder / "loose").iterdir()))
    monkeypatch.setattr(groups, "SMALLEST_BATCH", 1)
    for parsers in (2, 3, 8):
        share = guess // (groups.WAVES * parsers)
        assert groups.sized_batch(paths, parsers, 10_000) == max(1, share)
        assert groups.sized_batch(paths, parsers, share) == share  # WAVES full batches a parser: full batches
    assert groups.sized_batch(paths, 1, 10_000) == 10_000
    monkeypatch.setattr(groups, "SMALLEST_BATCH", 50)
    assert groups.sized_batch(paths, 8, 10_000) == 50
    assert groups.sized_batch(paths, 8, 30) == 30  # never over the largest


def test_an_import_with_sized_batches_gives_every_parser_groups(tmp_path, small_archives, monkeypatch):
    """``import_paths`` with no ``batch_games`` on a small corpus: more batches than parsers (each
    parser has work), and the same book as one process with full batches."""
    folder, _ = corpus(tmp_path)
    monkeypatch.setattr(groups, "SMALLEST_BATCH", 1)
    counted = []

    class Count:
        def start(self, total):
            pass

        def update(self, report, read, force=False):
            counted.append(report.added)

        def done(self):
            pass

    with Book.open(str(tmp_path / "one.sqlite")) as one, Book.open(str(tmp_path / "sized.sqlite")) as sized:
        importer.import_paths(one, [str(folder)], workers=0, batch_games=10_000)
        importer.import_paths(sized, [str(folder)], workers=3, progress=Count())
        assert len(counted) > 3 * groups.WAVES // 2  # batches written, the last update at the end included
        assert ids(sized) == ids(one) and rows(sized) == rows(one)  # the statistics follow the segments: not compared
