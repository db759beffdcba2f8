"""The unittest judge (BigCodeBench's) against programs that tamper with the test machinery: every one judged
failed (or, for one that kills the runner, an error), never passed; the honest program passes. Standard library
only (the runner under this interpreter, nothing preloaded), so these run in ``make test``."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from sotacheck.core.errors import InputError
from sotacheck.reruns.benchmarks.problem import Problem
from sotacheck.reruns.sandbox.unittest_judge import UnittestLimits, UnittestWorkers, _result
from sotacheck.reruns.sandbox.unittest_sources import defined_test_methods

TESTS = '''import unittest
from unittest.mock import patch
import random

class TestCases(unittest.TestCase):
    def setUp(self):
        self.expected = 9

    def test_square(self):
        self.assertEqual(task_func(3), self.expected)

    def test_raises(self):
        with self.assertRaises(ValueError):
            task_func(-1)

    @patch(__name__ + '.randint', return_value=4)
    def test_patched(self, mock_randint):
        self.assertEqual(task_func(0), 16)
        mock_randint.assert_called_once()
'''
HONEST = '''from random import randint
def task_func(x):
    if x < 0:
        raise ValueError("negative")
    if x == 0:
        x = randint(1, 10)
    return x * x
'''
# imports randint, so that test_patched fails on the wrong value, not on a missing name
WRONG_BODY = '''from random import randint
def task_func(x):
    return 0
'''

# Each a wrong program (task_func returns 0) that tries to be counted as passing through the test machinery.
TAMPERING = {
    "no-op assertions at import": "import unittest\nunittest.TestCase.assertEqual = lambda *a, **k: None\n"
                                  "unittest.TestCase.assertRaises = lambda *a, **k: __import__('contextlib').nullcontext()\n",
    "no-op assertions during the test": "import unittest\ndef task_func(x):\n"
                                        "    unittest.TestCase.assertEqual = lambda *a, **k: None\n    return 0\n",
    "a result that drops failures": "import unittest\nunittest.TestResult.addFailure = lambda *a: None\n"
                                    "unittest.TestResult.addError = lambda *a: None\n"
                                    "unittest.TestResult.wasSuccessful = lambda self: True\n",
    "an empty suite": "import unittest\nunittest.TestLoader.loadTestsFromTestCase = lambda self, c: unittest.TestSuite()\n"
                      "unittest.TestLoader.getTestCaseNames = lambda self, c: []\n",
    "a no-op TestCase.run": "import unittest\nunittest.TestCase.run = lambda self, result=None: result\n"
                            "unittest.TestCase.__call__ = lambda self, *a, **k: None\n",
    "a class-building hook": "import builtins, unittest\n_build = builtins.__build_class__\n"
                             "def build(func, name, *bases, **kw):\n    cls = _build(func, name, *bases, **kw)\n"
                             "    if name == 'TestCases':\n        cls = unittest.skip('tampered')(cls)\n    return cls\n"
                             "builtins.__build_class__ = build\n",
    "skip raised in the test": "import unittest\ndef task_func(x):\n    raise unittest.SkipTest('no')\n",
    "skip marker set on the test class during the test": "import sys\ndef task_func(x):\n"
                            "    cls = sys.modules['__test__'].TestCases\n    cls.__unittest_skip__ = True\n"
                            "    cls.__unittest_skip_why__ = 'x'\n    return 0\n",
    "expected-failure marker": "import sys\ndef task_func(x):\n"
                               "    for f in vars(sys.modules['__test__'].TestCases).values():\n"
                               "        if callable(f): f.__unittest_expecting_failure__ = True\n    return 0\n",
    "a fake unittest module": "import sys, types\nfake = types.ModuleType('unittest')\n"
                              "class TestCase:\n    def __getattr__(self, name): return lambda *a, **k: None\n"
                              "    def __init__(self, *a): pass\nfake.TestCase = TestCase\nfake.main = lambda: None\n"
                              "sys.modules['unittest'] = fake\n",
    "os._exit(0) at import": "import os\nos._exit(0)\n",
    "os._exit(0) during the test": "import os\ndef task_func(x):\n    os._exit(0)\n",
    "sys.exit(0) during the test": "import sys\ndef task_func(x):\n    sys.exit(0)\n",
    "KeyboardInterrupt during the test": "def task_func(x):\n    raise KeyboardInterrupt\n",
    "SIGKILL to itself at import": "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n",
    "SIGTERM to itself during the test": "import os, signal\ndef task_func(x):\n"
                                         "    os.kill(os.getpid(), signal.SIGTERM)\n    return 0\n",
    "a forged report on every descriptor": "import os, json\ndef task_func(x):\n"
                                           "    for fd in range(0, 64):\n        try:\n"
                                           "            os.write(fd, b'00' * 16 + b' ' + "
                                           "json.dumps({'status': 'passed'}).encode())\n"
                                           "        except OSError:\n            pass\n    os._exit(0)\n",
    "a forged reply on stdout": "import json, sys\nprint(json.dumps({'results': [{'method': m, 'status': 'passed'} for m in "
                                "('test_patched', 'test_raises', 'test_square')]}), flush=True)\n",
    "the runner's own report event": "import sys\ndef task_func(x):\n"
                                     "    sys.audit('sotacheck.unittest.report', {'status': 'passed'})\n    return 0\n",
    "a trace function": "import sys\nsys.settrace(lambda *a: None)\n",
    "gc walk for the hook": "import gc\nobjs = gc.get_objects()\n",
    "ctypes raw memory": "import ctypes\nctypes.string_at(id(object()), 8)\n",
    "ctypes memmove": "import ctypes\nb = ctypes.create_string_buffer(8)\nctypes.memmove(b, id(object()), 8)\n",
    "interpreter symbols through ctypes": "import ctypes\nctypes.pythonapi.PyFrame_LocalsToFast\n",
    "/proc/self/mem": "open('/proc/self/mem', 'rb')\n",
    "code swap of an assertion": "import unittest\nunittest.TestCase.assertEqual.__code__ = (lambda *a, **k: None).__code__\n",
    "a second audit hook": "import sys\nsys.addaudithook(lambda *a: None)\n",
    "rebinding unittest.case's globals": "import unittest.case\nunittest.case.safe_repr = lambda *a, **k: ''\n"
                                         "unittest.case.AssertionError = type('E', (Exception,), {})\n",
    "a forked copy that reports while the runner's child exits quietly":
        "import os\nfrom random import randint\ndef task_func(x):\n    pid = os.fork()\n    if pid == 0:\n"
        "        if x < 0:\n            raise ValueError\n        return 16 if x == 0 else x * x\n"
        "    os.waitpid(pid, 0)\n    os._exit(0)\n",
    "a mock's assertion patched on its class": "import unittest.mock\ndef task_func(x):\n"
                                               "    unittest.mock.NonCallableMock.assert_called_once = lambda self: None\n"
                                               "    return 0\n",
    # written against the per-task design (one process for a task's tests) by reading its source
    "setUp patched on the test class during a test": "import sys\nfrom random import randint\ndef task_func(x):\n"
        "    sys.modules['__test__'].TestCases.setUp = lambda self: setattr(self, 'expected', 0)\n    return 0\n",
    "a tearDown added to the test class during a test": "import sys\nfrom random import randint\ndef task_func(x):\n"
        "    sys.modules['__test__'].TestCases.tearDown = lambda self: None\n    return 0\n",
    "the next tests' methods swapped on the test class": "import sys\nfrom random import randint\ndef task_func(x):\n"
        "    for name in ('test_square', 'test_raises', 'test_patched'):\n"
        "        setattr(sys.modules['__test__'].TestCases, name, lambda self, *a: None)\n    return 0\n",
    "an __init_subclass__ on TestCase that empties the test class": "import unittest\ndef _hook(cls, **kw):\n"
        "    for k in list(vars(cls)):\n        if k.startswith('test'):\n            setattr(cls, k, lambda self, *a: None)\n"
        "unittest.TestCase.__init_subclass__ = classmethod(_hook)\n",
    "sys.audit replaced (the reports dropped)": "import sys\nsys.audit = lambda *a: None\n",
    "os._exit made a no-op (the test process outlives its last report)": "import os\nos._exit = lambda code: None\n",
    "sys.modules['__test__'] replaced": "import sys, types\nfrom random import randint\nfake = types.ModuleType('__test__')\n"
        "fake.randint = randint\nsys.modules['__test__'] = fake\ndef task_func(x):\n    return 0\n",
    "a thread that keeps patching assertEqual": "import threading, time, unittest\ndef _loop():\n    while True:\n"
        "        unittest.TestCase.assertEqual = lambda *a, **k: None\n        time.sleep(0.0005)\n"
        "threading.Thread(target=_loop, daemon=True).start()\ntime.sleep(0.01)\n",
    "a thread that writes records with a guessed nonce": "import json, os, threading\ndef _spam():\n"
        "    for i in range(50):\n        for fd in range(3, 20):\n            try:\n"
        "                record = '00' * 16 + f' {os.getpid()} {i % 3} ' + json.dumps({'status': 'passed'})\n"
        "                os.write(fd, (record + '\\n').encode())\n"
        "            except OSError:\n                pass\nthreading.Thread(target=_spam).start()\n",
    "a thread that exits 0 while the test runs": "import os, threading, time\nfrom random import randint\n"
        "def task_func(x):\n    threading.Thread(target=lambda: os._exit(0)).start()\n    time.sleep(1)\n    return 0\n",
    "a SIGALRM handler that exits 0 during the test": "import os, signal, time\nfrom random import randint\n"
        "signal.signal(signal.SIGALRM, lambda *a: os._exit(0))\ndef task_func(x):\n"
        "    signal.setitimer(signal.ITIMER_REAL, 0.01)\n    time.sleep(1)\n    return 0\n",
    "faulthandler on every descriptor, then a segfault": "import faulthandler\nfrom random import randint\n"
        "def task_func(x):\n    for fd in range(3, 10):\n        try:\n            faulthandler.enable(file=fd)\n"
        "        except Exception:\n            pass\n    faulthandler._sigsegv()\n",
    "faulthandler's tracebacks written on every descriptor": "import faulthandler, os, time\nfrom random import randint\n"
        "for fd in range(3, 10):\n    try:\n        os.fstat(fd)\n"
        "        faulthandler.dump_traceback_later(0.001, repeat=True, file=fd)\n    except Exception:\n        pass\n"
        "def task_func(x):\n    time.sleep(0.05)\n    return 0\n",
    "sys.setrecursionlimit(30) at import": "import sys\nsys.setrecursionlimit(30)\n",
    "gc.freeze and gc.disable": "import gc\ngc.disable()\ngc.freeze()\n",
    "os.register_at_fork that exits 0": "import os\nos.register_at_fork(after_in_child=lambda: os._exit(0))\n",
    "an atexit handler that exits 0": "import atexit, os\natexit.register(lambda: os._exit(0))\n",
    "threading.excepthook and sys.excepthook swallow everything": "import sys, threading\n"
        "threading.excepthook = lambda *a: None\nsys.excepthook = lambda *a: None\n",
    "builtins.__import__ replaced, restored by the end of the program": "import builtins\n_imp = builtins.__import__\n"
        "builtins.__import__ = lambda *a, **k: _imp(*a, **k)\nimport json\nbuiltins.__import__ = _imp\n",
    "a 10 MB assertion message and a 100,000-character exception name": "from random import randint\n"
        "E = type('E' * 100000, (Exception,), {})\ndef task_func(x):\n    if x < 0:\n        raise E()\n"
        "    raise AssertionError('y' * 10**7)\n",
    "RLIMIT_NOFILE lowered to 3": "import resource\nresource.setrlimit(resource.RLIMIT_NOFILE, (3, 3))\n",
    "unittest.mock's patch internals replaced": "import unittest.mock\nunittest.mock._patch.__enter__ = lambda self: None\n"
        "unittest.mock._patch.__exit__ = lambda self, *a: None\n",
    "256 KiB of garbage on every pipe": "import os\nfrom random import randint\ndef task_func(x):\n"
        "    for fd in range(3, 20):\n        try:\n            os.write(fd, b'x' * 262144)\n        except OSError:\n"
        "            pass\n    return 0\n",
}


@pytest.fixture(scope="module")
def workers():
    with UnittestWorkers(1, python=sys.executable, preload=()) as judge:
        yield judge


def _limits() -> UnittestLimits:
    return UnittestLimits(task_timeout_s=20)


def test_the_honest_program_passes_every_test(workers):
    result = workers.run(HONEST, TESTS, _limits())
    assert result.status == "passed", result
    assert [t.status for t in result.tests] == ["passed"] * 3


def test_a_wrong_program_fails(workers):
    result = workers.run(WRONG_BODY, TESTS, _limits())
    assert result.status == "failed"
    assert [t.status for t in result.tests] == ["failed", "failed", "failed"]


@pytest.mark.parametrize("label", sorted(TAMPERING))
def test_tampering_is_never_a_pass(workers, label):
    program = TAMPERING[label] + ("" if "def task_func" in TAMPERING[label] else WRONG_BODY)
    result = workers.run(program, TESTS, _limits())
    assert result.status in ("failed", "crashed", "error"), (label, result)
    assert len(result.tests) == 3 and all(t.status != "passed" for t in result.tests), (label, result)


@pytest.mark.parametrize("label", ["no-op assertions at import", "a fake unittest module", "os._exit(0) at import"])
def test_tampering_does_not_stop_an_honest_program_from_passing_next(workers, label):
    workers.run(TAMPERING[label] + WRONG_BODY, TESTS, _limits())
    assert workers.run(HONEST, TESTS, _limits()).passed


def test_a_killed_runner_is_an_error_and_the_next_task_gets_a_fresh_one(workers):
    killer = "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n" + WRONG_BODY
    result = workers.run(killer, TESTS, _limits())
    if os.geteuid() == 0:  # jailed as another uid, the program may not signal the runner: its import fails
        assert result.status == "failed" and result.tests[0].exception_type == "PermissionError", result
    else:
        assert result.status == "error" and result.exception_type == "SandboxFailure"
    assert workers.run(HONEST, TESTS, _limits()).passed


def test_no_process_outlives_the_judgement(workers, tmp_path):
    marker = f"sotacheck-orphan-{os.getpid()}-{time.monotonic_ns()}"
    orphan = (f"import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
              f"        os.execvp('sleep', ['sleep', '300', '{marker}'])\n    os._exit(0)\n") + HONEST
    assert workers.run(orphan, TESTS, _limits()).passed
    alive = []
    for entry in Path("/proc").iterdir():
        try:
            if marker.encode() in (entry / "cmdline").read_bytes():
                alive.append(entry.name)
        except OSError:
            continue
    assert alive == []


def test_the_time_limit_covers_the_whole_task(workers):
    sleeper = "import time\nfrom random import randint\ndef task_func(x):\n    time.sleep(60)\n"
    started = time.monotonic()
    result = workers.run(sleeper, TESTS, UnittestLimits(task_timeout_s=1.5))
    assert time.monotonic() - started < 10
    assert result.status == "timeout" and all(t.status == "timeout" for t in result.tests)


# A program whose state carries from one call to the next within a process (a module global, a file, a variable).
STATEFUL = "import os\nfrom random import randint\nCALLS = []\ndef task_func(x):\n    CALLS.append(x)\n" \
           "    os.environ['LEAK'] = '1'\n" \
           "    if len(CALLS) > 1 or os.path.exists('left.txt'):\n        return -1\n" \
           "    open('left.txt', 'w').write('x')\n    if x < 0:\n        raise ValueError\n" \
           "    if x == 0:\n        x = randint(1, 10)\n    return x * x\n"
ONE_TEST = "import unittest\nclass TestCases(unittest.TestCase):\n    def test_square(self):\n" \
           "        self.assertEqual(task_func(3), 9)\n"


def test_each_task_gets_a_fresh_process(workers):
    assert workers.run(STATEFUL, ONE_TEST, _limits()).passed
    assert workers.run(STATEFUL, ONE_TEST, _limits()).passed  # nothing of the first task reached the second


def test_the_tests_of_a_task_share_one_process_as_in_bigcodebench(workers):
    result = workers.run(STATEFUL, TESTS, _limits())
    # test_patched (first, in the loader's order) passes; the next two see the state it left, as they would in
    # BigCodeBench's own evaluator, which runs a task's suite in one process
    assert [t.status for t in result.tests] == ["passed", "failed", "failed"], result


@pytest.mark.parametrize("ending", ["os._exit(3)", "os._exit(0)", "os.kill(os.getpid(), 9)"])
def test_a_test_that_ends_the_process_costs_only_its_own_verdict(workers, ending):
    # test_raises (the second) ends the process; the third runs in a fresh process and passes
    program = f"import os\nfrom random import randint\ndef task_func(x):\n    if x < 0:\n        {ending}\n" \
              "    if x == 0:\n        x = randint(1, 10)\n    return x * x\n"
    result = workers.run(program, TESTS, _limits())
    assert [t.status for t in result.tests][0::2] == ["passed", "passed"], result
    assert result.tests[1].status in ("failed", "crashed"), result
    assert result.status in ("failed", "crashed")


def test_methods_are_enumerated_from_the_source_as_unittest_would():
    source = ("import unittest\nclass Base(unittest.TestCase):\n    def test_b(self): pass\n    def helper(self): pass\n"
              "class TestCases(Base):\n    def test_a(self): pass\n    def testZ(self): pass\n")
    assert defined_test_methods(source) == ("testZ", "test_a", "test_b")
    with pytest.raises(InputError, match="no class TestCases"):
        defined_test_methods("import unittest\n")
    with pytest.raises(InputError, match="no test method"):
        defined_test_methods("class TestCases:\n    def helper(self): pass\n")
    with pytest.raises(InputError, match="does not parse: line 1"):
        defined_test_methods("class (:\n")


def test_a_reply_missing_a_method_is_an_error_never_a_pass():
    methods = ("test_a", "test_b")
    short = {"results": [{"method": "test_a", "status": "passed"}]}
    assert _result(short, methods).status == "error"
    renamed = {"results": [{"method": "test_a", "status": "passed"}, {"method": "test_c", "status": "passed"}]}
    assert _result(renamed, methods).status == "error"
    assert _result(None, methods).status == "error"
    full = {"results": [{"method": m, "status": "passed"} for m in methods]}
    assert _result(full, methods).passed


@pytest.mark.skipif(os.geteuid() != 0, reason="a network namespace of its own needs root")
def test_the_network_is_only_loopback(workers):
    probe = ("import socket\nsocket.setdefaulttimeout(2)\nserver = socket.socket()\nserver.bind(('127.0.0.1', 0))\n"
             "server.listen()\nclient = socket.create_connection(server.getsockname())\n"
             "try:\n    socket.create_connection(('1.1.1.1', 53))\n    OUT = True\nexcept OSError:\n    OUT = False\n"
             "def task_func(x):\n    assert not OUT\n    if x < 0:\n        raise ValueError\n"
             "    return 16 if x == 0 else x * x\n"
             "randint = None\n")
    tests = TESTS.replace("@patch(__name__ + '.randint', return_value=4)\n    def test_patched(self, mock_randint):",
                          "def test_patched(self):").replace("        mock_randint.assert_called_once()\n", "")
    started = time.monotonic()
    assert workers.run(probe, tests, _limits()).passed
    assert time.monotonic() - started < 5


def _problem(canonical: str) -> Problem:
    return Problem(id="T/0", dataset="bigcodebench-complete", prompt="def task_func(x):\n", entry_point="task_func",
                   visible_tests=(), hidden_tests=(TESTS,), source="here", canonical_solution=canonical,
                   kind="unittest", starter_code="from random import randint\ndef task_func(x):\n")


NEEDS_CORPUS = "def task_func(x):\n    raise LookupError('Resource punkt not found')\n"


def test_environment_only_where_the_canonical_solution_fails_the_same_way(workers):
    unjudgeable = workers.judge(_problem(NEEDS_CORPUS), NEEDS_CORPUS)
    assert unjudgeable.status == "environment" and "canonical solution fails here too" in unjudgeable.message
    # the same error from a program whose task the environment can judge is the program's failure
    assert workers.judge(_problem(HONEST), NEEDS_CORPUS).status == "failed"
    assert workers.judge(_problem(HONEST), HONEST).passed


def test_a_malformed_runner_reply_is_an_error(workers, monkeypatch):
    from sotacheck.reruns.sandbox import unittest_judge

    monkeypatch.setattr(unittest_judge._Runner, "request",
                        lambda self, job, timeout_s: {"results": [{"method": m} for m in job["methods"]]})
    assert workers.run(HONEST, TESTS, _limits()).status == "error"


ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="the jail needs root (mount namespaces, a sandbox uid)")
REPO = Path(__file__).resolve().parents[3]


@ROOT_ONLY
def test_the_program_cannot_read_the_answer_key_or_the_project(workers):
    # honest only if it could read one of these: the bundled tasks (canonical solutions), the project, the cache
    # (the interpreter's own installation is there, read-only, wherever it lives: under /root, /work)
    secrets = [str(REPO / "data" / "benchmarks" / "bigcodebench" / "BigCodeBench.jsonl.gz"), str(REPO / "README.md"),
               str(REPO / "tests"), str(Path.home() / ".cache" / "sotacheck" / "compiled-tests"), "/mnt", "/var/log"]
    program = (f"import os\nSEEN = [p for p in {secrets!r} if os.path.exists(p) and (os.path.isfile(p) or os.listdir(p))]\n"
               "from random import randint\ndef task_func(x):\n    if not SEEN:\n        return 0\n"
               "    if x < 0:\n        raise ValueError\n    if x == 0:\n        x = randint(1, 10)\n    return x * x\n")
    assert Path(secrets[0]).exists() and Path(secrets[3]).exists()  # the host has them
    result = workers.run(program, TESTS, _limits())
    assert result.status == "failed" and all(t.status == "failed" for t in result.tests), result


@ROOT_ONLY
def test_what_a_task_writes_anywhere_is_gone_for_the_next_and_never_on_the_host(workers):
    marker = f"sotacheck-left-{os.getpid()}-{time.monotonic_ns()}"
    # a top-level folder named for this run: a stray one left on the host by anything else cannot fail the test
    top = f"/{marker}"
    writer = (f"import os\ntry:\n    os.makedirs('{top}/existent/path')\nexcept PermissionError:\n    pass\n"
              f"else:\n    raise SystemExit('made {top}')\nopen('/tmp/{marker}', 'w').write('x')\n"
              f"open(os.path.expanduser('~/{marker}'), 'w').write('x')\nopen('/dev/shm/{marker}', 'w').write('x')\n"
              "assert os.geteuid() != 0\n") + HONEST
    assert workers.run(writer, TESTS, _limits()).passed
    reader = (f"import os\nLEFT = [p for p in ('{top}', '/tmp/{marker}', os.path.expanduser('~/{marker}'), "
              f"'/dev/shm/{marker}') if os.path.exists(p)]\nassert not LEFT, LEFT\n") + HONEST
    assert workers.run(reader, TESTS, _limits()).passed
    assert not Path(top).exists() and not Path(f"/tmp/{marker}").exists()
    assert not Path(f"/dev/shm/{marker}").exists()


@ROOT_ONLY
def test_the_system_the_libraries_need_is_there_read_only(workers):
    program = ("import os, multiprocessing\nassert os.cpu_count() and os.path.exists('/proc/self/status')\n"
               "assert os.path.exists('/etc/localtime') and os.path.exists('/dev/urandom')\n"
               "try:\n    open('/usr/sotacheck-x', 'w')\nexcept OSError:\n    pass\nelse:\n    raise SystemExit('wrote /usr')\n"
               "lock = multiprocessing.Lock()\n") + HONEST
    assert workers.run(program, TESTS, _limits()).passed


def test_the_task_limit_is_read_from_bigcodebenchs_own_variable(monkeypatch):
    monkeypatch.delenv("BIGCODEBENCH_TIMEOUT_PER_TASK", raising=False)
    assert UnittestLimits().task_timeout_s == 241.0  # BigCodeBench's 240 s + 1 s
    monkeypatch.setenv("BIGCODEBENCH_TIMEOUT_PER_TASK", "30")
    assert UnittestLimits().task_timeout_s == 31.0
    for bad in ("0", "-5", "nan", "inf", "soon"):
        monkeypatch.setenv("BIGCODEBENCH_TIMEOUT_PER_TASK", bad)
        with pytest.raises(InputError, match="BIGCODEBENCH_TIMEOUT_PER_TASK"):
            UnittestLimits()


# Each sets ESCAPED where the jail let it through: the program is honest only then, so each must be judged failed.
_UNSEALED = ("import subprocess, sys\ndef unsealed(code):  # a fresh interpreter: no seal, only the jail\n"
             "    done = subprocess.run([sys.executable, '-I', '-c', code], capture_output=True, text=True, timeout=20)\n"
             "    return done.stdout.split() or ['-1']\n")
_LIBC = "import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); "
JAIL_ESCAPES = {
    "ptrace the runner": _UNSEALED + f"ESCAPED = unsealed('{_LIBC}print(libc.ptrace(16, %d, 0, 0))' % os.getppid())[0] == '0'\n",
    "unshare a user namespace": _UNSEALED + f"ESCAPED = unsealed('{_LIBC}print(libc.unshare(0x10000000))')[0] == '0'\n",
    "mount a tmpfs": _UNSEALED + f"ESCAPED = unsealed('{_LIBC}print(libc.mount(b\"x\", b\"/tmp\", b\"tmpfs\", 0, "
                                f"None))')[0] == '0'\n",
    "chroot out of the root": _UNSEALED + "ESCAPED = unsealed('import os; os.mkdir(\"c\"); os.chroot(\"c\"); "
                                          "os.chdir(\"../../../..\"); os.chroot(\".\"); "
                                          "print(len(os.listdir(\"/root\")))')[0] != '-1'\n",
    "open_by_handle_at": _UNSEALED + f"ESCAPED = unsealed('{_LIBC}buf = ctypes.create_string_buffer(136); buf[0] = 128; "
                                     "mount_id = ctypes.c_int(); "
                                     "libc.name_to_handle_at(-100, b\"/\", buf, ctypes.byref(mount_id), 0); "
                                     "print(libc.open_by_handle_at(-100, buf, 0))')[0] not in ('-1', '')\n",
    "the runner's root, cwd and /proc/1/root": "import os\nESCAPED = False\n"
        "for path in ('/proc/%d/root/' % os.getppid(), '/proc/%d/cwd/' % os.getppid(), '/proc/1/root/'):\n"
        "    try:\n        os.listdir(path)\n        ESCAPED = True\n    except OSError:\n        pass\n",
    "signal the runner": "import os\ntry:\n    os.kill(os.getppid(), 0)\n    ESCAPED = True\n"
                         "except OSError:\n    ESCAPED = False\n",
    "kill(-1) as the sandbox uid": "import os, signal\nos.kill(-1, signal.SIGKILL)\nESCAPED = False\n",
    "become root": "import os\ntry:\n    os.setuid(0)\n    ESCAPED = True\nexcept OSError:\n    ESCAPED = False\n",
    "write /proc/sys, /sys, sysrq": "ESCAPED = False\nfor path in ('/proc/sys/kernel/hostname', "
        "'/sys/kernel/mm/transparent_hugepage/enabled', '/proc/sysrq-trigger'):\n    try:\n"
        "        open(path, 'w').close()\n        ESCAPED = True\n    except OSError:\n        pass\n",
    "a set-uid binary in /usr": "import os\nESCAPED = not os.statvfs('/usr').f_flag & os.ST_NOSUID\n",
    "a root bigger than its cap": "import os\nroot = os.statvfs('/')\nESCAPED = root.f_blocks * root.f_frsize > 2100 * 2 ** 20\n",
    "a file named for BigCodeBench anywhere": "import os\nESCAPED = False\nfor where, dirs, files in os.walk('/'):\n"
        "    if where.startswith(('/proc', '/sys', '/dev')):\n        dirs[:] = []\n"
        "    ESCAPED = ESCAPED or any('bigcodebench' in name.lower() for name in files + dirs)\n",
}


@ROOT_ONLY
@pytest.mark.parametrize("label", sorted(JAIL_ESCAPES))
def test_the_jail_holds(workers, label):
    honest_if_out = HONEST.replace("def task_func(x):\n", "def task_func(x):\n    if not ESCAPED:\n        return 0\n")
    result = workers.run(JAIL_ESCAPES[label] + honest_if_out, TESTS, _limits())
    assert result.status == "failed" and all(t.status == "failed" for t in result.tests), (label, result)
    assert workers.run(HONEST, TESTS, _limits()).passed


# Holes: wrong programs judged passed (or a verdict bought) by the per-task judge as it stands, found by reading its
# source. Each is expected to fail until the judge refuses it (strict: a fix shows as XPASS, to move the program to
# TAMPERING). docs/bigcodebench.md says which classes it leaves open; "documented" below marks those.
_NO_OP_ASSERTIONS = ("import contextlib, unittest, unittest.mock\n"
                     "unittest.TestCase.assertEqual = lambda *a, **k: None\n"
                     "unittest.TestCase.assertRaises = lambda *a, **k: contextlib.nullcontext()\n"
                     "unittest.mock.NonCallableMock.assert_called_once = lambda self: None\n")
_FAKE_UNITTEST = ("import contextlib, types, unittest, unittest.mock\n"
                  "class _TestCase(unittest.TestCase):  # a real TestCase, its assertions no-ops\n"
                  "    def assertEqual(self, *a, **k): pass\n"
                  "    def assertRaises(self, *a, **k): return contextlib.nullcontext()\n"
                  "_FAKES = {'TestCase': _TestCase, 'patch': lambda *a, **k: (lambda f: lambda self: None)}\n")
# The hook's closure holds run_tests's frame and, next to it, the nonce: found in the process's own memory through
# MEMORY (an object with seek and read), then a passing record for every test on every pipe, and a clean exit.
_FORGE = r'''import os, struct, sys, types
def _memory_regions():
    for row in open("/proc/self/maps"):
        span, perms = row.split()[:2]
        low, high = (int(x, 16) for x in span.split("-"))
        if perms.startswith("rw") and high - low < 1 << 30:
            try:
                MEMORY.seek(low)
                yield low, MEMORY.read(high - low)
            except (OSError, ValueError):
                continue
def _read(address, size):
    MEMORY.seek(address)
    return MEMORY.read(size)
def _nonce(frame):
    needle = struct.pack("<QQ", id(types.CellType), id(frame))
    cells = []
    for low, data in _memory_regions():
        at = data.find(needle)
        while at >= 0:
            if (low + at) % 8 == 0:
                cells.append(low + at - 8)
            at = data.find(needle, at + 1)
    for cell in cells:
        pointer = struct.pack("<Q", cell)
        for low, data in _memory_regions():
            at = data.find(pointer)
            while at >= 0:
                try:
                    head = _read(struct.unpack("<Q", data[at + 8:at + 16])[0], 24)
                    if struct.unpack("<Q", head[8:16])[0] == id(types.CellType):
                        value = _read(struct.unpack("<Q", head[16:24])[0], 48)
                        if struct.unpack("<QQ", value[8:24]) == (id(bytes), 16):
                            return value[32:48]
                except (OSError, ValueError, struct.error):
                    pass
                at = data.find(pointer, at + 8)
    raise LookupError("no nonce")
def _pipe(fd):
    try:
        return os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:")
    except OSError:
        return False
_runner = sys._getframe(1)  # _load's; its caller is run_tests, whose frame the hook holds
_nonce_bytes = _nonce(_runner.f_back)
for _fd in [int(fd) for fd in os.listdir("/proc/self/fd") if int(fd) > 2 and _pipe(fd)]:
    for _index in range(_runner.f_back.f_locals["first"], len(_runner.f_locals["job"]["methods"])):
        try:
            os.write(_fd, f"{_nonce_bytes.hex()} {os.getpid()} {_index} ".encode() + b'{"status": "passed"}\n')
        except OSError:
            pass
os._exit(0)
'''
# Reads the nonce, the report pipe and the next index out of any frame up from ``frame`` that holds them (a hook's
# closure shows in its frame's f_locals), writes a passing record for every test and ends the process cleanly.
_STEAL = """import os, sys
from random import randint
def _steal(frame):
    while frame is not None:
        found = frame.f_locals
        nonce = found.get('hex_nonce') or (found['nonce'].hex() if type(found.get('nonce')) is bytes else None)
        if nonce and found.get('report_fd') is not None:
            first = found.get('expected', [0])[0]
            for index in range(first, first + 3):
                os.write(found['report_fd'], ('%s %d %d {"status": "passed"}\\n' % (nonce, os.getpid(), index)).encode())
            os._exit(0)
        frame = frame.f_back
