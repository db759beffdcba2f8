"""Admission of sandbox work by the cores it uses, not by the jobs in flight.

Many BigCodeBench tasks spend most of their time waiting, not computing: their tests sleep (``time.sleep(1)`` in a
polling loop, BigCodeBench/195: 45 s of 45), wait on a subprocess that sleeps (/461: 156 s, 1.3 s of CPU) or on a
socket's timeout. Over the 1,140 canonical solutions the tests' own time is 818 s and their CPU time 327 s
(bench/RESULTS.md). A pool that runs ``cores`` jobs at a time leaves a core idle for as long as a job waits.

The gate admits a job while fewer than ``cores`` jobs are in flight, as such a pool does; beyond that, up to
``most`` jobs, only while the jobs in flight leave at least half a core of the ``cores`` unused, and the machine had
half a core idle, through the last window. A job's use is its process tree's CPU time (the kernel's accounting,
``/proc/<pid>/stat`` over the tree), a whole core while it has been in flight less than a window; the machine's idle
time is ``/proc/stat``'s on the CPUs this process may use, and the cgroup's quota where one is set, so that a gate
does not fill a core other work is using (as ``make --load-average`` starts a job only while the machine has room).
A job that starts to compute again counts at once, so the jobs exceed ``cores`` for at most a window, by at most
half a core more than the job admitted uses. Where the accounting cannot be read, no job beyond ``cores`` is
admitted.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

WINDOW_S = 0.1  # the span the gate measures a job's and the machine's use over
TICK_S = 0.02  # how often a waiting caller samples them
IDLE_ENOUGH = 0.5  # the part of a core that must have been left unused through the window
_CGROUP = Path("/sys/fs/cgroup")
_PROC = Path("/proc")


class MachineIdle:
    """The seconds of idle CPU the machine has had, from the kernel's accounting: ``idle`` and ``iowait`` of the
    CPUs this process may run on (``/proc/stat``) and, where the cgroup has a quota (``cpu.max``), the quota's time
    less the cgroup's use (``cpu.stat``). :meth:`sample` reads both now; :func:`idle_rate` turns two samples into
    the idle cores between them (the fewer of the two)."""

    def __init__(self, stat: Path = _PROC / "stat", cgroup: Path = _CGROUP) -> None:
        self._stat = stat
        self._cgroup = cgroup
        try:
            self._cpus = {f"cpu{n}" for n in os.sched_getaffinity(0)}
        except (AttributeError, OSError):
            self._cpus = set()
        self._quota = _quota_cores(cgroup)

    def sample(self) -> tuple[float, float | None, float | None]:
        """(now, idle seconds of the allowed CPUs, seconds of the quota left unused since an arbitrary start)."""
        now = time.monotonic()
        used = self._cgroup_used_s()
        return now, self._idle_s(), (self._quota * now - used) if used is not None and self._quota else None

    def _idle_s(self) -> float | None:
        if not self._cpus:
            return None
        total = 0
        seen = 0
        try:
            with self._stat.open() as handle:
                for line in handle:
                    fields = line.split()
                    if fields and fields[0] in self._cpus:
                        total += int(fields[4]) + int(fields[5])
                        seen += 1
        except (OSError, ValueError, IndexError):
            return None
        return total / os.sysconf("SC_CLK_TCK") if seen == len(self._cpus) else None

    def _cgroup_used_s(self) -> float | None:
        if self._quota is None:
            return None
        try:
            for line in (self._cgroup / "cpu.stat").read_text().splitlines():
                name, _, value = line.partition(" ")
                if name == "usage_usec":
                    return int(value) / 1e6
        except (OSError, ValueError):
            return None
        return None


def idle_rate(before: tuple[float, float | None, float | None],
              after: tuple[float, float | None, float | None]) -> float | None:
    """The idle cores between two :meth:`MachineIdle.sample` readings, ``None`` where neither source was read."""
    elapsed = after[0] - before[0]
    if elapsed <= 0:
        return None
    rates = [(b - a) / elapsed for a, b in ((before[1], after[1]), (before[2], after[2]))
             if a is not None and b is not None]
    return min(rates) if rates else None


def _quota_cores(cgroup: Path) -> float | None:
    """The cgroup's CPU quota in cores (``cpu.max``: ``quota period``), ``None`` without one."""
    try:
        quota, period = (cgroup / "cpu.max").read_text().split()[:2]
    except (OSError, ValueError):
        return None
    if quota == "max":
        return None
    try:
        return int(quota) / int(period)
    except (ValueError, ZeroDivisionError):
        return None


