"""Settings: defaults, the TOML file, command-line flags, and one-line errors naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuseki.engine import config
from fuseki.engine.config import BookSettings, ConfigError, Settings
from fuseki.engine.gtp import cli as gtp_cli

SHIPPED = Path(__file__).resolve().parent.parent / "configs" / "fuseki.toml"


def toml(tmp_path, text):
    path = tmp_path / "fuseki.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_shipped_file_loads_and_matches_the_defaults():
    settings = config.load(SHIPPED)
    assert settings.board_size == 19 and settings.komi == 7.5
    assert not settings.suicide and not settings.superko and settings.seed is None
    assert settings.book.policy == "sound" and settings.book.min_games == 1
    assert settings.book.analysis_min_games == 2
    assert settings.book.path == config.DEFAULT_BOOK
    assert settings == Settings()


def test_every_key_is_read(tmp_path):
    path = toml(tmp_path, """
[game]
board_size = 9
komi = 6
[rules]
suicide = true
superko = true
[engine]
seed = 7
[ai]
katago = "katago analysis -model m.bin.gz -config a.cfg"
[book]
path = "books/pro.db"
policy = "weighted"
min_games = 3
temperature = 0.5
analysis_min_games = 5
""")
    assert config.load(path) == Settings(
        board_size=9, komi=6.0, suicide=True, superko=True, seed=7,
        katago="katago analysis -model m.bin.gz -config a.cfg",
        book=BookSettings(str(tmp_path / "books/pro.db"), "weighted", 3, 0.5, analysis_min_games=5))


def test_flags_override_the_file(tmp_path):
    path = toml(tmp_path, "[game]\nboard_size = 9\nkomi = 6.5\n")
    settings = config.load(path, {"game.board_size": 13, "game.komi": None, "book.policy": "winrate"})
    assert (settings.board_size, settings.komi, settings.book.policy) == (13, 6.5, "winrate")


@pytest.mark.parametrize("text, key", [
    ("[game]\nboard_size = 26\n", "game.board_size"),
    ("[game]\nboard_size = 1\n", "game.board_size"),
    ("[game]\nboard_size = \"19\"\n", "game.board_size"),
    ("[game]\nboard_size = true\n", "game.board_size"),
    ("[game]\nkomi = \"7.5\"\n", "game.komi"),
    ("[game]\nkomi = nan\n", "game.komi"),
    ("[game]\nkomi = 1e308\n", "game.komi"),
    ("[game]\nkomi = -1000.5\n", "game.komi"),
    ("[rules]\nsuicide = \"yes\"\n", "rules.suicide"),
    ("[rules]\nsuperko = 1\n", "rules.superko"),
    ("[engine]\nseed = -1\n", "engine.seed"),
    ("[engine]\nseed = 1.5\n", "engine.seed"),
    ("[book]\npolicy = \"random\"\n", "book.policy"),
    ("[book]\nmin_games = 0\n", "book.min_games"),
    ("[book]\nanalysis_min_games = 0\n", "book.analysis_min_games"),
    ("[book]\nanalysis_min_games = 2.5\n", "book.analysis_min_games"),
    ("[book]\ntemperature = 0\n", "book.temperature"),
    ("[book]\npath = 3\n", "book.path"),
    ("[game]\nboardsize = 9\n", "game.boardsize"),
    ("[gmae]\nkomi = 1\n", "gmae.komi"),
    ("komi = 7.5\n", "komi"),
])
def test_bad_values_name_the_key_in_one_line(tmp_path, text, key):
    path = toml(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        config.load(path)
    message = str(caught.value)
    assert f"'{key}'" in message and str(path) in message and "\n" not in message


def test_bad_flag_values_name_the_key():
    with pytest.raises(ConfigError, match="command line: 'game.board_size'"):
        config.load(SHIPPED, {"game.board_size": 30})


def test_missing_and_broken_files(tmp_path):
    with pytest.raises(ConfigError, match="config file not found"):
        config.load(tmp_path / "nope.toml")
    with pytest.raises(ConfigError, match="not valid TOML"):
        config.load(toml(tmp_path, "[game\n"))


def test_cli_flags_reach_the_settings(tmp_path):
    path = toml(tmp_path, "[game]\nkomi = 5.5\n")
    args = gtp_cli.build_parser().parse_args(
        ["--config", str(path), "--size", "13", "--seed", "4", "--superko", "--no-suicide",
         "--policy", "weighted", "--min-games", "2", "--temperature", "0.7", "--book", "b.db",
         "--analysis-min-games", "10"])
    settings = gtp_cli.settings_from(args)
    assert (settings.board_size, settings.komi, settings.seed, settings.superko) == (13, 5.5, 4, True)
    assert settings.book == BookSettings("b.db", "weighted", 2, 0.7, analysis_min_games=10)


def test_cli_bad_config_is_one_line_and_exit_code_2(tmp_path, capsys):
    path = toml(tmp_path, "[rules]\nsuperko = \"maybe\"\n")
    assert gtp_cli.main(["--config", str(path)]) == 2
    out, errors = capsys.readouterr()
    assert out == "" and errors.count("\n") == 1
    assert errors.startswith("fuseki-gtp: ") and "'rules.superko'" in errors


def test_cli_bad_flag_is_refused(capsys):
    assert gtp_cli.main(["--size", "40"]) == 2
    assert "'game.board_size'" in capsys.readouterr().err


def test_the_book_location_is_the_flag_then_env_then_file_then_default(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv(config.BOOK_ENV, raising=False)
    default = config.book_location(config.load(SHIPPED), create=True)
    assert default == str(tmp_path / ".local/share/fuseki/book.sqlite")
    assert (tmp_path / ".local/share/fuseki").is_dir()
    monkeypatch.setenv(config.BOOK_ENV, "/data/env.sqlite")
    assert config.book_location(config.load(SHIPPED)) == "/data/env.sqlite"
    named = toml(tmp_path, '[book]\npath = "books/pro.db"\n')
    assert config.book_location(config.load(named)) == str(tmp_path / "books/pro.db")
    flagged = config.load(named, {"book.path": "cli.sqlite"})
    assert config.book_location(flagged) == "cli.sqlite"


def test_a_book_url_in_the_file_is_not_made_a_path(tmp_path):
    url = "postgresql://fuseki@127.0.0.1/book"
    path = toml(tmp_path, f'[book]\npath = "{url}"\n')
    assert config.load(path).book.path == url
