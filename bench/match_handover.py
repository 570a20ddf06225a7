"""Where fuseki's book handed a match game over, and KataGo's judgement of the book's part then.

``bench/match_judge.py`` judges each game where it stopped (move 30): by then the fallback
engine has played half of fuseki's moves, and KataGo at 1 visit against itself loses and wins
whole corners in a capturing race (issue 56's first 20-game run: the default's worst game,
-6.3, was 0.2 points behind when the book handed over, and lost 4.6 points on move 30 alone).
This asks what the book is answerable for: for each game of a match folder, it replays
fuseki's moves through a fresh ``fuseki-gtp --verbose`` (``--engine``: the match's command),
finds fuseki's first move after the opening that
neither the book nor KataGo's stored line (``ai line``) gave -- the hand-over -- and asks
KataGo's analysis engine (``--visits``) for the position just before it.  It prints, per
game, where it handed over and the lead for fuseki's colour then, and their mean with a 95%
interval and the worst game; and the sources of all fuseki's moves, with where random moves
started (give ``--engine`` the match's own command, its fallback engine included, for exact
sources: a move the engine does not play again is counted as such).

Usage::

    python3 bench/match_handover.py DIR [--engine CMD] [--visits 16] [--opening-moves 4]
"""

from __future__ import annotations

import argparse
import re
import shlex
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
__import__("gtp_main").use_this_checkout()  # import fuseki from this checkout, installed or not

from match_judge import game_moves, katago_and_results, mean_interval  # noqa: E402

from fuseki.book.analysis.katago import KataGo, network_name  # noqa: E402
from fuseki.engine.players.gtp_client import GtpClient  # noqa: E402

BOOK_SOURCES = ("book", "ai line")  # what --verbose names for the book's own moves
SOURCE_LINE = re.compile(r"genmove [BW] (\S+): (.+?)\s*$")


def source_of(client: GtpClient, mark: int, answer: str, wait: float = 5.0) -> str | None:
    """What --verbose named as the source of ``answer``: its last line for a move says it
    ("fuseki: genmove W L17: book"); stderr is read on a thread of its own, so it may come
    a moment after the answer."""
    deadline = time.monotonic() + wait
    while True:
        found = [m.group(2) for m in map(SOURCE_LINE.search, client.take_stderr(mark))
                 if m and m.group(1).upper() == answer]
        if found or time.monotonic() > deadline:
            return found[-1] if found else None
        time.sleep(0.01)


def sources(client: GtpClient, moves: list[tuple[str, str]], colour: str,
            opening: int) -> tuple[int, Counter, int | None]:
    """Replay fuseki's moves after the opening: (index of its first move not from the book or its
    line: the hand-over, the sources of all its moves, index of its first random move or None).
    A move the engine does not play again is "not played again" (the fallback engine's, when
    ``--engine`` leaves it out); with the match's fallback engine in ``--engine``, "fallback"."""
    at, first_random, seen = len(moves), None, Counter()
    for i, (c, vertex) in enumerate(moves):
        if c != colour or i < opening:
            continue
        client.send("clear_board")
        for cc, vv in moves[:i]:
            client.send(f"play {cc} {vv}")
        mark = client.stderr_mark()
        answer = client.send(f"genmove {c}").strip().upper()
        source = source_of(client, mark, answer)
        if answer != vertex.upper():  # KataGo at 1 visit does not always play its move again
            source = "fallback" if source == "fallback" else "not played again"
        seen[source] += 1
        if source not in BOOK_SOURCES:
            at = min(at, i)
        if source == "random" and first_random is None:
            first_random = i
    return at, seen, first_random


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="the match's --sgf-dir")
    parser.add_argument("--engine", default=f"{shlex.quote(sys.executable)} {shlex.quote(str(ROOT / 'gtp_main.py'))}",
                        help="fuseki-gtp as the match ran it (its policy, its fallback engine: the sources "
                             "are then exact); default: this checkout's, its default policy, no fallback engine")
    parser.add_argument("--visits", type=int, default=16)
    parser.add_argument("--opening-moves", type=int, default=4, help="the match's --openings moves, not fuseki's")
    parser.add_argument("--katago", help="KataGo's analysis command")
    parser.add_argument("--rules", default="japanese")
    args = parser.parse_args(argv)
    command, results = katago_and_results(args)
    games = []
    with GtpClient(f"{args.engine} --verbose", timeout=120) as client:
        for r in results:
            size, komi, moves = game_moves(args.folder / r["sgf"])
            client.send(f"boardsize {size}")
            client.send(f"komi {komi:g}")
            colour = "B" if r["black"] == "A" else "W"  # engine A is fuseki (the match's --black)
            at, seen, first_random = sources(client, moves, colour, args.opening_moves)
            games.append((r, size, komi, moves, colour, at, seen, first_random))
    with KataGo(command, timeout=3600) as katago:
        pendings = [katago.submit(moves[:at], rules=args.rules, komi=komi, size=size, max_visits=args.visits)
                    for _r, size, komi, moves, _c, at, _s, _f in games]
        answers = [p.result(3600)[-1] for p in pendings]
    print(f"KataGo ({network_name(command)}, {args.rules} rules, {args.visits} visits) where the book handed over")
    leads = []
    totals: Counter = Counter()
    randoms = []
    for (r, _size, _komi, _moves, colour, at, seen, first_random), answer in zip(games, answers):
        lead = answer.score_lead if answer.to_play == colour else -answer.score_lead
        leads.append(lead)
        totals.update(seen)
        randoms.append(first_random)
        print(f"game {r['game'] + 1:>3}: fuseki {colour}, handed over at move {at + 1}: lead {lead:+.1f}; "
              f"its moves: {', '.join(f'{k} {v}' for k, v in seen.most_common())}"
              + (f"; random from move {first_random + 1}" if first_random is not None else ""))
    mean, half = mean_interval(leads)
    print(f"fuseki's lead where the book handed over: mean {mean:+.2f} points (95%: {mean - half:+.2f} to "
          f"{mean + half:+.2f}), worst game {min(leads):+.1f}, {len(leads)} games")
    print(f"fuseki's moves after the opening: {', '.join(f'{k} {v}' for k, v in totals.most_common())}; "
          f"random moves in {sum(f is not None for f in randoms)} of {len(randoms)} games"
          + (f", from move {statistics.median(f + 1 for f in randoms if f is not None):g} (median)"
             if any(f is not None for f in randoms) else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
