"""The engine's contract with its choosers (``engine.players.chooser``, issue 58): the GTP layer
calls declared protocols and never probes a chooser (``hasattr``/``getattr``/``__self__``), and
``genmove`` asks the chain ``fuseki-gtp`` builds in its order: book, corner book (the book's
own second answer), the fallback engine, random moves."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from fuseki.book.model import builtin
from fuseki.engine.config import BookSettings, Settings
from fuseki.engine.players import engine_chain
from fuseki.engine.players.chooser import Chooser, ChooserChain, MoveChoice, RandomChooser

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import gtp_main  # noqa: E402

PROBES = {"hasattr", "getattr", "setattr", "delattr"}


def probes(source: str) -> list[str]:
    """Each probe of ``source``: a call of ``hasattr``/``getattr``/... or a read of ``__self__``
    (a bound method's object: what ``--verbose`` once named the chooser by), with its line."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in PROBES:
            found.append(f"{node.lineno}: {node.func.id}")
        elif isinstance(node, ast.Attribute) and node.attr == "__self__":
            found.append(f"{node.lineno}: __self__")
    return found


def test_the_scan_finds_a_probe():
    assert probes("x = getattr(chooser, 'corner_candidates', None)\nhasattr(c, 'ask')\nf.__self__") \
        == ["1: getattr", "2: hasattr", "3: __self__"]
    assert probes("chooser.corner_candidates(board, color)") == []


@pytest.mark.parametrize("path", sorted((ROOT / "engine" / "gtp").rglob("*.py")), ids=lambda p: p.name)
def test_the_gtp_layer_never_probes_what_a_chooser_can_do(path):
    assert probes(path.read_text(encoding="utf-8")) == [], f"{path.relative_to(ROOT)} probes: use the protocols"


def test_the_chain_names_its_advisor_and_referee():
    settings = Settings(seed=1, fallback_engine="no-such-engine --mode gtp")  # started at its first question
    book = RandomChooser(1)  # any chooser stands in front
    chain = engine_chain(settings, game=None, book=book)
    try:
        assert chain.names() == ["random", "fallback", "random"]
        assert chain.advisor is book and chain.referee is chain.choosers[1]
        assert chain.referee.client is None  # nothing started
    finally:
        chain.close()
    plain = engine_chain(Settings(seed=1), game=None)
    assert plain.names() == ["random"] and plain.advisor is None and plain.referee is None


def test_cleanup_skips_the_advisor_and_asks_the_referee_for_its_cleanup_move():
    class Named(Chooser):
        def __init__(self, name):
            self.name = name

        def choose(self, board, color):
            return MoveChoice(1, self.name)

        def choose_cleanup(self, board, color):
            return MoveChoice(2, self.name, "cleanup")

    book, referee, last = Named("book"), Named("fallback"), Named("random")
    chain = ChooserChain([book, referee], advisor=book, referee=referee)
    assert chain.order(last) == [book, referee, last]
    assert [chain.ask(c, None, 1) for c in chain.order(last)] == [MoveChoice(1, "book"), MoveChoice(1, "fallback"),
                                                                  MoveChoice(1, "random")]
    assert chain.order(last, cleanup=True) == [referee, last]
    assert [chain.ask(c, None, 1, cleanup=True) for c in chain.order(last, cleanup=True)] \
        == [MoveChoice(2, "fallback", "cleanup"), MoveChoice(1, "random")]


def test_genmove_asks_the_book_then_the_corner_book_then_random_moves_on_the_built_in_book():
    if not builtin.available():
        pytest.skip("no built-in book in this checkout")
    logged: list[str] = []
    # the corner book plays up to move 4: at move 5 the position (out of the whole-board book) is random's
    settings = Settings(seed=1, book=BookSettings(path=str(builtin.PATH), policy="best", corner_until=4))
    eng = gtp_main.build_engine(settings, verbose=True, log=logged.append)
    assert eng.game.chain.names() == ["book", "random"] and eng.game.advisor is eng.game.choosers[0]
    sources = []
    for line in ("genmove B", "play W D4", "play B A1", "genmove W", "genmove B"):
        answer = eng.handle_line(line)
        assert answer.startswith("="), (line, answer)
        if line.startswith("genmove"):
            said = [text for text in logged if text.startswith(f"fuseki: {line} ")][-1]
            sources.append(said.rpartition(": ")[2])
    assert sources == ["book", "corner book", "random"], logged
    # the book's choices come with their comments (--verbose), random's with none
    assert any(text.startswith("fuseki: genmove B: book ") and "games" in text for text in logged), logged
    assert any(text.startswith("fuseki: genmove W: corner book ") for text in logged), logged
