"""CodeSim (arXiv 2502.05664; public code kagnlp/CodeGenerator, CodeSIM.py): simulation-driven planning
and debugging.

    for i in 1..p:
        plan ← plan(problem, one recalled example)
        verdict ← simulate(problem, plan)            # hand-trace a sample input through the plan
        if verdict says "plan modification needed": plan ← refine(problem, plan, verdict)   # not re-simulated
        code ← code(problem, plan)
        if visible tests pass: return code           # recorded as (plan i, debug 0)
        for j in 1..d:
            code ← debug(problem, plan, code, the failed visible tests only)   # simulates a failing input
            if visible tests pass: return code       # recorded as (plan i, debug j)
    return the last code

Calls per problem: at least 3, at most p·(4 + d). Defaults p = d = 5.
"""

from __future__ import annotations

from pydantic import Field

from sotacheck.reruns.benchmarks.problem import ProblemView
from sotacheck.reruns.context import PipelineContext
from sotacheck.reruns.pipelines.code import last_code_block
from sotacheck.reruns.pipelines.feedback import process_error
from sotacheck.reruns.pipelines.registry import CODESIM_SAMPLING, Pipeline, PipelineParams
from sotacheck.reruns.pipelines.task import quote, unit

SYSTEM = "You are an expert competitive programmer who plans carefully and checks plans by simulation."


def planning_prompt(problem: ProblemView) -> str:
    return (f"Problem:\n{quote(problem)}\n\nFirst recall one relevant problem you know (describe it "
            "and how it is solved in a few lines). Then write a numbered, step-by-step plan to solve the problem "
            "above. Do not write code yet.")


def simulation_prompt(problem: ProblemView, plan: str) -> str:
    return (f"Problem:\n{quote(problem)}\n\nPlan:\n{plan}\n\nTake one example input from the "
            "problem statement and trace the plan on it step by step, by hand. Compare the result with the "
            "expected output. End with exactly one line: 'No Need to Modify Plan' if the plan is correct, or "
            "'Plan Modification Needed' if it is not.")


def refine_prompt(problem: ProblemView, plan: str, simulation: str) -> str:
    return (f"Problem:\n{quote(problem)}\n\nPlan:\n{plan}\n\nSimulation of the plan:\n{simulation}"
            "\n\nThe simulation found a problem. Write a corrected, numbered plan. Do not write code.")


def coding_prompt(problem: ProblemView, plan: str) -> str:
    return (f"Problem:\n{quote(problem)}\n\nPlan:\n{plan}\n\nImplement the plan. Give the complete "
            f"{unit(problem)} (with any imports it needs) in one ```python code block.")


def debug_prompt(problem: ProblemView, plan: str, code: str, failures: str) -> str:
    return (f"Problem:\n{quote(problem)}\n\nPlan:\n{plan}\n\nCode:\n```python\n{code}\n```\n\n"
            f"It fails these tests:\n{failures}\n\nSimulate the code by hand on the failing input, write short notes "
            f"on where it goes wrong, then give the complete corrected {unit(problem)} in one ```python code block.")


def needs_modification(simulation: str) -> bool:
    text = simulation.lower()
    return "modification needed" in text and "no need to modify" not in text


class Params(PipelineParams):
    p: int = Field(default=5, ge=1, description="plans to try")
    d: int = Field(default=5, ge=0, description="debugging rounds per plan")


async def run(ctx: PipelineContext, params: Params) -> None:
    problem = ctx.problem
    p, d = params.p, params.d
    code: str | None = None
    for i in range(p):
        with ctx.scope("plan", i):
            plan = await ctx.chat([("system", SYSTEM), ("user", planning_prompt(problem))], stage="plan")
            simulation = await ctx.chat([("system", SYSTEM), ("user", simulation_prompt(problem, plan))],
                                        stage="simulate")
            if needs_modification(simulation):
                plan = await ctx.chat([("system", SYSTEM), ("user", refine_prompt(problem, plan, simulation))],
                                      stage="refine")
            reply = await ctx.chat([("system", SYSTEM), ("user", coding_prompt(problem, plan))], stage="code")
            code = last_code_block(reply) or code
            for j in range(d + 1):
                if code is not None:
                    result = await ctx.run_visible_tests(code)
                    if result.passed:
                        ctx.state.record["returned_at"] = {"plan": i + 1, "debug": j}
                        ctx.submit(code)
                        return
                    failures = process_error(result, problem.visible_tests).render()
                else:
                    failures = "The reply contained no ```python code block."
                if j == d:
                    break
                reply = await ctx.chat([("system", SYSTEM),
                                        ("user", debug_prompt(problem, plan, code or "", failures))],
                                       stage="debug")
                code = last_code_block(reply) or code
    ctx.state.record["returned_at"] = {"plan": p, "debug": d, "exhausted": True}
    ctx.submit(code, f"no plan passed the visible tests (p={p}, d={d})" if code else "no code block in any reply")


PIPELINE = Pipeline("codesim", Params, run, sampling=CODESIM_SAMPLING)
