"""The book's GTP extensions as a client reads them (tests/test_gtp_book.py, test_gtp_ai.py): a
'=' answer's text, and an analysis command's lines as Sabaki reads them.

Not a test module: test modules import from here (and from conftest.py), never from each other.
"""

from __future__ import annotations

import re


def ok(eng, line):
    response = eng.handle_line(line)
    assert response.startswith("=") and response.endswith("\n\n"), (line, response)
    return response[1:].strip()


def parse_info(line):
    """Sabaki's reading of one analysis line: entries split on 'info', key/value pairs, then pv."""
    entries = []
    for chunk in re.split(r"\s*info\s+", line)[1:]:
        head, pv = chunk.split(" pv ")
        words = head.split()
        fields = dict(zip(words[::2], words[1::2]))
        fields["pv"] = pv.split()
        entries.append(fields)
    return entries


def analyze(eng, command):
    """(info entries, response text) of an analysis command, closed by the next command."""
    opened = eng.handle_line(command)
    closed = eng.handle_line("name")
    assert opened.startswith("=") and not opened.endswith("\n\n"), opened
    assert closed == "\n= fuseki\n\n"  # the empty line ending the stream, then the next answer
    text = opened + closed
    lines = text.split("\n")
    assert lines[0] == "=" or lines[0].startswith("=")
    infos = [ln for ln in lines[1:] if ln.startswith("info")]
    assert len(infos) <= 1  # one line holds every move: Sabaki redraws per line
    return (parse_info(infos[0]) if infos else []), text
