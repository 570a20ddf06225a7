"""The opening book as a move chooser: ``genmove`` asks the book first.

``BookChooser.choose(board, color)`` asks ``Book.next_moves`` for the position
(any orientation: the book answers in the asked one) and picks a move by
policy among the book moves played in at least ``min_games`` games:

- ``best``: the most played move (ties: the book's order, i.e. point order);
- ``weighted``: at random, in proportion to ``games ** (1 / temperature)``
  (temperature 1: in proportion to games; lower is greedier, higher flatter);
- ``winrate``: the best win rate for the player to move (ties: more games);
- ``sound``: as ``best``, among the moves whose stored AI loss (KataGo's points lost,
  ``book.analysis.ai.next_move_values``: its search's values, else the stored position after the move)
  is at most ``max_loss``; a move with no stored values is kept (unknown is not bad), and when
  every move is skipped the chooser answers as out of book (the corner book, then the next
  chooser of the chain, play).

KataGo's values are only read, never asked for: ``ai_stores()`` opens ``book.analysis.ai.AiValueStores``
(the book's own ``ai_values`` table, then the cache file ``ai_cache``, any network, the rules
and komi ``ai_rules`` / ``ai_komi``) at the first question and keeps None when neither has the
table, so that a book without values costs one look at its tables.  ``ai_lines`` gives the
analysis commands (``engine.gtp.commands.analysis``, which never imports the book) the values of
the game's own rules and komi (``ai_stores(rules, komi)``: one set of stores per rules and komi
asked, a few kept), each move's with KataGo's line (``AiLine.pv``) and whether its values are
deep enough to be shown as KataGo's (``AiLine.deep``, ``deep_figures``); with ``verbose`` it
says once per rules and komi when a position has values for the settings' ``ai_rules`` and
``ai_komi`` but none for the game's (a game at the engine's default komi 7.5, no ``komi`` sent,
on the built-in book's 6.5 values).  ``corner_candidates`` keeps the corner book's counts within
the book's games (``within_games``: an older corner book counts times, not games).

A book move stands for its orbit under the position's own symmetry
(``MoveStat.points``); one of the orbit's legal points is drawn with the
seeded rng.  Every point is checked with ``board.legal_reason`` first: a move
that is illegal now (ko, superko, a position reached by another move order)
is skipped and the policy picks again among the rest.  A book pass is never
played (a record's pass says nothing about the opening); out of book the
chooser answers None, and ``Game.choose`` asks the next chooser of the chain.

``BookChooser`` implements the engine's contract (``engine.players.chooser``): a ``Chooser``
whose ``choose`` answers a ``MoveChoice`` (source "book", "ai line" or "corner book"; its
comment says why, and ``--verbose`` logs it) and the chain's ``Advisor`` (``next_moves``,
``min_games``, ``corner_candidates``, ``ai_lines``).

The book is opened read-only and lazily, at the first question, so that the
engine answers its first command within the start-up budget; a book that
cannot be opened is reported once on the log and the engine plays without it.
With ``verbose`` what the choice passed over (illegal or unsound book moves, out of book) is
logged; the choice itself is the result's comment.

Deliberately no import of numpy, numba or SQLAlchemy at import time.
"""

from __future__ import annotations

import os
import random
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from fuseki.book.play.policies import policy_order
from fuseki.engine.config import POLICIES
from fuseki.engine.core.base import COLOUR_LETTER, opponent, point_to_vertex
from fuseki.engine.players.chooser import Chooser, MoveChoice, eligible

LINE_MOVES = 10  # the most moves of a stored line played past its position (its later moves rest on fewer visits)


@dataclass(frozen=True)
class Choice:
    """What the policy picked: the point to play and the book move it stands for."""

    point: int
    move: object  # the MoveStat
    skipped: tuple[tuple[int, str], ...] = ()  # (point, reason) of illegal book moves passed over


def pick(moves: Sequence, board, color: int, policy: str = "best", min_games: int = 1,
         temperature: float = 1.0, rng: random.Random | None = None) -> Choice | None:
    """The legal book move to play, or None when no eligible book move is legal.

    ``moves`` are ``MoveStat``-like (``point``, ``points``, ``games``,
    ``winrate``) in the board's orientation.  Does not change ``board``.
    """
    rng = rng or random.Random()
    skipped = []
    for move in policy_order(eligible(moves, min_games), policy, temperature, rng):
        points = tuple(move.points) or (move.point,)
        legal = []
        for point in points:
            reason = board.legal_reason(color, point)
            if reason is None:
                legal.append(point)
            else:
                skipped.append((point, reason))
        if legal:
            return Choice(rng.choice(legal), move, tuple(skipped))
    return None


