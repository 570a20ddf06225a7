"""Golden GTP transcripts: checked-in sessions replayed through the engine, every answer compared exactly.

Each ``tests/golden/*.gtp`` file is one scenario (a Sabaki start, captures and ko,
handicap, the error paths, loadsgf/printsgf), in this plain-text format:

- the lines before the first ``> `` line describe the scenario; among them a line
  ``flags: --seed 1 --superko`` gives the engine's command-line flags (``fuseki-gtp
  --help``; default ``--seed 1``, so ``genmove`` answers are the same on every run);
- ``> LINE`` is one input line as the controller sends it.  ``\\t``, ``\\r``, ``\\\\`` and
  ``\\xNN`` (a raw byte) are escapes, so tabs, CRs, control characters and invalid UTF-8
  stay visible; a ``>`` alone sends an empty line.  A note for the reader goes in a GTP
  comment (``> 12 play b C3  # retakes the ko at once``): the engine ignores it;
- the lines after it, up to the next ``> `` line, are the engine's exact response,
  including the empty line that ends it; nothing for a line that gets no response.

The engine is the one ``fuseki-gtp`` builds without a book (``cli.engine_without_book``:
random moves from the seed), run in-process in ``tests/golden/`` so that ``loadsgf`` finds
the SGF files kept there.  ``{version}`` stands for fuseki's version wherever the engine
says it (``version``, printsgf's ``AP``), so a release does not touch the goldens.

After an intended change of behaviour, regenerate the expected answers (the descriptions
and input lines are kept) and read the diff before committing it::

    python tests/test_golden_gtp.py --regenerate            # every transcript
    python tests/test_golden_gtp.py --regenerate errors     # only tests/golden/errors.gtp

A new scenario is a new ``.gtp`` file with its input lines only: regenerate it, check the
answers by hand.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parent / "golden"
DEFAULT_FLAGS = "--seed 1"
VERSION = "{version}"
_ESCAPE = re.compile(rb"\\(x[0-9a-fA-F]{2}|t|r|\\)")
_ESCAPES = {b"t": b"\t", b"r": b"\r", b"\\": b"\\"}


def parse(text: str) -> tuple[list[str], list[tuple[str, str]]]:
    """(description lines, [(input line as written, expected response)]) of a transcript."""
    header: list[str] = []
    steps: list[tuple[str, list[str]]] = []
    for line in text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"):
        if line == ">" or line.startswith("> "):
            steps.append((line[2:], []))
        elif steps:
            steps[-1][1].append(line)
        else:
            header.append(line)
    return header, [(sent, "".join(ln + "\n" for ln in answer)) for sent, answer in steps]


def unescape(written: str) -> bytes:
    """The bytes an input line stands for: ``\\t``, ``\\r``, ``\\\\``, ``\\xNN`` decoded."""
    def one(match: re.Match) -> bytes:
        code = match.group(1)
        return bytes([int(code[1:], 16)]) if code.startswith(b"x") else _ESCAPES[code]
    return _ESCAPE.sub(one, written.encode("utf-8"))


def flags_of(header: list[str]) -> list[str]:
    found = [ln.split(":", 1)[1] for ln in header if ln.startswith("flags:")]
    return shlex.split(found[-1] if found else DEFAULT_FLAGS)


def new_engine(flags: list[str]):
    """The engine ``fuseki-gtp FLAGS`` builds, less the book; diagnostics dropped."""
    from fuseki.engine.gtp import cli

    settings = cli.settings_from(cli.build_parser().parse_args(flags))
    engine = cli.engine_without_book(settings)
    engine.log = lambda text: None
    return engine


@contextmanager
def in_golden_folder():
    """Run in tests/golden, where the transcripts' SGF files are."""
    before = os.getcwd()
    os.chdir(GOLDEN)
    try:
        yield
    finally:
        os.chdir(before)


