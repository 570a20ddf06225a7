"""Practice on the web page, in a real browser (issue 33): a guess-the-move round and a joseki quiz round.

A real ``fuseki serve`` (tests/browsing.py's ``serving``) over a real import of the first Tygem
games, its corner book built; the session's Chromium (``browser``), its console log read.
The test opens a game from the games list, practises it (one right guess, one wrong, the score
follows; an occupied point is named), reloads (the address resumes the practice), then answers
a joseki quiz question (in the corner, and outside it), continues the line where it goes on,
and finds no console error on any of these paths.  At 390x844 (a phone) the practice card
does not scroll sideways and its controls are 40 px targets.
"""

from __future__ import annotations

import json
import urllib.request
from urllib.parse import parse_qs, urlsplit

import pytest

from fuseki.book.analysis.patterns import corner_build, corners
from fuseki.book.analysis.pipeline import importer
from fuseki.book.storage.store import Book
from fuseki.engine.core import base

from browsing import TAP, Page, emulate, serving
from conftest import write_archive

pytestmark = pytest.mark.slow

GAMES = 300


@pytest.fixture(scope="module")
def server(tmp_path_factory, tygem_games):
    folder = tmp_path_factory.mktemp("web-practice")
    archive = write_archive(folder / "games.tgz", tygem_games[:GAMES])
    with Book.open(str(folder / "book.sqlite")) as book:
        importer.import_paths(book, [str(archive)], workers=0)
        corner_build.update(book, progress=None)
    with serving(folder / "book.sqlite") as url:
        yield url


def address(page) -> dict:
    return {k: v[0] for k, v in parse_qs(urlsplit(page.driver.current_url).fragment).items()}


def get(url):
    with urllib.request.urlopen(url, timeout=30) as answer:
        return json.load(answer)


