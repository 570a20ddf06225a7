"""``fuseki shell``: explore the book from a command line with history and tab completion.

The shell keeps one search position (a ``Board`` replayed from the empty board,
Black first, colours alternating) and the filters, and asks ``book.storage.store.Book``
for the next moves and games; the text board, the next-move table and the games
list come from ``book.ui.present.textboard``, shared with ``fuseki search`` (next-move
letters here are ``a``-``l``).  Commands (``help COMMAND``
for each)::

    board  play MOVES...  undo [N]  search  marks on|off  ai on|off|pv on|pv off  rotations
    years [K|FROM-TO:FROM-TO]  year [FROM-TO|off]  player [NAME|off]  games [PAGE|next]
    filter [NAME VALUE|NAME off|off]   (event, winner, won_by, margin, min_rank, max_rank, handicap, komi)
    within [back|off]
    import PATH...  ls [PATH]  cd PATH  cwd  listcommands  help [COMMAND]  exit  quit

With ``ai on`` (or ``fuseki shell --ai``) ``search`` shows KataGo's values beside the human
moves, as ``fuseki search --ai`` does (``book.ui.present.ai_text``: the stored values, else KataGo's when
one is configured, else a line saying none are stored; ``--katago``, ``--visits``, ``--rules``
and ``--komi`` are ``search --ai``'s); ``corners`` puts them beside each corner continuation and
``pattern`` beside a whole-board pattern's continuations, as ``fuseki corners --ai`` and
``fuseki pattern --ai`` do.  ``within`` searches within the games of the answer shown, a stack
that ``within back`` pops (``book.ui.shell_within``); the prompt says how many games.

Every bad input prints one line and leaves the position and the filters as they
were; ``play`` and ``undo`` are all or nothing.  Output goes to ``stdout`` (a
parameter), so tests drive the shell with ``onecmd`` and read a ``StringIO``.
"""

from __future__ import annotations

import cmd
import inspect
import os
import shutil
import sys
from dataclasses import replace
from pathlib import Path

from sqlalchemy.exc import SQLAlchemyError

from fuseki.book.model.filters import Filters
from fuseki.book.ui.present import textboard
from fuseki.book.ui.present.textboard import SHORT_LETTERS
from fuseki.book.ui.reading import parse_periods, parse_years  # as ``fuseki search --year``, ``--trends``
from fuseki.book.ui.shell_filters import FilterCommands
from fuseki.book.ui.shell_within import WithinCommands
from fuseki.engine.core import base, coords
from fuseki.engine.core.base import BLACK, COLOUR_NAME, WHITE, IllegalMove
from fuseki.engine.core.board import Board

PAGE_SIZE = 20


class ShellError(Exception):
    """Bad input: the message is printed as one line and nothing changes."""


def parse_point(token: str, size: int) -> int:
    """A point from an SGF point (``pd``), a GTP vertex (``Q16``) or ``pass``; raises ShellError."""
    try:
        return base.parse_point(token, size)
    except base.CoordinateError:
        raise ShellError(f"bad vertex '{token}': use SGF letters (pd), GTP (Q16), pass, "
                         f"or a letter {SHORT_LETTERS[0]}-{SHORT_LETTERS[-1]} from the last search") from None


