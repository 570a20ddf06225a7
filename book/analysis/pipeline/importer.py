"""Import game records into the book: files, folders and archives -> rows, in batches.

The pipeline (``import_paths``)::

    reader process     iter_sources -> groups of file and archive names, dealt round-robin
                                         |                     |
    N parser processes   files read -> read_games -> replay -> sorted Batch (one or more a group)
                                         |                     |
    this process                 taken in the same rotation -> write_batch -> database

- The reader walks the paths and cuts the sources into groups, one turn of a parser each
  (``book.analysis.pipeline.groups``); it deals game files by name and archives of a batch or two
  closed, for the parser that gets them to read (``book.formats.sources``), and reads only bigger
  archives itself (and every archive where there are fewer than two a parser).
  Each parser cuts a group into batches, reads its SGF (``book.formats.sgf_reader.read_games``,
  fast path first), replays them (the core's ``replay_games``, which
  gives every position's canonical key and the next move in canonical orientation,
  once per group and board size; and ``replay_events`` per game, its pattern-index
  events), compresses the stored SGF, sorts the rows by key and hands them, with the
  batch's games numbered from 0, to the positions index's face for writing
  (``book.storage.position_index.intake``, the only module of the index this pipeline calls),
  which chooses their form: for a SQLite book on disk, a segment file beside the book; for a
  PostgreSQL book, a table of its own, COPYed on the parser's own connection; for a SQLite
  book in memory, the segment's page image the parser sends.  The writer takes the batches in the
  order the groups were dealt, so games are numbered in source order whatever N is, and
  only links them in with their first game id: one row naming the file, or a rename and
  a view over the staged table (an image: it adds that id to the image's codes and hands
  the image to SQLite).  A game that a batch still in another parser's hands also held
  reaches the writer twice: the second is taken out of the file or table
  (``drop_games``), and the ids leave a gap.  Only the reader and the
  writer are one process each, so they do as little per game as they can; each stage's
  CPU time is in the report (``ImportReport.cpu``).  With ``workers=0`` everything runs
  in the calling process (small imports, tests) and gives the same book.
- Each batch is ONE transaction holding its games, their pattern-index rows
  (``book.storage.pattern_events``: the index is complete up to the batch once it commits)
  and all their positions: an interrupted import leaves whole batches only, and a re-run skips what is there
  (the games' ``fingerprint``, blake2b-8 of size, setup and moves, is unique), so it
  completes without duplicates.  Asked to stop (``stop``), it ends between batches; the
  workers die with this process however it ends (``book.analysis.pipeline.workers``).  Every
  worker forks with the book's checkpoint thread ended (``workers.start_forked``): a child of
  a fork has only the forking thread, and a lock the checkpoint thread held inside SQLite at
  that instant would stay held in the child for ever.
- A batch's rows become a new segment of the positions index (``intake.link``): written in
  key order, so a batch costs the same whatever the book's size.  SQLite gets them as a
  database image built page by page and copied by SQLite's whole-table transfer, PostgreSQL
  through ``COPY`` (a parser's, or the writer's where staging is off), any other database
  through SQLAlchemy's portable ``insert()``.  Batches
  take the book's write lock (``Book.writing``), so importers in several processes
  take turns and never read the same ``max(id)`` or miss each other's fingerprints.
  A SQLite book copies its write-ahead log back into the file on a thread of its own
  (``book.storage.wal``), not in the writer's commits.
- Where the CPU goes (``bench/book.py`` prints it for each stage): parsing, replaying and
  sorting are most of it and run in N processes; the reader only decompresses and cuts;
  the writer's share is SQLite's own work (the whole-table transfer of the image, the
  games and players rows and their indexes).  Handing the rows to SQLite through the
  driver instead (250-row ``INSERT ... VALUES``) cost the writer twice its whole time.

Anomalies: a game with an illegal move keeps its positions up to that move (the one
before it gets END as its next move), is stored, and its ``anomaly`` says which move
and why.  A game longer than ``book.model.records.move_limit`` (4 x the board's points)
is kept up to the limit (its record and its positions), also an anomaly; so is a game
past move 4095 (``scheme.MAX_MOVE_NUMBER``: no game read from SGF gets there now), whose
later positions are not stored.  Files that cannot be read at all are *skipped*, with the
reason.  The report holds each as a ``book.analysis.pipeline.report.Note``.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, replace

import numpy as np

from fuseki.book.analysis.pipeline.batches import (
    GAME_COLUMNS,
    ROW_FINGERPRINT,
    Batch,
    prepare_group,
    warm_up,
)
from fuseki.book.analysis.pipeline.groups import ArchiveGames, cut, groups, sized_batch
from fuseki.book.analysis.pipeline.progress import InputBytes, Progress
from fuseki.book.analysis.pipeline.report import ImportReport
from fuseki.book.analysis.pipeline.workers import (
    STALL_LIMIT,
    Sender,
    StageFailed,
    how_it_ended,
    start_forked,
    start_worker,
    stop_all,
    take,
)
from fuseki.book.storage import games_table, pattern_events
from fuseki.book.storage.position_index import intake

# Games a batch (one transaction, one segment): every segment costs each query a few index
# probes and every merge rewrites rows, so fewer, bigger segments; the price is memory (a
# parser holds a batch's rows: bench/corpus.py prints its peak) and a progress line a batch.
BATCH_GAMES = 16_000
# Parser processes: one per core, up to 8 where they write the rows themselves (segment files
# of a SQLite book on disk, staged tables of a PostgreSQL book): the reader and the writer,
# which then only links them in, each take a fraction of a parser's CPU per game, so more
# parsers would wait on them; up to 3 where the writer still writes every row (a book in
# memory, files or staging turned off), the limit there.  Each parser holds a batch in memory.
# bench/book.py --corpus prints each stage's CPU per game and the import's memory.
CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
WORKERS = min(8, CORES)
WORKERS_WRITING_ROWS = min(3, CORES)


# --- writing (the main process's side) -------------------------------------------------------

def write_batch(book, batch: Batch, report: ImportReport, announce=None, merge: bool = True) -> None:
    """Write one batch's new games and their positions in one transaction (``announce``: see
    ``intake.merge_in_transaction``; ``merge=False``: a ``Merger`` merges segment files)."""
    report.duplicates += batch.duplicates  # left out by the parser
    if not batch.games:
        return
    try:
        _write(book, batch, report, announce, merge)
    finally:
        intake.discard(book.db, batch.rows)  # what a parser wrote, unless it was linked


def _write(book, batch: Batch, report: ImportReport, announce, merge: bool) -> None:
    fingerprints = [game[ROW_FINGERPRINT] for game in batch.games]
    # Importers in other processes take turns, batch by batch (Book.writing holds the
    # write lock): the fingerprints and max(id) read below include every earlier batch.
    with book.writing() as conn:
        known = games_table.known(conn, fingerprints)
        keep = np.zeros(len(fingerprints), dtype=bool)
        for i, fp in enumerate(fingerprints):
            if fp not in known:
                known.add(fp)
                keep[i] = True
        added = int(keep.sum())
        report.duplicates += len(fingerprints) - added
        if not added:
            return
        first_id = book.max_game_id(conn) + 1
        ids = batch.rows.game_ids(first_id, keep)  # ids[i] is game i's id where keep[i]
        rows = [(game_id,) + game for game_id, game, new in zip(ids.tolist(), batch.games, keep) if new]
        games_table.insert(conn, rows)  # and their players into the player index
        if batch.events:  # the pattern index, complete up to this batch once it commits
            pattern_events.add(conn, [(row[0], row[_SIZE], batch.events[i], row[_WINNER]) for row, i
                                      in zip(rows, np.flatnonzero(keep).tolist())], first_id - 1)
        positions = intake.link(conn, batch.rows, first_id, keep)
        merged = intake.merge_in_transaction(conn, announce)
    batch.rows.linked = True  # committed
    report.added += len(rows)
    report.note([replace(note, game=int(ids[i])) for i, notes in batch.anomalies.items() if keep[i] for note in notes])
    report.positions += positions
    if not merged and merge:
        intake.merge_files(book.db, book.writing, announce)  # segment files: merged outside the batch's transaction


# in a row with its id
_SIZE, _WINNER = (GAME_COLUMNS.index(name) for name in ("size", "winner"))


# --- the pipeline ----------------------------------------------------------------------------

@dataclass
class StageEnd:
    """The last item of a stage: the CPU seconds the reader and this parser spent."""

    reader: float
    parser: float = 0.0


class ReaderGone(StageFailed):
    """A parser's word that the reader's pipe ended before the reader's end (the reader died)."""


