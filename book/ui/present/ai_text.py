"""``fuseki search --ai``: KataGo's values beside the human next moves, as text.

The options name KataGo (``--katago``, else ``$FUSEKI_KATAGO``, else the one ``.ci/katago``
installed), the visits, rules and komi; the values are the deepest stored ones across the
stores (``book.analysis.ai.AiValueStores``: the book's own, as ``fuseki ai annotate`` or the built-in
book's file keeps them, and the AI value cache in ``$FUSEKI_AI_CACHE``, default
``~/.local/share/fuseki/ai-cache.sqlite``; of KataGo's network, or of any when no KataGo is
found).  ``--visits V`` means at least V: when the deepest stored has fewer and a KataGo is
configured, KataGo is asked at V visits (the command waits for it and says so on stderr),
the answer stored and shown; without ``--visits`` whatever is stored is shown, and KataGo is
asked at ``DEFAULT_VISITS`` only when nothing is.  Each human move shown that is played in at
least ``book.analysis.ai.MOVES_SHARE`` of the games and that the stored search did not evaluate is
evaluated by KataGo with the move forced (``AiJudge.force``, the row's visits), when one is
configured; a move still without values says why (``book.analysis.ai.missing_reason``).

The table: each human next move with its win rate and score lead for the player who plays
it, its loss in points against the best of the moves evaluated for the position (>= 0) and
its visits (``book.analysis.ai.next_move_values``: KataGo's values of the move, else the stored
position after the move's, marked ``*``), then KataGo's own candidates that nobody played
(``AI``); ``--pv`` adds each move's line (KataGo's principal variation) under its row.  The
marks are ``book.analysis.ai.marks``', the one definition every way in shares (``?`` a popular
mistake, ``!`` KataGo's choice that few people play; docs/katago.md, "The marks"), drawn only
from values of ``MARK_VISITS`` visits or more, and a table of a shallower search says so.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from fuseki.engine.config import ai_cache_path
from fuseki.engine.core import base

DEFAULT_VISITS = 32  # KataGo's visits when nothing is stored and --visits is not given


def add_ai_options(p) -> None:
    p.add_argument("--ai", action="store_true",
                   help="show KataGo's win rate, score lead, loss and visits beside each move (asks KataGo when "
                        "no store has the position: see docs/katago.md)")
    p.add_argument("--katago", metavar="CMD", help="KataGo's analysis command (default: $FUSEKI_KATAGO, "
                   "else the one bash .ci/katago installed)")
    p.add_argument("--visits", type=int, default=None, metavar="V",
                   help="at least V visits: when the deepest stored values have fewer, KataGo is asked "
                        f"(default: the deepest stored; {DEFAULT_VISITS} when nothing is stored)")
    p.add_argument("--rules", default="japanese", help="rules KataGo judges by (default japanese)")
    p.add_argument("--komi", type=float, default=6.5, help="komi KataGo judges with (default 6.5)")
    p.add_argument("--pv", action="store_true", help="with --ai: each move's line (KataGo's principal variation)")


def ai_values_for(args, board, found, book=None, shown: int | None = None, ask_unless_none: bool = False):
    """(values, per human move values) of the position of ``found``: the deepest stored values
    (``book.analysis.ai.AiValueStores``), else KataGo's (asked, with progress on stderr: also when
    ``args.visits`` asks for more than is stored); each of the first ``shown`` human moves'
    values from ``book.analysis.ai.next_move_values`` (KataGo's values of the move, else the stored
    position after it), the moves of ``book.analysis.ai.MOVES_SHARE`` of the games or more evaluated
    first when the row lacks them and a KataGo is configured; a ``NoValue`` saying why where
    none.  With ``ask_unless_none`` (the shell), nothing stored and no KataGo configured is
    (None, []) instead of the CommandError that says how to get one."""
    moves = found.moves[:shown] if shown is not None else found.moves
    return ai_values_of_moves(args, board, found.to_move, moves, book, ask_unless_none, total=found.total)


@dataclass(frozen=True)
class NoValue:
    """A move shown without values, and why (``book.analysis.ai.missing_reason``'s words, or KataGo's
    failure)."""

    reason: str


def ai_values_of_moves(args, board, to_move: int, moves, book=None, ask_unless_none: bool = False,
                       total: int | None = None, asked=()):
    """``ai_values_for`` for any next moves of (``board``, ``to_move``), each with ``point`` and
    ``points`` (the corner book's, a whole-board pattern's continuations); ``total``: the games
    of the position, for the share that makes a move evaluated (None: none forced); ``asked``:
    points evaluated whoever played them."""
    from fuseki.book.analysis.ai import MOVES_SHARE, AiValueStores, missing_reason, moves_to_force, next_move_values
    from fuseki.book.analysis.katago import find_command, network_name
    from fuseki.engine import config

    command = args.katago or find_command(config.load().katago)
    network = network_name(command) if command else None  # no KataGo: any network's stored values
    wanted = getattr(args, "visits", None)
    if wanted is not None and wanted < 1:
        from fuseki.book.ui.cli_shared import CommandError

        raise CommandError(f"--visits {wanted}: at least 1")
    stores = AiValueStores.open(book, ai_cache_path(), args.rules, args.komi, network)
    try:
        values = stores.values(board, to_move)
        if values is None and ask_unless_none and not command:
            return None, []
        if values is None or (command and wanted is not None and values.settings.visits < wanted):
            values = _ask_katago(args, board, to_move, command, network, wanted or DEFAULT_VISITS)
        failed = None
        if command and (total is not None or asked):
            points = moves_to_force(values, board, to_move, moves if total is not None else [], total or 0,
                                    MOVES_SHARE, asked)
            if points:
                from fuseki.book.analysis.katago import KataGoError

                try:
                    values = _force(args, board, to_move, values, command, points)
                except KataGoError as exc:  # the stored values still show; the cells say why
                    failed = f"KataGo failed: {exc}"
                    print(f"fuseki: {failed}", file=sys.stderr, flush=True)
        found = next_move_values(values, board, to_move, list(moves), stores.values)
        return values, [v if v is not None else NoValue(failed or missing_reason(board, to_move, m.point,
                                                                                 bool(command)))
                        for v, m in zip(found, moves)]
    finally:
        stores.close()


def _force(args, board, to_move: int, values, command: str, points: list[int]):
    """``values`` with ``points`` evaluated by KataGo with each move forced (``AiJudge.force``),
    stored in the cache file; progress on stderr."""
    from sqlalchemy import create_engine

    from fuseki.book.analysis.ai import AiJudge
    from fuseki.book.analysis.katago import KataGo, answer_timeout

    path = ai_cache_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    cache = create_engine(f"sqlite:///{path}")
    s = values.settings
    try:
        judge = AiJudge(cache, None, s.rules, s.komi, s.visits, network=s.network)
        shown = " ".join(base.point_to_vertex(p, board.size) for p in points)
        print(f"asking KataGo for the moves its search did not evaluate ({shown}; {s.visits} visits each)...",
              file=sys.stderr, flush=True)
        with KataGo(command) as katago:
            judge.katago = katago
            return judge.force(values, board, to_move, points, timeout=answer_timeout(s.visits * len(points)))
    finally:
        cache.dispose()


def _ask_katago(args, board, to_move: int, command: str | None, network: str | None, visits: int):
    from sqlalchemy import create_engine

    from fuseki.book.analysis.ai import AiJudge
    from fuseki.book.analysis.katago import KataGo, KataGoError, answer_timeout
    from fuseki.book.ui.cli_shared import CommandError

    if not command:
        raise CommandError("no KataGo: name one with --katago or $FUSEKI_KATAGO, or run `bash .ci/katago` "
                           "(docs/katago.md)")
    path = ai_cache_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    cache = create_engine(f"sqlite:///{path}")
    try:
        judge = AiJudge(cache, None, args.rules, args.komi, visits, network=network)
        print(f"asking KataGo ({judge.settings.network or 'its network'}, {visits} visits) for this "
              f"position; on a CPU that takes minutes...", file=sys.stderr, flush=True)
        with KataGo(command) as katago:
            judge.katago = katago
            return judge.values([(board, to_move)], timeout=answer_timeout(visits))[0]
    except KataGoError as exc:
        raise CommandError(str(exc)) from None  # the fuseki command prints it as one line
    finally:
        cache.dispose()


def points(value: float) -> str:
    """Points to one decimal, 6 wide; a value that rounds to zero is 0.0, never -0.0."""
    return f"{round(value, 1) + 0.0:6.1f}"


AI_HEAD = "|  AI win %   lead   loss visits"
NO_VALUES = ("no stored AI values for this position (and no KataGo to ask: --katago, $FUSEKI_KATAGO or "
             "bash .ci/katago; docs/katago.md)")
PV_MOVES = 12  # moves of a line shown under its row


def ai_columns(move) -> str:
    """KataGo's columns of a row (a ``book.analysis.ai.MoveValues`` or an ``AiMove``; a ``NoValue`` or
    None: dashes, then why): win rate, lead and loss for the player who plays the move, ``*``
    when they are the position after it's, then the visits behind them."""
    from fuseki.book.analysis.ai import CHILD

    if move is None or isinstance(move, NoValue):
        why = f"  no value: {move.reason}" if move is not None else ""
        return f"|        -      -      -      -{why}"
    after = "*" if getattr(move, "source", None) == CHILD else " "
    return f"| {100 * move.winrate:7.1f}% {points(move.score_lead)} {points(move.loss)}{after}{move.visits:>6}"


