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


# The names a list of tests reads and binds come from the compiled code (a bytecode scan, kept with the
# entry); checked against an independent reading of the source with ``ast`` on snippets that read a module
# in every kind of scope, and on some that bind one.
SNIPPETS = [
    ("assert sys.getsizeof(1) > 0", ("sys",), ()),
    ("def check(f):\n    assert math.isclose(f(2), 4)\ncheck(square)", ("math",), ()),
    ("assert all(re.match('a', s) for s in ['a'])", ("re",), ()),
    ("assert [string.digits for _ in range(2)]", ("string",), ()),
    ("class T:\n    x = json.dumps(1)\nassert (lambda: copy.copy(1))() == 1", ("copy", "json"), ()),
    ("import os\nassert os.sep\nfrom collections import abc as heapq", ("os",), ("heapq", "os")),
    ("def f():\n    global random\n    random = 3\nassert x.copy", (), ("random",)),
]


def _ast_reading(source: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    import ast
    import sys

    tree = ast.parse(source)
    read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    top = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            top.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            top.update((a.asname or a.name).partition(".")[0] for a in node.names)
    stdlib = sys.stdlib_module_names
    return tuple(sorted(read & stdlib)), tuple(sorted(top & stdlib))


@pytest.mark.parametrize(("source", "read", "bound"), SNIPPETS)
def test_the_names_tests_read_and_bind_come_from_their_compiled_code(source: str, read: tuple[str, ...],
                                                                     bound: tuple[str, ...],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    import sotacheck.reruns.sandbox

    # Imported as the supervisor imports it: a script beside its standard-library-only siblings.
    monkeypatch.syspath_prepend(str(Path(sotacheck.reruns.sandbox.__file__).parent / "child"))
    compiled = importlib.import_module("_testcache")._compile_each((source,))
    assert (compiled.stdlib_read, compiled.stdlib_bound) == (read, bound)
    assert compiled.stdlib_read == _ast_reading(source)[0]
    assert set(compiled.stdlib_bound) <= set(_ast_reading(source)[1])  # top-level bindings only


def test_a_test_reading_a_module_it_never_imports_gets_the_judges_own_from_the_cache(cache: Path) -> None:
    tests = ["assert sys.getsizeof(square(2)) > 0", "assert math.sqrt(square(3)) == 3"]
    for _ in range(2):  # compiled and stored; then, from a fresh supervisor, read back
        with SlotLease(1) as lease:
            result = execute(RIGHT, tests, entry_point="square", limits=LIMITS, slot=lease.slots[0])
        assert [t.status for t in result.tests] == ["passed", "passed"]
        shutdown_supervisors()
    assert len(list(cache.glob("*.marshal"))) == 1