def _dealt(paths: list[str], batch_games: int, meter: InputBytes | None, parsers: int, games: ArchiveGames):
    """What the reader deals out, a turn each: the groups, an error if reading failed, a StageEnd per parser."""
    try:
        yield from groups(paths, batch_games, meter, games=games, parsers=parsers)
    except Exception as exc:  # noqa: BLE001 - the parser whose turn it is passes it on
        yield StageFailed(f"import reader failed: {type(exc).__name__}: {exc}")
    yield from [StageEnd(reader=time.process_time())] * parsers


def _reader(parent: int, unused, paths: list[str], batch_games: int, meter: InputBytes | None, games: ArchiveGames,
            inboxes) -> None:
    """Stage 1 (a process): read the sources, dealing group k to parser k mod N."""
    start_worker(parent, unused)
    senders = [Sender(end) for end in inboxes]
    try:
        for turn, item in enumerate(_dealt(paths, batch_games, meter, len(senders), games)):
            games.wait(turn - 2 * len(senders))  # the parsers' counts guide the next groups' sizes
            senders[turn % len(senders)].send(item)
        for sender in senders:
            sender.wait()
    except BrokenPipeError:  # a parser is gone: the writer says why
        return


def _batches(group, read: int, batch_games: int, games: ArchiveGames, fast: bool, image: bool,
             known: games_table.KnownGames | None, rows_to):
    """The batches of one group, its archives read here (``groups.cut``), the last one marked."""
    for sources, read_after, last in cut(group, read, batch_games, games):
        batch = prepare_group(sources, fast, read_after, image, known, rows_to)
        batch.ends_group = last
        yield batch


