"""Chain-of-thought: one call that reasons step by step before writing the function."""

from __future__ import annotations

from sotacheck.reruns.benchmarks.problem import ProblemView
from sotacheck.reruns.context import PipelineContext
from sotacheck.reruns.pipelines.code import last_code_block
from sotacheck.reruns.pipelines.registry import Pipeline, PipelineParams
from sotacheck.reruns.pipelines.task import is_program, quote

SYSTEM = "You are an expert Python programmer who reasons carefully before coding."


def instruction(prompt: str) -> str:
    return ("Solve the following problem. First think step by step about the input, the expected output and the "
            "edge cases in a few short sentences. Then give the complete function (and any imports it needs) in a "
            f"single ```python code block at the end.\n\n```python\n{prompt.rstrip()}\n```")


def program_instruction(problem: ProblemView) -> str:
    return ("Solve the following problem. First think step by step about the input, the expected output and the "
            "edge cases in a few short sentences. Then give the complete program (and any imports it needs) in a "
            f"single ```python code block at the end.\n\n{quote(problem)}")


class Params(PipelineParams):
    """No parameters."""


async def run(ctx: PipelineContext, params: Params) -> None:
    problem = ctx.problem
    text = program_instruction(problem) if is_program(problem) else instruction(problem.prompt)
    reply = await ctx.chat([("system", SYSTEM), ("user", text)], stage="reason")
    code = last_code_block(reply)
    ctx.submit(code, None if code else "the reply had no code block")


PIPELINE = Pipeline("cot", Params, run)
