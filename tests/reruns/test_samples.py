"""Sample files to judge in BigCodeBench's shape: what ``bigcodebench.generate`` writes (``task_id``, the sanitized
``solution`` and the model's ``raw_solution``), several samples per task, read for ``sotacheck judge --samples``."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from sotacheck.core.errors import SotacheckError
from sotacheck.reruns.benchmarks import load_dataset
from sotacheck.reruns.samples import read_samples

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "bigcodebench"
SAMPLED = FIXTURE / "example--coder-7b--main--bigcodebench-complete--vllm-0.8-3-sanitized_calibrated.jsonl"


@pytest.fixture(scope="module")
def complete():
    return load_dataset("bigcodebench-complete")


def test_bigcodebench_samples_are_read_in_order_with_their_solution(complete, tmp_path: Path) -> None:
    lines = [json.loads(line) for line in SAMPLED.read_text().splitlines()]
    generated = tmp_path / "generated.jsonl"  # as generate writes it: the model's text beside the sanitized code
    generated.write_text("".join(json.dumps({**line, "raw_solution": "```python\n" + line["solution"] + "```"}) + "\n"
                                 for line in lines))
    for path in (SAMPLED, generated):
        samples = read_samples(path, complete)
        assert [(s.task_id, s.code, s.line) for s in samples] == [
            (line["task_id"], line["solution"], number) for number, line in enumerate(lines, start=1)]
        assert set(Counter(s.task_id for s in samples).values()) == {3} and len(samples) == 60


def test_a_task_of_another_benchmark_is_named(complete, tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps({"task_id": "HumanEval/0", "solution": "pass\n"}) + "\n")
    with pytest.raises(SotacheckError, match=r"s\.jsonl:1: unknown task_id 'HumanEval/0' for dataset 'bigcodebench-complete'"):
        read_samples(path, complete)
