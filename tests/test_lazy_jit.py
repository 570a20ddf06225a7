"""The rules core's kernels as Python first, numba's after (``engine.core.lazy_jit``).

A short command plays its few moves with the per-move kernels interpreted and never imports
numba; a longer process compiles them after ``PYTHON_CALLS`` calls.  The three ways must agree
move for move: seeded random games (captures, ko, suicide refused) are played in fresh processes
interpreted throughout, compiled throughout, and switching in the middle, and every state array
after every move is compared.
"""

from __future__ import annotations

import json
import subprocess
import sys

SEED = 20261128  # the games' moves

GAMES = """
import hashlib, json, random, sys
from fuseki.engine.core import lazy_jit
lazy_jit.PYTHON_CALLS = {calls}
from fuseki.engine.core import base
from fuseki.engine.core.base import IllegalMove
from fuseki.engine.core.board import Board

rng = random.Random({seed})
digests, refused = [], 0
for size, moves in ((9, 200), (19, 400), (13, 260)):
    board = Board(size)
    points = base.board_points(size)
    for _ in range(moves):
        point = rng.choice(points) if rng.random() > 0.03 else base.PASS
        try:
            board.play(board.to_move, point)
        except IllegalMove:
            refused += 1
            continue
        digests.append(hashlib.sha256(board._state.tobytes()).hexdigest()[:16])
    board.undo(); board.undo()
    digests.append(hashlib.sha256(board._state.tobytes()).hexdigest()[:16])
kernels = "fuseki.engine.core._kernels"
print(json.dumps([digests, refused, "numba" in sys.modules, lazy_jit.is_compiled(kernels)]))
"""


def games(calls: int) -> list:
    """[state digests, moves refused, numba imported, kernels compiled] of the seeded games."""
    done = subprocess.run([sys.executable, "-c", GAMES.format(calls=calls, seed=SEED)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_interpreted_compiled_and_switched_kernels_play_the_same_games():
    interpreted = games(10 ** 9)
    compiled = games(0)
    switched = games(2_000)  # the default budget: it runs out in the 19x19 game
    assert interpreted[2:] == [False, False]  # numba never imported
    assert compiled[2:] == [True, True]
    assert switched[2:] == [True, True]
    assert interpreted[1] > 0  # moves were refused (occupied points, ko, suicide): the rules ran
    assert len(interpreted[0]) > 300
    assert interpreted[:2] == compiled[:2] == switched[:2]


def test_a_kernel_not_marked_python_first_compiles_its_module_at_once():
    script = """
import json, sys
from fuseki.engine.core import _kernels as K, lazy_jit
before = "numba" in sys.modules
K.seed_rng(7)
print(json.dumps([before, "numba" in sys.modules, lazy_jit.is_compiled(K.__name__),
                  type(K.play).__name__]))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    # after it, the module's names are numba's dispatchers (a caller of K.play calls numba directly)
    assert json.loads(done.stdout.splitlines()[-1]) == [False, True, True, "CPUDispatcher"]


def test_the_engines_warm_up_compiles_the_kernels():
    """fuseki-gtp loads numba's code while the controller sends its set-up commands, so that no
    genmove pays for it when the per-move kernels' interpreted calls run out."""
    script = """
import json
from fuseki.engine.core import lazy_jit
from fuseki.engine.gtp.cli import warm_up
before = lazy_jit.is_compiled("fuseki.engine.core._kernels")
warm_up()
print(json.dumps([before, lazy_jit.is_compiled("fuseki.engine.core._kernels")]))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == [False, True]
