"""MapCoder (ACL 2024; public code Md-Ashraful-Pramanik/MapCoder, MapCoder.py): retrieval, planning,
coding and debugging agents.

    exemplars, tutorial ← retrieve(problem, k)                      # one call: k distinct problems + a tutorial
    for each exemplar e:
        plan_e ← plan(e, tutorial, problem, sample tests)
        confidence_e ← verify(problem, plan_e)                      # 0–100
    for plan in plans sorted by confidence, highest first:
        code ← code(problem, plan)
        repeat t times: if visible tests pass: return code; plan, code ← debug(problem, plan, code, failures)
        if visible tests pass: return code
    return the last code

Calls: at least 2k + 2, at most 1 + 2k + k·(1 + t). Defaults k = 3, t = 5 (HumanEval runs used k = 5).
"""

from __future__ import annotations

import re

from pydantic import Field

from sotacheck.reruns.benchmarks.problem import ProblemView
from sotacheck.reruns.context import PipelineContext
from sotacheck.reruns.pipelines.code import last_code_block
from sotacheck.reruns.pipelines.feedback import process_error
from sotacheck.reruns.pipelines.registry import Pipeline, PipelineParams
from sotacheck.reruns.pipelines.task import quote, unit

SYSTEM = "You are an expert programmer and a patient teacher of algorithms."
_EXAMPLE = re.compile(r"^#+\s*example\s*\d+.*$", re.IGNORECASE | re.MULTILINE)
_TUTORIAL = re.compile(r"^#+\s*(algorithm|tutorial).*$", re.IGNORECASE | re.MULTILINE)
_CONFIDENCE = re.compile(r"confidence\D{0,20}(\d{1,3})", re.IGNORECASE)


def retrieval_prompt(problem: ProblemView, k: int) -> str:
    return (f"Problem:\n{quote(problem)}\n\nRecall {k} relevant and distinct problems. For each, "
            f"write a section headed '## Example N' with the problem description, a step-by-step plan and Python "
            "code. Then write a section headed '## Algorithm' with a short tutorial on the algorithm these problems "
            "need.")


def split_exemplars(reply: str, k: int) -> tuple[list[str], str]:
    """The exemplars (at most k) and the tutorial of a retrieval reply; an unstructured reply is one exemplar."""
    tutorial_match = _TUTORIAL.search(reply)
    tutorial = reply[tutorial_match.start():].strip() if tutorial_match else ""
    body = reply[: tutorial_match.start()] if tutorial_match else reply
    starts = [m.start() for m in _EXAMPLE.finditer(body)]
    if not starts:
        return [body.strip() or reply.strip()], tutorial
    parts = [body[s:e].strip() for s, e in zip(starts, [*starts[1:], len(body)], strict=True)]
    return parts[:k], tutorial


def planning_prompt(exemplar: str, tutorial: str, problem: ProblemView, samples: str) -> str:
    return (f"A solved example:\n{exemplar}\n\n{tutorial}\n\nNew problem:\n{quote(problem)}\n\n"
            f"Sample tests:\n{samples}\n\nWrite a numbered, step-by-step plan for the new problem. No code.")


def verification_prompt(problem: ProblemView, plan: str) -> str:
    return (f"Problem:\n{quote(problem)}\n\nPlan:\n{plan}\n\nHow confident are you that this plan "
            "solves the problem correctly? Explain briefly, then end with a line 'Confidence: N' where N is an "
            "integer from 0 to 100.")


def coding_prompt(problem: ProblemView, plan: str, samples: str) -> str:
    return (f"Problem:\n{quote(problem)}\n\nPlan:\n{plan}\n\nSample tests:\n{samples}\n\nWrite the "
            f"complete {unit(problem)} following the plan, in one ```python code block.")


def debugging_prompt(problem: ProblemView, plan: str, code: str, failures: str) -> str:
    return (f"Problem:\n{quote(problem)}\n\nPlan:\n{plan}\n\nCode:\n```python\n{code}\n```\n\n"
            f"Test results:\n{failures}\n\nRevise the plan if it is wrong (write it under 'Plan:'), then give the "
            f"complete corrected {unit(problem)} in one ```python code block.")


def parse_confidence(reply: str) -> int:
    matches = _CONFIDENCE.findall(reply)
    return max(0, min(100, int(matches[-1]))) if matches else 0


class Params(PipelineParams):
    k: int = Field(default=3, ge=1, description="exemplars recalled (one plan each)")
    t: int = Field(default=5, ge=0, description="debugging rounds per plan")


async def run(ctx: PipelineContext, params: Params) -> None:
    problem = ctx.problem
    k, t = params.k, params.t
    samples = "\n".join(problem.visible_tests) or "(none given)"
    retrieval = await ctx.chat([("system", SYSTEM), ("user", retrieval_prompt(problem, k))], stage="retrieve")
    exemplars, tutorial = split_exemplars(retrieval, k)
    plans = []
    for index, exemplar in enumerate(exemplars):
        with ctx.scope("exemplar", index):
            plan = await ctx.chat([("system", SYSTEM), ("user", planning_prompt(exemplar, tutorial, problem,
                                                                                 samples))], stage="plan")
            verdict = await ctx.chat([("system", SYSTEM), ("user", verification_prompt(problem, plan))],
                                     stage="verify")
            plans.append((parse_confidence(verdict), index, plan))
    order = sorted(plans, key=lambda item: (-item[0], item[1]))
    ctx.state.record["plan_order"] = [{"exemplar": i, "confidence": c} for c, i, _ in order]
    code: str | None = None
    for rank, (_, index, plan) in enumerate(order):
        with ctx.scope("plan", rank):
            reply = await ctx.chat([("system", SYSTEM), ("user", coding_prompt(problem, plan, samples))],
                                   stage="code")
            code = last_code_block(reply) or code
            for round_ in range(t + 1):
                if code is not None:
                    result = await ctx.run_visible_tests(code)
                    if result.passed:
                        ctx.state.record["returned_at"] = {"plan_rank": rank, "exemplar": index, "debug": round_}
                        ctx.submit(code)
                        return
                    failures = process_error(result, problem.visible_tests).render()
                else:
                    failures = "The reply contained no ```python code block."
                if round_ == t:
                    break
                reply = await ctx.chat([("system", SYSTEM), ("user", debugging_prompt(problem, plan, code or "",
                                                                                      failures))], stage="debug")
                revised = reply.split("Plan:", 1)[1].split("```", 1)[0].strip() if "Plan:" in reply else ""
                plan = revised or plan
                code = last_code_block(reply) or code
    ctx.submit(code, "no plan passed the visible tests" if code else "no code block in any reply")


PIPELINE = Pipeline("mapcoder", Params, run)
