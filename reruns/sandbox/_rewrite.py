"""Test code rewritten to strict comparisons: ``a == b``, ``a != b`` and a bare ``assert x`` call the
strict helpers of ``_strict.py`` (standard library only). Imported by the supervisor alone, when it first
compiles a test, after it forked the candidate launcher: ``ast`` stays out of every candidate process."""

from __future__ import annotations

import ast
from typing import Any

from _strict import register_test_source

_HELPER_OF_OP = {ast.Eq: "__sotacheck_eq__", ast.NotEq: "__sotacheck_ne__"}
_WRAPPED_TRUTH = (ast.Call, ast.Name, ast.Attribute, ast.Subscript)


def _helper_call(helper: str, args: list[ast.expr], where: ast.expr) -> ast.Call:
    """``helper(*args)`` placed where ``where`` was (so no ``fix_missing_locations`` pass is needed)."""
    place: dict[str, Any] = {"lineno": where.lineno, "col_offset": where.col_offset,
                             "end_lineno": where.end_lineno, "end_col_offset": where.end_col_offset}
    return ast.Call(ast.Name(helper, ast.Load(), **place), args, [], **place)


def _strict(node: Any) -> Any:
    """Rewrites ``a == b`` / ``a != b`` and bare ``assert x`` in test code to the strict helpers, children
    first; returns the node to put in ``node``'s place. A plain recursive walk: ``ast.NodeTransformer``
    and ``fix_missing_locations`` made compiling the tests twice as slow."""
    for field in node._fields:
        value = getattr(node, field, None)
        if type(value) is list:
            for index, item in enumerate(value):
                if isinstance(item, ast.AST):
                    value[index] = _strict(item)
        elif isinstance(value, ast.AST):
            setattr(node, field, _strict(value))
    kind = type(node)
    if kind is ast.Compare and len(node.ops) == 1 and type(node.ops[0]) in _HELPER_OF_OP:
        return _helper_call(_HELPER_OF_OP[type(node.ops[0])], [node.left, node.comparators[0]], node)
    if kind is ast.Assert:
        test = node.test
        if isinstance(test, _WRAPPED_TRUTH):
            node.test = _helper_call("__sotacheck_truth__", [test], test)
        elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test.operand = _helper_call("__sotacheck_truth__", [test.operand], test.operand)
    return node


def compile_strict(source: str, index: int) -> Any:
    """Test code with strict comparisons (see ``_strict``); raises what ``compile`` raises."""
    filename = register_test_source(source, index)
    tree = _strict(ast.parse(source, filename))
    return compile(tree, filename, "exec")
