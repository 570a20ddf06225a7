"""PostgreSQL's binary COPY for columns of integers, built with numpy.

The text COPY the importer used formatted every row in Python (``f"{k}\\t{c}\\n"``): with
about 350 rows a game, that formatting was most of the writer's time per game on
PostgreSQL.  The binary format (PostgreSQL's "COPY ... FROM STDIN (FORMAT binary)": a
signature, then each row as its field count and each field's length and big-endian value,
then -1) is one numpy structured array whatever the row count.  tests/test_postgres.py
and every PostgreSQL test of tests/test_store.py read the rows back through SQL.
"""

from __future__ import annotations

import io

import numpy as np

SIGNATURE = b"PGCOPY\n\xff\r\n\x00" + (0).to_bytes(4, "big") + (0).to_bytes(4, "big")
TRAILER = (-1).to_bytes(2, "big", signed=True)
_TYPES = {2: ">i2", 4: ">i4", 8: ">i8"}  # smallint, integer, bigint


def binary_rows(columns: list[tuple[np.ndarray, int]]) -> bytes:
    """The COPY binary stream of rows whose fields are ``columns``: (values, width in bytes: 2, 4 or 8)."""
    count = len(columns[0][0]) if columns else 0
    fields = [("fields", ">i2")]
    for n, (_values, width) in enumerate(columns):
        fields += [(f"length{n}", ">i4"), (f"value{n}", _TYPES[width])]
    rows = np.empty(count, dtype=np.dtype(fields))
    rows["fields"] = len(columns)
    for n, (values, width) in enumerate(columns):
        rows[f"length{n}"] = width
        rows[f"value{n}"] = values
    return SIGNATURE + rows.tobytes() + TRAILER


def copy_in(cursor, table: str, names: list[str], columns: list[tuple[np.ndarray, int]],
            freeze: bool = False) -> None:
    """COPY the rows into ``table`` (columns ``names``) through a psycopg2 cursor.

    ``freeze``: for a table made in this transaction, the rows are written frozen (no later
    pass of VACUUM or of the first readers setting their hint bits)."""
    options = "FORMAT binary, FREEZE true" if freeze else "FORMAT binary"
    cursor.copy_expert(f"COPY {table} ({', '.join(names)}) FROM STDIN ({options})",
                       io.BytesIO(binary_rows(columns)))
