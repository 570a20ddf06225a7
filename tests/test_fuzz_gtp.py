"""GTP fuzz: over 100,000 seeded random lines to ONE ``python gtp_main.py`` process.

The lines are random bytes (invalid UTF-8, NUL, CR, lone surrogates), every command with
wrong arguments (huge and non-ASCII numbers, bad vertices and colours, paths that do not
exist, ``/dev/zero``, a FIFO nobody writes), some valid commands so that the board fills and changes, and lines of 1 MB.
Checked:

- every line that needs a response (non-blank after GTP 3.1 preprocessing, decided here
  independently of ``engine.gtp``) gets exactly one well-formed response, in order, with
  its id echoed, and never ``internal error``;
- the process never exits (``quit`` is never sent until the end);
- ``showboard`` is unchanged by every failing command of a sample of thousands:
  those commands are sent between two ``showboard`` lines and compared when they fail.

Lines are written in batches while a thread reads the responses (no pipe deadlock).
The seed is fixed, so a failure reproduces; the message names the line.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # 100,000 lines: about 10 s
ROOT = Path(__file__).resolve().parents[1]
SEED = 20261122
RANDOM_LINES = 100_000
MEGABYTE_LINES = 24
WATCHDOG = 150  # seconds for the whole session (10-20 s in practice); then the engine is killed
CHECK_EVERY = 12  # one command in CHECK_EVERY is sent between two showboards
ANSWER = re.compile(rb"[=?]([0-9]*)( [^\n]*)?(\n[^\n]*[^\n ][^\n]*)*")
CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")

COLOURS = ["b", "w", "B", "WHITE", "black", "x", "bw", "", "é", "\u0432", "b\x00", "0"]
NUMBERS = ["0", "-1", "1", "2", "7", "9", "19", "25", "26", "99", "-0", "+5", "007", str(2**31),
           str(2**63), str(2**64), "9" * 30, "9" * 5000, "-" + "9" * 5000, "1e309", "-1e309", "nan",
           "inf", "-inf", "1e-400", "7.5", "-7.5", ".5", "5.", "0x10", "1_000", "\u0663", "\uff11\uff19",
           "\u00b2", "1,5", "1e", "++1", "1" * 401]
VERTICES = ["A1", "T19", "t19", "Z25", "Z26", "A0", "A-1", "I5", "i9", "AA1", "Q16", "q16", "pass",
            "PASS", "resign", "A", "1", "K10", "Y25", "A100", "\uff21\uff11", "A\u0661", "D4\u0301"]
PATHS = ["nonexistent.sgf", ".", "..", "/", "/nonexistent/dir/x.sgf", "bad.sgf", "empty.sgf",
         "good.sgf", "huge_size.sgf", "out/of/tree.sgf", "/dev/zero", "/dev/null", "fifo.sgf"]
MEMORY_LIMIT = 4 << 30  # address space of the engine: a runaway read fails the test, not the machine
OTHER = ["#", "\t", "\r", "\x00", "\xff", "\ufffd", "\u200b", "\u00a0", "quit", "=", "?", "=1", "play",
         "a b c", "\\", "\"", "'", "{}", "%s", "%n", "\ud800", "x" * 300]
POOL = COLOURS + NUMBERS + VERTICES + PATHS + OTHER
BAD_UTF8 = [b"\xff", b"\xfe", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xc0\xaf", b"\xf8\x88\x80\x80\x80",
            b"\x00", b"\r", b"\x1b[2J", b"\x7f", b"\xef\xbb\xbf"]

GOOD_SGF = b"(;GM[1]FF[4]SZ[9]KM[6.5];B[ee];W[cc];B[gc];W[cg])"
SGF_FILES = {"good.sgf": GOOD_SGF, "bad.sgf": b"(;SZ[9];B[ee];W[", "empty.sgf": b"",
             "huge_size.sgf": b"(;SZ[9999];B[aa])"}


@dataclass
class Line:
    raw: bytes
    kind: str          # "garbage", "command", "valid", "before" / "after" (showboards around a command)
    ident: str | None  # the id we put on it, echoed in its response
    answered: bool     # needs a response (non-blank after preprocessing)


def preprocessed(raw: bytes) -> str:
    """GTP 2 section 3.1, written out here so the test does not trust engine.gtp for it."""
    text = CONTROL.sub("", raw.decode("utf-8", errors="replace"))
    return text.split("#", 1)[0].replace("\t", " ").strip(" ")


def command_name(raw: bytes) -> str | None:
    words = [w for w in preprocessed(raw).split(" ") if w]
    if words and re.fullmatch(r"[0-9]+", words[0]):
        words.pop(0)
    return words[0] if words else None


class Fuzzer:
    """Seeded line generator; ``names`` are the engine's commands (from list_commands)."""

    def __init__(self, names: list[str], seed: int = SEED):
        self.rng = random.Random(seed)
        self.names = [n for n in names if n != "quit"]
        self.next_id = 1

    def ident(self) -> str:
        self.next_id += 1
        return str(self.next_id)

    def garbage(self) -> bytes:
        rng = self.rng
        parts = []
        for _ in range(rng.randint(0, 8)):
            choice = rng.random()
            if choice < 0.4:
                parts.append(rng.randbytes(rng.randint(1, 30)))
            elif choice < 0.7:
                parts.append(rng.choice(BAD_UTF8))
            else:
                parts.append(rng.choice(POOL + self.names).encode("utf-8", "surrogatepass"))
        return b"".join(parts).replace(b"\n", b" ")

    def wrong_arguments(self) -> bytes:
        rng = self.rng
        words = [rng.choice(self.names)] + [rng.choice(POOL) for _ in range(rng.choice((0, 1, 1, 2, 2, 3, 5)))]
        sep = rng.choice([" ", " ", "  ", "\t", " \t "])
        text = sep.join(words)
        if rng.random() < 0.1:
            text = text + " # comment " + rng.choice(POOL)
        return text.encode("utf-8", "surrogatepass").replace(b"\n", b" ")

    def valid(self) -> bytes:
        rng = self.rng
        colour = rng.choice("bw")
        column = rng.choice("ABCDEFGHJKLMNOPQRST")
        vertex = f"{column}{rng.randint(1, 19)}"
        choices = [(f"play {colour} {vertex}", 30), (f"genmove {colour}", 12), ("undo", 6),
                   (f"boardsize {rng.choice((5, 7, 9, 13, 19, 25))}", 1), ("clear_board", 1),
                   (f"komi {rng.choice(('0', '6.5', '-3'))}", 1), (f"fixed_handicap {rng.randint(2, 9)}", 1),
                   ("loadsgf good.sgf", 1), (f"loadsgf good.sgf {rng.randint(1, 4)}", 1),
                   (f"list_stones {colour}", 2), ("final_score", 1), ("printsgf", 1)]
        texts, weights = zip(*choices)
        return rng.choices(texts, weights)[0].encode()

    def line(self) -> Line:
        """One random line: garbage (20%), wrong arguments (55%) or a valid command (25%)."""
        while True:
            draw = self.rng.random()
            if draw < 0.2:
                raw, kind, ident = self.garbage(), "garbage", None
            else:
                raw = self.wrong_arguments() if draw < 0.75 else self.valid()
                kind = "command" if draw < 0.75 else "valid"
                ident = self.ident()
                raw = ident.encode() + b" " + raw
            if command_name(raw) != "quit":  # the process must stay up: never quit
                return Line(raw, kind, ident, bool(preprocessed(raw)))

    def megabyte_line(self) -> Line:
        rng = self.rng
        ident = self.ident()
        body = rng.choice([b"play b " + b"x" * (1 << 20), b"boardsize " + b"9" * (1 << 20),
                           b"komi 1." + b"5" * (1 << 20), b"known_command " + b"\xff" * (1 << 20),
                           b"play " + rng.randbytes(1 << 20).replace(b"\n", b"\0")])
        return Line(ident.encode() + b" " + body, "command", ident, True)

    def showboard(self, kind: str) -> Line:
        ident = self.ident()
        return Line(f"{ident} showboard".encode(), kind, ident, True)

    def session(self) -> list[Line]:
        """RANDOM_LINES random lines, 1 MB lines among them, and showboards around a sample."""
        lines: list[Line] = []
        megabyte_at = set(self.rng.sample(range(RANDOM_LINES), MEGABYTE_LINES))
        for index in range(RANDOM_LINES):
            line = self.megabyte_line() if index in megabyte_at else self.line()
            if line.kind == "command" and index % CHECK_EVERY == 0:
                lines += [self.showboard("before"), line, self.showboard("after")]
            else:
                lines.append(line)
        return lines


