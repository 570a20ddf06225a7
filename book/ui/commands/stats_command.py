"""``fuseki stats``: what the book holds: games, positions, sizes, years and file size.

Example::

    fuseki stats --book postgresql://user@host/fuseki
"""

from __future__ import annotations

from fuseki.book.ui.cli_shared import add_book_option, book_location


def add_command(subparsers) -> None:
    p = subparsers.add_parser("stats", help="games, positions, sizes, years and file size of the book",
                              description="What the book holds. Example: fuseki stats --book games.sqlite")
    add_book_option(p)
    p.set_defaults(run=run_stats)


def run_stats(args) -> int:
    from fuseki.book.storage.store import Book

    location = book_location(args)
    book = Book.open(location, readonly=True)
    try:
        stats = book.stats()
    finally:
        book.close()
    sizes = ", ".join(f"{size}x{size}: {count:,}" for size, count in sorted(stats.sizes.items())) or "none"
    years = f"{stats.years[0]}-{stats.years[1]}" if stats.years else "unknown"
    print(f"book       {location}")
    print(f"games      {stats.games:,}")
    print(f"positions  {stats.positions:,}")
    print(f"sizes      {sizes}")
    print(f"years      {years}")
    if stats.file_bytes is not None:
        per_game = f" ({stats.file_bytes / stats.games:,.0f} bytes a game)" if stats.games else ""
        print(f"file size  {stats.file_bytes / 1e6:,.1f} MB{per_game}")
    return 0
