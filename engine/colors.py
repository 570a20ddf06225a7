"""Colour codes shared by the board, its kernels and every layer above them."""

EMPTY = 0
BLACK = 1
WHITE = 2
BORDER = 3

NAMES = {BLACK: "black", WHITE: "white"}


def opponent(color: int) -> int:
    """The other player's colour."""
    return 3 - color


def parse_color(text: str) -> int:
    """``b``/``black``/``w``/``white`` in any case; raises ValueError otherwise."""
    word = text.strip().lower()
    if word in ("b", "black"):
        return BLACK
    if word in ("w", "white"):
        return WHITE
    raise ValueError(f"'{text}' is not a colour")
