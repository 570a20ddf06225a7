"""What differs between SQLite and PostgreSQL once a book is connected, one function each.

Each difference of the two engines that storage and the layers above it meet (VACUUM and
the pages it gives back, the database's size and file, the SQL that joins ids into one string,
the driver's placeholder, blob type and fast paths of inserts and IN lists, an upsert, a table
kept in its key's order) is answered here, so that no caller branches on the dialect; the
positions index keeps its own (``book.storage.position_index``: its physical forms differ by
engine), and ``connect`` makes the engines (a writer's transaction holds the writers' lock from
its begin, on either).  Nothing here imports another module of storage at its top (``schema``
imports it), nor SQLAlchemy (``book_file`` serves ``sqlite3`` connections too).
"""

from __future__ import annotations

import sqlite3


def vacuum(db) -> None:
    """Rewrite the database packed, outside any transaction: PostgreSQL ``VACUUM ANALYZE``;
    SQLite ``VACUUM`` (a book made before incremental auto-vacuum takes it here), then the
    log truncated."""
    with db.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        if conn.dialect.name == "postgresql":
            conn.exec_driver_sql("VACUUM ANALYZE")
        else:
            conn.exec_driver_sql("PRAGMA auto_vacuum=INCREMENTAL")
            conn.exec_driver_sql("VACUUM")
            conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")


def frees_pages_stepwise(db) -> bool:
    """Whether the database gives the pages it freed back to the file system a step at a time
    (``PRAGMA incremental_vacuum``: a SQLite book made since incremental auto-vacuum); PostgreSQL's
    VACUUM does that itself, and an older SQLite book keeps them until ``vacuum``."""
    if db.dialect.name != "sqlite":
        return False
    with db.connect() as conn:
        return conn.exec_driver_sql("PRAGMA auto_vacuum").scalar() == 2  # 2: incremental


def database_bytes(conn) -> int | None:
    """The database's size: a SQLite file's pages, wherever they are now (file or write-ahead
    log); a PostgreSQL database's; None for a SQLite database in memory."""
    if conn.dialect.name == "postgresql":
        return int(conn.exec_driver_sql("SELECT pg_database_size(current_database())").scalar())
    if book_file(conn) is None:  # in memory
        return None
    pages = conn.exec_driver_sql("PRAGMA page_count").scalar()
    return int(pages) * int(conn.exec_driver_sql("PRAGMA page_size").scalar())


def joined(conn, column):
    """The aggregate that joins ``column``'s numbers into one comma-separated string (``string_agg``,
    ``group_concat``), which ``schema.joined_numbers`` parses."""
    from sqlalchemy import Text, cast, func

    if conn.dialect.name == "postgresql":
        return func.string_agg(cast(column, Text), ",")
    return func.group_concat(column)


def placeholder(conn) -> str:
    """The driver's parameter placeholder, for SQL run on its own cursor."""
    return "?" if conn.dialect.name == "sqlite" else "%s"


def blob_type(conn) -> str:
    """The SQL type of a column of bytes, for DDL written by hand."""
    return "BYTEA" if conn.dialect.name == "postgresql" else "BLOB"


def upsert(conn, table):
    """An INSERT into ``table`` that can take ``on_conflict_do_update`` (the dialect's own)."""
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    return insert(table)


def insert_integers(conn, table: str, names: list[str], rows, widths: list[int]) -> None:
    """Insert ``rows`` (an int64 array, one column each of ``names``) into ``table`` through the
    driver: PostgreSQL's binary COPY (``pgcopy``; ``widths``: each column's bytes there, 2, 4
    or 8); on SQLite multi-row VALUES, 200 rows a statement."""
    from fuseki.book.storage import pgcopy

    cursor = conn.connection.dbapi_connection.cursor()
    try:
        if conn.dialect.name == "postgresql":
            pgcopy.copy_in(cursor, table, names, [(rows[:, i], width) for i, width in enumerate(widths)])
            return
        per, width = 200, len(names)
        whole = len(rows) // per * per
        sql = f"INSERT INTO {table} ({', '.join(names)}) VALUES "
        row = "(" + ", ".join("?" * width) + ")"
        if whole:
            cursor.executemany(sql + ",".join([row] * per), rows[:whole].reshape(-1, width * per).tolist())
        if whole < len(rows):
            cursor.executemany(sql + row, rows[whole:].tolist())
    finally:
        cursor.close()


def clusters_by_key(conn) -> bool:
    """Whether a table can be stored in its primary key's order (SQLite's ``WITHOUT ROWID``;
    PostgreSQL keeps a heap beside the key's index)."""
    return conn.dialect.name == "sqlite"


def book_file(conn) -> str | None:
    """The file of a SQLite book (None: another database, or in memory), as SQLite opened it;
    ``conn``: a ``sqlite3`` connection or a SQLAlchemy one."""
    if isinstance(conn, sqlite3.Connection):
        return _main_file(conn)
    if conn.dialect.name != "sqlite":
        return None
    info = conn.connection.info
    if "fuseki_path" not in info:
        info["fuseki_path"] = _main_file(conn.connection.dbapi_connection)
    return info["fuseki_path"]


def _main_file(dbapi_conn) -> str | None:
    found = [path for _seq, name, path in dbapi_conn.execute("PRAGMA database_list") if name == "main"]
    return found[0] if found and found[0] else None


def rows_where_in(conn, column, values: list, *columns) -> list[tuple]:
    """The rows (``columns``) of ``column``'s table where ``column`` is one of ``values``.

    500 values a statement (under SQLite's old 999-parameter limit); on SQLite through the
    driver, since SQLAlchemy compiles each new IN list again (the import's writer and its
    parsers ask this for every batch).
    """
    from sqlalchemy import select

    found: list[tuple] = []
    for start in range(0, len(values), 500):
        part = list(values[start:start + 500])
        if conn.dialect.name == "sqlite":
            names = ", ".join(c.name for c in columns)
            found += conn.exec_driver_sql(f"SELECT {names} FROM {column.table.name} WHERE {column.name} "
                                          f"IN ({', '.join('?' * len(part))})", tuple(part)).all()
        else:
            found += conn.execute(select(*columns).where(column.in_(part))).all()
    return [tuple(row) for row in found]


def insert_rows(conn, table, rows: list[tuple]) -> None:
    """Insert rows given in the table's column order, through the driver where it can: the
    import's writer inserts every game and player link, and SQLAlchemy's work per row (a
    dict of parameters, then their processing) was most of that writer's time per game."""
    if not rows:
        return
    columns = ", ".join(column.name for column in table.columns)
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql(f"INSERT INTO {table.name} ({columns}) VALUES ({', '.join('?' * len(rows[0]))})", rows)
    elif conn.dialect.driver == "psycopg2":  # many rows a statement, each formatted by the driver
        from psycopg2.extras import execute_values

        with conn.connection.dbapi_connection.cursor() as cursor:
            execute_values(cursor, f"INSERT INTO {table.name} ({columns}) VALUES %s", rows, page_size=1000)
    else:
        conn.execute(table.insert(), [dict(zip(table.columns.keys(), row)) for row in rows])
