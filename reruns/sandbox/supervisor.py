"""The sandbox supervisors: one long-lived ``child/_zygote.py`` process per worker slot, started on demand and
restarted whenever it dies or hangs.

Kept apart from ``execution.py``, with only light imports, so that the ``sotacheck`` launcher can lease the
slots and start the supervisors before the command line interface is even imported (see
:func:`warm_up`): a supervisor takes about 40 ms to start, which then overlaps the CLI's own start-up.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from sotacheck.reruns.sandbox.slots import SlotLease

# The child side's scripts are in ``child/`` (its README.md): the supervisor runs as that folder's script.
ZYGOTE_SCRIPT = Path(__file__).parent / "child" / "_zygote.py"


def default_workers() -> int:
    """Sandbox workers when none are asked for: one per CPU."""
    return max(1, os.cpu_count() or 1)


def test_cache_dir() -> str | None:
    """Where supervisors running as root keep compiled tests across runs (see ``child/_testcache.py``):
    ``$SOTACHECK_TEST_CACHE`` (empty: no disk cache), else ``$XDG_CACHE_HOME`` or ``~/.cache``, under
    ``sotacheck/compiled-tests``."""
    if "SOTACHECK_TEST_CACHE" in os.environ:
        return os.environ["SOTACHECK_TEST_CACHE"] or None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "sotacheck", "compiled-tests")


# The only variables of the judge's environment a supervisor (and so a candidate process) gets: none of
# its keys, tokens or data paths reach a candidate, not even through /proc/self/environ.
SUPERVISOR_ENVIRONMENT = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR")


def supervisor_environment() -> dict[str, str]:
    return {name: os.environ[name] for name in SUPERVISOR_ENVIRONMENT if name in os.environ}


def slot_cpu(slot: int) -> int:
    """The CPU a slot's supervisor, launcher and candidate processes run on: an execution is a ping-pong
    between the supervisor and the candidate process, which is several times cheaper on one CPU than
    across two (no cross-CPU wake-up, warm caches); slots take the allowed CPUs in turn."""
    cpus = sorted(os.sched_getaffinity(0))
    return cpus[slot % len(cpus)]


def _site_packages() -> list[str]:
    """This interpreter's site-packages directories: candidate code may import what is installed there."""
    import site

    return [directory for directory in site.getsitepackages() if os.path.isdir(directory)]


# The signal a supervisor's backstop ends it with, past an execution's deadline (``child/_namespace.Backstop``).
BACKSTOP_SIGNAL = signal.SIGUSR2
# How long a stopped supervisor's launcher may take to stop its candidate processes and exit.
LAUNCHER_EXIT_S = 5.0


