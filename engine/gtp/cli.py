"""``fuseki-gtp``: command-line flags, settings, and the stdin/stdout GTP loop.

Only GTP responses go to stdout; diagnostics go to stderr.  Input is read
as bytes (so invalid UTF-8 and lone CRs cannot break the loop) and a line
longer than ``LINE_LIMIT`` is answered with ``?`` without being run.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from collections.abc import Callable, Iterator
from typing import BinaryIO

from fuseki.engine import config

LINE_LIMIT = 16 << 20  # bytes; longer lines are refused, not run


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="fuseki-gtp", description="The fuseki Go engine, speaking GTP v2 on stdin/stdout.",
        # the path on a line of its own, unwrapped, so that it can be copied
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=f"Settings are read from\n  {config.DEFAULT_PATH}\nunless --config names another file; "
               "flags override them.")
    p.add_argument("--config", metavar="PATH", help="read settings from this TOML file")
    p.add_argument("--size", type=int, metavar="N", help="initial board size (2..25)")
    p.add_argument("--komi", type=float, metavar="K", help="initial komi")
    p.add_argument("--seed", type=int, metavar="N", help="random seed: the same seed replays the same moves")
    p.add_argument("--suicide", action=argparse.BooleanOptionalAction, default=None,
                   help="allow multi-stone suicide")
    p.add_argument("--superko", action=argparse.BooleanOptionalAction, default=None,
                   help="forbid any repetition of an earlier position (positional superko)")
    books = p.add_mutually_exclusive_group()
    books.add_argument("--book", metavar="PATH", help="opening book database (default: the one fuseki import "
                                                     "fills, else the book built into the package)")
    books.add_argument("--no-book", action="store_true", help="play without an opening book")
    p.add_argument("--policy", choices=config.POLICIES,
                   help="how to pick among book moves (default sound: the most played one that KataGo's "
                        "stored values rate within the noise of the best book move, then KataGo's stored line "
                        "past the book; best: the most played; weighted: drawn by games; winrate)")
    p.add_argument("--max-loss", type=float, metavar="POINTS",
                   help="for --policy sound: skip book moves whose stored AI loss is over this (default 2.0)")
    p.add_argument("--min-games", type=int, metavar="N", help="ignore book moves seen in fewer games")
    p.add_argument("--temperature", type=float, metavar="T", help="for --policy weighted (> 0)")
    p.add_argument("--analysis-min-games", type=int, metavar="N",
                   help="list a move in lz-analyze/kata-analyze lines only from N games on (default 2)")
    p.add_argument("--corner-book", action=argparse.BooleanOptionalAction, default=None,
                   help="out of the whole-board book, play what strong players played next in a corner "
                        "(default: on)")
    p.add_argument("--corner-until", type=int, metavar="N",
                   help="the last move number the corner book plays (default 0: while it has a move "
                        "of --min-games games)")
    p.add_argument("--verbose", action="store_true",
                   help="log on stderr where each genmove came from (book, corner book, fallback, random)")
    p.add_argument("--fallback-engine", metavar="CMD",
                   help='GTP engine answering genmove when the book has no move, e.g. "gnugo --mode gtp"')
    return p


def settings_from(args: argparse.Namespace) -> config.Settings:
    """Raises config.ConfigError."""
    return config.load(args.config, {
        "game.board_size": args.size, "game.komi": args.komi, "engine.seed": args.seed,
        "rules.suicide": args.suicide, "rules.superko": args.superko,
        "book.path": "" if args.no_book else args.book, "book.policy": args.policy,
        "book.min_games": args.min_games, "book.temperature": args.temperature,
        "book.analysis_min_games": args.analysis_min_games,
        "book.corner_book": args.corner_book, "book.corner_until": args.corner_until,
        "engine.fallback_engine": args.fallback_engine, "ai.max_loss": args.max_loss,
    })


def read_lines(stream: BinaryIO, limit: int = LINE_LIMIT) -> Iterator[tuple[bytes, bool]]:
    """(line, complete) for each LF-terminated line; ``complete`` is False for a line
    over ``limit`` bytes, of which only the first ``limit`` are kept (the rest is read and dropped)."""
    while True:
        line = stream.readline(limit)
        if not line:
            return
        if len(line) < limit or line.endswith(b"\n"):
            yield line, True
            continue
        rest = line
        while rest and not rest.endswith(b"\n"):
            rest = stream.readline(limit)
        yield line, False


def warm_up(chain=None, done: threading.Event | None = None) -> None:
    """Let each chooser of ``chain`` (``engine.players.chooser.ChooserChain``) prepare itself
    (``Chooser.warm_up``: the book opens its database and answers the empty board), then load
    the rest of the board's compiled kernels (numba and the kernels: bench/cli.py times the
    start-up); ``done`` is set at the end, whatever happened.

    Run on a thread from the start, while the loop waits for the first line: controllers
    send several set-up commands (``name``, ``version``, ``list_commands``...) before the
    first ``genmove`` or ``book_moves``, and this loads the kernels meanwhile (the reading
    thread waits on stdin, so it does not hold the interpreter, and the set-up commands
    need no kernel: they are answered between the imports).
    """
    try:
        if chain is not None:  # first: the book's first answer is what a controller asks first
            chain.warm_up()
        import numpy as np

        from fuseki.engine.core.board import Board
        board = Board(9)
        board.play(board.to_move, board.random_move(board.to_move, np.random.default_rng(0)))
        # area is no per-move kernel (engine.core.lazy_jit): it compiles every kernel here, so that
        # no genmove pays for numba's start after the per-move kernels' interpreted calls run out
        board.area()
    except Exception as exc:  # the engine still works; the first genmove just loads them itself
        print(f"fuseki-gtp: warm-up failed: {exc!r}", file=sys.stderr)
    finally:
        if done is not None:
            done.set()


WARM_UP_WAIT = 120.0  # seconds: a warm-up that never ends must not keep the engine silent for ever


def is_quit(line: bytes) -> bool:
    """Whether a raw GTP line is ``quit`` (with or without an id): it never waits for the warm-up."""
    words = line.split()
    if words and words[0].isdigit():
        words = words[1:]
    return bool(words) and words[0].lower() == b"quit"


class AsideStream(threading.Thread):
    """An open analysis response's entries, computed on a thread while the loop waits for the
    next line (``engine.gtp.protocol``): the engine answers that line at once, as KataGo and
    Leela Zero do, instead of after the whole analysis (the empty board's took 1.4 s with the
    built-in book).  ``finish()`` stops it after the entry in hand and writes the ones it has as
    the response's line, before anything else is written; the entries come from a copy of the
    board, and the loop touches the game only after ``finish()``, so nothing is shared while
    the thread runs."""

    def __init__(self, entries, stdout: BinaryIO):
        super().__init__(name="analysis", daemon=True)
        self.entries, self.stdout = entries, stdout
        self.stopping = threading.Event()
        self.start()

    def run(self) -> None:
        done = []
        try:
            for entry in self.entries:
                done.append(entry)
                if self.stopping.is_set():
                    break
        except Exception as exc:  # noqa: BLE001 - the engine goes on; the line has what was found
            print(f"fuseki-gtp: analysis failed: {exc!r}", file=sys.stderr)
        if done:
            self.stdout.write((" ".join(done) + "\n").encode("utf-8", errors="replace"))
            self.stdout.flush()

    def finish(self) -> None:
        self.stopping.set()
        self.join()


def serve(engine, stdin: BinaryIO, stdout: BinaryIO, limit: int = LINE_LIMIT,
          warm: bool = False, warmed: threading.Event | None = None) -> None:
    """Answer lines until ``quit`` or the end of input; lines over ``limit`` bytes are refused.

    With ``warm``, the board's kernels load (and the choosers warm up) on a thread from the
    start (``warm_up``); ``warmed``, if given, is set once they have.  The first command other
    than ``quit`` is answered once the warm-up has ended, as KataGo answers once its network is
    loaded: after the engine's first answer every answer is quick (the first ``book_moves``
    after ``name`` comes from the warmed book, not from a second start-up beside the warm-up).
    """
    ready, aside = None, None
    engine.streams_aside = True  # an analysis response's entries run beside the next read (AsideStream)
    if warm:
        ready = warmed if warmed is not None else threading.Event()
        threading.Thread(target=warm_up, args=(engine.game.chain, ready), name="warm-up", daemon=True).start()
    for line, complete in read_lines(stdin, limit):
        if aside is not None:  # its line is written first: then the response may end
            aside.finish()
            aside = None
        if ready is not None and not is_quit(line):
            ready.wait(WARM_UP_WAIT)
            ready = None
        if complete:
            response = engine.handle_bytes(line)
        else:
            response = engine.reject_line(line[:1000].decode("utf-8", "replace"), "line too long")
        if response is not None:
            stdout.write(response.encode("utf-8", errors="replace"))
            stdout.flush()
        if engine.finished:
            return
        entries = engine.take_stream()
        if entries is not None:
            aside = AsideStream(entries, stdout)
    if aside is not None:
        aside.finish()
    closing = engine.close_stream()  # an analysis response still open at the end of input
    if closing:
        stdout.write(closing.encode())
        stdout.flush()


def main(argv: list[str] | None = None, build_engine: Callable | None = None) -> int:
    """Parse the flags, load the settings and serve GTP on stdin/stdout.

    ``build_engine(settings, verbose)`` makes the engine; ``fuseki-gtp`` passes the one
    that puts the book in front (``fuseki.gtp_main``); without it the engine plays from
    its own choosers only (the fallback engine of the settings, then random moves).
    """
    args = build_parser().parse_args(argv)
    try:
        settings = settings_from(args)
    except config.ConfigError as exc:
        print(f"fuseki-gtp: {exc}", file=sys.stderr)
        return 2
    if build_engine is None:
        build_engine = engine_without_book
    stdout = sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print() anywhere must not corrupt the protocol
    engine = build_engine(settings, args.verbose)
    try:
        serve(engine, sys.stdin.buffer, stdout, warm=True)
    except (KeyboardInterrupt, BrokenPipeError):
        return 0
    exit_now(engine)
    return 0  # not reached


def exit_now(engine) -> None:
    """End the process once the loop has ended (``quit`` answered, or the end of input):
    close what holds another process (the fallback engine is sent ``quit``), flush, and exit
    without the interpreter's teardown, which unloads numba, llvmlite and SQLAlchemy module by
    module (bench/cli.py times quit to the end of the process; GUIs such as Sabaki wait for it).  The book is open
    read-only: nothing of it needs writing back.
    """
    engine.game.chain.close(log=lambda text: print(f"fuseki-gtp: {text}", file=sys.stderr))
    for stream in (sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(0)


def engine_without_book(settings, verbose: bool = False):
    """An engine whose chain is the settings' fallback engine, then random moves."""
    from fuseki.engine.gtp.commands.registry import REGISTRY
    from fuseki.engine.gtp.commands.state import Game
    from fuseki.engine.gtp.protocol import GtpEngine
    from fuseki.engine.players import engine_chain

    game = Game(settings)
    game.chain = engine_chain(settings, game)
    return GtpEngine(game, REGISTRY)
