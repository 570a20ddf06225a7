"""Set-up as a newcomer meets it: PostgreSQL's set-up runs quietly from any checkout, and an
engine started without its dependencies says so in one line instead of failing every command.
(The README's commands and what CI runs: tests/test_readme.py.)"""

from __future__ import annotations

import os
import shutil
import subprocess
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_postgres_setup_says_nothing_of_a_folder_it_cannot_enter(tmp_path):
    """.ci/postgres runs psql as the postgres user, which cannot enter a checkout under /root: it
    must not print "could not change directory" (pytest's tmp_path is such a folder, 0700)."""
    if os.geteuid() != 0 or not shutil.which("pg_ctlcluster"):
        pytest.skip("needs root and Debian's PostgreSQL, as on the CI machine")
    done = subprocess.run(["bash", str(ROOT / ".ci" / "postgres")], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-500:]
    assert "could not change directory" not in done.stdout + done.stderr


def test_an_engine_without_its_dependencies_says_so_in_one_line(tmp_path):
    bare = tmp_path / "bare"
    venv.create(bare, with_pip=False)  # the base interpreter with an empty site-packages
    python = bare / "bin" / "python"
    done = subprocess.run([str(python), str(ROOT / "gtp_main.py")], input="name\ngenmove b\n",
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "FUSEKI_GTP_REEXEC": "1"})  # as if no .venv could help
    missing = next(name for name in ("numpy", "numba", "sgfmill", "sqlalchemy")
                   if subprocess.run([str(python), "-c", f"import {name}"], capture_output=True).returncode)
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert f"package {missing} is not installed" in line and "pip install -e ." in line


def test_an_interpreter_without_the_packages_hands_over_to_the_checkouts_venv(tmp_path):
    """`python3 gtp_main.py` with the system interpreter (a GUI's engine command) runs the engine
    with the checkout's .venv, made by the README's command, when there is one."""
    if not (ROOT / ".venv" / "bin" / "python").exists():
        pytest.skip("no .venv in this checkout (the README's set-up makes it)")
    bare = tmp_path / "bare"
    venv.create(bare, with_pip=False)
    env = {k: v for k, v in os.environ.items() if k not in ("FUSEKI_GTP_REEXEC", "PYTHONPATH")}
    done = subprocess.run([str(bare / "bin" / "python"), str(ROOT / "gtp_main.py")], input="name\nquit\n",
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.startswith("= fuseki\n\n")