# --- opening the book -----------------------------------------------------------------

def sqlite_file(location: str) -> str | None:
    """The file behind a plain path or a ``sqlite:///`` URL; None for other URLs (PostgreSQL)."""
    if "://" not in location:
        return location
    if location.startswith("sqlite:///"):
        return location[len("sqlite:///"):] or None
    return None


class LazyBook:
    """A read-only ``Book`` opened at first use; None (reported once) when it cannot be."""

    def __init__(self, location: str, log: Callable[[str], None] | None = None):
        self.location = location
        self.log = log or _stderr
        self._book = None
        self._failed = False
        # the GTP loop's warm-up thread may open the book while a genmove asks for it
        self._opening = threading.Lock()

    def get(self):
        """The open Book, or None when there is no usable book at ``location``."""
        if self._book is None and not self._failed:
            with self._opening:
                if self._book is None and not self._failed:
                    self._book = self._open()
                    self._failed = self._book is None
        return self._book

    def _open(self):
        path = sqlite_file(self.location)
        if path is not None and path != ":memory:" and not os.path.isfile(path):
            # Book.open would create an empty database; a missing book is no book.
            self.log(f"fuseki: book {self.location} not found; playing without the book")
            return None
        try:
            from fuseki.book.storage.store import Book

            return Book.open(self.location, readonly=True)
        except Exception as exc:  # noqa: BLE001 - any failure to open means "no book", never a crash
            self.log(f"fuseki: cannot open book {self.location} ({type(exc).__name__}: {exc}); "
                      "playing without the book")
            return None

    def close(self) -> None:
        if self._book is not None:
            self._book.close()
            self._book = None


STORES_KEPT = 4  # sets of stores (one per rules and komi asked) kept open at once


@dataclass(frozen=True)
class AiLine:
    """A book move's stored AI values for the player who plays it (``book.analysis.ai.MoveValues``'
    figures) and KataGo's principal variation from it: points in the asked board's orientation,
    starting with a point of the move's orbit; () when no line is stored."""

    winrate: float
    score_lead: float
    loss: float
    visits: int
    pv: tuple[int, ...]
    position_visits: int = 0  # the root visits of the position's search
    best_visits: int = 0  # the visits of the best move the loss is measured against
    # KataGo's figures may be shown (``deep_figures``): the move's own values and the position's
    # search each of at least MARK_VISITS visits; ``deep_loss`` (``book.analysis.ai.deep``): the
    # best move's too, as for a mark
    deep: bool = False
    deep_loss: bool = False


