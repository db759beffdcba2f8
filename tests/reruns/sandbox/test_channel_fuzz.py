"""A fuzzer over the channel's messages (issue #45): wrong programs that write arbitrary messages on the
channel (messages of every kind of both protocols with fields of any type and size, unknown tags, arbitrary
JSON, bytes that are no message, a length that lies) at any moment (at import, in the call, from a thread,
from a forked child, at exit), then return a wrong answer, hold the channel, exit or loop; run through the
real judge. Whatever they write: never ``passed``, never an exception on the trusted side
(``SandboxFailure``), never a verdict later than the test limit plus 2 s, and the correct program after each
on the same slot passes.

The fast tier runs ``FAST_EXAMPLES`` examples of each; ``make test-all`` (``-m slow``) runs ``SLOW_EXAMPLES``.
"""

from __future__ import annotations

import json
import textwrap
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sotacheck.reruns.sandbox import ExecutionResult, SandboxLimits, execute
from sotacheck.reruns.sandbox.slots import SlotLease
from tests.reruns.sandbox.protocol_programs import GOOD, GOOD_PROGRAM, PROGRAM_TESTS, TESTS

LIMIT_S = 1.0
LIMITS = SandboxLimits(test_timeout_s=LIMIT_S, problem_timeout_s=10, memory_mb=1024)
FAST_EXAMPLES, SLOW_EXAMPLES = 25, 300
_LEASE = SlotLease(1)
SLOT = _LEASE.slots[0]

TAGS = ["t", "s", "f", "d", "b", "ba", "c", "i", "h", "m", "od", "C", "dq", "dd", "Q", "D", "r", "T"]
TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=12) | st.sampled_from(
    ["\ud800", "\udcff\x1b[2J", "square", "math", "__builtins__", "E" * 200, "AssertionError", "MemoryError"])
SCALARS = (st.none() | st.booleans() | st.integers() | st.integers(min_value=-(10 ** 4000), max_value=10 ** 4000)
           | st.floats(allow_nan=True, allow_infinity=True) | TEXT)


def _tagged(tag: Any, value: Any, extra: dict[str, Any]) -> dict[str, Any]:
    return {"~": tag, "v": value, **extra}


VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.builds(
    _tagged, st.sampled_from([*TAGS, "zz", 5, None]), inner,
    st.dictionaries(st.sampled_from(["h", "n", "x"]), inner, max_size=2)), max_leaves=12)
SEQUENCES = st.sampled_from([0, 1, 2, -1, True, 1.0, "1", 10 ** 30])
FRAMES = st.lists(st.lists(VALUES, min_size=7, max_size=7) | VALUES, max_size=3)
MESSAGES = st.one_of(
    VALUES,
    st.tuples(st.just("loaded"), st.lists(st.tuples(TEXT, VALUES).map(list) | VALUES, max_size=3)).map(list),
    st.tuples(st.just("load_error"), st.sampled_from(["error", "memory_exceeded", "passed"]) | VALUES,
              VALUES).map(list),
    st.tuples(st.just("ok"), SEQUENCES, VALUES, st.lists(st.lists(VALUES, max_size=2), max_size=2)).map(list),
    st.tuples(st.just("raise"), SEQUENCES, TEXT | VALUES, TEXT | VALUES, FRAMES, st.booleans() | VALUES).map(list),
    st.tuples(st.just("ran"), st.integers(-1, 256) | VALUES, VALUES, st.booleans()).map(list),
    st.tuples(st.just("raised"), VALUES, st.booleans() | VALUES).map(list),
)


def _wire_bytes(message: Any, length: str) -> bytes:
    """The message as the channel frames it, or with a length that lies, or as bytes that are no JSON."""
    body = json.dumps(message, allow_nan=True).encode()
    size = {"true": len(body), "short": max(len(body) - 1, 0), "long": len(body) + 7, "huge": 1 << 31}[length]
    return size.to_bytes(4, "little") + body


WRITES = st.lists(st.tuples(MESSAGES, st.sampled_from(["true", "true", "true", "short", "long", "huge"]))
                  .map(lambda pair: _wire_bytes(*pair)) | st.binary(max_size=24), min_size=1, max_size=3)
WHEN = st.sampled_from(["import", "call", "thread", "fork", "atexit"])
THEN = st.sampled_from(["wrong", "hold", "exit0", "exit3", "loop"])


def _program(payload: bytes, when: str, then: str, stdin_program: bool) -> str:
    """A wrong program (``square`` returns ``x + x``; the standard-input program prints 41, or 42 and then does
    not end well) that writes ``payload`` on the channel ``when``, and then does ``then``."""
    forge = {"import": "forge()", "call": "forge()", "thread": "threading.Thread(target=forge).start()",
             "fork": "if os.fork() == 0:\n    forge()\n    os._exit(0)", "atexit": "atexit.register(forge)"}[when]
    ending = {"wrong": "", "hold": "time.sleep(30)", "exit0": "os._exit(0)", "exit3": "os._exit(3)",
              "loop": "while True:\n    pass"}[then]
    head = (f"import atexit, os, threading, time\nPAYLOAD = {payload!r}\n"
            "def forge():\n    os.write(3, PAYLOAD)\n")
    if stdin_program:
        answer = "print(42, flush=True)" if then in ("hold", "exit3", "loop") else "print(41, flush=True)"
        return head + f"{answer}\n{forge}\n{ending}\n"
    body = textwrap.indent(f"{forge if when == 'call' else ''}\n{ending}\nreturn x + x", "    ")
    return head + (f"{forge}\n" if when != "call" else "") + f"def square(x):\n{body}\n"


def _judged(code: str, stdin_program: bool) -> tuple[ExecutionResult, float]:
    started = time.monotonic()
    result = execute(code, PROGRAM_TESTS if stdin_program else TESTS, entry_point=None if stdin_program else "square",
                     limits=LIMITS, slot=SLOT)
    return result, time.monotonic() - started


def _check(writes: list[bytes], when: str, then: str, stdin_program: bool) -> None:
    result, elapsed = _judged(_program(b"".join(writes), when, then, stdin_program), stdin_program)
    assert result.status != "passed", result
    assert result.exception_type != "SandboxFailure", result
    assert elapsed <= LIMIT_S + 2, f"{elapsed:.1f} s"
    for text in filter(None, [result.message, result.feedback, result.output_tail]):
        text.encode("utf-8")
    after, _ = _judged(GOOD_PROGRAM if stdin_program else GOOD, stdin_program)
    assert after.passed, after


def _fuzz(examples: int) -> Any:
    return settings(max_examples=examples, deadline=None, derandomize=examples == FAST_EXAMPLES,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@_fuzz(FAST_EXAMPLES)
@given(WRITES, WHEN, THEN, st.booleans())
def test_no_message_on_the_channel_passes_a_wrong_program(writes: list[bytes], when: str, then: str,
                                                          stdin_program: bool) -> None:
    _check(writes, when, then, stdin_program)


@pytest.mark.slow
@_fuzz(SLOW_EXAMPLES)
@given(WRITES, WHEN, THEN, st.booleans())
def test_no_message_on_the_channel_passes_a_wrong_program_long(writes: list[bytes], when: str, then: str,
                                                               stdin_program: bool) -> None:
    _check(writes, when, then, stdin_program)
