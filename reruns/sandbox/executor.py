"""Run untrusted candidate code against tests in a confined child process.

What it does: each execution gets a fresh interpreter (``python -I``), a fresh temporary working
directory (removed afterwards), its own session (so the whole process group can be killed), rlimits on
CPU time, address space, processes and file size, a cap on captured output, per-test and per-problem
wall timeouts enforced by this (parent) process — terminate, then kill — and stdin from /dev/null.
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

import json
import os
import secrets
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reruns.sandbox.result import ExecutionResult, SandboxLimits, Status, TestResult, combined_status

CHILD_SCRIPT = Path(__file__).with_name("_child.py")
SANDBOX_UID_BASE = 61000
_KILL_GRACE_S = 0.2


@dataclass
class _Collected:
    tests: dict[int, TestResult] = field(default_factory=dict)
    load_status: str | None = None
    load_error: dict[str, Any] = field(default_factory=dict)
    done: bool = False
    current_test: int | None = None
    test_started: float = 0.0


def _sandbox_uid(slot: int | None, limits: SandboxLimits) -> int | None:
    if slot is None or not limits.drop_privileges or os.geteuid() != 0:
        return None
    return SANDBOX_UID_BASE + slot


def _kill_uid(uid: int) -> None:
    """SIGKILL every process owned by ``uid`` (a sandbox slot's uid is used by nothing else)."""
    for _ in range(20):
        victims = []
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                if entry.stat().st_uid == uid:
                    victims.append(int(entry.name))
            except OSError:
                continue
        if not victims:
            return
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.01)


