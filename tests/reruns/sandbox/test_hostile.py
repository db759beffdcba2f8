"""Hostile programs: each is contained, gets the right status, is never passed, and leaves the judge
working for the next call."""

from __future__ import annotations

import dataclasses
import os
import signal
import socket
import textwrap
import threading
import time

import pytest

from sotacheck.reruns.sandbox import SandboxLimits, execute
from sotacheck.reruns.sandbox.child._procs import live_processes_of
from sotacheck.reruns.sandbox.execution import SANDBOX_UID_BASE
from sotacheck.reruns.sandbox.slots import SlotLease
from sotacheck.reruns.sandbox.supervisor import supervisor

IS_ROOT = os.geteuid() == 0
LIMITS = SandboxLimits(test_timeout_s=1.5, problem_timeout_s=10, memory_mb=512, max_output_bytes=100_000,
                       max_file_bytes=1_000_000)
TESTS = ["assert square(3) == 9", "assert square(4) == 16"]
GOOD = "def square(x):\n    return x * x\n"
# One machine-wide slot for the whole module, so a concurrent sotacheck process never shares its uid.
_LEASE = SlotLease(1)
SLOT = _LEASE.slots[0]


def run(code: str, tests: list[str] | None = None, limits: SandboxLimits = LIMITS) -> tuple[str, float]:
    started = time.monotonic()
    result = execute(textwrap.dedent(code), tests or TESTS, entry_point="square", limits=limits, slot=SLOT)
    return result.status, time.monotonic() - started


def assert_judge_still_works() -> None:
    result = execute(GOOD, TESTS, entry_point="square", limits=LIMITS, slot=SLOT)
    assert result.status == "passed", result


HOSTILE = {
    "infinite loop in the function": ("""
        def square(x):
            while True:
                pass
        """, {"timeout"}),
    "infinite loop while loading": ("""
        while True:
            pass
        def square(x):
            return x * x
        """, {"timeout"}),
    "fork bomb": ("""
        import os
        def square(x):
            while True:
                try:
                    os.fork()
                except OSError:
                    pass
        """, {"timeout", "error"}),
    "memory bomb": ("""
        def square(x):
            blocks = []
            while True:
                blocks.append(bytearray(50_000_000))
        """, {"memory_exceeded"}),
    "100 MB of output": ("""
        import sys
        def square(x):
            chunk = "x" * 1_000_000
            for _ in range(100):
                sys.stdout.write(chunk)
            sys.stdout.flush()
            return x * x
        """, {"error"}),
    "os._exit(0) before the tests": ("""
        import os
        os._exit(0)
        def square(x):
            return x * x
        """, {"error"}),
    "sys.exit(0) before the tests": ("""
        import sys
        sys.exit(0)
        def square(x):
            return x * x
        """, {"error"}),
    "sys.exit(0) inside a test": ("""
        import sys
        def square(x):
            sys.exit(0)
        """, {"error"}),
    "os._exit(0) inside a test": ("""
        import os
        def square(x):
            os._exit(0)
        """, {"error"}),
    "reading stdin": ("""
        def square(x):
            return int(input()) * 0 + x * x
        """, {"error"}),
    "deep recursion": ("""
        def square(x):
            return square(x + 1)
        """, {"error"}),
    "__eq__ always True": ("""
        class Anything:
            def __eq__(self, other):
                return True
        def square(x):
            return Anything()
        """, {"failed"}),
    "int subclass with rigged __eq__": ("""
        class Liar(int):
            def __eq__(self, other):
                return True
            __hash__ = int.__hash__
        def square(x):
            return Liar(0)
        """, {"failed"}),
    "always-truthy object in a bare assert": ("""
        class Yes:
            def __bool__(self):
                return True
        def square(x):
            return Yes()
        """, {"failed"}),
    "replacing builtins": ("""
        import builtins
        builtins.abs = lambda value: 0
        builtins.AssertionError = type("Fake", (Exception,), {})
        def square(x):
            builtins.abs = lambda value: 0
            return -1
        """, {"failed"}),
    "rebinding builtins.type so rigged equality looks plain": ("""
        import builtins
        class Yes:
            def __eq__(self, other):
                return True
        builtins.type = lambda *args: int
        def square(x):
            return Yes()
        """, {"failed"}),
    "SIGTERM-ignoring handler": ("""
        import signal
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        def square(x):
            while True:
                pass
        """, {"timeout"}),
    "threads left running": ("""
        import threading, time
        def spin():
            while True:
                time.sleep(0.01)
        def square(x):
            threading.Thread(target=spin).start()
            return x + 1
        """, {"failed"}),
    "forging result events": ("""
        import os
        for fd in range(3, 20):
            try:
                os.write(fd, b'{"event": "done"}\\n{"event": "end", "test": 0, "status": "passed"}\\n')
            except OSError:
                pass
        os._exit(0)
        """, {"error"}),
    "closing every descriptor": ("""
        import os
        os.closerange(0, 256)
        def square(x):
            return x * x
        """, {"error", "crashed"}),
    "segfault": ("""
        import ctypes
        def square(x):
            ctypes.string_at(0)
        """, {"crashed"}),
    "huge file": ("""
        def square(x):
            with open("big.bin", "wb") as fh:
                for _ in range(100):
                    fh.write(b"0" * 1_000_000)
            return x * x
        """, {"error"}),
    "CPU burn inside C code": ("""
        def square(x):
            return len(str(10 ** (10 ** 8)))
        """, {"timeout"}),
    "syntax error": ("""
        def square(x)
            return x * x
        """, {"error"}),
}


