"""Judging a standard-input program (APPS): the program runs once per test, each time in a fresh candidate
process, with the test's input on stdin; its stdout is compared in the trusted supervisor by the rules of
ExecEval, the evaluator MapCoder and CodeSim report APPS with (``child/_outputs.py``; how one test runs:
``child/_stdin_tests.py``).

Limits: each test has the pool's per-test wall limit (``test_timeout_s``), CPU time, memory and output
cap, as a function test has; the problem as a whole has ``problem_timeout_s`` over all its tests (tests
not started by then are a ``timeout``). ExecEval's own limits for Python, for a like-for-like judge, are
:data:`EXECEVAL_LIMITS`. A problem with no tests (an APPS row without sample I/O) passes its visible tests
without being run, as MapCoder's ``evaluate_sample_io`` returns True for it. A test marked not
``judgeable`` (``apps-execeval``) is an ``error`` without being run.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from sotacheck.reruns.benchmarks.problem import IOTest
from sotacheck.reruns.benchmarks.registry import card
from sotacheck.reruns.sandbox.child._outputs import encode_test
from sotacheck.reruns.sandbox.pool import SandboxPool
from sotacheck.reruns.sandbox.result import ExecutionResult, SandboxLimits, TestResult, combined_status

# ExecEval's Python 3 runtime (MapCoder's limits_by_lang.yaml over ExecEval's defaults): a 2 s CPU limit
# times the runtime's factor 3 as the wall limit of each test (ExecEval applies no CPU rlimit), 2 GiB of
# address space. It sets no limit per problem: tests stop at the first failure.
UNJUDGEABLE = "the evaluator reproduced (ExecEval, as MapCoder called it) could not read this test"
EXECEVAL_LIMITS = SandboxLimits(test_timeout_s=6.0, problem_timeout_s=3600.0, cpu_time_s=3600, memory_mb=2048)


def run_program_tests(pool: SandboxPool, code: str, tests: Sequence[IOTest], *,
                      stop_at_first_failure: bool, rules: str = "strict") -> ExecutionResult:
    """``code`` on each test in order (all of them, or up to the first that does not pass); one result with
    a :class:`TestResult` per test run; outputs compared by ``rules`` (``_outputs``: ``strict`` or
    ``execeval``). A program that does not load (a syntax error) is one result for the whole, as a function
    program's is."""
    started = time.monotonic()
    budget = pool.limits.problem_timeout_s
    results: list[TestResult] = []
    tail = ""
    for index, test in enumerate(tests):
        if time.monotonic() - started >= budget:
            results.append(TestResult(index, "timeout", "Timeout", f"the problem exceeded the {budget:g} s wall limit"))
            break
        if not test.judgeable:  # as ExecEval failed the whole request: never run, never passed
            results.append(TestResult(index, "error", "Unjudgeable", UNJUDGEABLE))
            if stop_at_first_failure:
                break
            continue
        single = pool.run(code, [encode_test(test.input, test.outputs, rules)])
        if not single.tests and index == 0:  # it did not load (the same for every test), or never reported
            return ExecutionResult(single.status, (), single.exception_type, single.message, single.feedback,
                                   time.monotonic() - started, single.output_tail)
        ran = single.tests[0] if single.tests else TestResult(index, single.status, single.exception_type,
                                                              single.message, single.feedback)
        results.append(TestResult(index, ran.status, ran.exception_type, ran.message, ran.feedback, ran.duration_s,
                                  single.output_tail, ran.execeval_only))
        if ran.status != "passed" and not tail:
            tail = single.output_tail
        if stop_at_first_failure and ran.status != "passed":
            break
    status = combined_status([r.status for r in results], len(tests))
    first = next((r for r in results if r.status != "passed"), None)
    return ExecutionResult(status, tuple(results), first.exception_type if first else None,
                           first.message if first else None, first.feedback if first else None,
                           time.monotonic() - started, tail)


def output_rules(dataset: str) -> str:
    """The rules a dataset's verdicts compare outputs by, from its card: ExecEval's (a NaN matches any number)
    for ``apps-execeval``, which reproduces MapCoder's verdicts, ``strict`` for every other."""
    return card(dataset).output_rules


__all__ = ["EXECEVAL_LIMITS", "UNJUDGEABLE", "output_rules", "run_program_tests"]
