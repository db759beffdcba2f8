"""Direct prompting: one call, the problem in, the function out (final code = the last fenced block)."""

from __future__ import annotations

from sotacheck.reruns.benchmarks.problem import ProblemView
from sotacheck.reruns.context import PipelineContext
from sotacheck.reruns.pipelines.code import last_code_block
from sotacheck.reruns.pipelines.registry import Pipeline, PipelineParams
from sotacheck.reruns.pipelines.task import is_program, quote

SYSTEM = "You are an expert Python programmer. Answer with code only."


def instruction(prompt: str) -> str:
    return ("Complete the following Python function. Reply with the complete function (and any imports it "
            f"needs) in a single ```python code block.\n\n```python\n{prompt.rstrip()}\n```")


def program_instruction(problem: ProblemView) -> str:
    return ("Write a Python program that solves the following problem. Reply with the complete program (and any "
            f"imports it needs) in a single ```python code block.\n\n{quote(problem)}")


class Params(PipelineParams):
    """No parameters."""


async def run(ctx: PipelineContext, params: Params) -> None:
    problem = ctx.problem
    text = program_instruction(problem) if is_program(problem) else instruction(problem.prompt)
    reply = await ctx.chat([("system", SYSTEM), ("user", text)], stage="generate")
    code = last_code_block(reply)
    ctx.submit(code, None if code else "the reply had no code block")


PIPELINE = Pipeline("direct", Params, run)
