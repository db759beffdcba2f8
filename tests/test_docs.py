"""The docs check (scripts/check_docs.py, run by `make check` on README.md and docs/*.md) finds what it is
for: a relative link that does not resolve, a table split by a blank line (its later rows render as a
paragraph of pipes, as the README's command table once did), a row of the wrong width, and a command in
a README code block that does not parse; and passes the same text repaired."""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("check_docs", REPO / "scripts" / "check_docs.py")
assert _spec and _spec.loader
check_docs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_docs)

TABLE = "| command | does |\n|---|---|\n| `a` | one |\n\n| `b` | two |\n"


def test_a_table_split_by_a_blank_line_is_found_and_the_joined_one_passes(tmp_path) -> None:
    path = tmp_path / "README.md"
    assert check_docs.check_tables(path, TABLE) == [
        f"{path}:5: table rows outside a table (a blank line splits the table, or its delimiter row is missing)"]
    assert check_docs.check_tables(path, TABLE.replace("\n\n", "\n")) == []


def test_a_row_of_the_wrong_width_is_found_and_escaped_pipes_are_not_cells(tmp_path) -> None:
    path = tmp_path / "x.md"
    text = "| a | b |\n|---|---|\n| `x\\|y` | 1 |\n| 1 | 2 | 3 |\n"
    assert check_docs.check_tables(path, text) == [f"{path}:4: table row has 3 cells, its header 2"]


def test_links_resolve_relative_to_their_file(tmp_path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("x")
    path = tmp_path / "README.md"
    text = "[a](docs/a.md#top) [b](docs/b.md) [web](https://example.org) [here](#quickstart)\n"
    assert check_docs.check_links(path, text) == [f"{path}:1: link to docs/b.md does not resolve"]


def test_commands_in_readme_code_blocks_must_parse(tmp_path) -> None:
    path = tmp_path / "README.md"
    text = ("Run:\n\n    make setup-core && make test\n    sotacheck gate --baseline a --candidate b --max-drop 2\n\n"
            "```sh\nsotacheck gate --baseline a --candidat b\nsotacheck analyze\nmake tests\n```\n\n"
            "```text\nsotacheck: not a command, output\n```\n")
    problems = check_docs.check_commands(path, text)
    assert len(problems) == 3, problems
    assert problems[0].startswith(f"{path}:7: `sotacheck gate --baseline a --candidat b` does not parse: No such option")
    assert problems[1].startswith(f"{path}:8: `sotacheck analyze` does not parse: Missing argument")
    assert problems[2] == f"{path}:9: `make tests`: no make target tests"
