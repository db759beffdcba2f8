"""A report combines its runs once and renders (issue #47): the walk of its runs through the code
(``scripts/walk_report.py``) builds the combined table once and enters no module more than twice."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "walk_report.py"


def test_the_report_walk_combines_once() -> None:
    spec = importlib.util.spec_from_file_location("walk_report", SCRIPT)
    assert spec is not None and spec.loader is not None
    walk_report = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(walk_report)
    stops, counted = walk_report.figures()
    entries = walk_report.entries_of(stops)
    assert counted["combine_runs"] == 1 and counted["find_studies"] == 1 and counted["analyze"] == 1, counted
    assert max(entries.values()) <= 2, entries
    assert stops[-1][0] == "reports/html.py" and entries["reports/html.py"] == 1
