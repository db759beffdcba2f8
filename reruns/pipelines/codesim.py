"""CodeSim (arXiv 2502.05664; public code kagnlp/CodeGenerator, ``src/promptings/CodeSIM.py``): simulation-driven
planning and debugging, in the released code's structure; the prompts are sotacheck's own.

    for i in 1..p:
        plan ← the "### Plan" section of plan(problem)   # the reply also recalls a problem and an algorithm
        verdict ← simulate(problem, plan)                 # hand-trace a sample input through the plan
        if verdict has "Plan Modification Needed" and not "No Plan Modification Needed":
            plan ← refine(problem, plan, verdict)         # the whole reply; not re-simulated
        code ← code(problem, plan)
        if the sample tests pass: return code             # recorded as (plan i, debug 0)
        for j in 1..d:
            code ← debug(problem, plan, code, the failed sample tests only)   # no traceback
            if the sample tests pass: return code         # recorded as (plan i, debug j)
    return the last code

Calls per problem: at least 3, at most p·(4 + d). Defaults p = d = 5. Code is read from a reply as the
released parser reads it (:func:`reply_code`). Differences that remain are listed in docs/fidelity.md.
"""

from __future__ import annotations

from pydantic import Field

from sotacheck.reruns.benchmarks.problem import ProblemView
from sotacheck.reruns.context import PipelineContext
from sotacheck.reruns.pipelines.code import reply_code
from sotacheck.reruns.pipelines.feedback import sample_test_report
from sotacheck.reruns.pipelines.registry import CODESIM_SAMPLING, Pipeline, PipelineParams
from sotacheck.reruns.pipelines.task import quote, unit

SYSTEM = "You are an expert competitive programmer who plans carefully and checks plans by simulation."


def planning_prompt(problem: ProblemView) -> str:
    return (f"Problem:\n{quote(problem)}\n\nAnswer in four sections. '### Understanding': what the problem asks. "
            "'### Recalled problem': one relevant, different problem you know, how its Python solution works step by "
            "step, and its algorithm. '### Algorithm': the algorithm that suits the problem above, with what to watch "
            "for. '### Plan': a detailed, numbered, step-by-step plan for the problem above. Do not write code.")


def plan_of(reply: str) -> str:
    """The plan a planning reply gives: from its last ``### Plan`` on, as the released code keeps it (the
    understanding, recalled problem and algorithm go no further); a reply without one is the plan whole."""
    at = reply.rfind("### Plan")
    return f"### Plan\n\n{reply}" if at < 0 else reply[at:]


def with_plan(problem: ProblemView, plan: str) -> str:
    return f"Problem:\n{quote(problem)}\n\n{plan}"


def simulation_prompt(problem: ProblemView, plan: str) -> str:
    return (f"{with_plan(problem, plan)}\n\nTake one sample input from the problem statement and apply the plan "
            "to it step by step, by hand, without writing code. Compare the result with the expected output. Then "
            "give your verdict: write 'No Need to Modify Plan' if the plan works, or 'Plan Modification Needed' "
            "if it does not.")


def refine_prompt(problem: ProblemView, plan: str, simulation: str) -> str:
    return (f"{with_plan(problem, plan)}\n\nA simulation of this plan found it wrong:\n{simulation}\n\nWrite a "
            "corrected, detailed, numbered plan for the problem, each step following from the one before. Only the "
            "plan: no explanation and no code.")


def coding_prompt(problem: ProblemView, plan: str) -> str:
    return (f"{with_plan(problem, plan)}\n\nImplement the plan. Give the complete {unit(problem)} (with any imports "
            "it needs) in one ```python code block, with no explanation.")


def debug_prompt(problem: ProblemView, plan: str, code: str, failures: str) -> str:
    return (f"{with_plan(problem, plan)}\n\nThis code is wrong:\n```python\n{code}\n```\n\nIt fails these "
            f"tests:\n{failures}\n\nTake a failing test, trace its input through the plan and the code by hand, "
            "and note whether the plan or its translation into code is wrong and how to correct it. Then give the "
            f"complete corrected {unit(problem)} in one ```python code block, with no test code in it.")


def needs_modification(simulation: str) -> bool:
    """The released code's rule, exactly: the reply contains ``Plan Modification Needed`` (that case) and not
    ``No Plan Modification Needed``; every other wording keeps the plan."""
    return "Plan Modification Needed" in simulation and "No Plan Modification Needed" not in simulation


class Params(PipelineParams):
    p: int = Field(default=5, ge=1, description="plans to try")
    d: int = Field(default=5, ge=0, description="debugging rounds per plan")


async def run(ctx: PipelineContext, params: Params) -> None:
    problem = ctx.problem
    code = ""
    for i in range(params.p):
        with ctx.scope("plan", i):
            reply = await ctx.chat([("system", SYSTEM), ("user", planning_prompt(problem))], stage="plan")
            plan = plan_of(reply)
            simulation = await ctx.chat([("system", SYSTEM), ("user", simulation_prompt(problem, plan))],
                                        stage="simulate")
            if needs_modification(simulation):
                plan = await ctx.chat([("system", SYSTEM), ("user", refine_prompt(problem, plan, simulation))],
                                      stage="refine")
            reply = await ctx.chat([("system", SYSTEM), ("user", coding_prompt(problem, plan))], stage="code")
            code = reply_code(reply, f"the coding reply of plan {i + 1}")
            failures = ""
            for j in range(params.d + 1):
                if j > 0:
                    reply = await ctx.chat([("system", SYSTEM),
                                            ("user", debug_prompt(problem, plan, code, failures))], stage="debug")
                    code = reply_code(reply, f"debugging reply {j} of plan {i + 1}")
                result = await ctx.run_visible_tests(code)
                if result.passed:
                    ctx.state.record["returned_at"] = {"plan": i + 1, "debug": j}
                    ctx.submit(code)
                    return
                failures = sample_test_report(result, problem.visible_tests, failed_only=True)
    ctx.state.record["returned_at"] = {"plan": params.p, "debug": params.d, "exhausted": True}
    ctx.submit(code, f"no plan passed the visible tests (p={params.p}, d={params.d})")


PIPELINE = Pipeline("codesim", Params, run, sampling=CODESIM_SAMPLING, revision=2)
