"""A pattern scan's budget: the seconds of scan one caller may spend (``scan.run`` looks at it
between parts of the games).  Apart from ``scan`` so that the web application can name
``BudgetSpent`` without importing numba before its first pattern search."""

from __future__ import annotations


class BudgetSpent(Exception):
    """A scan stopped because its ``Budget`` was spent (not a ValueError: the input is valid,
    only too costly for the caller's budget)."""

    def __init__(self, budget: Budget):
        super().__init__(f"pattern scan stopped after {budget.spent:.2f} s of its {budget.seconds:g} s budget "
                         f"({budget.scanned:,} games scanned)")
        self.budget = budget


class Budget:
    """Seconds of scan that one caller (a web request: every scan of its ``within=`` searches
    and its pattern search together) may spend; ``spent`` and ``scanned`` (games) add up over
    its scans.  ``check`` raises ``BudgetSpent`` once ``spent`` reaches ``seconds``."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.spent = 0.0
        self.scanned = 0

    def check(self) -> None:
        if self.spent >= self.seconds:
            raise BudgetSpent(self)

    def charge(self, seconds: float, games: int) -> None:
        self.spent += seconds
        self.scanned += games
