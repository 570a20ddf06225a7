"""``fuseki match``: the command line of engine-vs-engine matches (``engine.players.match``)."""

from __future__ import annotations

from fuseki.engine.players.match import Match, write_atomically
from fuseki.engine.players.match_game import RESULTS, START_WAIT, MatchConfig, MatchError
from fuseki.engine.players.match_report import load_openings, results_table


def add_command(subparsers) -> None:
    p = subparsers.add_parser(
        "match", help="play games between two GTP engines and tabulate the results",
        description="Play games between two GTP engines (gogui-twogtp style), write one SGF per game "
                    "and a results table. Example: fuseki match --black 'python3 gtp_main.py --seed 1' "
                    "--white 'gnugo --mode gtp --level 0' --games 10 --size 9 --alternate "
                    "--sgf-dir runs/m1 --parallel 2")
    p.add_argument("--black", required=True, metavar="CMD", help="engine A, Black in the first game")
    p.add_argument("--white", required=True, metavar="CMD", help="engine B, White in the first game")
    p.add_argument("--games", type=int, required=True, metavar="N")
    p.add_argument("--size", type=int, default=19, metavar="N")
    p.add_argument("--komi", type=float, default=7.5, metavar="K")
    p.add_argument("--alternate", action="store_true", help="swap colours every other game")
    p.add_argument("--openings", metavar="DIR",
                   help="SGF files whose main lines start the games; each is played twice, colours swapped")
    p.add_argument("--sgf-dir", metavar="DIR",
                   help=f"write game-NNNN.sgf and {RESULTS} here; an interrupted match resumes from it")
    p.add_argument("--referee", metavar="CMD", help="GTP engine whose final_score decides finished games")
    p.add_argument("--max-moves", type=int, default=1000, metavar="N", help="stop and score a game here")
    p.add_argument("--adjudicate-resign", type=int, default=0, metavar="N",
                   help="end a game as a resignation once N referee scores in a row agree on the winner")
    p.add_argument("--adjudicate-margin", type=float, default=20.0, metavar="POINTS",
                   help="the lead each of those scores must show (default 20)")
    p.add_argument("--adjudicate-every", type=int, default=1, metavar="K",
                   help="ask the referee every K moves (its final_score can be slow mid-game)")
    p.add_argument("--parallel", type=int, default=1, metavar="K", help="games played at once")
    p.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS",
                   help="time allowed for each answer; longer loses the game (default 60; an engine's "
                        f"start, its name, version and list_commands, may take {START_WAIT:g})")
    p.add_argument("--stderr-comments", action="store_true",
                   help="put each engine's stderr lines into the SGF as comments on its moves")
    p.add_argument("--superko", action="store_true", help="forbid positional superko (default: simple ko)")
    p.add_argument("--seed", type=int, default=1, metavar="N",
                   help="game i gives the engine commands' {seed} the value N + i, e.g. --black "
                        "'fuseki-gtp --seed {seed} --policy weighted' --white 'gnugo --mode gtp --seed {seed}': "
                        "deterministic engines then play different games (default 1)")
    p.set_defaults(run=run_match)


def config_from(args) -> MatchConfig:
    if min(args.games, args.parallel, args.max_moves, args.adjudicate_every) < 1 or args.timeout <= 0:
        raise MatchError("--games, --parallel, --max-moves, --adjudicate-every and --timeout "
                         "must be positive")
    if not 2 <= args.size <= 25:
        raise MatchError("--size must be from 2 to 25")
    return MatchConfig(
        black=args.black, white=args.white, games=args.games, size=args.size, komi=args.komi,
        alternate=args.alternate, openings=load_openings(args.openings, args.size) if args.openings else [],
        sgf_dir=args.sgf_dir, referee=args.referee, max_moves=args.max_moves,
        adjudicate_resign=args.adjudicate_resign, adjudicate_margin=args.adjudicate_margin,
        adjudicate_every=args.adjudicate_every,
        parallel=args.parallel, timeout=args.timeout, stderr_comments=args.stderr_comments,
        superko=args.superko, seed=args.seed)


def run_match(args) -> int:
    config = config_from(args)
    match = Match(config)
    results = match.run()
    table = results_table(results, config)
    print(table)
    if match.folder is not None:
        write_atomically(match.folder / "results.txt", (table + "\n").encode())
    return 0
