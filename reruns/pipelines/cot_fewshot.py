"""Few-shot chain-of-thought: the CoT baseline as MapCoder's and CodeSim's papers ran it on HumanEval,
with worked examples before the problem (#19: their CoT is few-shot, sotacheck's ``cot`` zero-shot).

    messages ← system, then for each worked example: (its problem, its reasoning and code)
    reply ← model(messages + the problem, "think step by step, then the code")
    submit the last code block of the reply

One call. The worked examples are sotacheck's own (problems of no benchmark, written for this file; the
authors' example texts are not copied), each a function problem and, for standard-input benchmarks, a
program problem in the same shape; each shows the reasoning then the code in one fenced block.
"""

from __future__ import annotations

from sotacheck.reruns.context import PipelineContext
from sotacheck.reruns.pipelines.code import last_code_block
from sotacheck.reruns.pipelines.cot import SYSTEM, instruction, program_instruction
from sotacheck.reruns.pipelines.registry import Pipeline, PipelineParams
from sotacheck.reruns.pipelines.task import is_program

# (problem as the user turn shows it, the worked answer)
FUNCTION_EXAMPLES = (
    ('def tally_vowels(text: str) -> int:\n    """Return how many vowels (a, e, i, o, u, either case) text holds.\n'
     '    >>> tally_vowels("Banana")\n    3\n    """\n',
     "Step by step: the vowels are a, e, i, o and u in either case, so compare each character lowered against that "
     "set; count the matches; an empty text has none.\n\n```python\ndef tally_vowels(text: str) -> int:\n"
     "    return sum(1 for ch in text if ch.lower() in \"aeiou\")\n```"),
    ('from typing import List\n\n\ndef prefix_maxima(values: List[int]) -> List[int]:\n'
     '    """For each position, the largest value seen so far.\n    >>> prefix_maxima([2, 1, 5, 3])\n    [2, 2, 5, 5]\n'
     '    """\n',
     "Step by step: walk the list once, keeping the largest value seen; append it at each position; an empty list "
     "gives an empty list, so start with no maximum rather than 0 (values may be negative).\n\n```python\n"
     "from typing import List\n\n\ndef prefix_maxima(values: List[int]) -> List[int]:\n    result = []\n"
     "    best = None\n    for value in values:\n        best = value if best is None or value > best else best\n"
     "        result.append(best)\n    return result\n```"),
)
PROGRAM_EXAMPLES = (
    ("The first line holds n; the second n integers. Print the sum of the even ones.\n\nSample input:\n```\n4\n"
     "1 2 3 4\n```\nSample output:\n```\n6\n```",
     "Step by step: read n, then the n integers of the next line; keep those divisible by 2 (negative even numbers "
     "count too); print their sum, 0 when there are none.\n\n```python\nimport sys\n\ndata = sys.stdin.read().split()\n"
     "n = int(data[0])\nnumbers = list(map(int, data[1:1 + n]))\nprint(sum(x for x in numbers if x % 2 == 0))\n```"),
)


class Params(PipelineParams):
    """No parameters."""


async def run(ctx: PipelineContext, params: Params) -> None:
    problem = ctx.problem
    program = is_program(problem)
    messages: list[tuple[str, str]] = [("system", SYSTEM)]
    for example, answer in PROGRAM_EXAMPLES if program else FUNCTION_EXAMPLES:
        messages += [("user", (f"Solve the following problem. First think step by step, then give the complete "
                               f"program in a single ```python code block.\n\n{example}") if program
                      else instruction(example)), ("assistant", answer)]
    messages.append(("user", program_instruction(problem) if program else instruction(problem.prompt)))
    reply = await ctx.chat(messages, stage="reason")
    code = last_code_block(reply)
    ctx.submit(code, None if code else "the reply had no code block")


PIPELINE = Pipeline("cot-fewshot", Params, run)
