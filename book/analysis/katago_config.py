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


def search_threads(command: str | list[str]) -> int:
    """The search threads the command's config gives KataGo in all: ``numAnalysisThreads`` x
    ``numSearchThreads`` (KataGo's defaults 2 and 1 where it names none)."""
    def number(name: str, default: int) -> int:
        try:
            return max(1, int(config_value(command, name) or default))
        except ValueError:
            return default
    return number("numAnalysisThreads", 2) * number("numSearchThreads", 1)


def batch_command(command: str) -> str:
    """``command`` set up for many positions (``fuseki ai annotate``): the same search threads
    as one analysis thread each (``numAnalysisThreads`` = all, ``numSearchThreads`` = 1), so
    that KataGo searches as many positions side by side and batches their evaluations, as
    KataGo's analysis_example.cfg advises for many positions; a few-visit search cannot keep
    several threads of its own busy (measured here: 85% of ``katago benchmark``'s visits a
    second against 54-69% with 1 x 2, docs/benchmarks.md).  Unchanged when it is not a
    ``katago analysis -config ...`` command or already overrides either setting."""
    try:
        argv = shlex.split(command)
    except ValueError:
        return command
    overridden = any(flag == "-override-config" and ("numAnalysisThreads" in value or "numSearchThreads" in value)
                     for flag, value in zip(argv, argv[1:]))
    if "analysis" not in argv[1:2] or "-config" not in argv[:-1] or overridden:
        return command
    threads = search_threads(command)
    return shlex.join([*argv, "-override-config", f"numAnalysisThreads={threads},numSearchThreads=1"])
