"""Typed results of one sandboxed execution, and the limits it ran under."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

# ``environment``: the environment cannot judge the task (BigCodeBench: the network, a missing resource), never the
# program's failure nor a pass (``unittest_judge.py``).
Status = Literal["passed", "failed", "error", "timeout", "crashed", "memory_exceeded", "environment"]
STATUSES: tuple[Status, ...] = ("passed", "failed", "error", "timeout", "crashed", "memory_exceeded", "environment")
# When several tests end differently, the execution's status is the first of these that occurred.
_SEVERITY: tuple[Status, ...] = ("crashed", "memory_exceeded", "timeout", "error", "failed")


@dataclass(frozen=True)
class SandboxLimits:
    """Resource limits for one execution. Wall timeouts are enforced by the parent process."""

    test_timeout_s: float = 5.0
    problem_timeout_s: float = 60.0
    cpu_time_s: int = 60
    memory_mb: int = 1024
    max_processes: int = 32
    max_output_bytes: int = 1_000_000
    max_file_bytes: int = 16_000_000
    max_feedback_chars: int = 2000
    recursion_limit: int = 3000
    isolate_network: bool = True
    drop_privileges: bool = True

    def __post_init__(self) -> None:
        for name in ("test_timeout_s", "problem_timeout_s", "cpu_time_s", "memory_mb", "max_processes",
                     "max_output_bytes", "max_file_bytes", "max_feedback_chars", "recursion_limit"):
            if getattr(self, name) <= 0:
                raise ValueError(f"`{name}` must be positive, got {getattr(self, name)}")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class TestResult:
    """One test's outcome; ``feedback`` is the traceback filtered to the candidate's own frames. For a
    standard-input program's test, ``feedback`` also shows the test's input, the expected and the actual
    output (each truncated), and ``output`` is what the program printed (its last 2,000 characters)."""

    index: int
    status: Status
    exception_type: str | None = None
    message: str | None = None
    feedback: str | None = None
    duration_s: float | None = None
    output: str | None = None
    execeval_only: bool = False  # passed by ExecEval's rules alone: the strict rules reject its output (``apps-execeval``)


@dataclass(frozen=True)
class ExecutionResult:
    """The outcome of running candidate code against a list of tests in one child process.

    ``status`` is ``passed`` only when the child reported every test as passed and then reported that
    it was done; anything else (a silent exit, a signal, a kill on timeout) is never ``passed``.
    """

    status: Status
    tests: tuple[TestResult, ...] = field(default_factory=tuple)
    exception_type: str | None = None
    message: str | None = None
    feedback: str | None = None
    duration_s: float = 0.0
    output_tail: str = ""

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def execeval_only(self) -> bool:
        """Passed, but only by ExecEval's output rules: a test's output the strict rules reject."""
        return self.passed and any(test.execeval_only for test in self.tests)

    @property
    def first_failure(self) -> TestResult | None:
        return next((t for t in self.tests if t.status != "passed"), None)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def combined_status(test_statuses: list[Status], n_tests: int) -> Status:
    """The execution's status from its tests': the most severe non-pass, ``passed`` if all ran and passed."""
    for status in _SEVERITY:
        if status in test_statuses:
            return status
    return "passed" if len(test_statuses) == n_tests else "error"