def tree_cpu_s(root: int, proc: Path = _PROC, most: int = 512) -> float | None:
    """CPU seconds used so far by the process tree rooted at ``root``: each process's own and its reaped
    children's (``/proc/<pid>/stat``), walking ``/proc/<pid>/task/<tid>/children``; ``None`` when ``root`` is gone
    or this kernel does not list children, or the tree has more than ``most`` processes (a job that forks without
    end costs the judge a bounded read and counts as computing). A process that ends takes its time with it until
    its parent reaps it, so a rate from two readings can be low for one window, never high."""
    total = 0
    pending = [root]
    seen: set[int] = set()
    while pending:
        pid = pending.pop()
        if pid in seen:
            continue
        if len(seen) == most:
            return None
        seen.add(pid)
        try:  # the name in parentheses is the process's own choosing: the fields are read after the last ")"
            fields = (proc / str(pid) / "stat").read_bytes().rsplit(b")", 1)[1].split()
            used = sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
            tasks = [entry.name for entry in (proc / str(pid) / "task").iterdir()]
        except (OSError, IndexError, ValueError):
            if pid == root:
                return None
            continue  # it ended meanwhile
        total += used
        for tid in tasks:
            try:
                pending.extend(int(child) for child in (proc / str(pid) / "task" / tid / "children").read_text().split())
            except FileNotFoundError:
                if (proc / str(pid) / "task" / tid).exists():
                    return None  # the thread is there, its ``children`` file is not: not listed by this kernel
            except (OSError, ValueError):
                continue
    return total / os.sysconf("SC_CLK_TCK")


class Job:
    """One admitted job: its process tree's root once known (``root()``, ``None`` until then: it counts as
    computing), and the gate's readings of the tree's CPU time."""

    def __init__(self, root: Callable[[], int | None] | None = None) -> None:
        self.root = root or (lambda: None)
        self.since = time.monotonic()
        self.readings: deque[tuple[float, float]] = deque(maxlen=64)


class CoreGate:
    """``cores`` jobs at once, and up to ``most`` while those leave half a core unused (module docstring).

    Parameters
    ----------
    cores : int
        The cores the jobs may use together (the workers asked for): so many jobs are always admitted.
    most : int
        Jobs in flight at most (each holds a warm process: memory bounds it).
    machine : MachineIdle, optional
        The machine's idle time (default: this machine's); a gate whose machine reads ``None`` admits no job
        beyond ``cores``.
    tree_cpu : callable, optional
        CPU seconds of a process tree by its root (default: :func:`tree_cpu_s`).
    window_s : float
        The span a job's and the machine's use are measured over.
    """

    def __init__(self, cores: int, most: int, machine: MachineIdle | None = None,
                 tree_cpu: Callable[[int], float | None] = tree_cpu_s, window_s: float = WINDOW_S) -> None:
        if cores < 1:
            raise ValueError(f"`cores` must be at least 1, got {cores}")
        if most < cores:
            raise ValueError(f"`most` must be at least `cores` ({cores}), got {most}")
        if not window_s > 0:
            raise ValueError(f"`window_s` must be positive, got {window_s}")
        self.cores = cores
        self.most = most
        self._machine = machine or MachineIdle()
        self._tree_cpu = tree_cpu
        self._window_s = window_s
        self._machine_readings: deque[tuple[float, float | None, float | None]] = deque(maxlen=64)
        self._jobs: list[Job] = []
        self._peak = 0
        self._condition = threading.Condition()
        self._sampling = False  # one caller samples at a time; the others wait

    @property
    def peak(self) -> int:
        """The most jobs that were in flight at once."""
        return self._peak

    def acquire(self, root: Callable[[], int | None] | None = None) -> Job:
        """Wait until a job may start, count it in, and return it; ``root`` gives its process tree's root once
        there is one."""
        with self._condition:
            while True:
                if len(self._jobs) < self.cores:
                    break
                if len(self._jobs) < self.most and not self._sampling:
                    self._sampling = True
                    jobs = list(self._jobs)
                    self._condition.release()
                    try:
                        room = self._room(jobs)
                    finally:
                        self._condition.acquire()
                        self._sampling = False
                    if room and len(self._jobs) < self.most:
                        break
                self._condition.wait(TICK_S)
            job = Job(root)
            self._jobs.append(job)
            self._peak = max(self._peak, len(self._jobs))
            return job

    def _room(self, jobs: list[Job]) -> bool:
        """Read the machine and every job's tree now; whether the jobs in flight left at least half a core of the
        ``cores`` unused through the last window, and the machine had half a core idle through it."""
        now = time.monotonic()
        self._machine_readings.append(self._machine.sample())
        computing = 0.0
        for job in jobs:
            root = job.root()
            used = self._tree_cpu(root) if root is not None else None
            if used is None:
                job.readings.clear()
            else:
                job.readings.append((now, used))
            computing += self._cores_used(job, now)
        if computing > self.cores - IDLE_ENOUGH:
            return False
        start = next((r for r in reversed(self._machine_readings) if r[0] <= now - self._window_s), None)
        idle = idle_rate(start, self._machine_readings[-1]) if start is not None else None
        return idle is not None and idle >= IDLE_ENOUGH

    def _cores_used(self, job: Job, now: float) -> float:
        """The cores ``job``'s tree used through the last window; a whole core for a job in flight less than a
        window, or whose tree cannot be read."""
        if now - job.since < self._window_s or not job.readings:
            return 1.0
        start = next((r for r in reversed(job.readings) if r[0] <= now - self._window_s), None)
        if start is None:
            return 1.0
        end = job.readings[-1]
        return max(0.0, end[1] - start[1]) / (end[0] - start[0])

    def release(self, job: Job) -> None:
        """Count a job out."""
        with self._condition:
            try:
                self._jobs.remove(job)
            except ValueError:
                raise RuntimeError("CoreGate.release() of a job not in flight") from None
            self._condition.notify_all()
