"""The book's popular mistakes, from the stored AI values only (``fuseki ai mistakes``).

A *popular mistake* is a next move of a position reached by at least ``min_games`` games
that the ``?`` mark's rule marks (``book.analysis.ai.marks``, ``loses``: played in ``POPULAR``
(10%) or more of those games, losing ``MISTAKE_POINTS`` (1.5) points or more clear of the
noise, from values of at least ``visits_min`` visits: by default the marks' own
``MARK_VISITS``), so the list and the tables' ``?`` marks name the same moves.
The numbers are read, never computed: KataGo is not asked.

1. The positions: every canonical key with stored values for the rules and komi asked (the
   ``ai_values`` table of the book, and of the user's cache file: ``AiValueStores.dbs``) that
   the book reaches with at least ``min_games`` games (``annotate.popular_positions``).
2. Each one's board is rebuilt (``annotate.BoardFinder``: a game that reached it, or a walk of
   a statistics book), its next moves read (``Book.next_moves``, whose ``total`` is the
   position's games) and its stored values (``AiValueStores.values``, the deepest stored).
3. A move's values and loss are ``book.analysis.ai.next_move_values``' (KataGo's candidate, else the
   stored position after the move); ``visits`` the visits behind them.  The better move is the
   one of least loss among KataGo's candidates and the position's popular moves (the best
   evaluated), those of at least ``visits_min`` visits when there are any, with its line
   (``book.analysis.ai_lines.move_line``); a move that none of them beats is not listed.

``find(...)`` gives them most played first (then the larger loss); ``sgf_text(...)`` one
SGF game tree with a variation per mistake: the moves to the position (setup stones where no
sequence of legal moves gives it), then the mistake and the better move with its line as two
branches, comments giving the figures.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fuseki.book.analysis import annotate
from fuseki.book.analysis.ai import MARK_VISITS, POPULAR, AiValueStores, loses, next_move_values
from fuseki.book.analysis.ai import MISTAKE_POINTS as MARK_POINTS
from fuseki.book.analysis.ai_lines import move_line, starting_at
from fuseki.book.model.stats import ratio
from fuseki.book.storage.store import Book
from fuseki.engine.core.base import (
    BLACK,
    COLOUR_LETTER,
    COLOUR_NAME,
    PASS,
    WHITE,
    IllegalMove,
    opponent,
    point_to_sgf,
    point_to_vertex,
)
from fuseki.engine.core.board import Board

POPULAR_SHARE = POPULAR  # share of a position's games that makes a move popular: the mark's
MISTAKE_POINTS = MARK_POINTS  # loss, in points, that makes a move a mistake: the mark's
MIN_GAMES = 20         # default --min-games: fewer games make a 10% share a game or two


def default_visits() -> int:
    """The fewest visits a value needs to count: the marks' own (``book.analysis.ai.MARK_VISITS``)."""
    return MARK_VISITS


@dataclass(frozen=True)
class Mistake:
    """A popular mistake (points in ``board``'s orientation; figures for the player to move)."""

    key: int                  # the position's canonical key (unsigned)
    board: Board              # the position, as rebuilt
    to_move: int
    point: int                # the move
    games: int                # games that played it
    total: int                # games of the position
    loss: float               # points it loses (stored)
    visits: int               # visits behind its values
    line: tuple[int, ...]     # KataGo's line from it
    better: int               # the best evaluated move
    better_loss: float
    better_visits: int
    better_line: tuple[int, ...]
    settings: object          # the values' ``AiSettings`` (rules, komi, network, visits asked)

    @property
    def share(self) -> float:
        return ratio(self.games, self.total)

    def settings_text(self) -> str:
        s = self.settings
        return f"{s.rules} rules, komi {s.komi:g}, {s.visits} visits asked" + (f", {s.network}" if s.network else "")


@dataclass
class Scan:
    """What ``find`` looked at: positions with stored values and enough games, and of those the
    ones whose board was not found (reached only through positions of fewer games)."""

    positions: int = 0
    missing: int = 0


def stored_keys(stores: AiValueStores) -> set[int]:
    """The canonical keys (unsigned) with values stored for the stores' rules and komi."""
    from sqlalchemy import select

    from fuseki.book.queries import ai_values
    from fuseki.book.queries.ai_values import AiSettings
    from fuseki.engine.core.zobrist import to_unsigned

    cols = ai_values.ai_values.c
    halves = AiSettings(stores.rules, stores.komi, "", 0).row_key()["komi_halves"]
    found: set[int] = set()
    for db in stores.dbs:
        with db.connect() as conn:
            rows = conn.execute(select(cols.key).distinct().where(cols.rules == stores.rules,
                                                                  cols.komi_halves == halves))
            found.update(to_unsigned(int(key)) for (key,) in rows)
    return found


