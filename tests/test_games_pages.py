"""``Book.games`` pages and the player index against a slow listing written here.

The slow side reads every stored game back (``Book.game``: moves, date, names), replays
it with ``Board`` to see whether it reaches the position in any orientation, filters in
Python and sorts newest first by (date, id).  The fast side is the book's: codes from the
positions index, the player index (``players``/``game_players``), the rank array or the
database's sort, keyset pages (``after=``).  Both sort paths are checked (``FEW_GAMES``
moved), on SQLite and PostgreSQL, with ties on the date and games without one.
"""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import select

from fuseki.book.analysis.pipeline import importer
from fuseki.book.model.filters import Filters
from fuseki.book.storage import schema, store
from fuseki.book.storage.store import Book
from fuseki.engine.core.board import Board

from games import random_game, sgf_text
from replay import board_after, signature, transformed

OPENINGS = [["pd"], ["pd", "dp"], ["pd", "dd"], ["pd", "dp", "pp"], ["jj"], []]
NAMES = ["Lee Sedol", "lee changho", "Park Junghwan", "Ke Jie", "Élodie Ké", "", "Shin Jinseo"]
DATES = ["2014-05-01", "2014-05-01", "2015-01-02", "", "2013-12-31", "2016", "2014-05-01"]


@pytest.fixture
def book_of_games(tmp_path, book_url):
    """A book of 70 generated games (few dates: many ties; some without a date or a name)."""
    folder = tmp_path / "games"
    folder.mkdir()
    rng = np.random.default_rng(5)
    for i in range(70):
        moves = random_game(rng, 19, OPENINGS[i % len(OPENINGS)], length=int(rng.integers(0, 10)))
        black, white = NAMES[i % len(NAMES)], NAMES[(i * 3 + 2) % len(NAMES)]
        (folder / f"g{i:03d}.sgf").write_bytes(sgf_text(19, moves, black, white, DATES[i % 7 if i % 5 else 0]))
    book = Book.open(book_url)
    importer.import_paths(book, [str(folder)], workers=0, batch_games=16)
    yield book
    book.close()


def stored(book):
    """Every game as the book stores it: (id, moves, date, year, black, white)."""
    games = []
    for game_id in book.game_ids():
        record = book.game(game_id)
        games.append((game_id, record.moves, record.date, record.year, record.black, record.white))
    return games


def images_of(board) -> set:
    """The board's signatures in its 8 orientations."""
    return {signature(transformed(board, t), board.to_move) for t in range(8)}


def reaches(moves, board, images=None) -> bool:
    """``moves`` pass through ``board`` in some orientation (``images``: ``images_of(board)``, drawn
    once for a listing's games, not once a game)."""
    images = images_of(board) if images is None else images
    replay = Board(board.size)
    for i in range(len(moves) + 1):
        colour = moves[i][0] if i < len(moves) else None
        if signature(replay, colour if colour is not None else replay.to_move) in images:
            return True
        if i < len(moves):
            replay.play(*moves[i])
    return False


def slow_listing(games, board, filters: Filters) -> list[int]:
    """The ids of the games that reach ``board`` and pass ``filters``, newest first."""
    def keep(game):
        _, _, _, year, black, white = game
        if filters.year_from is not None and (year is None or year < filters.year_from):
            return False
        if filters.year_to is not None and (year is None or year > filters.year_to):
            return False
        wanted = (filters.player or "").lower()
        return not wanted or wanted in black.lower() or wanted in white.lower()
    images = images_of(board)
    found = [game for game in games if keep(game) and reaches(game[1], board, images)]
    found.sort(key=lambda game: (game[2], game[0]), reverse=True)
    return [game[0] for game in found]


def keyset_walk(book, board, filters, page_size):
    """Every page by ``after=``; checks the page numbers and the last page's ``after``."""
    pages, after = [], None
    while True:
        found = book.games(board, filters=filters, page_size=page_size, after=after)
        assert found.page == len(pages) + 1
        pages.append([row.id for row in found.rows])
        if found.after is None:
            return pages, found
        assert found.after == found.rows[-1].id
        after = found.after