"""
_PROC_MEM = "import ctypes\nctypes.CDLL(None).prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE: /proc/self/mem is ours again\n"
_UNION_MEMORY = '''import ctypes
class _Memory:  # a pointer's address set through a union: ctypes reads there with no audit event
    def seek(self, address):
        self.address = address
    def read(self, size):
        class Union(ctypes.Union):
            _fields_ = [("address", ctypes.c_size_t), ("pointer", ctypes.POINTER(ctypes.c_char * size))]
        union = Union()
        union.address = self.address
        return union.pointer.contents.raw
MEMORY = _Memory()
'''
TESTS_COUNT_AND_REGEX = '''import unittest

class TestCases(unittest.TestCase):
    def test_count(self):
        self.assertCountEqual(task_func(3), [1, 2, 3])

    def test_regex(self):
        self.assertRegex(str(task_func(2)), r"^\\[1, 2\\]$")
'''
TESTS_ALMOST_ALIAS_AND_SUBTEST = '''import unittest

class TestCases(unittest.TestCase):
    def test_almost(self):
        self.assertAlmostEqual(task_func(2), 0.5)

    def test_alias(self):
        self.assertEquals(task_func(4), 0.25)

    def test_sub(self):
        for n in (1, 5):
            with self.subTest(n=n):
                self.assertEqual(task_func(n), 1 / n)
'''
HOLES = {
    "the seal module's _run_method replaced (a module global run_tests looks up)":
        ("import _unittest_seal\n_unittest_seal._run_method = lambda *a: None\n", TESTS,
         "run_tests looks its helpers up in _unittest_seal's globals, which the program imports and rebinds"),
    "the seal module's _failure says passed":
        ("import _unittest_seal\n_unittest_seal._failure = lambda exc, stage: {'status': 'passed'}\n", TESTS,
         "run_tests looks its helpers up in _unittest_seal's globals, which the program imports and rebinds"),
    "the seal module's _changed silenced, the assertions no-ops":
        ("import _unittest_seal\n_unittest_seal._changed = lambda watched: None\n" + _NO_OP_ASSERTIONS, TESTS,
         "run_tests looks its helpers up in _unittest_seal's globals, which the program imports and rebinds"),
    "json's default encoder (the hook's dumps) says passed":
        ("import json\nclass _Encoder(json.JSONEncoder):\n    def encode(self, o):\n"
         "        return '{\"status\": \"passed\"}'\njson._default_encoder = _Encoder()\n", TESTS,
         "the hook's json.dumps uses json._default_encoder, a module global outside the watched machinery"),
    "the module's own __builtins__ with a class-building hook":
        ("import builtins\n_build = builtins.__build_class__\ndef _hook(func, name, *bases, **kw):\n"
         "    cls = _build(func, name, *bases, **kw)\n    for key in [k for k in vars(cls) if k.startswith('test')]:\n"
         "        setattr(cls, key, lambda self, *a: None)\n    return cls\n"
         "globals()['__builtins__'] = dict(vars(builtins), __build_class__=_hook)\n", TESTS,
         "the test module is executed in the program's namespace, whose __builtins__ the program replaced"),
    "the module's own __builtins__ with an __import__ that gives a fake unittest":
        (_FAKE_UNITTEST + "import builtins\n_import = builtins.__import__\n"
         "_fake, _fake_mock = types.ModuleType('unittest'), types.ModuleType('unittest.mock')\n"
         "_fake.TestCase, _fake_mock.patch = _FAKES['TestCase'], _FAKES['patch']\n"
         "def _imp(name, globals=None, locals=None, fromlist=(), level=0):\n"
         "    if name == 'unittest' and not fromlist:\n        return _fake\n"
         "    if name == 'unittest.mock' and fromlist:\n        return _fake_mock\n"
         "    return _import(name, globals, locals, fromlist, level)\n"
         "globals()['__builtins__'] = dict(vars(builtins), __import__=_imp)\n", TESTS,
         "the test module is executed in the program's namespace, whose __builtins__ the program replaced"),
    "unittest's module class swapped (its namespace unchanged)":
        (_FAKE_UNITTEST + "class _Module(types.ModuleType):\n    def __getattribute__(self, name):\n"
         "        return _FAKES[name] if name in _FAKES else super().__getattribute__(name)\n"
         "unittest.__class__ = _Module\nunittest.mock.__class__ = _Module\n", TESTS,
         "the machinery check compares vars(module), not type(module): a ModuleType subclass answers attribute reads"),
    "sys.modules rebound to a dict that hides a fake unittest":
        (_FAKE_UNITTEST + "import sys\n_real = {'unittest': unittest, 'unittest.mock': unittest.mock}\n"
         "_fake, _fake_mock = types.ModuleType('unittest'), types.ModuleType('unittest.mock')\n"
         "_fake.TestCase, _fake_mock.patch = _FAKES['TestCase'], _FAKES['patch']\n"
         "class _Liar(dict):\n    def get(self, name, default=None):\n"
         "        return _real.get(name) or dict.get(self, name, default)\n"
         "    def __setitem__(self, name, value):\n        pass\n"
         "sys.modules['unittest'], sys.modules['unittest.mock'] = _fake, _fake_mock\nsys.modules = _Liar(sys.modules)\n", TESTS,
         "_load restores unittest through the sys.modules attribute; the import system uses the interpreter's own dict"),
    "frames: the judge's snapshot of the machinery emptied, then the assertions no-ops":
        ("import sys\nsys._getframe(1).f_locals['machinery'].clear()\n" + _NO_OP_ASSERTIONS, TESTS,
         "documented (frames), but this reaches the judge's own snapshot, not only the test's objects"),
    "/proc/self/mem as //proc/self/mem after PR_SET_DUMPABLE: the nonce read and a report forged":
        (_PROC_MEM + "MEMORY = open('//proc/self/mem', 'rb', buffering=0)\n" + _FORGE, TESTS,
         "ctypes may call prctl, and the seal's /proc/*/mem check reads the path as written (//proc, a symlink, dir_fd)"),
    "/proc/self/mem by dir_fd after PR_SET_DUMPABLE: the nonce read and a report forged":
        (_PROC_MEM + "import os\nMEMORY = os.fdopen(os.open('mem', os.O_RDONLY, dir_fd=os.open('/proc/self', os.O_RDONLY)), "
         "'rb', buffering=0)\n" + _FORGE, TESTS,
         "ctypes may call prctl, and the seal's /proc/*/mem check reads the path as written (//proc, a symlink, dir_fd)"),
    "raw memory through a ctypes union's pointer: the nonce read and a report forged":
        (_UNION_MEMORY + _FORGE, TESTS, "documented (raw memory): shown here to work end to end"),
    "collections.Counter and re.compile replaced (assertCountEqual, assertRegex)":
        ("import collections, re\ncollections.Counter = lambda items: 1\nclass _Pattern:\n"
         "    def search(self, text):\n        return True\nre.compile = lambda *a, **k: _Pattern()\n"
         "def task_func(n):\n    return [0]\n", TESTS_COUNT_AND_REGEX,
         "unittest's assertions call modules outside the watched machinery (collections, re, difflib, pprint...)"),
    "the machinery's functions changed in place: assertAlmostEqual's defaults, the cells of assertEquals and subTest":
        ("import unittest\nunittest.TestCase.assertAlmostEqual.__defaults__ = (None, None, 1e300)  # delta\n"
         "unittest.TestCase.assertEquals.__closure__[0].cell_contents = lambda *a, **k: None\n"
         "def _swallow(self, msg=None, **params):\n    try:\n        yield\n    except Exception:\n        pass\n"
         "unittest.TestCase.subTest.__closure__[0].cell_contents = _swallow\ndef task_func(n):\n    return 7\n",
         TESTS_ALMOST_ALIAS_AND_SUBTEST,
         "the check compares bindings by identity; a function's __defaults__, __kwdefaults__ and closure cells "
         "change without a new binding (only __code__ is refused)"),
    # found 2026-12-05 by walking frames up from the program (f_back, f_globals, f_locals): each passed
    "frames: the job's test module swapped for one whose tests pass (f_locals)":
        ("import sys\n_f = sys._getframe()\nwhile _f is not None:\n    _job = _f.f_locals.get('job')\n"
         "    if type(_job) is dict and 'test' in _job:\n"
         "        _job['test'] = 'import unittest\\nclass TestCases(unittest.TestCase):\\n' + ''.join(\n"
         "            '    def %s(self): pass\\n' % m for m in _job['methods'])\n        break\n"
         "    _f = _f.f_back\n", TESTS, "_load read the job's test source after the program had run"),
    "frames: the judge's _run_method rebound in its module's globals (f_globals)":
        ("import sys\n_f = sys._getframe()\nwhile _f is not None:\n    if '_run_method' in _f.f_globals:\n"
         "        _f.f_globals['_run_method'] = lambda *a: None\n        break\n    _f = _f.f_back\n", TESTS,
         "run_tests looked its helpers up in the seal module's globals, which every judge frame exposes"),
    "frames: the seal's refusals emptied in its module's globals, then a trace function":
        ("import sys\n_f = sys._getframe()\nwhile _f is not None:\n    if '_REFUSED' in _f.f_globals:\n"
         "        _f.f_globals['_REFUSED'] = frozenset()\n        break\n    _f = _f.f_back\n"
         "sys.settrace(lambda *a: None)\n" + _NO_OP_ASSERTIONS, TESTS,
         "the hook read its refusals from the seal module's globals at each event"),
    # the hook's secret read from its frame by program code that runs while a hook runs (found 2026-12-05)
    "the nonce read from the hook's frame by a gc callback, then every report forged":
        (_STEAL + "import gc\ndef _cb(phase, info):\n    try:\n        _steal(sys._getframe(1))\n"
         "    except Exception:\n        pass\ngc.callbacks.append(_cb)\ngc.set_threshold(1)\n"
         "def task_func(x):\n    for n in range(2000):\n        try:\n            open('/nonexistent-%d' % n)\n"
         "        except OSError:\n            pass\n    return 0\n", TESTS,
         "the hook held the nonce in its closure and a collection it set off ran the program's callbacks"),
    "the nonce read from the hook's frame by a signal handler, then every report forged":
        (_STEAL + "import signal\ndef _h(signum, frame):\n    _steal(frame)\n"
         "signal.signal(signal.SIGALRM, _h)\nsignal.setitimer(signal.ITIMER_REAL, 0.0001, 0.0001)\n"
         "def task_func(x):\n    for _ in range(200000):\n        sys.audit('x.y')\n    return 0\n", TESTS,
         "a handler's frame argument is whatever frame ran, the hook's included, with no audit event"),
    "the nonce read from the hook's frame by another thread (sys._current_frames), then every report forged":
        (_STEAL + "import threading, time\ndef _poll():\n    me = threading.get_ident()\n    while True:\n"
         "        for ident, f in sys._current_frames().items():\n            if ident != me:\n"
         "                _steal(f)\nthreading.Thread(target=_poll, daemon=True).start()\n"
         "def task_func(x):\n    end = time.time() + 2\n    while time.time() < end:\n        sys.audit('x.y')\n"
         "    return 0\n", TESTS, "another thread's frames were readable while it ran the hook"),
    "the nonce read later through a traceback kept from a gc callback (tb_frame.f_back), then every report forged":
        (_STEAL + "import gc\n_KEPT = []\ndef _cb(phase, info):\n    if len(_KEPT) < 50:\n        try:\n"
         "            raise ValueError\n        except ValueError as exc:\n            _KEPT.append(exc)\n"
         "gc.callbacks.append(_cb)\ngc.set_threshold(1)\n"
         "def task_func(x):\n    for n in range(300):\n        try:\n            open('/nonexistent-%d' % n)\n"
         "        except OSError:\n            pass\n    for exc in _KEPT:\n        _steal(exc.__traceback__.tb_frame)\n"
         "    return 0\n", TESTS, "a frame made while a hook ran keeps the hook's frame, and its closure, as f_back"),
    "a C signal handler through ctypes (sigaction) that calls back into Python":
        ("import ctypes\nlibc = ctypes.CDLL(None)\nHANDLER = ctypes.CFUNCTYPE(None, ctypes.c_int)(lambda n: None)\n"
         "libc.signal(14, HANDLER)\n", TESTS,
         "a C handler calls the program at any instruction, a hook's included"),
    "frames: a thread that flips every verdict the runner's frames hold (sys._current_frames)":
        ("import sys, threading, time\ndef _loop():\n    me = threading.get_ident()\n    end = time.time() + 3\n"
         "    while time.time() < end:\n        for ident, f in sys._current_frames().items():\n"
         "            while ident != me and f is not None:\n                v = f.f_locals.get('verdict')\n"
         "                if type(v) is dict:\n                    v['status'] = 'passed'\n                f = f.f_back\n"
         "threading.Thread(target=_loop, daemon=True).start()\n", TESTS,
         "a verdict was a dict the report read after the program's threads could change it"),
}


# Still open (docs/bigcodebench.md, "What it does not protect against"): raw memory. The raw-memory forgery crashes
# today (SIGSEGV while it scans) but the class is open in principle, as documented.
OPEN_HOLES: frozenset[str] = frozenset()


@pytest.mark.parametrize("label", [pytest.param(label, marks=pytest.mark.xfail(strict=True, reason=HOLES[label][2]))
                                   if label in OPEN_HOLES else label for label in sorted(HOLES)])
def test_the_red_teams_programs_are_never_a_pass(workers, label):
    # each got through the judge as it stood before (its third field says how); closed since but OPEN_HOLES
    program, tests, _ = HOLES[label]
    program += "" if "def task_func" in program else WRONG_BODY
    result = workers.run(program, tests, _limits())
    assert result.status in ("failed", "crashed", "error"), (label, result)
    assert all(t.status != "passed" for t in result.tests), (label, result)


def test_an_honest_program_that_leaves_a_forked_child_passes(workers):
    lingering = "import os, time\nif os.fork() == 0:\n    time.sleep(60)\n    os._exit(0)\n" + HONEST
    started = time.monotonic()
    result = workers.run(lingering, TESTS, UnittestLimits(task_timeout_s=3))
    assert result.passed and time.monotonic() - started < 2.5, result


def test_a_real_time_signal_is_a_crash_not_the_judges_error(workers):
    result = workers.run("import os\nos.kill(os.getpid(), 40)\n" + WRONG_BODY, TESTS, _limits())
    assert result.status == "crashed", result


@ROOT_ONLY
def test_nothing_kept_in_a_keyring_reaches_the_next_task(workers):
    keyring = ("import subprocess, sys\nKEEP = '''import ctypes, sys\nlibc = ctypes.CDLL(None)\n"
               "libc.syscall.restype = ctypes.c_long\n"
               "ring = libc.syscall(250, 22, -1, -2)  # KEYCTL_GET_PERSISTENT, linked to the process keyring\n"
               "if sys.argv[1] == 'keep':\n    libc.syscall(248, b'user', b'sotacheck-left', b'x', 1, ring)\n"
               "else:\n    print(libc.syscall(250, 10, ring, b'user', b'sotacheck-left', 0) > 0)\n"
               "    libc.syscall(250, 7, ring)  # KEYCTL_CLEAR: leave nothing\n'''\n"
               "def keyring(what):\n    return subprocess.run([sys.executable, '-I', '-c', KEEP, what], capture_output=True, "
               "text=True).stdout.strip()\n")
    workers.run(keyring + "keyring('keep')\n" + HONEST, TESTS, _limits())
    reader = keyring + "ESCAPED = keyring('find') == 'True'\n" + HONEST.replace(
        "def task_func(x):\n", "def task_func(x):\n    if not ESCAPED:\n        return 0\n")
    assert workers.run(reader, TESTS, _limits()).status == "failed"


@ROOT_ONLY
def test_a_task_may_not_start_unbounded_processes(workers):
    unbounded = "import resource\nESCAPED = resource.getrlimit(resource.RLIMIT_NPROC)[0] in (resource.RLIM_INFINITY,) or " \
                "resource.getrlimit(resource.RLIMIT_NPROC)[0] > 4096\n"
    honest_if_out = HONEST.replace("def task_func(x):\n", "def task_func(x):\n    if not ESCAPED:\n        return 0\n")
    assert workers.run(unbounded + honest_if_out, TESTS, _limits()).status == "failed"


COIN = "import numpy as np\ndef task_func(x):\n    return int(np.random.randint(0, 2))\n"
COIN_TESTS = "import unittest\nclass TestCases(unittest.TestCase):\n    def test_heads(self):\n" \
             "        self.assertEqual(task_func(0), 0)\n"


def test_each_task_draws_fresh_random_numbers_from_a_preloaded_numpy() -> None:
    """numpy preloaded in the runner (as for BigCodeBench): a forked child would replay the runner's global
    generator, so a coin-flip program got one verdict however often it was judged (BigCodeBench/554's mutant:
    20 of 20 the same). Reseeded per child, 24 judgements of a fair coin are all alike with probability 2^-23."""
    pytest.importorskip("numpy")
    with UnittestWorkers(1, python=sys.executable, preload=("numpy.random",)) as judge:  # numpy 2 loads it lazily
        statuses = {judge.run(COIN, COIN_TESTS, _limits()).status for _ in range(24)}
    assert statuses == {"passed", "failed"}, statuses


# The frames class as a class: a program that walks the frames above its own (f_back) or every other thread's
# (sys._current_frames) and rewrites one thing they hold, the ``pick``-th in a fixed order of (frame, locals or
# globals, name): a container in their locals or globals (a dict emptied, given status "passed" or its first key
# removed; a list emptied or grown; a set emptied), a function of the judge's modules' globals (made a no-op, or one
# that answers "passed" or True), a frozenset or tuple there (emptied); at import, during a test, or from a thread
# all along; then makes the assertions no-ops. 72 picks x 3 ways x 3 moments = 648 programs (about 66 targets
# today, so each is hit): the seal before 2026-12-05 (its helpers and refusals in its module's globals, its snapshot
# and verdicts in dicts) passed 12 of them; none passes now.
_FRAME_WALKER = """import contextlib, sys, threading, time, unittest, unittest.mock
from random import randint
_NOOPS = (lambda *a, **k: None, lambda *a, **k: (("status", "passed"),), lambda *a, **k: True)
_MINE = frozenset(("_NOOPS", "_MINE", "_targets", "_rewrite", "_no_op_assertions", "_all_along", "task_func",
                   "randint"))
