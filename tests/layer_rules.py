"""docs/architecture.md's layer rules as the tests read them: the layers, bottom to top (each a
list of module prefixes), what the book may take from the engine, the orders inside a layer, and
a module's layer (the longest prefix naming it).  tests/test_layers.py holds every import to
them; tests/test_layout_doc.py holds docs/layout.md's layer column to them.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = ROOT / "docs" / "architecture.md"


def architecture_rules(text: str) -> tuple[list[tuple[str, list[str]]], tuple[str, ...], list[tuple[str, str]]]:
    """(layers bottom to top, what the book may import from the engine, the orders inside a layer)
    out of the ``layers`` blocks of docs/architecture.md."""
    layers, may_import, never = [], (), []
    for block in re.findall(r"^```layers\n(.*?)^```", text, re.M | re.S):
        for line in block.splitlines():
            if " never imports " in line:
                low, high = line.split(" never imports ")
                never.append((low.strip(), high.strip()))
            elif line.startswith("book may import:"):
                may_import = tuple(line.partition(":")[2].split())
            elif ":" in line:
                title, _, prefixes = line.partition(":")
                layers.append((title.strip(), prefixes.split()))
    return layers, may_import, never


LAYERS, BOOK_MAY_IMPORT, NEVER = architecture_rules(ARCHITECTURE.read_text(encoding="utf-8"))


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["fuseki", *parts])


def layer_of(module: str, layers=LAYERS) -> int | None:
    """The index in ``layers`` of the longest prefix naming ``module``; None when none does."""
    best, depth = None, -1
    for index, (_title, prefixes) in enumerate(layers):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > depth:
                best, depth = index, len(prefix)
    return best
