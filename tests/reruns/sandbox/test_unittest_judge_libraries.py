"""The libraries the tests compare with, as a class: a wrong program that rebinds a library function or method the
test module uses (``np.allclose = lambda *a, **k: True``, ``DataFrame.equals``), by any way and at any moment,
is never judged passed (``_unittest_seal.track``). Standard library only, so the fuzzer runs in ``make test``; on
real BigCodeBench tasks, with numpy and pandas, in ``test_unittest_judge_bigcodebench.py``.

The fuzzer crosses 9 targets (a module function, a class's own method, a method a subclass inherits, a property,
a special method called implicitly by ``==``) with 5 ways (rebinding the attribute, writing into the namespace's
``__dict__``, deleting and adding it again, shadowing it on the class the test's object has, swapping the module's
class for one that answers the name) and 3 moments (when the program is imported, while the test calls it, from a
thread that waits for the test): 135 programs, each shown to make its target's test pass in a plain interpreter.
Before the seal watched the libraries (2026-12-05), the judge passed them too."""

from __future__ import annotations

import itertools
import subprocess
import sys

import pytest

from sotacheck.reruns.sandbox.unittest_judge import UnittestLimits, UnittestWorkers
from sotacheck.reruns.sandbox.unittest_sources import watched_libraries

# Every test compares with a library binding; task_func's wrong answer (the honest one is in HONEST) fails each.
TESTS = '''import unittest
import fnmatch
import fractions
import json
import os.path
import pathlib
import statistics
import textwrap
from ipaddress import IPv4Address
from shlex import quote

class TestCases(unittest.TestCase):
    def test_fnmatch(self):
        self.assertTrue(fnmatch.fnmatch(task_func("name"), "*.csv"))

    def test_fraction_equality(self):
        self.assertTrue(fractions.Fraction(task_func("fraction")) == fractions.Fraction(1, 3))

    def test_json(self):
        self.assertTrue(json.loads(task_func("json")) == {"a": 1})

    def test_isfile(self):
        self.assertTrue(os.path.isfile(task_func("file")))

    def test_path_suffix(self):
        self.assertTrue(pathlib.Path(task_func("path")).match("*.txt"))

    def test_median(self):
        self.assertTrue(statistics.median(task_func("numbers")) == 2)

    def test_dedent(self):
        self.assertTrue(textwrap.dedent(task_func("text")) == "ab")

    def test_private(self):
        self.assertTrue(IPv4Address(task_func("address")).is_private)

    def test_quote_length(self):
        self.assertTrue(len(quote(task_func("word"))) == 5)
'''
HONEST = '''import os, tempfile
def task_func(kind):
    if kind == "file":
        handle, path = tempfile.mkstemp()
        os.close(handle)
        return path
    return {"name": "a.csv", "fraction": "1/3", "json": '{"a": 1}', "path": "b.txt", "numbers": [1, 2, 3],
            "text": "  ab", "address": "10.0.0.1", "word": "a b"}[kind]
'''
WRONG = '''def task_func(kind):
    return {"name": "a.txt", "fraction": "1/2", "json": '{"a": 2}', "file": "/nonexistent", "path": "b.csv",
            "numbers": [1, 5, 9], "text": "xy", "address": "8.8.8.8", "word": "ab"}[kind]
'''

# (module, attribute path, a replacement that makes its test pass, a class whose instances the test uses: the
# way "shadowed" sets the attribute there when it is inherited from the holder; the test that uses it)
TARGETS = (
    ("fnmatch", "fnmatch", "lambda *a, **k: True", None, "test_fnmatch"),
    ("fractions", "Fraction.__eq__", "lambda self, other: True", None, "test_fraction_equality"),
    ("json", "loads", "lambda *a, **k: {'a': 1}", None, "test_json"),
    ("os.path", "isfile", "lambda *a, **k: True", None, "test_isfile"),
    ("pathlib", "PurePath.match", "lambda self, pattern: True", "PosixPath", "test_path_suffix"),
    ("statistics", "median", "lambda data: 2", None, "test_median"),
    ("textwrap", "dedent", "lambda text: 'ab'", None, "test_dedent"),
    ("ipaddress", "IPv4Address.is_private", "property(lambda self: True)", None, "test_private"),
    ("shlex", "quote", "lambda s: 'xxxxx'", None, "test_quote_length"),
)
WAYS = ("rebound", "written into __dict__", "deleted and added again", "shadowed on the instance's class",
        "the module's class swapped")
MOMENTS = ("import", "test", "thread")

