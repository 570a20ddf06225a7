"""The host's speed, printed under the suite's result (``conftest.pytest_terminal_summary``).

The suite's time is quoted in README.md and docs/testing.md against its budget, but the same
tests took 3 min 38 s on one host and over 7 minutes on another (2026-11-29): a time says
little without the speed of the machine that ran it.  A pure-Python loop measures what most
of the suite spends (the interpreter, on one core), in a fraction of a second, at the start of
the run and at its end, where it sees the same neighbours (two CPU hogs, other jobs) as the
tests did.  The host's speed moves within an hour too: 7.7 then 25 M steps/s, 30 minutes apart,
with nothing else running on the machine (2026-11-29).
"""

from __future__ import annotations

import statistics
import time

STEPS = 1_000_000  # one run: 0.1-0.2 s on the hosts seen so far
RUNS = 5


def loop_steps_per_second(steps: int = STEPS, runs: int = RUNS) -> float:
    """Millions of steps a second of ``for i in range(steps): total += i``, the median of ``runs``."""
    rates = []
    for _ in range(runs):
        total = 0
        start = time.perf_counter()
        for i in range(steps):
            total += i
        rates.append(steps / (time.perf_counter() - start) / 1e6)
    return statistics.median(rates)