class BookShell(FilterCommands, WithinCommands, cmd.Cmd):
    """The interactive explorer over one open ``Book``."""

    intro = None
    prompt = "fuseki> "
    doc_header = "Commands (help COMMAND for details):"

    def __init__(self, book, url: str = "", size: int = 19, stdout=None, ai_options=None):
        super().__init__(stdout=stdout or sys.stdout)
        self.ai = False  # search shows KataGo's values (ai on|off)
        # --katago, --visits, --rules, --komi (ai_text.add_ai_options); None: their defaults
        self.ai_options = ai_options or _default_ai_options()
        self.book = book
        self.url = url
        self.board = Board(size)
        self.filters = None
        self.within_stack = []        # within: (games, in words) per level (book.ui.shell_within)
        self.marks = True
        self.last_search = None      # (moves of the searched position, NextMoves)
        self.games_shown = None      # (position and filters, GamesPage.after) of the last games page
        self.pattern_shown = None    # (position and filters, PatternResult) of the last pattern search
        self.use_rawinput = stdout is None
        self.import_workers = None   # processes that parse and replay during import (None: the importer's default)

    # --- plumbing ---------------------------------------------------------------------

    def say(self, text: str = "") -> None:
        """Everything the shell shows goes through here: names from records and files included."""
        self.stdout.write(textboard.printable(text) + "\n")

    def greeting(self) -> str:
        stats = self.book.stats()
        return f"book {self.url or '(open)'}: {stats.games} games, {stats.positions} positions"

    def onecmd(self, line: str) -> bool:
        try:
            return super().onecmd(line)
        except ShellError as exc:
            self.say(f"error: {exc}")
        except (OSError, ValueError, KeyError, SQLAlchemyError) as exc:  # the book, the importer, files
            self.say(f"error: {_first_line(exc)}")
        return False

    def emptyline(self) -> bool:
        return False  # cmd's default repeats the last command: not wanted for play/undo

    def default(self, line: str) -> bool:
        if line.strip() == "EOF":
            return self.do_EOF("")
        self.say(f"error: unknown command '{line.split()[0]}' (listcommands shows them all)")
        return False

    def command_names(self) -> list[str]:
        return sorted(name[3:] for name in self.get_names() if name.startswith("do_") and name != "do_EOF")

    def completenames(self, text, *ignored):
        return [name + " " for name in self.command_names() if name.startswith(text)]

    # --- position -----------------------------------------------------------------------

    def do_board(self, arg: str) -> None:
        """board: show the current position (with next-move letters after a search, if marks are on)."""
        self._no_arguments("board", arg)
        self.say(self._board_text(self._current_search() if self.marks else None))
        self.say(self._status())

    def do_play(self, arg: str) -> None:
        """play MOVES...: play moves in turn (pd, Q16, pass, or a letter a-l from the last search)."""
        tokens = arg.split()
        if not tokens:
            raise ShellError("play needs moves, e.g. play pd dp or play Q16 or play a")
        trial = self.board.copy()
        for token in tokens:
            point = self._resolve(token, trial)
            try:
                trial.play(trial.to_move, point)
            except IllegalMove as exc:
                raise ShellError(f"illegal move {token} for {COLOUR_NAME[trial.to_move]}: {exc.reason}") from None
        self.board = trial
        self.say(self._status())

    def do_undo(self, arg: str) -> None:
        """undo [N]: take back the last N moves (default 1)."""
        count = self._count(arg, "undo")
        if count > len(self.board.moves):
            raise ShellError(f"cannot undo {count} moves: {len(self.board.moves)} played")
        for _ in range(count):
            self.board.undo()
        self.say(self._status())

    def do_search(self, arg: str) -> None:
        """search: the board with next-move letters, the position key, the next-move table and the total."""
        self._no_arguments("search", arg)
        found = self.book.next_moves(self.board, filters=self.filters)
        self.last_search = (tuple(self.board.moves), found)
        self.pattern_shown = None  # games: this position's again
        text = textboard.search_text(self.board, found, letters=SHORT_LETTERS, note=self._filter_note(), verbose=True)
        if not self.marks:
            lines = text.splitlines()
            lines[:self.board.size + 2] = textboard.board_lines(self.board, None)
            text = "\n".join(lines)
        if self.ai:
            text = self._with_ai(found, text)
        self.say(text)

    def _with_ai(self, found, text: str) -> str:
        """``text`` (search's) with the human table replaced by ``ai_text.ai_table`` (the human
        moves with KataGo's values beside them), or a line saying why there are none."""
        from fuseki.book.ui.cli_shared import CommandError
        from fuseki.book.ui.present import ai_text

        try:
            values, move_values = ai_text.ai_values_for(self.ai_options, self.board, found, self.book,
                                                        len(SHORT_LETTERS), ask_unless_none=True)
        except CommandError as exc:  # KataGo failed: the human table still shows
            return f"{text}\nAI: {exc}"
        if values is None:
            return f"{text}\n{ai_text.NO_VALUES}"
        table = textboard.move_table(found, self.board.size, SHORT_LETTERS)
        return (text[: len(text) - len(table)] + ai_text.ai_table(found, values, move_values, self.board.size,
                                                                  SHORT_LETTERS, getattr(self.ai_options, "pv", False))
                + "\n" + table.rsplit("\n", 1)[-1])

    def do_pattern(self, arg: str) -> None:
        """pattern REGION [any POINTS] [x POINTS] [o POINTS] [fixed|swap] [next black|white]
        [from M] [to N]: the games reaching the region of the board (e.g. N19:T13; any R17,S18:
        points matching anything; x/o: empty or black/white, Kombilo's wildcards; fixed: colours
        as they are, the default; swap: colours exchanged too; next: who moves next; from/to:
        the move range), their continuations (the next move inside the region, at once or after
        tenuki, by colour) and tenuki; games then lists them."""
        from fuseki.book.analysis.patterns.pattern import PatternError
        from fuseki.book.analysis.patterns.search import search
        from fuseki.book.ui.present.pattern_text import result_text
        from fuseki.book.ui.reading import pattern_from_options

        words = arg.split()
        if not words:
            raise ShellError("pattern needs a region, e.g. pattern N19:T13 (two opposite corners)")
        names = {"any": "any", "x": "empty_or_black", "o": "empty_or_white", "next": "to_move",
                 "from": "moves_from", "to": "moves_to"}
        given = {}
        rest = iter(words[1:])
        for word in rest:
            if word in ("swap", "fixed"):
                given["swap"] = "1" if word == "swap" else ""
            elif word in names:
                given[names[word]] = next(rest, None)
                if given[names[word]] is None:
                    raise ShellError(f"pattern: {word} needs a value")
            else:
                raise ShellError(f"pattern: unknown word '{word}' (any, x, o, fixed, swap, next, from, to)")
        try:
            pattern = pattern_from_options(self.board, words[0], given.get)
        except PatternError as exc:
            raise ShellError(str(exc)) from None
        result = search(self.book, pattern, self.filters)
        self.pattern_shown = ((tuple(self.board.moves), self.board.to_move, self.filters), result)
        if not self.ai:
            self.say(result_text(self.board, result) + self._filter_note())
            return
        from fuseki.book.ui.present.pattern_text import pattern_ai

        ai, failed = self._ai_or_why(lambda: pattern_ai(self.ai_options, self.board, result, self.book, True))
        self.say(result_text(self.board, result, ai) + self._filter_note() + failed)

    def _ai_or_why(self, compute):
        """(``compute()``, "") or, KataGo failing, (None, a line saying why): the tables still show."""
        from fuseki.book.ui.cli_shared import CommandError

        try:
            return compute(), ""
        except CommandError as exc:
            return None, f"\nAI: {exc}"

    def do_corners(self, arg: str) -> None:
        """corners: what strong players played next in each corner of the board (the corner book,
        which the engine plays once the whole board is out of book), the last move's corner first."""
        from fuseki.book.play.book_chooser import book_corners
        from fuseki.book.ui.present.corner_text import corners_text

        self._no_arguments("corners", arg)
        found = book_corners(self.book, self.board, self.board.to_move)  # games, as the page shows them
        if found is None:
            raise ShellError("this book has no corner book: fuseki corners --book BOOK builds it")
        if not found:
            raise ShellError(f"a {self.board.size}x{self.board.size} board has no corners")
        if not self.ai:
            self.say(corners_text(self.board, self.board.to_move, found))
            return
        from fuseki.book.ui.present.ai_text import NO_VALUES
        from fuseki.book.ui.present.corner_text import corner_ai

        ai, failed = self._ai_or_why(lambda: corner_ai(self.ai_options, self.board, self.board.to_move, found,
                                                       self.book, ask_unless_none=True))
        none = f"\n{NO_VALUES}" if ai is None and not failed else ""
        self.say(corners_text(self.board, self.board.to_move, found, ai) + none + failed)

    def do_marks(self, arg: str) -> None:
        """marks on|off: show the next-move letters on the board or not."""
        word = arg.strip().lower()
        if word not in ("on", "off"):
            raise ShellError("marks takes on or off")
        self.marks = word == "on"
        self.say(f"marks {word}")

    def do_ai(self, arg: str) -> None:
        """ai on|off: search, corners and a whole-board pattern show KataGo's win rate, score lead,
        loss and visits beside each move (the deepest stored values; KataGo, when one is
        configured, is asked for a position none has and for the moves of 1% of the games its
        search did not evaluate, and the shell waits: minutes on a CPU).  ai pv on|off: search
        shows each move's line (KataGo's principal variation) under its row, as --pv."""
        words = arg.strip().lower().split()
        if words[:1] == ["pv"] and words[1:] in (["on"], ["off"]):
            self.ai_options.pv = words[1] == "on"
            self.say(f"ai pv {words[1]}")
            return
        if words not in (["on"], ["off"]):
            raise ShellError("ai takes on, off, pv on or pv off")
        self.ai = words[0] == "on"
        self.say(f"ai {words[0]}")

    def do_rotations(self, arg: str) -> None:
        """rotations: the search in all 8 orientations side by side with their keys (they should agree)."""
        self._no_arguments("rotations", arg)
        panels, counts, canon = [], set(), set()
        for n in range(8):
            board = Board(self.board.size)
            for colour, point in self.board.moves:
                board.play(colour, coords.transform_point(n, point, board.size))
            found = self.book.next_moves(board, filters=self.filters)
            counts.add((found.total, tuple(sorted((m.games, m.stats.black_wins, m.stats.white_wins)
                                                  for m in found.moves))))
            canon.add(min(board.symmetric_keys()))
            title = f"T{n} {board.position_key():016x}"
            panels.append([title] + textboard.board_lines(board, found if self.marks else None, letters=SHORT_LETTERS))
        self.say(_side_by_side(panels))
        same = len(counts) == 1 and len(canon) == 1
        self.say("all 8 orientations: same canonical key and same next moves" if same
                 else "MISMATCH: the orientations disagree (canonical keys or next moves differ)")

    def do_years(self, arg: str) -> None:
        """years [K|FROM-TO:FROM-TO]: the position's games per year (and their share of the year's
        games), each next move's first and last year and trend over the last K years (default 3);
        with two periods, the moves whose share rose or fell most between them (search --trends)."""
        from fuseki.book.queries.years import RECENT, date_profile
        from fuseki.book.ui.present import years_text

        text = arg.strip()
        periods = parse_periods(text) if ":" in text else None
        recent = RECENT if periods or not text else self._count(text, "years")
        profile = date_profile(self.book, self.board, filters=self.filters, recent=recent)
        if periods:
            self.say(years_text.trends_text(profile, *periods, self.board.size, SHORT_LETTERS))
        else:
            self.say(years_text.year_text(profile, self.board.size, SHORT_LETTERS))

    # --- filters and games ------------------------------------------------------------

    def do_year(self, arg: str) -> None:
        """year [FROM-TO|off]: only games of those years (FROM-, -TO or one year also work)."""
        text = arg.strip()
        if text:
            low, high = (None, None) if text.lower() == "off" else parse_years(text)  # ValueError: one line
            self.filters = self._filters(year_from=low, year_to=high)
        self.say(self._filter_note().strip(" ;") or "no filters")

    def do_player(self, arg: str) -> None:
        """player [NAME|off]: only games where NAME (part of it, any case) played either colour."""
        text = arg.strip()
        if text:
            self.filters = self._filters(player=None if text.lower() == "off" else text)
        self.say(self._filter_note().strip(" ;") or "no filters")

    def do_games(self, arg: str) -> None:
        """games [PAGE|next]: the games that reached the position, newest first (players, date,
        result, move number); ``next``: the page after the one shown last."""
        asked = (tuple(self.board.moves), self.board.to_move, self.filters)
        lister = self.book.games
        if self.pattern_shown and self.pattern_shown[0] == asked:  # the pattern's games, at their match
            matches = self.pattern_shown[1].matches
            lister = lambda _board, filters=None, **page: self.book.page_of_games(matches, **page)  # noqa: E731
        if arg.strip().lower() == "next":  # by keyset: after the last game shown, no rows counted
            if not self.games_shown or self.games_shown[0] != asked:
                raise ShellError("no games of this position and filters shown yet: 'games' first")
            if self.games_shown[1] is None:
                raise ShellError("that was the last page")
            found = lister(self.board, filters=self.filters, page_size=PAGE_SIZE, after=self.games_shown[1])
        else:
            page = self._count(arg, "games")
            found = lister(self.board, filters=self.filters, page=page, page_size=PAGE_SIZE)
            if page > max(found.pages, 1):
                raise ShellError(f"page {page} is out of range: there are {found.pages} pages")
        self.games_shown = (asked, found.after)
        if not found.total:
            self.say("no games reached this position" + self._filter_note())
            return
        self.say(textboard.games_table(found.rows))
        games = f"{found.total} game" + ("" if found.total == 1 else "s")
        self.say(f"page {found.page} of {found.pages}, {games}" + self._filter_note())

    # --- files --------------------------------------------------------------------------

    def do_import(self, arg: str) -> None:
        """import PATH...: add the games of SGF files, folders or archives to the book."""
        paths = arg.split()
        if not paths:
            raise ShellError("import needs files, folders or archives")
        for path in paths:
            if not os.path.exists(path):
                raise ShellError(f"cannot import {path}: no such file or folder")
        import signal

        from fuseki.book.analysis.pipeline import importer
        from fuseki.book.analysis.pipeline.progress import Progress
        from fuseki.book.analysis.pipeline.report import ImportReport
        from fuseki.book.analysis.pipeline.workers import StageFailed
        from fuseki.book.ui.cli_shared import failed_text, stop_on_signals, stopped_text

        progress = Progress(escape=textboard.printable) if self.use_rawinput else None
        report = ImportReport()
        with stop_on_signals() as stop:  # Ctrl-C stops the import, not the shell
            try:
                importer.import_paths(self.book, paths, workers=self.import_workers, progress=progress,
                                      stop=stop, report=report)
            except StageFailed as exc:  # a process of the import died: one line, and the shell goes on
                raise ShellError(failed_text(exc, report)) from None
        self.say(stopped_text(stop, report) if report.stopped else str(report))
        self.last_search = None
        self.pattern_shown = None
        if stop.signum == signal.SIGTERM:  # asked to end the shell, not only the import
            raise SystemExit(128 + signal.SIGTERM)

    def do_ls(self, arg: str) -> None:
        """ls [PATH]: list a folder (folders end with /)."""
        folder = Path(arg.strip() or ".").expanduser()
        if not folder.is_dir():
            raise ShellError(f"cannot list {folder}: not a folder")
        names = sorted(entry.name + ("/" if entry.is_dir() else "") for entry in folder.iterdir())
        self.say("\n".join(names) if names else "(empty)")

    def do_cd(self, arg: str) -> None:
        """cd PATH: change the current folder (for import and ls)."""
        target = Path(arg.strip() or "~").expanduser()
        if not target.is_dir():
            raise ShellError(f"cannot cd to {target}: not a folder")
        os.chdir(target)
        self.say(os.getcwd())

    def do_cwd(self, arg: str) -> None:
        """cwd: print the current folder."""
        self._no_arguments("cwd", arg)
        self.say(os.getcwd())

    # --- the shell itself -------------------------------------------------------------

    def do_listcommands(self, arg: str) -> None:
        """listcommands: every command, one a line."""
        self._no_arguments("listcommands", arg)
        self.say("\n".join(self.command_names()))

    def do_help(self, arg: str) -> None:
        """help [COMMAND]: what a command does."""
        name = arg.strip()
        if not name:
            for command in self.command_names():
                doc = getattr(self, "do_" + command).__doc__ or command
                self.say(plain(doc).splitlines()[0])
            return
        method = getattr(self, "do_" + name, None)
        if method is None or name == "EOF":
            raise ShellError(f"no command '{name}' (listcommands shows them all)")
        self.say(plain(method.__doc__))

    def do_exit(self, arg: str) -> bool:
        """exit: leave the shell (quit and end-of-file too)."""
        return True

    def do_quit(self, arg: str) -> bool:
        """quit: leave the shell (exit and end-of-file too)."""
        return True

    def do_EOF(self, arg: str) -> bool:
        self.say()
        return True

    # --- completion ---------------------------------------------------------------------

    def complete_play(self, text, line, begidx, endidx):
        options = [m for m in self._search_words() if m.startswith(text)]
        return options or ([text.upper()] if text and text[0].isupper() else [])

    def complete_marks(self, text, *ignored):
        return [w for w in ("on", "off") if w.startswith(text)]

    complete_ai = complete_marks

    def complete_year(self, text, *ignored):
        return [w for w in ("off",) if w.startswith(text)]

    complete_player = complete_year

    def complete_help(self, text, *ignored):
        return [name for name in self.command_names() if name.startswith(text)]

    def complete_import(self, text, line, begidx, endidx):
        return _complete_path(text, folders_only=False)

    complete_ls = complete_import

    def complete_cd(self, text, line, begidx, endidx):
        return _complete_path(text, folders_only=True)

    # --- helpers ------------------------------------------------------------------------

    def _no_arguments(self, name: str, arg: str) -> None:
        if arg.strip():
            raise ShellError(f"{name} takes no arguments")

    def _count(self, arg: str, name: str) -> int:
        text = arg.strip() or "1"
        if not text.isascii() or not text.isdigit() or int(text) < 1:
            raise ShellError(f"{name} takes a positive whole number, not '{text}'")
        return int(text)

    def _filters(self, **changes):
        return replace(self.filters or Filters(), **changes)

    def _filter_note(self) -> str:
        f = self.filters
        if f is None:
            return ""
        parts = []
        if f.year_from is not None or f.year_to is not None:
            low = "" if f.year_from is None else str(f.year_from)
            high = "" if f.year_to is None else str(f.year_to)
            parts.append(f"years {low}-{high}" if low != high else f"year {low}")
        if f.player:
            parts.append(f"player '{f.player}'")
        parts += f.describe()
        if f.within is not None:
            parts.append(f"within {len(f.within)} games")
        return ("; filters: " + ", ".join(parts)) if parts else ""

    def _current_search(self):
        """The last search's NextMoves if it was of the current position (else None)."""
        if self.last_search and self.last_search[0] == tuple(self.board.moves):
            return self.last_search[1]
        return None

    def _resolve(self, token: str, trial: Board) -> int:
        """A letter from the last search (of the position ``trial`` is in) or a vertex."""
        if len(token) == 1 and token.isalpha():
            found = self.last_search
            if token not in SHORT_LETTERS:
                raise ShellError(f"bad vertex '{token}': letters go from {SHORT_LETTERS[0]} to {SHORT_LETTERS[-1]}")
            if not found or found[0] != tuple(trial.moves):
                raise ShellError(f"letter '{token}' needs a search of this position first (type search)")
            index = SHORT_LETTERS.index(token)
            if index >= len(found[1].moves):
                raise ShellError(f"letter '{token}' is not in the last search's table")
            return found[1].moves[index].point
        return parse_point(token, trial.size)

    def _search_words(self) -> list[str]:
        found = self._current_search()
        if not found:
            return []
        words = [SHORT_LETTERS[i] for i in range(min(len(SHORT_LETTERS), len(found.moves)))]
        return words + [base.point_to_sgf(m.point, self.board.size) or "pass" for m in found.moves]

    def _board_text(self, found) -> str:
        return "\n".join(textboard.board_lines(self.board, found, letters=SHORT_LETTERS))

    def _status(self) -> str:
        board = self.board
        last = ""
        if board.moves:
            colour, point = board.moves[-1]
            last = f", last {COLOUR_NAME[colour]} {base.point_to_vertex(point, board.size)}"
        return (f"move {len(board.moves)}{last}; {COLOUR_NAME[board.to_move]} to play; "
                f"captures Black {board.captures[BLACK]} White {board.captures[WHITE]}")


