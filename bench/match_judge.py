"""KataGo's judgement of a match's games where they stopped: an honest figure for an opening.

``fuseki match --max-moves N --sgf-dir DIR`` plays two engines for N moves a game; the match's
own scoring of an unfinished game (an area count) says little about an opening.  This asks
KataGo's analysis engine (``--katago``, else ``$FUSEKI_KATAGO``, else the one ``bash
.ci/katago`` installed) for each game's last position, all games in flight at once, at
``--visits``, and prints, per game, Black's score lead and win rate in KataGo's eyes; then,
per engine, its mean lead (for the colour it played) with a 95% interval (mean ± 1.96
standard errors), the games KataGo sees it ahead in, its worst game, and how many games were distinct (the
match's fingerprints).  A GTP ``final_score`` referee would do the same job, but KataGo's
``final_score`` searched for 4.5 minutes a call on 2 CPU cores whatever ``maxVisits`` said.

Usage::

    python3 bench/match_judge.py DIR [--visits 16] [--katago CMD] [--rules japanese]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
__import__("gtp_main").use_this_checkout()  # import fuseki from this checkout, installed or not

from sgfmill import sgf  # noqa: E402

from fuseki.book.analysis.katago import KataGo, find_command, network_name  # noqa: E402
from fuseki.engine import config  # noqa: E402

LETTERS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"


def game_moves(path: Path) -> tuple[int, float, list[tuple[str, str]]]:
    """(board size, komi, [(colour, GTP vertex), ...]) of the SGF's main line; a pass is 'pass'."""
    game = sgf.Sgf_game.from_bytes(path.read_bytes())
    size = game.get_size()
    moves = []
    for node in game.get_main_sequence():
        colour, point = node.get_move()
        if colour is None:
            continue
        vertex = "pass" if point is None else f"{LETTERS[point[1]]}{point[0] + 1}"
        moves.append((colour.upper(), vertex))
    return size, game.get_komi(), moves


def mean_interval(values: list[float]) -> tuple[float, float]:
    """(mean, half width of its 95% interval: 1.96 standard errors; nan for one value)."""
    mean = statistics.fmean(values)
    return mean, 1.96 * statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else float("nan")


def katago_and_results(args) -> tuple[str, list[dict]]:
    """KataGo's analysis command (``--katago``, else the settings') and the match's results; exits
    with the reason when either is missing."""
    command = args.katago or find_command(config.load().katago)
    if not command:
        sys.exit("no KataGo: name one with --katago or $FUSEKI_KATAGO, or run `bash .ci/katago`")
    results = [json.loads(line) for line in (args.folder / "results.jsonl").read_text().splitlines() if line]
    if not results:
        sys.exit(f"{args.folder}: no games in results.jsonl")
    return command, results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="the match's --sgf-dir (results.jsonl and the SGF files)")
    parser.add_argument("--visits", type=int, default=16)
    parser.add_argument("--katago", help="KataGo's analysis command")
    parser.add_argument("--rules", default="japanese")
    args = parser.parse_args(argv)
    command, results = katago_and_results(args)
    games = [(r, *game_moves(args.folder / r["sgf"])) for r in results]
    with KataGo(command, timeout=3600) as katago:
        pendings = [katago.submit(moves, rules=args.rules, komi=komi, size=size, max_visits=args.visits)
                    for _r, size, komi, moves in games]
        answers = [p.result(3600)[-1] for p in pendings]
    names = results[0]["names"]
    leads: dict[str, list[float]] = {label: [] for label in names}
    print(f"KataGo ({network_name(command)}, {args.rules} rules, {args.visits} visits) on each game's last position")
    print(f"{'game':>5} {'black':>6} {'moves':>6} {'B lead':>7} {'B win %':>8}  match result")
    for (r, _size, _komi, moves), answer in zip(games, answers):
        sign = 1.0 if answer.to_play == "B" else -1.0
        lead, winrate = sign * answer.score_lead, answer.winrate if sign > 0 else 1.0 - answer.winrate
        leads[r["black"]].append(lead)
        leads[r["white"]].append(-lead)
        print(f"{r['game'] + 1:>5} {r['black']:>6} {len(moves):>6} {lead:>7.1f} {100 * winrate:>7.1f}%  {r['result']}")
    print()
    for label, values in leads.items():
        mean, half = mean_interval(values)
        ahead = sum(v > 0 for v in values)
        print(f"{label}: {names[label]}: mean lead {mean:+.1f} points (95%: {mean - half:+.1f} to {mean + half:+.1f}), "
              f"ahead in {ahead} of {len(values)} games, worst game {min(values):+.1f}")
    distinct = len({r["fingerprint"] for r in results})
    print(f"distinct games: {distinct} of {len(results)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
