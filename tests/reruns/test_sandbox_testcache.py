"""The supervisors' disk cache of compiled tests: verdicts are the same from a fresh supervisor reading
the cache as from one compiling; a damaged entry is compiled again; a directory others can write is not
used."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from sotacheck.reruns.sandbox import SandboxLimits, execute
from sotacheck.reruns.sandbox.slots import SlotLease
from sotacheck.reruns.sandbox.supervisor import shutdown_supervisors

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the disk cache is used only by a root supervisor")

LIMITS = SandboxLimits(test_timeout_s=2, problem_timeout_s=10)
TESTS = ["assert square(3) == 9", "assert square(4) == 16", "assert square(", "assert square(5) != 25"]
RIGHT = "def square(x):\n    return x * x\n"
WRONG = "def square(x):\n    return x + x\n"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A cache directory of this test's own, read by supervisors started afresh for it."""
    directory = tmp_path / "compiled-tests"
    monkeypatch.setenv("SOTACHECK_TEST_CACHE", str(directory))
    shutdown_supervisors()
    yield directory
    shutdown_supervisors()  # later tests get supervisors with the default cache again


def verdicts(code: str) -> list[tuple[str, str | None]]:
    with SlotLease(1) as lease:
        result = execute(code, TESTS, entry_point="square", limits=LIMITS, slot=lease.slots[0])
    return [(t.status, t.exception_type) for t in result.tests]


EXPECTED_RIGHT = [("passed", None), ("passed", None), ("error", "SyntaxError"), ("failed", "AssertionError")]
EXPECTED_WRONG = [("failed", "AssertionError"), ("failed", "AssertionError"), ("error", "SyntaxError"), ("passed", None)]


def test_a_fresh_supervisor_reading_the_cache_judges_as_one_compiling(cache: Path) -> None:
    assert verdicts(RIGHT) == EXPECTED_RIGHT
    (entry,) = cache.glob("*.marshal")
    written = entry.stat().st_ino
    assert cache.stat().st_mode & 0o777 == 0o700
    shutdown_supervisors()  # the next supervisor has nothing in memory: it reads the entry
    assert verdicts(WRONG) == EXPECTED_WRONG
    assert verdicts(RIGHT) == EXPECTED_RIGHT
    assert list(cache.glob("*.marshal")) == [entry]
    assert entry.stat().st_ino == written  # read, not compiled and written again (a rewrite is a new file)


def test_a_damaged_entry_is_compiled_again(cache: Path) -> None:
    verdicts(RIGHT)
    (entry,) = cache.glob("*.marshal")
    entry.write_bytes(b"\x00not marshal data")
    shutdown_supervisors()
    assert verdicts(WRONG) == EXPECTED_WRONG
    assert verdicts(RIGHT) == EXPECTED_RIGHT
    assert entry.read_bytes() != b"\x00not marshal data"  # compiled again and rewritten


def test_a_directory_others_can_write_is_not_used(cache: Path) -> None:
    cache.mkdir(mode=0o777)
    cache.chmod(0o777)
    assert verdicts(RIGHT) == EXPECTED_RIGHT
    assert list(cache.iterdir()) == []