_PROGRAM = '''import importlib, sys, threading, time, types
{wrong}
_module = importlib.import_module({module!r})
_path = {path!r}.split(".")
_fake = {fake}

def _holder():
    holder = _module
    for part in _path[:-1]:
        holder = getattr(holder, part)
    return holder

def _tamper():
    holder, name, way = _holder(), _path[-1], {way!r}
    if way == "rebound":
        setattr(holder, name, _fake)
    elif way == "written into __dict__":
        if isinstance(holder, type):
            setattr(holder, name, _fake)  # a class's __dict__ is a read-only proxy: the way is the setattr
        else:
            holder.__dict__[name] = _fake
    elif way == "deleted and added again":
        if name in vars(holder):
            delattr(holder, name)
        setattr(holder, name, _fake)
    elif way == "shadowed on the instance's class":
        target = getattr(_module, {instance_class!r}) if {instance_class!r} else holder
        setattr(target, name, _fake)
    elif way == "the module's class swapped":
        if isinstance(holder, type):
            setattr(holder, name, _fake)
        else:
            fake = _fake
            class Answering(types.ModuleType):
                def __getattribute__(self, key):
                    return fake if key == name else types.ModuleType.__getattribute__(self, key)
            holder.__class__ = Answering

_task_func = task_func
def task_func(kind):
    if {moment!r} == "test":
        _tamper()
    return _task_func(kind)

if {moment!r} == "import":
    _tamper()
elif {moment!r} == "thread":
    def _later():
        while "TestCases" not in vars(sys.modules.get("__test__", types)):
            time.sleep(0.001)
        _tamper()
    threading.Thread(target=_later, daemon=True).start()
'''


def program(target: int, way: int, moment: int) -> str:
    module, path, fake, instance_class, _ = TARGETS[target]
    return _PROGRAM.format(wrong=WRONG, module=module, path=path, fake=fake, way=WAYS[way],
                           instance_class=instance_class or "", moment=MOMENTS[moment])


_ALL = list(itertools.product(range(len(TARGETS)), range(len(WAYS)), range(len(MOMENTS))))
# the fast tier: every target and way at import, every target rebound during the test
_CASES = [pytest.param(*case, id=f"{TARGETS[case[0]][0]}.{TARGETS[case[0]][1]}-{WAYS[case[1]]}-{MOMENTS[case[2]]}",
                       marks=() if case[2] == 0 or case[1] == 0 else pytest.mark.slow) for case in _ALL]


@pytest.fixture(scope="module", params=["imported by the task", "preloaded by the runner"])
def workers(request):
    preload = () if request.param == "imported by the task" else tuple(t[0] for t in TARGETS)
    with UnittestWorkers(1, python=sys.executable, preload=preload) as judge:
        yield judge


def _limits() -> UnittestLimits:
    return UnittestLimits(task_timeout_s=20)


def test_the_honest_program_passes_and_the_wrong_one_fails_every_test(workers):
    assert [t.status for t in workers.run(HONEST, TESTS, _limits()).tests] == ["passed"] * len(TARGETS)
    assert [t.status for t in workers.run(WRONG, TESTS, _limits()).tests] == ["failed"] * len(TARGETS)


def test_what_is_watched_comes_from_the_tests_source():
    modules, names = watched_libraries(TESTS, "import numpy as np\nfrom pandas.testing import assert_frame_equal\n")
    assert {"os", "os.path", "ipaddress", "ipaddress.IPv4Address", "numpy", "pandas", "pandas.testing",
            "pandas.testing.assert_frame_equal"} <= set(modules)
    assert {"fnmatch", "Fraction", "loads", "isfile", "match", "median", "is_private", "IPv4Address", "quote",
            "assertTrue"} <= set(names)
    assert "np" not in names  # the prompt's imports name modules to watch, not names the tests use
    assert watched_libraries("def broken(:\n") == ((), ())


@pytest.mark.parametrize(("target", "way", "moment"), _CASES)
def test_a_program_that_rebinds_a_library_the_tests_compare_with_never_passes(workers, target, way, moment):
    result = workers.run(program(target, way, moment), TESTS, _limits())
    passed = [t.index for t in result.tests if t.status == "passed"]
    assert passed == [], (TARGETS[target][:2], WAYS[way], MOMENTS[moment], result)


_UNSEALED = """import sys, types, unittest
module = types.ModuleType("__test__")
sys.modules["__test__"] = module
exec(compile(sys.argv[1], "__test__.py", "exec"), vars(module))
exec(compile(sys.argv[2], "__test__.py", "exec"), vars(module))
outcome = module.TestCases(sys.argv[3]).run()
sys.exit(0 if outcome.wasSuccessful() else 1)
"""


@pytest.mark.parametrize(("target", "way"), list(itertools.product(range(len(TARGETS)), range(len(WAYS)))))
def test_each_program_makes_its_targets_test_pass_where_nothing_watches(target, way):
    """Not vacuous: run in a plain interpreter, as BigCodeBench's evaluator runs a task (the program and the test
    module in one module), each program at import makes the test of its target pass, where the wrong program alone
    fails it."""
    test = TARGETS[target][4]
    alone = subprocess.run([sys.executable, "-c", _UNSEALED, WRONG, TESTS, test], capture_output=True, timeout=60)
    tampered = subprocess.run([sys.executable, "-c", _UNSEALED, program(target, way, 0), TESTS, test],
                              capture_output=True, text=True, timeout=60)
    assert (alone.returncode, tampered.returncode) == (1, 0), (TARGETS[target][:2], WAYS[way], tampered.stderr[-2000:])


@pytest.mark.parametrize("way", range(len(WAYS)), ids=WAYS)
def test_an_honest_program_judged_right_after_a_tampering_one_passes(workers, way):
    """The same runner (one worker), a library rebound in the task before: nothing of it reaches the next task."""
    for target in range(len(TARGETS)):
        workers.run(program(target, way, 0), TESTS, _limits())
        result = workers.run(HONEST, TESTS, _limits())
        assert [t.status for t in result.tests] == ["passed"] * len(TARGETS), (TARGETS[target][:2], WAYS[way], result)
