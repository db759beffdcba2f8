"""Feedback for a model from a visible-test run: :func:`process_error` (the failing test and its traceback,
processed so a programmer can act on it: PyCapsule's error handler, the gate) and
:func:`sample_test_report` (which sample tests passed or failed, no traceback: what MapCoder's and CodeSim's
released loops show their model)."""

from __future__ import annotations

from dataclasses import dataclass

from sotacheck.reruns.sandbox.result import ExecutionResult


@dataclass(frozen=True)
class ProcessedError:
    label: str
    message: str

    def render(self) -> str:
        return f"{self.label}\n{self.message}"


def process_error(result: ExecutionResult, visible_tests: tuple[str, ...], max_chars: int = 1200) -> ProcessedError:
    """The error handler: which visible test failed and how, the traceback reduced to the candidate's own
    frames (the sandbox already drops harness frames), the error type labelled, long output truncated."""
    failure = result.first_failure
    if result.status == "timeout":
        label = "Timeout: the code did not finish in time (an infinite loop or a far too slow algorithm?)"
    elif result.status == "memory_exceeded":
        label = "MemoryError: the code used too much memory"
    elif result.status == "crashed":
        label = f"Crash: the process was killed ({result.exception_type})"
    elif failure is None and result.exception_type:
        label = f"{result.exception_type} while loading the code"
    elif result.exception_type == "AssertionError":
        label = "Wrong answer: a test's assertion failed"
    elif result.exception_type == "WrongAnswer":
        label = "Wrong answer: the program's output is not the expected output"
    else:
        label = f"{result.exception_type or 'Error'} raised while running a test"
    parts = []
    # a program test's feedback already shows its input and the expected and actual output
    if failure is not None and failure.output is None and 0 <= failure.index < len(visible_tests):
        parts.append(f"Failing test: {visible_tests[failure.index].strip()}")
    feedback = result.feedback or result.message or ""
    if result.exception_type == "RecursionError":
        lines = feedback.splitlines()
        feedback = "\n".join([*lines[:6], "  ... (repeated frames removed) ...", *lines[-4:]]) if len(lines) > 12 else feedback
    if feedback:
        parts.append(feedback.strip())
    message = "\n".join(parts)
    if len(message) > max_chars:
        message = message[: max_chars // 2] + "\n... [truncated] ...\n" + message[-max_chars // 2:]
    return ProcessedError(label, message)


def sample_test_verdicts(result: ExecutionResult, count: int) -> list[bool]:
    """Whether each of ``count`` visible tests passed; a test the execution never reached did not."""
    if result.passed:
        return [True] * count
    passed = {test.index for test in result.tests if test.status == "passed"}
    return [index in passed for index in range(count)]


def sample_test_report(result: ExecutionResult, visible_tests: tuple[str, ...], *, failed_only: bool) -> str:
    """The sample-test report MapCoder's and CodeSim's released loops give their model, in sotacheck's words:
    one line per test saying whether it passed (MapCoder) or only the tests that failed (CodeSim), and no
    traceback. A program test also shows what the program printed."""
    outputs = {test.index: test.output for test in result.tests}
    lines = []
    for index, (test, passed) in enumerate(zip(visible_tests, sample_test_verdicts(result, len(visible_tests)),
                                               strict=True)):
        if passed and failed_only:
            continue
        line = f"{'Passed' if passed else 'Failed'}: {test.strip()}"
        if not passed and outputs.get(index) is not None:
            line += f"\nActual output:\n{str(outputs[index]).rstrip()}"
        lines.append(line)
    return "\n".join(lines) if lines else "(no sample test failed)"
