"""Replaying game records into canonical position keys: the core's public API for the book.

A game is its setup stones and its main line as flat int64 arrays (points, colours);
replaying it yields, for each position reached, the canonical key (the smallest of the
8 symmetric book keys, see ``Board.symmetric_keys``), the symmetry that gives it, and
the move played next mapped by that symmetry.  The work is done by the numba kernels
(``_kernels.replay``/``replay_games``); this module hands them the key tables, so the
book never touches the kernels or their arguments' layout.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from fuseki.engine.core import _kernels as K
from fuseki.engine.core import coords
from fuseki.engine.core.board import side_keys, symmetric_kernel_keys


@cache
def _tables(size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return symmetric_kernel_keys(size), coords.symmetry_table(size), side_keys(size)


def replay_game(size: int, setup_points: np.ndarray, setup_colors: np.ndarray,
                move_points: np.ndarray, move_colors: np.ndarray, first_to_move: int):
    """(keys, symmetries, next moves, count) of one game's positions, in canonical orientation.

    Position i is the one before move i (i = len(moves): the final position).  ``count`` is
    ``len(moves) + 1``, or ``k + 1`` when move k is illegal (the arrays hold ``count``
    valid entries).  ``first_to_move``: who is to move in a game without moves.
    """
    n = len(move_points) + 1
    out_key = np.empty(n, dtype=np.int64)
    out_sym = np.empty(n, dtype=np.int64)
    out_next = np.empty(n, dtype=np.int64)
    count = K.replay(size, *_tables(size), setup_points, setup_colors, move_points, move_colors,
                     first_to_move, out_key, out_sym, out_next)
    return out_key, out_sym, out_next, int(count)


def replay_games(size: int, setup_points: np.ndarray, setup_colors: np.ndarray, setup_offsets: np.ndarray,
                 move_points: np.ndarray, move_colors: np.ndarray, move_offsets: np.ndarray,
                 first_to_move: np.ndarray):
    """(keys, next moves, counts) of many games of one size, replayed in one kernel call.

    Game g's setup is ``setup_*[setup_offsets[g]:setup_offsets[g + 1]]``, its moves
    ``move_*[move_offsets[g]:move_offsets[g + 1]]``; its positions start at
    ``move_offsets[g] + g`` in the outputs and ``counts[g]`` of them were reached.
    """
    rows = len(move_points) + len(first_to_move)
    out_key = np.empty(rows, dtype=np.int64)
    out_next = np.empty(rows, dtype=np.int64)
    counts = np.empty(len(first_to_move), dtype=np.int64)
    K.replay_games(size, *_tables(size), setup_points, setup_colors, setup_offsets, move_points,
                   move_colors, move_offsets, first_to_move, out_key, out_next, counts)
    return out_key, out_next, counts


def replay_games_events(size: int, setup_points: np.ndarray, setup_colors: np.ndarray, setup_offsets: np.ndarray,
                        move_points: np.ndarray, move_colors: np.ndarray, move_offsets: np.ndarray,
                        first_to_move: np.ndarray):
    """``replay_games``' (keys, next moves, counts), and each game's ``replay_events`` from the
    same replay: (keys, next moves, counts, events, event_starts, event_counts); game g's events
    are ``events[event_starts[g]:event_starts[g] + event_counts[g]]`` (uint16)."""
    rows = len(move_points) + len(first_to_move)
    out_key = np.empty(rows, dtype=np.int64)
    out_next = np.empty(rows, dtype=np.int64)
    counts = np.empty(len(first_to_move), dtype=np.int64)
    # uint16 as stored, written so by the kernel: an int64 array here was 4x a group's events, in each parser
    events = np.empty(2 * (len(setup_points) + len(move_points)), dtype=np.uint16)
    event_counts = np.empty(len(first_to_move), dtype=np.int64)
    K.replay_games_events(size, *_tables(size), setup_points, setup_colors, setup_offsets, move_points,
                          move_colors, move_offsets, first_to_move, out_key, out_next, counts, events, event_counts)
    event_starts = 2 * (setup_offsets[:-1] + move_offsets[:-1])
    return out_key, out_next, counts, events, event_starts, event_counts


EVENT_MOVE, EVENT_REMOVE, EVENT_SETUP = K.EVENT_MOVE, K.EVENT_REMOVE, K.EVENT_SETUP


@cache
def _no_keys(size: int) -> np.ndarray:
    return np.zeros((1, 3, (size + 2) ** 2), dtype=np.int64)


def replay_events(size: int, setup_points: np.ndarray, setup_colors: np.ndarray,
                  move_points: np.ndarray, move_colors: np.ndarray) -> np.ndarray:
    """A game as what happens on its board, captures resolved (uint16 ``kind << 12 | point``):
    setup stones (kind ``EVENT_SETUP + colour - 1``), then each move (``EVENT_MOVE + colour
    - 1``; point 0 for a pass) followed by the stones it captured (``EVENT_REMOVE``).  Ends
    before an illegal move.  What a pattern search replays without the rules."""
    # each stone is captured at most once, and every stone was a setup stone or a move
    out = np.empty(2 * (len(setup_points) + len(move_points)), dtype=np.int64)
    count = K.replay_events(size, _no_keys(size), setup_points, setup_colors, move_points, move_colors, out)
    return out[:count].astype(np.uint16)


def held_words(size: int) -> int:
    """uint64 words of a bit set over the padded board's points (``ever_held``'s last axis)."""
    return ((size + 2) ** 2 + 63) // 64


def ever_held(events: np.ndarray, offsets: np.ndarray, size: int) -> np.ndarray:
    """(games, 2, ``held_words(size)``) uint64: the points where each game ever held a black
    (0) and a white (1) stone, from the games' ``replay_events`` concatenated (game g's are
    ``events[offsets[g]:offsets[g + 1]]``).  A pattern search replays only games whose bit
    sets can hold the pattern's stones."""
    if len(offsets) < 2:  # no game: no kernel, whose first call imports numba (engine/core/lazy_jit.py);
        # a search of a book whose index is all in files asks for none before its scan (issue 61)
        return np.zeros((0, 2, held_words(size)), dtype=np.uint64)
    return K.ever_held(events, offsets, held_words(size))
