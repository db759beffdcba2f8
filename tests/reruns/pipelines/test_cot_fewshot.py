"""The few-shot CoT baseline (#19): one call whose messages carry worked examples before the problem, with
a scripted model (control flow and message structure, not evidence about the method)."""

from __future__ import annotations

import asyncio

import pytest

from sotacheck.reruns.benchmarks import load_dataset
from sotacheck.reruns.context import PipelineContext
from sotacheck.reruns.model.base import ChatRequest, ChatResponse, SamplingParams
from sotacheck.reruns.pipelines import Arm
from sotacheck.reruns.pipelines.cot_fewshot import FUNCTION_EXAMPLES, PROGRAM_EXAMPLES
from sotacheck.reruns.sandbox import SandboxPool
from sotacheck.reruns.store.run_store import CellKey, RunStore

RIGHT = "Step by step: the fractional part.\n```python\ndef truncate_number(number):\n    return number % 1.0\n```"


class Recorder:
    identity, endpoint = "scripted", "scripted"

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.requests: list[ChatRequest] = []

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        return ChatResponse(self.reply, "stop", 5, 5, 0.0)


def _run(problem, reply: str, tmp_path):
    arm = Arm.of("cot-fewshot")
    model = Recorder(reply)
    store = RunStore.open(tmp_path, create=True)
    with SandboxPool(1) as pool:
        ctx = PipelineContext(problem, CellKey(arm.name, "d", problem.id, 0), model, store, pool, SamplingParams(), 7)
        asyncio.run(arm.run(ctx))
    store.close()
    return ctx, model


@pytest.mark.parametrize("dataset, task, examples", [("humaneval", "HumanEval/2", FUNCTION_EXAMPLES),
                                                     ("apps", "APPS/4465", PROGRAM_EXAMPLES)])
def test_one_call_with_the_worked_examples_before_the_problem(data_dir, tmp_path, dataset, task, examples) -> None:
    problem = load_dataset(dataset, data_dir).by_id()[task]
    ctx, model = _run(problem, RIGHT, tmp_path)
    assert ctx.accounting.calls == 1 and len(model.requests) == 1
    roles = [m.role for m in model.requests[0].messages]
    assert roles == ["system"] + ["user", "assistant"] * len(examples) + ["user"]
    assert [m.content for m in model.requests[0].messages[2:-1:2]] == [answer for _, answer in examples]
    assert problem.prompt.strip()[:60] in model.requests[0].messages[-1].content
    assert ctx.state.submitted == "def truncate_number(number):\n    return number % 1.0"


def test_the_worked_examples_are_no_benchmarks_problems(data_dir) -> None:
    entry_points = {p.entry_point for name in ("humaneval", "mbpp") for p in load_dataset(name, data_dir).problems}
    assert {"tally_vowels", "prefix_maxima"}.isdisjoint(entry_points)
    names = ("tally_vowels", "prefix_maxima")
    assert all(f"def {name}(" in example for name, (example, _) in zip(names, FUNCTION_EXAMPLES, strict=True))


def test_a_reply_without_a_code_block_submits_nothing(data_dir, tmp_path) -> None:
    problem = load_dataset("humaneval", data_dir).by_id()["HumanEval/2"]
    ctx, _ = _run(problem, "I think it is the fractional part.", tmp_path)
    assert ctx.state.submitted is None and ctx.state.notes == ["the reply had no code block"]