def ai_notes(games: list[int], total: int, values) -> list[str]:
    """Each row's mark (``book.analysis.ai.marks``, over the rows together: ``!`` compares a move
    with the most played one) as two spaces and its text, or nothing; ``values``: a
    ``MoveValues``, a ``NoValue`` or None per row."""
    from fuseki.book.analysis.ai import MARK_TEXT, marks

    judged = [None if isinstance(v, NoValue) else v for v in values]
    return [f"  {MARK_TEXT[kind]}" if kind else "" for kind in marks(list(games), total, judged)]


def pv_line(move, size: int) -> str | None:
    """The row's line under it (``--pv``): KataGo's principal variation in GTP vertices, or None."""
    pv = getattr(move, "pv", ())
    if not pv:
        return None
    more = " ..." if len(pv) > PV_MOVES else ""
    return f"{'':10}line: {' '.join(base.point_to_vertex(p, size) for p in pv[:PV_MOVES])}{more}"


def ai_footer(values) -> str:
    """The line under an AI table naming the network, rules, komi and visits; when the
    position's search is under ``book.analysis.ai.MARK_VISITS``, a line before it says the values are
    shallow and no mark is drawn."""
    from fuseki.book.analysis.ai import MARK_VISITS

    s = values.settings
    shallow = ""
    if values.visits < MARK_VISITS:
        shallow = (f"shallow values: {values.visits} visits, under the {MARK_VISITS} a mark needs; no ? or ! "
                   f"mark drawn (fuseki search --ai --visits {MARK_VISITS} with a KataGo searches deeper)\n")
    return (f"{shallow}KataGo: {s.network or 'unknown network'}, {s.rules} rules, komi {s.komi:g}, "
            f"{values.visits} visits; win rate and lead for the player who plays the move, "
            f"loss in points against the best move evaluated with {MARK_VISITS}+ visits, visits of the move's "
            f"own values (*: the position after the move's, KataGo's search did not evaluate the move); AI: "
            f"KataGo's move nobody played, shallow under the {MARK_VISITS} visits a mark needs")


