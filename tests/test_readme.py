"""The README is the front door: its first two commands set everything up, CI runs exactly its
test command (.ci/run), it stays short enough to read (the rest lives in docs/), and every
relative link in it and in docs/ leads to a file and heading that exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
MAX_README_LINES = 250  # the limit: past it, move the text to docs/


def readme_commands() -> list[str]:
    """The command lines of the README's first ``sh`` block (comments left out)."""
    text = README.read_text(encoding="utf-8")
    block = re.search(r"```sh\n(.*?)```", text, re.DOTALL).group(1)
    return [line.strip() for line in block.splitlines() if line.strip() and not line.startswith("#")]


def test_the_readme_starts_with_two_commands_and_ci_runs_the_second():
    engine, tests = readme_commands()
    assert "fuseki-gtp" in engine and "pytest" in tests
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()
          if line.strip() and not line.startswith("#")]
    assert ci[-1] == tests, "the last line of .ci/run must be the README's test command"
    assert sum("pytest" in line for line in ci) == 1, ".ci/run must run no other test command"


def test_both_readme_commands_install_into_a_virtual_environment():
    """PEP 668: Debian 12 and Ubuntu 23.04+ refuse pip installs into the system interpreter."""
    for command in readme_commands():
        assert "python3 -m pip install" not in command and "pip install --user" not in command
    setup = (ROOT / ".ci" / "setup").read_text()
    assert "python3 -m venv" in setup and '"$venv/bin/python" -m pip install' in setup


def test_the_readme_is_short():
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_README_LINES, f"README.md has {lines} lines; move details to docs/"


def pages() -> list[Path]:
    return [README, *sorted((ROOT / "docs").glob("*.md"))]


def without_code(text: str) -> str:
    """The text outside fenced blocks and code spans: a `](` or `# ` in code is no link or heading."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.DOTALL | re.MULTILINE)
    return re.sub(r"`[^`\n]*`", "", text)


def anchors(page: Path) -> set[str]:
    """GitHub's ids of the page's headings: lower case, punctuation dropped, spaces as hyphens,
    repeats numbered."""
    seen: dict[str, int] = {}
    ids = set()
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL | re.MULTILINE)
    for heading in re.findall(r"^#{1,6} +(.+?) *#*$", text, flags=re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.replace("`", "").lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        ids.add(slug if n == 0 else f"{slug}-{n}")
    return ids


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", without_code(page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and anchor not in anchors(linked):
            broken.append(f"{target}: no such heading in {linked.name}")
    return broken


def test_every_relative_link_leads_somewhere():
    broken = {page.relative_to(ROOT).as_posix(): links for page in pages() if (links := broken_links(page))}
    assert not broken


def test_the_link_check_finds_a_missing_file_and_a_missing_heading(tmp_path):
    (tmp_path / "other.md").write_text("# The engine: `fuseki-gtp`\n\n## Joseki: the corner book\n")
    page = tmp_path / "page.md"
    page.write_text("[a](other.md#joseki-the-corner-book) [b](other.md#the-engine-fuseki-gtp)\n"
                    "[c](other.md#nowhere) [d](gone.md) [e](#here) `[f](in-code.md)`\n\n## Here\n"
                    "```\n[g](in-a-block.md)\n```\n[h](https://example.org/x)\n")
    assert broken_links(page) == ["other.md#nowhere: no such heading in other.md", "gone.md: no such file"]


def test_commands_in_the_docs_say_python3():
    """Debian has no ``python``: a bare ``python`` (not ``.venv/bin/python``) fails there."""
    bare = {page.name: found for page in pages()
            if (found := re.findall(r"(?<![\w./-])python [^\n`]*", page.read_text(encoding="utf-8")))}
    assert not bare
