"""The unittest runner: a warm parent that forks one child per task (standard library only).

Started by the judge (``reruns/sandbox/unittest_judge.py``) with the BigCodeBench environment's interpreter as
``python -I _unittest_runner.py [--preload MODULE ...]``. It imports the heavy libraries once, then reads jobs
(one JSON line each: the program, the test module's source, the test methods the *judge* enumerated from that
source, the task's time limit) and answers one JSON line per job. This parent never runs a line of the program.

**Per task, a fresh child forked from this parent** (so a task costs its tests, not ``import pandas``; nothing
one task leaves — figures, files, environment variables, seeds, patched modules — reaches the next, and each
child draws fresh random numbers (numpy's global generator is reseeded: a fork would repeat the parent's); the task's
test methods share the child, as they share one process in BigCodeBench's own evaluator):

1. the child puts itself in a session of its own, a fresh working and temporary directory, stdin/stdout/stderr on
   ``/dev/null`` and every other descriptor closed but two pipes: the *report* pipe and the *nonce* pipe;
2. it installs the **seal** (``_unittest_seal.py``), two audit hooks that can never be removed, and runs the rest on
   a thread of its own (the program cannot install a signal handler there). The reporting hook alone reads the
   nonce (16 random bytes the parent writes after the fork, so they were never in any memory the child copied)
   and alone holds it; it writes one report per test method, ``nonce pid index verdict``, in order, only when asked
   from the runner's own frame (``_unittest_seal.run_tests``'s), never from a frame the program made, with no
   program code running while it does. The other hook
   refuses what would let the program reach the hook or rewrite a frame: trace and profile functions, further
   audit hooks, ``gc``'s object walks, ``ctypes`` reads of raw memory and symbols of the interpreter,
   ``/proc/*/mem``, replacing a function's code or the defaults of the judge's own functions (they hold every
   name they read once the program runs, so rebinding the seal's globals through a frame changes nothing);
3. it runs the program and then the test module in one module ``__test__`` (BigCodeBench's own order and
   namespace, so ``@patch(__name__ + '.randint')`` works), after putting back the standard ``unittest`` modules
   in ``sys.modules`` if the program swapped them;
4. it runs each test method itself, in the loader's order: ``setUp``, the method, ``tearDown``, the cleanups. No
   ``TestLoader``, ``TestSuite``, ``TestResult`` or ``TestCase.run`` is involved, so patching them changes
   nothing. A skip, an expected-failure marker, ``SystemExit``, ``KeyboardInterrupt``, any exception: failed;
5. before and after each method it compares the test machinery (``builtins``, every ``unittest`` module,
   ``numpy.testing`` and ``pandas.testing``, every class in them and the test's own classes) with what it was
   in this parent, and the names the test module uses in the libraries it imports (``_unittest_libraries.py``)
   with what they were before the program ran: a changed binding is ``tampered``, failed; after the program loads
   and as soon as each method returns, the classes the program made (``_unittest_classes.py``): one whose code of
   the program's own decides a comparison (``__eq__``, ``equals``) fails the test.

The parent's verdict for a test: ``passed`` only when its report carries the nonce, the pid of the child this
parent forked and the test's index in order, and says passed; for the last test, *and* the child then exited
with status 0. When the child ends before it has reported every test (a signal, an exit of the program's own, a
damaged or forged record, the time limit), the test it was running gets that ending as its verdict (failed,
crashed or timeout, with the reason) and the tests after it run in a fresh child, so each test still gets its
own verdict. The judge checks that one verdict came back for every test method it asked for. After each child
the parent kills every process it left (it is a child subreaper: whatever the program started, even in a new
session, ends up its child) and removes the directory.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from typing import Any

# ``-I`` leaves the script's folder off the path: the sibling below is found here (the child README's rule)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _unittest_classes
import _unittest_jail
import _unittest_libraries
import _unittest_seal
from _procs import OWN_KEYRINGS, clear_keyrings_of, keys_of, lock_own_keyrings, lock_session_keyring
from _unittest_reports import Reports, read_reports, read_setup, verdict_of_ending

NONCE_BYTES = _unittest_seal.NONCE_BYTES
_PR_SET_CHILD_SUBREAPER, _PR_SET_DUMPABLE = 36, 4
_CLONE_NEWNET, _SIOCSIFFLAGS, _IFF_UP_LOOPBACK_RUNNING = 0x40000000, 0x8914, 0x1 | 0x8 | 0x40
_LIBC = ctypes.CDLL(None, use_errno=True)
_MACHINERY: _unittest_seal.Watched | None = None
_PRISTINE: tuple[tuple[str, Any, type], ...] = ()  # every module this process loaded, and its type
_PR_SET_PDEATHSIG = 1
_ROOTS = _unittest_classes.library_roots()  # the libraries' folders: a class's code from there is a library's
_JAIL: _unittest_jail.Plan | None = None  # as root: each task's process in a root of its own, as _UID
_UID: int | None = None
_JAIL_MB = 2048  # the task's writable root (a tmpfs) holds at most this much
_MAX_PROCESSES = 512  # processes (threads included) of the sandbox uid at once: a fork bomb stops there
# What BigCodeBench's reliability_guard sets for every execution (bigcodebench/eval/utils.py).
_ENVIRONMENT = {"TZ": "UTC", "OMP_NUM_THREADS": "1", "TF_CPP_MIN_LOG_LEVEL": "3", "TF_ENABLE_ONEDNN_OPTS": "0",
                "MPLBACKEND": "Agg"}


def _limit(resource_module: Any, which: int, value: int) -> None:
    try:
        resource_module.setrlimit(which, (value, value))
    except (ValueError, OSError):
        pass


def _fresh_random_state() -> None:
    """Give the task fresh entropy, as a new interpreter would have. ``random`` reseeds itself in a forked child;
    the global generators of the libraries this parent preloaded (numpy's, torch's) do not, so every child would
    replay the parent's draws: a program whose result is random would get the same verdict however often it is
    judged (``judge --repeat`` could not see that its tests are flaky), and every sample of a task the same draws."""
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is not None:
        numpy_random.seed()  # no argument: from the operating system's entropy
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "seed"):
        torch.seed()


def _child(job: dict[str, Any], first: int, workdir: str | None, pipes: tuple[int, int, int]) -> None:
    """Set up the forked child (step 1: in the jail where there is one) and run the tests."""
    import resource

    report_fd, nonce_fd, setup_fd = pipes
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    keep = sorted({0, 1, 2, *pipes})
    for low, high in zip([-1, *keep], [*keep, 65536], strict=True):
        if low + 1 < high:  # closerange(n, n) would close every descriptor (close_range(n, n - 1))
            os.closerange(low + 1, high)
    # the tasks that run `python` (a script, a subprocess) get this environment's, as in BigCodeBench's image
    os.environ["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", os.defpath)])
    try:
        if _JAIL is not None and _UID is not None:
            os.environ["HOME"] = _unittest_jail.HOME
            workdir = _unittest_jail.enter(_JAIL, _UID, min(int(job["limits"]["memory_mb"]), _JAIL_MB))
            lock_own_keyrings()  # view-only: the runner empties any other key the task kept, after it
        else:
            assert workdir is not None
            os.chdir(workdir)
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # after the uid change, which clears it
        # the libraries the tests import that this parent had not loaded: imported here, in the task's root, as the
        # test module would import them, and tracked with the parent's (_unittest_libraries.py)
        missing = [name for name in job["libraries"] if name not in job["_catalogued"]]
        job["_tracked"] = _unittest_libraries.joined(job["_tracked"], _unittest_libraries.track(
            _unittest_libraries.catalogue(missing, True), frozenset(job["names"])))
        job["_classes"] = _unittest_classes.snapshot()  # what is alive before the program: none of its making
    except BaseException as exc:  # no line of the program has run: the judge's failure, said on the setup pipe
        os.write(setup_fd, f"0{type(exc).__name__}: {exc}"[:1000].encode(errors="replace"))
        os._exit(73)
    os.write(setup_fd, b"1")
    os.close(setup_fd)
    os.environ["TMPDIR"] = workdir
    tempfile.tempdir = None
    _fresh_random_state()
    _LIBC.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    limits = job["limits"]
    _limit(resource, resource.RLIMIT_AS, limits["memory_mb"] * 1024 * 1024)
    _limit(resource, resource.RLIMIT_DATA, limits["memory_mb"] * 1024 * 1024)
    _limit(resource, resource.RLIMIT_STACK, limits["stack_mb"] * 1024 * 1024)
    _limit(resource, resource.RLIMIT_CORE, 0)
    _limit(resource, resource.RLIMIT_MSGQUEUE, 0)  # no POSIX message queue outlives the task
    if _UID is not None and _JAIL is not None:  # the uid is the task's alone: this bounds the task's processes
        _limit(resource, resource.RLIMIT_NPROC, _MAX_PROCESSES)
    _limit(resource, resource.RLIMIT_CPU, int(limits["task_timeout_s"]) + 2)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _unittest_seal.run_in_a_thread(job, first, report_fd, nonce_fd, limits["stack_mb"] * 1024 * 1024)


def _kill_children() -> None:
    """Kill and reap every child of this process (as a subreaper, every process the tests left) until none is
    left."""
    me = str(os.getpid())
    while True:
        try:
            os.waitpid(-1, os.WNOHANG)  # reaps one that ended; raises when there is no child at all
        except ChildProcessError:
            return
        found = False
        try:
            entries = os.listdir("/proc")
        except OSError:
            entries = []
        for entry in entries:
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    fields = handle.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if fields[1].decode() == me:
                found = True
                try:
                    os.kill(int(entry), signal.SIGKILL)
                except OSError:
                    pass
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
        if not found:
            return
        time.sleep(0.005)


def run_process(job: dict[str, Any], first: int, deadline: float) -> list[dict[str, Any]]:
    """The test methods from ``first`` on in one fresh child; the verdicts of those it got to (at least one), each
    this process's (module docstring)."""
    # no "-" in the name: a task splits paths on it (BigCodeBench/1127); in the jail, made inside the task's root
    workdir = None if _JAIL is not None else tempfile.mkdtemp(prefix="sotacheck")
    report_r, report_w = os.pipe()
    nonce_r, nonce_w = os.pipe()
    setup_r, setup_w = os.pipe()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(report_r)
            os.close(nonce_w)
            os.close(setup_r)
            _child(job, first, workdir, (report_w, nonce_r, setup_w))
        finally:
            os._exit(70)
    os.close(report_w)
    os.close(nonce_r)
    os.close(setup_w)
    setup = read_setup(setup_r, deadline)
    nonce = os.urandom(NONCE_BYTES)
    try:
        os.write(nonce_w, nonce)
    except OSError:
        pass
    os.close(nonce_w)
    reports = Reports(nonce, pid, first, len(job["methods"]), started)
    in_time = read_reports(report_r, pid, reports, deadline)
    os.close(report_r)
    if not in_time or reports.damaged:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    _, status = os.waitpid(pid, 0)
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    _kill_children()
    if _UID is not None and _JAIL is not None and keys_of(_UID) > OWN_KEYRINGS:
        clear_keyrings_of(_UID)  # a key the task kept in the uid's own keyrings (a persistent one) is gone
    if workdir is not None:
        shutil.rmtree(workdir, ignore_errors=True)
    if setup != b"1":  # the child could not be set up: no test ran, the judge failed
        why = setup[1:].decode(errors="replace") or "it ended before it was set up"
        return [{"status": "error", "exception_type": "SandboxFailure",
                 "message": f"the test process could not be set up: {why}"}] * (len(job["methods"]) - first)
    verdicts = reports.verdicts
    ending = verdict_of_ending(in_time, reports.damaged, status)
    if reports.next < len(job["methods"]):  # the method it was running when it ended: how it ended
        if ending["status"] == "passed":
            ending = {"status": "failed", "exception_type": "NoReport",
                      "message": "the test process exited with status 0 without the runner's report"}
        verdicts.append(ending | {"duration_s": round(time.monotonic() - reports.last, 4)})
    elif ending["status"] != "passed" and verdicts[-1]["status"] == "passed":  # ended badly after its last report
        verdicts[-1] = ending | {"message": f"{ending['message']} after its report",
                                 "duration_s": verdicts[-1]["duration_s"]}
    return verdicts


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    """Every test method of a job, in order, within the task's time limit: all in one process, and where that
    process ends before reporting them all, the rest in a fresh one."""
    job["_modules"] = _PRISTINE  # every module this process loaded: a program's replacement is put back
    global _MACHINERY
    if _MACHINERY is None:  # this process never runs a program: its machinery is the same for every job
        _MACHINERY = _unittest_seal.machinery()
    job["_machinery"] = _MACHINERY
    job["_roots"] = _ROOTS
    # the libraries this process loaded, tracked here once for every child (a lazy name the tests use is loaded here,
    # once, not in every child); the test process tracks the others
    loaded = _unittest_libraries.catalogue(job["libraries"])
    job["_catalogued"], job["_tracked"] = frozenset(loaded), _unittest_libraries.track(loaded, frozenset(job["names"]))
    deadline = time.monotonic() + float(job["limits"]["task_timeout_s"])
    methods = job["methods"]
    verdicts: list[dict[str, Any]] = []
    while len(verdicts) < len(methods):
        if time.monotonic() >= deadline:
            verdicts.append({"status": "timeout", "message": "not run: the task's time limit ran out"})
            continue
        verdicts.extend(run_process(job, len(verdicts), deadline))
    return {"results": [{"method": name, **verdict} for name, verdict in zip(methods, verdicts, strict=True)]}


