"""The shell's ``filter`` command: the header filters of ``book.model.filters`` (event, result,
rank, handicap, komi), under the JSON API's names, one at a time.

``filter NAME VALUE`` sets one (read by ``parse_filters``, as the CLI and the API read it),
``filter NAME off`` drops it, ``filter off`` drops them all (years, player and within stay:
``year``, ``player`` and ``within`` have their own commands), ``filter`` alone says what is set.

A mix-in of ``book.ui.shell.BookShell`` (which keeps ``filters`` and gives ``_filters``,
``_filter_note`` and ``say``), in a module of its own so that the shell stays readable; bad input
raises ValueError, which the shell prints as one line (the shell imports this module, so this
one cannot import its ShellError).
"""

from __future__ import annotations

from fuseki.book.model.filters import FILTER_PARAMS, parse_filters


class FilterCommands:
    """``do_filter`` and its completion."""

    def do_filter(self, arg: str) -> None:
        """filter [NAME VALUE|NAME off|off]: only games whose headers match (book.model.filters):
        event TEXT, winner B|W, won_by resign|points|time|forfeit, margin 0.5-5, min_rank 7d,
        max_rank 1p, handicap 2-4, komi 6.5 (the API's names); ``NAME off`` drops one, ``off`` all."""
        name, _, value = arg.strip().partition(" ")
        name = name.lower().replace("-", "_")
        if name == "off":
            self.filters = self._filters(**{field: None for field in FILTER_PARAMS})
        elif name:
            if name not in FILTER_PARAMS:
                raise ValueError(f"no filter '{name}': use one of {', '.join(FILTER_PARAMS)}")
            if not value.strip():
                raise ValueError(f"filter {name} needs a value (or off)")
            off = value.strip().lower() == "off"
            self.filters = self._filters(**{name: None} if off else parse_filters({name: value}))
        self.say(self._filter_note().strip(" ;") or "no filters")

    def complete_filter(self, text, *ignored):
        return [word for word in (*FILTER_PARAMS, "off") if word.startswith(text)]
