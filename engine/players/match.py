"""``fuseki match``: games between two GTP engines, in the spirit of gogui-twogtp.

Reading guide:

- ``match_game`` is one game: the options (``MatchConfig``), the engines, the arbiter
  and the scoring;
- ``Match.run`` (here) plays the games not yet in ``results.jsonl`` (``--sgf-dir``:
  one JSON line per finished game, the whole file replaced atomically after
  each game, so an interrupted match resumes with the missing games only),
  ``--parallel K`` at once; each worker thread keeps its own engine processes
  and reuses them from game to game (``clear_board``), restarting any that
  died or misbehaved;
- ``match_report`` is what a match leaves behind: the SGF files and the summary
  (``results_table``: wins per engine and per colour, win rate with a 95% Wilson
  interval, an Elo difference estimate, how games ended); the command is ``fuseki match``
  (``book.ui.commands.match_command``).

Diagnostics and progress go to stderr; the table to stdout.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from fuseki.engine.players.match_game import (
    IDENTITY,
    RESULTS,
    SETTINGS,
    Game,
    Interrupted,
    MatchConfig,
    MatchError,
    Player,
    play_game,
    repeats,
)
from fuseki.engine.players.match_report import game_sgf


def write_atomically(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def read_results(folder: Path) -> list[dict]:
    """The finished games of ``folder/results.jsonl`` (unreadable lines skipped)."""
    path = folder / RESULTS
    if not path.exists():
        return []
    results = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("game"), int):
            results.append(entry)
    return results


class Match:
    """Plays the games of ``config`` not yet recorded; see the module docstring."""

    def __init__(self, config: MatchConfig, log: Callable[[str], None] | None = None):
        self.config = config
        self.log = log or (lambda text: print(text, file=sys.stderr, flush=True))
        self.folder = Path(config.sgf_dir) if config.sgf_dir else None
        self.results: dict[int, dict] = {}
        self.stop = threading.Event()
        self._lock = threading.Lock()
        self._local = threading.local()
        self._seats: list[tuple] = []
        if config.adjudicate_resign and not config.referee:
            raise MatchError("--adjudicate-resign needs a --referee")
        if self.folder is not None:
            self._resume()

    def _resume(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self._lock_folder()
        try:
            self._check_settings()
        except BaseException:
            self._lockfile.close()
            raise
        for entry in read_results(self.folder):
            self.results[entry["game"]] = entry

    def _check_settings(self) -> None:
        settings = self.folder / SETTINGS
        identity = self.config.identity()
        if settings.exists():
            old = json.loads(settings.read_text(encoding="utf-8"))
            different = [k for k in IDENTITY if old.get(k) != identity[k]]
            if different:
                raise MatchError(f"{self.folder} holds another match (different {', '.join(different)}); "
                                 "use another --sgf-dir")
        else:
            write_atomically(settings, json.dumps(identity, indent=1).encode() + b"\n")

    def _lock_folder(self) -> None:
        """Two matches writing one results file would each overwrite the other's games."""
        import fcntl

        self._lockfile = open(self.folder / ".lock", "w")
        try:
            fcntl.flock(self._lockfile, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._lockfile.close()
            raise MatchError(f"another match is running in {self.folder}") from None

    def missing(self) -> list[int]:
        return [i for i in range(self.config.games) if i not in self.results]

    def run(self) -> list[dict]:
        """Play the missing games; the results of games 0 .. games-1 in order."""
        todo = self.missing()
        if len(todo) < self.config.games:
            self.log(f"fuseki match: resuming, {self.config.games - len(todo)} games already played")
        pool = ThreadPoolExecutor(max_workers=max(1, self.config.parallel))
        try:
            for future in [pool.submit(self._one, i) for i in todo]:
                future.result()
        except BaseException:
            self.stop.set()  # games in progress end at their next move and are not recorded
            with self._lock:
                for player in (p for seat in self._seats for p in seat if p and p.client):
                    player.client.kill()  # so that no game waits on a slow genmove
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            for seat in self._seats:
                for player in seat:
                    if player is not None:
                        player.stop()
            if getattr(self, "_lockfile", None) is not None:
                self._lockfile.close()  # releases the lock
                self._lockfile = None
        return [self.results[i] for i in sorted(self.results) if i < self.config.games]

    def _one(self, index: int) -> None:
        if self.stop.is_set():
            return
        seat = getattr(self._local, "seat", None)
        if seat is None:
            config = self.config
            seat = (Player("A", config.black, config.timeout), Player("B", config.white, config.timeout),
                    Player("referee", config.referee, config.timeout) if config.referee else None)
            self._local.seat = seat
            with self._lock:
                self._seats.append(seat)
        try:
            result, game = play_game(self.config, index, {"A": seat[0], "B": seat[1]}, seat[2], self.stop)
        except Interrupted:
            return
        if self.stop.is_set():
            return  # engines may have been killed under it: do not record
        self._record(game, result)

    def _record(self, game: Game, result: dict) -> None:
        if self.folder is not None:
            name = f"game-{game.index + 1:04d}.sgf"
            write_atomically(self.folder / name, game_sgf(self.config, game, result))
            result["sgf"] = name
        with self._lock:
            self.results[game.index] = result
            if self.folder is not None:
                lines = [json.dumps(self.results[i], sort_keys=True) for i in sorted(self.results)]
                write_atomically(self.folder / RESULTS, ("\n".join(lines) + "\n").encode())
            done = sum(1 for i in self.results if i < self.config.games)
        fault = result["fault"]
        note = f", {fault['engine']} {fault['kind']}: {fault['detail']}" if fault else ""
        with self._lock:
            earlier = repeats(list(self.results.values())).get(game.index)
        if earlier is not None:
            note += f"; the same moves as game {earlier + 1}"
        self.log(f"fuseki match: game {game.index + 1} ({done}/{self.config.games}): "
                 f"{result['black']} (black) vs {result['white']}: {result['result']} "
                 f"({result['reason']}, {result['moves']} moves{note})")
