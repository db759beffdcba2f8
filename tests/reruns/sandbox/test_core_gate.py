"""The core gate: ``cores`` jobs always, more only while a core stays idle; its probes read the kernel's accounting
(checked on files written here and on a process that burns a known amount of CPU)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from sotacheck.reruns.sandbox.core_gate import CoreGate, MachineIdle, idle_rate, tree_cpu_s
from sotacheck.reruns.sandbox.unittest_judge import UnittestWorkers


class _Machine(MachineIdle):
    """A machine whose CPUs are idle at ``idle`` cores (``None``: unreadable)."""

    def __init__(self, idle: float | None) -> None:
        self.idle = idle

    def sample(self) -> tuple[float, float | None, float | None]:
        now = time.monotonic()
        return now, None if self.idle is None else self.idle * now, None


def _run_jobs(gate: CoreGate, jobs: int, seconds: float) -> None:
    def job() -> None:
        admitted = gate.acquire(lambda: 1)  # every job's tree is "process 1": its CPU time is the stub's
        time.sleep(seconds)
        gate.release(admitted)

    threads = [threading.Thread(target=job) for _ in range(jobs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def _computing(root: int) -> float:
    return time.monotonic() * 3  # three cores' worth: every job computes


def _waiting(root: int) -> float:
    return 1.0  # no CPU used: every job waits


@pytest.mark.parametrize(("machine", "tree"), [(2.0, _computing), (0.3, _waiting), (None, _waiting)],
                         ids=["jobs-compute", "machine-busy", "machine-unknown"])
def test_no_job_beyond_cores_unless_jobs_wait_on_an_idle_machine(machine: float | None, tree) -> None:
    gate = CoreGate(2, 8, machine=_Machine(machine), tree_cpu=tree, window_s=0.03)
    _run_jobs(gate, 8, 0.2)
    assert gate.peak == 2


def test_jobs_beyond_cores_while_those_in_flight_wait_up_to_most() -> None:
    gate = CoreGate(1, 3, machine=_Machine(2.0), tree_cpu=_waiting, window_s=0.03)
    started = time.monotonic()
    _run_jobs(gate, 6, 0.3)
    assert gate.peak == 3
    assert time.monotonic() - started < 1.5  # 6 x 0.3 s one at a time would be 1.8 s; three at once, about 0.7 s


def test_a_job_without_a_process_yet_counts_as_computing() -> None:
    gate = CoreGate(1, 3, machine=_Machine(2.0), tree_cpu=_waiting, window_s=0.03)
    first = gate.acquire()  # no root: it may be starting a runner
    admitted: list[object] = []
    thread = threading.Thread(target=lambda: admitted.append(gate.acquire()))
    thread.start()
    thread.join(0.3)
    assert not admitted
    gate.release(first)
    thread.join(1)
    assert admitted


def test_arguments_are_checked_by_name() -> None:
    with pytest.raises(ValueError, match="`cores`"):
        CoreGate(0, 1)
    with pytest.raises(ValueError, match="`most`"):
        CoreGate(2, 1)
    with pytest.raises(ValueError, match="`window_s`"):
        CoreGate(1, 1, window_s=0)
    with pytest.raises(RuntimeError, match="not in flight"):
        CoreGate(1, 1).release(CoreGate(1, 1).acquire())
    with pytest.raises(ValueError, match="`in_flight`"):
        UnittestWorkers(2, python=sys.executable, in_flight=1)


def _stat(idle_ticks: dict[int, int]) -> str:
    lines = ["cpu  10 0 10 999 0 0 0 0 0 0"]
    lines += [f"cpu{n} 5 0 5 {ticks} 0 0 0 0 0 0" for n, ticks in idle_ticks.items()]
    return "\n".join([*lines, "intr 1", ""])


def test_idle_cores_from_proc_stat_on_the_allowed_cpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Idle and iowait ticks of the CPUs this process may use, over the time between two calls (the clock
    stubbed: 1 s between them; 100 ticks a second)."""
    stat = tmp_path / "stat"
    clock = iter([100.0, 101.0])
    monkeypatch.setattr("sotacheck.reruns.sandbox.core_gate.time.monotonic", lambda: next(clock))
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(os, "sysconf", lambda name: 100)
    machine = MachineIdle(stat, cgroup=tmp_path / "no-cgroup")
    stat.write_text(_stat({0: 1000, 1: 2000, 2: 0}))
    before = machine.sample()
    stat.write_text(_stat({0: 1100, 1: 2050, 2: 100}))  # cpu2 is not ours: its idle 100 ticks do not count
    assert idle_rate(before, machine.sample()) == pytest.approx(1.5)


def test_a_cgroup_quota_caps_the_idle_cores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``cpu.max`` at 1.5 cores and the cgroup using 1.2 s of CPU in 1 s, 0.3 cores are free, however idle
    the machine's CPUs are."""
    stat, cgroup = tmp_path / "stat", tmp_path / "cgroup"
    cgroup.mkdir()
    (cgroup / "cpu.max").write_text("150000 100000\n")
    clock = iter([100.0, 101.0])
    monkeypatch.setattr("sotacheck.reruns.sandbox.core_gate.time.monotonic", lambda: next(clock))
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(os, "sysconf", lambda name: 100)
    machine = MachineIdle(stat, cgroup=cgroup)
    stat.write_text(_stat({0: 0, 1: 0}))
    (cgroup / "cpu.stat").write_text("usage_usec 5000000\nuser_usec 1\n")
    before = machine.sample()
    stat.write_text(_stat({0: 100, 1: 100}))
    (cgroup / "cpu.stat").write_text("usage_usec 6200000\nuser_usec 1\n")
    assert idle_rate(before, machine.sample()) == pytest.approx(0.3)


