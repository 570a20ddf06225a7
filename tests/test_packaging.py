"""Installed, fuseki is one import name: the wheel holds the package ``fuseki`` and nothing
else at the top level, every package folder of the tree is in it, and so is its data.

The wheel is built by pip, as ``pip install .`` builds it (in an isolated build environment
with the setuptools pyproject.toml asks for), from a copy of the tracked files
(``git ls-files``), as a fresh clone has them.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# pip builds a wheel in an isolated environment and installs it into a new one: 14 s of the quick suite on
# two loaded cores, so these run with the whole suite only
pytestmark = pytest.mark.slow


def package_folders() -> set[str]:
    """``fuseki.<folder>`` for every folder of engine/ and book/ with an ``__init__.py``, and the root."""
    names = {"fuseki"}
    for folder in ("engine", "book"):
        for init in (ROOT / folder).rglob("__init__.py"):
            names.add(".".join(["fuseki", *init.parent.relative_to(ROOT).parts]))
    return names


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout to copy the tracked files from")
    source = tmp_path_factory.mktemp("source")
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    out = tmp_path_factory.mktemp("wheel")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out),
                            str(source)], capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    (path,) = out.glob("fuseki-*.whl")
    with zipfile.ZipFile(path) as archive:
        yield archive


def test_the_wheel_adds_one_top_level_name(wheel):
    tops = {name.split("/")[0] for name in wheel.namelist()}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"fuseki"}


def test_every_package_folder_is_in_the_wheel(wheel):
    packaged = {".".join(n.split("/")[:-1]) for n in wheel.namelist() if n.endswith("/__init__.py")}
    assert package_folders() <= packaged, "add the missing packages to pyproject.toml's list"


def test_the_wheel_carries_its_data_and_entry_points(wheel):
    names = set(wheel.namelist())
    assert {"fuseki/configs/fuseki.toml", "fuseki/engine/core/data/zobrist.txt",
            "fuseki/book/ui/web/static/index.html", "fuseki/book/ui/web/static/app.js",
            "fuseki/book/data/builtin.sqlite", "fuseki/book/data/builtin.json",
            "fuseki/__main__.py", "fuseki/gtp_main.py"} <= names
    assert wheel.getinfo("fuseki/book/data/builtin.sqlite").file_size <= 16 << 20  # the built-in book's budget
    entry_points = wheel.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    assert "fuseki-gtp = fuseki.gtp_main:main" in entry_points
    assert "fuseki = fuseki.book.ui.fuseki_command:main" in entry_points
    assert not any(n.startswith(("fuseki/tests/", "fuseki/bench/")) for n in names)


def test_installed_from_the_wheel_the_engine_finds_its_settings_and_plays(wheel, tmp_path):
    """Unpacked as pip installs it (no checkout beside it), the default settings are found
    and named by ``--help``, and the engine answers GTP."""
    import os

    site = tmp_path / "site"
    wheel.extractall(site)
    env = {**os.environ, "PYTHONPATH": str(site), "HOME": str(tmp_path)}  # no checkout, no user book
    code = ("from fuseki.engine import config; from fuseki.engine.gtp import cli; import sys; "
            "print(config.DEFAULT_PATH, config.DEFAULT_PATH.is_file()); "
            "print(str(config.DEFAULT_PATH) in cli.build_parser().format_help().replace('\\n', ' '))")
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    path, found = shown.stdout.split("\n")[0].rsplit(" ", 1)
    assert Path(path) == site / "fuseki" / "configs" / "fuseki.toml" and found == "True", shown.stderr
    assert shown.stdout.split("\n")[1] == "True", "fuseki-gtp --help names the settings file it reads"
    played = subprocess.run([sys.executable, "-c", "from fuseki.gtp_main import main; main(['--seed', '1'])"],
                            input="name\ngenmove b\nquit\n", capture_output=True, text=True, env=env, timeout=120)
    answers = played.stdout.split("\n\n")
    assert answers[0] == "= fuseki" and answers[1].startswith("= ") and len(answers[1]) > 2, played.stderr
    assert played.stderr.startswith("fuseki: book: built-in ("), "the built-in book travels in the package"
