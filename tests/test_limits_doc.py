"""docs/limits.md names every limit with its value and constant: each constant must exist with
that value, so the one place a user reads the limits cannot drift from the code."""

from __future__ import annotations

import importlib
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "limits.md"


def table_rows() -> list[dict[str, str]]:
    """The rows of the doc's limits table, as column name -> cell text."""
    lines = [line for line in DOC.read_text(encoding="utf-8").splitlines() if line.startswith("|")]
    head = [cell.strip() for cell in lines[0].strip("|").split("|")]
    return [dict(zip(head, (cell.strip() for cell in line.strip("|").split("|")), strict=True))
            for line in lines[2:]]


def constant(dotted: str):
    """The value a dotted path names: a module constant (module path, then NAME) or a class field."""
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            value = getattr(value, name)
        return value
    raise ModuleNotFoundError(dotted)


def test_every_limit_in_the_doc_is_a_constant_with_that_value():
    rows = table_rows()
    assert len(rows) >= 15
    for row in rows:
        name = row["Constant"].strip("`")
        assert name.startswith("fuseki."), row
        text = row["Value"].replace(",", "")
        written = float(text) if "." in text else int(text)
        assert constant(name) == written, f"{name}: the doc says {row['Value']}, the code {constant(name)}"
        assert row["Why"] and row["Enforced in"], row
