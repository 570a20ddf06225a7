"""Book extensions to GTP, in the formats GUIs already parse, so players see the book in their client.

- ``book_moves`` (Fuego's name and format): the book's moves for the side to
  move, most played first, space-separated; every point of a move's symmetry
  orbit is listed; illegal points are left out.
- ``gogui-analyze_commands``: GoGui's menu of analyze commands (``type/label/command``):
  ``gfx/Book Moves/book-gfx`` (letters A, B, ... on the book moves, orbit
  points share a letter, shaded by share of games; the status line gives each
  letter's games and win rate), ``pspairs/Book Counts/book-counts`` (games
  played on each point), ``gfx/Book Main Line/book-mainline`` (the most
  played continuation as a ``VAR`` of numbered stones) and
  ``plist/Book Move List/book_moves``.
- ``lz-analyze`` / ``analyze`` (Leela Zero: win rate and prior as integers
  x 10000) and ``kata-analyze`` (KataGo: 0..1 with decimals), each
  ``[color] [interval] [key value ...]``: the response opens with ``=`` and
  one line of ``info move M visits V winrate W prior P lcb L order N pv ...``
  entries follows (Sabaki splits a line on ``info``; Lizzie reads the same),
  with visits = games, winrate = the shrunk win rate (below), prior = share
  of the listed games (an orbit's share split among its points, so priors
  sum to 1), lcb = the Wilson lower bound of the raw win rate, pv = the most
  played continuation.  A move is listed only when it was played in at
  least ``[book] analysis_min_games`` games (default 2, ``--analysis-min-games``),
  whatever ``min_games`` says.  The
  response stays open until the controller sends its next line, which first
  ends it with the empty line (``game.streaming``, see ``engine.gtp``), as
  Leela Zero and KataGo do.  The book does not change while we wait, so the
  line is written once, not every interval; ``fuseki-gtp`` computes it on a thread
  while it reads that next line (``engine.gtp.cli.AsideStream``), which it answers at
  once, the line then holding the entries found so far.  ``maxmoves N`` caps the entries;
  KataGo's other options are accepted and ignored, unknown words refused.

Win rates are the player to move's, as both engines report them by default.
In the analysis lines they are corrected for small samples: ``PRIOR_GAMES``
(2) games at 50% are added to each move's record, so the win rate shown is
``(wins + 1) / (games + 2)``.  A move won in its one game shows 66.7%, not
100%, and Lizzie no longer rings it as the best move beside a move of
thousands of games (whose rate hardly moves).  ``book_moves`` and the GoGui
commands list every move of at least ``min_games`` games (the moves
``genmove`` may play) and show the raw win rate, as before.
When the whole-board book has no move for the position, every command shows the corner
book's candidates instead (the advisor's ``corner_candidates``: what strong players played next
in each corner; see ``book.analysis.patterns.corners``), so a GUI keeps showing joseki after the
whole board leaves the book: GoGui's status line then reads ``corner book, games: ...`` (no
total: a game may play two of the moves in two corners of the same stones, so their sum is no
number of games); the Leela Zero and KataGo lines have no field for where a candidate comes
from, so there they are candidates as any other (visits = the games that played it in a corner
like that one, never more than the book's games).  The web page's corner table shows the same
figures: both take them from ``book_chooser.within_games`` (``BookChooser.corner_candidates``), which
passes a corner book's games as they are and estimates them for an older corner book that
counted only times (a corner shape occurs in several corners of one game: the built-in book's
empty-corner 4-4 point, 730,043 times in 369,210 games, shows 182,544, its times scaled to the
book's games, about the empty board's own 4-4 games).
With no book (or none at the configured path) every command answers
normally with nothing in it: no moves, no labels, no info lines.

KataGo's stored judgement, where the book or the user's AI value cache has it for the game's
komi (``komi``) and rules (``kgs-rules``; before it, the settings' ``[ai] rules``): the
advisor's ``ai_lines``, values read, never asked for (see ``book.play.book_chooser``).  Only deep
values speak for KataGo (``AiLine.deep``: the move's own values and the position's search each
of at least ``book.analysis.ai.MARK_VISITS`` visits, the marks' threshold; a 3-visit value is
noise, and the lines have no field that could tell it from a 400-visit one).  The analysis
lines then speak in one voice, KataGo's: a position where a listed move has deep values lists
the book moves KataGo has deep values for, each with KataGo's win rate for the mover
(``winrate``, and ``lcb`` the same number: its search's bound is not stored, and a client set
to show the LCB would otherwise show the players' figure), its score lead (``scoreLead`` and ``scoreMean``,
``kata-analyze`` only: Leela Zero's format has none) and its principal variation (``pv``,
mapped to the board's orientation: the line stored with the move, else the move then the best
line stored after it, else the move alone; ``book.analysis.ai_lines``); ``visits`` stay the
games that played the move and ``prior`` their share (the circle's size is how often people
played it).  A book move with no deep value of its own is left out of those lines (beside
KataGo's figures the players' win rate would read as KataGo's); ``book_moves`` and GoGui's
commands still list it.  A position with nothing deep stored for the game's komi and rules
(after ``komi 7.5``, or no ``komi`` at all, on a book annotated at 6.5; a position searched
with fewer visits) gets the human lines above, with no AI field at all.  KataGo's own best
moves that nobody played are not added: an entry's visits are its games, and 0 visits would
read as a move nobody should look at.  GoGui's ``book-gfx`` status line gives a letter's ``AI
loss`` in points, from deep values only (``AiLine.deep_loss``: the best move's too, as for a
mark).  ``book_moves`` stays Fuego's plain list of points (its controllers read nothing else).
GTP shows no marks (``book.analysis.ai.marks``) anywhere.
"""

