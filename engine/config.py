"""Engine settings: defaults, then a TOML file, then command-line flags.

The file (``configs/fuseki.toml`` in the repository unless ``--config PATH``
names another) has five tables; every key is optional::

    [game]   board_size = 19        (2..25)     komi = 7.5 (-1000..1000)
    [rules]  suicide = false        superko = false
    [engine] seed = 42              (an integer >= 0; absent: a fresh seed each run)
             fallback_engine = "gnugo --mode gtp"   (answers genmove when the book has no move)
    [book]   path = "~/books/pro.sqlite"   policy = "sound" | "best" | "weighted" | "winrate"
             min_games = 1          (>= 1)      temperature = 1.0   (> 0)
             analysis_min_games = 2 (>= 1: the fewest games a move needs in analysis lines)
             corner_book = true     (out of the whole-board book, play the corner book's joseki)
             corner_until = 0       (>= 0: the last move number the corner book plays; 0: no limit)
    [ai]     katago = "katago analysis -model M -config C"   (fuseki search --ai; after $FUSEKI_KATAGO)
             max_loss = 2.0         (>= 0: policy "sound" skips book moves whose stored AI loss is over it)
             rules = "japanese"     komi = 6.5   (the settings of the stored AI values the engine reads)

The book is found in this order: ``--book``, ``$FUSEKI_BOOK``, ``[book] path``,
then ``DEFAULT_BOOK`` (``~/.local/share/fuseki/book.sqlite``), so that the
engine, wherever a GUI starts it, finds the book ``fuseki import`` filled.
A relative ``book.path`` in a file is relative to that file's folder; ``~`` is
expanded; a URL (``postgresql://...``) is taken as it is.
Unknown tables or keys and values of the wrong type or range raise
``ConfigError`` with a one-line message naming the key; this module never
prints and never exits.
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from fuseki.engine.core.base import MAX_KOMI, MAX_SIZE, MIN_SIZE

DEFAULT_PATH = Path(__file__).resolve().parents[1] / "configs" / "fuseki.toml"  # shipped in the package
# the values of the [book] policy setting: how a chooser picks among candidate moves (book, corner book);
# "sound" (the default): the most played book move that KataGo's stored values rate within the noise
# of the best book move (docs/engine.md, "The sound policy"), then KataGo's stored line past the book
POLICIES = ("best", "weighted", "winrate", "sound")
DEFAULT_BOOK = "~/.local/share/fuseki/book.sqlite"
BOOK_ENV = "FUSEKI_BOOK"
DEFAULT_AI_CACHE = "~/.local/share/fuseki/ai-cache.sqlite"
AI_CACHE_ENV = "FUSEKI_AI_CACHE"


def ai_cache_path() -> Path:
    """The user's AI value cache file: ``$FUSEKI_AI_CACHE``, else ``DEFAULT_AI_CACHE`` (here, below
    the book, so that the engine's book chooser and the ways in name the same file)."""
    return Path(os.environ.get(AI_CACHE_ENV) or DEFAULT_AI_CACHE).expanduser()


class ConfigError(ValueError):
    """A settings file or flag that cannot be used; the message is one line naming the key."""


@dataclass(frozen=True)
class BookSettings:
    path: str = DEFAULT_BOOK
    policy: str = "sound"
    min_games: int = 1
    temperature: float = 1.0
    # lz-analyze and friends: a move from one game would show 100% beside a 6,000-game move
    analysis_min_games: int = 2
    # out of the whole-board book, the corner book (book.analysis.patterns.corners) answers while a
    # corner continuation has min_games games, up to move corner_until (0: no limit)
    corner_book: bool = True
    corner_until: int = 0


@dataclass(frozen=True)
class Settings:
    board_size: int = 19
    komi: float = 7.5
    suicide: bool = False
    superko: bool = False
    seed: int | None = None
    fallback_engine: str | None = None
    katago: str | None = None  # KataGo's analysis engine command (fuseki search --ai)
    # policy "sound" also skips a book move whose stored AI loss is over max_loss points; the
    # stored values read are those of ai_rules and ai_komi (fuseki ai annotate's defaults)
    max_loss: float = 2.0
    ai_rules: str = "japanese"
    ai_komi: float = 6.5
    book: BookSettings = field(default_factory=BookSettings)


# --- validators: value -> checked value, or raise ValueError("must be ...") --------

def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("must be true or false")
    return value


