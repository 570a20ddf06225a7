"""Practice over the book: guess the next move of a game, and a joseki quiz from the corner book.

Kombilo's guess mode and the OGS joseki explorer's play mode, as plain functions over an open
``Book`` (``book.ui.web.practice_routes`` puts them on the web page; no HTTP here).

**Guess the next move.** ``question_move(record, move, colour)`` is the first move number at or
after ``move`` (moves played before the question) whose next move the visitor guesses: a
board move (a pass cannot be clicked), of ``colour`` when one is chosen.  ``guess(book, record,
move, point)`` judges a guess: right when it is the game's move or a point equivalent to it
under the position's own symmetry (the book's ``MoveStat.points``: on a symmetric board two
points are one move); ``games`` of the ``total`` games of the book that reached the position
(any orientation, each game once: ``Book.next_moves``) chose the guess there, ``share`` their
ratio.  The game itself is one of those games.  A guess on an occupied or illegal point is a
``PracticeError`` naming the vertex (``Q16 is occupied``).  ``Score`` adds the guesses up:
right of asked, and the average share of the guesses (how often strong players chose them).

**Joseki quiz.** ``pick_line(lookup, size, rng, min_games)`` plays a line in one corner, drawn
from the corner book (``book.analysis.patterns.corners``): a random corner and a random depth (1 to
``MAX_DEPTH``), then move by move, colours alternating from Black, a continuation of that
corner played in at least ``min_games`` games, drawn in proportion to its games (so lines are
drawn as often as they were played).  It stops early where the corner book knows no such
continuation; the question is the last position that has one.  ``answer_quiz(lookup, moves,
corner, point)`` says how often ``point`` was played there: its games, the corner's
``total`` (the games of every move the corner book holds there; the players who left the
corner instead, ``tenuki``, are counted apart: the quiz asks for a move in the corner) and their
ratio, and the most played answers.  A
point outside the quiz's corner, occupied or illegal is a ``PracticeError`` naming the vertex.
``continue_line`` plays the visitor's answer and a reply drawn as ``pick_line`` draws (among the
replies after which the corner book has an answer of ``min_games``), when the answer is a book
move of at least ``min_games`` games and such a reply exists.

``lookup(board, colour)`` is ``corners.of_book`` bound to a book (None: no corner book).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from fuseki.book.analysis.patterns.corners import CORNER_NAMES, corner_of_point
from fuseki.book.formats.positions import board_after_record
from fuseki.book.model.stats import ratio
from fuseki.engine.core import base
from fuseki.engine.core.board import Board

MAX_DEPTH = 10  # the quiz's deepest question: corner moves played before it
BEST = 3        # answers listed as the most played (ties beyond it are cut)


class PracticeError(ValueError):
    """A guess or an answer that cannot be judged; the message names the point or the move."""


# --- guess the next move ------------------------------------------------------------------


@dataclass(frozen=True)
class Score:
    """Guesses so far: ``right`` of ``asked``, and ``shares``, the sum of each guess's share."""

    asked: int = 0
    right: int = 0
    shares: float = 0.0

    def add(self, right: bool, share: float) -> Score:
        return Score(self.asked + 1, self.right + int(right), self.shares + share)

    @property
    def average(self) -> float:
        """The average share of the guesses (0 before the first)."""
        return ratio(self.shares, self.asked)


@dataclass(frozen=True)
class Guess:
    """A judged guess at the move after ``move`` moves of a game."""

    move: int
    colour: int          # the player whose move was guessed
    point: int           # the guess
    actual: int          # the game's move
    right: bool
    games: int           # the book's games that chose the guess in this position
    total: int           # the book's games that reached it
    actual_games: int    # the book's games that chose the game's move
    best: tuple          # the book's most played next moves (``MoveStat``), at most BEST

    @property
    def share(self) -> float:
        return ratio(self.games, self.total)

    @property
    def actual_share(self) -> float:
        return ratio(self.actual_games, self.total)


def question_move(record, move: int, colour: int | None = None) -> int | None:
    """The first move number ``n >= move`` whose move (``record.moves[n]``) is a board move of
    ``colour`` (any colour when None); None when the game has no more."""
    for n in range(max(move, 0), len(record.moves)):
        mover, point = record.moves[n]
        if point != base.PASS and (colour is None or mover == colour):
            return n
    return None


def _illegal(board: Board, colour: int, point: int) -> None:
    reason = board.legal_reason(colour, point)
    if reason is not None:
        raise PracticeError(f"{base.point_to_vertex(point, board.size)} is {reason}")


def guess(book, record, move: int, point: int) -> Guess:
    """Judge ``point`` as the move after ``move`` moves of ``record`` (see the module docstring)."""
    if not 0 <= move < len(record.moves):
        raise PracticeError(f"move {move}: the game has {len(record.moves)} moves, none after it to guess")
    board = board_after_record(record, move, strict=False)
    colour, actual = record.moves[move]
    if actual == base.PASS:
        raise PracticeError(f"move {move + 1} of the game is a pass: no point to guess")
    _illegal(board, colour, point)
    found = book.next_moves(board, to_move=colour)

    def games_of(p: int) -> int:
        return next((s.games for s in found.moves if p in s.points), 0)

    same = point == actual or any(point in s.points and actual in s.points for s in found.moves)
    return Guess(move, colour, point, actual, same, games_of(point), found.total, games_of(actual),
                 tuple(found.moves[:BEST]))


# --- the joseki quiz --------------------------------------------------------------------------


Lookup = Callable[[Board, int], list]