def find(book: Book, stores: AiValueStores, min_games: int = MIN_GAMES, visits_min: int | None = None,
         share: float = POPULAR_SHARE, points: float = MISTAKE_POINTS,
         progress: Callable[[int, int], None] | None = None) -> tuple[list[Mistake], Scan]:
    """(the popular mistakes, most played first; what was scanned): see the module docstring."""
    if min_games < 1:
        raise ValueError("--min-games must be at least 1")
    visits_min = default_visits() if visits_min is None else visits_min
    if visits_min < 1:
        raise ValueError("--visits-min must be at least 1")
    every = annotate.popular_positions(book, min_games)
    stored = stored_keys(stores)
    chosen = [p for p in every if p.key in stored]
    scan = Scan(positions=len(chosen))
    finder = annotate.BoardFinder(book, [p.key for p in chosen], [p.key for p in every])
    found: list[Mistake] = []
    for done, position in enumerate(chosen, 1):
        at = finder.find(position.key)
        if at is None:
            scan.missing += 1
        else:
            found += _mistakes_at(book, stores, position.key, *at, min_games, visits_min, share, points)
        if progress is not None:
            progress(done, len(chosen))
    found.sort(key=lambda m: (-m.games, -m.loss, m.key, m.point))
    return found, scan


def _mistakes_at(book: Book, stores: AiValueStores, key: int, board: Board, side: int, min_games: int,
                 visits_min: int, share: float, points: float) -> list[Mistake]:
    nexts = book.next_moves(board, side)
    if nexts.total < min_games:
        return []
    popular = [m for m in nexts.moves if m.point != PASS and m.games >= share * nexts.total]
    values = stores.values(board, side)
    if not popular or values is None:
        return []
    judged = next_move_values(values, board, side, popular, stores.values)
    # the better move: least loss among KataGo's candidates and the popular moves' values
    # of equal loss (0: leads over the best deep one), the deepest, then the higher lead
    options = [(ai.loss, ai.visits, ai.score_lead, m.point, ai, m) for m, ai in zip(popular, judged)
               if ai is not None]
    options += [(c.loss, c.visits, c.score_lead, c.point, None, c) for c in values.moves if c.point != PASS]
    out = []
    for move, ai in zip(popular, judged):
        if not loses(ai, points, visits_min):
            continue
        others = [o for o in options if move.point not in o[5].points]
        others = [o for o in others if o[1] >= visits_min] or others  # a deep value over a shallow one
        if not others:
            continue
        best_loss, best_visits, _lead, best_point, best_ai, best = min(
            others, key=lambda o: (o[0], -o[1], -o[2], o[3]))
        if best_loss >= ai.loss:  # nothing evaluated does better: no mistake to show against
            continue
        best_line = (move_line(best_ai, values, board, side, best, stores.values) if best_ai is not None
                     else tuple(getattr(best, "pv", ()) or ()))
        line = move_line(ai, values, board, side, move, stores.values)
        out.append(Mistake(key, board, side, move.point, move.games, nexts.total, ai.loss, ai.visits,
                           starting_at(board, side, line, move.point), best_point, best_loss, best_visits,
                           starting_at(board, side, best_line, best_point), values.settings))
    return out


# --- as text and as SGF ---------------------------------------------------------------------

def vertices(points, size: int) -> str:
    return " ".join(point_to_vertex(p, size) for p in points)


def sequence(board: Board) -> list[int] | None:
    """The moves that lead to ``board`` from the empty board, alternating from Black, or None
    when its stones are not those moves' (setup stones, a record's illegal move)."""
    replay = Board(board.size)
    color = BLACK
    for mover, point in board.moves:
        if mover != color:
            return None
        try:
            replay.play(mover, point)
        except IllegalMove:
            return None
        color = opponent(color)
    same = all(sorted(replay.stones(c)) == sorted(board.stones(c)) for c in (BLACK, WHITE))
    return [p for _, p in board.moves] if same else None


def describe(m: Mistake) -> str:
    """The mistake's figures as one comment (games, share, loss, visits)."""
    who = COLOUR_NAME[m.to_move]
    size = m.board.size
    return (f"Popular mistake: {point_to_vertex(m.point, size)} ({who}) played in {m.games} of the "
            f"position's {m.total} games ({m.share:.0%}), loses {m.loss:.1f} points "
            f"(KataGo, {m.visits} visits). Better: {point_to_vertex(m.better, size)} "
            f"(loss {m.better_loss:.1f}, {m.better_visits} visits).")