def _stop(proc: subprocess.Popen[bytes], uid: int | None) -> None:
    """Terminate the child's process group, then kill it; then every process of its uid."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except OSError:
            pass
        try:
            proc.wait(timeout=_KILL_GRACE_S)
            break
        except subprocess.TimeoutExpired:
            continue
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # grandchildren still in the group
    except OSError:
        pass
    if uid is not None:
        _kill_uid(uid)


def _handle_event(event: dict[str, Any], collected: _Collected) -> None:
    kind = event.get("event")
    if kind == "start":
        collected.current_test = int(event["test"])
        collected.test_started = time.monotonic()
    elif kind == "loaded":
        collected.load_status = event["status"]
        collected.load_error = event
        collected.current_test = None
    elif kind == "end":
        index = int(event["test"])
        collected.tests[index] = TestResult(
            index=index, status=event["status"], exception_type=event.get("exception_type"),
            message=event.get("message"), feedback=event.get("feedback"),
            duration_s=event.get("duration_s"))
        collected.current_test = None
    elif kind == "done":
        collected.done = True


def execute(code: str, tests: list[str] | tuple[str, ...], *, setup: str = "",
            entry_point: str | None = None, limits: SandboxLimits | None = None,
            slot: int | None = 0) -> ExecutionResult:
    """Run ``code`` and then each test in ``tests`` in one confined child process.

    Parameters
    ----------
    code : the candidate program.
    tests : self-contained test snippets, run in order in a namespace holding the candidate's names.
    setup : code run in the test namespace before the tests (MBPP's ``test_setup_code``).
    entry_point : the function under test (always visible to tests, even if it shadows a builtin).
    limits : resource limits; defaults to ``SandboxLimits()``.
    slot : worker slot; selects the unprivileged uid when running as root. Concurrent executions
        must use distinct slots.
    """
    limits = limits or SandboxLimits()
    tests = list(tests)
    uid = _sandbox_uid(slot, limits)
    workdir = tempfile.mkdtemp(prefix="sotacheck-sandbox-")
    if uid is not None:
        os.chown(workdir, uid, uid)
    nonce = secrets.token_hex(16)
    job = {"code": code, "tests": tests, "setup": setup, "entry_point": entry_point, "nonce": nonce,
           "workdir": workdir, "uid": uid, "isolate_network": limits.isolate_network,
           "limits": limits.as_dict()}
    read_fd, write_fd = os.pipe()
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", str(CHILD_SCRIPT), str(write_fd)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            pass_fds=(write_fd,), start_new_session=True, cwd=workdir,
        )
    except OSError as exc:
        os.close(read_fd)
        os.close(write_fd)
        shutil.rmtree(workdir, ignore_errors=True)
        return ExecutionResult("error", exception_type=type(exc).__name__,
                               message=f"could not start the sandbox: {exc}")
    os.close(write_fd)
    try:
        return _supervise(proc, read_fd, job, tests, limits, uid, started)
    finally:
        os.close(read_fd)
        shutil.rmtree(workdir, ignore_errors=True)


def _supervise(proc: subprocess.Popen[bytes], read_fd: int, job: dict[str, Any], tests: list[str],
               limits: SandboxLimits, uid: int | None, started: float) -> ExecutionResult:
    assert proc.stdin is not None and proc.stdout is not None
    nonce = job["nonce"]
    try:
        proc.stdin.write(json.dumps(job).encode())
        proc.stdin.close()
    except BrokenPipeError:
        pass
    collected = _Collected(current_test=-1, test_started=time.monotonic())
    output = bytearray()
    output_total = 0
    buffer = b""
    kill_reason: tuple[Status, str] | None = None
    selector = selectors.DefaultSelector()
    selector.register(read_fd, selectors.EVENT_READ, "results")
    selector.register(proc.stdout, selectors.EVENT_READ, "output")
    open_streams = 2
    problem_deadline = started + limits.problem_timeout_s
    while open_streams and not collected.done:
        now = time.monotonic()
        test_deadline = (collected.test_started + limits.test_timeout_s
                         if collected.current_test is not None else problem_deadline)
        deadline = min(problem_deadline, test_deadline)
        if now >= deadline:
            which = ("loading the candidate" if collected.current_test == -1
                     else f"test {collected.current_test}" if collected.current_test is not None
                     else "the problem")
            limit = limits.problem_timeout_s if deadline == problem_deadline else limits.test_timeout_s
            kill_reason = ("timeout", f"{which} exceeded the {limit:g} s wall limit")
            break
        for key, _ in selector.select(timeout=deadline - now):
            chunk = os.read(key.fd, 65536)
            if not chunk:
                selector.unregister(key.fileobj)
                open_streams -= 1
                continue
            if key.data == "output":
                output_total += len(chunk)
                if len(output) < 8192:
                    output.extend(chunk[: 8192 - len(output)])
                if output_total > limits.max_output_bytes:
                    kill_reason = ("error", f"output exceeded {limits.max_output_bytes} bytes")
                continue
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if isinstance(event, dict) and event.get("nonce") == nonce:
                    _handle_event(event, collected)
        if kill_reason:
            break
    selector.close()
    _stop(proc, uid)
    return _result(proc, collected, tests, kill_reason, started, output.decode(errors="replace"))


def _result(proc: subprocess.Popen[bytes], collected: _Collected, tests: list[str],
            kill_reason: tuple[Status, str] | None, started: float, output: str) -> ExecutionResult:
    duration = time.monotonic() - started
    results = [collected.tests[i] for i in sorted(collected.tests)]
    tail = output[-2000:]
    if collected.load_status not in (None, "ok"):
        err = collected.load_error
        return ExecutionResult(err["status"], tuple(results), err.get("exception_type"),
                               err.get("message"), err.get("feedback"), duration, tail)
    if kill_reason is not None:
        status, message = kill_reason
        if collected.current_test is not None and collected.current_test >= 0:
            results.append(TestResult(collected.current_test, status, None, message))
        exc_type = "Timeout" if status == "timeout" else "OutputLimitExceeded"
        return ExecutionResult(status, tuple(results), exc_type, message, None, duration, tail)
    if collected.done:
        status = combined_status([t.status for t in results], len(tests))
        first = next((t for t in results if t.status != "passed"), None)
        return ExecutionResult(status, tuple(results), first.exception_type if first else None,
                               first.message if first else None, first.feedback if first else None,
                               duration, tail)
    # The child ended without saying it was done: a signal, os._exit, or a closed result pipe.
    code = proc.returncode
    if code is not None and code < 0:
        signame = signal.Signals(-code).name
        if -code == signal.SIGXCPU:
            return ExecutionResult("timeout", tuple(results), "CPUTimeExceeded",
                                   f"killed by {signame} (CPU time limit)", None, duration, tail)
        return ExecutionResult("crashed", tuple(results), signame, f"killed by signal {signame}",
                               None, duration, tail)
    return ExecutionResult("error", tuple(results), "NoReport",
                           f"the child exited with code {code} before reporting all tests",
                           None, duration, tail)