@dataclass(frozen=True)
class QuizLine:
    """A quiz question: ``moves`` (points, Black first, alternating) played in ``corner``;
    the player to move answers in that corner."""

    size: int
    corner: int
    moves: tuple[int, ...]

    def board(self) -> Board:
        return replay(self.size, self.moves)


@dataclass(frozen=True)
class QuizAnswer:
    """How often the corner book's games played ``point`` at the quiz's question."""

    point: int
    corner: int
    colour: int
    games: int           # the games that played it in a corner like this one
    total: int           # the games with a corner like this one and a continuation, tenuki included
                         # (an older corner book, which counts times only: the times of its moves)
    tenuki: int          # the games that left such a corner here (an older corner book: times)
    best: tuple          # the most played continuations (``CornerMove``), at most BEST

    @property
    def share(self) -> float:
        return ratio(self.games, self.total)


def replay(size: int, moves) -> Board:
    """The board after ``moves`` (points), Black first, alternating; PracticeError naming an illegal one."""
    board = Board(size)
    for number, point in enumerate(moves, 1):
        reason = board.legal_reason(board.to_move, point)
        if reason is not None:
            raise PracticeError(f"move {number} ({base.point_to_vertex(point, size)}) is illegal: {reason}")
        board.play(board.to_move, point)
    return board


def _corner_moves(lookup: Lookup, board: Board, corner: int):
    found = lookup(board, board.to_move)
    if found is None:
        raise PracticeError("this book has no corner book: fuseki corners --book BOOK builds it")
    return next((c for c in found if c.corner == corner), None)


def _choices(lookup: Lookup, board: Board, corner: int, min_games: int) -> list[tuple[int, float]]:
    """(point, games) of the corner's continuations of at least ``min_games`` games, legal here
    (a corner symmetric about its diagonal: each of the move's legal points, its games shared)."""
    here = _corner_moves(lookup, board, corner)
    if here is None:
        return []
    out = []
    for move in here.moves:
        if move.games < min_games:
            continue
        legal = [p for p in move.points if board.legal_reason(board.to_move, p) is None]
        out += [(p, move.games / len(legal)) for p in legal]
    return out


def _draw(choices: list[tuple[int, float]], rng: random.Random) -> int:
    return rng.choices([p for p, _ in choices], weights=[w for _, w in choices])[0]


def _walk(lookup: Lookup, size: int, corner: int, moves: list[int], depth: int, min_games: int,
          rng: random.Random) -> QuizLine | None:
    """Draw moves onto ``moves`` until ``depth`` of them; the line up to the last position that
    has a continuation of ``min_games`` games (None: not even the first)."""
    board = replay(size, moves)
    while True:
        choices = _choices(lookup, board, corner, min_games)
        if not choices:
            if not moves:
                return None
            moves.pop()  # the position before the last move had one: the question is there
            return QuizLine(size, corner, tuple(moves))
        if len(moves) >= depth:
            return QuizLine(size, corner, tuple(moves))
        point = _draw(choices, rng)
        board.play(board.to_move, point)
        moves.append(point)


def pick_line(lookup: Lookup, size: int, rng: random.Random, min_games: int = 10,
              depth: int | None = None, corner: int | None = None) -> QuizLine | None:
    """A quiz line (see the module docstring); None when the corner book has no move of
    ``min_games`` games in an empty corner."""
    corner = rng.randrange(4) if corner is None else corner
    depth = rng.randint(1, MAX_DEPTH) if depth is None else depth
    return _walk(lookup, size, corner, [], depth, min_games, rng)


def answer_quiz(lookup: Lookup, line: QuizLine, point: int) -> QuizAnswer:
    """How often ``point`` was played at ``line``'s question (see the module docstring)."""
    board = line.board()
    vertex = base.point_to_vertex(point, line.size) if point != base.PASS else "pass"
    if corner_of_point(point, line.size) != line.corner:
        raise PracticeError(f"{vertex} is not in the quiz's corner ({CORNER_NAMES[line.corner]})")
    _illegal(board, board.to_move, point)
    here = _corner_moves(lookup, board, line.corner)
    moves = here.moves if here is not None else []
    games = next((m.games for m in moves if point in m.points), 0)
    best = tuple(moves[:BEST])
    # a game may play two of the moves in two corners like this one (the empty corner): the sum
    # of the moves' games is no number of games, the corner's own count is
    if here is None:
        total, tenuki = 0, 0
    elif here.games is None:
        total, tenuki = sum(m.games for m in moves), here.tenuki
    else:
        total, tenuki = here.games, here.tenuki_games
    return QuizAnswer(point, line.corner, board.to_move, games, total, tenuki, best)


def continue_line(lookup: Lookup, line: QuizLine, point: int, min_games: int,
                  rng: random.Random) -> QuizLine | None:
    """The line after the answer ``point`` and a reply drawn from the corner book, when the
    answer is a continuation of ``min_games`` games and a reply with a question after it exists; else None."""
    board = line.board()
    if not any(p == point for p, _ in _choices(lookup, board, line.corner, min_games)):
        return None
    board.play(board.to_move, point)
    replies = _choices(lookup, board, line.corner, min_games)
    while replies:  # a reply after which the corner book knows no answer is no question: draw again
        reply = _draw(replies, rng)
        after = board.copy()
        after.play(after.to_move, reply)
        if _choices(lookup, after, line.corner, min_games):
            return QuizLine(line.size, line.corner, (*line.moves, point, reply))
        replies = [(p, w) for p, w in replies if p != reply]
    return None
