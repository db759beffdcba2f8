"""Direct prompting: one call, the problem in, the function out (final code = the last fenced block)."""

from __future__ import annotations

from sotacheck.reruns.context import PipelineContext
from sotacheck.reruns.pipelines.code import last_code_block
from sotacheck.reruns.pipelines.registry import Pipeline, PipelineParams

SYSTEM = "You are an expert Python programmer. Answer with code only."


def instruction(prompt: str) -> str:
    return ("Complete the following Python function. Reply with the complete function (and any imports it "
            f"needs) in a single ```python code block.\n\n```python\n{prompt.rstrip()}\n```")


class Params(PipelineParams):
    """No parameters."""


async def run(ctx: PipelineContext, params: Params) -> None:
    reply = await ctx.chat([("system", SYSTEM), ("user", instruction(ctx.problem.prompt))], stage="generate")
    code = last_code_block(reply)
    ctx.submit(code, None if code else "the reply had no code block")


PIPELINE = Pipeline("direct", Params, run)
