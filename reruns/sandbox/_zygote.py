"""The sandbox supervisor ("zygote"): a long-lived trusted process that forks one child per execution.

Runs as ``python -I -S _zygote.py [--isolate-network] [--path DIR ...]``; reads one job (a JSON line)
at a time on stdin and answers one JSON line on stdout. Forking an interpreter that has already
imported everything costs about a millisecond, where starting a fresh one costs tens. For each job it
makes a temporary working directory, forks the child (``_child.run_job``), enforces the wall timeouts
and the output cap while reading the child's events, then terminates and kills the child's process
group and every process of the sandbox uid, reaps the child and removes the directory. Standard
library only.
"""

from __future__ import annotations

import gc
import json
import os
import selectors
import shutil
import signal
import site  # with -S, importing site changes nothing by itself
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# Started with -S (no site processing: ~13 ms less per start); the site-packages directories come from
# the judge instead, so candidate code can import what is installed there (but not what .pth files add).
sys.path.extend(value for flag, value in zip(sys.argv, sys.argv[1:], strict=False) if flag == "--path")

import _child
from _procs import kill_uid
from _testcache import TestCache

# Modules that model-written solutions and benchmark tests import most; loading them once here means a
# forked child finds them already in ``sys.modules`` instead of paying for the import every time.
PRELOADED = ("bisect", "collections", "copy", "datetime", "decimal", "fractions", "functools", "hashlib",
             "heapq", "itertools", "math", "operator", "random", "re", "statistics", "string")
for _name in PRELOADED:
    __import__(_name)

# One empty network namespace for the supervisor and every child it forks, made once here (as root)
# instead of once per child (each unshare costs about half a millisecond).
NETWORK_ISOLATED = False
if "--isolate-network" in sys.argv and os.geteuid() == 0:
    NETWORK_ISOLATED = _child._LIBC.unshare(_child.CLONE_NEWNET) == 0

KILL_GRACE_S = 0.2
_DEVNULL = os.open(os.devnull, os.O_RDONLY)  # each child's stdin
PR_SET_CHILD_SUBREAPER = 36
IS_SUBREAPER = False  # set by ``serve``
# Larger candidates are compiled in the child, under its memory limit.
MAX_PRECOMPILED_CHARS = 200_000
TESTS = TestCache(None)  # replaced by ``serve`` (with the disk cache it was given)


def compiled_candidate(code: str) -> Any:
    """The candidate compiled here, before the fork, when it is of a reasonable size and compiles: the
    compiler's allocations would otherwise be copy-on-write page faults in the child. Nothing of the
    candidate runs here. None: the child compiles it (under its limits) and reports any error."""
    if len(code) > MAX_PRECOMPILED_CHARS:
        return None
    try:
        return compile(code, _child.CANDIDATE_FILE, "exec")
    except _child.COMPILE_ERRORS:
        return None


def _wait(pid: int, timeout: float) -> int | None:
    """The child's wait status once it has exited, or None after ``timeout`` seconds."""
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        return status
    if timeout > 0:
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:
            pidfd = None
        if pidfd is not None:
            with selectors.DefaultSelector() as selector:
                selector.register(pidfd, selectors.EVENT_READ)
                selector.select(timeout)
            os.close(pidfd)
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
    return None


def _stop(pid: int, uid: int | None) -> int:
    """Terminate the child's process group, then kill it; then every process of its uid. Returns the
    child's wait status."""
    status = _wait(pid, KILL_GRACE_S)  # after "done" the child exits by itself at once
    if status is None:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(pid, sig)
            except OSError:
                pass
            status = _wait(pid, KILL_GRACE_S if sig == signal.SIGTERM else 5.0)
            if status is not None:
                break
    try:
        os.killpg(pid, signal.SIGKILL)  # grandchildren still in the group
    except OSError:
        pass
    descendants_left = _descendants_left() if IS_SUBREAPER else True
    if descendants_left and uid is not None:
        kill_uid(uid)
        if IS_SUBREAPER:
            _descendants_left()  # reap them now: zombies still count against the uid's process limit
    return status if status is not None else 0


def _descendants_left() -> bool:
    """Whether any process descended from this supervisor is still alive, reaping those that ended.

    The supervisor is a child subreaper, so an orphaned descendant (a daemon the candidate double-forked,
    in another session) becomes our child instead of init's: no child left means no descendant left,
    and then the scan of /proc for the sandbox uid can be skipped.
    """
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == 0:
            return True