def _targets():
    if {when!r} == "thread":
        me = threading.get_ident()
        tops = [f for ident, f in sorted(sys._current_frames().items()) if ident != me]
    else:
        tops = [sys._getframe(2)]
    out, seen = [], set()
    for f in tops:
        while f is not None:
            for where, space in (("locals", f.f_locals), ("globals", f.f_globals)):
                for key in sorted(k for k in space if type(k) is str and not k.startswith("__") and k not in _MINE):
                    value = space[key]
                    if (id(space), key) in seen:
                        continue
                    seen.add((id(space), key))
                    if type(value) in (dict, list, set) or (where == "globals" and (
                            type(value) in (frozenset, tuple) or (callable(value) and not isinstance(value, type)))):
                        out.append((space, key, value))
            f = f.f_back
    return out
def _rewrite():
    found = _targets()
    if not found:
        return
    space, key, value = found[{pick} % len(found)]
    kind = {kind}
    if type(value) is dict:
        if kind == 0:
            value.clear()
        elif kind == 1:
            value["status"] = "passed"
        elif value:
            value.pop(next(iter(value)))
    elif type(value) is list:
        if kind == 1 and value:
            value.append(value[-1])
        else:
            value.clear()
    elif type(value) is set:
        value.clear()
    elif type(value) in (frozenset, tuple):
        space[key] = type(value)()
    else:
        space[key] = _NOOPS[kind]
