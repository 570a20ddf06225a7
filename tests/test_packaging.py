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


def package_folders() -> set[str]:
    """``fuseki.x.y`` for every folder of engine/ and book/ with an ``__init__.py``, and the root."""
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
            "fuseki/__main__.py", "fuseki/gtp_main.py"} <= names
    entry_points = wheel.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    assert "fuseki-gtp = fuseki.gtp_main:main" in entry_points
    assert "fuseki = fuseki.book.ui.cli:main" in entry_points
    assert not any(n.startswith(("fuseki/tests/", "fuseki/bench/")) for n in names)
