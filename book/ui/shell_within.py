"""The shell's ``within`` command: search within the games of the current answer, and back.

``within`` takes the games of the answer shown for the current position (the last ``search``:
the games that reached it; the last ``pattern``: the games that matched), filters included,
and restricts every following search, pattern, games list and year profile to them
(``Filters.within``: ``book.queries.gamesets``).  It is a stack: ``within`` again, after
another search, narrows further; ``within back`` widens to the level before, ``within off``
to every game.  The prompt says how many games the searches are within.

A mix-in of ``book.ui.shell.BookShell`` (which keeps ``board``, ``filters``, ``last_search``
and ``pattern_shown``), in a module of its own so that the shell stays readable; bad input
raises ValueError, which the shell prints as one line (it cannot import the shell's ShellError:
the shell imports this module).
"""

from __future__ import annotations

from fuseki.book.queries.gamesets import GameSet, position_games

PROMPT = "fuseki> "


class WithinCommands:
    """``do_within`` and its state: ``within_stack``, (games, what found them) per level."""

    within_stack: list[tuple[GameSet, str]]

    def do_within(self, arg: str) -> None:
        """within [back|off]: search within the games of the current answer (the last search or pattern
        of this position): the following searches, patterns, games and years count only those games;
        again after another search to narrow further. within back: the level before; within off: every
        game. The prompt shows how many games the searches are within."""
        word = arg.strip().lower()
        if word == "back":
            if not self.within_stack:
                raise ValueError("not searching within any games: within back has nothing to undo")
            self.within_stack.pop()
        elif word == "off":
            self.within_stack.clear()
        elif word:
            raise ValueError(f"within takes nothing, back or off, not '{arg.strip()[:20]}'")
        else:
            self.within_stack.append(self._answer_games())
        self.filters = self._filters(within=self.within_stack[-1][0] if self.within_stack else None)
        self.last_search = self.pattern_shown = self.games_shown = None  # answers of the old restriction
        self.prompt = within_prompt(self.within_stack)
        self.say(self.within_status())

    def within_status(self) -> str:
        """Where the searches are: every game, or within N games of which answers."""
        if not self.within_stack:
            return "searching every game"
        path = " > ".join(words for _games, words in self.within_stack)
        return f"searching within {len(self.within_stack[-1][0])} games ({path})"

    def complete_within(self, text, *ignored):
        return [w for w in ("back", "off") if w.startswith(text)]

    def _answer_games(self) -> tuple[GameSet, str]:
        """(the games, in words) of the answer shown for the current position and filters."""
        from fuseki.engine.core import base

        moves = " ".join(base.point_to_vertex(p, self.board.size) for _c, p in self.board.moves) or "empty board"
        asked = (tuple(self.board.moves), self.board.to_move, self.filters)
        if self.pattern_shown and self.pattern_shown[0] == asked:
            result = self.pattern_shown[1]
            return GameSet(result.match_ids), f"pattern of {moves}"
        if self.last_search and self.last_search[0] == tuple(self.board.moves):
            return position_games(self.book, self.board, self._filters()), f"position {moves}"
        raise ValueError("within needs an answer to search within: search or pattern this position first")


def within_prompt(stack) -> str:
    """``fuseki> ``, or ``fuseki (within N games)> `` while the searches are within an answer."""
    return f"fuseki (within {len(stack[-1][0])} games)> " if stack else PROMPT
