"""``bench/ai.py`` and ``bench/marks.py`` start and print their figures: ``ai.py`` once without
KataGo (the cache's look-ups beside their baseline: every run), once at its smallest setting
with the real KataGo (its start, 1 position at 1 and 2 visits, annotate's loop over the built-in
book's most played position: slow); ``marks.py`` at 2 visits (slow).  A benchmark that does not start measures nothing
(the issue found ``bench/ai.py`` failing on an import)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from conftest import ROOT
from services import real_katago_command

BENCH = [sys.executable, str(ROOT / "bench" / "ai.py")]
LOOKUPS = re.compile(r"p50 (\d+\.\d+) ms, p99 (\d+\.\d+) ms")


def run(*args: str) -> str:
    done = subprocess.run([*BENCH, *args], capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_bench_without_katago_prints_the_lookups_beside_their_baseline():
    out = run("--no-katago", "--cached", "40", "--lookups", "20")
    figures = LOOKUPS.findall(out)
    assert len(figures) == 4 and "baseline" in out, out  # three ways of looking up, and the plain read
    assert all(float(p50) <= float(p99) for p50, p99 in figures)


@pytest.mark.slow
def test_the_bench_at_its_smallest_setting_with_the_real_katago():
    # (--compare 0: ``katago benchmark`` loads the network a second time, 20 s more here; the
    # comparison is the GPU machine's run, docs/katago.md)
    out = run("--katago", real_katago_command(), "--positions", "1", "--visits", "2", "--annotate", "1",
              "--threads", "1", "--compare", "0", "--cached", "40", "--lookups", "20")
    assert re.search(r"KataGo .*: ready in \d+\.\d s", out) and re.search(r"at 2 visit\(s\): .* visits/s", out), out
    # the loop over the built-in book's most played position (where the bench failed on an import)
    assert re.search(r"annotate: the built-in book's 1 most played positions .* positions/s", out), out
    assert len(LOOKUPS.findall(out)) == 4, out


@pytest.mark.slow
def test_the_marks_bench_searches_marked_moves_again_and_says_how_many_held():
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "marks.py"), "--katago", real_katago_command(),
                           "--sample", "2", "--visits", "2", "--positions", "300"],  # the marks of 300 positions
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert re.search(r"the built-in book's marks: \d+ \?, \d+ !; 2 searched again at 2 visits", out), out
    assert len(re.findall(r"^  [?!] \S+ .*: (held|lost)$", out, re.M)) == 2, out
    # 2 visits is under the 100 a mark needs: no mark can hold there
    assert "?: 0 of 1 held at 2 visits" in out and "!: 0 of 1 held at 2 visits" in out, out