def _fork_child(job: dict[str, Any], workdir: str) -> tuple[int, int, int]:
    result_r, result_w = os.pipe()
    output_r, output_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        try:
            os.setsid()
            os.dup2(_DEVNULL, 0)
            os.dup2(output_w, 1)
            os.dup2(output_w, 2)
            keep = 100
            os.dup2(result_w, keep)
            os.closerange(3, keep)
            os.closerange(keep + 1, 4096)
            # sys.stdout and sys.stderr stay the supervisor's (flushed after every reply, so empty): they
            # now write to the output pipe, and the child flushes them before it reports "done".
            job["workdir"] = workdir
            _child.run_job(job, keep)
        finally:
            os._exit(1)
    os.close(result_w)
    os.close(output_w)
    return pid, result_r, output_r


def supervise(job: dict[str, Any]) -> dict[str, Any]:
    """Run one job in a forked child; return what was observed (the judge builds the typed result)."""
    limits = job["limits"]
    uid = job.get("uid")
    nonce = job["nonce"]
    if NETWORK_ISOLATED:
        job["isolate_network"] = False  # inherited from the supervisor already
    # Compiled here, before the fork (in a fresh child the compiler's allocations are page faults).
    job["compiled_tests"] = TESTS.compiled(tuple(job["tests"]), uid is not None)
    job["compiled_code"] = compiled_candidate(job["code"])
    workdir = tempfile.mkdtemp(prefix="sotacheck-sandbox-")
    if uid is not None:
        os.chown(workdir, uid, uid)
    started = time.monotonic()
    pid, result_r, output_r = _fork_child(job, workdir)
    events: list[dict[str, Any]] = []
    current: int | None = -1
    current_started = started
    output = bytearray()
    output_total = 0
    buffer = b""
    kill_reason: list[str] | None = None
    done = False
    selector = selectors.DefaultSelector()
    selector.register(result_r, selectors.EVENT_READ, "results")
    selector.register(output_r, selectors.EVENT_READ, "output")
    open_streams = 2
    problem_deadline = started + float(limits["problem_timeout_s"])
    while open_streams and not done and kill_reason is None:
        now = time.monotonic()
        test_deadline = (current_started + float(limits["test_timeout_s"]) if current is not None
                         else problem_deadline)
        deadline = min(problem_deadline, test_deadline)
        if now >= deadline:
            which = ("loading the candidate" if current == -1 else f"test {current}"
                     if current is not None else "the problem")
            limit = limits["problem_timeout_s"] if deadline == problem_deadline else limits["test_timeout_s"]
            kill_reason = ["timeout", f"{which} exceeded the {limit:g} s wall limit"]
            break
        for key, _ in selector.select(timeout=deadline - now):
            chunk = os.read(key.fd, 65536)
            if not chunk:
                selector.unregister(key.fd)
                open_streams -= 1
                continue
            if key.data == "output":
                output_total += len(chunk)
                if len(output) < 8192:
                    output.extend(chunk[: 8192 - len(output)])
                if output_total > int(limits["max_output_bytes"]):
                    kill_reason = ["error", f"output exceeded {limits['max_output_bytes']} bytes"]
                continue
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(event, dict) or event.pop("nonce", None) != nonce:
                    continue
                kind = event.get("event")
                if kind == "start":
                    current, current_started = int(event["test"]), time.monotonic()
                elif kind in ("loaded", "end"):
                    current = None
                    events.append(event)
                elif kind == "done":
                    done = True
    selector.close()
    status = _stop(pid, uid)
    os.close(result_r)
    os.close(output_r)
    try:
        os.rmdir(workdir)  # the usual case: the candidate left nothing behind
    except OSError:
        shutil.rmtree(workdir, ignore_errors=True)
    return {
        "events": events, "done": done, "kill_reason": kill_reason, "current_test": current,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "duration_s": time.monotonic() - started,
        "output_tail": output.decode(errors="replace")[-2000:],
    }


def _option(flag: str) -> str | None:
    return next((value for name, value in zip(sys.argv, sys.argv[1:], strict=False) if name == flag), None)


def serve() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the judge decides when we stop
    # Inherited by every child, where setting it costs a tenth of a millisecond: with SIGXFSZ ignored,
    # a write past the file-size limit raises OSError instead of killing the child.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    site.setquit()  # exit, quit, copyright, credits, license, help: the builtins site.main() would add
    site.setcopyright()
    site.sethelper()
    _child.freeze_builtins()
    # Everything imported so far is shared with every child: keep the collector from touching (and so
    # copying) those pages in each child.
    gc.freeze()
    global IS_SUBREAPER, TESTS
    IS_SUBREAPER = _child._PRCTL(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    TESTS = TestCache(_option("--test-cache"))
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            reply = supervise(json.loads(line))
        except Exception as exc:  # a bug here must reach the judge as an error, not a hang
            reply = {"supervisor_error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    serve()
