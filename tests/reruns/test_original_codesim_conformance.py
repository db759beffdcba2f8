"""CodeSim: the authors' class (``codesim@original``, ``CodeSIM.py`` of kagnlp/CodeGenerator, run unmodified)
and our re-implementation (``codesim``) driven through the same scripted scenarios, their structure measured.

Expected counts come from the released loop: per plan attempt a planning call, a simulation, a refinement
when the simulation's reply contains the exact phrase ``Plan Modification Needed`` and not ``No Plan
Modification Needed``, a coding call, then up to d debugging calls, the code tested after the coding call and
after each debugging call; the first passing code is returned, else the last. Where ours differs the test
asserts each side's measured value and points at docs/fidelity.md. A scripted model drives control flow only.
"""

from __future__ import annotations

import pytest

from sotacheck.reruns.benchmarks import load_dataset

from .scripted_methods import Scenario, Trace, run_scenarios

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


# phrase → (theirs refines, ours refines), as measured; the rows that differ are in docs/fidelity.md ("verdict")
VERDICTS = {
    "No Need to Modify Plan": (False, False),
    "Plan Modification Needed": (True, True),
    "**Plan Modification Needed**": (True, True),
    "No Plan Modification Needed": (False, True),
    "plan modification needed": (False, True),
    "Plan modification needed": (False, True),
    "No Need to Modify Plan. (Earlier: Plan Modification Needed.)": (True, False),
}


def test_verdict_phrases(problem, pool, tmp_path) -> None:
    cases = [Scenario(phrase, (None, None), verdict=phrase) for phrase in VERDICTS]
    original = run_scenarios(problem, pool, tmp_path / "o", "codesim@original", {"p": 2, "d": 1}, cases)
    ours = run_scenarios(problem, pool, tmp_path / "m", "codesim", {"p": 2, "d": 1}, cases)
    for (phrase, (theirs_refine, ours_refine)), theirs, mine in zip(VERDICTS.items(), original, ours, strict=True):
        assert (theirs.count("refine"), len(theirs.calls)) == (2 * theirs_refine, released_calls(2, 1, None, theirs_refine))
        assert (mine.count("refine"), len(mine.calls)) == (2 * ours_refine, released_calls(2, 1, None, ours_refine)), phrase


def test_fences(problem, pool, tmp_path) -> None:
    cases = [Scenario("bare code, passing", (0, None), first_fence="none"),
             Scenario("unclosed fence", (0, None), first_fence="unclosed")]
    bare, unclosed = run_scenarios(problem, pool, tmp_path / "o", "codesim@original", {"p": 2, "d": 2}, cases)
    assert (len(bare.calls), bare.returned_code) == (3, (0, 0))  # theirs runs the bare reply as code
    assert unclosed.error is not None and "IndexError" in unclosed.error and "parse.py" in unclosed.error
    bare, unclosed = run_scenarios(problem, pool, tmp_path / "m", "codesim", {"p": 2, "d": 2}, cases)
    for trace in (bare, unclosed):  # ours finds no code block, debugs once
        assert trace.error is None and (len(trace.calls), trace.returned_code) == (4, (0, 1))


def stage_inputs(trace: Trace, problem) -> dict[str, bool]:
    debug = trace.prompts("debug")
    return {
        "simulation sees the plan reply's preamble": any("PREAMBLE-" in p for p in trace.prompts("simulate")),
        "code sees the plan reply's preamble": any("PREAMBLE-" in p for p in trace.prompts("code")),
        "code sees sample tests": all(problem.visible_tests[1] in p for p in trace.prompts("code")),
        "debug lists the passing test": all(problem.visible_tests[0] in p for p in debug),
        "debug lists the failing test": all(problem.visible_tests[1] in p for p in debug),
        "debug has a traceback": any("AssertionError" in p for p in debug),
        "debug sees the previous debug reply": all("IMPNOTE-" in p for p in debug[1:2]),
    }


def test_what_each_stage_is_given(problem, pool, tmp_path) -> None:
    cases = [Scenario("never", (None, None))]
    (theirs,) = run_scenarios(problem, pool, tmp_path / "o", "codesim@original", {"p": 2, "d": 2}, cases)
    (mine,) = run_scenarios(problem, pool, tmp_path / "m", "codesim", {"p": 2, "d": 2}, cases)
    assert stage_inputs(theirs, problem) == {
        "simulation sees the plan reply's preamble": False, "code sees the plan reply's preamble": False,
        "code sees sample tests": False, "debug lists the passing test": False, "debug lists the failing test": True,
        "debug has a traceback": False, "debug sees the previous debug reply": False}
    # ours (docs/fidelity.md, CodeSim "stage inputs"): the whole plan reply is the plan; a traceback in debugging
    assert stage_inputs(mine, problem) == {
        "simulation sees the plan reply's preamble": True, "code sees the plan reply's preamble": True,
        "code sees sample tests": False, "debug lists the passing test": False, "debug lists the failing test": True,
        "debug has a traceback": True, "debug sees the previous debug reply": False}