from __future__ import annotations

import math
import re
import string
import sys
from collections.abc import Iterator

from fuseki.engine.gtp.commands.args import SYNTAX, color, count, integer, vertex_text
from fuseki.engine.gtp.commands.registry import command
from fuseki.engine.gtp.protocol import GtpError
from fuseki.engine.players.chooser import eligible

PV_LENGTH = 10      # moves in a continuation (the first included)
PRIOR_GAMES = 2     # imaginary games at 50% added to every move's win rate in analysis lines
LETTERS = string.ascii_uppercase + string.ascii_lowercase
_INT = re.compile(r"[0-9]+")
# KataGo's kata-analyze options (values read: interval, maxmoves; the rest accepted, ignored);
# avoid/allow take PLAYER VERTICES UNTILDEPTH.  An unknown key is a syntax error, as in KataGo.
_KEY_WIDTHS = {"interval": 1, "minmoves": 1, "maxmoves": 1, "ownership": 1, "ownershipStdev": 1,
               "pvVisits": 1, "pvEdgeVisits": 1, "movesOwnership": 1, "movesOwnershipStdev": 1,
               "rootInfo": 1, "avoid": 3, "allow": 3}


# --- the advisor behind the game (the book) ---------------------------------------------

def advice(game, board, to_move: int, min_games: int | None = None) -> tuple[str, list[tuple[object, list[int]]]]:
    """(source, entries): the whole-board book's moves for ``to_move`` on ``board`` as
    (MoveStat, its legal points), most played first, source "book"; when it has none, the
    corner book's (the advisor's ``corner_candidates``: every corner's continuations, the
    opponent's last move's corner first; points that are legal and fill no own eye), source
    "corner book"; ("", []) when neither answers.

    Moves below ``min_games`` (default: the chooser's), passes and moves with no legal
    point are left out.
    """
    for source, moves, eye_ok in _candidates(game, board, to_move, min_games):
        entries = [(move, points) for move in moves if (points := _legal_points(move, board, to_move, eye_ok))]
        if entries:
            return source, entries
    return "", []


def _candidates(game, board, to_move: int, min_games: int | None):
    """(source, eligible moves, whether a move may fill its own eye) of the whole-board book,
    then of the corner book, each asked only if the one before has no legal move (a generator)."""
    chooser = game.advisor
    if chooser is None:
        return
    least = chooser.min_games if min_games is None else min_games
    found = chooser.next_moves(board, to_move)
    if found is None:
        return
    yield "book", eligible(found.moves, least), True
    moves = chooser.corner_candidates(board, to_move)
    if moves:
        yield "corner book", eligible(moves, least), False


