"""Judging a unittest problem (BigCodeBench): the trusted side of ``child/_unittest_runner.py``.

The program and the benchmark's ``TestCase`` class must share one interpreter (the tests patch the program's
modules, inspect the DataFrames and Axes it returns), so the trust split of the other benchmarks (tests in a
process that never runs the program) cannot apply. What is kept from it: the *verdict* is never the program's.
This side enumerates the test methods from the test module's source (:func:`defined_test_methods`, with ``ast``; the
program cannot add, hide or rename one), asks a warm runner process (which never runs the program) for each, and
accepts a result only when one came back per method asked, each observed by the runner from outside the test
process (``child/_unittest_runner.py``'s docstring: a nonce only the runner's sealed hook holds, the child's exit
status from ``wait``). Which guarantees hold, and which do not, is in ``docs/bigcodebench.md``.

The runners use the BigCodeBench environment's interpreter (:func:`evaluation_python`), never the product's
own, with the heavy libraries imported before any fork (:data:`PRELOAD`).
"""

from __future__ import annotations

import atexit
import glob
import json
import os
import queue
import select
import signal
import subprocess
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sotacheck.core.errors import InputError
from sotacheck.reruns.benchmarks.problem import Problem
from sotacheck.reruns.benchmarks.registry import card
from sotacheck.reruns.sandbox.completion import is_whole_program
from sotacheck.reruns.sandbox.core_gate import CoreGate
from sotacheck.reruns.sandbox.execution import SANDBOX_UID_BASE
from sotacheck.reruns.sandbox.result import ExecutionResult, TestResult, combined_status
from sotacheck.reruns.sandbox.slots import SlotLease
from sotacheck.reruns.sandbox.supervisor import default_workers, supervisor_environment
from sotacheck.reruns.sandbox.unittest_sources import defined_test_methods, prompt_imports, watched_libraries

RUNNER_SCRIPT = Path(__file__).parent / "child" / "_unittest_runner.py"
PYTHON_VARIABLE = "SOTACHECK_BIGCODEBENCH_PYTHON"
# Imported once in each warm runner before it forks a test: what most tasks import (BigCodeBench's libs counts).
PRELOAD = ("numpy", "pandas", "matplotlib", "scipy", "scipy.stats", "sklearn", "seaborn", "requests", "bs4",
           "pytz", "dateutil", "statsmodels.api",
           "numba.cpython.hashing")  # numba reads the interpreter's hash secret through ctypes when this loads
# BigCodeBench's own limits (bigcodebench/evaluate.py, eval/utils.py): a task may take
# max(BIGCODEBENCH_TIMEOUT_PER_TASK (240 s), its canonical solution's time) + 1 s; 30 GB address space, 10 MB stack.
TASK_TIMEOUT_S = 240.0
TIMEOUT_VARIABLE = "BIGCODEBENCH_TIMEOUT_PER_TASK"  # BigCodeBench's own name for it, read the same way
MEMORY_MB = 30 * 1024
STACK_MB = 10
_REPLY_GRACE_S = 30.0
# Tasks in flight at most, per worker asked for: more than the workers only while those in flight leave half a core
# unused (tests that sleep or wait on a subprocess), see ``core_gate.py``; each holds a warm runner.
IN_FLIGHT_PER_WORKER = 4
# A failure the canonical solution shares, of one of these kinds, is the environment's (network, a missing
# resource or library), never the program's: the task gets status ``environment``.
ENVIRONMENT_ERRORS = frozenset((
    "URLError", "HTTPError", "ConnectionError", "ConnectionRefusedError", "ConnectionResetError", "gaierror",
    "timeout", "TimeoutError", "ConnectTimeout", "ReadTimeout", "MaxRetryError", "NewConnectionError", "SSLError",
    "SMTPServerDisconnected", "SMTPConnectError", "LookupError", "MissingCorpusError", "TesseractNotFoundError",
    "FileNotFoundError",
    "OSError", "PermissionError", "ModuleNotFoundError", "ImportError", "NoReport"))


