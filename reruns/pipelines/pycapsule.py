"""PyCapsule (arXiv 2502.02928): a programmer agent and a deterministic executor.

    code ← programmer.generate(problem, signature)                    # attempt 0
    for attempt in 0 .. max_attempts:
        result ← executor.run_visible_tests(strip_example_calls(code))
        if result passes: submit code
        if attempt = max_attempts: break
        code ← programmer.fix(problem, code, process_error(result))   # only the last attempt and its error
    submit the last code

At most 1 + max_attempts model calls. The attempt at which the visible tests and the hidden tests (judged
for the record only, never shown to the programmer) first pass is recorded for the decay analysis.
"""

from __future__ import annotations

from pydantic import Field

from sotacheck.reruns.context import PipelineContext
from sotacheck.reruns.pipelines.code import last_code_block
from sotacheck.reruns.pipelines.feedback import process_error
from sotacheck.reruns.pipelines.pycapsule_executor import signature_from, strip_example_calls
from sotacheck.reruns.pipelines.registry import PYCAPSULE_SAMPLING, Pipeline, PipelineParams

PERSONA = ("You are a meticulous Python programmer. You think briefly and step by step, then write clean, "
           "correct code.")


def generation_prompt(prompt: str, signature: str) -> str:
    return (f"Write a Python solution for this problem.\n\n```python\n{prompt.rstrip()}\n```\n\n{signature}\n\n"
            "Reason in a few short steps, then give the complete function (with any imports it needs) in one "
            "```python code block. Do not call the function or read input.")


def fix_prompt(prompt: str, previous: str, error: str) -> str:
    return (f"Problem:\n```python\n{prompt.rstrip()}\n```\n\nYour previous attempt:\n```python\n{previous}\n```\n\n"
            f"Running it on the example tests gave:\n{error}\n\nFind the bug, explain it in a sentence or two, then "
            "give the complete corrected function in one ```python code block.")


class Params(PipelineParams):
    max_attempts: int = Field(default=5, ge=0, description="fix attempts after the first generation")


async def run(ctx: PipelineContext, params: Params) -> None:
    problem = ctx.problem
    max_attempts = params.max_attempts
    signature = signature_from(problem.prompt, problem.entry_point,
                               problem.visible_tests[0] if problem.visible_tests else None)
    reply = await ctx.chat([("system", PERSONA), ("user", generation_prompt(problem.prompt, signature.describe()))],
                           stage="generate")
    code = last_code_block(reply)
    attempts = ctx.state.record.setdefault("attempts", [])
    for attempt in range(max_attempts + 1):
        if code is None:
            error = "Your reply contained no ```python code block. Give the complete function in one code block."
            attempts.append({"attempt": attempt, "visible": "no code"})
        else:
            code, removed = strip_example_calls(code, problem.entry_point)
            result = await ctx.run_visible_tests(code)
            await ctx.record_hidden_pass(code, attempt)  # for the decay analysis only; nothing comes back
            attempts.append({"attempt": attempt, "visible": result.status, "stripped_calls": removed})
            if result.passed:
                ctx.state.record["first_visible_pass_attempt"] = attempt
                ctx.submit(code)
                return
            error = process_error(result, problem.visible_tests).render()
        if attempt == max_attempts:
            break
        previous = code or reply
        reply = await ctx.chat([("system", PERSONA), ("user", fix_prompt(problem.prompt, previous, error))],
                               stage="fix")
        code = last_code_block(reply) or None
    ctx.submit(code, f"no attempt passed the visible tests in {max_attempts + 1}")


PIPELINE = Pipeline("pycapsule", Params, run, sampling=PYCAPSULE_SAMPLING)
