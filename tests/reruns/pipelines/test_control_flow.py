"""Control flow of CodeSim, MapCoder and the evidence gate, driven by a scripted model (canned replies chosen
by what each prompt asks for). This exercises branches and call bounds; it is not evidence that a method
works — that comes from reruns with a real model."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable

import pytest

from sotacheck.core.errors import SotacheckError, UsageError
from sotacheck.reruns.benchmarks import load_dataset
from sotacheck.reruns.benchmarks.problem import ProblemView
from sotacheck.reruns.context import PipelineContext
from sotacheck.reruns.model.base import ChatRequest, ChatResponse, SamplingParams
from sotacheck.reruns.pipelines import Arm
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
    arm = Arm.of(pipeline, params)
    store = RunStore.open(tmp_path, create=True)
    with SandboxPool(2) as pool:
        ctx = PipelineContext(problem, CellKey(arm.name, "humaneval", problem.id, 0), router, store, pool,
                              SamplingParams(), 7)
        asyncio.run(arm.run(ctx))
    store.close()
    return ctx


def test_codesim_moves_to_the_next_plan_after_d_failed_debugs(problem, tmp_path) -> None:
    plans = iter(["PLAN-A", "PLAN-B"])

    def answer(prompt: str, n: int) -> str:
        if "Answer in four sections" in prompt:
            return next(plans)
        if "apply the plan to it step by step" in prompt:
            return "Traced.\nNo Need to Modify Plan" if "PLAN-A" in prompt else "Wrong.\nPlan Modification Needed"
        if "A simulation of this plan found it wrong" in prompt:
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
    router = Router(lambda prompt, n: "Plan Modification Needed" if "apply the plan to it" in prompt else WRONG)
    ctx = run(problem, "codesim", {"p": 2, "d": 1}, router, tmp_path)
    assert ctx.accounting.calls == 2 * (4 + 1)
    assert ctx.state.record["returned_at"]["exhausted"] is True


def test_mapcoder_tries_plans_in_confidence_order(problem, tmp_path) -> None:
    confidence = {"PLAN-0": 20, "PLAN-1": 90, "PLAN-2": 50}

    def answer(prompt: str, n: int) -> str:
        if "Recall 3 relevant and distinct problems" in prompt:
            return "## Example 1\nzero\n## Example 2\none\n## Example 3\ntwo\n## Algorithm\nmodular arithmetic"
        if prompt.startswith("A solved problem:"):
            return {"zero": "PLAN-0", "one": "PLAN-1", "two": "PLAN-2"}[prompt.split("\n")[1].strip()]
        if "How confident" in prompt:
            plan = next(p for p in confidence if p in prompt)
            return f"Looks fine.\nConfidence: {confidence[plan]}"
        if "complete function that follows the plan" in prompt:
            return RIGHT if "PLAN-2" in prompt else WRONG
        return WRONG  # debugging never helps

    router = Router(answer)
    ctx = run(problem, "mapcoder", {"k": 3, "t": 1}, router, tmp_path)
    coding = [p for p in router.prompts if "complete function that follows the plan" in p]
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


def test_gate_runs_its_base_with_the_base_pipelines_defaults(problem, tmp_path) -> None:
    router = Router(lambda prompt, n: RIGHT)
    ctx = run(problem, "gate", {"base": "pycapsule", "hold_budget": 1}, router, tmp_path)
    assert ctx.accounting.calls == 1 and ctx.state.record["first_visible_pass_attempt"] == 0
    assert ctx.state.record["released"] == {"after_holds": 0, "forced": False}


@pytest.mark.parametrize(("pipeline", "params", "message"), [
    ("codesim", {"q": 1}, "pipeline 'codesim': parameter q: not a parameter of this pipeline (its parameters: p, d)"),
    ("codesim", {"p": 0}, "pipeline 'codesim': parameter p: Input should be greater than or equal to 1"),
    ("codesim", {"d": -1}, "pipeline 'codesim': parameter d: Input should be greater than or equal to 0"),
    ("mapcoder", {"k": 0}, "pipeline 'mapcoder': parameter k: Input should be greater than or equal to 1"),
    ("gate", {"hold_budget": -1}, "pipeline 'gate': parameter hold_budget: Input should be greater than or equal to 0"),
    ("gate", {"base": "gate"}, "pipeline 'gate': parameter base: must be one of direct, cot, pycapsule, codesim, "
                               "mapcoder, cot-fewshot, got 'gate'"),
    ("gate", {"base": "nope"}, "pipeline 'gate': parameter base: must be one of"),
    ("pycapsule", {"max_attempts": "many"}, "pipeline 'pycapsule': parameter max_attempts: Input should be a valid integer"),
    ("pycapsule", {"max_attempts": "5"}, "pipeline 'pycapsule': parameter max_attempts: Input should be a valid integer"),
    ("pycapsule", {"max_attempts": 2.0}, "pipeline 'pycapsule': parameter max_attempts: Input should be a valid integer"),
    ("direct", {"p": 3}, "pipeline 'direct': parameter p: not a parameter of this pipeline (its parameters: none)"),
])
def test_bad_parameters_are_explained_before_the_run(pipeline, params, message) -> None:
    with pytest.raises(UsageError) as info:
        Arm.of(pipeline, params)
    assert str(info.value) == message or str(info.value).startswith(message)
    assert "\n" not in str(info.value) and isinstance(info.value, SotacheckError)


@pytest.mark.parametrize("dataset", ["humaneval", "mbpp"])
def test_a_pipeline_sees_no_hidden_tests_and_no_canonical_solution(data_dir, dataset, tmp_path) -> None:
    full = load_dataset(dataset, data_dir).problems[0]
    store = RunStore.open(tmp_path, create=True)
    with SandboxPool(1) as pool:
        ctx = PipelineContext(full, CellKey("direct", dataset, full.id, 0), Router(lambda p, n: RIGHT), store, pool,
                              SamplingParams(), 7)
        view = ctx.problem
        asyncio.run(Arm.of("direct").run(ctx))
    store.close()
    assert isinstance(view, ProblemView) and ctx.problem is view
    for name in ("hidden_tests", "canonical_solution", "test_setup", "content_hash", "__dict__"):
        assert not hasattr(view, name), name
    assert {f.name for f in dataclasses.fields(view)} == {"id", "prompt", "entry_point", "visible_tests", "kind",
                                                          "visible_io", "starter_code"}
    assert (view.kind, view.visible_io, view.starter_code) == ("function", (), "")
    assert (view.id, view.prompt, view.entry_point, view.visible_tests) == (
        full.id, full.prompt, full.entry_point, full.visible_tests)
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.prompt = "x"  # type: ignore[misc]
    public = full.prompt + "\n".join(full.visible_tests)  # MBPP shows one of its tests in the prompt
    private = [test.strip() for test in full.hidden_tests if test.strip() not in public]
    assert private and not any(test in repr(view) for test in private)
    assert full.canonical_solution and full.canonical_solution.strip() not in repr(view)


def test_mapcoder_reads_exemplar_parts_and_ignores_headings_inside_code() -> None:
    from sotacheck.reruns.pipelines.mapcoder import Exemplar, split_retrieval

    reply = ("## Example 1\n### Description\nSum a list.\n### Code\n```python\n# Plan: loop\ndef f(xs):\n"
             "    # Algorithm: add\n    return sum(xs)\n```\n### Plan\n1. add them\n"
             "## Example 2\nCount words; split on spaces.\n```python\nlen(s.split())\n```\n"
             "## Algorithm\nLinear scans.")
    exemplars, tutorial = split_retrieval(reply)
    assert exemplars == [Exemplar("Sum a list.", "1. add them"), Exemplar("Count words; split on spaces.", "")]
    assert tutorial == "Linear scans."


def test_reply_code_reads_code_as_the_released_parsers_do() -> None:
    from sotacheck.reruns.pipelines.code import UnclosedFence, reply_code

    assert reply_code("def f():\n    return 1\n", "x") == "def f():\n    return 1\n"  # no fence: the reply is the code
    assert reply_code("```text\nnotes\n```\n```python\nA = 1\n```\n```\nB = 2\n```", "x") == "A = 1"  # Python-tagged
    assert reply_code("```\nB = 2\n```", "x") == "B = 2"
    assert reply_code("<think>```python\nno\n```</think>```python\nyes = 1\n```", "x") == "yes = 1"
    assert reply_code("```python\nfirst = 1\n```\nthen\n```python\ncut", "x") == "first = 1"  # a closed block wins
    with pytest.raises(UnclosedFence, match=r"^the coding reply of plan 2 opens a ``` code block and never closes"):
        reply_code("Here:\n```python\ndef f(", "the coding reply of plan 2")
