"""The engines the tests talk to: the real KataGo's command (skipped, or failed in CI, when it is
missing) and the session's one real KataGo (``real_katago``), its golden answers, a fake KataGo
and a fake GTP engine, each a small script run as a real process.

Not a test module: test modules import from here (and from conftest.py), never from each other.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from fuseki.book.analysis.katago import (
    KataGo,
    cache_folder,
    find_command,
)

from conftest import missing_service

GOLDEN = Path(__file__).resolve().parent / "golden" / "katago"


# A fake KataGo: ``fake.py MODE [ARG]``.  Modes: replay GOLDEN N (answers the recorded
# lines of each query id, holding them until N queries have come, then answering the
# latest first); exit (writes a KataGo-like error to stderr, exits 1); garbage (answers
# GTP); hang (answers query_version, then nothing); crash (answers query_version, exits 3
# on the first query); deaf (answers query_version, then reads nothing); spawn (starts a
# child that sleeps, then hangs like hang); values (answers every query with the first
# three free points of VERTICES as its candidate moves, scores 3, 2, 1; counts the queries
# on stderr; with ARG, exits 3 at that query).
FAKE_KATAGO = r'''
import json, subprocess, sys, time
mode = sys.argv[1]
def out(obj):
    sys.stdout.write((obj if isinstance(obj, str) else json.dumps(obj)) + "\n"); sys.stdout.flush()
if mode == "exit":
    print("Error: could not open model file /nowhere/model.bin.gz", file=sys.stderr, flush=True)
    sys.exit(1)
if mode == "spawn":
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    print(child.pid, file=sys.stderr, flush=True)
recorded = {}
if mode == "replay":
    for line in open(sys.argv[2]):
        e = json.loads(line)
        if "received" in e:
            a = json.loads(e["received"])
            recorded.setdefault(a.get("id"), []).append(e["received"])
held, asked = [], 0
VERTICES = ["D4", "Q16", "K10", "C3", "R17"]
for line in sys.stdin:
    if mode == "garbage":
        out("= KataGo"); out("")
        continue
    q = json.loads(line)
    if q.get("action") == "query_version":
        out({**q, "version": "1.17.1", "git_hash": "fake"})
        continue
    if mode in ("values", "forced"):
        asked += 1
        print("query", asked, file=sys.stderr, flush=True)
        if len(sys.argv) > 2 and asked == int(sys.argv[2]):
            sys.exit(3)
        taken = {v for _c, v in q.get("initialStones", [])}
        free = [v for v in VERTICES if v not in taken][:3]
        forced = [v for a in q.get("allowMoves", []) for v in a["moves"]] if mode == "forced" else []
        free = forced or free  # "forced": a forced move (allowMoves) is the root's only move, as KataGo's
        infos = [{"move": v, "order": i, "visits": 10 - i, "winrate": 0.5 - i / 10, "scoreLead": 3.0 - i,
                  "prior": 0.1} for i, v in enumerate(free)]
        out({"id": q["id"], "isDuringSearch": False, "turnNumber": 0, "moveInfos": infos,
             "rootInfo": {"visits": 30, "winrate": 0.5, "scoreLead": 3.0, "currentPlayer": q["initialPlayer"]}})
        continue
    if mode == "crash":
        print("segfault-ish", file=sys.stderr, flush=True); sys.exit(3)
    if mode == "deaf":
        time.sleep(600)  # reads nothing more: KataGo's stdin pipe fills up
    if mode in ("hang", "spawn") or q.get("action"):
        continue
    held.append(recorded[q["id"]])
    if len(held) == int(sys.argv[3]):
        for lines in reversed(held):
            for a in lines:
                out(a)
        held = []
'''


# KataGo behind a gate: its first N analysis answers reach fuseki, the rest are held, so that a
# test stops a run that cannot have finished meanwhile, however slow the machine.  It starts
# KataGo as its child: a kill of its process group (fuseki's, or a test's) ends both.
GATE = '''
import subprocess, sys
answers = int(sys.argv[1])
katago = subprocess.Popen(sys.argv[2:], stdout=subprocess.PIPE)  # stdin and stderr: fuseki's
for line in katago.stdout:
    if b'"rootInfo"' in line:  # an analysis answer (query_version's has none)
        if answers == 0:
            continue  # held
        answers -= 1
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
sys.exit(katago.wait())
'''


def gated_katago_command(command: str, answers: int) -> str:
    """``command`` (a KataGo analysis engine) behind ``GATE``: only its first ``answers`` analysis
    answers reach whoever runs it."""
    return shlex.join([sys.executable, "-c", GATE, str(answers), *shlex.split(command)])


def real_katago_command() -> str:
    command = find_command()
    if command is None:  # .ci/setup runs .ci/katago: in CI a missing KataGo is a failure
        missing_service(f"no KataGo: run `bash .ci/katago` (it fills {cache_folder()}) or set $FUSEKI_KATAGO")
    return command


# The session's one real KataGo (``real_katago``), for the tests that query it directly: a start
# loads the network (10 s or more on 2 loaded cores), and the positions a test asks again (a
# deeper search of the same position) come from KataGo's own cache.  Eight analysis threads:
# queries submitted together (the 8 orientations of test_katago) are searched at once and
# their network evaluations go in batches, which the CPU's OpenCL evaluates faster per
# position than one at a time; a thread count changes no value (the search of one query is
# the same).
SHARED_ANALYSIS_THREADS = 8


@pytest.fixture(scope="session")
def _session_katago():
    held: dict[str, KataGo] = {}
    yield held
    if "katago" in held:
        held["katago"].close()


@pytest.fixture
def real_katago(_session_katago) -> KataGo:
    """The session's real KataGo (skipped, or failed in CI, without one), started at the first test
    that asks and again after a test that broke it (killed, timed out); tests never close it.
    Its answers may come from positions an earlier test asked: a test must not count KataGo's
    evaluations or depend on its cache being empty."""
    katago = _session_katago.get("katago")
    if katago is None or not katago.alive():
        if katago is not None:
            katago.close()
        command = f"{real_katago_command()} -override-config numAnalysisThreads={SHARED_ANALYSIS_THREADS}"
        katago = _session_katago["katago"] = KataGo(command, timeout=900, start_timeout=300)
    return katago


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
if plan.get("0") == "slow-start":  # as an engine loading its network before it reads a command
    time.sleep(1.5)
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
