"""``judge --audit-tests`` (``reruns/suspects.py``) on problems whose weak tests issue #33 found by hand, and on
problems whose tests are sound: each hand-found case is flagged with the kind of program that passed, the
sound ones are not. Runs the real judge."""

from __future__ import annotations

from sotacheck.reruns.benchmarks import load_dataset
from sotacheck.reruns.benchmarks.problem import Dataset
from sotacheck.reruns.sandbox import SandboxLimits, SandboxPool
from sotacheck.reruns.suspects import audit_dataset

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
