"""Run untrusted candidate code against tests in a confined child process.

What it does: each execution runs in a child forked from a long-lived supervisor process (an isolated
``python -I -S`` interpreter that sees the site-packages directories, one per worker slot, see
``_zygote.py`` and ``supervisor.py``), with a fresh temporary working directory (removed afterwards),
its own session (so the whole process group can be killed), rlimits on CPU time, address space,
processes and file size, a cap on captured output, per-test and per-problem wall timeouts enforced by
the supervisor — terminate, then kill — and stdin from /dev/null. If the
supervisor itself dies or stops answering, it is killed and restarted and the execution is an error.
When run as root it also gives the child an empty network namespace and drops it to a dedicated
unprivileged uid per worker slot, so it cannot signal the parent, delete the parent's files, or
outlive the check (every process of that uid is killed afterwards). Candidate code cannot rig
equality: ``==``/``!=`` and bare ``assert x`` in test code only accept plain values.

What it does NOT protect against: a candidate that deliberately attacks the harness from inside its own
interpreter (walking frames to find the result nonce, patching shared modules such as ``math`` that a
test then uses), kernel exploits, reading world-readable files, writing to world-writable places
(``/tmp``, ``/dev/shm``), or side channels. When not run as root there is no network namespace and no
uid separation: the child runs as the calling user and *can* signal its parent or touch that user's
files. This is a judge for model-written code, not a security boundary for adversaries; run it in a
container or VM for that.
"""

from __future__ import annotations

import functools
import os
import secrets
import signal
from typing import Any

from sotacheck.reruns.sandbox._procs import kill_uid
from sotacheck.reruns.sandbox.result import ExecutionResult, SandboxLimits, Status, TestResult, combined_status
from sotacheck.reruns.sandbox.slots import SlotLease
from sotacheck.reruns.sandbox.supervisor import supervisor

SANDBOX_UID_BASE = 61000
_REPLY_GRACE_S = 15.0


def sandbox_uid(slot: int | None, limits: SandboxLimits) -> int | None:
    """The unprivileged uid of a worker slot, when running as root; None otherwise."""
    if slot is None or not limits.drop_privileges or os.geteuid() != 0:
        return None
    return SANDBOX_UID_BASE + slot


@functools.lru_cache(maxsize=64)
def _limits_dict(limits: SandboxLimits) -> dict[str, Any]:
    """The limits as sent to the supervisor (``dataclasses.asdict`` is slow enough to matter per call)."""
    return limits.as_dict()


def execute(code: str, tests: list[str] | tuple[str, ...], *, setup: str = "",
            entry_point: str | None = None, limits: SandboxLimits | None = None,
            slot: int | None = None) -> ExecutionResult:
    """Run ``code`` and then each test in ``tests`` in one confined child process.

    Parameters
    ----------
    code : the candidate program.
    tests : self-contained test snippets, run in order in a namespace holding the candidate's names.
    setup : code run in the test namespace before the first test (MBPP's ``test_setup_code``).
    entry_point : the function under test (always visible to tests, even if it shadows a builtin).
    limits : resource limits; defaults to ``SandboxLimits()``.
    slot : worker slot: selects the supervisor process and, as root, the unprivileged uid. Concurrent
        executions must use distinct slots, leased with ``SlotLease``; None leases one for this call.
    """
    if slot is None:
        with SlotLease(1) as lease:
            return execute(code, tests, setup=setup, entry_point=entry_point, limits=limits, slot=lease.slots[0])
    limits = limits or SandboxLimits()
    tests = list(tests)
    uid = sandbox_uid(slot, limits)
    job = {"code": code, "tests": tests, "setup": setup, "entry_point": entry_point,
           "nonce": secrets.token_hex(16), "uid": uid, "isolate_network": limits.isolate_network,
           "limits": _limits_dict(limits)}
    reply = supervisor(slot, limits.isolate_network).request(job, limits.problem_timeout_s + _REPLY_GRACE_S)
    if reply is None or "supervisor_error" in reply:
        if uid is not None:
            kill_uid(uid)
        detail = reply["supervisor_error"] if reply else "it died or stopped answering"
        return ExecutionResult("error", exception_type="SandboxFailure",
                               message=f"the sandbox supervisor failed: {detail}")
    return _result(reply, len(tests))


def _result(reply: dict[str, Any], n_tests: int) -> ExecutionResult:
    """The typed result from what the supervisor observed."""
    duration = float(reply["duration_s"])
    tail = reply.get("output_tail", "")
    events = reply["events"]
    load = next((e for e in events if e.get("event") == "loaded"), None)
    results = [TestResult(index=int(e["test"]), status=e["status"], exception_type=e.get("exception_type"),
                          message=e.get("message"), feedback=e.get("feedback"),
                          duration_s=e.get("duration_s"))
               for e in events if e.get("event") == "end"]
    if load is not None and load["status"] != "ok":
        return ExecutionResult(load["status"], tuple(results), load.get("exception_type"),
                               load.get("message"), load.get("feedback"), duration, tail)
    if reply["kill_reason"] is not None:
        status: Status = reply["kill_reason"][0]
        message = reply["kill_reason"][1]
        current = reply.get("current_test")
        if current is not None and current >= 0:
            results.append(TestResult(current, status, None, message))
        exc_type = "Timeout" if status == "timeout" else "OutputLimitExceeded"
        return ExecutionResult(status, tuple(results), exc_type, message, None, duration, tail)
    if reply["done"]:
        status = combined_status([t.status for t in results], n_tests)
        first = next((t for t in results if t.status != "passed"), None)
        return ExecutionResult(status, tuple(results), first.exception_type if first else None,
                               first.message if first else None, first.feedback if first else None,
                               duration, tail)
    # The child ended without saying it was done: a signal, os._exit, or a closed result pipe.
    signum = reply.get("signal")
    if signum is not None:
        name = signal.Signals(signum).name
        if signum == signal.SIGXCPU:
            return ExecutionResult("timeout", tuple(results), "CPUTimeExceeded",
                                   f"killed by {name} (CPU time limit)", None, duration, tail)
        return ExecutionResult("crashed", tuple(results), name, f"killed by signal {name}", None,
                               duration, tail)
    return ExecutionResult("error", tuple(results), "NoReport",
                           f"the child exited with code {reply.get('exit_code')} before reporting all tests",
                           None, duration, tail)
