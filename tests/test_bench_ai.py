"""``bench/ai.py`` starts and prints its figures: once without KataGo (the cache's look-ups
beside their baseline: every run), once at its smallest setting with the real KataGo (its start,
1 position at 1 and 2 visits, annotate's loop over the built-in book's most played position, the
comparison with ``katago benchmark``: slow).  A benchmark that does not start measures nothing
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
    out = run("--katago", real_katago_command(), "--positions", "1", "--visits", "2", "--annotate", "1",
              "--threads", "1", "--compare", "1", "--compare-visits", "2", "--cached", "40", "--lookups", "20")
    assert re.search(r"ready.* \d+\.\d+ s", out) or "ready" in out, out
    assert "katago benchmark" in out and re.search(r"\d+(\.\d+)?%", out), out  # annotate's share of KataGo's own
    assert len(LOOKUPS.findall(out)) == 4, out
