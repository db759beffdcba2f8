"""``judge --suspect-tests`` (``reruns/suspects.py``) on problems whose weak tests issue #33 found by hand, and on
problems whose tests are sound: each hand-found case is flagged with the kind of program that passed, the
sound ones are not; and on BigCodeBench-shaped unittest tasks (``tests/fixtures/bigcodebench-suspects``), judged by
the unittest judge in BigCodeBench's environment where it is built. Runs the real judge."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from sotacheck.reruns.benchmarks import load_dataset
from sotacheck.reruns.benchmarks.problem import Dataset
from sotacheck.reruns.sandbox import SandboxLimits, SandboxPool
from sotacheck.reruns.sandbox.unittest_judge import calibrated_program
from sotacheck.reruns.suspects import (
    _PERTURB_OBJECT,
    CONSTANTS,
    OBJECT_CONSTANTS,
    audit_dataset,
    self_comparing,
    wrong_programs,
)
from tests.bigcodebench_environment import MISSING
from tests.bigcodebench_environment import PYTHON as BIGCODEBENCH_PYTHON

FOUND_BY_HAND = {  # issue #33's cases, and the kind of wrong program that must pass each
    ("humaneval", "HumanEval/33"): "self-comparison",   # three asserts compare the candidate with itself
    ("humaneval", "HumanEval/88"): "canonical, input mutated",  # "don't change the given array", unchecked
    ("humaneval", "HumanEval/13"): "canonical, as complex",     # complex(gcd, 0) == gcd
    ("mbpp", "MBPP/203"): "constant", ("mbpp", "MBPP/339"): "constant", ("mbpp", "MBPP/667"): "constant",
    ("mbpp", "MBPP/816"): "constant", ("mbpp", "MBPP/899"): "constant",
}
SOUND = [("humaneval", "HumanEval/0"), ("humaneval", "HumanEval/1"), ("mbpp", "MBPP/2"), ("mbpp", "MBPP/3")]


def test_the_hand_found_weak_tests_are_flagged_and_sound_ones_are_not() -> None:
    kinds: dict[str, set[str]] = {}
    with SandboxPool(workers=2, limits=SandboxLimits(test_timeout_s=5)) as pool:
        for name in ("humaneval", "mbpp"):
            wanted = {task for dataset, task in [*FOUND_BY_HAND, *SOUND] if dataset == name}
            data = load_dataset(name)
            subset = Dataset(name, tuple(p for p in data.problems if p.id in wanted), data.sources)
            report = audit_dataset(pool, subset)
            assert report.problems == len(wanted) and report.programs_run >= 14 * len(wanted)
            for suspect in report.suspects:
                kinds.setdefault(suspect.problem_id, set()).add(suspect.kind)
    for (_, task), kind in FOUND_BY_HAND.items():
        assert kind in kinds.get(task, set()), (task, kinds.get(task))
    assert [task for _, task in SOUND if task in kinds] == []


BIGCODEBENCH_SHAPED = Path(__file__).parents[1] / "fixtures" / "bigcodebench-suspects"  # README.md says what each is


def test_unittest_problems_get_constants_a_raising_stub_the_identity_and_the_perturbed_canonical() -> None:
    problems = load_dataset("bigcodebench-complete", data_dir=BIGCODEBENCH_SHAPED).by_id()
    programs = list(wrong_programs(problems["BigCodeBench/9002"]))
    labels = [w.label for w in programs]
    assert labels[:11] == [f"return {c}" for c in CONSTANTS]
    assert labels[11:] == ["return 'Squares'", "return [16]",  # the literals its assertEqual calls compare with
                           *(f"return {label}" for label, _ in OBJECT_CONSTANTS), "raise ValueError",
                           "return the first argument", "canonical result changed"]
    assert {w.kind for w in programs} == {"constant", "stub that raises", "identity", "canonical, perturbed"}
    for wrong in programs:  # whole programs, judged after the task's imports as BigCodeBench calibrates them
        program = calibrated_program(problems["BigCodeBench/9002"], wrong.completion)
        assert program.startswith("import numpy as np\nimport matplotlib.pyplot as plt\n")
        ast.parse(program)
    assert not self_comparing(problems["BigCodeBench/9002"])  # a test method's `self` is not the candidate


def test_the_perturbed_canonical_result_differs_for_each_kind_of_result() -> None:
    np, pd = pytest.importorskip("numpy"), pytest.importorskip("pandas")
    space: dict[str, object] = {}
    exec(_PERTURB_OBJECT, space)  # the helper as the wrong program defines it
    perturbed: Any = space["_sotacheck_perturbed_object"]
    frame = pd.DataFrame({"a": [1, 2]})
    assert perturbed(frame).equals(frame.iloc[:1])
    assert list(perturbed(pd.DataFrame()).columns) == ["_sotacheck"]
    assert perturbed(np.array([1, 2])).tolist() == [2, 3]
    assert perturbed(np.float64(2.5)) == 3.5
    assert perturbed(float("nan")) == 0.0
    assert perturbed(("text", frame))[0] == "textx"
    assert perturbed({"a": None, "b": 1}) == {"a": None, "b": 2}  # the first value it can change
    for unchanged in (None, object()):
        with pytest.raises(TypeError):
            perturbed(unchanged)




@pytest.mark.slow
@pytest.mark.skipif(not BIGCODEBENCH_PYTHON, reason=MISSING)
def test_bigcodebench_shaped_tasks_whose_tests_accept_a_stub_or_a_changed_result_are_flagged() -> None:
    data = load_dataset("bigcodebench-complete", data_dir=BIGCODEBENCH_SHAPED)
    with SandboxPool(workers=2, limits=SandboxLimits(test_timeout_s=5)) as pool:
        report = audit_dataset(pool, data)
    assert (report.problems, report.programs_run) == (3, 60)
    found = {(s.problem_id, s.kind): s.program for s in report.suspects}
    assert found == {
        ("BigCodeBench/9000", "constant"): "return None",  # its tests check isinstance(result, object)
        ("BigCodeBench/9000", "identity"): "return the first argument",
        ("BigCodeBench/9000", "canonical, perturbed"): "canonical result changed",
        ("BigCodeBench/9001", "canonical, perturbed"): "canonical result changed",  # columns checked, never rows
    }  # BigCodeBench/9002's tests check the values, the plot and the error: no wrong program passes
