"""Test code, rewritten to strict comparisons, and how an exception is described (standard library only).

Used by the trusted test process (``_tester.py``), by the supervisor that compiles and caches the tests
(``_testcache.py``: a change to this file changes the cache's key), and, for the description of an
exception, by the candidate process (``_candidate.py``).
"""

from __future__ import annotations

import ast
import linecache
import sys
import traceback
from typing import Any

CANDIDATE_FILE = "<candidate>"
TEST_FILE = "<test>"
# What compiling a candidate or a test may raise in the supervisor; the child then compiles it again and
# reports the error as the outcome.
COMPILE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError)
_PLAIN_MODULES = ("collections", "fractions", "decimal", "datetime")


def _is_plain(value: Any, depth: int = 0) -> bool:
    """Values whose equality cannot be rigged: C-defined types, a few stdlib classes, and containers of
    them. A Python class (one the candidate defined, or a handle on an object in the candidate process)
    is not."""
    if depth > 50:
        return True
    kind = type(value)
    heap_type = bool(kind.__flags__ & (1 << 9))
    if heap_type:
        module = sys.modules.get(kind.__module__)
        if kind.__module__ not in _PLAIN_MODULES or getattr(module, kind.__qualname__, None) is not kind:
            return False
    if isinstance(value, (list, tuple, set, frozenset)):
        return all(_is_plain(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(_is_plain(k, depth + 1) and _is_plain(v, depth + 1) for k, v in value.items())
    return True


def _type_name(value: Any) -> str:
    """The type's name; for a handle, the type of the object it stands for."""
    remote = getattr(type(value), "remote_type_name", None)
    return remote(value) if callable(remote) else type(value).__name__


def _strict_eq(left: Any, right: Any) -> bool:
    for side in (left, right):
        if not _is_plain(side):
            raise AssertionError(f"compared a value of non-plain type {_type_name(side)!r}")
    return bool(left == right)


def _strict_ne(left: Any, right: Any) -> bool:
    return not _strict_eq(left, right)


def _strict_truth(value: Any) -> bool:
    if not _is_plain(value):
        raise AssertionError(f"truth of a value of non-plain type {_type_name(value)!r}")
    return bool(value)


STRICT_HELPERS = {"__sotacheck_eq__": _strict_eq, "__sotacheck_ne__": _strict_ne,
                  "__sotacheck_truth__": _strict_truth}
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


def register_test_source(source: str, index: int) -> str:
    """The file name test ``index`` is compiled under, its lines registered for tracebacks."""
    filename = f"{TEST_FILE}[{index}]"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return filename


def compile_test(source: str, index: int) -> Any:
    """Test code with strict comparisons (see ``_strict``); raises what ``compile`` raises."""
    filename = register_test_source(source, index)
    tree = _strict(ast.parse(source, filename))
    return compile(tree, filename, "exec")


# File name, line number, function name, the line as written, end line, start and end column: what
# ``traceback`` needs to print a frame exactly as it prints one of this process.
Frame = tuple[str, int, str, str, "int | None", "int | None", "int | None"]


def own_frames(exc: BaseException) -> list[Frame]:
    """The traceback's frames in the candidate's or the tests' code (the harness's are left out)."""
    return [(f.filename, f.lineno or 0, f.name, linecache.getline(f.filename, f.lineno or 0), f.end_lineno,
             f.colno, f.end_colno)
            for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith((CANDIDATE_FILE, TEST_FILE))]


def exception_message(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError):
        return f"{exc.msg} (line {exc.lineno}: {(exc.text or '').strip()})"
    return str(exc)


def describe(type_name: str, message: str, frames: list[Frame], max_chars: int,
             recursion: bool = False) -> dict[str, Any]:
    """Exception type, truncated message, and the traceback text over ``frames``."""
    if recursion and len(frames) > 6:
        frames = frames[:3] + frames[-3:]
    summary = traceback.StackSummary.from_list([
        traceback.FrameSummary(file, line, function, line=text, end_lineno=end, colno=start_col, end_colno=end_col)
        for file, line, function, text, end, start_col, end_col in frames])
    if len(message) > max_chars // 2:
        message = message[: max_chars // 2] + "... [truncated]"
    text = "".join(summary.format()) + f"{type_name}: {message}"
    if len(text) > max_chars:
        text = "... [truncated]\n" + text[-max_chars:]
    return {"exception_type": type_name, "message": message, "feedback": text}
