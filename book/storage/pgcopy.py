"""PostgreSQL's binary COPY for columns of integers, built with numpy.

The text COPY the importer used formatted every row in Python (``f"{k}\\t{c}\\n"``): with
about 350 rows a game, that formatting was most of the writer's time per game on
PostgreSQL.  The binary format (PostgreSQL's "COPY ... FROM STDIN (FORMAT binary)": a
signature, then each row as its field count and each field's length and big-endian value,
then -1) is numpy structured arrays, a chunk of rows at a time, whatever the row count.  tests/test_postgres.py
and every PostgreSQL test of tests/test_store.py read the rows back through SQL.
"""

from __future__ import annotations

import io

import numpy as np

SIGNATURE = b"PGCOPY\n\xff\r\n\x00" + (0).to_bytes(4, "big") + (0).to_bytes(4, "big")
TRAILER = (-1).to_bytes(2, "big", signed=True)
_TYPES = {2: ">i2", 4: ">i4", 8: ">i8"}  # smallint, integer, bigint


ROWS_PER_CHUNK = 1 << 16  # rows formatted at a time while the driver sends them


class BinaryRows(io.RawIOBase):
    """The COPY binary stream of rows whose fields are ``columns`` ((values, width in bytes:
    2, 4 or 8) each), formatted ``rows_per_chunk`` rows at a time as the driver reads it.

    A parser COPYs millions of rows a batch: the whole stream at once was three copies of
    30 bytes a row (the structured array, its bytes, the bytes with the header) beside the
    rows themselves, most of a parser's peak memory (bench/book.py --corpus prints it)."""

    def __init__(self, columns: list[tuple[np.ndarray, int]], rows_per_chunk: int = ROWS_PER_CHUNK):
        super().__init__()
        self.columns, self.rows_per_chunk = columns, rows_per_chunk
        self.count = len(columns[0][0]) if columns else 0
        fields = [("fields", ">i2")]
        for n, (_values, width) in enumerate(columns):
            fields += [(f"length{n}", ">i4"), (f"value{n}", _TYPES[width])]
        self.dtype = np.dtype(fields)
        self.start = 0  # the first row not formatted yet
        self.pending = SIGNATURE
        self.ended = False

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        while not self.pending and not self.ended:
            self.pending = self._next_chunk()
        if size is None or size < 0:
            size = len(self.pending)
        out, self.pending = self.pending[:size], self.pending[size:]
        return out

    def _next_chunk(self) -> bytes:
        if self.start >= self.count:
            self.ended = True
            return TRAILER
        stop = min(self.count, self.start + self.rows_per_chunk)
        rows = np.empty(stop - self.start, dtype=self.dtype)
        rows["fields"] = len(self.columns)
        for n, (values, width) in enumerate(self.columns):
            rows[f"length{n}"] = width
            rows[f"value{n}"] = values[self.start:stop]
        self.start = stop
        return rows.tobytes()


def copy_in(cursor, table: str, names: list[str], columns: list[tuple[np.ndarray, int]],
            freeze: bool = False) -> None:
    """COPY the rows into ``table`` (columns ``names``) through a psycopg2 cursor.

    ``freeze``: for a table made in this transaction, the rows are written frozen (no later
    pass of VACUUM or of the first readers setting their hint bits)."""
    options = "FORMAT binary, FREEZE true" if freeze else "FORMAT binary"
    cursor.copy_expert(f"COPY {table} ({', '.join(names)}) FROM STDIN ({options})", BinaryRows(columns),
                       size=1 << 20)
