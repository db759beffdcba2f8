"""The CLI reaches the product only through :mod:`sotacheck.api` (and :mod:`sotacheck.core` for errors and types):
no module of ``sotacheck/cli/`` imports ``sotacheck.audit``, ``sotacheck.reports`` or ``sotacheck.reruns``, at
module level, inside a function or under ``TYPE_CHECKING``. import-linter's contract in pyproject.toml says the
same for ``make check``; this test names the file and line for ``make test``."""

from __future__ import annotations

import ast
from pathlib import Path

import sotacheck.cli

CLI = Path(sotacheck.cli.__file__).resolve().parent
FORBIDDEN = ("sotacheck.audit", "sotacheck.reports", "sotacheck.reruns")


def _forbidden(module: str) -> bool:
    return any(module == layer or module.startswith(layer + ".") for layer in FORBIDDEN)


def forbidden_imports(source: str, filename: str) -> list[str]:
    """``file:line: import ...`` for every import in ``source`` of a layer the CLI must reach through the API."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        else:
            continue
        for module in modules:
            if _forbidden(module):
                found.append(f"{filename}:{node.lineno}: imports {module}")
                break
    return sorted(found, key=lambda line: (line.split(":")[0], int(line.split(":")[1])))


def test_the_cli_imports_the_product_only_through_the_api() -> None:
    files = sorted(CLI.glob("*.py"))
    assert files and CLI.name == "cli"
    found = [line for file in files for line in forbidden_imports(file.read_text(), f"sotacheck/cli/{file.name}")]
    assert found == [], "the CLI must go through sotacheck.api:\n" + "\n".join(found)


def test_a_planted_import_is_named_with_its_file_and_line() -> None:
    planted = '''"""A command."""
from typing import TYPE_CHECKING

from sotacheck import api
from sotacheck.core.errors import UsageError

if TYPE_CHECKING:
    from sotacheck.audit.analysis import Comparison


def command() -> None:
    from sotacheck.reports.leaderboard_text import render_text
    import sotacheck.reruns.grid
    from sotacheck import reruns
    from sotacheck.api.rendering import render_leaderboard
'''
    assert forbidden_imports(planted, "sotacheck/cli/planted.py") == [
        "sotacheck/cli/planted.py:8: imports sotacheck.audit.analysis",
        "sotacheck/cli/planted.py:12: imports sotacheck.reports.leaderboard_text",
        "sotacheck/cli/planted.py:13: imports sotacheck.reruns.grid",
        "sotacheck/cli/planted.py:14: imports sotacheck.reruns",
    ]