def _size(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not MIN_SIZE <= value <= MAX_SIZE:
        raise ValueError(f"must be an integer from {MIN_SIZE} to {MAX_SIZE}")
    return value


def _komi(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError("must be a number")
    if abs(value) > MAX_KOMI:
        raise ValueError(f"must be from {-MAX_KOMI} to {MAX_KOMI}")
    return float(value)


def _points(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ValueError("must be a number >= 0")
    return float(value)


def _rules(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError("must be a rules name such as \"japanese\"")
    return value


def _ai_komi(value: Any) -> float:
    komi = _komi(value)
    if komi * 2 != int(komi * 2):
        raise ValueError("must be a whole or half number (the AI values are stored so)")
    return komi


def _seed(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError("must be an integer >= 0")
    return value


def _path(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("must be a string")
    return value


def _policy(value: Any) -> str:
    if value not in POLICIES:
        raise ValueError("must be one of " + ", ".join(POLICIES))
    return value


def _min_games(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError("must be an integer >= 1")
    return value


def _move_number(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError("must be an integer >= 0")
    return value


def _temperature(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 \
            or not math.isfinite(value):
        raise ValueError("must be a number > 0")
    return float(value)


# "table.key" -> (Settings field or "book.<field>", validator)
KEYS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "game.board_size": ("board_size", _size),
    "game.komi": ("komi", _komi),
    "rules.suicide": ("suicide", _boolean),
    "rules.superko": ("superko", _boolean),
    "engine.seed": ("seed", _seed),
    "engine.fallback_engine": ("fallback_engine", _path),
    "ai.katago": ("katago", _path),
    "ai.max_loss": ("max_loss", _points),
    "ai.rules": ("ai_rules", _rules),
    "ai.komi": ("ai_komi", _ai_komi),
    "book.path": ("book.path", _path),
    "book.policy": ("book.policy", _policy),
    "book.min_games": ("book.min_games", _min_games),
    "book.temperature": ("book.temperature", _temperature),
    "book.analysis_min_games": ("book.analysis_min_games", _min_games),
    "book.corner_book": ("book.corner_book", _boolean),
    "book.corner_until": ("book.corner_until", _move_number),
}


def apply(settings: Settings, values: dict[str, Any], origin: str) -> Settings:
    """``settings`` with ``values`` ({"table.key": value}) checked and applied.

    Raises ConfigError("<origin>: <key> <problem>") for an unknown key or a bad value.
    """
    for key, value in values.items():
        if key not in KEYS:
            raise ConfigError(f"{origin}: unknown key '{key}'")
        name, check = KEYS[key]
        try:
            value = check(value)
        except ValueError as exc:
            raise ConfigError(f"{origin}: '{key}' {exc}, not {value!r}") from None
        if name.startswith("book."):
            settings = replace(settings, book=replace(settings.book, **{name[5:]: value}))
        else:
            settings = replace(settings, **{name: value})
    return settings


def read_file(path: Path) -> dict[str, Any]:
    """{"table.key": value} from a TOML file; raises ConfigError naming the file."""
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config file ({exc.strerror})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None
    flat: dict[str, Any] = {}
    for table, keys in data.items():
        if not isinstance(keys, dict):
            raise ConfigError(f"{path}: '{table}' must be a table such as [{table}]")
        for key, value in keys.items():
            flat[f"{table}.{key}"] = value
    if isinstance(flat.get("book.path"), str) and flat["book.path"]:
        flat["book.path"] = resolve_book(flat["book.path"], Path(path).parent)
    return flat


def resolve_book(location: str, folder: Path) -> str:
    """A book path relative to ``folder`` with ``~`` expanded; URLs unchanged."""
    if "://" in location:
        return location
    return str(folder / Path(location).expanduser())


def book_location(settings: Settings, create: bool = False) -> str:
    """The book to use: ``$FUSEKI_BOOK`` unless a file or flag named one, else the default.

    The default location is expanded; with ``create`` its folder is made, so
    that a first ``fuseki import`` needs no set-up.
    """
    location = settings.book.path
    if location == DEFAULT_BOOK:
        location = os.environ.get(BOOK_ENV) or location
    if location == DEFAULT_BOOK:
        location = str(Path(DEFAULT_BOOK).expanduser())
        if create:
            Path(location).parent.mkdir(parents=True, exist_ok=True)
    return location


def load(path: str | Path | None = None, overrides: dict[str, Any] | None = None) -> Settings:
    """Defaults, then the file (``path``, else ``DEFAULT_PATH`` when it exists), then ``overrides``.

    ``overrides`` uses the same "table.key" names (the command-line flags);
    None values are skipped.  Raises ConfigError.
    """
    settings = Settings()
    if path is not None or DEFAULT_PATH.exists():
        file = Path(path) if path is not None else DEFAULT_PATH
        settings = apply(settings, read_file(file), str(file))
    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    return apply(settings, given, "command line")