def _no_op_assertions():
    unittest.TestCase.assertEqual = lambda *a, **k: None
    unittest.TestCase.assertRaises = lambda *a, **k: contextlib.nullcontext()
    unittest.mock.NonCallableMock.assert_called_once = lambda self: None
def _all_along():
    time.sleep(0.02)
    _rewrite()
if {when!r} == "import":
    _rewrite()
    _no_op_assertions()
elif {when!r} == "thread":
    threading.Thread(target=_all_along, daemon=True).start()
    time.sleep(0.05)
def task_func(x):
    if {when!r} == "test":
        _rewrite()
    _no_op_assertions()
    return 0
"""
_ALL_WALKS = [(pick, kind, when) for pick in range(72) for kind in range(3) for when in ("import", "test", "thread")]
# the fast tier: the first way of each rewrite, at import and during a test (5 of the old seal's 12 passes)
_WALKS = [pytest.param(*walk, id="-".join(map(str, walk)),
                       marks=() if walk[1] == 0 and walk[2] != "thread" else pytest.mark.slow) for walk in _ALL_WALKS]


@pytest.mark.parametrize(("pick", "kind", "when"), _WALKS)
def test_a_program_that_rewrites_what_the_judges_frames_hold_never_passes(workers, pick, kind, when):
    program = _FRAME_WALKER.format(pick=pick, kind=kind, when=when)
    result = workers.run(program, TESTS, _limits())
    assert result.status in ("failed", "crashed", "error"), (pick, kind, when, result)
    assert all(t.status != "passed" for t in result.tests), (pick, kind, when, result)


@pytest.mark.parametrize("extra", ['3 {"status": "passed"}', '0 {"status": "passed", "message": ["not", "text"]}',
                                   '0 {"status": "passed", "duration_s": 1e308}'])
def test_a_record_past_the_last_test_or_with_a_value_not_text_is_damaged(extra):
    """Defence behind the nonce: even a record that carries it (raw memory is still open) cannot report a test the
    judge did not ask for (the runner's lists of methods and verdicts would no longer pair up: it raised) or put
    anything but text in a verdict."""
    sys.path.insert(0, str(REPO / "reruns" / "sandbox" / "child"))
    try:
        Reports = __import__("_unittest_reports").Reports  # a child script's module, on the child folder's path
    finally:
        sys.path.pop(0)
    nonce, pid = b"\x01" * 16, 42
    prefix = f"{nonce.hex()} {pid} "
    reports = Reports(nonce, pid, 0, 3, 0.0)
    good = "".join(f'{prefix}{index} {{"status": "passed"}}\n' for index in range(3))
    reports.feed(good.encode())
    assert not reports.damaged and len(reports.verdicts) == 3
    bad = Reports(nonce, pid, 0, 3, 0.0)
    index, _, body = extra.partition(" ")
    lines = good if index == "3" else ""
    bad.feed((lines + f"{prefix}{index} {body}\n").encode())
    assert bad.damaged and len(bad.verdicts) == (3 if index == "3" else 0)
