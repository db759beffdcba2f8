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
import builtins
import functools
import re
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING

from sotacheck.core import pyast

if TYPE_CHECKING:
    from sotacheck.reruns.benchmarks.problem import Problem


def is_whole_program(completion: str) -> bool:
    for line in completion.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        return not line[:1].isspace()
    return False


@functools.lru_cache(maxsize=4096)
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


def _bound_and_used(source: str) -> tuple[set[str], set[str]]:
    """The names a snippet binds anywhere (assignments, definitions, imports, parameters) and those it reads."""
    try:
        tree = pyast.parse(source)
    except SyntaxError:
        return set(), set()
    bound: set[str] = set()
    used: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (used if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((alias.asname or alias.name).partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound, used


def free_names(sources: Iterable[str]) -> set[str]:
    """The names the snippets read but none of them binds, builtins left out (what a test takes from the
    namespace it runs in)."""
    bound: set[str] = set()
    used: set[str] = set()
    for source in sources:
        snippet_bound, snippet_used = _bound_and_used(source)
        bound |= snippet_bound
        used |= snippet_used
    return used - bound - set(dir(builtins))


def interface_names(problem: Problem) -> tuple[str, ...]:
    """The names besides the entry point that the tests may take from the program: the problem's interface
    (MBPP/601's ``Pair``, MBPP/367's ``Node``). A name the tests read without defining is one when the
    canonical solution defines it; without a canonical solution, when the prompt names it (MBPP's prompt
    shows a test), or it is a class's name (capitalised). A standard-library module's name is never one (the tests get
    the judge's own module), nor a name the prompt defines (the tests get the prompt's own definition)."""
    return _interface_names(problem.entry_point, problem.prompt, problem.hidden_tests + problem.visible_tests,
                            problem.test_setup, problem.canonical_solution)


@functools.lru_cache(maxsize=4096)
def _interface_names(entry_point: str, prompt: str, tests: tuple[str, ...], setup: str,
                     canonical: str | None) -> tuple[str, ...]:
    defined: set[str] = set()
    if canonical is not None:
        defined, _ = _bound_and_used(canonical)
        if not defined - {entry_point}:
            return ()  # nothing to intersect with (HumanEval's canonical bodies): the tests are not parsed
    wanted = free_names([*tests, setup, prompt_preamble(prompt, entry_point)]) - {entry_point}
    wanted = {name for name in wanted if name not in sys.stdlib_module_names}
    if canonical is not None:
        return tuple(sorted(wanted & defined))
    named = set(re.findall(r"[A-Za-z_]\w*", prompt))
    return tuple(sorted(name for name in wanted if name in named or name[:1].isupper()))
