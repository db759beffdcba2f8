"""The tests' namespace, and the watchdog that keeps the deadline while the tests run (standard library only;
see ``_tester``).

The tests see what the benchmark's own harness gives them of the program, and nothing else of the
candidate's: the entry point, the problem's interface (``names`` in the job: MBPP/601's ``Pair``) and the
prompt's own imports and helpers, run here (trusted code). A standard-library module a test reads without
importing it (MBPP/596's ``sys``) is this process's own module, never one the candidate named.
"""

from __future__ import annotations

import builtins
import ctypes
import functools
import importlib
import linecache
import signal
import sys
import time
from collections.abc import Callable
from typing import Any

from _strict import COMPILE_ERRORS, TEST_FILE
from _testcache import CompiledTests, stdlib_names

_SIDE_EFFECT_MODULES = frozenset({"antigravity", "this", "idlelib", "tkinter", "turtle", "turtledemo"})
_TEST_BUILTINS = dict(builtins.__dict__)


def test_namespace(names: list[Any], job: dict[str, Any], is_module: Callable[[Any], bool],
                   tests: CompiledTests) -> dict[str, Any]:
    """The namespace the tests run in, from the names the candidate process sent (see the module docstring);
    ``tests`` are the job's tests, compiled, with the standard-library names they read and bind."""
    test_ns: dict[str, Any] = {"__name__": "__test__", "__builtins__": _TEST_BUILTINS}
    entry_point = job.get("entry_point")
    for name, value in names:
        if name == entry_point or (not name.startswith("__") and name not in _TEST_BUILTINS and not is_module(value)):
            test_ns[name] = value
    for name in _stdlib_names_read(tests, job.get("setup") or ""):
        if name not in test_ns:
            module = _stdlib_module(name)
            if module is not None:
                test_ns[name] = module
    if job.get("helpers"):
        try:  # the prompt's own helpers, which the tests call, are trusted code: they run here
            exec(_compiled_helpers(job["helpers"]), test_ns)
        except Exception:
            pass  # a prompt whose helpers do not run alone: the tests see the program's versions
    return test_ns


def _stdlib_module(name: str) -> Any:
    """This process's own standard-library module ``name`` (imported if need be), or None."""
    if name not in sys.stdlib_module_names or name in _SIDE_EFFECT_MODULES or name.startswith("_"):
        return None
    module = sys.modules.get(name)
    if module is None:
        try:
            module = importlib.import_module(name)
        except Exception:
            return None
    return module


def _stdlib_names_read(tests: CompiledTests, setup: str) -> tuple[str, ...]:
    """The standard-library module names the tests and the setup code read without binding them."""
    if not setup:
        return tuple(name for name in tests.stdlib_read if name not in tests.stdlib_bound)
    setup_read, setup_bound = _setup_names(setup)
    bound = {*tests.stdlib_bound, *setup_bound}
    return tuple(sorted(name for name in {*tests.stdlib_read, *setup_read} if name not in bound))


@functools.lru_cache(maxsize=256)
def _setup_names(setup: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    try:
        code = compile(setup, f"{TEST_FILE}[setup]", "exec")
    except COMPILE_ERRORS:
        return (), ()
    return stdlib_names([code])


@functools.lru_cache(maxsize=256)
def _compiled_helpers(source: str) -> Any:
    filename = f"{TEST_FILE}[helpers]"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return compile(source, filename, "exec")


# The deadline also holds inside the test code that runs here (a test that loops over what the candidate
# returned, or keeps going after catching the end of the execution): between ``watch`` and ``unwatch`` a
# timer checks it every 50 ms and, past it, raises ``Abort`` once (and again while test code still runs).
_WATCH_INTERVAL_S = 0.05
_WATCHED: list[Any] = [None]
IN_TEST = [False]


def _watchdog(signum: int, frame: Any) -> None:
    session = _WATCHED[0]
    if session is not None and (session.open or IN_TEST[0]):
        now = time.monotonic()
        if now >= min(session.problem_deadline, session.test_deadline):
            raise session._deadline_passed(now)


def watch(session: Any) -> None:
    IN_TEST[0] = False
    _WATCHED[0] = session
    signal.setitimer(signal.ITIMER_REAL, _WATCH_INTERVAL_S, _WATCH_INTERVAL_S)


def unwatch() -> None:
    _WATCHED[0] = None
    IN_TEST[0] = False
    signal.setitimer(signal.ITIMER_REAL, 0, 0)


signal.signal(signal.SIGALRM, _watchdog)


class Backstop:
    """The deadline's last line: a POSIX timer (``CLOCK_MONOTONIC``, the clock of ``time.monotonic``) whose
    signal, ``SIGUSR2`` left at its default action, ends this process ``GRACE_S`` after an execution's
    deadline, whatever it is doing. The watchdog above raises only between bytecodes; a loop inside C over a
    candidate's value (test code taking ``set()`` of a million hash-colliding numbers, sorting them) never
    returns to it. The judge reads the supervisor's death by ``SIGUSR2`` as that execution's ``timeout`` and
    starts a new supervisor (``reruns/sandbox/supervisor.py``). Where ``timer_create`` is missing, nothing
    is armed."""

    SIGNAL = signal.SIGUSR2
    GRACE_S = 1.0
    _CLOCK_MONOTONIC, _TIMER_ABSTIME, _SIGEV_SIGNAL = 1, 1, 0

    def __init__(self) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        event = (ctypes.c_int * 16)()  # struct sigevent (64 bytes): sigev_value, sigev_signo, sigev_notify, ...
        event[2], event[3] = self.SIGNAL, self._SIGEV_SIGNAL
        self._timer = ctypes.c_void_p()
        self._spec = (ctypes.c_long * 4)()  # struct itimerspec: it_interval, it_value (seconds, nanoseconds)
        create = getattr(libc, "timer_create", None)
        self._settime = getattr(libc, "timer_settime", None)
        if create is None or create(self._CLOCK_MONOTONIC, ctypes.byref(event), ctypes.byref(self._timer)) != 0:
            self._settime = None

    def arm(self, deadline: float) -> None:
        """End this process at ``deadline`` (``time.monotonic`` seconds) plus ``GRACE_S``, unless re-armed."""
        if self._settime is not None:
            at = deadline + self.GRACE_S
            self._spec[2], self._spec[3] = int(at), int((at - int(at)) * 1e9)
            self._settime(self._timer, self._TIMER_ABSTIME, self._spec, None)

    def disarm(self) -> None:
        if self._settime is not None:
            self._spec[2] = self._spec[3] = 0
            self._settime(self._timer, 0, self._spec, None)


BACKSTOP = Backstop()
