"""The sandbox supervisor ("zygote"): a long-lived trusted process that runs the tests of each execution
and has a candidate process forked for it.

Runs as ``python -I -S child/_zygote.py [--isolate-network] [--path DIR ...] [--test-cache DIR]``; reads one
job (a JSON line) at a time on stdin and answers one JSON line on stdout. At its start, before it reads
any job, it forks the candidate launcher (``_jail.py``), which forks one candidate process per job: a
forked interpreter that has already imported everything costs about a millisecond, where starting a
fresh one costs tens, and a launcher forked before any test was read has none in its memory. For each
job the supervisor hands the launcher a fresh channel and output pipe, sends the candidate's program
on the channel, runs the tests itself (``_tester.py``: it never executes candidate code), enforces the
wall limits and the output cap, then has the launcher end the candidate process and all it started.
With ``--cpu N`` it (and so the launcher and every candidate process) runs on CPU N: an execution is a
ping-pong between two processes, much cheaper on one CPU. Standard library only.
"""

from __future__ import annotations

import _socket
import ctypes
import gc
import json
import marshal
import os
import select
import signal
import site  # with -S, importing site changes nothing by itself
import sys
import time
from typing import TYPE_CHECKING, Any

# This folder (``child/``, its README.md): the siblings below are imported as top-level modules.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# Started with -S (no site processing: ~13 ms less per start); the site-packages directories come from
# the judge instead, so candidate code can import what is installed there (but not what .pth files add).
sys.path.extend(value for flag, value in zip(sys.argv, sys.argv[1:], strict=False) if flag == "--path")

import _candidate
import _jail
from _strict import safe_text

if TYPE_CHECKING:  # imported by ``serve`` once the launcher is forked: the candidate processes have neither
    import _tester
    from _testcache import TestCache

SITE_DIRS = [value for flag, value in zip(sys.argv, sys.argv[1:], strict=False) if flag == "--path"]

# Modules that model-written solutions import most (``typing`` is imported already); loading them once
# here means a forked candidate finds them in ``sys.modules`` instead of paying for the import every time.
# Only light ones: everything imported before the launcher is forked is memory that every candidate
# process maps, copies (its page tables) at fork and unmaps at exit, about 0.1 ms per MB per execution;
# ``hashlib`` (OpenSSL), ``datetime``, ``random`` and ``statistics`` cost 1.3 MB, for the few programs that
# import them, which pay a few milliseconds instead.
PRELOADED = ("bisect", "collections", "copy", "decimal", "fractions", "functools", "heapq", "itertools", "math",
             "operator", "re", "string")
for _name in PRELOADED:
    __import__(_name)

# One empty network namespace for the supervisor and every process it forks, made once here (as root)
# instead of once per candidate (each unshare costs about half a millisecond).
NETWORK_ISOLATED = False
if "--isolate-network" in sys.argv and os.geteuid() == 0:
    NETWORK_ISOLATED = _candidate.UNSHARE(_candidate.CLONE_NEWNET) == 0

PR_SET_DUMPABLE = 4
LAUNCHER_REPLY_S = 10.0
TESTS: TestCache | None = None  # made by ``serve``, after the launcher is forked


class LauncherFailed(Exception):
    """The candidate launcher died or stopped answering: this supervisor must be replaced."""


class _Launcher:
    """The supervisor's end of the launcher's control socket."""

    def __init__(self) -> None:
        ours, theirs = _jail.socketpair(_socket.SOCK_SEQPACKET)
        pid = os.fork()
        if pid == 0:
            try:
                ours.close()
                devnull = os.open(os.devnull, os.O_RDWR)
                os.dup2(devnull, 0)  # the supervisor's job pipe and reply pipe are not the launcher's
                os.dup2(devnull, 1)
                _jail.serve(theirs, SITE_DIRS)
            finally:
                os._exit(1)
        theirs.close()
        self.socket, self.pid = ours, pid
        self._buffer = memoryview(bytearray(1 << 16))  # the launcher's messages are read into it
        hello, _ = self._reply()
        self.jail, self.hidden = bool(hello["jail"]), list(hello["hidden"])

    def _reply(self) -> tuple[dict[str, Any], list[int]]:
        ready, _, _ = select.select([self.socket], [], [], LAUNCHER_REPLY_S)
        message, fds = _jail.recv_fds(self.socket, self._buffer, 2) if ready else (b"", [])
        if not message:
            raise LauncherFailed("the candidate launcher stopped answering")
        reply: dict[str, Any] = marshal.loads(message)
        return reply, fds

    def spare(self) -> tuple[int, int]:
        """The channel and output pipe of the candidate process forked for the next execution."""
        _, fds = self._reply()
        if len(fds) != 2:
            raise LauncherFailed("the candidate launcher could not fork a candidate process")
        return fds[0], fds[1]

    def _command(self, command: dict[str, Any]) -> None:
        try:
            self.socket.sendall(marshal.dumps(command))
        except OSError as exc:
            raise LauncherFailed(f"the candidate launcher is gone ({exc})") from None

    def watch(self) -> None:
        """Have the launcher report the candidate process's end (read with :meth:`exit_report`)."""
        self._command({"op": "watch"})

    def exit_report(self) -> dict[str, Any]:
        """The candidate process's end as the launcher observed it: ``exited`` (its wait status) and ``cpu_s``."""
        report = self._reply()[0]
        if "exited" not in report:
            raise LauncherFailed("the candidate launcher answered out of turn")
        return report

    def stop(self, uid: int | None, grace: bool, tmp_bytes: int) -> tuple[int | None, bool]:
        """End the candidate process and all it started: its wait status, and whether it had ended by itself."""
        self._command({"op": "stop", "uid": uid, "grace": grace, "tmp_bytes": tmp_bytes})
        reply = self._reply()[0]
        while "status" not in reply:  # an exit report sent as the stop crossed it
            reply = self._reply()[0]
        return (None if reply["status"] is None else int(reply["status"])), bool(reply.get("own"))


