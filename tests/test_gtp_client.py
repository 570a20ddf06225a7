"""The GTP client against tiny fake engines: answers, failures, garbage, death, time-outs, stderr.

``FAKE_ENGINE`` is also used by test_external.py and test_match.py (imported
from here): a GTP engine in a few lines of Python whose misbehaviour is chosen
on its command line.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from fuseki.engine.players.gtp_client import EngineDead, GtpClient, GtpFailure, GtpGarbage, GtpTimeout

# A fake engine: ``fake.py NAME [BEHAVIOUR AT] ...``; BEHAVIOUR happens on the AT-th genmove
# (1-based): garbage | crash | hang | illegal | resign | pass | error.  Otherwise genmove answers
# the first point (A1, B1, ...) it has not seen played, which is legal on an empty-ish board.
# kgs-genmove_cleanup answers the last such point (T19, S19, ... on 19x19) and plays it;
# ``no-cleanup 0`` leaves that command out (an engine that does not have it).
FAKE_ENGINE = r'''
import sys, time
COLS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"
name = sys.argv[1]
plan = dict(zip(sys.argv[3::2], sys.argv[2::2]))
size, seen, genmoves, last = 19, set(), 0, None
print("fake engine starting", file=sys.stderr, flush=True)
def answer(text="", ok=True):
    sys.stdout.write(("= " if ok else "? ") + text + "\n\n")
    sys.stdout.flush()
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    cmd, args = words[0], words[1:]
    if cmd == "name":
        answer(name)
    elif cmd == "version":
        answer("1.0")
    elif cmd == "list_commands":
        answer("\n".join(["name", "version", "boardsize", "clear_board", "komi", "play",
                          "genmove", "undo", "quit", "list_commands"]
                         + ([] if plan.get("0") == "no-cleanup" else ["kgs-genmove_cleanup"])))
    elif cmd == "kgs-genmove_cleanup" and plan.get("0") != "no-cleanup":
        move = next((c + str(r) for r in range(size, 0, -1) for c in reversed(COLS[:size])
                     if c + str(r) not in seen), "pass")
        seen.add(move); last = move
        answer(move)
    elif cmd == "boardsize":
        size = int(args[0]); seen = set(); answer()
    elif cmd == "clear_board":
        seen = set(); answer()
    elif cmd == "play":
        seen.add(args[1].upper()); last = args[1].upper(); answer()
    elif cmd == "genmove":
        genmoves += 1
        what = plan.get(str(genmoves))
        print(f"thinking about move {genmoves}", file=sys.stderr, flush=True)
        if what == "garbage":
            sys.stdout.write("hello there\n\n"); sys.stdout.flush()
        elif what == "crash":
            sys.exit(3)
        elif what == "hang":
            time.sleep(60)
        elif what == "illegal":
            answer(last or "A1")
        elif what in ("resign", "pass"):
            answer(what)
        elif what == "error":
            answer("I am confused", ok=False)
        else:
            move = next((c + str(r) for r in range(1, size + 1) for c in COLS[:size]
                         if c + str(r) not in seen), "pass")
            seen.add(move); last = move
            answer(move)
    elif cmd == "quit":
        answer(); break
    elif cmd in ("komi", "undo"):
        answer()
    elif cmd == "flood":
        for i in range(20000):
            print("x" * 100, file=sys.stderr)
        answer("done")
    elif cmd == "multi":
        sys.stdout.write("= line one\nline two\n\n"); sys.stdout.flush()
    elif cmd == "withid":
        sys.stdout.write("=7 ok\n\n"); sys.stdout.flush()
    else:
        answer("unknown command", ok=False)
'''


def fake_command(tmp_path: Path, name: str = "fake", *plan: str) -> str:
    """The command line running FAKE_ENGINE with ``plan`` (BEHAVIOUR AT pairs)."""
    script = tmp_path / "fake_engine.py"
    if not script.exists():
        script.write_text(FAKE_ENGINE)
    return " ".join([sys.executable, str(script), name, *plan])


@pytest.fixture
def fake(tmp_path):
    clients = []

    def start(*plan, timeout=10.0):
        client = GtpClient(fake_command(tmp_path, "fake", *plan), timeout=timeout)
        clients.append(client)
        return client

    yield start
    for c in clients:
        c.close()


def test_answers_and_failures(fake):
    c = fake()
    assert c.send("name") == "fake"
    assert c.identity() == ("fake", "1.0")
    assert c.knows("genmove") and not c.knows("loadsgf")
    assert c.send("multi") == "line one\nline two"
    assert c.send("withid") == "ok"
    with pytest.raises(GtpFailure) as err:
        c.send("nonsense")
    assert err.value.message == "unknown command"
    assert c.alive() and c.send("boardsize 5") == ""  # a failure leaves the client usable
    assert [c.send("genmove b") for _ in range(2)] == ["A1", "B1"]


def test_garbage_breaks_the_client(fake):
    c = fake("garbage", "1")
    with pytest.raises(GtpGarbage):
        c.send("genmove b")
    assert not c.alive()
    with pytest.raises(EngineDead):
        c.send("name")


def test_crash_is_engine_dead(fake):
    c = fake("crash", "1")
    with pytest.raises(EngineDead, match="exit code 3"):
        c.send("genmove b")
    with pytest.raises(EngineDead):
        c.send("name")


def test_timeout(fake):
    c = fake("hang", "1")
    t0 = time.monotonic()
    with pytest.raises(GtpTimeout):
        c.send("genmove b", timeout=0.5)
    assert time.monotonic() - t0 < 30  # the time-out ended the wait, not the 60 s hang (however busy the machine)
    with pytest.raises(EngineDead):
        c.send("name")
    c.close(timeout=0.5)  # kills the hanging process group
    assert c.proc.poll() is not None


def test_killed_engine(fake):
    c = fake()
    assert c.send("name") == "fake"
    c.kill()
    with pytest.raises(EngineDead):
        c.send("name")


def test_stderr_is_drained_and_kept(fake):
    c = fake()
    assert c.send("flood", timeout=20) == "done"  # 2 MB of stderr: a pipe would fill and block
    deadline = time.monotonic() + 5
    while c.stderr_mark() < 20001 and time.monotonic() < deadline:  # stderr lags behind stdout
        time.sleep(0.01)
    mark = c.stderr_mark()
    c.send("genmove b")
    while not c.take_stderr(mark) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert c.take_stderr(mark) == ["thinking about move 1"]
    assert len(c.stderr_lines()) <= 2000


def test_cannot_start(tmp_path):
    with pytest.raises(EngineDead, match="cannot start"):
        GtpClient(str(tmp_path / "no-such-engine"))
    with pytest.raises(EngineDead):
        GtpClient("'unbalanced")
    with pytest.raises(EngineDead):
        GtpClient("")


def test_one_line_commands_only(fake):
    with pytest.raises(ValueError):
        fake().send("name\nquit")


def test_close_ends_the_process(fake):
    c = fake()
    c.send("name")
    c.close()
    assert c.proc.poll() == 0
    assert not c.alive()


@pytest.mark.skipif(os.name != "posix", reason="process groups")
def test_fuseki_itself_as_engine():
    root = Path(__file__).resolve().parent.parent
    with GtpClient([sys.executable, str(root / "gtp_main.py"), "--seed", "1"], cwd=str(root)) as c:
        assert c.send("protocol_version") == "2"
        c.send("boardsize 5")
        assert c.send("genmove b")
