"""The MapCoder log importer (``sotacheck.audit.importers.mapcoder``) on rows it must read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sotacheck.core.rundir import OutcomeError


def test_mapcoder_rows_named_by_name_only(tmp_path: Path) -> None:
    """MapCoder's released Reflexion MBPP file has `name` and no `task_id` (its other files set task_id = name)."""
    from sotacheck.audit.importers.mapcoder import import_mapcoder

    folder = tmp_path / "MBPP"
    folder.mkdir()
    (folder / "ChatGPT-Reflexion-10-MBPP-Python3-0-1.jsonl").write_text(
        json.dumps({"name": "mbpp_3_is_not_prime", "is_solved": "True"}) + "\n"
        + json.dumps({"name": "mbpp_4_heap", "is_solved": "False"}) + "\n")
    (folder / "ChatGPT-CoT-MBPP-Python3-0-1.jsonl").write_text(
        json.dumps({"task_id": "mbpp_3_is_not_prime", "name": "mbpp_3_is_not_prime", "is_solved": False}) + "\n")
    table, _ = import_mapcoder(folder)
    assert sorted(zip(table["arm"], table["problem"], table["passed"], strict=True)) == [
        ("CoT", "mbpp_3_is_not_prime", False), ("Reflexion-10", "mbpp_3_is_not_prime", True),
        ("Reflexion-10", "mbpp_4_heap", False)]
    (folder / "ChatGPT-CoT-MBPP-Python3-0-1.jsonl").write_text(json.dumps({"is_solved": True}) + "\n")
    with pytest.raises(OutcomeError, match=r"needs fields `task_id` \(or `name`\)"):
        import_mapcoder(folder)