class Reader(threading.Thread):
    """Collects the engine's responses (split at the empty line that ends each one)."""

    def __init__(self, stream):
        super().__init__(daemon=True)
        self.stream = stream
        self.responses: list[bytes] = []
        self.cond = threading.Condition()

    def run(self) -> None:
        pending = b""
        while chunk := self.stream.read1(1 << 20):
            pending += chunk
            *done, pending = pending.split(b"\n\n")
            with self.cond:
                self.responses += done
                self.cond.notify_all()
        with self.cond:
            self.responses.append(b"<EOF>" + pending)
            self.cond.notify_all()

    def wait_for(self, last: bytes, timeout: float) -> list[bytes]:
        """Every response so far, once ``last`` (a sentinel's response) or the end of output came."""
        def done() -> bool:
            return bool(self.responses) and (self.responses[-1] == last or self.responses[-1].startswith(b"<EOF>"))
        with self.cond:
            self.cond.wait_for(done, timeout)
            return list(self.responses)


def start_engine(tmp_path: Path) -> subprocess.Popen:
    for name, data in SGF_FILES.items():
        (tmp_path / name).write_bytes(data)
    os.mkfifo(tmp_path / "fifo.sgf")  # nobody writes it: reading it would block forever
    config = tmp_path / "fuzz.toml"
    config.write_text("[engine]\nseed = 7\n[book]\npath = \"no-such-book.db\"\n")
    return subprocess.Popen([sys.executable, str(ROOT / "gtp_main.py"), "--config", str(config)],
                            cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=open(tmp_path / "stderr.txt", "wb"),
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, preexec_fn=limit_memory)