def isolate_network() -> bool:
    """Put this process (and every test it forks) in a network namespace of its own, with only a loopback interface
    (up: some tasks serve and connect on localhost), when the kernel lets it (root): a task that reaches for the
    network fails at once instead of waiting for its time limit, and no program reaches the machine's network."""
    if _LIBC.unshare(_CLONE_NEWNET) != 0:
        return False
    import fcntl
    import socket
    import struct

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as handle:
        fcntl.ioctl(handle, _SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", _IFF_UP_LOOPBACK_RUNNING))
    return True


def main(argv: list[str]) -> None:
    global _JAIL, _UID
    if "--isolate-network" in argv:
        isolate_network()
    if "--uid" in argv:  # as root: every task jailed (``_unittest_jail``), as this uid
        _UID = int(argv[argv.index("--uid") + 1])
        _JAIL = _unittest_jail.prepare()
        if _JAIL is not None:
            lock_session_keyring()  # inherited by every task: none can keep a key in it
    os.environ.update(_ENVIRONMENT)
    time.tzset()
    _LIBC.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    _LIBC.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    preload = [argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == "--preload"]
    import unittest
    import unittest.mock

    unittest.mock.mock_open()  # sets unittest.mock's lazily made globals now, before any snapshot of them
    for name in preload:
        try:
            __import__(name)
        except BaseException:
            continue
    if "matplotlib" in sys.modules:
        try:
            import matplotlib.pyplot  # noqa: F401 - warm; the Agg backend from MPLBACKEND
        except BaseException:
            pass
    del unittest
    global _PRISTINE
    _PRISTINE = tuple((name, module, type(module)) for name, module in sys.modules.items() if name != "__main__")
    out = sys.stdout.buffer
    out.write(b'{"ready": true}\n')
    out.flush()
    for line in sys.stdin.buffer:
        try:
            reply = run_job(json.loads(line))
        except Exception as exc:
            reply = {"runner_error": f"{type(exc).__name__}: {exc}"[:2000]}
        out.write(json.dumps(reply).encode() + b"\n")
        out.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
