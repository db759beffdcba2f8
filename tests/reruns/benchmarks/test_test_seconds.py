"""The judge's scheduling hint: the bundled file's keys are the bundled tasks' tests (checked against hashes computed
here), its estimates order the long waits first, and a malformed file is one error naming it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from sotacheck.core.errors import SotacheckError
from sotacheck.reruns.benchmarks.bigcodebench import load_bigcodebench
from sotacheck.reruns.benchmarks.test_seconds import expected_test_seconds, read_hints, suite_key

HINTS = Path(__file__).resolve().parents[3] / "data" / "benchmarks" / "bigcodebench" / "test_seconds.json"


def test_the_bundled_hints_name_the_bundled_tasks_by_their_tests() -> None:
    """Every row's key is the SHA-256 of that task's test source (computed here with hashlib), so each estimate
    reaches its task through the judge's lookup, and a task missing from the file counts as 0 s."""
    document = json.loads(HINTS.read_text())
    problems = {p.id: p for p in load_bigcodebench().problems}
    rows = document["tests"]
    assert len(rows) >= 20  # BigCodeBench has dozens of tasks whose tests take seconds
    for row in rows:
        problem = problems[row["task_id"]]
        assert row["tests_sha256"] == hashlib.sha256(problem.hidden_tests[0].encode()).hexdigest()
        assert expected_test_seconds(problem) == row["seconds"] >= document["measured"]["floor_s"]
    listed = {row["task_id"] for row in rows}
    unlisted = next(p for p in problems.values() if p.id not in listed)
    assert expected_test_seconds(unlisted) == 0.0
    # the tests that wait on a sleeping subprocess or on time.sleep are among the longest
    assert {"BigCodeBench/461", "BigCodeBench/1104"} <= {row["task_id"] for row in rows[:10]}


def test_the_key_is_the_tests_not_the_task_name() -> None:
    problem = load_bigcodebench().problems[461]
    changed = type(problem)(**{**problem.__dict__, "hidden_tests": (problem.hidden_tests[0] + "\n# changed\n",)})
    assert suite_key(changed) != suite_key(problem)
    assert expected_test_seconds(changed) == 0.0


@pytest.mark.parametrize("document", [[], {"tests": {}}, {"tests": [{"tests_sha256": "ab"}]},
                                      {"tests": [{"tests_sha256": "ab", "seconds": -1}]},
                                      {"tests": [{"tests_sha256": "ab", "seconds": float("nan")}]},
                                      {"tests": [{"tests_sha256": 1, "seconds": 2}]},
                                      {"tests": [{"tests_sha256": "ab", "seconds": True}]}])
def test_a_malformed_hint_file_is_one_error_naming_it(document: object) -> None:
    with pytest.raises(SotacheckError, match=r"^hints\.json: "):
        read_hints(document, "hints.json")


def test_a_bundled_hint_file_that_is_not_json_is_one_error_naming_it(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from sotacheck.reruns.benchmarks import test_seconds

    (tmp_path / "benchmarks" / "bigcodebench").mkdir(parents=True)
    (tmp_path / "benchmarks" / "bigcodebench" / "test_seconds.json").write_text("{not json")
    monkeypatch.setattr(test_seconds, "bundled_dir", lambda: tmp_path)
    test_seconds._bundled.cache_clear()
    try:
        with pytest.raises(SotacheckError, match=r"test_seconds\.json: not JSON"):
            expected_test_seconds(load_bigcodebench().problems[0])
    finally:
        test_seconds._bundled.cache_clear()