def positions(games):
    boards = [Board(19)]
    for upto in (1, 2, 3):
        boards += [board_after(game[1], upto=upto) for game in games[:12:4] if len(game[1]) >= upto]
    deep = max(games, key=lambda game: len(game[1]))
    boards.append(board_after(deep[1], upto=len(deep[1]) - 1))  # one game, or very few
    return boards


FILTERS = [Filters(), Filters(year_from=2014, year_to=2015), Filters(player="LEE"),
           Filters(player="ké"), Filters(player="e", year_from=2015), Filters(player="nobody")]


@pytest.mark.parametrize("few_games", [0, 10**6], ids=["rank-array", "database-sort"])
def test_pages_match_the_slow_listing(book_of_games, monkeypatch, few_games):
    book = book_of_games
    monkeypatch.setattr(store, "FEW_GAMES", few_games)
    games = stored(book)
    assert len({game[2] for game in games}) < len(games) // 5  # ties on the date are the rule
    for board in positions(games):
        for filters in FILTERS:
            expected = slow_listing(games, board, filters)
            for page_size in (4, 25):
                chunks = [expected[i:i + page_size] for i in range(0, len(expected), page_size)] or [[]]
                pages, last = keyset_walk(book, board, filters, page_size)
                assert pages == chunks, (board.moves, filters, page_size)
                assert (last.total, last.pages) == (len(expected), -(-len(expected) // page_size))
                by_number = [[row.id for row in book.games(board, filters=filters, page=n,
                                                           page_size=page_size).rows]
                             for n in range(1, len(chunks) + 1)]
                assert by_number == chunks


def test_a_keyset_past_a_tie_keeps_the_rest_of_the_tie(book_of_games):
    book = book_of_games
    games = stored(book)
    tied = [game[0] for game in games if game[2] == "2014-05-01"]
    assert len(tied) > 10
    expected = slow_listing(games, Board(19), Filters())
    middle = sorted(tied)[len(tied) // 2]
    rest = [row.id for row in book.games(Board(19), page_size=500, after=middle).rows]
    assert rest == expected[expected.index(middle) + 1:]


def test_an_unknown_keyset_is_refused(book_of_games):
    with pytest.raises(ValueError, match="no game"):
        book_of_games.games(Board(19), after=10**6)
    with pytest.raises(ValueError, match="no game"):
        book_of_games.games(board_after(stored(book_of_games)[-1][1]), after=10**6)


def test_the_player_index_holds_every_name_of_every_game(book_of_games):
    book = book_of_games
    expected = {(name.lower(), game[0]) for game in stored(book) for name in game[4:] if name}
    query = (select(schema.players.c.name, schema.game_players.c.game_id)
             .join(schema.game_players, schema.game_players.c.player_id == schema.players.c.id))
    with book.db.connect() as conn:
        assert set(conn.execute(query).all()) == expected
        assert schema.players_through(conn) == book.max_game_id()


def test_a_book_without_the_index_answers_the_same_and_gets_it_when_opened_for_writing(book_of_games, book_url):
    book = book_of_games
    board = Board(19)
    ascii_filters = [f for f in FILTERS if f.player is None or f.player.isascii()]
    before = [[row.id for row in book.games(board, filters=f, page_size=100).rows] for f in ascii_filters]
    with book.writing() as conn:  # as a book written before the index existed
        conn.execute(schema.meta.delete().where(schema.meta.c.name == schema.PLAYERS_THROUGH))
        conn.execute(schema.game_players.delete())
        conn.execute(schema.players.delete())
    book.close()
    with Book.open(book_url, readonly=True) as old:  # read-only: no index, the names are scanned
        assert [[row.id for row in old.games(board, filters=f, page_size=100).rows]
                for f in ascii_filters] == before
    with Book.open(book_url) as upgraded, upgraded.db.connect() as conn:
        assert schema.players_through(conn) == upgraded.max_game_id()
        assert [[row.id for row in upgraded.games(board, filters=f, page_size=100).rows]
                for f in ascii_filters] == before
