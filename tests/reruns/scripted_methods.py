"""Scripted models for the conformance tests: one scenario (how many exemplars, their confidences, at which
improvement each plan's code first passes the sample tests, how the first code reply is fenced, which verdict
phrase a simulation ends with) answered in the format each implementation asks for — the authors' MapCoder
wants XML, ours wants Markdown sections — so the authors' class and our re-implementation can be driven
through the same scenario and their structure compared: calls, stage sequence, what each stage was given,
sample-test runs, the return point and the final code.

A scripted model drives control flow; it is never evidence that a method works. The model learns the stage
of each call from the context (``TapContext``: the stage the pipeline names; for the authors' classes, the
variable their code holds the messages in), and which plan and which improvement a prompt is about from
markers it planted itself (``PLAN-2``, ``# CODE-2-1``), never from the methods' prompt texts.
"""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from sotacheck.reruns.benchmarks.problem import Problem
from sotacheck.reruns.context import CellError, PipelineContext
from sotacheck.reruns.model.base import ChatRequest, ChatResponse, SamplingParams
from sotacheck.reruns.pipelines import Arm
from sotacheck.reruns.sandbox import SandboxPool
from sotacheck.reruns.sandbox.result import ExecutionResult
from sotacheck.reruns.store.run_store import CellKey, RunStore

# The authors' checkouts (MapCoder, CodeGenerator) cannot ship with the tests: $SOTACHECK_REFERENCE_IMPLS names the
# folder holding them (CI sets it); without it the tests that run them skip with REQUIRES_CHECKOUTS's reason.
REFERENCE_ENV = "SOTACHECK_REFERENCE_IMPLS"
REFERENCE = Path(os.environ.get(REFERENCE_ENV) or "/nonexistent/reference-impls")
CHECKOUTS = {"mapcoder": str(REFERENCE / "mapcoder"), "codegenerator": str(REFERENCE / "codegenerator")}
REQUIRES_CHECKOUTS = pytest.mark.skipif(
    not all(Path(path).is_dir() for path in CHECKOUTS.values()),
    reason=f"the authors' MapCoder and CodeGenerator checkouts: set ${REFERENCE_ENV} to the folder holding "
           "mapcoder/ and codegenerator/")
# The authors' call sites (the variables their run_single_pass holds the messages in) → the stage names ours use.
ORIGINAL_STAGES = {
    "input_kb_exemplars": "retrieve", "input_for_problem_planning": "plan", "input_for_planning_verification": "verify",
    "input_for_final_code_generation": "code", "input_for_improving_code": "debug",
    "input_for_planning": "plan", "input_for_simulation": "simulate", "input_for_plan_refinement": "refine",
    "input_for_debugging": "debug",
}
_PLAN = re.compile(r"PLAN-(\d+)")
_CODE = re.compile(r"# CODE-(\d+)-(\d+)")
_EXEMPLAR = re.compile(r"EXDESC-(\d+)")
TUTORIAL = "ALGO-TUTORIAL"


@dataclass(frozen=True)
class Scenario:
    """``passes_at[i]``: plan i's code first passes the sample tests at its first code (0), at improvement j,
    or never (None); later improvements keep passing. ``first_fence`` styles the cell's first code reply:
    ``fenced``, ``none`` (bare code, no fence) or ``unclosed`` (an opening fence only). MapCoder: exemplar i
    gets ``confidences[i]``; ``returned`` problems come back from retrieval. CodeSim: plan attempt i (0-based),
    and every simulation ends with ``verdict``."""

    name: str
    passes_at: tuple[int | None, ...]
    confidences: tuple[int, ...] = ()
    returned: int | None = None
    first_fence: str = "fenced"
    verdict: str = "No Need to Modify Plan"


@dataclass
class Call:
    stage: str
    prompt: str
    reply: str


@dataclass
class Trace:
    """What one cell did, as structure."""

    calls: list[Call] = field(default_factory=list)
    visible: list[tuple[str, bool]] = field(default_factory=list)
    submitted: str | None = None
    error: str | None = None
    record: dict[str, Any] = field(default_factory=dict)

    @property
    def stages(self) -> list[str]:
        return [c.stage for c in self.calls]

    def count(self, stage: str) -> int:
        return self.stages.count(stage)

    def prompts(self, stage: str) -> list[str]:
        return [c.prompt for c in self.calls if c.stage == stage]

    @property
    def returned_code(self) -> tuple[int, int] | None:
        """(plan, improvement) of the final code, read from its marker."""
        found = _CODE.findall(self.submitted or "")
        return (int(found[-1][0]), int(found[-1][1])) if found else None

    @property
    def plan_order(self) -> list[int]:
        """The plans in the order their code was first asked for."""
        return [int(_PLAN.findall(p)[-1]) for p in self.prompts("code")]


