"""What a run's manifest says of its judge (``judge_description``): BigCodeBench's unittest judge with its limit per
task, where the per-test limit of ``--test-timeout`` does not apply; every other benchmark the sandbox with its
limit per test, in the words the report used before runs recorded it (so that old and new runs stay one study)."""

from __future__ import annotations

import pandas as pd

from sotacheck.audit.studies import judge_condition
from sotacheck.core.rundir import Manifest, Run
from sotacheck.reruns.benchmarks import load_dataset
from sotacheck.reruns.sandbox.submission import judge_description


def test_a_unittest_benchmark_names_its_judge_and_its_limit_per_task(monkeypatch):
    monkeypatch.delenv("BIGCODEBENCH_TIMEOUT_PER_TASK", raising=False)
    text = judge_description(load_dataset("bigcodebench-complete"), 5.0)
    assert text == "sotacheck unittest judge (a sealed process per task), 241 s a task"  # 240 s + BigCodeBench's 1 s
    monkeypatch.setenv("BIGCODEBENCH_TIMEOUT_PER_TASK", "30")
    assert judge_description(load_dataset("bigcodebench-instruct"), 5.0).endswith(", 31 s a task")


def test_the_sandbox_is_named_as_the_report_named_it_before():
    humaneval = load_dataset("humaneval")
    assert judge_description(humaneval, 5.0) == "sotacheck sandbox, 5.0 s per test"
    assert judge_description(humaneval, None) == "sotacheck sandbox"
    table = pd.DataFrame({"arm": ["a"], "dataset": ["humaneval"], "problem": ["HumanEval/0"], "repeat": [0],
                          "passed": [True]})
    before = Run(None, table, Manifest(name="r", source="sotacheck rerun", spec={"test_timeout_s": 5.0}))
    after = Run(None, table, Manifest(name="r", source="sotacheck rerun", spec={"test_timeout_s": 5.0},
                                      judge=judge_description(humaneval, 5.0)))
    assert judge_condition(before) == judge_condition(after)
