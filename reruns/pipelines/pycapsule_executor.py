"""PyCapsule's deterministic executor modules (no model involved): the signature converter and the
example-call detector. Its error handler, which other pipelines share, is :mod:`.feedback`."""

from __future__ import annotations

import ast
from dataclasses import dataclass


@dataclass(frozen=True)
class Signature:
    name: str
    parameters: str
    example_call: str

    def describe(self) -> str:
        return f"Function name: {self.name}\nSignature: {self.name}({self.parameters})\nExample call: {self.example_call}"


def signature_from(prompt: str, entry_point: str, first_test: str | None) -> Signature:
    """Name, signature and an example call taken from the first visible test — its expected output is
    never shown (``assert f(1, 2) == 3`` gives the call ``f(1, 2)``)."""
    parameters = ""
    try:
        for node in ast.walk(ast.parse(prompt)):
            if isinstance(node, ast.FunctionDef) and node.name == entry_point:
                parameters = ast.unparse(node.args)
                break
    except SyntaxError:
        pass
    example = f"{entry_point}(...)"
    if first_test:
        try:
            tree = ast.parse(first_test.strip())
        except SyntaxError:
            tree = None
        if tree is not None:
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == entry_point:
                    example = ast.unparse(node)
                    break
    return Signature(entry_point, parameters, example)


def strip_example_calls(code: str, entry_point: str) -> tuple[str, list[str]]:
    """Delete top-level statements that would run at import: calls (``print(f(3))``, ``f(3)``,
    ``main()``), assignments from calls, loops, ``input()`` reads and ``if __name__ == "__main__":``
    blocks. Definitions, imports and constant assignments stay. Returns the code and what was removed."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code, []
    kept, removed = [], []
    for node in tree.body:
        if _runs_at_import(node):
            removed.append(ast.unparse(node).splitlines()[0][:80])
        else:
            kept.append(node)
    if not removed:
        return code, []
    tree.body = kept
    return ast.unparse(tree), removed


def _runs_at_import(node: ast.stmt) -> bool:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
        return False
    if isinstance(node, ast.If) and "__name__" in ast.unparse(node.test):
        return True
    if isinstance(node, (ast.Expr, ast.For, ast.While, ast.With, ast.Try)):
        return not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))  # docstrings stay
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        value = node.value
        return value is not None and any(isinstance(n, ast.Call) for n in ast.walk(value))
    return False