def severe(driver):
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def test_a_guess_round_and_a_joseki_quiz_round(server, browser):
    driver = browser
    page = Page(driver, timeout=30)
    page.open(server)
    page.play("pd")  # a search position: a history entry before the practice
    page.games_at(1)  # this position's games, not the empty board's
    page.click("#games-table tbody tr")
    page.wait(lambda _: page.text("move-number").startswith("move 1 / "))
    page.click("#first")
    page.wait(lambda _: page.text("move-number").startswith("move 0 / "))
    page.click("#practice-game")
    page.wait(lambda _: "move 1 of" in page.text("practice-status"))
    assert page.js("return document.querySelector('main').hidden") is True
    game = int(address(page)["practice_game"])
    moves = get(f"{server}api/game/{game}")["moves"]

    # a right guess: the game's first move
    page.click(f'#practice-board rect[data-sgf="{moves[0]["sgf"]}"]')
    page.wait(lambda _: page.text("practice-score").startswith("Score: 1 / 1"))
    assert page.text("practice-verdict").startswith(f"✓ Right: the game played {moves[0]['vertex']}")
    page.wait(lambda _: "move 2 of" in page.text("practice-status"))
    # an occupied point is named, and asks nothing
    page.click(f'#practice-board rect[data-sgf="{moves[0]["sgf"]}"]')
    page.wait(lambda _: page.text("message") == f"{moves[0]['vertex']} is occupied")
    # a wrong guess: a point no game plays second
    wrong = next(p for p in ("aa", "sa", "as", "ss") if p not in (moves[0]["sgf"], moves[1]["sgf"]))
    page.click(f'#practice-board rect[data-sgf="{wrong}"]')
    page.wait(lambda _: page.text("practice-score").startswith("Score: 1 / 2"))
    assert page.text("practice-verdict").startswith(f"✗ Wrong: the game played {moves[1]['vertex']}")
    assert "0 of the book's" in page.text("practice-verdict")
    assert page.rows("#practice-table")  # the most played moves of that position
    assert address(page)["practice_move"] == "2" and address(page)["asked"] == "2"

    # the practice is its own history entry: the browser's back closes it and shows the view it
    # was started from (the search position stays), forward resumes it
    driver.back()
    page.wait(lambda _: page.js("return document.getElementById('practice').hidden"))
    page.at(1)
    assert page.text("move-number").startswith("move 0 / ")
    assert "practice" not in address(page)
    driver.forward()
    page.wait(lambda _: page.js("return document.querySelector('main').hidden"))  # the card's text is the old one
    page.wait(lambda _: "move 3 of" in page.text("practice-status"))
    page.wait(lambda _: page.text("practice-score").startswith("Score: 1 / 2"))
    # a reload resumes the practice and its score
    driver.refresh()
    page.wait(lambda _: "move 3 of" in page.text("practice-status"))
    page.wait(lambda _: page.text("practice-score").startswith("Score: 1 / 2"))
    # a quiz link in the same tab: the quiz shows none of the guesses' verdict, score or table
    driver.get(f"{server}#practice=joseki&corner=1&min_games=10")
    page.wait(lambda _: page.text("practice-status").startswith("top right corner: no move yet"))
    left = (page.text("practice-verdict"), page.text("practice-score"), page.rows("#practice-table"))
    assert left == ("", "", [])

    # the joseki quiz
    page.click("#practice-close")
    page.wait(lambda _: page.js("return document.getElementById('practice').hidden"))
    page.click("#joseki-quiz")
    page.wait(lambda _: address(page).get("practice") == "joseki")  # the status may still be the last quiz's
    view = address(page)
    assert view["practice"] == "joseki"
    corner = int(view["corner"])
    line = [base.parse_point(m, 19) for m in view.get("line", "").split(",") if m]
    stones = {base.point_to_sgf(p, 19) for p in line}
    outside = next(p for p in base.board_points(19) if corners.corner_of_point(p, 19) == (corner + 1) % 4)
    page.click(f'#practice-board rect[data-sgf="{base.point_to_sgf(outside, 19)}"]')
    page.wait(lambda _: "is not in the quiz's corner" in page.text("message"))
    inside = [p for p in base.board_points(19) if corners.corner_of_point(p, 19) == corner
              and base.point_to_sgf(p, 19) not in stones]
    answer = base.point_to_sgf(inside[len(inside) // 2], 19)
    page.click(f'#practice-board rect[data-sgf="{answer}"]')
    page.wait(lambda _: "games" in page.text("practice-verdict"))
    expected = get(f"{server}api/practice/joseki?line={view.get('line', '')}&corner={corner}"
                   f"&min_games=10&point={answer}&seed=1")
    assert page.js("return document.getElementById('practice-verdict').dataset.games") == str(expected["games"])
    assert page.rows("#practice-table") and [row[1] for row in page.rows("#practice-table")] == \
        [m["vertex"] for m in expected["best"]]
    # a new line: the last one's verdict goes
    page.click("#practice-new")
    page.wait(lambda _: not page.text("practice-verdict") and "corner:" in page.text("practice-status"))
    # a link to the empty top right corner: its most played answer goes on with a reply
    driver.get("about:blank")
    page.open(f"{server}#practice=joseki&corner=1&min_games=10")
    page.wait(lambda _: page.text("practice-status").startswith("top right corner: no move yet"))
    top = get(f"{server}api/practice/joseki?line=&corner=1&min_games=10&point=pd&seed=1")["best"][0]
    page.click(f'#practice-board rect[data-sgf="{top["sgf"]}"]')
    page.wait(lambda _: page.js("return document.getElementById('practice-verdict').dataset.games") ==
              str(top["games"]))
    assert page.text("practice-verdict").startswith(f"{top['vertex']}: played in {top['games']} of ")
    # "continue" opens once the answer's board is drawn, a request after the verdict
    page.wait(lambda _: not page.js("return document.getElementById('practice-continue').disabled"))
    page.click("#practice-continue")
    page.wait(lambda _: len(address(page).get("line", "").split(",")) == 2)
    assert address(page)["line"].split(",")[0] == top["sgf"]
    assert f"top right corner: {top['vertex']} " in page.text("practice-status")

    assert not severe(driver), severe(driver)


@pytest.mark.parametrize("mode", ["guess", "joseki"])
def test_practice_fits_a_phone(server, browser, mode):
    driver = browser
    emulate(driver, 390, 844, True)
    page = Page(driver, timeout=30)
    game = get(f"{server}api/games?page_size=1")["rows"][0]["id"]
    hash_ = f"practice=guess&practice_game={game}&practice_move=4" if mode == "guess" else \
        "practice=joseki&line=Q16&corner=1&min_games=10"
    page.open(f"{server}#{hash_}")
    page.wait(lambda _: "move 5 of" in page.text("practice-status") if mode == "guess"
              else "corner:" in page.text("practice-status"))
    page.click('#practice-board rect[data-sgf="jj"]' if mode == "guess" else '#practice-board rect[data-sgf="qc"]')
    page.wait(lambda _: page.text("practice-verdict"))
    measured = page.js("""
        const visible = (e) => e.getClientRects().length > 0;
        return {scroll: document.documentElement.scrollWidth, inner: window.innerWidth,
                board: document.getElementById('practice-board').getBoundingClientRect().width,
                small: [...document.querySelectorAll('#practice button, #practice select, #practice input')]
                  .filter(visible).map((e) => ({id: e.id, w: e.getBoundingClientRect().width,
                                                h: e.getBoundingClientRect().height}))
                  .filter((b) => b.w < arguments[0] - 0.5 || b.h < arguments[0] - 0.5)};""", TAP)
    assert measured["inner"] == 390 and measured["scroll"] <= measured["inner"], measured
    assert measured["board"] >= 390 - 60, measured
    assert not measured["small"], measured
    assert not severe(driver), severe(driver)


def test_hidden_buttons_stay_hidden_on_a_phone(server, browser):
    """The phone rule makes buttons flex boxes, which beat the ``hidden`` attribute: before a game
    is open, its "practice this game" and "SGF" buttons must not show."""
    driver = browser
    emulate(driver, 390, 844, True)
    page = Page(driver, timeout=30)
    page.open(server)
    page.ready()
    shown = page.js("return ['practice-game', 'game-download', 'practice']"
                    ".filter((id) => document.getElementById(id).getClientRects().length)")
    assert shown == []
    page.wait(lambda _: page.rows("#games-table"))  # the list comes after the board
    page.click("#games-table tbody tr")
    page.wait(lambda _: page.js("return document.getElementById('practice-game').getClientRects().length"))