def evaluation_python() -> str:
    """The BigCodeBench environment's interpreter: ``$SOTACHECK_BIGCODEBENCH_PYTHON``, else the newest environment
    ``make setup-bigcodebench`` built under ``~/.cache/sotacheck``.

    Raises
    ------
    InputError
        Neither is there (the message says how to build one).
    """
    named = os.environ.get(PYTHON_VARIABLE)
    if named:
        if not os.access(named, os.X_OK):
            raise InputError(f"${PYTHON_VARIABLE}={named} is not an executable interpreter")
        return named
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "sotacheck"
    built = sorted(glob.glob(str(cache / "bigcodebench-env-*" / "bin" / "python")), key=os.path.getmtime)
    built = [path for path in built if not Path(path).parent.parent.name.endswith(".build")]
    if not built:
        raise InputError(f"no BigCodeBench evaluation environment: run `make setup-bigcodebench` in a sotacheck "
                         f"checkout, or set ${PYTHON_VARIABLE} to an interpreter that has its libraries")
    return built[-1]


def calibrated_program(problem: Problem, completion: str) -> str:
    """The program BigCodeBench judges for ``completion`` (its calibrated convention): a whole program after
    ``code_prompt`` and a ``pass`` body; a completion that continues the prompt (an indented body) after the
    complete split's prompt, or after ``code_prompt`` for the instruct split, whose prompt is prose."""
    if is_whole_program(completion):
        return f"{problem.starter_code}\n    pass\n{completion}\n"
    head = problem.prompt if card(problem.dataset).continues == "prompt" else problem.starter_code
    return f"{head}{completion}\n"


def task_timeout() -> float:
    """A task's time limit before BigCodeBench's extra second: ``$BIGCODEBENCH_TIMEOUT_PER_TASK`` where set (as
    BigCodeBench's evaluator reads it), else 240 s.

    Raises
    ------
    InputError
        The variable is set to something other than a positive number of seconds.
    """
    named = os.environ.get(TIMEOUT_VARIABLE)
    if named is None:
        return TASK_TIMEOUT_S
    try:
        seconds = float(named)
    except ValueError:
        seconds = float("nan")
    if not seconds > 0 or seconds == float("inf"):
        raise InputError(f"${TIMEOUT_VARIABLE}={named!r}: expected a positive number of seconds")
    return seconds


@dataclass(frozen=True)
class UnittestLimits:
    """One task's limits: the whole task's wall time (all its tests), address space and stack."""

    task_timeout_s: float = field(default_factory=lambda: task_timeout() + 1.0)
    memory_mb: int = MEMORY_MB
    stack_mb: int = STACK_MB

    def __post_init__(self) -> None:
        for name in ("task_timeout_s", "memory_mb", "stack_mb"):
            if getattr(self, name) <= 0:
                raise ValueError(f"`{name}` must be positive, got {getattr(self, name)}")