def limit_memory() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def describe(line: Line) -> str:
    return repr(line.raw[:200]) + (f"... ({len(line.raw)} bytes)" if len(line.raw) > 200 else "")


def test_one_process_survives_100000_random_lines(tmp_path):
    engine = start_engine(tmp_path)
    reader = Reader(engine.stdout)
    reader.start()
    try:
        engine.stdin.write(b"1 list_commands\n0 name\n")
        engine.stdin.flush()
        names = reader.wait_for(b"=0 fuseki", 120)[0].decode().split("\n")
        names[0] = names[0].removeprefix("=1 ")
        assert "play" in names and "showboard" in names, names

        lines = Fuzzer(names).session()
        started = time.monotonic()
        # A command that hangs stops the engine reading, and our writes would block for ever.
        watchdog = threading.Timer(WATCHDOG, engine.kill)
        watchdog.start()
        try:
            for start in range(0, len(lines), 500):
                engine.stdin.write(b"".join(line.raw + b"\n" for line in lines[start:start + 500]))
                engine.stdin.flush()
        except BrokenPipeError:
            answered = len(reader.wait_for(b"", 1))
            pytest.fail(f"the engine stopped reading for {WATCHDOG} s (hung) after {answered} answers")
        finally:
            watchdog.cancel()
        engine.stdin.write(b"0 name\n")  # a sentinel: its answer comes after all the others
        engine.stdin.flush()
        expected = [line for line in lines if line.answered]
        responses = reader.wait_for(b"=0 fuseki", WATCHDOG)[2:]
        elapsed = time.monotonic() - started
        assert engine.poll() is None, f"the engine exited with {engine.returncode}"
        assert responses and responses.pop() == b"=0 fuseki", f"no answer to the sentinel: {responses[-3:]}"

        check_responses(expected, responses)
        checked, with_stones = check_failing_commands_keep_the_board(expected, responses)
        random_lines = sum(line.kind in ("garbage", "command", "valid") for line in lines)
        print(f"\nGTP fuzz: {random_lines} random lines + {len(lines) - random_lines} showboards "
              f"in {elapsed:.1f} s ({len(lines) / elapsed:,.0f} lines/s); {len(responses)} responses; "
              f"board unchanged after {checked} failing commands ({with_stones} on a board with stones)")
        assert random_lines >= RANDOM_LINES
        assert checked >= 3000 and with_stones >= checked // 2

        engine.stdin.write(b"99 name\n")
        engine.stdin.flush()
        assert reader.wait_for(b"=99 fuseki", 30)[-1] == b"=99 fuseki"
        assert engine.poll() is None
    finally:
        try:
            engine.stdin.close()
            engine.wait(30)
        except (OSError, subprocess.TimeoutExpired):
            engine.kill()  # a hung engine must not outlive the test
            engine.wait()
    stderr = (tmp_path / "stderr.txt").read_text(errors="replace")
    assert "internal error" not in stderr and "Traceback" not in stderr, stderr[-3000:]


def check_responses(expected: list[Line], responses: list[bytes]) -> None:
    """One well-formed response per line that needs one, ids echoed, no internal error."""
    for number, (line, response) in enumerate(zip(expected, responses)):
        match = ANSWER.fullmatch(response)
        assert match, f"malformed response {response[:300]!r} to {describe(line)}"
        if line.ident is not None:  # a missing or extra response shows here first
            assert match.group(1).decode() == line.ident, (
                f"response {response[:100]!r} to {describe(line)}; lines before it: "
                + ", ".join(describe(before) for before in expected[max(0, number - 3):number]))
        assert b"internal error" not in response, describe(line)
        if line.kind in ("before", "after"):
            assert response.startswith(b"="), f"showboard failed: {response[:200]!r}"
    count_ok = len(responses) == len(expected)
    assert count_ok, f"{len(expected)} lines needed a response, got {len(responses)}; last: {responses[-3:]}"


def check_failing_commands_keep_the_board(expected: list[Line], responses: list[bytes]) -> tuple[int, int]:
    """(failing commands checked, of which on a board with stones): showboard before == after."""
    checked = with_stones = 0
    for i, line in enumerate(expected):
        if line.kind != "before":
            continue
        command, before, after = expected[i + 1], responses[i], responses[i + 2]
        assert expected[i + 2].kind == "after"
        if responses[i + 1].startswith(b"?"):
            checked += 1
            with_stones += bool(re.search(rb"\n *[0-9]+ .*? [XO] ", before))
            assert before.split(b"\n", 1)[1] == after.split(b"\n", 1)[1], (
                f"the failing command {describe(command)} (answered {responses[i + 1][:100]!r}) "
                f"changed the board:\n{before.decode()}\n{after.decode()}")
    return checked, with_stones
