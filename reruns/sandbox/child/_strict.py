"""Test code compiled under its file name, and how an exception is described (standard library only).

Used by the trusted test process (``_tester.py``), by the supervisor that compiles and caches the tests
(``_testcache.py``: a change to this file changes the cache's key), and, for the description of an
exception, by the candidate process (``_candidate.py``).
"""

from __future__ import annotations

import linecache
import re
import traceback
from typing import Any

CANDIDATE_FILE = "<candidate>"
TEST_FILE = "<test>"
# What compiling a candidate or a test may raise in the supervisor; the child then compiles it again and
# reports the error as the outcome.
COMPILE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError)
# What no printer downstream may meet in a candidate's text: lone surrogates (no encoder takes them), control
# characters but newline and tab (a terminal acts on them: ``\r`` hides text, escape sequences restyle it) and
# the bidirectional overrides.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _escaped(match: re.Match[str]) -> str:
    return match.group().encode("unicode_escape").decode("ascii")


def safe_text(text: str) -> str:
    """``text`` with each unsafe character (``_UNSAFE``) written as Python's escape (``\\ud800``, ``\\x1b``):
    encodable in UTF-8 and inert on a terminal. The text of a candidate (messages, tracebacks, outputs) is made
    so where it enters the trusted side."""
    return text if _UNSAFE.search(text) is None else _UNSAFE.sub(_escaped, text)


def register_test_source(source: str, index: int) -> str:
    """The file name test ``index`` is compiled under, its lines registered for tracebacks."""
    filename = f"{TEST_FILE}[{index}]"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return filename


def compile_test(source: str, index: int) -> Any:
    """A test's code, compiled as written; raises what ``compile`` raises. No rewrite is needed: what a test
    compares comes from this process's own decoder (exact builtin types, whose equality cannot be rigged)
    or is a handle on an object of the candidate process, whose comparison and truth are ``failed``
    (``_tester.Remote``)."""
    return compile(source, register_test_source(source, index), "exec")


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
    """Exception type, truncated message, and the traceback text over ``frames``; every text made safe
    (:func:`safe_text`) before ``traceback`` formats it (its carets encode a frame's line)."""
    type_name, message = safe_text(type_name), safe_text(message)
    frames = [(safe_text(file), line, safe_text(function), safe_text(text), end, start_col, end_col)
              for file, line, function, text, end, start_col, end_col in frames]
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
