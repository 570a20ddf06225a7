"""The explorer keeps answers per URL while the book is unchanged (book/ui/web/cache.py).

- Every request of the thread tests' mix (positions and lists under filters, records,
  downloads, errors), asked twice of an app with the cache, answers byte for byte what an
  app without it answers, and the second round comes from the cache.  Both backends.
- Games imported into the book while the app serves it (another ``Book``, as ``fuseki
  import`` beside ``fuseki serve``) make every kept answer stale: the next request counts
  them, as an app without a cache does.
- The kept bodies stay within their byte budget, the least recently asked going first.
"""

from __future__ import annotations

from fuseki.book.ui.web.cache import ResponseCache

from webbook import import_games, request_paths, small_games


def test_cached_answers_equal_fresh_ones(book_url, tmp_path):
    from fuseki.book.ui.web.app import create_app

    import_games(book_url, tmp_path / "sgf")
    cached, fresh = create_app(book_url=book_url), create_app(book_url=book_url, cache_bytes=0)
    try:
        cached_client, fresh_client = cached.test_client(), fresh.test_client()
        paths = request_paths(fresh_client)
        for round_ in range(2):
            for path in paths:
                got, expected = cached_client.get(path), fresh_client.get(path)
                assert (got.status_code, got.data, got.mimetype) == (
                    expected.status_code, expected.data, expected.mimetype), (round_, path)
        cache = cached.extensions["fuseki_cache"]
        cacheable = sum(path.startswith(("/api/position", "/api/games?")) or
                        (path.startswith("/api/game/") and ".sgf" not in path)
                        for path in paths)
        assert cache.hits >= cacheable - 2 > 20, (cache.hits, cacheable)  # two of them are errors
        assert fresh.extensions["fuseki_cache"].hits == 0
    finally:
        cached.extensions["fuseki_book"].close()
        fresh.extensions["fuseki_book"].close()


def test_games_imported_while_serving_make_the_kept_answers_stale(book_url, tmp_path):
    from fuseki.book.ui.web.app import create_app

    import_games(book_url, tmp_path / "first")
    app = create_app(book_url=book_url)
    try:
        client = app.test_client()
        paths = ["/api/position?size=9", "/api/position?moves=pd&size=19", "/api/games?size=9"]
        before = {path: client.get(path).get_json() for path in paths}
        assert {path: client.get(path).get_json() for path in paths} == before  # kept
        assert app.extensions["fuseki_cache"].hits == len(paths)
        assert before["/api/position?size=9"]["total"] == 0

        import_games(book_url, tmp_path / "more", small_games(40))
        after = {path: client.get(path).get_json() for path in paths}
        fresh = create_app(book_url=book_url, cache_bytes=0)
        try:
            assert after == {path: fresh.test_client().get(path).get_json() for path in paths}
        finally:
            fresh.extensions["fuseki_book"].close()
        assert after["/api/position?size=9"]["total"] == 40 and after["/api/games?size=9"]["total"] == 40
        assert after["/api/position?moves=pd&size=19"] == before["/api/position?moves=pd&size=19"]
    finally:
        app.extensions["fuseki_book"].close()


def test_the_kept_bodies_stay_within_their_budget_least_recently_asked_first():
    cache = ResponseCache(max_bytes=16 * 100)
    for n in range(16):
        cache.put(f"/{n}", 1, bytes(100), "application/json")
    assert cache.bytes == 1600
    assert cache.get("/0", 1) is not None  # asked: now the most recent
    cache.put("/new", 1, bytes(100), "application/json")
    assert cache.bytes == 1600 and cache.get("/1", 1) is None and cache.get("/0", 1) is not None
    assert cache.get("/new", 2) is None  # another version of the book: not that answer
    cache.put("/big", 1, bytes(101), "application/json")  # more than a sixteenth of the budget
    assert cache.get("/big", 1) is None and cache.bytes == 1600
    cache.put("/0", 2, b"x", "application/json")  # a newer answer replaces the old one
    assert cache.get("/0", 2) == (b"x", "application/json") and cache.bytes == 1501