LAUNCHER: _Launcher | None = None  # started by ``serve``


def supervise(job: dict[str, Any]) -> dict[str, Any]:
    """Run one job: the tests here, the candidate in a process of its own; return what was observed (the
    judge builds the typed result). Whatever happens here, the candidate process is stopped and its
    descendants killed before the next job (``finally``); an exception of this side's own is the execution's
    ``error`` (``SandboxFailure``, naming the stage), never the next job's."""
    assert LAUNCHER is not None and TESTS is not None
    limits = job["limits"]
    uid = job.get("uid")
    started = time.monotonic()
    compiled = TESTS.compiled(tuple(job["tests"]), uid is not None)
    channel, output_r = LAUNCHER.spare()
    session = _tester.Session(channel, output_r, limits, started, LAUNCHER)
    job["isolate_network"] = job.get("isolate_network") and not NETWORK_ISOLATED
    events: list[dict[str, Any]] = []
    done, current = False, -1
    try:
        try:
            _tester.watch(session)
            events, done, current = _tester.run_tests(job, compiled, session)
        finally:
            _tester.unwatch()
    except _tester.Abort:
        pass  # it ended while loading (no test had started), at the deadline, or broke the protocol
    except LauncherFailed:
        raise
    except Exception as exc:  # this side's own failure: the program's error, with its cause
        session.trusted_side_failed(exc)
    finally:
        _tester.unwatch()  # again: the watchdog may have ended the first before it was done
        _tester.BACKSTOP.disarm()
        os.close(channel)  # the candidate process reads the end of its channel and exits
        session.open = False
        status, own = LAUNCHER.stop(uid, session.gone, max(int(limits["max_file_bytes"]), 1 << 20) * 2)
        try:
            session.drain_output()
        except _tester.Abort:
            pass
        os.close(output_r)
    if session.kill_reason is not None or session.gone:
        done = False
    ended = status if own else None  # the process's own end, not the launcher's kill
    return {
        "events": events, "done": done, "kill_reason": session.kill_reason,
        "current_test": current if not done else None,
        "signal": os.WTERMSIG(ended) if ended is not None and os.WIFSIGNALED(ended) else None,
        "exit_code": os.WEXITSTATUS(ended) if ended is not None and os.WIFEXITED(ended) else None,
        "duration_s": time.monotonic() - started,
        "output_tail": safe_text(session.output.decode(errors="replace")[-2000:]),
    }


def _option(flag: str) -> str | None:
    return next((value for name, value in zip(sys.argv, sys.argv[1:], strict=False) if name == flag), None)


def serve() -> None:
    global LAUNCHER, TESTS
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the judge decides when we stop
    cpu = _option("--cpu")
    if cpu is not None:  # inherited by the launcher and every candidate process (see supervisor.slot_cpu)
        try:
            os.sched_setaffinity(0, {int(cpu)})
        except OSError:
            pass
    # Inherited by every candidate process: with SIGXFSZ ignored, a write past the file-size limit raises
    # OSError instead of killing it.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    site.setquit()  # exit, quit, copyright, credits, license, help: the builtins site.main() would add
    site.setcopyright()
    site.sethelper()
    # Everything imported so far is shared with every process forked from here: keep the collector from
    # touching (and so copying) those pages in each of them.
    gc.freeze()
    LAUNCHER = _Launcher()  # forked now, before this process holds any test
    # From here on this process holds tests: no process of another uid may read its memory or trace it.
    ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    global _tester
    import _tester  # the test side (and, in ``_testcache``, the hash and the test compiler): the supervisor's alone
    from _testcache import TestCache

    TESTS = TestCache(_option("--test-cache"))
    jobs, replies = _private_streams()
    for line in jobs:
        if not line.strip():
            continue
        try:
            reply = supervise(json.loads(line))
        except LauncherFailed as exc:
            replies.write(json.dumps({"supervisor_error": str(exc)}) + "\n")
            replies.flush()
            os._exit(1)  # a new launcher may only be forked by a supervisor that holds no test
        except Exception as exc:  # a bug here must reach the judge as an error, not a hang
            reply = {"supervisor_error": safe_text(f"{type(exc).__name__}: {str(exc)[:500]}")}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


def _private_streams() -> tuple[Any, Any]:
    """The job and reply pipes on descriptors of their own, and /dev/null in their place: the tests run
    in this process, and a test that prints (or calls ``input()``) must not write into the replies or
    read the next job."""
    jobs = os.fdopen(os.dup(0), "r", encoding="utf-8")
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.close(devnull)
    return jobs, replies


if __name__ == "__main__":
    serve()