def replay(text: str) -> list[tuple[str, str, str]]:
    """(input line as written, expected response, actual response) for each step of a transcript."""
    import fuseki

    header, steps = parse(text)
    engine = new_engine(flags_of(header))
    version = re.compile(r"(?<![\w.])" + re.escape(fuseki.__version__) + r"(?![\w.])")
    results = []
    try:
        with in_golden_folder():
            for sent, expected in steps:
                # fuseki-gtp stops reading at quit: a line after it would never be answered
                assert not engine.finished, f"'> {sent}' comes after quit"
                answer = engine.handle_bytes(unescape(sent)) or ""
                results.append((sent, expected, version.sub(VERSION, answer)))
    finally:
        engine.game.chain.close()
    return results


def render(header: list[str], results: list[tuple[str, str, str]]) -> str:
    """A transcript's text with the actual responses."""
    lines = [ln + "\n" for ln in header]
    for sent, _expected, actual in results:
        lines.append((f"> {sent}" if sent else ">") + "\n" + actual)
    return "".join(lines)


def transcripts() -> list[Path]:
    return sorted(GOLDEN.glob("*.gtp"))


# --- the tests ---------------------------------------------------------------------------

def test_there_are_transcripts_for_every_scenario():
    assert {"sabaki_start", "captures_ko_undo", "handicap", "errors", "framing", "rules_options",
            "sgf"} <= {p.stem for p in transcripts()}


def check(path: Path) -> None:
    """Replay one transcript; AssertionError naming the first step answered otherwise."""
    results = replay(path.read_text(encoding="utf-8"))
    assert results, f"{path.name} has no '> ' lines"
    for number, (sent, expected, actual) in enumerate(results, 1):
        assert actual == expected, (
            f"{path.name}, step {number} '> {sent}': expected {expected!r}, got {actual!r}\n"
            f"(after an intended change: python tests/test_golden_gtp.py --regenerate {path.stem})")


@pytest.mark.parametrize("transcript", transcripts(), ids=lambda p: p.stem)
def test_transcript(transcript):
    check(transcript)


def test_a_transcript_that_is_wrong_fails(tmp_path):
    # The comparison can fail: one changed character in an answer is caught.
    path = GOLDEN / "sabaki_start.gtp"
    broken = tmp_path / path.name
    broken.write_text(path.read_text(encoding="utf-8").replace("=1 fuseki\n", "=1 fusekj\n", 1))
    try:
        check(broken)
    except AssertionError as exc:
        assert "expected '=1 fusekj\\n\\n', got '=1 fuseki\\n\\n'" in str(exc)
    else:
        raise AssertionError("a wrong answer passed")


def test_the_format_round_trips():
    for path in transcripts():
        text = path.read_text(encoding="utf-8")
        header, steps = parse(text)
        assert render(header, [(s, e, e) for s, e in steps]) == text, path.name


def test_escapes():
    assert unescape(r"10\tshowboard\r") == b"10\tshowboard\r"
    assert unescape(r"play b \xff\\x") == b"play b \xff\\x"
    assert unescape("komi 6.5  # €") == "komi 6.5  # €".encode()


# --- regeneration ------------------------------------------------------------------------

def regenerate(names: list[str]) -> list[Path]:
    """Rewrite the named transcripts (all without names) with the engine's answers of today."""
    paths = [GOLDEN / f"{n}.gtp" for n in names] if names else transcripts()
    for path in paths:
        text = path.read_text(encoding="utf-8")
        path.write_text(render(parse(text)[0], replay(text)), encoding="utf-8")
    return paths


def main(argv: list[str]) -> int:
    if not argv or argv[0] != "--regenerate":
        print(__doc__.split("::")[1].strip("\n") if "::" in __doc__ else __doc__, file=sys.stderr)
        return 2
    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root))
    import gtp_main

    gtp_main.use_this_checkout()  # import fuseki from this checkout, installed or not
    for path in regenerate(argv[1:]):
        print(f"regenerated {path.relative_to(root)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
