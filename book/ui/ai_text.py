"""``fuseki search --ai``: KataGo's values beside the human next moves, as text.

The options name KataGo (``--katago``, else ``$FUSEKI_KATAGO``, else the one ``.ci/katago``
installed), the visits, rules and komi; the values are the stored ones
(``book.ai.AiValueStores``: the book's own, as ``fuseki ai annotate`` or the built-in book's
file keeps them, then the AI value cache in ``$FUSEKI_AI_CACHE``, default
``~/.local/share/fuseki/ai-cache.sqlite``; the most searched of KataGo's network, or of any
when no KataGo is found), else KataGo's (the command waits for it and says so on stderr).

The table: each human next move with its win rate and score lead for the player who plays
it and its loss in points (``book.ai.next_move_values``: KataGo's candidate values, else the
stored position after the move's, marked ``*``), then KataGo's own candidates that nobody
played (``AI``).  The marks are ``book.ai.mark``'s, which the web page shares:
a move played in at least ``book.ai.POPULAR`` of the games that loses ``MISTAKE_POINTS`` or more is
marked ``?`` (a popular mistake); a move KataGo prefers (loss under ``GOOD_POINTS``) that
few people play (under ``RARE`` of the games) ``!``.
"""

from __future__ import annotations

import sys

from fuseki.engine.config import ai_cache_path as cache_path  # noqa: F401 - the ways in name it here
from fuseki.engine.core import coords


def add_ai_options(p) -> None:
    p.add_argument("--ai", action="store_true",
                   help="show KataGo's win rate, score lead and loss beside each move (asks KataGo when "
                        "the AI value cache lacks the position: see docs/katago.md)")
    p.add_argument("--katago", metavar="CMD", help="KataGo's analysis command (default: $FUSEKI_KATAGO, "
                   "else the one bash .ci/katago installed)")
    p.add_argument("--visits", type=int, default=32, metavar="V", help="KataGo's visits a position (default 32)")
    p.add_argument("--rules", default="japanese", help="rules KataGo judges by (default japanese)")
    p.add_argument("--komi", type=float, default=6.5, help="komi KataGo judges with (default 6.5)")


def ai_values_for(args, board, found, book=None, shown: int | None = None, ask_unless_none: bool = False):
    """(values, per human move values) of the position of ``found``: the stored values
    (``book.ai.AiValueStores``: the book's own, then the cache file's), else KataGo's (asked,
    with progress on stderr); each of the first ``shown`` human moves' values from
    ``book.ai.next_move_values`` (KataGo's candidate, else the stored position after it).
    With ``ask_unless_none`` (the shell), nothing stored and no KataGo configured is
    (None, []) instead of the CommandError that says how to get one."""
    moves = found.moves[:shown] if shown is not None else found.moves
    return ai_values_of_moves(args, board, found.to_move, moves, book, ask_unless_none)


def ai_values_of_moves(args, board, to_move: int, moves, book=None, ask_unless_none: bool = False):
    """``ai_values_for`` for any next moves of (``board``, ``to_move``), each with ``point`` and
    ``points`` (the corner book's, a whole-board pattern's continuations)."""
    from fuseki.book.ai import AiValueStores, next_move_values
    from fuseki.engine import config
    from fuseki.engine.players.katago import find_command, network_name

    command = args.katago or find_command(config.load().katago)
    network = network_name(command) if command else None  # no KataGo: any network's stored values
    stores = AiValueStores.open(book, cache_path(), args.rules, args.komi, network)
    try:
        values = stores.values(board, to_move)
        if values is None and ask_unless_none and not command:
            return None, []
        if values is None:
            values = _ask_katago(args, board, to_move, command, network)
        return values, next_move_values(values, board, to_move, list(moves), stores.values)
    finally:
        stores.close()