def _parsed(inbox, batch_games: int, games: ArchiveGames, fast: bool, image: bool, known: games_table.KnownGames | None,
            rows_to):
    """What a parser sends: the batches of each group received, or the error, then a StageEnd (None after an error)."""
    try:
        while not isinstance(item := inbox.recv(), StageEnd):
            if isinstance(item, BaseException):
                yield item
            else:
                group, read = item
                yield from _batches(group, read, batch_games, games, fast, image, known, rows_to)
        yield StageEnd(item.reader, time.process_time())
        return
    except (EOFError, OSError):  # the reader died, maybe halfway through sending: the writer says how
        yield ReaderGone("import reader died")
    except Exception as exc:  # noqa: BLE001 - the writer raises it
        yield StageFailed(f"{multiprocessing.current_process().name} failed: {type(exc).__name__}: {exc}")
    yield None


def _parser(parent: int, unused, inbox, batch_games: int, games: ArchiveGames, fast: bool, image: bool,
            known: games_table.KnownGames | None, rows_to, outbox) -> None:
    """Stage 2 (N processes): each turns its groups into batches, in the order received."""
    start_worker(parent, unused)
    sender = Sender(outbox)
    try:
        for item in _parsed(inbox, batch_games, games, fast, image, known, rows_to):
            sender.send(item)
        sender.wait()
    except BrokenPipeError:  # the writer is gone
        return


