"""A position through the years as text and JSON: ``fuseki search --by-year`` and ``--trends``,
the shell's ``years``, ``/api/position?by_year=1`` (the numbers: ``book.queries.years``);
with ``--ai``, ``mistakes_text``: each year's share of games that played a move KataGo's stored
values judge a mistake (the numbers: ``book.analysis.mistakes.years_of_mistakes``).

``year_text`` prints a ``YEAR GAMES SHARE`` table (a year's games that reached the position,
and their share of that year's games in the book; ``no date`` last), then per next move its
letter and vertex (those of the search table), games, first and last year and trend.
``trends_text`` lists the moves whose share of the position's games rose most between two
periods, then those whose share fell most.
"""

from __future__ import annotations

from fuseki.book.ui.present.textboard import LETTERS
from fuseki.engine.core import base

TRENDS_LISTED = 10  # --trends: the most rising moves, then the most falling ones


def _year_name(year: int | None) -> str:
    return "no date" if year is None else str(year)


def _period_name(period: tuple[int | None, int | None]) -> str:
    low, high = ("" if y is None else str(y) for y in period)
    return low if low == high else f"{low}-{high}"


def _letter(index: int, letters: str) -> str:
    return letters[index] if index < len(letters) else " "


def year_text(profile, size: int, letters: str = LETTERS) -> str:
    """The position's year table and its next moves' first and last years and trends."""
    lines = ["YEAR       GAMES    SHARE   (of that year's games in the book)"]
    for row in profile.years:
        lines.append(f"{_year_name(row.year):<8} {row.games:>7} {100 * row.share:>7.2f}%")
    if not profile.years:
        lines.append("(no game reached this position)")
    if profile.moves:
        recent = (f"recent {profile.recent[0]}-{profile.recent[1]} vs. the years before" if profile.recent
                  else "no dated games")
        lines += ["", f"MOVE         GAMES  FIRST  LAST  TREND   ({recent}; rule: docs/exploring.md)"]
        for index, entry in enumerate(profile.moves):
            vertex = base.point_to_vertex(entry.move.point, size)
            first, last = ("-" if y is None else str(y) for y in (entry.first, entry.last))
            lines.append(f"{_letter(index, letters)} - {vertex:<5} {entry.move.games:>7}  {first:>5} {last:>5}"
                         f"  {entry.trend or '-'}")
    return "\n".join(lines)


def mistakes_text(rows, mistaken, size: int, visits_min: int, points: float) -> str:
    """``--by-year --ai``: per year, the position's games that played a move KataGo's stored
    values judge a mistake (``book.analysis.mistakes.years_of_mistakes``), and those it cannot judge."""
    judged = ", ".join(f"{base.point_to_vertex(move.point, size)} {ai.loss:.1f} ({ai.visits} visits)"
                       for move, ai in mistaken) or "none"
    lines = [f"AI MISTAKES: moves losing >= {points:g} points clear of the noise, at >= {visits_min} visits "
             f"(the rule of the ? mark, any share of the games): {judged}",
             "YEAR       GAMES  MISTAKES    SHARE  UNJUDGED   (unjudged: a move with no value of that many visits)"]
    for row in rows:
        lines.append(f"{_year_name(row.year):<8} {row.games:>7} {row.mistaken:>9} {100 * row.share:>7.1f}%"
                     f" {row.unjudged:>9}")
    if not rows:
        lines.append("(no game reached this position)")
    return "\n".join(lines)


def trends_text(profile, first, second, size: int, letters: str = LETTERS, limit: int = TRENDS_LISTED) -> str:
    """The moves whose share of the position's games rose most from ``first`` to ``second``
    (periods as (from, to)), then those whose share fell most."""
    from fuseki.book.queries.years import period_changes

    totals, changes = period_changes(profile, first, second)
    names = (_period_name(first), _period_name(second))
    letter_of = {entry.move.points: _letter(i, letters) for i, entry in enumerate(profile.moves)}
    lines = [f"position: {totals[0]} games in {names[0]}, {totals[1]} in {names[1]}"]
    for title, chosen in (("rising", [c for c in changes if c.change > 0][:limit]),
                          ("falling", [c for c in reversed(changes) if c.change < 0][:limit])):
        lines += ["", f"{title.upper():<9}{names[0]:>15}{names[1]:>15}   CHANGE"]
        for change in chosen:
            vertex = base.point_to_vertex(change.move.point, size)
            cells = "".join(f" {g:>6} {100 * s:6.1f}%" for g, s in zip(change.games, change.shares))
            lines.append(f"{letter_of.get(change.move.points, ' ')} - {vertex:<5}{cells}  {100 * change.change:+6.1f}")
        if not chosen:
            lines.append("(none)")
    return "\n".join(lines)


def years_json(profile, size: int) -> dict:
    """``/api/position?by_year=1``'s ``years`` object: the rows (``year`` null: no date) and per
    next move its games by year (key ``"none"``: no date), first, last and trend."""
    return {
        "recent": list(profile.recent) if profile.recent else None, "k": profile.k, "total": profile.total,
        "rows": [{"year": row.year, "games": row.games, "book_games": row.book_games, "share": row.share}
                 for row in profile.years],
        "moves": [{"vertex": base.point_to_vertex(entry.move.point, size), "point": entry.move.point,
                   "games": entry.move.games, "first": entry.first, "last": entry.last, "trend": entry.trend,
                   "by_year": {_json_year(y): g for y, g in entry.by_year.items()}}
                  for entry in profile.moves],
    }


def trends_json(profile, first, second, size: int) -> dict:
    """``/api/position?trends=A-B:C-D``'s ``trends`` object: each move's games and share in both periods."""
    from fuseki.book.queries.years import period_changes

    totals, changes = period_changes(profile, first, second)
    return {"periods": [list(first), list(second)], "games": list(totals),
            "moves": [{"vertex": base.point_to_vertex(c.move.point, size), "point": c.move.point,
                       "games": list(c.games), "shares": list(c.shares), "change": c.change} for c in changes]}


def years_answer(book, board, filters, periods, recent: int) -> dict:
    """``/api/position``'s additions: ``years`` (``by_year=1``, ``recent=K``) and, given two
    periods (``trends=2005-2007:2008-2009``), ``trends``.  StatisticsOnly for a book without dates."""
    from fuseki.book.queries.years import date_profile

    profile = date_profile(book, board, filters=filters, recent=recent)
    answer = {"years": years_json(profile, board.size)}
    if periods:
        answer["trends"] = trends_json(profile, *periods, board.size)
    return answer


def _json_year(year: int | None) -> str:
    return "none" if year is None else str(year)