def _ask_katago(args, board, to_move: int, command: str | None, network: str | None):
    from sqlalchemy import create_engine

    from fuseki.book.ai import AiJudge
    from fuseki.book.ui.cli_shared import CommandError
    from fuseki.engine.players.katago import KataGo, KataGoError

    if not command:
        raise CommandError("no KataGo: name one with --katago or $FUSEKI_KATAGO, or run `bash .ci/katago` "
                           "(docs/katago.md)")
    path = cache_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    cache = create_engine(f"sqlite:///{path}")
    try:
        judge = AiJudge(cache, None, args.rules, args.komi, args.visits, network=network)
        print(f"asking KataGo ({judge.settings.network or 'its network'}, {args.visits} visits) for this "
              f"position; on a CPU that takes minutes...", file=sys.stderr, flush=True)
        with KataGo(command) as katago:
            judge.katago = katago
            return judge.values([(board, to_move)], timeout=max(600.0, 10.0 * args.visits))[0]
    except KataGoError as exc:
        raise CommandError(str(exc)) from None  # the fuseki command prints it as one line
    finally:
        cache.dispose()


def points(value: float) -> str:
    """Points to one decimal, 6 wide; a value that rounds to zero is 0.0, never -0.0."""
    return f"{round(value, 1) + 0.0:6.1f}"


AI_HEAD = "|  AI win %   lead   loss"
NO_VALUES = ("no stored AI values for this position (and no KataGo to ask: --katago, $FUSEKI_KATAGO or "
             "bash .ci/katago; docs/katago.md)")
WHOLE_BOARD_ONLY = "AI values only for a whole-board pattern"


def ai_columns(move) -> str:
    """KataGo's columns of a row (a ``book.ai.MoveValues``, None: dashes): win rate, lead and
    loss for the player who plays the move, ``*`` when they are the position after it's."""
    from fuseki.book.ai import CHILD

    if move is None:
        return "|        -      -      -"
    after = "*" if getattr(move, "source", None) == CHILD else ""
    return f"| {100 * move.winrate:7.1f}% {points(move.score_lead)} {points(move.loss)}{after}"


def ai_note(games: int, total: int, move) -> str:
    """The row's mark (``book.ai.mark``) as two spaces and its text, or nothing."""
    from fuseki.book.ai import MARK_TEXT, mark

    kind = mark(games, total, move.loss if move is not None else None)
    return f"  {MARK_TEXT[kind]}" if kind else ""


def ai_footer(values) -> str:
    """The line under an AI table naming the network, rules, komi and visits."""
    s = values.settings
    return (f"KataGo: {s.network or 'unknown network'}, {s.rules} rules, komi {s.komi:g}, "
            f"{values.visits} visits; win rate and lead for the player who plays the move, "
            f"loss in points against KataGo's best (*: KataGo's search did not visit the move, its "
            f"values are the position after it's, its loss against this position's score lead)")


def ai_table(found, values, move_values, size: int, letters: str) -> str:
    """The human next moves of ``found`` with their values (``move_values``, one per move
    shown, from ``ai_values_for``) beside them, then KataGo's moves nobody played; the last
    line names the network, rules, komi and visits."""
    lines = [f"    move   games  win % {AI_HEAD}"]
    played: set[int] = set()
    total = max(found.total, 1)
    for index, (human, ai) in enumerate(zip(found.moves[: len(letters)], move_values)):
        played.update(human.points)
        vertex = coords.point_to_vertex(human.point, size)
        lines.append(f"{letters[index]} - {vertex:<5} {human.games:>6}  {100 * human.winrate:5.1f}% "
                     f"{ai_columns(ai)}{ai_note(human.games, total, ai)}")
    for ai in values.moves:
        if not set(ai.points) & played:
            vertex = coords.point_to_vertex(ai.point, size)
            lines.append(f"AI  {vertex:<5} {0:>6}      -  {ai_columns(ai)}  AI")
    lines.append(ai_footer(values))
    return "\n".join(lines)
