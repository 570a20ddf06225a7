"""What a match leaves behind: one SGF file per game, and the results table with win rates,
95% Wilson intervals and an Elo estimate; also the openings a match starts from."""

from __future__ import annotations

import math
import time
from pathlib import Path

import fuseki
from fuseki.engine.core.base import IllegalMove, point_to_rowcol, rowcol_to_point
from fuseki.engine.players.match_game import LABELS, RESULTS, Game, MatchConfig, MatchError, repeats

# --- SGF ------------------------------------------------------------------------------------

def game_sgf(config: MatchConfig, game: Game, result: dict) -> bytes:
    """The game as SGF: both engines' names, the result and why, comments on the moves."""
    from sgfmill import sgf

    size = config.size
    tree = sgf.Sgf_game(size)
    root = tree.get_root()
    root.set("KM", config.komi)
    root.set("AP", ("fuseki match", fuseki.__version__))
    names = result["names"]
    root.set("PB", names.get(game.black) or game.black)
    root.set("PW", names.get(game.white) or game.white)
    root.set("RE", "Draw" if result["result"] == "0" else result["result"])
    root.set("DT", time.strftime("%Y-%m-%d"))
    root.set("GN", f"game {game.index + 1}")
    commands = {"A": config.black, "B": config.white}
    why = [f"Black: {game.black} = {commands[game.black]}", f"White: {game.white} = {commands[game.white]}",
           f"Result: {result['result']} ({result['reason']}"
           + (f", scored by {result['scorer']}" if result["scorer"] else "") + ")"]
    if game.opening:
        why.append(f"Opening: {game.opening[0]}")
    if 0 in game.comments:  # a fault before the first move
        why.append(game.comments[0])
    root.set("C", "\n".join(why))
    for number, (colour, point) in enumerate(game.moves, 1):
        node = tree.extend_main_sequence()
        node.set_move("b" if colour == 1 else "w", point_to_rowcol(point, size))
        if number in game.comments:
            node.set("C", game.comments[number])
    if len(game.moves) + 1 in game.comments:  # stderr of a move that never came, a fault
        node = tree.get_last_node()
        text = game.comments[len(game.moves) + 1]
        node.set("C", (node.get("C") + "\n" if node.has_property("C") else "") + text)
    return tree.serialise()


def load_openings(folder: str, size: int) -> list:
    """[(file name, [(colour, point)])] of the ``*.sgf`` files in ``folder``, by name.

    Raises MatchError for a file that cannot be read, has another board size,
    setup stones, or an illegal move.
    """
    from sgfmill import sgf

    from fuseki.engine.core.board import Board

    paths = sorted(Path(folder).glob("*.sgf"))
    if not paths:
        raise MatchError(f"no .sgf files in {folder}")
    openings = []
    for path in paths:
        try:
            tree = sgf.Sgf_game.from_bytes(path.read_bytes())
        except (OSError, ValueError) as exc:
            raise MatchError(f"{path}: cannot read the opening ({exc})") from None
        if tree.get_size() != size:
            raise MatchError(f"{path}: board size {tree.get_size()}, the match is {size}x{size}")
        board, moves = Board(size), []
        for node in tree.get_main_sequence():
            if node.has_setup_stones():
                raise MatchError(f"{path}: setup stones are not supported in openings")
            colour, move = node.get_move()
            if colour is None:
                continue
            point = rowcol_to_point(move, size)
            c = 1 if colour == "b" else 2
            try:
                board.play(c, point)
            except IllegalMove as exc:
                raise MatchError(f"{path}: illegal move {len(moves) + 1} ({exc.reason})") from None
            moves.append((c, point))
        openings.append((path.name, moves))
    return openings


# --- the table ------------------------------------------------------------------------------