class _Supervisor:
    """One zygote process for one worker slot; restarted whenever it dies or hangs."""

    def __init__(self, isolate_network: bool, slot: int = 0) -> None:
        self._slot = slot
        self._proc: subprocess.Popen[bytes] | None = None
        self._replies = select.poll()  # the running zygote's stdout, registered by ``ensure``
        self._isolate_network = isolate_network
        # Open in the supervisor and its launcher only (never in a candidate process): its end is theirs.
        self._lifeline: int | None = None
        self.failure = ""  # why the last request got no reply

    def ensure(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            if self._proc is not None:
                self.close()
            lifeline, held = os.pipe()
            self._lifeline = lifeline
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-S", str(ZYGOTE_SCRIPT), *(["--isolate-network"] if self._isolate_network else []),
                 *(arg for directory in _site_packages() for arg in ("--path", directory)),
                 *(["--test-cache", cache] if (cache := test_cache_dir()) else []), "--cpu", str(slot_cpu(self._slot))],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=supervisor_environment(),
                stderr=subprocess.DEVNULL, start_new_session=True, pass_fds=(held,))
            os.close(held)
            assert self._proc.stdout is not None
            self._replies = select.poll()
            self._replies.register(self._proc.stdout, select.POLLIN)
        return self._proc

    def request(self, job: dict[str, Any], timeout: float) -> dict[str, Any] | None:
        """Send a job and wait for its reply; None (and a restart next time) if the zygote fails, with the
        cause in :attr:`failure` (``deadline`` when its backstop ended it past the execution's deadline)."""
        self.failure = "it died or stopped answering"
        proc = self.ensure()
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write((json.dumps(job) + "\n").encode())
            proc.stdin.flush()
            if self._replies.poll(timeout * 1000):
                line = proc.stdout.readline()
                if line:
                    reply: dict[str, Any] = json.loads(line)
                    return reply
        except (OSError, ValueError):
            pass
        self.close()
        return None

    def close(self) -> None:
        """Stop the supervisor; its launcher then stops every candidate process and exits (it sees the
        supervisor's socket close), which the lifeline's end shows; a launcher still there after
        ``LAUNCHER_EXIT_S`` is killed with the supervisor's process group."""
        self.begin_close()
        self.finish_close()

    def begin_close(self) -> None:
        """The first half of :meth:`close`: the signal (several supervisors then end at once)."""
        if self._proc is not None:
            try:
                self._proc.kill()
            except OSError:
                pass

    def finish_close(self) -> None:
        """The second half of :meth:`close`: wait for the supervisor and its launcher."""
        if self._proc is not None:
            if self._proc.wait() == -BACKSTOP_SIGNAL:
                self.failure = "deadline"
            if self._lifeline is not None:
                if not select.select([self._lifeline], [], [], LAUNCHER_EXIT_S)[0]:
                    try:
                        os.killpg(self._proc.pid, signal.SIGKILL)
                    except OSError:
                        pass
                os.close(self._lifeline)
                self._lifeline = None
            for stream in (self._proc.stdin, self._proc.stdout):
                if stream is not None:
                    try:
                        stream.close()
                    except OSError:
                        pass
            self._proc = None


_SUPERVISORS: dict[tuple[int, bool], _Supervisor] = {}
_SUPERVISORS_LOCK = threading.Lock()
_WARM_LEASES: list[tuple[SlotLease, bool]] = []


def supervisor(slot: int, isolate_network: bool) -> _Supervisor:
    """The supervisor of ``slot`` (not started until it is first asked, or by :func:`start_supervisor`)."""
    with _SUPERVISORS_LOCK:
        key = (slot, isolate_network)
        if key not in _SUPERVISORS:
            _SUPERVISORS[key] = _Supervisor(isolate_network, slot)
        return _SUPERVISORS[key]


def start_supervisor(slot: int, isolate_network: bool) -> None:
    """Start a slot's supervisor now (it is otherwise started by the slot's first execution)."""
    supervisor(slot, isolate_network).ensure()


def warm_up(workers: int, isolate_network: bool) -> None:
    """Lease ``workers`` slots and start their supervisors now, for a pool created later in this process
    (:func:`take_warm_lease`); a lease nobody takes is released when the process exits."""
    lease = SlotLease(workers)
    for slot in lease.slots:
        start_supervisor(slot, isolate_network)
    with _SUPERVISORS_LOCK:
        _WARM_LEASES.append((lease, isolate_network))


def take_warm_lease(workers: int, isolate_network: bool) -> SlotLease | None:
    """A lease made by :func:`warm_up` for exactly this many workers, its supervisors already started."""
    with _SUPERVISORS_LOCK:
        for index, (lease, isolated) in enumerate(_WARM_LEASES):
            if len(lease.slots) == workers and isolated == isolate_network:
                return _WARM_LEASES.pop(index)[0]
    return None


@atexit.register
def shutdown_supervisors() -> None:
    with _SUPERVISORS_LOCK:
        for running in _SUPERVISORS.values():
            running.begin_close()  # all first: their launchers stop their candidate processes at the same time
        for running in _SUPERVISORS.values():
            running.finish_close()
        _SUPERVISORS.clear()
        for lease, _ in _WARM_LEASES:
            lease.release()
        _WARM_LEASES.clear()