def ai_table(found, values, move_values, size: int, letters: str, pv: bool = False) -> str:
    """The human next moves of ``found`` with their values (``move_values``, one per move
    shown, from ``ai_values_for``) beside them, then KataGo's moves nobody played; with
    ``pv`` each move's line under its row; the last line names the network, rules, komi and
    visits."""
    lines = [f"    move   games  win % {AI_HEAD}"]
    played: set[int] = set()
    total = max(found.total, 1)

    def line_of(move) -> None:
        text = pv_line(move, size) if pv else None
        if text:
            lines.append(text)

    rows = list(zip(found.moves[: len(letters)], move_values))
    notes = ai_notes([human.games for human, _ in rows], total, [ai for _, ai in rows])
    for index, ((human, ai), note) in enumerate(zip(rows, notes)):
        played.update(human.points)
        vertex = base.point_to_vertex(human.point, size)
        lines.append(f"{letters[index]} - {vertex:<5} {human.games:>6}  {100 * human.winrate:5.1f}% "
                     f"{ai_columns(ai)}{note}")
        line_of(ai)
    from fuseki.book.analysis.ai import MARK_VISITS

    for ai in values.moves:
        if not set(ai.points) & played:
            vertex = base.point_to_vertex(ai.point, size)
            shallow = ", shallow" if ai.visits < MARK_VISITS else ""  # under a mark's visits: a glance, no verdict
            lines.append(f"AI  {vertex:<5} {0:>6}      -  {ai_columns(ai)}  AI{shallow}")
            line_of(ai)
    lines.append(ai_footer(values))
    return "\n".join(lines)
