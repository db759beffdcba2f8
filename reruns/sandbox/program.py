"""How a completion becomes the program that is judged.

The rule (also in the README):

* A completion whose first line of code starts at column 0 (``import``, ``from``, ``def``, ``class``,
  a decorator, any statement) is a **whole program**. It is judged as written, preceded only by the
  prompt's *preamble*: the prompt's imports and helper definitions other than the entry point's own
  stub (e.g. ``from typing import List``, HumanEval/32's ``poly``). The completion comes last, so its
  own definitions win.
* A completion whose first line of code is indented **continues the prompt** (the function body after
  the docstring): the program is ``prompt + completion``.
"""

from __future__ import annotations

import ast

from sotacheck.core import pyast


def is_whole_program(completion: str) -> bool:
    for line in completion.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        return not line[:1].isspace()
    return False


def prompt_preamble(prompt: str, entry_point: str) -> str:
    """The prompt's top-level statements other than the entry point's definition."""
    try:
        tree = pyast.parse(prompt)
    except SyntaxError:
        return ""
    lines = prompt.splitlines(keepends=True)
    kept = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == entry_point:
            continue
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        kept.append("".join(lines[start - 1: node.end_lineno]))
    return "\n".join(kept)


def assemble_program(prompt: str, completion: str, entry_point: str) -> str:
    """The program judged for ``completion`` (see the module docstring for the rule)."""
    if is_whole_program(completion):
        preamble = prompt_preamble(prompt, entry_point)
        return f"{preamble}\n\n{completion}\n" if preamble else f"{completion}\n"
    return f"{prompt}{completion}\n"
