"""The unittest judge on real BigCodeBench tasks in the benchmark's own environment (``make setup-bigcodebench``):
canonical solutions pass, a calibrated wrong program fails, the judge through ``judge_hidden`` as every pipeline
calls it. Slow (the runner imports pandas, scikit-learn...), and skipped where the environment is absent."""

from __future__ import annotations

import pytest

from sotacheck.core.errors import InputError
from sotacheck.reruns.benchmarks import load_dataset
from sotacheck.reruns.sandbox.unittest_judge import UnittestWorkers, evaluation_python

pytestmark = pytest.mark.slow

try:
    PYTHON = evaluation_python()
except InputError as exc:
    PYTHON = ""
    REASON = str(exc)
else:
    REASON = ""

# pandas, matplotlib, scikit-learn, requests (mocked), a file written: a spread of what the tasks do
TASKS = ("BigCodeBench/1", "BigCodeBench/37", "BigCodeBench/100", "BigCodeBench/215", "BigCodeBench/530")


@pytest.mark.skipif(not PYTHON, reason=REASON or "no BigCodeBench environment")
@pytest.mark.parametrize("split", ["complete", "instruct"])
def test_canonical_solutions_pass_and_a_stub_fails(split):
    problems = load_dataset(f"bigcodebench-{split}").by_id()
    with UnittestWorkers(1, python=PYTHON) as workers:
        for task in TASKS:
            problem = problems[task]
            assert problem.canonical_solution is not None
            assert workers.judge(problem, problem.canonical_solution).passed, task
            stub = f"def {problem.entry_point}(*args, **kwargs):\n    return None\n"
            result = workers.judge(problem, stub)
            assert result.status == "failed" and len(result.tests) > 1, (task, result)
