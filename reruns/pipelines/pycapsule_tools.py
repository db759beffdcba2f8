"""PyCapsule's deterministic tools (no model involved; the paper's "executor agent"): the signature converter
and the example-call detector. Its error handler, which other pipelines share, is :mod:`.feedback`."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from sotacheck.core import pyast


@dataclass(frozen=True)
class Signature:
    name: str
    parameters: str
    example_call: str

    def describe(self) -> str:
        return f"Function name: {self.name}\nSignature: {self.name}({self.parameters})\nExample call: {self.example_call}"


def signature_from(prompt: str, entry_point: str, first_test: str | None) -> Signature:
    """Name, signature and an example call taken from the first visible test — its expected output is
    never shown (``assert f(1, 2) == 3`` gives the call ``f(1, 2)``). The parameters are the prompt's
    ``def`` where it has one (HumanEval); where it has none (MBPP) they come from that call: one name per
    argument it passes (``arg1, arg2``, and its keywords by name)."""
    parameters = None
    try:
        for node in ast.walk(pyast.parse(prompt)):
            if isinstance(node, ast.FunctionDef) and node.name == entry_point:
                parameters = ast.unparse(node.args)
                break
    except SyntaxError:
        pass
    call = _first_call(first_test, entry_point)
    if parameters is None:
        parameters = "" if call is None else ", ".join(
            [f"arg{index}" for index in range(1, len(call.args) + 1)] + [k.arg for k in call.keywords if k.arg])
    return Signature(entry_point, parameters, ast.unparse(call) if call is not None else f"{entry_point}(...)")


def _first_call(test: str | None, entry_point: str) -> ast.Call | None:
    if not test:
        return None
    try:
        tree = pyast.parse(test.strip())
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == entry_point:
            return node
    return None


def strip_example_calls(code: str, entry_point: str) -> tuple[str, list[str]]:
    """Delete the top-level statements that would call the program at import (PyCapsule's example-call
    detector): bare expression statements that make a call (``f(3)``, ``print(f(3))``, ``main()``), loops
    and ``with``/``try`` blocks that call the entry point or read ``input()``, and ``if __name__ ==
    "__main__":`` blocks. Assignments stay, whatever their value calls (``_PAT = re.compile(...)`` is part
    of the program), as do definitions, imports and docstrings. Returns the code and what was removed."""
    try:
        tree = pyast.parse(code)
    except SyntaxError:
        return code, []
    kept, removed = [], []
    for node in tree.body:
        if _runs_at_import(node, entry_point):
            removed.append(ast.unparse(node).splitlines()[0][:80])
        else:
            kept.append(node)
    if not removed:
        return code, []
    tree.body = kept
    return ast.unparse(tree), removed


def _calls(node: ast.AST, names: tuple[str, ...]) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in names for n in ast.walk(node))


def _runs_at_import(node: ast.stmt, entry_point: str) -> bool:
    if isinstance(node, ast.If) and "__name__" in ast.unparse(node.test):
        return True
    if isinstance(node, ast.Expr):
        return any(isinstance(n, ast.Call) for n in ast.walk(node.value))  # a docstring or bare constant stays
    if isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try)):
        return _calls(node, (entry_point, "input"))
    return False
