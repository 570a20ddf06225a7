"""The host's speed, printed under the suite's result (``conftest.pytest_terminal_summary``).

The suite's time is quoted in README.md against its budget, but the same tests took 14 min 53 s
beside two CPU hogs on one host and 26 min 42 s on another a day later (2026-11-29/30), with
the code unchanged: a time says little without the machine that ran it.  Two figures, each in
a fraction of a second, at the start of the run and at its end (the same neighbours as the
tests had): a pure-Python loop, what the interpreter does on one core, and numpy's float32
matrix products, what vector units do (numba's kernels, KataGo through pocl).  The second
host's loop was as fast as ever (22 M steps/s beside the hogs) while its real KataGo tests
took 1.6 times as long: a Zen 3 with no AVX-512, hence the processor's line too.
"""

from __future__ import annotations

import statistics
import time

STEPS = 1_000_000  # one run of the loop: 0.04-0.13 s on the hosts seen so far
SIDE = 256  # the matrices' side: 33.6 M multiply-adds a product
PRODUCTS = 10
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


def matmul_gflops(side: int = SIDE, products: int = PRODUCTS, runs: int = RUNS) -> float:
    """Billions of float32 operations a second of numpy's matrix product, the median of ``runs``."""
    import numpy as np

    a = np.random.default_rng(0).random((side, side), dtype=np.float32)
    a @ a  # the BLAS's threads started before the clock
    rates = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(products):
            a @ a
        rates.append(2 * side ** 3 * products / (time.perf_counter() - start) / 1e9)
    return statistics.median(rates)


def processor() -> str:
    """The processor's name, family and model, and whether it has AVX-512 (Linux; else '?')."""
    fields: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if not line.strip():
                    break  # the first processor's block is enough
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
    except OSError:
        return "?"
    avx512 = "yes" if "avx512f" in fields.get("flags", "").split() else "no"
    return (f"{fields.get('model name', '?')} (family {fields.get('cpu family', '?')} model "
            f"{fields.get('model', '?')}), AVX-512 {avx512}")


def figures() -> str:
    return f"{loop_steps_per_second():.1f} M loop steps/s, {matmul_gflops():.0f} GFLOP/s float32 products"
