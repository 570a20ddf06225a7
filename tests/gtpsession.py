"""Talking to an in-process GTP engine in the tests: one line in, the answer's text out (failing
the test on the wrong kind of answer), and what the board holds.

Not a test module: test modules import from here (and from conftest.py), never from each other.
"""

from __future__ import annotations


def ask(eng, line):
    return eng.handle_line(line)


def ok(eng, line):
    """The text of a '=' answer (fails the test on '?')."""
    response = eng.handle_line(line)
    assert response.startswith("=") and response.endswith("\n\n"), (line, response)
    return response[1:].strip(" ").rstrip("\n").lstrip(" ")


def err(eng, line):
    """The message of a '?' answer (fails the test on '=')."""
    response = eng.handle_line(line)
    assert response.startswith("? ") and response.endswith("\n\n"), (line, response)
    return response[2:-2]


def snapshot(eng):
    return ok(eng, "showboard"), ok(eng, "list_stones black"), ok(eng, "list_stones white")


def session(eng, *lines):
    for line in lines:
        ok(eng, line)


def diagram_stones(eng):
    """(black, white) vertex sets read from list_stones."""
    return (set(ok(eng, "list_stones b").split()), set(ok(eng, "list_stones w").split()))


def book_chain(book):
    """The chain ``fuseki-gtp`` builds for ``book`` without a fallback engine: the book (also
    the analysis commands' advisor), then the game's seeded random chooser."""
    from fuseki.engine.players.chooser import ChooserChain

    return ChooserChain([book], advisor=book)
