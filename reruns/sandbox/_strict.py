"""Test code, rewritten to strict comparisons, and how an exception is described (standard library only).

Used by the trusted test process (``_tester.py``), by the supervisor that compiles and caches the tests
(``_testcache.py``: a change to this file or to ``_rewrite.py`` changes the cache's key), and, for the
description of an exception, by the candidate process (``_candidate.py``).
"""

from __future__ import annotations

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
def register_test_source(source: str, index: int) -> str:
    """The file name test ``index`` is compiled under, its lines registered for tracebacks."""
    filename = f"{TEST_FILE}[{index}]"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return filename


def compile_test(source: str, index: int) -> Any:
    """Test code with strict comparisons (``_rewrite.py``); raises what ``compile`` raises. ``ast`` is
    imported here, on first use, and so only in the supervisor: its classes are 0.7 MB that every candidate
    process forked by the launcher would otherwise map, copy at fork and unmap at exit."""
    from _rewrite import compile_strict

    return compile_strict(source, index)


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