class BookChooser(Chooser):
    """The ``Chooser`` and ``Advisor`` that plays from the opening book; None when out of book
    (see module doc)."""

    name = "book"

    def __init__(self, location: str, policy: str = "best", min_games: int = 1,
                 temperature: float = 1.0, seed: int | None = None, verbose: bool = False,
                 log: Callable[[str], None] | None = None, corner_book: bool = True,
                 corner_until: int = 0, max_loss: float = 2.0, ai_rules: str = "japanese",
                 ai_komi: float = 6.5, ai_cache=None):
        if policy not in POLICIES:
            raise ValueError(f"unknown book policy {policy!r} (one of {', '.join(POLICIES)})")
        self.policy, self.min_games, self.temperature = policy, min_games, temperature
        self.corner_book, self.corner_until = corner_book, corner_until
        self._said_no_corners = False
        self.verbose = verbose
        self.log = log or _stderr
        self.rng = random.Random(seed)
        self.opener = LazyBook(location, self.log)
        self.warmed = None  # the warm-up's answer for the empty 19x19 board, once it has run
        self.max_loss, self.ai_rules, self.ai_komi, self.ai_cache = max_loss, ai_rules, ai_komi, ai_cache
        self._stores = None  # (book, {(rules, komi): AiValueStores or None}) once looked for
        self._stores_lock = threading.Lock()
        self._said_other: set[tuple[str, float]] = set()  # rules and komi said to have no values (verbose)
        self._games = None  # (book, its version, {board size: games}) for the corner book's counts

    @property
    def book(self):
        """The open Book, or None (opened at first use)."""
        return self.opener.get()

    def warm_up(self) -> None:
        """Open the book now (SQLAlchemy's import and the file) and answer the empty 19x19
        board (the first query's connection, statements and pages): called by the GTP loop on a
        thread from the start, so that the first ``book_moves`` or ``genmove`` does not wait for
        them."""
        if self.opener.get() is None:
            return
        from fuseki.engine.core.board import Board

        board = Board(19)
        self.warmed = self.next_moves(board, board.to_move)
        if self.policy == "sound":  # its first genmove reads the stored values: open them now too
            stores = self.ai_stores()
            if stores is not None:
                stores.values(board, board.to_move)

    def next_moves(self, board, color: int):
        """The book's ``NextMoves`` for ``color`` to play on ``board``, or None without a book."""
        book = self.book
        if book is None:
            return None
        return book.next_moves(board, to_move=color)

    def corner_moves(self, board, color: int):
        """The corner book's ``CornerMoves`` of each corner (``book.analysis.patterns.corners``), or None:
        no book, no corner book in it, the corner book switched off or past ``corner_until``."""
        book = self.book
        if book is None or not self.corner_book:
            return None
        if self.corner_until and len(board.moves) + 1 > self.corner_until:
            return None
        from fuseki.book.analysis.patterns import corners

        found = corners.of_book(book, board, color)
        if found is None and not self._said_no_corners:
            self._said_no_corners = True
            self.log(f"fuseki: the book {self.opener.location} has no corner book "
                     "(fuseki corners --book BOOK builds it); playing without it")
        return found

    def corner_candidates(self, board, color: int) -> list | None:
        """The corner book's moves (``CornerMove``: ``point``, ``points``, ``games``, ``winrate``)
        for the analysis commands, the last move's corner first (``corner_chooser.candidates``);
        None as ``corner_moves``."""
        from fuseki.book.play.corner_chooser import candidates

        found = self.corner_moves(board, color)
        if found is None:
            return None
        return candidates(within_games(found, lambda: self.games_of_size(board.size)), board, color)

    def games_of_size(self, size: int) -> int | None:
        """The book's games of boards of ``size`` (None without a book); kept while the book's
        ``version`` stays (a book of games may grow under a running engine)."""
        book = self.book
        if book is None:
            return None
        version = book.version()
        if self._games is None or self._games[0] is not book or self._games[1] != version:
            self._games = (book, version, {})
        known = self._games[2]
        if size not in known:
            known[size] = book.stored_games.of_size(size)
        return known[size]

    # --- KataGo's stored values: read, never asked (see the module docstring) ---

    def ai_stores(self, rules: str | None = None, komi: float | None = None):
        """The book's and the cache file's stored AI values (``book.analysis.ai.AiValueStores``) for
        ``rules`` and ``komi`` (default: the settings' ``ai_rules`` and ``ai_komi``), or None: no
        book, neither has an ``ai_values`` table, or a komi no value can be stored for (not a
        whole or half number)."""
        book = self.book
        if book is None:
            return None
        asked = (self.ai_rules if rules is None else rules, self.ai_komi if komi is None else komi)
        if asked[1] * 2 != int(asked[1] * 2):
            return None
        with self._stores_lock:
            if self._stores is None or self._stores[0] is not book:
                for old in (self._stores[1].values() if self._stores is not None else ()):
                    if old is not None:
                        old.close()
                self._stores = (book, OrderedDict())
            kept = self._stores[1]
            if asked not in kept:
                kept[asked] = self._open_stores(book, *asked)
                while len(kept) > STORES_KEPT:  # a controller may send any number of komi values
                    _, old = kept.popitem(last=False)
                    if old is not None:
                        old.close()
            kept.move_to_end(asked)
            return kept[asked]

    def _open_stores(self, book, rules: str, komi: float):
        from fuseki.book.analysis.ai import AiValueStores

        try:
            stores = AiValueStores.open(book, self.ai_cache, rules, komi)
        except Exception as exc:  # noqa: BLE001 - no values is what a store that cannot be read gives
            self.log(f"fuseki: cannot read the stored AI values ({type(exc).__name__}: {exc}); "
                     "playing without them")
            return None
        if not stores.dbs:
            stores.close()
            return None
        return stores

    def ai_move_values(self, board, color: int, moves) -> list | None:
        """KataGo's stored values of each of ``moves`` (``point``, ``points``) for ``color`` on
        ``board``: per move a ``book.analysis.ai.MoveValues`` (``winrate``, ``score_lead``, ``loss`` for
        the mover, ``source``) or None; None when nothing is stored for the position."""
        stores = self.ai_stores()
        if stores is None or not moves:
            return None
        from fuseki.book.analysis.ai import next_move_values

        values = stores.values(board, color)
        if values is None:
            return None
        return next_move_values(values, board, color, moves, stores.values)

    def ai_lines(self, board, color: int, moves, rules: str | None = None,
                 komi: float | None = None) -> list | None:
        """As ``ai_move_values``, for ``rules`` and ``komi`` (default: the settings'), each
        move's values as an ``AiLine`` with KataGo's line; None when nothing is stored for the
        position for them."""
        stores = self.ai_stores(rules, komi)
        if stores is None or not moves:
            return None
        from fuseki.book.analysis.ai import deep, next_move_values
        from fuseki.book.analysis.ai_lines import move_line

        values = stores.values(board, color)
        if values is None:
            if self.verbose:
                self._say_other_settings(board, color, rules, komi)
            return None
        found = next_move_values(values, board, color, moves, stores.values)
        return [None if ai is None else AiLine(ai.winrate, ai.score_lead, ai.loss, ai.visits,
                                                move_line(ai, values, board, color, move, stores.values),
                                                ai.position_visits, ai.best_visits, deep_figures(ai), deep(ai))
                for move, ai in zip(moves, found)]

    def _say_other_settings(self, board, color: int, rules: str | None, komi: float | None) -> None:
        """Say once per rules and komi (``verbose``) that the position has no values for them
        while it has some for the settings' ``ai_rules`` and ``ai_komi``: a game at komi 7.5 (the
        engine's default, when no ``komi`` is sent) on a book annotated at 6.5 gets the players'
        figures, and the user should know why."""
        asked = (self.ai_rules if rules is None else rules, self.ai_komi if komi is None else komi)
        own = (self.ai_rules, self.ai_komi)
        if asked == own or asked in self._said_other:
            return
        stores = self.ai_stores()
        if stores is None or stores.values(board, color) is None:
            return
        self._said_other.add(asked)
        self.log(f"fuseki: no KataGo values stored for komi {asked[1]:g} and {asked[0]} rules (the book has "
                 f"them for komi {own[1]:g} and {own[0]} rules): the analysis lines give the players' figures; "
                 f"send komi {own[1]:g} for KataGo's")

    def _sound(self, board, color: int, moves) -> tuple[list, list[tuple[int, str]]]:
        """(the eligible ``moves`` the ``sound`` policy may play, (point, reason) of the others).

        Where some of the position's human moves have deep stored values (``book.analysis.ai.deep``:
        the move's own, the position's search and the best move's, each of ``MARK_VISITS``
        visits), only those may be played, and of them only the ones whose lead is within the
        noise (``noise_margin`` of the two moves' visits) of the best human move's, and whose
        loss against KataGo's best is at most ``max_loss``: the most played of them is played
        (``pick`` orders ``sound`` as ``best``).  Where none has deep values, every eligible move
        stays (the human book, as ``best``).  docs/engine.md, "The sound policy", has the figures."""
        from fuseki.book.analysis.ai import deep, noise_margin

        moves = eligible(moves, self.min_games)
        values = self.ai_move_values(board, color, moves)
        judged = [(move, ai) for move, ai in zip(moves, values or []) if deep(ai)]
        if not judged:
            return moves, []
        top_move, top = max(judged, key=lambda pair: (pair[1].score_lead, pair[0].games))
        kept, skipped = [], []
        for move, ai in zip(moves, values):
            if not deep(ai):
                skipped.append((move.point, "no deep AI values where other moves have them"))
            elif move is not top_move and ai.score_lead < top.score_lead - noise_margin(ai.visits, top.visits):
                skipped.append((move.point, f"AI lead {ai.score_lead:+.1f}, under the best book move's "
                                            f"{top.score_lead:+.1f} by more than the noise"))
            elif ai.loss > self.max_loss:
                skipped.append((move.point, f"AI loss {ai.loss:.1f} > {self.max_loss:g} points"))
            else:
                kept.append(move)
        # the log names the moves passed over for a less played one, not the rarer ones
        most = max((move.games for move in kept), default=0)
        games = {move.point: move.games for move in moves}
        return kept, [(point, why) for point, why in skipped if games[point] > most]

    def line_move(self, board, color: int) -> int | None:
        """The next move of KataGo's stored line, where the game is still on it: the nearest
        earlier position (at most ``LINE_MOVES`` moves back) with stored values, whose move
        played there has deep values (``book.analysis.ai.deep``) and a line (``ai_lines.move_line``),
        every move since played as the line says, and the line's next move ``color``'s and
        legal; else None.  Stateless (the game's own moves are read back), so ``undo`` and
        ``loadsgf`` need nothing.  Never asks KataGo."""
        stores = self.ai_stores()
        if stores is None or not board.moves:
            return None
        from fuseki.book.analysis.ai import OnePoint, deep, next_move_values
        from fuseki.book.analysis.ai_lines import move_line, starting_at
        from fuseki.engine.core.base import PASS

        back, since = board.copy(), []
        for mover, point in reversed(board.moves[-LINE_MOVES:]):
            back.undo()
            since.insert(0, point)
            if point == PASS:
                return None
            values = stores.values(back, mover)
            if values is None:
                continue
            move = OnePoint(point, (point,))
            ai = next_move_values(values, back, mover, [move], stores.values)[0]
            if not deep(ai):
                return None
            line = starting_at(back, mover, move_line(ai, values, back, mover, move, stores.values), point)
            if len(line) <= len(since) or list(line[:len(since)]) != since:
                return None
            follows = mover if len(since) % 2 == 0 else opponent(mover)
            nxt = line[len(since)]
            if follows != color or nxt == PASS or board.legal_reason(color, nxt) is not None:
                return None
            return nxt
        return None

    def choose(self, board, color: int) -> MoveChoice | None:
        """The book's move (source "book"), else with ``sound`` KataGo's stored line ("ai
        line"), else the corner book's ("corner book"), or None: out of book."""
        found = self.next_moves(board, color)
        moves = found.moves if found is not None else []
        condemned: list[tuple[int, str]] = []
        if self.policy == "sound" and moves:
            moves, condemned = self._sound(board, color, moves)
        choice = pick(moves, board, color, self.policy, self.min_games, self.temperature, self.rng)
        if self.verbose:
            self._report_condemned(board, color, condemned)
        if choice is None and self.policy == "sound":
            line = self.line_move(board, color)
            if line is not None:
                return MoveChoice(line, "ai line", f"ai line {point_to_vertex(line, board.size)} (out of the "
                                                   "book; KataGo's stored line, which the game has followed)")
        if choice is None and found is not None:
            corner = self._choose_corner(board, color)
            if corner is not None:
                return corner
        if self.verbose:
            self._report(board, color, found, choice, bool(condemned))
        if choice is None:
            return None
        move = choice.move
        return MoveChoice(choice.point, "book", f"book {point_to_vertex(choice.point, board.size)} "
                                                f"({self.policy}; {move.games} of {found.total} games, "
                                                f"{move.winrate:.0%} won by the mover)")

    def _report_condemned(self, board, color: int, condemned) -> None:
        who = COLOUR_LETTER[color]
        for point, reason in condemned:
            self.log(f"fuseki: genmove {who}: book move {point_to_vertex(point, board.size)} skipped ({reason})")

    def _choose_corner(self, board, color: int) -> MoveChoice | None:
        from fuseki.book.play.corner_chooser import pick_corner

        found = self.corner_moves(board, color)
        if not found:
            return None
        choice = pick_corner(found, board, color, self.policy, self.min_games, self.temperature, self.rng)
        if choice is None:
            return None
        if self.verbose:
            who = COLOUR_LETTER[color]
            for point, reason in choice.skipped:
                self.log(f"fuseki: genmove {who}: corner book move {point_to_vertex(point, board.size)} "
                         f"skipped ({reason})")
        move = choice.move
        return MoveChoice(choice.point, "corner book",
                          f"corner book {point_to_vertex(choice.point, board.size)} (out of the whole-board book; "
                          f"corner {choice.corner}: played {move.games} times in a corner, "
                          f"{move.winrate:.0%} won by the mover)")

    def _report(self, board, color: int, found, choice: Choice | None, condemned: bool = False) -> None:
        who = COLOUR_LETTER[color]
        if choice is None:
            why = ("no book" if found is None else "position not in book" if not found.moves
                   else f"no legal book move with >= {self.min_games} games"
                   + (f" and an AI loss of at most {self.max_loss:g} points" if condemned else ""))
            self.log(f"fuseki: genmove {who}: out of book ({why}); asking the next chooser")
            return
        for point, reason in choice.skipped:
            self.log(f"fuseki: genmove {who}: book move {point_to_vertex(point, board.size)} "
                     f"skipped ({reason})")


