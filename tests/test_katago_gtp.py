"""fuseki-gtp with the real KataGo behind it (``--fallback-engine "katago gtp ..."``).

Slow; skipped until ``bash .ci/katago`` has run (it writes the ``gtp.cfg`` used here: no
pondering; its 16 visits lowered to 2 here, see below); under ``FUSEKI_REQUIRE_SERVICES=1`` a
failure, as in tests/test_katago.py.
"""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path

import pytest

from fuseki.book.analysis.katago import cache_folder
from fuseki.engine.players.gtp_client import GtpClient

from conftest import missing_service

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_fuseki_gtp_plays_katagos_moves_where_it_has_no_book(tmp_path):
    folder = cache_folder()
    parts = [folder / "katago", folder / "model.bin.gz", folder / "gtp.cfg"]
    if not all(p.exists() for p in parts):
        missing_service(f"no KataGo: run `bash .ci/katago` (it fills {folder})")
    # 2 visits, not the config's 16: what is checked is that fuseki hands the move to KataGo and
    # plays its answer, and KataGo's opening answer on 2 visits is its policy's best move (the
    # second visit goes to it), already on the 3rd-5th lines; 16 cost 30 more network
    # evaluations, about a second each on 2 CPU cores
    katago = shlex.join([str(parts[0]), "gtp", "-model", str(parts[1]), "-config", str(parts[2]),
                         "-override-config", "maxVisits=2"])
    command = [sys.executable, str(ROOT / "gtp_main.py"), "--no-book", "--seed", "3", "--size", "19",
               "--verbose", "--fallback-engine", katago]
    with GtpClient(command, cwd=str(ROOT), timeout=600) as c:
        c.send("play b D4")
        mark = c.stderr_mark()
        move = c.send("genmove w")
        # the verbose line is written before the answer, but read from its pipe by another thread
        deadline = time.monotonic() + 30
        while "fallback" not in (said := " ".join(c.take_stderr(mark))).lower() and time.monotonic() < deadline:
            time.sleep(0.05)
        # KataGo opens on the 3rd/4th lines of an empty corner, which random moves seldom do
        col, row = "ABCDEFGHJKLMNOPQRST".index(move[0].upper()) + 1, int(move[1:])
        assert {min(col, 20 - col), min(row, 20 - row)} <= {3, 4, 5}, move
        assert "fallback" in said.lower(), said
        assert c.send("genmove b")  # and the game goes on
