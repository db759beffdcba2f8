"""Every package's public face: its ``__all__`` is the list ``docs/python-api.md`` gives, every name in it
resolves."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs" / "python-api.md"
ROW = re.compile(r"^\| `(sotacheck[\w.]*)` \| (.*) \|$")


def documented() -> dict[str, list[str]]:
    """Package → the public names its row of docs/python-api.md lists (none: an empty list)."""
    rows = {}
    for line in DOCS.read_text().splitlines():
        found = ROW.match(line)
        if found:
            rows[found[1]] = re.findall(r"`([\w]+)`", found[2])
    return rows


def test_the_docs_list_every_package_with_an_all() -> None:
    assert set(documented()) == {
        "sotacheck", "sotacheck.api", "sotacheck.cli", "sotacheck.core", "sotacheck.audit", "sotacheck.audit.importers",
        "sotacheck.reports", "sotacheck.reruns", "sotacheck.reruns.benchmarks", "sotacheck.reruns.executors",
        "sotacheck.reruns.model", "sotacheck.reruns.original", "sotacheck.reruns.pipelines", "sotacheck.reruns.sandbox",
        "sotacheck.reruns.store", "sotacheck.data"}


@pytest.mark.parametrize("package", sorted(documented()))
def test_all_matches_the_docs_and_resolves(package: str) -> None:
    module = importlib.import_module(package)
    assert sorted(module.__all__) == sorted(documented()[package]), f"{package}.__all__ and docs/python-api.md differ"
    for name in module.__all__:
        assert getattr(module, name) is not None

