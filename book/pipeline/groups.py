"""How an import cuts its sources into groups, and who reads the archives.

The import's reader (one process: ``book.pipeline.importer``) walks the paths and deals
groups of sources to the parsers, a group a turn.  Everything it does per game is work no
other process can share, so it leaves the archives closed: an archive of at most
``ARCHIVE_GAMES_A_TURN`` batches' worth is dealt whole, as a ``sources.Archive`` (a path and
a size), and the parser that gets it decompresses it itself (``cut``).  The reader then
does per game only what listing a folder costs, whatever the number of parsers, and the
archives' bytes never go through a pipe.  A bigger archive (one file of a million games)
is read by the reader as before, so that its games are spread over every parser.

A parser cuts what it gets into batches of at most ``batch_games`` files or
``GROUP_BYTES``, so a batch stays bounded in memory however wrong a guess of an archive's
games is; it marks the last batch of the group (``Batch.ends_group``), and the writer takes
batches from each parser in turn until that mark, so games stay in source order.

``FUSEKI_PARSERS_READ_ARCHIVES=0`` has the reader open every archive (the baseline of
``bench/book.py``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from fuseki.book.formats.sources import Archive, Skipped, SourceFile, iter_sources
from fuseki.book.pipeline.progress import InputBytes

PARSERS_READ_ARCHIVES = os.environ.get("FUSEKI_PARSERS_READ_ARCHIVES", "1") != "0"
GROUP_BYTES = 32 << 20  # a batch also ends at 32 MB of files (~5.6 M moves, 90 MB of rows): a bound on memory
# A guess of a game's compressed bytes in an archive, to size groups of archives (the Tygem
# archives hold 360; a guess too low makes smaller batches, too high a second batch per turn).
ARCHIVE_BYTES_A_GAME = 300
# An archive of more batches than this is read by the reader: one parser would make them all
# in a row while the others wait for their turns.
ARCHIVE_GAMES_A_TURN = 2

Source = SourceFile | Skipped | Archive


def archive_games(archive: Archive) -> int:
    """A guess of the games in ``archive`` from its size."""
    return max(1, archive.size // ARCHIVE_BYTES_A_GAME)


def _dealt_sources(paths: list[str], batch_games: int, parsers_read: bool) -> Iterator[Source]:
    """The sources in order: archives small enough for one parser's turn as ``Archive``, the rest read."""
    if not parsers_read:
        yield from iter_sources(paths)
        return
    for item in iter_sources(paths, open_archives=False):
        if isinstance(item, Archive) and archive_games(item) > ARCHIVE_GAMES_A_TURN * batch_games:
            yield from iter_sources([item.name])
        else:
            yield item


def groups(paths: list[str], batch_games: int, meter: InputBytes | None,
           parsers_read: bool | None = None) -> Iterator[tuple[list[Source], int]]:
    """The sources in source order, in groups (a parser's turn each), with the bytes of the
    input read once the group was cut (``meter.position``; 0 without a meter).

    A group ends at ``batch_games`` files (a file is usually one game; an archive counts
    the games its size suggests) or GROUP_BYTES of them; the first groups are smaller (an
    eighth of ``batch_games``, doubling), so the writer starts after a few hundred games
    instead of a whole batch.  An archive that would overfill a group starts the next one.
    Skipped sources travel in their group, so they are reported in order.
    ``parsers_read``: deal archives unread (default ``PARSERS_READ_ARCHIVES``).
    """
    parsers_read = PARSERS_READ_ARCHIVES if parsers_read is None else parsers_read
    group: list[Source] = []
    files = held = 0
    target = max(1, batch_games // 8)
    for item in _dealt_sources(paths, batch_games, parsers_read):
        if isinstance(item, Archive):
            games = archive_games(item)
            if files and files + games > target:
                yield group, meter.position(group[-1].name) if meter else 0
                group, files, held = [], 0, 0
                target = min(batch_games, 2 * target)
            files += games
        elif isinstance(item, SourceFile):
            files += 1
            held += len(item.data)
        group.append(item)
        if files >= target or held >= GROUP_BYTES:
            yield group, meter.position(item.name) if meter else 0
            group, files, held = [], 0, 0
            target = min(batch_games, 2 * target)
    if group:
        yield group, meter.total if meter else 0  # the sources are all read


def cut(group: list[Source], read: int, batch_games: int) -> Iterator[tuple[list[SourceFile | Skipped], int, bool]]:
    """A group's sources, archives read, in batches: (sources, bytes read, whether it is the last).

    A batch ends at ``batch_games`` files or GROUP_BYTES.  Its bytes read are the group's
    ``read`` less the archives of the group not yet read to their end; the last batch has
    ``read``.  A group always gives at least one batch (maybe empty: its turn must be taken).
    """
    unread = sum(item.size for item in group if isinstance(item, Archive))
    batch: list[SourceFile | Skipped] = []
    files = held = 0
    for item in group:
        for source in iter_sources([item.name]) if isinstance(item, Archive) else (item,):
            if files >= batch_games or held >= GROUP_BYTES:
                yield batch, max(0, read - unread), False
                batch, files, held = [], 0, 0
            batch.append(source)
            if isinstance(source, SourceFile):
                files += 1
                held += len(source.data)
        if isinstance(item, Archive):
            unread -= item.size
    yield batch, read, True