class _Runner:
    """One warm runner process; restarted whenever it dies or stops answering."""

    def __init__(self, python: str, preload: tuple[str, ...], uid: int | None) -> None:
        self._command = [python, "-I", str(RUNNER_SCRIPT), "--isolate-network",
                         *(["--uid", str(uid)] if uid is not None else []),
                         *(arg for name in preload for arg in ("--preload", name))]
        self._proc: subprocess.Popen[bytes] | None = None
        self.uid = uid

    def _ensure(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(self._command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=subprocess.DEVNULL, env=supervisor_environment(),
                                          start_new_session=True)
            assert self._proc.stdout is not None
            ready = self._proc.stdout.readline()
            if not ready.startswith(b'{"ready"'):
                self.close()
                raise RuntimeError("the unittest runner did not start")
        return self._proc

    @property
    def pid(self) -> int | None:
        """The runner's process, while one runs."""
        proc = self._proc
        return proc.pid if proc is not None and proc.returncode is None else None

    def request(self, job: dict[str, Any], timeout_s: float) -> dict[str, Any] | None:
        """Send a job, wait for its reply; None (and a fresh runner next time) when the runner fails."""
        try:
            proc = self._ensure()
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(json.dumps(job).encode() + b"\n")
            proc.stdin.flush()
            ready, _, _ = select.select([proc.stdout], [], [], timeout_s)
            if ready:
                line = proc.stdout.readline()
                if line:
                    reply = json.loads(line)
                    if isinstance(reply, dict):
                        return reply
        except (OSError, ValueError, RuntimeError):
            pass
        self.close()
        return None

    def close(self) -> None:
        """Stop the runner, and every process its tests left (as root, every process of its uid)."""
        if self._proc is not None:
            try:
                os.killpg(self._proc.pid, signal.SIGKILL)
            except OSError:
                pass
            self._proc.wait()
            self._proc = None
            if self.uid is not None:
                from sotacheck.reruns.sandbox.child._procs import kill_uid

                kill_uid(self.uid)


class UnittestWorkers:
    """Warm runners for judging unittest problems concurrently (each call takes a free one): ``workers`` tasks at
    once, and up to ``in_flight`` while those leave half a core unused
    (:class:`~sotacheck.reruns.sandbox.core_gate.CoreGate`).
    The runners beyond ``workers`` start on first use."""

    def __init__(self, workers: int | None = None, python: str | None = None,
                 preload: tuple[str, ...] = PRELOAD, in_flight: int | None = None) -> None:
        self.workers = default_workers() if workers is None else workers
        if self.workers < 1:
            raise ValueError(f"`workers` must be at least 1, got {self.workers}")
        self.in_flight = IN_FLIGHT_PER_WORKER * self.workers if in_flight is None else in_flight
        if self.in_flight < self.workers:
            raise ValueError(f"`in_flight` must be at least `workers` ({self.workers}), got {self.in_flight}")
        self.python = python or evaluation_python()
        # as root, each runner's tests run jailed as the unprivileged uid of a slot leased machine-wide
        self._lease = SlotLease(self.in_flight) if os.geteuid() == 0 else None
        uids = [SANDBOX_UID_BASE + slot for slot in self._lease.slots] if self._lease else [None] * self.in_flight
        self._runners = [_Runner(self.python, preload, uid) for uid in uids]
        self.gate = CoreGate(self.workers, self.in_flight)
        # last in, first out: a warm runner is reused before one that has not started
        self._free: queue.LifoQueue[_Runner] = queue.LifoQueue()
        for runner in reversed(self._runners):
            self._free.put(runner)
        self._canonical: dict[str, ExecutionResult] = {}
        self._lock = threading.Lock()

    def map(self, function: Callable[[Any], ExecutionResult], items: Iterable[Any],
            cost: Callable[[Any], float] | None = None) -> Iterator[ExecutionResult]:
        """Apply ``function`` (which calls :meth:`judge` or :meth:`run`) to each item, as many at once as the gate
        admits; results in order.

        ``cost`` (an item's expected seconds) sets the order they start in: the longest first, so that a long
        wait overlaps short tasks rather than trailing after them; ties keep the given order. A consumer that
        stops early cancels the items not yet started."""
        listed = list(items)
        order = sorted(range(len(listed)), key=lambda i: -cost(listed[i])) if cost else range(len(listed))
        threads = ThreadPoolExecutor(self.in_flight, thread_name_prefix="unittest-judge")
        try:
            futures = {i: threads.submit(function, listed[i]) for i in order}
            for i in range(len(listed)):
                yield futures[i].result()
        finally:
            threads.shutdown(wait=True, cancel_futures=True)

    def run(self, program: str, test_source: str, limits: UnittestLimits | None = None,
            class_name: str = "TestCases", imports: str = "") -> ExecutionResult:
        """``program`` against every test method of ``test_source``'s ``class_name``, in a fresh process per task;
        ``imports`` (the prompt's import statements) run again between the program and the test module, so the
        names the tests use (``pd``, ``np``) are the real modules whatever the program bound to them."""
        limits = limits or UnittestLimits()
        try:
            methods = defined_test_methods(test_source, class_name)
        except InputError as exc:
            return ExecutionResult("error", exception_type="BadTestModule", message=str(exc))
        libraries, names = watched_libraries(test_source, imports)
        job = {"code": program, "test": test_source, "class": class_name, "methods": list(methods), "imports": imports,
               "libraries": list(libraries), "names": list(names),
               "limits": {"task_timeout_s": limits.task_timeout_s, "memory_mb": limits.memory_mb,
                          "stack_mb": limits.stack_mb}}
        runner: _Runner | None = None
        admitted = self.gate.acquire(lambda: runner.pid if runner is not None else None)
        try:
            runner = self._free.get()
            try:
                reply = runner.request(job, limits.task_timeout_s + _REPLY_GRACE_S)
            finally:
                self._free.put(runner)
        finally:
            self.gate.release(admitted)
        try:
            return _result(reply, methods)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:  # a malformed reply is this task's error
            return ExecutionResult("error", exception_type="SandboxFailure",
                                   message=f"the unittest runner's reply was malformed: {type(exc).__name__}")

    def judge(self, problem: Problem, completion: str, limits: UnittestLimits | None = None) -> ExecutionResult:
        """A completion of a unittest problem, calibrated as BigCodeBench does; a failure the canonical solution
        shares in this environment, of an environment kind (:data:`ENVIRONMENT_ERRORS`), is ``environment``."""
        result = self.run(calibrated_program(problem, completion), problem.hidden_tests[0], limits,
                          imports=prompt_imports(problem))
        if result.passed or problem.canonical_solution is None or not _environment_kind(result):
            return result
        canonical = result if completion == problem.canonical_solution else self._canonical_result(problem, limits)
        # only where every test the program did not pass is one the canonical solution fails here for the
        # environment: a program that fails the others (or raises the environment's error itself) stays failed
        shared = [t for t in result.tests if t.status != "passed"]
        if not shared or not all(_environment_test(canonical, t.index) for t in shared):
            return result
        first = next(t for t in canonical.tests if t.index == shared[0].index)
        return ExecutionResult("environment", result.tests, first.exception_type,
                               f"the canonical solution fails here too ({first.exception_type}: {first.message}); "
                               f"the environment cannot judge this task", None, result.duration_s)

    def _canonical_result(self, problem: Problem, limits: UnittestLimits | None) -> ExecutionResult:
        with self._lock:
            known = self._canonical.get(problem.id)
        if known is None:
            assert problem.canonical_solution is not None
            known = self.run(calibrated_program(problem, problem.canonical_solution), problem.hidden_tests[0], limits,
                             imports=prompt_imports(problem))
            with self._lock:
                self._canonical[problem.id] = known
        return known

    def close(self) -> None:
        for runner in self._runners:
            runner.close()
        if self._lease is not None:
            self._lease.release()

    def __enter__(self) -> UnittestWorkers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _environment_kind(result: ExecutionResult) -> bool:
    return any(t.status == "failed" and t.exception_type in ENVIRONMENT_ERRORS for t in result.tests)


def _environment_test(canonical: ExecutionResult, index: int) -> bool:
    return any(t.index == index and t.status == "failed" and t.exception_type in ENVIRONMENT_ERRORS
               for t in canonical.tests)


def _result(reply: dict[str, Any] | None, methods: tuple[str, ...]) -> ExecutionResult:
    """The typed result, accepted only with one verdict per method asked, in order."""
    if reply is None or "runner_error" in reply:
        detail = reply["runner_error"] if reply else "it died or stopped answering"
        return ExecutionResult("error", exception_type="SandboxFailure", message=f"the unittest runner failed: {detail}")
    results = reply.get("results")
    if not isinstance(results, list) or [r.get("method") for r in results] != list(methods):
        return ExecutionResult("error", exception_type="SandboxFailure",
                               message=f"the runner did not report the {len(methods)} test methods asked for")
    tests = tuple(TestResult(index, r["status"], r.get("exception_type"),
                             f"{methods[index]}: {r.get('message', '')}".rstrip(": "), None, r.get("duration_s"))
                  for index, r in enumerate(results))
    status = combined_status([t.status for t in tests], len(methods))
    first = next((t for t in tests if t.status != "passed"), None)
    duration = sum(t.duration_s or 0.0 for t in tests)
    return ExecutionResult(status, tests, first.exception_type if first else None, first.message if first else None,
                           None, duration)


_WORKERS: dict[tuple[int, str], UnittestWorkers] = {}
_WORKERS_LOCK = threading.Lock()


def shared_workers(workers: int) -> UnittestWorkers:
    """The process's warm runners for ``workers`` concurrent judgements (made on first use, closed at exit)."""
    python = evaluation_python()
    with _WORKERS_LOCK:
        key = (workers, python)
        if key not in _WORKERS:
            _WORKERS[key] = UnittestWorkers(workers, python)
        return _WORKERS[key]


def _close_all() -> None:
    with _WORKERS_LOCK:
        for workers in _WORKERS.values():
            workers.close()
        _WORKERS.clear()


atexit.register(_close_all)