def deep_figures(value) -> bool:
    """KataGo's figures of a move (``book.analysis.ai.MoveValues``: win rate, lead) may be shown
    as KataGo's: the move's own values and the position's search each of at least
    ``MARK_VISITS`` visits (the threshold of the marks; shallower values are noise)."""
    from fuseki.book.analysis.ai import MARK_VISITS

    return min(value.visits, value.position_visits) >= MARK_VISITS


def within_games(found: list, games) -> list:
    """The corner book's ``CornerMoves`` with each continuation's ``games`` a number of games.

    A corner book counts games (``corners.counts_games``): ``found`` as it is.  An older one (the
    built-in book's) has only the times a continuation was played, over every corner of every
    game (the empty corner's 4-4 point once in each corner a game plays it, up to four times a
    game: 730,043 times in the built-in book's 369,210 games); there, where a corner's count (its
    continuations and tenuki, ``total``) is above the book's ``games``, each continuation's games
    (and the tenuki's) are its times scaled by ``games / total``, at least 1: an estimate, the
    shares kept to rounding, the win rates (wins of the times) exactly, and the corner's games are
    ``min(total, games)``.  ``games``: a callable giving the book's games of the board's size
    (asked only for an older corner book; None from it: ``found`` as is).  The one place both the
    engine's analysis commands and the web page take a corner's games from."""
    from dataclasses import replace

    if all(corner.games is not None for corner in found):
        return found
    book_games = games()
    if not book_games:
        return found
    scaled = []
    for corner in found:
        total = corner.total
        if corner.games is not None:
            scaled.append(corner)
        elif total <= book_games:
            scaled.append(replace(corner, games=total, tenuki_games=corner.tenuki))
        else:
            moves = [replace(m, games=max(1, round(m.times * book_games / total))) for m in corner.moves]
            scaled.append(replace(corner, moves=sorted(moves, key=lambda m: (-m.games, m.point)), games=book_games,
                                  tenuki_games=round(corner.tenuki * book_games / total)))
    return scaled


