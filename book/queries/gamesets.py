"""A set of games to search within: the games of an earlier answer, kept, saved and loaded.

Kombilo's "search within results": a position or a pattern searched only in the games that
answered an earlier search.  ``GameSet`` holds those game ids (sorted, unique, a read-only
numpy array) and is hashable, so a ``book.storage.store.Filters`` holding one (its ``within``
field) stays a cache key: ``Book.mask`` keeps one mask per Filters value and ANDs the set
into the year and player mask, so every query that filters games (``Book.next_moves``,
``Book.games``, ``book.queries.years``, ``book.analysis.patterns.search.search``) searches within it.

The games of an answer: for a position, the games that reached it in any orientation
(``position_games``: the book's rule, each game once); for a pattern, the games that matched
(``PatternResult.matches``: ``GameSet.of``).

A saved set (``save``/``load``, ``fuseki search --save-games FILE`` and ``--within FILE``) is
JSON: the ids, and the book's identity, so that a file is never applied to another book's
games, whose ids mean other games.  The identity is the fingerprint (``games.fingerprint``:
the moves' hash the importer deduplicates by) of the book's first game, and a digest of the
saved games' fingerprints: a book that only grew since (ids are never reused) still matches.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
from sqlalchemy import func, select

from fuseki.book.storage.schema import games as games_table

FORMAT = "fuseki-games"  # a saved set's "format" value
VERSION = 1
CHUNK = 10_000  # ids in one IN (...) list when reading fingerprints (SQLite allows 32,766 variables)


class GameSetError(ValueError):
    """A saved set that cannot be read or belongs to another book; the message says which file and why."""


class GameSet:
    """Game ids, immutable and hashable (by a digest of the ids, computed once)."""

    __slots__ = ("ids", "_digest")

    def __init__(self, ids):
        array = np.unique(np.asarray(ids, dtype=np.int64))
        array.setflags(write=False)
        self.ids = array
        self._digest = hashlib.blake2b(array.tobytes(), digest_size=16).digest()

    @classmethod
    def of(cls, ids) -> GameSet:
        """The set of an iterable of ids (a pattern's ``matches`` dict gives its keys)."""
        return cls(np.fromiter((int(i) for i in ids), dtype=np.int64))

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, game_id) -> bool:
        at = int(np.searchsorted(self.ids, int(game_id)))
        return at < len(self.ids) and int(self.ids[at]) == int(game_id)

    def __hash__(self) -> int:
        return hash(self._digest)

    def __eq__(self, other) -> bool:
        return isinstance(other, GameSet) and self._digest == other._digest and len(self) == len(other)

    def __repr__(self) -> str:
        return f"GameSet({len(self)} games)"

    def __and__(self, other: GameSet) -> GameSet:
        return GameSet(np.intersect1d(self.ids, other.ids, assume_unique=True))

    def mask(self, length: int) -> np.ndarray:
        """A boolean mask over game ids ``0..length-1``, true at this set's games."""
        mask = np.zeros(length, dtype=bool)
        mask[self.ids[self.ids < length]] = True
        return mask


def intersect(sets) -> GameSet | None:
    """The games in every one of ``sets`` (None where there are none: no restriction)."""
    result = None
    for one in sets:
        result = one if result is None else result & one
    return result


def position_games(book, board, filters, to_move: int | None = None) -> GameSet:
    """The games that reached ``board``'s position (any orientation; each game once), as
    ``Book.games`` counts them, of those ``filters`` (a ``Filters``: ``Filters()`` for all) keeps."""
    side = board.to_move if to_move is None else to_move
    _counts, game_ids, _moves, _nexts, _winners = book.visits(min(board.symmetric_keys(side)), filters,
                                                                every_row=True)
    return GameSet(game_ids)


def identity(book, ids: np.ndarray) -> dict:
    """The book's identity for a set of its games: its first game's fingerprint and a digest of
    the fingerprints of ``ids`` (in id order)."""
    with book.db.connect() as conn:
        first = conn.execute(select(games_table.c.fingerprint).where(
            games_table.c.id == select(func.min(games_table.c.id)).scalar_subquery())).scalar()
        prints = {}
        listed = ids.tolist()
        for start in range(0, len(listed), CHUNK):
            prints.update(conn.execute(select(games_table.c.id, games_table.c.fingerprint)
                                       .where(games_table.c.id.in_(listed[start:start + CHUNK]))).all())
    digest = hashlib.blake2b(digest_size=16)
    for game_id in listed:
        digest.update(int(prints.get(game_id, 0)).to_bytes(8, "little", signed=True))
    return {"first_game": None if first is None else int(first), "games_digest": digest.hexdigest(),
            "missing": sum(1 for game_id in listed if game_id not in prints)}


def save(path: str, book, games: GameSet, query: str = "") -> None:
    """Write ``games`` with the book's identity to ``path`` (``query``: what answered them, in words)."""
    if getattr(book, "statistics", None) is not None:
        raise GameSetError("a statistics book has no games to save (the built-in book holds counts only)")
    mark = identity(book, games.ids)
    body = {"format": FORMAT, "version": VERSION, "query": query, "first_game": mark["first_game"],
            "games_digest": mark["games_digest"], "count": len(games), "games": games.ids.tolist()}
    try:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(body, handle)
            handle.write("\n")
    except OSError as exc:
        raise GameSetError(f"cannot write the games to {path}: {exc.strerror or exc}") from None


def load(path: str, book) -> tuple[GameSet, str]:
    """(the games saved in ``path``, the query that found them); GameSetError when the file cannot
    be read, is no saved set, or was saved from another book."""
    try:
        with open(path, encoding="utf-8") as handle:
            body = json.load(handle)
    except OSError as exc:
        raise GameSetError(f"cannot read the games file {path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GameSetError(f"{path} is not a games file of fuseki (not JSON: {exc})") from None
    if not isinstance(body, dict) or body.get("format") != FORMAT:
        raise GameSetError(f"{path} is not a games file of fuseki (fuseki search --save-games FILE writes one)")
    if body.get("version") != VERSION:
        raise GameSetError(f"{path} is a games file of version {body.get('version')}; this fuseki reads {VERSION}")
    ids = body.get("games")
    if not isinstance(ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) and 0 < i < 2**63
                                            for i in ids):
        raise GameSetError(f"{path}: 'games' must be a list of game ids (positive whole numbers)")
    if getattr(book, "statistics", None) is not None:
        raise GameSetError(f"{path} lists games, and this book holds statistics only (no games to search within)")
    games = GameSet(ids)
    mark = identity(book, games.ids)
    if mark["first_game"] != body.get("first_game") or mark["missing"] or mark["games_digest"] != body.get(
            "games_digest"):
        why = (f"{mark['missing']} of its {len(games)} ids are no game here" if mark["missing"]
               else "its ids are other games here")
        raise GameSetError(f"{path} was saved from another book ({why}): search again in this book "
                           "and save its games")
    return games, str(body.get("query") or "")
