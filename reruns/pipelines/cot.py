"""Chain-of-thought: one call that reasons step by step before writing the function."""

from __future__ import annotations

from sotacheck.reruns.context import PipelineContext
from sotacheck.reruns.pipelines.code import last_code_block
from sotacheck.reruns.pipelines.registry import Pipeline, PipelineParams

SYSTEM = "You are an expert Python programmer who reasons carefully before coding."


def instruction(prompt: str) -> str:
    return ("Solve the following problem. First think step by step about the input, the expected output and the "
            "edge cases in a few short sentences. Then give the complete function (and any imports it needs) in a "
            f"single ```python code block at the end.\n\n```python\n{prompt.rstrip()}\n```")


class Params(PipelineParams):
    """No parameters."""


async def run(ctx: PipelineContext, params: Params) -> None:
    reply = await ctx.chat([("system", SYSTEM), ("user", instruction(ctx.problem.prompt))], stage="reason")
    code = last_code_block(reply)
    ctx.submit(code, None if code else "the reply had no code block")


PIPELINE = Pipeline("cot", Params, run)
