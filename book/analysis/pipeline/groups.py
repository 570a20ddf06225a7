"""How an import cuts its sources into groups, and who reads the files and archives.

The import's reader (one process: ``book.analysis.pipeline.importer``) walks the paths and deals
groups of sources to the parsers, a group a turn.  Everything it does per game is work no
other process can share, so it reads no file: a game file is dealt by its name, as a
``sources.GameFile``, and the parser that gets it reads it.  It leaves the archives closed
too: an archive of at most
``ARCHIVE_GAMES_A_TURN`` batches' worth is dealt whole, as a ``sources.Archive`` (a path and
a size), and the parser that gets it decompresses it itself (``cut``).  The reader then
does per game only what listing a folder costs, whatever the number of parsers, and the
archives' bytes never go through a pipe.  A bigger archive (one file of a million games)
is read by the reader as before, so that its games are spread over every parser, and so are
all archives where the paths hold fewer than two a parser (``fuseki import month.tgz``): a
parser's turn would be the whole import.

How many games an archive holds is known only once it is read, so the reader guesses from
its size: ``ARCHIVE_BYTES_A_GAME`` until the parsers have read some archives, then the games
a byte the parsers found (``ArchiveGames``, counters the processes share).  For that, and
since a group of archives is a few bytes that no pipe holds back, the reader deals at most
two groups a parser ahead of the groups the parsers have finished (``ArchiveGames.wait``).

Whole archives rarely add up to ``batch_games``, so a group of archives may hold up to
``OVERFILL`` times that: batches near ``batch_games`` on average, not well under it (more
segments, more merges).  A parser cuts what it gets into batches of at most that many files
or ``GROUP_BYTES``, so a batch stays bounded in memory however wrong the guess of an
archive's games is; it marks the last batch of the group (``Batch.ends_group``), and the
writer takes batches from each parser in turn until that mark, so games stay in source order.

``FUSEKI_PARSERS_READ=0`` has the reader read every file and archive (the baseline of
``bench/book.py``).
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import time
from collections.abc import Iterator

from fuseki.book.analysis.pipeline.progress import InputBytes
from fuseki.book.formats.sources import Archive, GameFile, Skipped, SourceFile, iter_sources

PARSERS_READ = os.environ.get("FUSEKI_PARSERS_READ", "1") != "0"
GROUP_BYTES = 32 << 20  # a batch also ends at 32 MB of files (~5.6 M moves, 90 MB of rows): a bound on memory
# A first guess of a game's compressed bytes in an archive, to size groups of archives until the
# parsers have counted some (the Tygem archives hold 360): too low makes smaller batches, too
# high a second batch in a turn.
ARCHIVE_BYTES_A_GAME = 300
# An archive of more batches than this is read by the reader: one parser would make them all
# in a row while the others wait for their turns.
ARCHIVE_GAMES_A_TURN = 2
OVERFILL = 1.25  # a batch's files at most, in batch_games: what a group of archives may hold
# Groups a parser gets over an import, at least, where the corpus is too small for full batches:
# the last group's parse is the import's tail, one parser working while the others wait, so with
# WAVES groups a parser that tail is about 1/WAVES of the import's time.  SMALLEST_BATCH: below it
# a batch's fixed costs (a transaction, a segment, its merges) outweigh the tail it saves.
# bench/scaling.py measures the import at 1...16 parsers with sized and full batches.
WAVES = 4
SMALLEST_BATCH = 2_000

Source = SourceFile | Skipped | Archive | GameFile


class ArchiveGames:
    """The archive bytes and game files the parsers have read, shared by the processes of an
    import (made before the fork); the reader's guess of an archive's games (``guess``)."""

    def __init__(self, context=None):
        self.counts = (context or multiprocessing).Array("q", 3)  # archive bytes, their files, groups cut

    def archive_read(self, size: int, files: int) -> None:
        """An archive of ``size`` bytes was read and held ``files`` game files."""
        with self.counts.get_lock():
            self.counts[0] += size
            self.counts[1] += files

    def group_cut(self) -> None:
        """A parser has cut one more group."""
        with self.counts.get_lock():
            self.counts[2] += 1

    def wait(self, groups: int) -> None:
        """Until the parsers have cut ``groups`` groups."""
        while self.counts[2] < groups:
            time.sleep(0.005)

    def guess(self, archive: Archive) -> int:
        """The games ``archive`` likely holds, going by its size."""
        size, files, _ = self.counts[:]
        return max(1, archive.size * files // size if files else archive.size // ARCHIVE_BYTES_A_GAME)


def sized_batch(paths: list[str], parsers: int, largest: int) -> int:
    """Games a batch for an import of ``paths`` by ``parsers`` processes: ``largest`` where the
    paths hold at least WAVES such batches for each parser, else the games guessed over
    WAVES x ``parsers`` (at least SMALLEST_BATCH).  The guess walks the paths reading nothing
    (an archive's games from its size, ``ARCHIVE_BYTES_A_GAME``; a game file is one game) and
    stops once it has seen enough for full batches."""
    if parsers <= 1:
        return largest  # one parser: its next batch is made while the writer writes
    wanted, guess = WAVES * parsers * largest, 0
    for item in iter_sources(paths, read=False):
        if isinstance(item, Archive):
            guess += max(1, item.size // ARCHIVE_BYTES_A_GAME)
        elif isinstance(item, (GameFile, SourceFile)):
            guess += 1
        if guess >= wanted:
            return largest
    return min(largest, max(SMALLEST_BATCH, guess // (WAVES * parsers)))


def _enough_archives(paths: list[str], wanted: int) -> bool:
    """Whether ``paths`` hold at least ``wanted`` archives (a walk, reading nothing, that stops once they are found)."""
    archives = (item for item in iter_sources(paths, read=False) if isinstance(item, Archive))
    return len(list(itertools.islice(archives, wanted))) == wanted


def _dealt_sources(paths: list[str], batch_games: int, parsers_read: bool, archives_unread: bool,
                   games: ArchiveGames) -> Iterator[Source]:
    """The sources in order: game files as ``GameFile`` and archives small enough for one parser's
    turn as ``Archive`` (if ``archives_unread``), the rest read here; all read if not ``parsers_read``."""
    if not parsers_read:
        yield from iter_sources(paths)
        return
    for item in iter_sources(paths, read=False):
        if isinstance(item, Archive) and (not archives_unread
                                          or games.guess(item) > ARCHIVE_GAMES_A_TURN * batch_games):
            yield from iter_sources([item.name])
        else:
            yield item


def groups(paths: list[str], batch_games: int, meter: InputBytes | None, parsers_read: bool | None = None,
           games: ArchiveGames | None = None, parsers: int = 1) -> Iterator[tuple[list[Source], int]]:
    """The sources in source order, in groups (a parser's turn each), with the bytes of the
    input read once the group was cut (``meter.position``; 0 without a meter).

    A group ends at ``batch_games`` files (a file is usually one game; an archive counts
    the games ``games`` guesses) or GROUP_BYTES of them; the first groups are smaller (an
    eighth of ``batch_games``, doubling), so the writer starts after a few hundred games
    instead of a whole batch.  An archive that would take a group over ``OVERFILL`` times that
    starts the next one.
    Skipped sources travel in their group, so they are reported in order.
    ``parsers_read``: deal files and archives unread (default ``PARSERS_READ``): archives
    only where the paths hold at least two for each of the ``parsers``.
    """
    parsers_read = PARSERS_READ if parsers_read is None else parsers_read
    archives_unread = parsers_read and _enough_archives(paths, 2 * max(1, parsers))
    games = ArchiveGames() if games is None else games
    group: list[Source] = []
    files = held = 0
    target = max(1, batch_games // 8)
    for item in _dealt_sources(paths, batch_games, parsers_read, archives_unread, games):
        if isinstance(item, Archive):
            guess = games.guess(item)
            if files and files + guess > OVERFILL * target:
                yield group, meter.position(group[-1].name) if meter else 0
                group, files, held = [], 0, 0
                target = min(batch_games, 2 * target)
            files += guess
        elif isinstance(item, SourceFile):
            files += 1
            held += len(item.data)
        elif isinstance(item, (GameFile, Skipped)):
            files += 1  # a GameFile's bytes are the parser's to hold (``cut`` bounds them); a Skipped: a note
        group.append(item)
        if files >= target or held >= GROUP_BYTES:
            yield group, meter.position(item.name) if meter else 0
            group, files, held = [], 0, 0
            target = min(batch_games, 2 * target)
    if group:
        yield group, meter.total if meter else 0  # the sources are all read


def cut(group: list[Source], read: int, batch_games: int,
        games: ArchiveGames | None = None) -> Iterator[tuple[list[SourceFile | Skipped], int, bool]]:
    """A group's sources, files and archives read, in batches: (sources, bytes read, whether it is the last).

    A batch ends at ``OVERFILL * batch_games`` files or GROUP_BYTES.  Its bytes read are the group's
    ``read`` less the archives of the group not yet read to their end; the last batch has
    ``read``.  A group always gives at least one batch (maybe empty: its turn must be taken).
    ``games`` learns what each archive held.
    """
    unread = sum(item.size for item in group if isinstance(item, Archive))
    most = int(OVERFILL * batch_games)
    batch: list[SourceFile | Skipped] = []
    files = held = 0
    for item in group:
        in_item = 0  # game files read from it
        for source in iter_sources([item.name]) if isinstance(item, (Archive, GameFile)) else (item,):
            if files >= most or held >= GROUP_BYTES:
                yield batch, max(0, read - unread), False
                batch, files, held = [], 0, 0
            batch.append(source)
            files += 1  # a Skipped too: a batch's notes are bounded with its files
            if isinstance(source, SourceFile):
                in_item += 1
                held += len(source.data)
        if isinstance(item, Archive):
            unread -= item.size
            if games is not None:
                games.archive_read(item.size, in_item)
    if games is not None:
        games.group_cut()
    yield batch, read, True
