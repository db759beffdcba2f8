"""PyCapsule (arXiv 2502.02928): a programmer agent and deterministic tools (``pycapsule_tools``; the paper
calls them its executor agent).

    code ← programmer.generate(problem, signature)                    # attempt 0
    for attempt in 0 .. max_attempts:
        result ← tools.run_visible_tests(strip_example_calls(code))
        if result passes: submit code
        if attempt = max_attempts: break
        code ← programmer.fix(problem, code, process_error(result))   # only the last attempt and its error
    submit the last code

At most 1 + max_attempts model calls. The attempt at which the visible tests and the hidden tests (judged
for the record only, never shown to the programmer) first pass is recorded for the decay analysis.
"""

from __future__ import annotations

from pydantic import Field

from sotacheck.reruns.benchmarks.problem import ProblemView
from sotacheck.reruns.context import PipelineContext
from sotacheck.reruns.pipelines.code import last_code_block
from sotacheck.reruns.pipelines.feedback import process_error
from sotacheck.reruns.pipelines.pycapsule_tools import signature_from, strip_example_calls
from sotacheck.reruns.pipelines.registry import PYCAPSULE_SAMPLING, Pipeline, PipelineParams
from sotacheck.reruns.pipelines.task import is_program, quote, unit

PERSONA = ("You are a meticulous Python programmer. You think briefly and step by step, then write clean, "
           "correct code.")


def generation_prompt(prompt: str, signature: str) -> str:
    return (f"Write a Python solution for this problem.\n\n```python\n{prompt.rstrip()}\n```\n\n{signature}\n\n"
            "Reason in a few short steps, then give the complete function (with any imports it needs) in one "
            "```python code block. Do not call the function or read input.")


def program_generation_prompt(problem: ProblemView) -> str:
    return (f"Write a Python program for this problem.\n\n{quote(problem)}\n\nReason in a few short steps, then give "
            "the complete program (with any imports it needs) in one ```python code block.")


def fix_prompt(prompt: str, previous: str, error: str, problem: ProblemView | None = None) -> str:
    quoted = f"```python\n{prompt.rstrip()}\n```" if problem is None else quote(problem)
    return (f"Problem:\n{quoted}\n\nYour previous attempt:\n```python\n{previous}\n```\n\n"
            f"Running it on the example tests gave:\n{error}\n\nFind the bug, explain it in a sentence or two, then "
            f"give the complete corrected {'function' if problem is None else unit(problem)} in one ```python code "
            "block.")


class Params(PipelineParams):
    max_attempts: int = Field(default=5, ge=0, description="fix attempts after the first generation")


async def run(ctx: PipelineContext, params: Params) -> None:
    problem = ctx.problem
    max_attempts = params.max_attempts
    program = is_program(problem)  # a stdin program: no signature, and its top-level code is the program
    if program:
        first = program_generation_prompt(problem)
    else:
        signature = signature_from(problem.prompt, problem.entry_point,
                                   problem.visible_tests[0] if problem.visible_tests else None)
        first = generation_prompt(problem.prompt, signature.describe())
    reply = await ctx.chat([("system", PERSONA), ("user", first)], stage="generate")
    code = last_code_block(reply)
    attempts = ctx.state.record.setdefault("attempts", [])
    for attempt in range(max_attempts + 1):
        if code is None:
            error = "Your reply contained no ```python code block. Give the complete function in one code block."
            attempts.append({"attempt": attempt, "visible": "no code"})
        else:
            code, removed = (code, []) if program else strip_example_calls(code, problem.entry_point)
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
        fix = fix_prompt(problem.prompt, previous, error, problem if program else None)
        reply = await ctx.chat([("system", PERSONA), ("user", fix)], stage="fix")
        code = last_code_block(reply) or None
    ctx.submit(code, f"no attempt passed the visible tests in {max_attempts + 1}")


PIPELINE = Pipeline("pycapsule", Params, run, sampling=PYCAPSULE_SAMPLING)
