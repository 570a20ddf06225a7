"""The built-in book: which book fuseki-gtp and the read-only commands use, how they say so,
and how the CLI, the web page and the shell treat a book of statistics without games.

Most tests point ``book.model.builtin`` at a small statistics book built here; those marked
with ``shipped`` use the one in the package and skip without it.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import numpy as np
import pytest

from fuseki.book.analysis.pipeline import importer
from fuseki.book.builders.statbook import info_path, write_statistics
from fuseki.book.model import builtin
from fuseki.book.play.book_chooser import book_choice
from fuseki.book.storage.store import Book
from fuseki.engine.config import BookSettings, Settings

from games import random_game, sgf_text, write_games

ROOT = Path(__file__).resolve().parents[1]
shipped = pytest.mark.skipif(not builtin.available(), reason="no built-in book in this checkout")


@pytest.fixture(scope="module")
def stats_path(tmp_path_factory) -> str:
    """A statistics book of 40 generated games (positions of 2 games or more)."""
    folder = tmp_path_factory.mktemp("stats")
    (folder / "games").mkdir()
    write_games(folder / "games", count=40, seed=5, length=12)
    with Book.open(str(folder / "full.sqlite")) as full:
        importer.import_paths(full, [str(folder / "games")], workers=0)
        write_statistics(full, str(folder / "builtin.sqlite"), 2, description="generated games")
    return str(folder / "builtin.sqlite")


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A home without a book at the default location, and no $FUSEKI_BOOK."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("FUSEKI_BOOK", raising=False)
    return tmp_path


@pytest.fixture
def with_builtin(stats_path, monkeypatch, home):
    builtin.info.cache_clear()
    monkeypatch.setattr(builtin, "PATH", Path(stats_path))
    monkeypatch.setattr(builtin, "INFO", Path(info_path(stats_path)))
    yield stats_path
    builtin.info.cache_clear()


# --- which book, and the line that says so -------------------------------------------------------

def test_without_a_named_or_default_book_the_engine_takes_the_built_in_one(with_builtin):
    location, line = book_choice(Settings())
    assert location == with_builtin
    assert line == "fuseki: book: built-in (40 games of generated games, positions reached by >= 2 games)"


def test_a_named_book_an_empty_path_and_a_book_at_the_default_location(with_builtin, home, tmp_path):
    named = str(tmp_path / "mine.sqlite")
    assert book_choice(Settings(book=BookSettings(path=named))) == (named, f"fuseki: book: {named}")
    assert book_choice(Settings(book=BookSettings(path=""))) == (None, "fuseki: no book")
    default = home / ".local" / "share" / "fuseki" / "book.sqlite"
    default.parent.mkdir(parents=True)
    default.write_bytes(b"")
    assert book_choice(Settings()) == (str(default), f"fuseki: book: {default}")


def test_an_installation_without_the_built_in_book_says_it_has_none(home, monkeypatch, tmp_path):
    monkeypatch.setattr(builtin, "PATH", tmp_path / "missing.sqlite")
    location, line = book_choice(Settings())
    assert location is None and line.startswith("fuseki: no book (none at ") and "no built-in book" in line


def gtp(args, stdin: str, stats_path: str, home: Path) -> subprocess.CompletedProcess:
    """``fuseki-gtp ARGS`` with ``book.model.builtin`` pointed at ``stats_path``, in ``home``."""
    code = ("import sys; from pathlib import Path; import fuseki.book.model.builtin as b\n"
            "b.PATH = Path(sys.argv[1]); b.INFO = Path(sys.argv[2])\n"
            "from gtp_main import main; sys.exit(main(sys.argv[3:]))")
    env = {k: v for k, v in os.environ.items() if k != "FUSEKI_BOOK"} | {"HOME": str(home)}
    return subprocess.run([sys.executable, "-c", code, stats_path, info_path(stats_path), *args],
                          input=stdin, capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)


def test_fuseki_gtp_names_its_book_first_and_plays_from_it(stats_path, home):
    done = gtp(["--verbose", "--seed", "1"], "boardsize 19\nclear_board\ngenmove b\nquit\n", stats_path, home)
    lines = done.stderr.splitlines()
    assert lines[0] == "fuseki: book: built-in (40 games of generated games, positions reached by >= 2 games)"
    assert any("genmove B: book " in line for line in lines), done.stderr


def test_no_book_and_book_flags(stats_path, home, tmp_path):
    done = gtp(["--no-book", "--verbose"], "genmove b\nquit\n", stats_path, home)
    assert done.stderr.splitlines()[0] == "fuseki: no book" and done.stdout.startswith("= ")
    done = gtp(["--book", stats_path], "name\nquit\n", stats_path, home)
    assert done.stderr.splitlines()[0] == f"fuseki: book: {stats_path}"
    done = gtp(["--book", stats_path, "--no-book"], "", stats_path, home)
    assert done.returncode == 2 and "not allowed with argument" in done.stderr


def test_the_built_in_book_answers_setup_commands_without_loading_the_book_stack(stats_path, home):
    code = ("import sys; from pathlib import Path; import fuseki.book.model.builtin as b\n"
            f"b.PATH = Path({stats_path!r}); b.INFO = Path({info_path(stats_path)!r})\n"
            "from gtp_main import build_engine; from fuseki.engine.config import Settings\n"
            "e = build_engine(Settings(), log=lambda line: None)\n"
            "for line in ('name', 'list_commands', 'boardsize 19', 'komi 6.5', 'clear_board'):\n"
            "    assert e.handle_line(line).startswith('=')\n"
            "print([m for m in ('numpy', 'sqlalchemy', 'fuseki.book.storage.store') if m in sys.modules])")
    env = {k: v for k, v in os.environ.items() if k != "FUSEKI_BOOK"} | {"HOME": str(home)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, cwd=ROOT, env=env, timeout=60)
    assert done.stdout.decode().strip() == "[]", done.stderr


@shipped
def test_the_shipped_book_plays_the_opening(home):
    env = {k: v for k, v in os.environ.items() if k != "FUSEKI_BOOK"} | {"HOME": str(home)}
    done = subprocess.run([sys.executable, "gtp_main.py", "--verbose", "--seed", "1"], cwd=ROOT, env=env,
                          input="boardsize 19\nclear_board\ngenmove b\ngenmove w\nbook_moves\nquit\n",
                          capture_output=True, text=True, timeout=120)
    first = done.stderr.splitlines()[0]
    assert first.startswith("fuseki: book: built-in (") and "Tygem" in first, done.stderr
    assert done.stderr.count("book ") >= 2 and "out of book" not in done.stderr, done.stderr
    info = json.loads(builtin.INFO.read_text())
    assert info["games"] > 300_000 and os.path.getsize(builtin.PATH) <= 16 << 20


# --- the fuseki command, the web page and the shell on a statistics book --------------------------

def fuseki(*args) -> tuple[int, str, str]:
    from fuseki.book.ui.fuseki_command import main

    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        code = main(list(args))
    finally:
        sys.stdout, sys.stderr = saved
    return code, out.getvalue(), err.getvalue()


def test_search_and_stats_use_the_built_in_book_when_there_is_no_other(with_builtin):
    code, out, _ = fuseki("search", "--moves", "")
    assert code == 0 and "total 40 games" in out
    code, out, _ = fuseki("stats")
    assert code == 0 and f"book       {with_builtin}" in out and "games      40" in out
    code, out, _ = fuseki("stats", "--book", "builtin")
    assert code == 0 and f"book       {with_builtin}" in out


def test_the_shell_opens_the_built_in_book_rather_than_make_an_empty_one(with_builtin, home, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("search\nquit\n"))
    code, out, _ = fuseki("shell")
    assert code == 0 and f"book {with_builtin}: 40 games" in out and "total 40 games" in out
    assert not (home / ".local" / "share" / "fuseki" / "book.sqlite").exists()


def test_year_and_player_filters_are_refused_in_words(with_builtin):
    code, out, err = fuseki("search", "--moves", "", "--year", "2012")
    assert code == 1 and out == ""
    assert "holds next-move statistics, not games: it cannot select games by year or player" in err


def test_the_web_page_says_the_book_has_no_games(stats_path):
    from fuseki.book.ui.web.app import create_app

    with Book.open(stats_path, readonly=True) as book:
        client = create_app(book=book).test_client()
        info = client.get("/api/info").get_json()
        assert info["games"] == 40 and "statistics, not games" in info["note"]
        assert client.get("/api/position?moves=").get_json()["total"] == 40
        games = client.get("/api/games?moves=").get_json()
        assert games["rows"] == [] and "statistics, not games" in games["note"]
        refused = client.get("/api/position?moves=&year_from=2012")
        assert refused.status_code == 409 and "by year or player" in refused.get_json()["error"]
        assert client.get("/api/games.sgf?moves=").status_code == 409
        missing = client.get("/api/game/1")  # none to replay: the answer says why, not only "no game"
        assert missing.status_code == 404 and "statistics, not games" in missing.get_json()["error"]


def test_the_shell_says_the_book_has_no_games(stats_path):
    from fuseki.book.ui.shell import BookShell

    out = io.StringIO()
    with Book.open(stats_path) as book:  # as fuseki shell opens it
        shell = BookShell(book, stats_path, stdout=out)
        shell.onecmd("search")
        shell.onecmd("games")
        shell.onecmd("year 2012")
        shell.onecmd("search")
    text = out.getvalue()
    assert "total 40 games" in text
    assert text.count("holds next-move statistics, not games") == 2, text


# --- fuseki book build-builtin ----------------------------------------------------------------------

def archive(path: Path, games: list[bytes]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tar:
        for i, data in enumerate(games):
            member = tarfile.TarInfo(f"{path.stem}/{i:03d}.sgf")
            member.size, member.mtime = len(data), 0
            tar.addfile(member, io.BytesIO(data))


def test_build_builtin_reads_the_corpus_less_the_held_out_month(tmp_path):
    rng = np.random.default_rng(2)
    months = {"tygem-2005-2009/tygem-2009-11.tgz": 5, "tygem-2005-2009/tygem-2009-12.tgz": 3,
              "tygem-2016-07.tgz": 4, "ai-games.tgz": 2}
    for name, count in months.items():
        archive(tmp_path / "data" / name, [sgf_text(19, random_game(rng, 19, ["pd"], 6)) for _ in range(count)])
    outs = []
    for run in ("a", "b"):
        out = tmp_path / f"{run}.sqlite"
        code, _, err = fuseki("book", "build-builtin", "--from", str(tmp_path / "data"), "--out", str(out),
                              "--min-games", "1", "--workers", "0", "--work", str(tmp_path))
        assert code == 0, err
        outs.append(out.read_bytes())
    info = json.loads((tmp_path / "a.json").read_text())
    assert info["games"] == 9 and info["description"] == "Tygem 2009-11 and 2016-07" and info["min_games"] == 1
    assert outs[0] == outs[1]
    code, _, err = fuseki("book", "build-builtin", "--from", str(tmp_path / "nothing"), "--out", str(tmp_path / "x"))
    assert code == 1 and "no tygem-2005-2009/tygem-*.tgz under" in err
