"""fuseki player: a player's record by year, head-to-head, repertoire and games, as text tables.

Examples::

    fuseki player joonki --book games.sqlite
    fuseki player joonki --vs joonkimomo --book games.sqlite --page 2
    fuseki player --find joon --book games.sqlite

A thin layer over ``book.queries.players`` (the counts and what they mean are said there); the
web page's player page (``book.ui.web.player_routes``) shows the same tables.
"""

from __future__ import annotations

FIND_LIMIT = 20  # names listed by --find


def add_command(subparsers) -> None:
    from fuseki.book.ui.cli_shared import add_book_option

    p = subparsers.add_parser(
        "player", help="a player's record by year, head-to-head, first moves and games",
        description="A player's games, wins and losses by year (in all, as Black, as White), the "
                    "opponents they met most, their first moves as Black and their answers as White "
                    "(up to symmetry, shown in the upper right corner), and a page of their games, newest "
                    "first. The name is matched exactly, in any case; --find lists the names containing "
                    "it. A game with no winner is neither a win nor a loss. "
                    "Example: fuseki player joonki --vs joonkimomo --book games.sqlite")
    p.add_argument("name", metavar="NAME", help="the player's name (any case), or with --find a part of it")
    p.add_argument("--vs", default=None, metavar="OPP", help="also their head-to-head against OPP: "
                   "the same counts over their games together, whose list the games page then is")
    p.add_argument("--find", action="store_true", help="list the players whose name contains NAME, most games first")
    p.add_argument("--page", type=int, default=1, metavar="N", help="the page of games to list (default 1)")
    p.add_argument("--page-size", type=int, default=20, metavar="N", help="games a page (default 20)")
    add_book_option(p)
    p.set_defaults(run=run_player)


def run_player(args) -> int:
    from fuseki.book.queries import players
    from fuseki.book.ui.cli_shared import CommandError, book_location, open_book
    from fuseki.book.ui.present.textboard import printable

    if args.page < 1 or args.page_size < 1:
        raise CommandError(f"--page and --page-size must be at least 1, not {min(args.page, args.page_size)}")
    if not args.name.strip():
        raise CommandError("NAME is empty: give a player's name (fuseki player --find TEXT lists names)")
    book = open_book(book_location(args), readonly=True)
    try:
        if args.find:
            found = players.find_players(book, args.name, FIND_LIMIT)
            if not found:
                raise CommandError(f"no player's name contains '{printable(args.name)}'")
            print(f"{'games':>7}  name")
            for name, games in found:
                print(f"{games:7,}  {printable(name)}")
            return 0
        try:
            report = players.player_report(book, args.name, args.vs)
            page = players.player_games(book, args.name, args.vs, args.page, args.page_size)
        except players.NoPlayer as exc:
            raise CommandError(str(exc)) from None
    finally:
        book.close()
    if args.page > max(page.pages, 1):
        raise CommandError(f"--page {args.page} is out of range: there are {page.pages} pages")
    print(report_text(report, page))
    return 0


def percent(wins: int, games: int) -> str:
    return f"{100 * wins / games:.1f}%" if games else "-"


def record_table(years, total) -> list[str]:
    """Rows of games, wins and losses by year, then the total (``book.queries.players``)."""
    lines = [f"{'year':7} {'games':>6} {'wins':>6} {'losses':>6} {'win %':>6}   "
             f"{'as Black':>17}   {'as White':>17}"]

    def row(label: str, r) -> str:
        black = f"{r.black_games} ({r.black_wins}-{r.black_losses})"
        white = f"{r.white_games} ({r.white_wins}-{r.white_losses})"
        return (f"{label:7} {r.games:6} {r.wins:6} {r.losses:6} {percent(r.wins, r.games):>6}   "
                f"{black:>17}   {white:>17}")

    lines += [row("no date" if y.year is None else str(y.year), y.record) for y in years]
    lines.append(row("total", total))
    return lines


def move_name(stat, size: int) -> str:
    from fuseki.engine.core import base

    return "pass" if stat.point == base.PASS else base.point_to_vertex(stat.point, size)


def report_text(report, page) -> str:
    """The report and a page of games as the text ``fuseki player`` prints."""
    from fuseki.book.ui.present.textboard import printable
    from fuseki.engine.core.base import COLOUR_LETTER

    out = [f"player {printable(report.name)}: {report.total.games:,} games"]
    out += record_table(report.years, report.total)
    if report.opponents:
        out.append("met most: " + ", ".join(f"{printable(n)} {g}" for n, g in report.opponents))
    if report.vs is not None:
        out += ["", f"against {printable(report.vs)}: {report.vs_total.games:,} games"]
        out += record_table(report.vs_years, report.vs_total)
    out += ["", f"as Black, first moves ({report.size}x{report.size}, shown in the upper right corner)",
            f"{'move':6} {'games':>6} {'win %':>6}"]
    out += [f"{move_name(m, report.size):6} {m.games:6} {percent(m.stats.black_wins, m.games):>6}"
            for m in report.as_black]
    out += ["", "as White, answers to Black's first move (games, win %)"]
    for answer in report.as_white:
        first = answer.first
        replies = ", ".join(f"{move_name(m, report.size)} {m.games} ({percent(m.stats.white_wins, m.games)})"
                            for m in answer.replies[:8])
        out.append(f"{move_name(first, report.size):6} {first.games:6} "
                   f"{percent(first.stats.white_wins, first.games):>6}: {replies or '-'}")
    together = f" against {printable(report.vs)}" if report.vs is not None else ""
    out += ["", f"games{together}, newest first: page {page.page} of {page.pages}"]
    for row in page.rows:
        winner = COLOUR_LETTER.get(row.winner, "-")
        out.append(f"{row.id:>8} {row.date or row.year or '':10} {printable(row.black or '?'):>16} - "
                   f"{printable(row.white or '?'):16} {row.result or winner}")
    return "\n".join(out)