def book_corners(book, board, color: int) -> list | None:
    """``corners.of_book`` with its counts as games (``within_games``; the book's games counted
    only for an older corner book): what the web page, ``fuseki corners`` and the shell show."""
    from fuseki.book.analysis.patterns import corners

    found = corners.of_book(book, board, color)
    return None if found is None else within_games(found, lambda: book.stored_games.of_size(board.size))


def book_choice(settings) -> tuple[str | None, str]:
    """(the book to open or None, the line ``fuseki-gtp`` says of it at start).

    The book the settings name (``--book``, ``$FUSEKI_BOOK``, ``[book] path``; an empty
    path: none), else the one at the default location if it exists, else the built-in book
    of the package (``book.model.builtin``).  Opens nothing.
    """
    from pathlib import Path

    from fuseki.book.model import builtin
    from fuseki.engine.config import DEFAULT_BOOK, book_location

    if not settings.book.path:
        return None, "fuseki: no book"
    location = book_location(settings)
    if location != str(Path(DEFAULT_BOOK).expanduser()) or os.path.exists(location):
        return location, f"fuseki: book: {location}"
    if builtin.available():
        return str(builtin.PATH), f"fuseki: book: {builtin.label()}"
    return None, f"fuseki: no book (none at {location}, and this installation has no built-in book)"


def from_settings(settings, verbose: bool = False,
                  log: Callable[[str], None] | None = None) -> BookChooser | None:
    """The book chooser the settings ask for (``book_choice``), or None without a book.

    Opens nothing: the book is opened at the first ``genmove`` or analysis command.
    """
    from fuseki.engine.config import ai_cache_path

    location, _line = book_choice(settings)
    if location is None:
        return None
    book = settings.book
    # With a fallback engine, ``sound`` hands it the move where the book and KataGo's line end,
    # before the corner book: the corner book's joseki then cost 5.2 points by move 30 against
    # KataGo at 1 visit, the engine 0.0 without it (docs/engine.md, "The sound policy").
    corner_book = book.corner_book and not (book.policy == "sound" and settings.fallback_engine)
    return BookChooser(location, book.policy, book.min_games, book.temperature,
                       seed=settings.seed, verbose=verbose, log=log, corner_book=corner_book,
                       corner_until=book.corner_until, max_loss=settings.max_loss,
                       ai_rules=settings.ai_rules, ai_komi=settings.ai_komi, ai_cache=ai_cache_path())


def _stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