def _ready_batches(paths: list[str], parsers: int, batch_games: int, fast: bool,
                   meter: InputBytes | None = None, stop=None, cpu: dict | None = None,
                   image: bool = False, book_url=None, rows_to=None, end_threads=None) -> Iterator[Batch]:
    """Batches in source order: made in this process, or by a pipeline of processes.

    With ``parsers`` = N > 0: one process reads the sources (decompressing archives)
    and deals the groups round-robin to N processes that parse, replay and sort them;
    this process takes their batches in the same rotation, so games come in source
    order (the same ids and rows as with none), and only writes.  A stage sends one
    item ahead, so a parser makes its next batch while the writer writes.  Ends early
    once ``stop`` (a threading.Event) is set.  The workers are gone when it ends
    (``book.analysis.pipeline.workers``).  Once every source is read, ``cpu`` (a dict) gets the
    CPU seconds of the stages: "reader" and "parsers".  ``image``, ``rows_to``: the form the
    book's positions index takes the rows in (``intake.Intake``: an image, or what writes them
    where this process only links them in).  With either, the parsers leave out the games the
    book at ``book_url`` already holds (``games_table.KnownGames``).  ``end_threads``: ends this process's other
    threads before the fork (``workers.start_forked``; the book's ``Book.end_threads``).
    """
    cpu = {} if cpu is None else cpu
    if parsers <= 0:
        games = ArchiveGames()
        dealt, reading, parsing = groups(paths, batch_games, meter, games=games), 0.0, 0.0
        while True:
            began = time.thread_time()
            group, read = next(dealt, (None, 0))
            reading += time.thread_time() - began
            if group is None:
                break
            made = _batches(group, read, batch_games, games, fast, image, None, rows_to)
            while True:
                began = time.thread_time()
                batch = next(made, None)
                parsing += time.thread_time() - began
                if batch is None:
                    break
                yield batch
        cpu.update(reader=reading, parsers=parsing)
        return
    warm_up()
    known = games_table.KnownGames(book_url) if (image or rows_to is not None) and book_url is not None else None
    context = _process_context()
    games = ArchiveGames(context)  # what the parsers learn of archives, for the reader's groups
    inboxes = [context.Pipe(duplex=False) for _ in range(parsers)]  # (receiving end, sending end)
    outboxes = [context.Pipe(duplex=False) for _ in range(parsers)]
    ends = [end for pipe in inboxes + outboxes for end in pipe]

    def others(*kept):  # the pipe ends a process closes: all but those it uses
        return [end for end in ends if all(end is not k for k in kept)]

    parent, sending = os.getpid(), [send for _, send in inboxes]
    stages = [context.Process(target=_reader, name="import reader", daemon=True,
                              args=(parent, others(*sending), paths, batch_games, meter, games, sending))]
    stages += [context.Process(target=_parser, args=(parent, others(receive, send), receive, batch_games, games, fast,
                                                     image, known, rows_to, send),
                               name=f"import parser {k}", daemon=True)
               for k, ((receive, _), (_, send)) in enumerate(zip(inboxes, outboxes))]
    try:
        start_forked(stages, end_threads)
        for end in others(*(receive for receive, _ in outboxes)):
            end.close()  # ours: so that a dead stage is an end of file
        turn = 0
        while True:
            item = take(outboxes[turn % parsers][0], stages[1 + turn % parsers], stop, STALL_LIMIT)
            if item is None:  # stop
                return
            if isinstance(item, ReaderGone):  # a parser saw it go: how, its process says
                raise StageFailed(f"{stages[0].name} (process {stages[0].pid}) died ({how_it_ended(stages[0])})")
            if isinstance(item, BaseException):
                raise item
            if isinstance(item, StageEnd):  # the reader ended here: no group has this turn or a later one
                parsing = item.parser
                for later in range(turn + 1, turn + parsers):  # the other parsers' ends
                    other = take(outboxes[later % parsers][0], stages[1 + later % parsers], stop, STALL_LIMIT)
                    if not isinstance(other, StageEnd):
                        return
                    parsing += other.parser
                cpu.update(reader=item.reader, parsers=parsing)
                return
            yield item
            turn += item.ends_group  # a parser's turn ends with its group's last batch
    finally:
        stop_all(stages, ends)


def _process_context():
    """Fork where there is fork: the stages start at once, with the kernels already loaded."""
    return multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)


def _merge_worker(parent: int, unused, plan: intake.MergePlan, outbox) -> None:
    """A merge of segment files (``intake.MergePlan.run``) in a process of its own; sends
    (name, rows), or the error."""
    start_worker(parent, unused)
    try:
        outbox.send(plan.run(parent))
    except Exception as exc:  # noqa: BLE001 - the writer raises it
        outbox.send(StageFailed(f"import merge failed: {type(exc).__name__}: {exc}"))


