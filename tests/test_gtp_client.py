"""The GTP client against tiny fake engines: answers, failures, garbage, death, time-outs, stderr.

``FAKE_ENGINE`` (tests/services.py, also used by test_external.py and test_match.py):
a GTP engine in a few lines of Python whose misbehaviour is chosen on its command line.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from fuseki.engine.players.gtp_client import EngineDead, GtpClient, GtpFailure, GtpGarbage, GtpTimeout

from services import fake_command


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
    deadline = time.monotonic() + 60
    while c.stderr_mark() < 20001 and time.monotonic() < deadline:  # stderr lags behind stdout
        time.sleep(0.01)
    mark = c.stderr_mark()
    c.send("genmove b")
    deadline = time.monotonic() + 60
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
    c.close(timeout=60)  # the default 2 s, then a kill: a loaded machine may take longer to exit
    assert c.proc.poll() == 0
    assert not c.alive()


@pytest.mark.skipif(os.name != "posix", reason="process groups")
def test_fuseki_itself_as_engine():
    root = Path(__file__).resolve().parent.parent
    with GtpClient([sys.executable, str(root / "gtp_main.py"), "--seed", "1"], cwd=str(root)) as c:
        assert c.send("protocol_version") == "2"
        c.send("boardsize 5")
        assert c.send("genmove b")