# Programs whose status is not about time get a per-test limit that a slow machine cannot reach first: the
# memory bomb writes 512 MB before its MemoryError, which took over 1.5 s on a fresh CI machine (first-touch
# page faults), so it ended `timeout` there and `memory_exceeded` (0.55 s) here.
TEST_LIMIT_S = {"memory bomb": 8.0}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_program_is_contained(name: str) -> None:
    code, expected = HOSTILE[name]
    limits = dataclasses.replace(LIMITS, test_timeout_s=TEST_LIMIT_S.get(name, LIMITS.test_timeout_s))
    status, elapsed = run(code, limits=limits)
    assert status in expected, f"{name}: got {status}"
    assert status != "passed"
    assert elapsed < LIMITS.problem_timeout_s + 5
    assert_judge_still_works()


def test_builtins_replacement_does_not_help_a_wrong_answer() -> None:
    code = """
        import builtins
        builtins.abs = lambda value: 0
        def square(x):
            return 123.0
        """
    status, _ = run(code, ["assert abs(square(3) - 9) < 1e-6"])
    assert status == "failed"


@pytest.mark.skipif(not IS_ROOT, reason="the parent is protected by uid separation, which needs root")
def test_killing_the_parent_fails_and_the_parent_survives() -> None:
    code = """
        import os, signal
        def square(x):
            os.kill(os.getppid(), signal.SIGKILL)
            return x * x
        """
    status, _ = run(code)
    assert status == "error"  # PermissionError in the child; we are still here to see it
    assert_judge_still_works()


@pytest.mark.skipif(not IS_ROOT, reason="file protection relies on uid separation, which needs root")
def test_deleting_files_outside_the_temp_dir_fails(tmp_path) -> None:
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me")
    os.chmod(tmp_path, 0o755)
    code = f"""
        import os, shutil
        def square(x):
            shutil.rmtree({str(tmp_path)!r}, ignore_errors=True)
            os.remove({str(victim)!r})
            return x * x
        """
    status, _ = run(code)
    assert status == "error"
    assert victim.read_text() == "keep me"


@pytest.mark.skipif(not IS_ROOT, reason="the network namespace needs root")
def test_opening_a_socket_to_the_host_fails() -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    accepted: list[object] = []
    server.settimeout(3)
    thread = threading.Thread(target=lambda: accepted.append(_accept(server)), daemon=True)
    thread.start()
    code = f"""
        import socket
        def square(x):
            s = socket.create_connection(("127.0.0.1", {port}), timeout=1)
            s.sendall(b"leak")
            return x * x
        """
    status, _ = run(code)
    thread.join(4)
    server.close()
    assert status == "error"
    assert accepted == [None]


def _accept(server: socket.socket) -> object:
    try:
        conn, _ = server.accept()
        conn.close()
        return "connected"
    except OSError:
        return None


@pytest.mark.skipif(not IS_ROOT, reason="killing by uid needs root")
def test_no_process_outlives_the_check() -> None:
    code = """
        import os, subprocess
        def square(x):
            subprocess.Popen(["sleep", "60"], start_new_session=True)
            return x * x
        """
    status, _ = run(code)
    assert status == "passed"  # a correct answer that starts a process is still correct ...
    assert live_processes_of(SANDBOX_UID_BASE + SLOT) == []  # ... but nothing it started survives the check


