"""The evidence-gated commitment wrapper (ECLoop, arXiv 2607.28815, adapted to function-level code).

    run the base pipeline; its submission is a commit action
    holds ← 0
    loop:
        gap ← unmet evidence conditions of the submitted code:
              it parses; the entry point is defined with the expected parameters;
              every visible test has been executed on this exact code; none of them failed
        if gap is empty: release
        if holds = hold_budget: forced release (recorded)
        holds ← holds + 1; record the hold and its gap
        gather evidence: run the visible tests on this code if they have not been run
        if the gap is now empty: release
        code ← ask again, feeding the gap back (the failing tests' processed errors included)

hold_budget = 0 is the base pipeline itself: no check, no extra call. Extra calls ≤ hold_budget.
"""

from __future__ import annotations

import ast

from pydantic import Field, field_validator

from sotacheck.core import pyast
from sotacheck.reruns.benchmarks.problem import ProblemView
from sotacheck.reruns.context import PipelineContext
from sotacheck.reruns.pipelines.code import last_code_block
from sotacheck.reruns.pipelines.feedback import process_error
from sotacheck.reruns.pipelines.registry import Pipeline, PipelineParams, get_pipeline, names
from sotacheck.reruns.pipelines.task import is_program, quote, unit

SYSTEM = "You are an expert Python programmer. Answer with code only."


def _parameter_count(source: str, entry_point: str) -> int | None:
    try:
        tree = pyast.parse(source)
    except SyntaxError:
        return None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == entry_point:
            return len(node.args.posonlyargs) + len(node.args.args)
    return None


def unmet_conditions(ctx: PipelineContext, code: str | None) -> list[str]:
    """The evidence gap of a submission (empty: every condition holds)."""
    problem = ctx.problem
    if code is None:
        return ["no code was submitted"]
    try:
        pyast.parse(code)
    except SyntaxError as exc:
        return [f"the code does not parse ({exc.msg}, line {exc.lineno})"]
    gap = []
    expected = _parameter_count(problem.prompt, problem.entry_point)
    actual = _parameter_count(code, problem.entry_point)
    if is_program(problem):  # a standard-input program: no entry point to check
        pass
    elif actual is None:
        gap.append(f"`{problem.entry_point}` is not defined at the top level")
    elif expected is not None and actual != expected:
        gap.append(f"`{problem.entry_point}` takes {actual} parameters, the problem expects {expected}")
    result = ctx.executions.get(code)
    if result is None:
        gap.append("the visible tests have not been executed on this exact code")
    elif not result.passed:
        gap.append(f"{len([t for t in result.tests if t.status != 'passed']) or 1} visible test(s) fail on this code")
    return gap


def revision_prompt(problem: ProblemView, code: str | None, gap: list[str], errors: str) -> str:
    listed = "\n".join(f"- {g}" for g in gap)
    return (f"Problem:\n{quote(problem)}\n\nYour submission:\n```python\n{code or ''}\n```\n\n"
            f"It was held back because:\n{listed}\n\n{errors}\nFix these points and give the complete {unit(problem)} "
            "in one ```python code block.")


class Params(PipelineParams):
    base: str = Field(default="direct", description="the pipeline whose submission is gated (run with its defaults)")
    hold_budget: int = Field(default=3, ge=0, description="holds before a forced release")

    @field_validator("base")
    @classmethod
    def _registered_and_not_the_gate(cls, value: str) -> str:
        # not the @original pipelines: the authors' classes are not written to be held and released
        choices = [name for name in names() if name != "gate" and not name.endswith("@original")]
        if value not in choices:
            raise ValueError(f"must be one of {', '.join(choices)}, got {value!r}")
        return value


async def run(ctx: PipelineContext, params: Params) -> None:
    base, budget = get_pipeline(params.base), params.hold_budget
    await base.run(ctx, base.defaults())
    if budget == 0:
        return
    holds: list[dict[str, object]] = ctx.state.record.setdefault("holds", [])
    code = ctx.state.submitted
    while True:
        gap = unmet_conditions(ctx, code)
        if not gap:
            ctx.state.record["released"] = {"after_holds": len(holds), "forced": False}
            break
        if len(holds) == budget:
            ctx.state.record["released"] = {"after_holds": len(holds), "forced": True, "unmet": gap}
            break
        holds.append({"hold": len(holds) + 1, "unmet": gap})
        errors = ""
        if code is not None and "the visible tests have not been executed on this exact code" in gap:
            await ctx.run_visible_tests(code)  # the evidence the condition asks for
            gap = unmet_conditions(ctx, code)
            if not gap:
                ctx.state.record["released"] = {"after_holds": len(holds), "forced": False}
                break
        result = ctx.executions.get(code) if code is not None else None
        if result is not None and not result.passed:
            errors = "Test results:\n" + process_error(result, ctx.problem.visible_tests).render() + "\n"
        with ctx.scope("gate", len(holds)):
            reply = await ctx.chat([("system", SYSTEM), ("user", revision_prompt(ctx.problem, code, gap, errors))],
                                   stage="revise")
        code = last_code_block(reply) or code
    ctx.submit(code)


PIPELINE = Pipeline("gate", Params, run)