def _default_ai_options():
    """``fuseki shell``'s AI options at their defaults (``ai_text.add_ai_options``)."""
    import argparse

    from fuseki.book.ui.present import ai_text

    parser = argparse.ArgumentParser(add_help=False)
    ai_text.add_ai_options(parser)
    return parser.parse_args([])


def _first_line(exc: Exception) -> str:
    """An exception as one line (a driver's message can run over several)."""
    text = str(getattr(exc, "orig", None) or exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _side_by_side(panels: list[list[str]]) -> str:
    """Text panels next to each other, as many a row as the terminal is wide."""
    width = max(len(line) for panel in panels for line in panel) + 3
    per_row = max(1, min(len(panels), shutil.get_terminal_size((160, 24)).columns // width))
    blocks = []
    for start in range(0, len(panels), per_row):
        group = panels[start:start + per_row]
        height = max(len(panel) for panel in group)
        rows = ["".join(panel[i].ljust(width) if i < len(panel) else " " * width for panel in group).rstrip()
                for i in range(height)]
        blocks.append("\n".join(rows))
    return "\n\n".join(blocks)


def plain(doc: str) -> str:
    """A command's docstring as the shell's help shows it: without the reStructuredText
    double backticks and the source's indentation."""
    return inspect.cleandoc(doc).replace("``", "")


def _complete_path(text: str, folders_only: bool) -> list[str]:
    folder, _, stem = text.rpartition("/")
    base = Path(folder or ".").expanduser() if folder or not text.startswith("/") else Path("/")
    try:
        entries = sorted(base.iterdir())
    except OSError:
        return []
    prefix = folder + "/" if folder or text.startswith("/") else ""
    return [prefix + e.name + ("/" if e.is_dir() else "")
            for e in entries if e.name.startswith(stem) and (e.is_dir() or not folders_only)]