class Merger:
    """Merges full levels of segment files in a process of its own while the writer goes on
    linking batches (a merge of 32 batches' files is seconds of CPU at 16,000 games a batch,
    which the one writing process would spend instead): one merge at a time, linked in by
    the writer when it is done (``poll``)."""

    def __init__(self, book, announce=None):
        self.book, self.announce, self.job = book, announce, None
        self.context = _process_context()

    def poll(self, wait: bool = False) -> None:
        """Link the running merge if it is done (``wait``: once it is), then start the next."""
        if self.job is not None:
            process, end, plan = self.job
            if not wait and not end.poll():
                return
            result = take(end, process)  # raises if the process died
            self.job = None
            stop_all([process], [end])
            if isinstance(result, BaseException):
                raise result
            plan.link(self.book.writing, result)
        self._start()

    def finish(self) -> None:
        """Every full level merged and linked."""
        while self.job is not None:
            self.poll(wait=True)

    def stop(self) -> None:
        """End a running merge (its file is left for the sweep, ``intake.sweep``)."""
        if self.job is not None:
            process, end, _plan = self.job
            self.job = None
            stop_all([process], [end])

    def _start(self) -> None:
        plan = intake.next_merge(self.book.db, self.announce)
        if plan is None:
            return
        receive, send = self.context.Pipe(duplex=False)
        process = self.context.Process(target=_merge_worker, name="import merge", daemon=True,
                                       args=(os.getpid(), [receive], plan, send))
        start_forked([process], self.book.end_threads)  # right after a commit: the checkpointer is busy
        send.close()
        self.job = (process, receive, plan)


def import_paths(book, paths: list[str], workers: int | None = None, batch_games: int | None = None,
                 progress: Progress | None = None, fast: bool = True, stop=None,
                 report: ImportReport | None = None) -> ImportReport:
    """Import every game under ``paths`` (files, folders, archives) into ``book``.

    ``workers``: processes that parse and replay (0: this process; None: one per core,
    up to ``WORKERS`` where they write the rows, else ``WORKERS_WRITING_ROWS``).
    ``batch_games``: games a batch (None: ``BATCH_GAMES``, or fewer where the paths hold too
    few games to give every parser several batches: ``groups.sized_batch``).
    ``progress``: a Progress to update (None: no progress output).  ``stop``: a
    threading.Event (``book.ui.cli_shared.stop_on_signals`` sets one on Ctrl-C); once it
    is set the import ends after the batch it is writing, and the report says
    ``stopped``: a re-run adds the rest.  ``report``: the ImportReport to fill (one with a
    ``listing`` writes each skipped file and anomaly as it comes), else a new one.
    Returns the ImportReport.  Raises BookError for a read-only book.  Unreadable files
    are skipped, not raised.
    """
    book.check_writable()  # before any worker starts
    report = ImportReport() if report is None else report
    start = time.perf_counter()
    paths = list(paths)
    meter = InputBytes(paths) if progress else None  # a walk of the paths: only for a progress
    if progress:
        progress.start(meter.total)
    rows_in = intake.Intake.open(book.db)  # where the parsers put the rows: the writer links them in
    if workers is None:
        workers = WORKERS if rows_in.rows_to is not None else WORKERS_WRITING_ROWS
    if batch_games is None:
        batch_games = sized_batch(paths, workers, BATCH_GAMES)
    batches = _ready_batches(paths, workers, batch_games, fast, meter, stop, report.cpu, rows_in.image, book.db.url,
                             rows_in.rows_to, book.end_threads)
    merging = getattr(progress, "merging", None)  # a progress of one's own may not say merges
    # with worker processes, segment files merge in a process of their own too
    merger = Merger(book, merging) if rows_in.files and workers > 0 else None
    writing = 0.0
    try:
        with closing(batches):  # the workers end here, however the loop does
            for batch in batches:
                report.note(batch.skipped)
                began = time.thread_time()
                write_batch(book, batch, report, merging, merger is None)
                if merger is not None:
                    merger.poll()
                writing += time.thread_time() - began
                if progress:
                    progress.update(report, batch.read)
                if stop is not None and stop.is_set():
                    break
        report.stopped = stop is not None and stop.is_set()
        if merger is not None and not report.stopped:
            began = time.thread_time()
            merger.finish()
            writing += time.thread_time() - began
        if not report.stopped:
            book.reclaim()  # the pages a merge freed, where no later batch took them
        if progress and not report.stopped:
            progress.update(report, meter.total)  # every source is read, whatever the last group was
    finally:
        if merger is not None:
            merger.stop()
        rows_in.close()
        report.elapsed = time.perf_counter() - start
        report.cpu["writer"] = writing
        book.forget_caches()
        if progress:
            progress.done()
    return report