def test_tree_cpu_counts_a_grandchild_that_burns_a_core() -> None:
    """A process whose child spins: the tree rooted at the parent uses about one core (0.6 to 1.1 of one, as
    the machine's other work allows); the tree of a process that sleeps beside it, none."""
    spin = "import time\nend = time.monotonic() + 3\nwhile time.monotonic() < end: pass\n"
    parent = subprocess.Popen([sys.executable, "-c",
                               f"import subprocess, sys; subprocess.run([sys.executable, '-c', {spin!r}])"],
                              start_new_session=True)
    sleeper = subprocess.Popen(["sleep", "5"])
    try:
        time.sleep(0.8)  # the grandchild has started
        tree, beside = tree_cpu_s(parent.pid), tree_cpu_s(sleeper.pid)
        time.sleep(1.0)
        assert tree is not None and beside is not None
        assert 0.6 <= (tree_cpu_s(parent.pid) or 0.0) - tree <= 1.1
        assert (tree_cpu_s(sleeper.pid) or 0.0) - beside < 0.05
    finally:
        os.killpg(parent.pid, signal.SIGKILL)  # the spinning grandchild with it
        sleeper.kill()
        for process in (parent, sleeper):
            process.wait()


def test_tree_cpu_of_a_process_that_is_gone_is_none() -> None:
    process = subprocess.Popen(["true"])
    process.wait()
    assert tree_cpu_s(process.pid) is None


SLEEPS = "import unittest, time\nclass TestCases(unittest.TestCase):\n    def test_a(self):\n        time.sleep(0.6)\n"
SPINS = ("import unittest, time\nclass TestCases(unittest.TestCase):\n    def test_a(self):\n"
         "        end = time.process_time() + 0.6\n        while time.process_time() < end: pass\n")


def test_judged_tasks_that_sleep_overlap_and_tasks_that_compute_do_not() -> None:
    """One worker: six tasks whose test sleeps are judged several at once (their trees read from the kernel; the
    machine stubbed idle, so other load on it cannot change the count); six that compute, everything read from the
    kernel, one at a time (the one task in flight computes)."""
    with UnittestWorkers(1, python=sys.executable, preload=(), in_flight=3) as workers:
        workers.gate._machine = _Machine(2.0)  # the machine stubbed for this half only
        started = time.monotonic()
        results = list(workers.map(lambda _: workers.run("x = 1\n", SLEEPS), range(6)))
        assert [r.status for r in results] == ["passed"] * 6
        assert workers.gate.peak == 3
        assert time.monotonic() - started < 6 * 0.6  # one at a time would take 3.6 s and more
    with UnittestWorkers(1, python=sys.executable, preload=(), in_flight=3) as workers:
        workers.run("x = 1\n", SPINS)  # the first runner is warm
        results = list(workers.map(lambda _: workers.run("x = 1\n", SPINS), range(6)))
        assert [r.status for r in results] == ["passed"] * 6
        assert workers.gate.peak == 1


def test_tree_cpu_reads_past_a_process_name_of_its_own_choosing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A process named ``x) R 1 2 3 ...`` (a name is the process's to choose) cannot shift the fields read: the
    CPU time is read after the last ``)``; a garbled line counts as a process gone, never an exception."""
    monkeypatch.setattr(os, "sysconf", lambda name: 100)
    tail = " S 1 1 1 0 -1 0 0 0 0 0 {u} {s} {cu} {cs} 20 0 1 0\n"
    for pid, name, times in ((10, "x) R 1 2 3 4 5 6 7 8 9 10 99 99 99 99", (100, 50, 30, 20)), (11, "ok", None)):
        (tmp_path / str(pid) / "task" / str(pid)).mkdir(parents=True)
        line = f"{pid} ({name})" + (tail.format(u=times[0], s=times[1], cu=times[2], cs=times[3]) if times
                                     else " S 1 garbled\n")
        (tmp_path / str(pid) / "stat").write_text(line)
    (tmp_path / "10" / "task" / "10" / "children").write_text("11 ")
    (tmp_path / "11" / "task" / "11" / "children").write_text("")
    assert tree_cpu_s(10, proc=tmp_path) == pytest.approx(2.0)  # (100 + 50 + 30 + 20) ticks; the garbled child none
    assert tree_cpu_s(10, proc=tmp_path, most=1) is None  # more processes than it reads: not known


def test_map_starts_the_longest_expected_first_and_returns_results_in_order() -> None:
    """One thread in flight: the start order is the cost order, longest first, ties in the given order; the
    results come back in the given order whatever the start order."""
    started: list[str] = []

    def note(item: tuple[str, float]) -> str:
        started.append(item[0])
        return item[0]

    items = [("a", 1.0), ("b", 5.0), ("c", 0.0), ("d", 5.0)]
    with UnittestWorkers(1, python=sys.executable, preload=(), in_flight=1) as workers:
        assert list(workers.map(note, items, cost=lambda item: item[1])) == ["a", "b", "c", "d"]
        assert started == ["b", "d", "a", "c"]
        started.clear()
        assert list(workers.map(note, items)) == ["a", "b", "c", "d"]
        assert started == ["a", "b", "c", "d"]


def test_map_stopped_early_cancels_the_items_not_started() -> None:
    """A consumer that takes one result and stops: the items not yet started never run (one thread in flight, each
    item 0.05 s: 40 would take 2 s)."""
    started: list[int] = []

    def slow(item: int) -> int:
        started.append(item)
        time.sleep(0.05)
        return item

    with UnittestWorkers(1, python=sys.executable, preload=(), in_flight=1) as workers:
        results = workers.map(slow, range(40))
        assert next(results) == 0
        results.close()
        assert len(started) <= 3
