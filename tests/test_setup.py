"""Set-up as a newcomer meets it: the README's commands are what CI runs, and an engine
started without its dependencies says so in one line instead of failing every command."""

from __future__ import annotations

import os
import re
import subprocess
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def readme_commands() -> list[str]:
    """The command lines of the README's first ``sh`` block (comments left out)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```sh\n(.*?)```", text, re.DOTALL).group(1)
    return [line.strip() for line in block.splitlines() if line.strip() and not line.startswith("#")]


def test_the_readme_starts_with_two_commands_and_ci_runs_the_second():
    engine, tests = readme_commands()
    assert "fuseki-gtp" in engine and "pytest" in tests
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()
          if line.strip() and not line.startswith("#")]
    assert ci[-1] == tests, "the last line of .ci/run must be the README's test command"


def test_both_readme_commands_install_into_a_virtual_environment():
    """PEP 668: Debian 12 and Ubuntu 23.04+ refuse pip installs into the system interpreter."""
    for command in readme_commands():
        assert "python3 -m pip install" not in command and "pip install --user" not in command
    setup = (ROOT / ".ci" / "setup").read_text()
    assert "python3 -m venv" in setup and '"$venv/bin/python" -m pip install' in setup


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