# kgs-rules names that KataGo spells otherwise (the rest are KataGo's own names)
KATAGO_RULES = {"new_zealand": "new-zealand"}


def ai_lines(game, board, to_move: int, moves: list) -> list | None:
    """Per move of ``moves``, the advisor's stored AI values for the game's komi and rules
    (``ai_lines``: ``winrate``, ``score_lead``, ``loss`` for the mover and the line ``pv``) or
    None; None for all when nothing is stored for the position (no advisor, a store that fails:
    said on stderr, the book's figures are still shown)."""
    if game.advisor is None or not moves:
        return None
    rules = KATAGO_RULES.get(game.rules, game.rules) if game.rules else None
    try:
        found = game.advisor.ai_lines(board, to_move, moves, rules=rules, komi=game.komi)
    except Exception as exc:  # noqa: BLE001 - the human figures do not depend on it
        print(f"fuseki-gtp: cannot read the stored AI values: {exc!r}", file=sys.stderr)
        return None
    return list(found) if found is not None else None


def _legal_points(move, board, to_move: int, eye_ok: bool) -> list[int]:
    return [p for p in (tuple(move.points) or (move.point,))
            if board.legal_reason(to_move, p) is None and (eye_ok or not board.is_eye(to_move, p))]


def _first_legal_point(game, board, to_move: int) -> int | None:
    """The first point of ``advice``'s first entry, found without checking every other move: a
    main line needs one move a position, and the empty board's 241 analysis lines checked every
    book move's every point at each of their moves (lz-analyze took 7-13 s)."""
    for _source, moves, eye_ok in _candidates(game, board, to_move, None):
        for move in moves:
            for p in (tuple(move.points) or (move.point,)):
                if board.legal_reason(to_move, p) is None and (eye_ok or not board.is_eye(to_move, p)):
                    return p
    return None


def book_entries(game, to_move: int | None = None,
                 min_games: int | None = None) -> list[tuple[object, list[int]]]:
    """The entries of ``advice`` for the game's board (``to_move`` default: the side to move)."""
    board = game.board
    return advice(game, board, board.to_move if to_move is None else to_move, min_games)[1]


def main_line(game, board, to_move: int, first: int, length: int = PV_LENGTH) -> list[int]:
    """``first``, then the most played legal book move after it (the corner book's once the
    whole-board book has none), and so on (``length`` moves at most).

    Plays on a copy of ``board``; stops where neither book has an eligible legal move.
    """
    line, work = [first], board.copy()
    work.play(to_move, first)
    mover = 3 - to_move
    while len(line) < length:
        nxt = _first_legal_point(game, work, mover)
        if nxt is None:
            break
        work.play(mover, nxt)
        line.append(nxt)
        mover = 3 - mover
    return line


# --- Fuego and GoGui ------------------------------------------------------------------

@command("book_moves")
def book_moves(game, args):
    count(args, 0)
    return " ".join(vertex_text(p, game.size) for _, points in book_entries(game) for p in points)


ANALYZE_COMMANDS = (
    "gfx/Book Moves/book-gfx",
    "pspairs/Book Counts/book-counts",
    "gfx/Book Main Line/book-mainline",
    "plist/Book Move List/book_moves",
)


@command("gogui-analyze_commands")
def gogui_analyze_commands(game, args):
    count(args, 0)
    return "\n".join(ANALYZE_COMMANDS)


@command("book-gfx")
def book_gfx(game, args):
    """GoGui gfx: ``LABEL point letter ...``, ``INFLUENCE point share ...``, ``TEXT legend``."""
    count(args, 0)
    board = game.board
    source, entries = advice(game, board, board.to_move)
    entries = entries[:len(LETTERS)]
    if not entries:
        return "TEXT out of book"
    total = sum(move.games for move, _ in entries)
    labels, shades, legend = [], [], []
    judged = ai_lines(game, board, board.to_move, [move for move, _ in entries]) or [None] * len(entries)
    for letter, (move, points), ai in zip(LETTERS, entries, judged):
        for p in points:
            labels.append(f"{vertex_text(p, game.size)} {letter}")
            shades.append(f"{vertex_text(p, game.size)} {move.games / total:.3f}")
        loss = f" AI loss {round(ai.loss, 1) + 0.0:.1f}" if ai is not None and ai.deep_loss else ""
        legend.append(f"{letter} {move.games} {move.winrate:.0%}{loss}")
    return "\n".join([
        "LABEL " + " ".join(labels),
        "INFLUENCE " + " ".join(shades),
        # a corner book's counts are each a move's games, in any of a game's corners like this
        # one: their sum is no number of games (a game may play two of them in two corners)
        (f"TEXT {source}: {total} games; " if source == "book" else f"TEXT {source}, games: ")
        + ", ".join(legend),
    ])


