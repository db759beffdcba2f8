"""CodeSim: the authors' class (``codesim@original``, ``CodeSIM.py`` of kagnlp/CodeGenerator, run unmodified)
and our re-implementation (``codesim``) driven through the same scripted scenarios, their structure measured.

Expected counts come from the released loop: per plan attempt a planning call, a simulation, a refinement
when the simulation's reply contains the exact phrase ``Plan Modification Needed`` and not ``No Plan
Modification Needed``, a coding call, then up to d debugging calls, the code tested after the coding call and
after each debugging call; the first passing code is returned, else the last. Both implementations are
asserted to agree on every scenario: calls, stages, tests, return point, final code, what each stage is given.
A scripted model drives control flow only.
"""

from __future__ import annotations

import pytest

from sotacheck.reruns.benchmarks import load_dataset
from tests.reruns.scripted_methods import REQUIRES_CHECKOUTS, Scenario, Trace, run_scenarios

GRID = [(p, d) for p in (2, 3) for d in (0, 3, 5)]


@pytest.fixture(scope="module")
def problem(data_dir):
    return load_dataset("humaneval", data_dir).by_id()["HumanEval/0"]


def released_calls(p: int, d: int, passes_at: int | None, refine: bool = False) -> int:
    """Calls when plan 1's code first passes after ``passes_at`` debugging rounds and no other plan passes."""
    per_plan = 3 + int(refine)
    if passes_at is None or passes_at > d:
        return p * (per_plan + d)
    return per_plan + passes_at


@REQUIRES_CHECKOUTS
@pytest.mark.parametrize(("p", "d"), GRID)
def test_calls_tests_and_return_point_on_the_grid(problem, pool, tmp_path, p, d) -> None:
    rest = (None,) * (p - 1)
    cases = [Scenario("never", (None, *rest))] + [Scenario(f"passes at {j}", (j, *rest)) for j in range(d + 1)]
    original = run_scenarios(problem, pool, tmp_path / "o", "codesim@original", {"p": p, "d": d}, cases)
    ours = run_scenarios(problem, pool, tmp_path / "m", "codesim", {"p": p, "d": d}, cases)
    for case, theirs, mine in zip(cases, original, ours, strict=True):
        passes_at = case.passes_at[0]
        for trace in (theirs, mine):  # the loops agree in structure
            assert trace.error is None
            assert len(trace.calls) == released_calls(p, d, passes_at), case.name
            assert len(trace.visible) == (passes_at + 1 if passes_at is not None else p * (d + 1))
            assert trace.returned_code == ((0, passes_at) if passes_at is not None else (p - 1, d))
        assert theirs.stages == mine.stages
        assert (theirs.submitted or "").strip() == (mine.submitted or "").strip()


# phrase → refines, by the released rule (case-sensitive; ``No Plan Modification Needed`` vetoes)
VERDICTS = {
    "No Need to Modify Plan": False,
    "Plan Modification Needed": True,
    "**Plan Modification Needed**": True,
    "No Plan Modification Needed": False,
    "plan modification needed": False,
    "Plan modification needed": False,
    "No Need to Modify Plan. (Earlier: Plan Modification Needed.)": True,
}


@REQUIRES_CHECKOUTS
def test_verdict_phrases(problem, pool, tmp_path) -> None:
    cases = [Scenario(phrase, (None, None), verdict=phrase) for phrase in VERDICTS]
    original = run_scenarios(problem, pool, tmp_path / "o", "codesim@original", {"p": 2, "d": 1}, cases)
    ours = run_scenarios(problem, pool, tmp_path / "m", "codesim", {"p": 2, "d": 1}, cases)
    for (phrase, refines), theirs, mine in zip(VERDICTS.items(), original, ours, strict=True):
        for trace in (theirs, mine):
            assert (trace.count("refine"), len(trace.calls)) == (2 * refines, released_calls(2, 1, None, refines)), phrase
        assert theirs.stages == mine.stages, phrase


@REQUIRES_CHECKOUTS
def test_fences(problem, pool, tmp_path) -> None:
    cases = [Scenario("bare code, passing", (0, None), first_fence="none"),
             Scenario("unclosed fence", (0, None), first_fence="unclosed")]
    original = run_scenarios(problem, pool, tmp_path / "o", "codesim@original", {"p": 2, "d": 2}, cases)
    ours = run_scenarios(problem, pool, tmp_path / "m", "codesim", {"p": 2, "d": 2}, cases)
    for bare, unclosed in (original, ours):
        assert (bare.error, len(bare.calls), bare.returned_code) == (None, 3, (0, 0))  # the bare reply is the code
        assert unclosed.error is not None and len(unclosed.calls) == 3 and unclosed.submitted is None
    assert (original[0].submitted or "").strip() == (ours[0].submitted or "").strip()
    assert "IndexError" in original[1].error and "parse.py" in original[1].error
    assert "never closes" in ours[1].error and "the coding reply of plan 1" in ours[1].error


def stage_inputs(trace: Trace, problem) -> dict[str, bool]:
    debug = trace.prompts("debug")
    return {
        "simulation sees the plan": all("PLAN-" in p for p in trace.prompts("simulate")),
        "simulation sees the plan reply's preamble": any("PREAMBLE-" in p for p in trace.prompts("simulate")),
        "code sees the plan reply's preamble": any("PREAMBLE-" in p for p in trace.prompts("code")),
        "code sees sample tests": all(problem.visible_tests[1] in p for p in trace.prompts("code")),
        "debug sees the plan": all("PLAN-" in p for p in debug),
        "debug lists the passing test": all(problem.visible_tests[0] in p for p in debug),
        "debug lists the failing test": all(problem.visible_tests[1] in p for p in debug),
        "debug has a traceback": any("AssertionError" in p or "Traceback" in p for p in debug),
        "debug sees the previous debug reply": all("IMPNOTE-" in p for p in debug[1:2]),
    }


@REQUIRES_CHECKOUTS
def test_what_each_stage_is_given(problem, pool, tmp_path) -> None:
    cases = [Scenario("never", (None, None)), Scenario("refined", (None, None), verdict="Plan Modification Needed")]
    original = run_scenarios(problem, pool, tmp_path / "o", "codesim@original", {"p": 2, "d": 2}, cases)
    ours = run_scenarios(problem, pool, tmp_path / "m", "codesim", {"p": 2, "d": 2}, cases)
    expected = {
        "simulation sees the plan": True, "simulation sees the plan reply's preamble": False,
        "code sees the plan reply's preamble": False, "code sees sample tests": False, "debug sees the plan": True,
        "debug lists the passing test": False, "debug lists the failing test": True, "debug has a traceback": False,
        "debug sees the previous debug reply": False}
    for theirs, mine in zip(original, ours, strict=True):
        assert stage_inputs(theirs, problem) == stage_inputs(mine, problem) == expected
        assert theirs.stages == mine.stages
        assert all("REFINED" in p for p in mine.prompts("code")) == all("REFINED" in p for p in theirs.prompts("code"))
