"""Slots are leased machine-wide: two processes judging at once never share a sandbox uid, so one's
kill-by-uid cannot hit the other's candidate."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from sotacheck.reruns.sandbox import SandboxLimits, SandboxPool
from sotacheck.reruns.sandbox.slots import SlotLease

LIMITS = SandboxLimits(test_timeout_s=10, problem_timeout_s=20)


def test_leases_in_one_process_are_disjoint_and_released() -> None:
    with SlotLease(3) as first, SlotLease(2) as second:
        held = first.slots + second.slots
        assert len(set(held)) == 5
    assert first.slots == [] and second.slots == []
    with SlotLease(1) as again:
        assert again.slots[0] == min(held)  # released slots are free again


def test_another_process_gets_other_slots() -> None:
    with SlotLease(2) as mine:
        script = "from sotacheck.reruns.sandbox.slots import SlotLease; print(SlotLease(2).slots)"
        out = subprocess.run([sys.executable, "-P", "-c", script], capture_output=True, text=True, check=True).stdout
        theirs = eval(out)  # a printed list of ints
        assert not set(theirs) & set(mine.slots)


def test_bad_count_is_refused() -> None:
    with pytest.raises(ValueError, match="`count`"):
        SlotLease(0)


@pytest.mark.skipif(os.geteuid() != 0, reason="uid separation (and kill-by-uid) only happens as root")
def test_concurrent_process_does_not_kill_a_running_candidate() -> None:
    """A 2 s candidate in this process survives 100 executions judged meanwhile by another process."""
    busy = textwrap.dedent("""
        from sotacheck.reruns.sandbox import SandboxPool
        with SandboxPool(workers=1) as pool:
            for _ in range(100):
                assert pool.run("def f():\\n    return 1\\n", ["assert f() == 1"]).status == "passed"
        print("done")
    """)
    with SandboxPool(workers=1, limits=LIMITS) as pool:
        other = subprocess.Popen([sys.executable, "-P", "-c", busy], stdout=subprocess.PIPE, text=True)
        slow = "import time\ndef f():\n    time.sleep(2)\n    return 1\n"
        result = pool.run(slow, ["assert f() == 1"], entry_point="f")
        assert other.communicate(timeout=120)[0].strip() == "done"
    assert result.status == "passed", result
