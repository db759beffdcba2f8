"""Control flow of CodeSim, MapCoder and the evidence gate, driven by a scripted model (canned replies chosen
by what each prompt asks for). This exercises branches and call bounds; it is not evidence that a method
works — that comes from reruns with a real model."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from sotacheck.reruns.benchmarks import load_dataset
from sotacheck.reruns.context import PipelineContext
from sotacheck.core.errors import SotacheckError
from sotacheck.reruns.model.base import ChatRequest, ChatResponse, SamplingParams
from sotacheck.reruns.pipelines import make_arm
from sotacheck.reruns.sandbox import SandboxPool
from sotacheck.reruns.store.run_store import CellKey, RunStore

WRONG = "```python\ndef truncate_number(number):\n    return 0.25\n```"
RIGHT = "```python\ndef truncate_number(number):\n    return number % 1.0\n```"


class Router:
    identity, endpoint = "scripted", "scripted"

    def __init__(self, answer: Callable[[str, int], str]) -> None:
        self.answer = answer
        self.prompts: list[str] = []

    async def complete(self, request: ChatRequest) -> ChatResponse:
        prompt = request.messages[-1].content
        self.prompts.append(prompt)
        return ChatResponse(self.answer(prompt, len(self.prompts)), "stop", 5, 5, 0.0)


@pytest.fixture(scope="module")
def problem(data_dir):
    return load_dataset("humaneval", data_dir).by_id()["HumanEval/2"]


def run(problem, pipeline: str, params: dict, router: Router, tmp_path):
    arm = make_arm(pipeline, params)
    store = RunStore.open(tmp_path, create=True)
    with SandboxPool(2) as pool:
        ctx = PipelineContext(problem, CellKey(arm.name, "humaneval", problem.id, 0), arm.param_dict(), router, store,
                              pool, SamplingParams(), 7)
        asyncio.run(arm.run(ctx))
    store.close()
    return ctx


def test_codesim_moves_to_the_next_plan_after_d_failed_debugs(problem, tmp_path) -> None:
    plans = iter(["PLAN-A", "PLAN-B"])

    def answer(prompt: str, n: int) -> str:
        if prompt.startswith("Problem:") and "recall one relevant problem" in prompt:
            return next(plans)
        if "trace the plan" in prompt:
            return "Traced.\nNo Need to Modify Plan" if "PLAN-A" in prompt else "Wrong.\nPlan Modification Needed"
        if "Write a corrected, numbered plan" in prompt:
            return "PLAN-B-REFINED"
        if "Implement the plan" in prompt:
            return RIGHT if "PLAN-B-REFINED" in prompt else WRONG
        return WRONG  # every debug call fails

    router = Router(answer)
    ctx = run(problem, "codesim", {"p": 2, "d": 2}, router, tmp_path)
    assert ctx.state.record["returned_at"] == {"plan": 2, "debug": 0}
    assert "number % 1.0" in (ctx.state.submitted or "")
    assert ctx.accounting.calls == 9 <= 2 * (4 + 2)  # plan 1: plan, simulate, code, 2 debugs; plan 2: + refine
    debug_prompts = [p for p in router.prompts if "It fails these tests" in p]
    assert len(debug_prompts) == 2 and all("truncate_number(3.5)" in p for p in debug_prompts)


def test_codesim_call_bound_when_nothing_passes(problem, tmp_path) -> None:
    router = Router(lambda prompt, n: "Plan Modification Needed" if "trace the plan" in prompt else WRONG)
    ctx = run(problem, "codesim", {"p": 2, "d": 1}, router, tmp_path)
    assert ctx.accounting.calls == 2 * (4 + 1)
    assert ctx.state.record["returned_at"]["exhausted"] is True


def test_mapcoder_tries_plans_in_confidence_order(problem, tmp_path) -> None:
    confidence = {"PLAN-0": 20, "PLAN-1": 90, "PLAN-2": 50}

    def answer(prompt: str, n: int) -> str:
        if "Recall 3 relevant and distinct problems" in prompt:
            return "## Example 1\nzero\n## Example 2\none\n## Example 3\ntwo\n## Algorithm\nmodular arithmetic"
        if prompt.startswith("A solved example:"):
            return {"zero": "PLAN-0", "one": "PLAN-1", "two": "PLAN-2"}[prompt.split("\n")[2].strip()]
        if "How confident" in prompt:
            plan = next(p for p in confidence if p in prompt)
            return f"Looks fine.\nConfidence: {confidence[plan]}"
        if "Write the complete function following the plan" in prompt:
            return RIGHT if "PLAN-2" in prompt else WRONG
        return WRONG  # debugging never helps

    router = Router(answer)
    ctx = run(problem, "mapcoder", {"k": 3, "t": 1}, router, tmp_path)
    coding = [p for p in router.prompts if "Write the complete function following the plan" in p]
    assert ["PLAN-1" in coding[0], "PLAN-2" in coding[1]] == [True, True]
    assert ctx.state.record["plan_order"] == [{"exemplar": 1, "confidence": 90}, {"exemplar": 2, "confidence": 50},
                                              {"exemplar": 0, "confidence": 20}]
    assert ctx.state.record["returned_at"] == {"plan_rank": 1, "exemplar": 2, "debug": 0}
    assert ctx.accounting.calls <= 1 + 2 * 3 + 3 * (1 + 1)


def test_mapcoder_call_bound_when_nothing_passes(problem, tmp_path) -> None:
    router = Router(lambda prompt, n: "## Example 1\na\n## Example 2\nb\n## Algorithm\nx" if "Recall" in prompt else WRONG)
    ctx = run(problem, "mapcoder", {"k": 2, "t": 2}, router, tmp_path)
    assert ctx.accounting.calls == 1 + 2 * 2 + 2 * (1 + 2)


def test_gate_holds_then_releases_after_the_budget(problem, tmp_path) -> None:
    router = Router(lambda prompt, n: WRONG)
    ctx = run(problem, "gate", {"base": "direct", "hold_budget": 2}, router, tmp_path)
    holds = ctx.state.record["holds"]
    assert [h["hold"] for h in holds] == [1, 2]
    assert "the visible tests have not been executed on this exact code" in holds[0]["unmet"]
    assert ctx.state.record["released"]["forced"] is True
    assert ctx.accounting.calls == 1 + 2
    assert "held back because" in router.prompts[1] and "Wrong answer" in router.prompts[1]


def test_gate_releases_a_correct_submission_after_gathering_evidence(problem, tmp_path) -> None:
    router = Router(lambda prompt, n: RIGHT)
    ctx = run(problem, "gate", {"base": "direct", "hold_budget": 3}, router, tmp_path)
    assert ctx.accounting.calls == 1
    assert ctx.state.record["released"] == {"after_holds": 1, "forced": False}


def test_gate_with_zero_budget_is_the_base_pipeline(problem, tmp_path) -> None:
    plain = Router(lambda prompt, n: WRONG)
    gated = Router(lambda prompt, n: WRONG)
    direct_ctx = run(problem, "direct", {}, plain, tmp_path / "a")
    gate_ctx = run(problem, "gate", {"base": "direct", "hold_budget": 0}, gated, tmp_path / "b")
    assert plain.prompts == gated.prompts and direct_ctx.state.submitted == gate_ctx.state.submitted
    assert gate_ctx.executions == {} and "holds" not in gate_ctx.state.record


def test_gate_flags_a_wrong_signature(problem, tmp_path) -> None:
    bad = "```python\ndef truncate_number(number, extra):\n    return number % 1.0\n```"
    router = Router(lambda prompt, n: bad if n == 1 else RIGHT)
    ctx = run(problem, "gate", {"base": "direct", "hold_budget": 3}, router, tmp_path)
    assert "`truncate_number` takes 2 parameters, the problem expects 1" in ctx.state.record["holds"][0]["unmet"]
    assert ctx.state.record["released"]["forced"] is False and ctx.accounting.calls == 2


@pytest.mark.parametrize(("pipeline", "params", "message"), [
    ("codesim", {"q": 1}, "pipeline 'codesim' has no parameter(s) q"),
    ("gate", {"hold_budget": -1}, "parameter hold_budget must be a non-negative integer, got -1"),
    ("gate", {"base": "gate"}, "pipeline 'gate': base must be one of"),
    ("pycapsule", {"max_attempts": "many"}, "parameter max_attempts must be a non-negative integer"),
])
def test_bad_parameters_are_explained_before_the_run(pipeline, params, message) -> None:
    with pytest.raises(SotacheckError) as info:
        make_arm(pipeline, params)
    assert message in str(info.value)