class TapContext(PipelineContext):
    """A context that tells the scripted model each call's stage and keeps the cell's trace."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.trace = Trace()

    async def chat(self, messages: Any, stage: str) -> str:
        canonical = ORIGINAL_STAGES.get(stage, stage)
        self._model.stage = canonical  # type: ignore[attr-defined]
        reply = await super().chat(messages, stage)
        self.trace.calls.append(Call(canonical, messages[-1][1], reply))
        return reply

    async def run_visible_tests(self, code: str) -> ExecutionResult:
        result = await super().run_visible_tests(code)
        self.trace.visible.append((code, result.passed))
        return result


def program(problem: Problem, plan: int, improvement: int, passing: bool) -> str:
    """Plan ``plan``'s code after ``improvement`` improvements; the wrong body passes the first of HumanEval/0's
    two sample tests and fails the second, so a test report has both lines."""
    body = (problem.canonical_solution or "") if passing else "    return False\n"
    return f"# CODE-{plan}-{improvement}\n{problem.prompt}{body}"


class ScriptedModel:
    """Answers by stage; ``style`` is ``original`` (the authors' formats) or ``ours``."""

    identity = endpoint = "scripted"

    def __init__(self, scenario: Scenario, style: str, problem: Problem, method: str) -> None:
        self.scenario, self.style, self.problem, self.method = scenario, style, problem, method
        self.stage = ""
        self.code_replies = 0
        self.plans = 0
        self.improvements: dict[int, int] = {}

    def _passes(self, plan: int, improvement: int) -> bool:
        first = self.scenario.passes_at[plan] if plan < len(self.scenario.passes_at) else None
        return first is not None and improvement >= first

    def _improve(self, prompt: str, note: str) -> str:
        """The next improvement of the plan the prompt is about (its code's marker, else its plan's)."""
        marked = _CODE.findall(prompt)
        plan = int(marked[-1][0]) if marked else int(_PLAN.findall(prompt)[-1])
        self.improvements[plan] = self.improvements.get(plan, 0) + 1
        return self._code_reply(plan, self.improvements[plan], f"{note}-{plan}-{self.improvements[plan]}")

    def _code_reply(self, plan: int, improvement: int, note: str) -> str:
        code = program(self.problem, plan, improvement, self._passes(plan, improvement))
        self.code_replies += 1
        fence = self.scenario.first_fence if self.code_replies == 1 else "fenced"
        if fence == "none":
            return code
        if fence == "unclosed":
            return f"{note}\n```python\n{code}"
        return f"{note}\n```python\n{code}```"

    async def complete(self, request: ChatRequest) -> ChatResponse:
        prompt = request.messages[-1].content
        text = self.answer_mapcoder(prompt) if self.method == "mapcoder" else self.answer_codesim(prompt)
        return ChatResponse(text, "stop", 10, 10, 0.0)

    def answer_mapcoder(self, prompt: str) -> str:
        k = self.scenario.returned or len(self.scenario.passes_at)
        if self.stage == "retrieve":
            if self.style == "original":
                problems = "".join(f"<problem><description>EXDESC-{i}</description><code>EXCODE-{i}</code>"
                                   f"<planning>EXPLAN-{i}</planning></problem>" for i in range(k))
                return f"<root>{problems}<algorithm>{TUTORIAL}</algorithm></root>"
            sections = "".join(f"## Example {i + 1}\n### Description\nEXDESC-{i}\n### Code\n```python\nEXCODE-{i}\n```\n"
                               f"### Plan\nEXPLAN-{i}\n" for i in range(k))
            return f"{sections}## Algorithm\n{TUTORIAL}"
        if self.stage == "plan":
            return f"PLAN-{_EXEMPLAR.findall(prompt)[-1]}"
        if self.stage == "verify":
            confidence = self.scenario.confidences[int(_PLAN.findall(prompt)[-1])]
            if self.style == "original":
                return f"<root><explanation>fine</explanation><confidence>{confidence}</confidence></root>"
            return f"Fine.\nConfidence: {confidence}"
        if self.stage == "code":
            return self._code_reply(int(_PLAN.findall(prompt)[-1]), 0, "Code:")
        return self._improve(prompt, "IMPNOTE")

    def answer_codesim(self, prompt: str) -> str:
        if self.stage == "plan":
            self.plans += 1
            return f"PREAMBLE-{self.plans - 1} a recalled problem\n### Plan\nPLAN-{self.plans - 1} steps"
        if self.stage == "simulate":
            return f"Simulated by hand.\n{self.scenario.verdict}"
        if self.stage == "refine":
            return f"## New Plan\nPLAN-{_PLAN.findall(prompt)[-1]} REFINED"
        if self.stage == "code":
            return self._code_reply(int(_PLAN.findall(prompt)[-1]), 0, "")
        return self._improve(prompt, "### Debugging Notes\nIMPNOTE")


def run_scenarios(problem: Problem, pool: SandboxPool, store_dir: Path, pipeline: str, params: dict[str, Any],
                  scenarios: list[Scenario]) -> list[Trace]:
    """Each scenario as one cell (repeat = its index) of ``pipeline``, concurrently, in one store."""
    method = "mapcoder" if pipeline.startswith("mapcoder") else "codesim"
    style = "original" if pipeline.endswith("@original") else "ours"
    arm = Arm.of(pipeline, params)
    store = RunStore.open(store_dir, create=not (store_dir / "store.sqlite").exists())

    async def one(index: int, scenario: Scenario) -> Trace:
        model = ScriptedModel(scenario, style, problem, method)
        ctx = TapContext(problem, CellKey(arm.name, "humaneval", problem.id, index), model, store, pool,
                         SamplingParams(), 7, checkouts=CHECKOUTS)
        try:
            await arm.run(ctx)
        except CellError as exc:
            ctx.trace.error = str(exc)
        ctx.trace.submitted = ctx.state.submitted
        ctx.trace.record = dict(ctx.state.record)
        return ctx.trace

    async def every() -> list[Trace]:
        return list(await asyncio.gather(*(one(i, s) for i, s in enumerate(scenarios))))

    try:
        return asyncio.run(every())
    finally:
        store.close()