@command("book-counts")
def book_counts(game, args):
    """GoGui pspairs: ``point games`` for every legal book point."""
    count(args, 0)
    return " ".join(f"{vertex_text(p, game.size)} {move.games}"
                    for move, points in book_entries(game) for p in points)


@command("book-mainline")
def book_mainline(game, args):
    """GoGui gfx: ``VAR b Q16 w D4 ...``, the most played continuation from here."""
    count(args, 0)
    entries = book_entries(game)
    if not entries:
        return "TEXT out of book"
    board = game.board
    line = main_line(game, board, board.to_move, entries[0][1][0])
    mover, words = board.to_move, []
    for point in line:
        words += ["b" if mover == 1 else "w", vertex_text(point, game.size)]
        mover = 3 - mover
    return "VAR " + " ".join(words)


# --- Leela Zero and KataGo analysis ---------------------------------------------------

def parse_analyze_args(args: list[str], to_move: int) -> tuple[int, int, int | None]:
    """(color, interval in centiseconds, maxmoves or None) of ``[color] [interval] [key value ...]``.

    Accepts ``lz-analyze 50``, ``lz-analyze B 50``, ``kata-analyze W interval 50 maxmoves 5``.
    """
    rest = list(args)
    if rest and not _INT.fullmatch(rest[0]) and rest[0].lower() in ("b", "w", "black", "white"):
        to_move = color(rest.pop(0))
    interval, maxmoves = 0, None
    if rest and _INT.fullmatch(rest[0]):
        interval = integer(rest.pop(0))  # clamped: no 5000-digit int()
    while rest:
        key = rest.pop(0)
        width = _KEY_WIDTHS.get(key)
        if width is None or len(rest) < width:
            raise GtpError(SYNTAX)
        values, rest = rest[:width], rest[width:]
        if key in ("interval", "maxmoves", "minmoves"):
            if not _INT.fullmatch(values[0]):
                raise GtpError(SYNTAX)
            if key == "interval":
                interval = integer(values[0])
            elif key == "maxmoves":
                maxmoves = integer(values[0])
    return to_move, interval, maxmoves


def wilson_lower(wins: float, games: int, z: float = 1.96) -> float:
    """Lower bound of the Wilson score interval of ``wins`` out of ``games`` (0 for no games)."""
    if games <= 0:
        return 0.0
    p = wins / games
    centre = p + z * z / (2 * games)
    margin = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games))
    return max(0.0, (centre - margin) / (1 + z * z / games))


def shrunk_winrate(winrate: float, games: int, prior_games: float = PRIOR_GAMES) -> float:
    """The win rate with ``prior_games`` games at 50% added: ``(wins + prior/2) / (games + prior)``.

    0.5 for no games; the fewer the games, the closer to 0.5.
    """
    return (winrate * games + prior_games / 2) / (games + prior_games) if games + prior_games else 0.5


def info_entries(game, to_move: int, kata: bool, maxmoves: int | None = None) -> list[str]:
    """One ``info move ...`` entry per legal book point (orbit points repeat their move's figures).

    Only moves of at least ``analysis_min_games`` games; KataGo's figures where values are
    stored for the position, else the shrunk win rate (see the module docstring).
    """
    return list(iter_info_entries(game, game.board, to_move, kata, maxmoves))


