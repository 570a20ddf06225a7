"""What a KataGo command line sets in KataGo's config: its ``-config`` file, then its
``-override-config`` pairs, as KataGo reads them; and what follows for fuseki (how many
queries keep KataGo busy).  Only the standard library."""

from __future__ import annotations

import shlex
from pathlib import Path


def config_value(command: str | list[str], name: str) -> str | None:
    """The value KataGo's command gives the config setting ``name``: its ``-override-config``,
    else its ``-config`` file's ``name = value`` line; None when neither says (a file that
    cannot be read says nothing)."""
    try:
        argv = shlex.split(command) if isinstance(command, str) else list(command)
    except ValueError:
        return None
    found = None
    for flag, value in zip(argv, argv[1:]):
        if flag == "-config":
            try:
                lines = Path(value).read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                continue
            for line in lines:
                key, equals, text = line.partition("#")[0].partition("=")
                if equals and key.strip() == name:
                    found = text.strip()
    for flag, value in zip(argv, argv[1:]):
        if flag == "-override-config":
            for pair in value.split(","):
                key, equals, text = pair.partition("=")
                if equals and key.strip() == name:
                    found = text.strip()
    return found


def queries_to_keep_in_flight(command: str | list[str]) -> int:
    """How many queries keep KataGo's analysis threads busy: two per ``numAnalysisThreads``
    (KataGo's default 2), so that each thread finds its next query waiting while the last
    answer travels back."""
    try:
        threads = int(config_value(command, "numAnalysisThreads") or 2)
    except ValueError:
        threads = 2
    return 2 * max(1, threads)