def wilson(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a proportion (draws counted as half a win)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def elo(p: float) -> float:
    """Elo difference for an expected score ``p`` (+-inf at 1 and 0)."""
    if p <= 0:
        return -math.inf
    if p >= 1:
        return math.inf
    return -400 * math.log10(1 / p - 1)


def _elo_text(value: float) -> str:
    return ("+inf" if value > 0 else "-inf") if math.isinf(value) else f"{value:+.0f}"


def results_table(results: list[dict], config: MatchConfig) -> str:
    """The summary of ``results``: see the module docstring."""
    names = {}
    for r in results:
        names.update({k: v for k, v in r.get("names", {}).items() if v})
    commands = {"A": config.black, "B": config.white}
    n = len(results)
    lines = [f"{n} games, {config.size}x{config.size}, komi {config.komi:g}", ""]
    header = (f"{'engine':<40} {'wins':>5} {'draws':>5} {'losses':>6} {'as black':>9} {'as white':>9}"
              "   win rate (95% CI)")
    lines += [header, "-" * len(header)]
    rate = {}
    for label in LABELS:
        mine = [r for r in results if label in (r["black"], r["white"])]
        wins = sum(r["winner"] == label for r in mine)
        draws = sum(r["winner"] is None for r in mine)
        as_black = [r for r in mine if r["black"] == label]
        as_white = [r for r in mine if r["white"] == label]
        score = wins + draws / 2
        low, high = wilson(score, len(mine))
        rate[label] = (score / len(mine) if mine else 0.5, low, high)
        who = f"{label}: {names.get(label) or commands[label]}"[:40]
        lines.append(f"{who:<40} {wins:>5} {draws:>5} {len(mine) - wins - draws:>6} "
                     f"{sum(r['winner'] == label for r in as_black):>4}/{len(as_black):<4} "
                     f"{sum(r['winner'] == label for r in as_white):>4}/{len(as_white):<4}   "
                     f"{100 * rate[label][0]:5.1f}% [{100 * low:.1f}%, {100 * high:.1f}%]")
    lines.append("")
    black_wins = sum(r["winner"] is not None and r["winner"] == r["black"] for r in results)
    white_wins = sum(r["winner"] is not None and r["winner"] == r["white"] for r in results)
    lines.append(f"Black won {black_wins}, White won {white_wins}, drawn {n - black_wins - white_wins}")
    p, low, high = rate["A"]
    if n:
        lines.append(f"Elo A - B: {_elo_text(elo(p))} (95%: {_elo_text(elo(low))} to {_elo_text(elo(high))})")
    reasons: dict[str, int] = {}
    for r in results:
        key = r["reason"] if not r["fault"] else f"{r['reason']} by {r['fault']['engine']}"
        reasons[key] = reasons.get(key, 0) + 1
    lines.append("Ended by: " + ", ".join(f"{k} {v}" for k, v in sorted(reasons.items())))
    repeated = repeats(results)
    distinct = [r for r in results if r["game"] not in repeated]
    lines.append(f"Distinct games: {len(distinct)} of {n}" + (
        " (" + ", ".join(f"game {g + 1} = game {e + 1}" for g, e in sorted(repeated.items())[:10])
        + (" ..." if len(repeated) > 10 else "") + " repeat an earlier game's moves)" if repeated else ""))
    if repeated and distinct:
        mine = [r for r in distinct if "A" in (r["black"], r["white"])]
        score = sum(r["winner"] == "A" for r in mine) + sum(r["winner"] is None for r in mine) / 2
        low, high = wilson(score, len(mine))
        lines.append(f"A over the distinct games: {100 * score / len(mine):.1f}% "
                     f"[{100 * low:.1f}%, {100 * high:.1f}%] of {len(mine)}")
    faults = [r for r in results if r["fault"]]
    for r in faults[:20]:
        f = r["fault"]
        lines.append(f"  game {r['game'] + 1}: {f['engine']} {f['kind']}: {f['detail']}")
    if len(faults) > 20:
        lines.append(f"  ... and {len(faults) - 20} more faults in {RESULTS}")
    return "\n".join(lines)