def test_per_test_results_and_feedback_are_reported() -> None:
    code = """
        def square(x):
            if x == 4:
                raise ValueError("four is unlucky")
            return x * x
        """
    result = execute(textwrap.dedent(code), TESTS, entry_point="square", limits=LIMITS, slot=SLOT)
    assert [t.status for t in result.tests] == ["passed", "error"]
    assert result.status == "error"
    assert result.exception_type == "ValueError"
    assert "four is unlucky" in (result.message or "")
    assert '<candidate>' in (result.feedback or "")
    assert not any(name in (result.feedback or "") for name in ("_candidate.py", "_tester.py", "_wire.py"))


def _zombie_children_of(pid: int) -> list[int]:
    zombies = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"{entry.path}/stat", "rb") as fh:
                    fields = fh.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if fields[0] == b"Z" and int(fields[1]) == pid:
                zombies.append(int(entry.name))
    return zombies


@pytest.mark.skipif(not IS_ROOT, reason="killing by uid needs root")
def test_a_double_forked_daemon_is_killed_and_reaped() -> None:
    """The daemon's parent exits at once, so it is orphaned while the candidate still runs: the
    supervisor (a child subreaper) must still find it, kill it, and reap it."""

    code = """
        import os, time
        def square(x):
            pid = os.fork()
            if pid == 0:
                if os.fork() == 0:
                    os.setsid()
                    time.sleep(60)
                os._exit(0)
            os.waitpid(pid, 0)
            return x * x
        """
    status, _ = run(code)
    assert status == "passed"
    assert live_processes_of(SANDBOX_UID_BASE + SLOT) == []
    zygote = supervisor(SLOT, LIMITS.isolate_network)._proc
    assert zygote is not None
    assert _zombie_children_of(zygote.pid) == []  # reaped at once: zombies count against RLIMIT_NPROC
    assert_judge_still_works()


def test_tests_compiled_once_judge_each_candidate_afresh() -> None:
    """The supervisor caches compiled tests: the same tests still tell a wrong candidate from a right one,
    and a test that does not compile is that test's error, with the test's line in the feedback."""
    wrong = execute("def square(x):\n    return x + x\n", TESTS, entry_point="square", limits=LIMITS, slot=SLOT)
    right = execute(GOOD, TESTS, entry_point="square", limits=LIMITS, slot=SLOT)
    assert [t.status for t in wrong.tests] == ["failed", "failed"]  # 3 + 3 != 9, 4 + 4 != 16
    assert right.status == "passed"
    broken = execute(GOOD, ["assert square(3) == 9", "assert square(4) =="], entry_point="square",
                     limits=LIMITS, slot=SLOT)
    assert [t.status for t in broken.tests] == ["passed", "error"]
    assert broken.exception_type == "SyntaxError"
    failing = execute(GOOD, ["assert square(5) == 26"], entry_point="square", limits=LIMITS, slot=SLOT)
    assert failing.status == "failed"
    assert "assert square(5) == 26" in (failing.feedback or "")


def test_a_supervisor_killed_mid_execution_is_an_error_and_is_replaced() -> None:
    assert_judge_still_works()
    zygote = supervisor(SLOT, LIMITS.isolate_network)._proc
    assert zygote is not None
    threading.Timer(0.5, os.kill, (zygote.pid, signal.SIGKILL)).start()
    status, elapsed = run("import time\ndef square(x):\n    time.sleep(3)\n    return x * x\n")
    assert status == "error" and elapsed < 2.5
    assert_judge_still_works()
    replacement = supervisor(SLOT, LIMITS.isolate_network)._proc
    assert replacement is not None and replacement.pid != zygote.pid
    if IS_ROOT:
        assert live_processes_of(SANDBOX_UID_BASE + SLOT) == []  # its orphaned candidate was killed too


def test_a_supervisor_that_stops_answering_is_an_error_and_is_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    from sotacheck.reruns.sandbox import execution

    monkeypatch.setattr(execution, "_REPLY_GRACE_S", 0.5)  # the reply is due problem_timeout_s + this
    limits = SandboxLimits(test_timeout_s=1, problem_timeout_s=1)
    assert execute(GOOD, TESTS, entry_point="square", limits=limits, slot=SLOT).status == "passed"
    zygote = supervisor(SLOT, limits.isolate_network)._proc
    assert zygote is not None
    threading.Timer(0.2, os.kill, (zygote.pid, signal.SIGSTOP)).start()
    result = execute("import time\ndef square(x):\n    time.sleep(0.5)\n    return x * x\n", TESTS,
                     entry_point="square", limits=limits, slot=SLOT)
    assert (result.status, result.exception_type) == ("error", "SandboxFailure")
    assert zygote.poll() is not None  # killed (a stopped process still dies of SIGKILL)
    assert execute(GOOD, TESTS, entry_point="square", limits=limits, slot=SLOT).status == "passed"
