"""Argument parsing shared by the handlers; every failure is a ``GtpError`` with a standard text.

Numbers are ASCII only (Python's ``int`` and ``float`` also accept other
scripts' digits, underscores, ``inf`` and ``nan``, none of which GTP allows).
"""

from __future__ import annotations

import re

from fuseki.engine.core.base import parse_color
from fuseki.engine.gtp.protocol import GtpError

_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
_VERTEX = re.compile(r"[A-Za-z][0-9]{1,2}|[Pp][Aa][Ss][Ss]")

SYNTAX = "syntax error"


def count(args: list[str], n: int, most: int | None = None) -> list[str]:
    """``args`` if there are ``n`` (to ``most``) of them, else ``syntax error``."""
    if not n <= len(args) <= (n if most is None else most):
        raise GtpError(SYNTAX)
    return args


def integer(text: str) -> int:
    """An ASCII integer; huge ones are clamped to +-10**18 (``int`` refuses over 4300 digits)."""
    if not _INT.fullmatch(text):
        raise GtpError(SYNTAX)
    digits = text.lstrip("+-").lstrip("0")
    if len(digits) > 18:
        return -10**18 if text.startswith("-") else 10**18
    return int(text)


def number(text: str) -> float:
    if len(text) > 400 or not _FLOAT.fullmatch(text):
        raise GtpError(SYNTAX)
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise GtpError(SYNTAX)
    return value


def color(text: str) -> int:
    """``b``/``black``/``w``/``white`` in any case, else ``invalid color``."""
    if not text.isascii():
        raise GtpError("invalid color")
    try:
        return parse_color(text)
    except ValueError:
        raise GtpError("invalid color") from None


def vertex(text: str, size: int) -> int:
    """A point of a ``size`` board or PASS, any case, else ``invalid vertex``."""
    from fuseki.engine.core import base

    if not _VERTEX.fullmatch(text):
        raise GtpError("invalid vertex")
    try:
        return base.vertex_to_point(text, size)
    except base.CoordinateError:
        raise GtpError("invalid vertex") from None


def vertex_text(point: int, size: int) -> str:
    from fuseki.engine.core import base

    return base.point_to_vertex(point, size)
