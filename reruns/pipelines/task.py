"""How a prompt shows the problem and names what the model is to write.

A function problem (HumanEval, MBPP) is its prompt in a ```python block, and the model writes a
*function*; these texts are exactly what every pipeline sent before program problems existed, so recorded
runs replay. A program problem (APPS) is its statement, the starter code of a function-call problem with how
its arguments arrive, the first sample test, and the rule that the *program* reads standard input and prints
to standard output (as MapCoder's and CodeSim's APPS prompts say; the wording here is sotacheck's own).
"""

from __future__ import annotations

from sotacheck.reruns.benchmarks.problem import ProblemView

IO_RULE = ("Write a complete Python program: read the input from standard input and print the answer to standard "
           "output, exactly in the format asked.")


def is_program(problem: ProblemView) -> bool:
    return problem.kind == "program"


def unit(problem: ProblemView) -> str:
    """What the model writes: ``function`` or ``program``."""
    return "program" if is_program(problem) else "function"


def quote(problem: ProblemView) -> str:
    """The problem as a prompt shows it (module docstring)."""
    if not is_program(problem):
        return f"```python\n{problem.prompt.rstrip()}\n```"
    parts = [problem.prompt.strip()]
    if problem.starter_code.strip():
        parts.append(f"The solution is this function:\n```python\n{problem.starter_code.strip()}\n```\nThe program "
                     "reads its arguments from standard input, one per line (each written as Python prints it), "
                     "calls it and prints what it returns.")
    if problem.visible_io:
        sample = problem.visible_io[0]
        expected = sample.outputs[0] if sample.outputs else ""
        parts.append(f"Sample input:\n```\n{sample.input.rstrip()}\n```\nSample output:\n```\n{expected.rstrip()}\n```")
    parts.append(IO_RULE)
    return "\n\n".join(parts)
