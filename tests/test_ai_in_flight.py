"""``fuseki ai annotate`` keeps KataGo busy: as many queries in flight as its config's analysis
threads can take side by side (``queries_to_keep_in_flight``: two per ``numAnalysisThreads``).

KataGo here is a small program (a real process, through the real client) that answers
nothing until it holds BATCH queries, then answers them all, as a KataGo whose analysis
threads each wait for a query would: a loop that keeps fewer in flight never gets an answer
and times out.  The settings come from the command's ``-config`` file and
``-override-config``, as KataGo reads them.
"""

from __future__ import annotations

import shlex
import sys

import pytest

from fuseki.book.analysis import annotate
from fuseki.book.analysis.ai import AiJudge
from fuseki.book.analysis.katago import KataGo, KataGoTimeout
from fuseki.book.analysis.katago_config import batch_command, config_value, queries_to_keep_in_flight, search_threads
from fuseki.book.storage.store import Book

from games import import_games, random_games

BATCHING_KATAGO = r'''
import json, sys
batch = int(sys.argv[1])
held = []
def out(obj):
    sys.stdout.write(json.dumps(obj) + "\n"); sys.stdout.flush()
for line in sys.stdin:
    q = json.loads(line)
    if q.get("action") == "query_version":
        out({**q, "version": "1.17.1", "git_hash": "fake"})
        continue
    if q.get("action"):
        continue
    held.append(q)
    print("held", len(held), file=sys.stderr, flush=True)
    if len(held) < batch:
        continue
    for q in held:
        out({"id": q["id"], "isDuringSearch": False, "turnNumber": 0,
             "moveInfos": [{"move": "K10", "order": 0, "visits": 1, "winrate": 0.5, "scoreLead": 0.5, "prior": 0.1}],
             "rootInfo": {"visits": 1, "winrate": 0.5, "scoreLead": 0.5, "currentPlayer": q.get("initialPlayer", "B")}})
    held = []
'''


def test_settings_are_read_from_the_config_file_and_its_overrides(tmp_path):
    config = tmp_path / "analysis.cfg"
    config.write_text("# numAnalysisThreads = 9\nnumAnalysisThreads = 3  # three\nnumSearchThreads=2\n")
    command = shlex.join(["katago", "analysis", "-model", "m.bin.gz", "-config", str(config)])
    assert config_value(command, "numAnalysisThreads") == "3" and config_value(command, "numSearchThreads") == "2"
    assert config_value(command, "nnMaxBatchSize") is None
    assert queries_to_keep_in_flight(command) == 6
    overridden = command + " -override-config 'nnMaxBatchSize=16, numAnalysisThreads = 5'"
    assert config_value(overridden, "nnMaxBatchSize") == "16" and queries_to_keep_in_flight(overridden) == 10
    assert queries_to_keep_in_flight("katago analysis -config /nowhere.cfg") == 4  # KataGo's default: 2 threads


def test_annotate_starts_katago_with_one_search_thread_per_analysis_thread(tmp_path):
    config = tmp_path / "analysis.cfg"
    config.write_text("numAnalysisThreads = 1\nnumSearchThreads = 2\nnnMaxBatchSize = 8\n")
    command = shlex.join(["katago", "analysis", "-model", "m.bin.gz", "-config", str(config)])
    batch = batch_command(command)
    assert shlex.split(batch)[:-2] == shlex.split(command)
    assert (config_value(batch, "numAnalysisThreads"), config_value(batch, "numSearchThreads")) == ("2", "1")
    assert search_threads(batch) == search_threads(command) == 2 and queries_to_keep_in_flight(batch) == 4
    mine = command + " -override-config numSearchThreads=4"  # the user's own say stands
    assert batch_command(mine) == mine
    fake = shlex.join([sys.executable, "fake.py", "values"])  # not katago analysis -config: as given
    assert batch_command(fake) == fake


@pytest.mark.parametrize("analysis_threads", [1, 3])
def test_annotate_keeps_every_analysis_thread_fed(tmp_path, capsys, analysis_threads):
    batch = 2 * analysis_threads  # answers only once it holds this many: the queries in flight
    script = tmp_path / "batching_katago.py"
    script.write_text(BATCHING_KATAGO)
    config = tmp_path / "analysis.cfg"
    config.write_text(f"numAnalysisThreads = {analysis_threads}\nnumSearchThreads = 1\n")
    command = shlex.join([sys.executable, str(script), str(batch), "-config", str(config)])
    location = import_games(tmp_path / "games", random_games(40), str(tmp_path / "book.sqlite"))
    capsys.readouterr()
    with Book.open(location) as book, KataGo(command, timeout=60) as katago:
        positions = annotate.popular_positions(book, 1)
        positions = positions[: len(positions) // batch * batch]  # whole batches: the last is answered too
        assert len(positions) >= 2 * batch
        finder = annotate.BoardFinder(book, [p.key for p in positions])
        judge = AiJudge(book.db, katago, "japanese", 6.5, 1)
        report = annotate.annotate(judge, positions, finder, book.writing, threads=queries_to_keep_in_flight(command),
                                   timeout=20)  # generous: every answer comes at once when the batch is full
        assert (report.done, report.refused, report.missing) == (len(positions), 0, 0)
        held = [int(line.split()[1]) for line in katago.stderr_lines() if line.startswith("held")]
        assert max(held) == batch
        with pytest.raises(KataGoTimeout):  # one short of the batch: nothing comes back
            annotate.annotate(AiJudge(book.db, katago, "japanese", 6.5, 2), positions, finder, book.writing,
                              threads=batch - 1, timeout=1.0)
