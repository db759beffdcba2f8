"""MapCoder (ACL 2024; public code Md-Ashraful-Pramanik/MapCoder, ``src/promptings/MapCoder.py``): retrieval,
planning, coding and debugging agents, in the released code's structure; the prompts are sotacheck's own.

    exemplars, tutorial ← retrieve(problem, k)          # one call: k problems (description, code, plan) + tutorial
    for each exemplar e returned:
        plan_e ← plan(e.description, e.plan, tutorial, problem, sample tests)    # not the exemplar's code
        confidence_e ← verify(problem, plan_e)                                    # 0–100
    for plan in plans by confidence, highest first (ties in exemplar order):
        code ← code(tutorial, problem, plan, sample tests)
        shown ← plan and code
        for i in 1..t:
            if the sample tests pass: return code
            shown ← improve(tutorial, problem, shown, which sample tests passed or failed)   # plan + code
            code ← the code of shown
    return the last code                                  # the t-th improvement is never tested

Calls: 1 + 2m + Σ over plans tried of (1 + improvements), m the exemplars returned; at most 1 + 2k + k(1 + t)
with k returned, and exactly that (10 for 3-0) when nothing passes. At t = 0 nothing is tested and the last
plan's code is returned. Defaults k = 3, t = 5 (the HumanEval runs used k = 5). Code is read from a reply as
the released parser reads it (:func:`reply_code`). Differences that remain are listed in docs/fidelity.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic import Field

from sotacheck.reruns.benchmarks.problem import ProblemView
from sotacheck.reruns.context import PipelineContext
from sotacheck.reruns.pipelines.code import reply_code
from sotacheck.reruns.pipelines.feedback import sample_test_report
from sotacheck.reruns.pipelines.registry import MAPCODER_SAMPLING, Pipeline, PipelineParams
from sotacheck.reruns.pipelines.task import quote, unit

SYSTEM = "You are an expert programmer and a patient teacher of algorithms."
_EXAMPLE = re.compile(r"^#+\s*example\s*\d+.*$", re.IGNORECASE | re.MULTILINE)
_TUTORIAL = re.compile(r"^#+\s*(algorithm|tutorial).*$", re.IGNORECASE | re.MULTILINE)
_PART = re.compile(r"^#+\s*(description|code|plan)\w*.*$", re.IGNORECASE | re.MULTILINE)
_FENCED = re.compile(r"```.*?(```|\Z)", re.DOTALL)
_CONFIDENCE = re.compile(r"confidence\D{0,20}(\d{1,3})", re.IGNORECASE)


@dataclass(frozen=True)
class Exemplar:
    """A recalled problem as planning sees it: its description and its plan (its code is not passed on)."""

    description: str
    plan: str


def retrieval_prompt(problem: ProblemView, k: int) -> str:
    return (f"Problem:\n{quote(problem)}\n\nRecall {k} relevant and distinct problems (not the one above). For "
            f"each, write a section headed '## Example N' with three parts: '### Description' (the problem), "
            f"'### Code' (Python code that solves it, worked out step by step) and '### Plan' (the plan that code "
            f"follows). Then write a section headed '## Algorithm' naming the kind of algorithm the problem above "
            f"needs, with a short general tutorial on it and no code.")


def _headings(pattern: re.Pattern[str], text: str) -> list[re.Match[str]]:
    """The heading lines ``pattern`` matches outside fenced code (a ``# plan`` comment in code is no heading)."""
    fenced = [m.span() for m in _FENCED.finditer(text)]
    return [m for m in pattern.finditer(text) if not any(a <= m.start() < b for a, b in fenced)]


def _parts(text: str) -> dict[str, str]:
    """An exemplar's ``### Description`` / ``### Code`` / ``### Plan`` parts, by their headings."""
    marks = _headings(_PART, text)
    ends = [m.start() for m in marks[1:]] + [len(text)]
    return {m.group(1).lower(): text[m.end():end].strip() for m, end in zip(marks, ends[:len(marks)], strict=True)}


def exemplar_of(text: str) -> Exemplar:
    """An exemplar from its section: the description and plan parts; a section without parts is taken whole,
    less its heading and code blocks."""
    parts = _parts(text)
    if "description" in parts or "plan" in parts:
        return Exemplar(parts.get("description", ""), parts.get("plan", ""))
    return Exemplar(_FENCED.sub("", _EXAMPLE.sub("", text, count=1)).strip(), "")


def split_retrieval(reply: str) -> tuple[list[Exemplar], str]:
    """Every exemplar of a retrieval reply (as many as came back, as the released code uses them all) and the
    tutorial; a reply with no example headings is one exemplar."""
    tutorial_marks = _headings(_TUTORIAL, reply)
    tutorial = reply[tutorial_marks[0].end():].strip() if tutorial_marks else ""
    body = reply[: tutorial_marks[0].start()] if tutorial_marks else reply
    starts = [m.start() for m in _headings(_EXAMPLE, body)]
    if not starts:
        return [exemplar_of(body.strip() or reply.strip())], tutorial
    sections = [body[s:e] for s, e in zip(starts, [*starts[1:], len(body)], strict=True)]
    return [exemplar_of(section) for section in sections], tutorial


def planning_prompt(exemplar: Exemplar, tutorial: str, problem: ProblemView, samples: str) -> str:
    return (f"A solved problem:\n{exemplar.description}\n\nHow it was planned:\n{exemplar.plan}\n\n"
            f"The algorithm the next problem needs:\n{tutorial}\n\nThe problem to plan:\n{quote(problem)}\n\n"
            f"Sample tests:\n{samples}\n\nWrite a concrete, numbered, step-by-step plan for this problem: only the "
            f"plan, no code and no other words.")


def verification_prompt(problem: ProblemView, plan: str) -> str:
    return (f"Problem:\n{quote(problem)}\n\nPlan:\n{plan}\n\nHow confident are you that this plan "
            "solves the problem correctly? Explain briefly, then end with a line 'Confidence: N' where N is an "
            "integer from 0 to 100.")


def coding_prompt(tutorial: str, problem: ProblemView, plan: str, samples: str) -> str:
    return (f"The algorithm this problem needs:\n{tutorial}\n\nProblem:\n{quote(problem)}\n\nPlan:\n{plan}\n\n"
            f"Sample tests:\n{samples}\n\nThink step by step, then give only the complete {unit(problem)} that "
            f"follows the plan, in one ```python code block, with no other words.")


def shown_attempt(plan: str, code: str) -> str:
    """What the first improvement is shown of a plan's attempt: its plan and its code."""
    return f"Plan:\n{plan}\n\nCode:\n```python\n{code}\n```"


def improvement_prompt(tutorial: str, problem: ProblemView, attempt: str, report: str) -> str:
    return (f"The algorithm this problem needs:\n{tutorial}\n\nProblem:\n{quote(problem)}\n\nYour attempt so far:\n"
            f"{attempt}\n\nIt does not pass the sample tests:\n{report}\n\nThink step by step about what is wrong: "
            f"write the corrected plan, then the complete corrected {unit(problem)} in one ```python code block.")


def parse_confidence(reply: str) -> int:
    matches = _CONFIDENCE.findall(reply)
    return max(0, min(100, int(matches[-1]))) if matches else 0


class Params(PipelineParams):
    k: int = Field(default=3, ge=1, description="exemplars recalled (one plan each)")
    t: int = Field(default=5, ge=0, description="sample-test runs and improvements per plan (the released loop)")


async def run(ctx: PipelineContext, params: Params) -> None:
    problem = ctx.problem
    samples = "\n".join(problem.visible_tests) or "(none given)"
    retrieval = await ctx.chat([("system", SYSTEM), ("user", retrieval_prompt(problem, params.k))], stage="retrieve")
    exemplars, tutorial = split_retrieval(retrieval)
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
    code = ""
    for rank, (_, index, plan) in enumerate(order):
        with ctx.scope("plan", rank):
            reply = await ctx.chat([("system", SYSTEM), ("user", coding_prompt(tutorial, problem, plan, samples))],
                                   stage="code")
            code = reply_code(reply, f"the coding reply of plan {rank + 1}")
            attempt = shown_attempt(plan, code)
            for improvement in range(1, params.t + 1):
                result = await ctx.run_visible_tests(code)
                if result.passed:
                    ctx.state.record["returned_at"] = {"plan_rank": rank, "exemplar": index, "debug": improvement - 1}
                    ctx.submit(code)
                    return
                report = sample_test_report(result, problem.visible_tests, failed_only=False)
                attempt = await ctx.chat([("system", SYSTEM), ("user", improvement_prompt(tutorial, problem, attempt,
                                                                                           report))], stage="debug")
                code = reply_code(attempt, f"improvement {improvement} of plan {rank + 1}")
    ctx.state.record["returned_at"] = {"plan_rank": len(order) - 1, "debug": params.t, "exhausted": True}
    ctx.submit(code, "no tested code passed the sample tests; the last code is returned, as the released loop does")


PIPELINE = Pipeline("mapcoder", Params, run, sampling=MAPCODER_SAMPLING, revision=2)