def iter_info_entries(game, board, to_move: int, kata: bool, maxmoves: int | None = None) -> Iterator[str]:
    """``info_entries`` one at a time, for ``board``: what an analysis stream yields while the
    GTP loop waits for the next command, which may stop it between two entries (each one main
    line of book look-ups)."""
    entries = advice(game, board, to_move, game.settings.book.analysis_min_games)[1]
    judged = ai_lines(game, board, to_move, [move for move, _ in entries])
    # KataGo's figures only from deep values (the move's and the position's MARK_VISITS)
    judged = [ai if ai is not None and ai.deep else None for ai in judged] if judged is not None else None
    if judged is None or all(ai is None for ai in judged):
        judged = [None] * len(entries)
    else:  # KataGo's voice: the moves it has no deep value for are left out (module docstring)
        kept = [(e, ai) for e, ai in zip(entries, judged) if ai is not None]
        entries, judged = [e for e, _ in kept], [ai for _, ai in kept]
    total = sum(move.games for move, _ in entries) or 1
    out = 0
    symmetric = _symmetric_images(board, to_move) if any(len(points) > 1 for _, points in entries) else None
    for (move, points), ai in zip(entries, judged):
        share = move.games / total / len(points)  # an orbit's share split among its points
        if ai is not None:
            winrate = lcb = ai.winrate
        else:
            winrate = shrunk_winrate(move.winrate, move.games)
            lcb = wilson_lower(move.winrate * move.games, move.games)
        first = None
        for p in points:
            if maxmoves is not None and out >= maxmoves:
                return
            if ai is not None:
                line = ai_line(board, to_move, ai.pv, p)
            else:
                image = symmetric(points[0], p) if first is not None and symmetric else None
                # the line of an orbit's other points: the first one's, turned by the board's own symmetry
                # that takes the first point there (the book answers every orientation alike)
                line = [image[q] for q in first] if image is not None else main_line(game, board, to_move, p)
                first = line if first is None else first
            pv = " ".join(vertex_text(q, game.size) for q in line)
            vertex = vertex_text(p, game.size)
            if kata:
                score = f"scoreMean {ai.score_lead:.6f} scoreLead {ai.score_lead:.6f} " if ai is not None else ""
                fields = (f"visits {move.games} winrate {winrate:.6f} {score}prior {share:.6f} "
                          f"lcb {lcb:.6f} order {out}")
                if p != points[0]:
                    fields += f" isSymmetryOf {vertex_text(points[0], game.size)}"
            else:
                fields = (f"visits {move.games} winrate {round(winrate * 10000)} "
                          f"prior {round(share * 10000)} lcb {round(lcb * 10000)} order {out}")
            out += 1
            yield f"info move {vertex} {fields} pv {pv}"


def ai_line(board, to_move: int, pv, point: int) -> list[int]:
    """KataGo's line ``pv`` (board orientation) shown from ``point``: as stored when it starts
    there, else turned by the board's own symmetry that takes its first move to ``point`` (an
    orbit's other points, or a line stored from another point of the orbit); ``[point]`` when no
    line is stored."""
    from fuseki.engine.core.base import PASS

    pv = list(pv)
    if not pv:
        return [point]
    if pv[0] != point:
        image = _symmetric_images(board, to_move)(pv[0], point)
        if image is None:
            return [point]
        pv = [q if q == PASS else image[q] for q in pv]
    return pv


def _symmetric_images(board, to_move: int):
    """``images(a, b)``: a point table of one of ``board``'s own symmetries (those that leave its
    position's key unchanged) that takes point ``a`` to ``b``; None if none does."""
    from fuseki.engine.core import coords

    keys = board.symmetric_keys(to_move)
    tables = coords.symmetry_table(board.size).tolist()
    own = [tables[s] for s in range(8) if keys[s] == keys[0]]

    def images(a: int, b: int):
        return next((table for table in own if table[a] == b), None)
    return images


def _analyze(game, args, kata: bool) -> str:
    to_move, _interval, maxmoves = parse_analyze_args(args, game.board.to_move)
    # The response stays open until the next input line (engine.gtp); its entries come from a
    # copy of the board, so the loop may run them on a thread while it reads that line.
    game.streaming = iter_info_entries(game, game.board.copy(), to_move, kata, maxmoves)
    return ""


@command("lz-analyze")
def lz_analyze(game, args):
    return _analyze(game, args, kata=False)


@command("analyze")
def analyze(game, args):
    return _analyze(game, args, kata=False)


@command("kata-analyze")
def kata_analyze(game, args):
    return _analyze(game, args, kata=True)
