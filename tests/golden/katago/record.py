"""Records the golden files of tests/test_katago.py from a real KataGo (see docs/katago.md).

    python3 tests/golden/katago/record.py [KATAGO-ANALYSIS-COMMAND]

For each ``*.queries`` file here, starts KataGo, sends its lines one by one (raw: a line
that is not JSON is sent too, to record KataGo's error answer), closes KataGo's input so
that it finishes every query, and writes ``NAME.jsonl``: one JSON object a line,
``{"sent": LINE}`` or ``{"received": LINE}``, in the order they happened.  Independent of
fuseki's client on purpose: the goldens test that client.
"""

from __future__ import annotations

import importlib.util
import json
import shlex
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def record(command: list[str], queries: Path) -> None:
    lines = [line for line in queries.read_text().splitlines() if line.strip()]
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    events = []
    for line in lines:
        events.append({"sent": line})
        proc.stdin.write(line + "\n")
    proc.stdin.close()
    events += [{"received": line.rstrip("\n")} for line in proc.stdout]
    proc.wait()
    out = queries.with_suffix(".jsonl")
    out.write_text("".join(json.dumps(e) + "\n" for e in events))
    print(f"{out.name}: {len(events)} lines", file=sys.stderr)


def main() -> None:
    if len(sys.argv) > 1:
        command = shlex.split(sys.argv[1])
    else:  # the client module by its path: it needs only the standard library
        spec = importlib.util.spec_from_file_location(
            "katago_client", HERE.parents[2] / "engine" / "players" / "katago.py")
        client = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = client  # dataclasses look their module up there
        spec.loader.exec_module(client)
        found = client.find_command()
        if found is None:
            sys.exit("no KataGo: run bash .ci/katago, or give the analysis command")
        command = shlex.split(found)
    for queries in sorted(HERE.glob("*.queries")):
        record(command, queries)


if __name__ == "__main__":
    main()
