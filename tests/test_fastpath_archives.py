"""The fast path agrees with sgfmill on every game of the real archives in ../shared/data.

Each file is read by ``read_games(fast=True)`` and ``read_games(fast=False)``; the records
must be equal field by field (moves, setup, every header field, encoding, notes, bytes),
or both paths must raise the same SgfError.  The test also checks that the fast path
really read most games itself, so the comparison is not one of sgfmill with itself.
"""

from __future__ import annotations

import dataclasses

import pytest

from fuseki.book.formats import sgf_reader
from fuseki.book.formats.sgf_reader import SgfError, read_games
from fuseki.book.formats.sources import SourceFile, iter_sources

from conftest import require_shared_file

# archive -> (SGF files in it, least share the fast path must read itself); one month of the
# 2005-2009 Tygem corpus stands for its 50 (bench/sgf_tiers.py: the same reading takes all 366,630)
ARCHIVES = {"tygem-2016-07.tgz": (11_365, 0.99), "ai-games.tgz": (7_259, 0.99),
            "tygem-2005-2009/tygem-2005-11.tgz": (3_710, 0.99)}


def outcome(data: bytes, name: str, fast: bool):
    try:
        return read_games(data, name, fast=fast)
    except SgfError as exc:
        return ("SgfError", str(exc))


def first_difference(a, b) -> str:
    if not (isinstance(a, list) and isinstance(b, list)) or len(a) != len(b):
        return f"{a!r:.300} != {b!r:.300}"
    for game_a, game_b in zip(a, b):
        for f in dataclasses.fields(game_a):
            x, y = getattr(game_a, f.name), getattr(game_b, f.name)
            if x != y and isinstance(x, list) and isinstance(y, list):
                i = next((i for i, (u, v) in enumerate(zip(x, y)) if u != v), min(len(x), len(y)))
                return f"{f.name}[{i}:]: fast {x[i:i + 3]} != sgfmill {y[i:i + 3]} (lengths {len(x)}, {len(y)})"
            if x != y:
                return f"{f.name}: fast {x!r:.300} != sgfmill {y!r:.300}"
    return "?"


@pytest.mark.slow
@pytest.mark.parametrize("archive", sorted(ARCHIVES))
def test_fast_path_equals_sgfmill_on_every_game(archive):
    path, = require_shared_file(archive)
    expected_files, least_fast_share = ARCHIVES[archive]
    files = fast_read = games = 0
    differences = []
    for item in iter_sources([str(path)]):
        assert isinstance(item, SourceFile), item
        files += 1
        fast, slow = outcome(item.data, item.name, True), outcome(item.data, item.name, False)
        if fast != slow:
            differences.append(f"{item.name}: {first_difference(fast, slow)}")
        games += len(slow) if isinstance(slow, list) else 0
        try:
            sgf_reader._fast_game(item.data, item.name, None)
            fast_read += 1
        except (sgf_reader._NotSimple, SgfError):
            pass
    assert differences == [], f"{len(differences)} differ, e.g.\n" + "\n".join(differences[:10])
    assert files == expected_files
    assert fast_read >= least_fast_share * files, f"fast path read only {fast_read} of {files}"
    assert games >= files