def sgf_text(mistakes: list[Mistake], komi: float) -> str:
    """One SGF game tree, a variation per mistake (see the module docstring)."""
    size = mistakes[0].board.size if mistakes else 19
    branches = []
    for number, m in enumerate(mistakes, 1):
        moves = sequence(m.board)
        if moves is not None:
            nodes = "".join(f";{'BW'[i % 2]}[{point_to_sgf(p, size)}]" for i, p in enumerate(moves))
            nodes = nodes or ";"
        else:
            stones = "".join(f"{prop}" + "".join(f"[{point_to_sgf(p, size)}]" for p in m.board.stones(color))
                             for prop, color in (("AB", BLACK), ("AW", WHITE)) if m.board.stones(color))
            nodes = f";{stones}PL[{COLOUR_LETTER[m.to_move]}]"
        nodes += f"C[Mistake {number} of {len(mistakes)}: {_escape(m.settings_text())}]"
        branches.append(f"({nodes}{_line_sgf(m.line, m.to_move, size, describe(m))}"
                        f"{_line_sgf(m.better_line, m.to_move, size, _better_text(m))})")
    body = "".join(branches)
    return (f"(;GM[1]FF[4]CA[UTF-8]SZ[{size}]KM[{komi:g}]"
            f"C[fuseki ai mistakes: {len(mistakes)} popular mistakes, most played first]{body})\n"
            if body else f"(;GM[1]FF[4]CA[UTF-8]SZ[{size}]KM[{komi:g}]C[fuseki ai mistakes: none])\n")


def _better_text(m: Mistake) -> str:
    return (f"Better: {point_to_vertex(m.better, m.board.size)}, KataGo's best evaluated move "
            f"(loss {m.better_loss:.1f}, {m.better_visits} visits); its line follows.")


def _line_sgf(line, to_move: int, size: int, comment: str) -> str:
    color, nodes = to_move, []
    for i, point in enumerate(line):
        text = f"C[{_escape(comment)}]" if i == 0 else ""
        nodes.append(f";{COLOUR_LETTER[color]}[{point_to_sgf(point, size)}]{text}")
        color = opponent(color)
    return "(" + "".join(nodes) + ")"


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("]", "\\]")


# --- the years: did players learn? (``fuseki search --by-year --ai``) -------------------------

@dataclass(frozen=True)
class YearMistakes:
    """One year of a position: its games, and of them those that played a move the stored
    values judge a mistake (``mistaken``) or a move with no value of enough visits
    (``unjudged``: neither called good nor bad); ``year`` None for the undated games."""

    year: int | None
    games: int
    mistaken: int
    unjudged: int

    @property
    def share(self) -> float:
        return ratio(self.mistaken, self.games)


def judged(moves, move_values, visits_min: int, points: float = MISTAKE_POINTS) -> tuple[list, list]:
    """(the (move, values) of ``moves`` judged mistakes: ``book.analysis.ai.loses``, the ``?``
    mark's loss rule, with ``points`` and ``visits_min``; the moves with no value of that many
    visits); any share of the games, not only the popular ones: a year's players are judged by
    every move they chose, and a popular one judged a mistake is the table's ``?``."""
    mistaken, unjudged = [], []
    for move, ai in zip(moves, move_values):
        if ai is None or min(ai.visits, ai.position_visits, ai.best_visits) < visits_min:
            unjudged.append(move)
        elif loses(ai, points, visits_min):
            mistaken.append((move, ai))
    return mistaken, unjudged


def years_of_mistakes(profile, move_values, visits_min: int | None = None,
                      points: float = MISTAKE_POINTS) -> tuple[list[YearMistakes], list]:
    """Per year of ``profile`` (``years.date_profile``), the games that played a mistake (see
    ``judged``; ``move_values``: one per ``profile.moves``, as ``next_move_values`` gives them),
    and the mistakes as (move, values)."""
    visits_min = default_visits() if visits_min is None else visits_min
    moves = [entry.move for entry in profile.moves]
    mistaken, unjudged = judged(moves, move_values, visits_min, points)
    bad = {move.points for move, _ in mistaken}
    unknown = {move.points for move in unjudged}
    rows = []
    for row in profile.years:
        counted = [(entry.move.points, entry.by_year.get(row.year, 0)) for entry in profile.moves]
        rows.append(YearMistakes(row.year, row.games, sum(g for p, g in counted if p in bad),
                                 sum(g for p, g in counted if p in unknown)))
    return rows, mistaken
