"""The docs check (`make check`; `tests/test_docs.py`): in README.md and docs/*.md every relative link
resolves, every table is well formed (a header, a delimiter row and rows of the same width; no table rows
left as a paragraph of pipes, as a blank line inside a table leaves them), and every `sotacheck` or `make`
command shown in a README code block parses (click parses its options; make knows its target). It prints
one line per problem (`FILE:LINE: what`) and exits 1 when there is any."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import click
from markdown_it import MarkdownIt

REPO = Path(__file__).resolve().parents[1]
_CELL_SPLIT = re.compile(r"(?<!\\)\|")


def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table")


def _cells(line: str) -> int:
    text = line.strip()
    text = text[1:] if text.startswith("|") else text
    text = text[:-1] if text.endswith("|") and not text.endswith("\\|") else text
    return len(_CELL_SPLIT.split(text))


def check_links(path: Path, text: str) -> list[str]:
    problems = []
    for token in _parser().parse(text):
        for child in token.children or []:
            href = str(child.attrs.get("href", "")) if child.type == "link_open" else ""
            if not href or re.match(r"^[a-z][a-z0-9+.-]*:", href) or href.startswith("#"):
                continue
            target = (path.parent / href.split("#", 1)[0]).resolve()
            if not target.exists():
                line = (token.map[0] + 1) if token.map else 0
                problems.append(f"{path}:{line}: link to {href} does not resolve")
    return problems


def check_tables(path: Path, text: str) -> list[str]:
    problems = []
    lines = text.splitlines()
    tokens = _parser().parse(text)
    for i, token in enumerate(tokens):
        if token.type == "table_open" and token.map:
            start, end = token.map
            width = _cells(lines[start])
            for number in range(start + 1, end):
                if lines[number].strip() and _cells(lines[number]) != width:
                    problems.append(f"{path}:{number + 1}: table row has {_cells(lines[number])} cells, "
                                    f"its header {width}")
        if token.type == "paragraph_open" and token.map and tokens[i + 1].content.lstrip().startswith("|"):
            problems.append(f"{path}:{token.map[0] + 1}: table rows outside a table (a blank line splits the "
                            "table, or its delimiter row is missing)")
    return problems


def _commands(text: str) -> list[tuple[int, str]]:
    """(line, command) for every `sotacheck ...` or `make ...` line of the code blocks, continuations joined."""
    found = []
    for token in _parser().parse(text):
        if token.type not in ("fence", "code_block") or token.info.strip() not in ("", "sh", "bash", "console"):
            continue
        joined = token.content.replace("\\\n", " ")
        for offset, line in enumerate(joined.splitlines()):
            for part in re.split(r"&&|;", re.sub(r"^\$\s+", "", line.strip()).split(" #")[0]):
                command = re.sub(r"^(\.venv/bin/)", "", part.strip())
                if command.startswith(("sotacheck ", "make ")) or command in ("sotacheck", "make"):
                    first = (token.map[0] if token.map else 0) + (2 if token.type == "fence" else 1)
                    found.append((first + offset, command))
    return found


def _make_targets() -> set[str]:
    text = (REPO / "Makefile").read_text()
    return set(re.findall(r"^([a-zA-Z][\w-]*):", text, flags=re.M))


def check_commands(path: Path, text: str) -> list[str]:
    from sotacheck.cli.main import app

    problems = []
    targets = _make_targets()
    for line, command in _commands(text):
        words = shlex.split(command)
        if words[0] == "make":
            unknown = [w for w in words[1:] if "=" not in w and w not in targets]
            if unknown:
                problems.append(f"{path}:{line}: `{command}`: no make target {', '.join(unknown)}")
            continue
        try:
            with app.make_context("sotacheck", words[1:], resilient_parsing=False) as context:
                name, sub, rest = app.resolve_command(context, words[1:])
                assert sub is not None
                sub.make_context(str(name), rest, parent=context).close()
        except click.exceptions.Exit:
            pass  # --help, --version
        except click.ClickException as exc:
            problems.append(f"{path}:{line}: `{command}` does not parse: {exc.format_message()}")
    return problems


def check(paths: list[Path]) -> list[str]:
    problems = []
    for path in paths:
        text = path.read_text()
        problems += check_links(path, text) + check_tables(path, text)
        if path.name == "README.md":
            problems += check_commands(path, text)
    return problems


def main() -> int:
    paths = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    problems = check(paths)
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
