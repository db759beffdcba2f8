"""Rigged values, as a class: a wrong program that returns a value whose class decides the test's comparison with
code of the program's own (``__eq__`` that always says ``True``, a ``str`` whose ``startswith`` does, a
``__class__`` that claims the expected type), made in any way and at any moment, is never judged passed
(``_unittest_classes.py``). Standard library only, so the fuzzer runs in ``make test``; on real BigCodeBench tasks
(a ``DataFrame`` whose ``equals``, an ``ndarray`` whose ``__array_function__``, says yes) in
``test_unittest_judge_bigcodebench.py``.

The fuzzer crosses 8 targets (the special method or the name a test's comparison calls) with 7 ways of making the
class (a ``class`` statement with a method or with a lambda, ``type(...)``, a metaclass, a subclass of a builtin
type, a ``functools.partial`` that does not bind as a method, an object of the program's own class as the method)
and 2 moments (when the program is imported, inside ``task_func`` while the test calls it): 112 programs, each
shown to make its target's test pass in a plain interpreter, as BigCodeBench's evaluator runs a task, where the
wrong program alone fails it. Before the check (2026-12-05) the judge passed every one of them."""

from __future__ import annotations

import itertools
import sys
import types

import pytest

from sotacheck.reruns.sandbox.unittest_judge import UnittestLimits, UnittestWorkers
from sotacheck.reruns.sandbox.unittest_sources import defined_test_methods

TESTS = '''import unittest

class TestCases(unittest.TestCase):
    def test_equal(self):
        self.assertEqual(task_func("equal"), [1, 2, 3])

    def test_compared_true(self):
        self.assertTrue(task_func("compared") == {"a": 1})

    def test_not_different(self):
        self.assertFalse(task_func("different") != (4, 5))

    def test_member(self):
        self.assertIn(7, task_func("member"))

    def test_almost(self):
        self.assertAlmostEqual(task_func("almost"), 0.25)

    def test_type(self):
        self.assertIsInstance(task_func("type"), frozenset)

    def test_attribute(self):
        self.assertTrue(task_func("attribute").is_integer())

    def test_prefix(self):
        self.assertTrue(task_func("prefix").startswith("abc"))
'''
HONEST = '''def task_func(kind):
    return {"equal": [1, 2, 3], "compared": {"a": 1}, "different": (4, 5), "member": [6, 7], "almost": 0.25,
            "type": frozenset(), "attribute": 2.0, "prefix": "abcd"}[kind]
'''
WRONG = '''def task_func(kind):
    return {"equal": [3, 2, 1], "compared": {"a": 2}, "different": (5, 4), "member": [6, 8], "almost": 0.5,
            "type": [], "attribute": 2.5, "prefix": "xbc"}[kind]
'''

# (the test's kind, the name its comparison calls, what the rigged method returns, the builtin type a subclass has,
# the test method)
TARGETS = (
    ("equal", "__eq__", "True", "list", "test_equal"),
    ("compared", "__eq__", "True", "dict", "test_compared_true"),
    ("different", "__ne__", "False", "tuple", "test_not_different"),
    ("member", "__contains__", "True", "list", "test_member"),
    ("almost", "__sub__", "0", "object", "test_almost"),
    ("type", "__class__", "frozenset", "object", "test_type"),
    ("attribute", "__getattr__", "(lambda *a: True)", "object", "test_attribute"),
    ("prefix", "startswith", "True", "str", "test_prefix"),
)
WAYS = ("a class statement with a method", "a class statement with a lambda", "type(...)", "a metaclass",
        "a subclass of a builtin type", "a partial that does not bind", "an object of its own class as the method")
MOMENTS = ("import", "call")

_PROGRAM = '''import functools
{wrong}
_wrong = task_func

def _rigged():
    kind, name, answer, base, way = {kind!r}, {name!r}, {answer}, {base}, {way!r}
    method = (lambda self, *args: answer) if name != "__getattr__" else (lambda self, key: answer)
    if way == "a class statement with a method":
        class Rigged(base):
            def special(self, *args):
                return answer
            vars()[name] = property(special) if name == "__class__" else special  # the class body's namespace
    elif way == "a class statement with a lambda":
        class Rigged(base):
            vars()[name] = property(method) if name == "__class__" else method
    elif way == "type(...)":
        Rigged = type("Rigged", (base,), {{name: property(method) if name == "__class__" else method}})
    elif way == "a metaclass":
        class Meta(type):
            pass
        Rigged = Meta("Rigged", (base,), {{name: property(method) if name == "__class__" else method}})
    elif way == "a subclass of a builtin type":
        Rigged = type("Rigged", (base,), {{name: property(method) if name == "__class__" else method}})
    elif way == "a partial that does not bind":
        unbound = functools.partial(lambda *args: answer)
        Rigged = type("Rigged", (base,), {{name: property(unbound) if name == "__class__" else unbound}})
    else:
        class Answers:
            def __call__(self, *args):
                return answer
        Rigged = type("Rigged", (base,), {{name: property(Answers()) if name == "__class__" else Answers()}})
    if base is str:
        return Rigged("xbc")
    return Rigged()

_made = _rigged() if {moment!r} == "import" else None

def task_func(kind):
    if kind == {kind!r}:
        return _made if _made is not None else _rigged()
    return _wrong(kind)
'''


def program(target: int, way: int, moment: int) -> str:
    kind, name, answer, base, _ = TARGETS[target]
    if way < 4 and base != "str":  # a class statement, type(...), a metaclass: on object (str: the method is str's)
        base = "object"
    return _PROGRAM.format(wrong=WRONG, kind=kind, name=name, answer=answer, base=base, way=WAYS[way],
                           moment=MOMENTS[moment])


_ALL = list(itertools.product(range(len(TARGETS)), range(len(WAYS)), range(len(MOMENTS))))
_CASES = [pytest.param(*case, id=f"{TARGETS[case[0]][0]}-{WAYS[case[1]]}-{MOMENTS[case[2]]}",
                       marks=() if case[2] == 1 or case[1] in (0, 2) else pytest.mark.slow) for case in _ALL]


@pytest.fixture(scope="module")
def workers():
    with UnittestWorkers(1, python=sys.executable) as judge:  # standard library only: no benchmark environment
        yield judge


def _limits() -> UnittestLimits:
    return UnittestLimits(task_timeout_s=20)


def test_the_honest_program_passes_and_the_wrong_one_fails_every_test(workers):
    assert [t.status for t in workers.run(HONEST, TESTS, _limits()).tests] == ["passed"] * len(TARGETS)
    assert [t.status for t in workers.run(WRONG, TESTS, _limits()).tests] == ["failed"] * len(TARGETS)


@pytest.mark.parametrize(("target", "way", "moment"), _CASES)
def test_a_program_whose_value_decides_the_comparison_never_passes(workers, target, way, moment):
    result = workers.run(program(target, way, moment), TESTS, _limits())
    assert [t.status for t in result.tests] == ["failed"] * len(TARGETS), (TARGETS[target], WAYS[way], result)
    method = TARGETS[target][4]
    verdict = next(t for t in result.tests if (t.message or "").startswith(f"{method}:"))  # run in the loader's order
    assert "a class the program made" in (verdict.message or ""), verdict


def _run_unsealed(source: str, method: str) -> bool:
    """The program and the test module in one fresh module, the test run by unittest: BigCodeBench's way."""
    module = types.ModuleType("__test__")
    exec(compile(source, "__test__.py", "exec"), vars(module))
    exec(compile(TESTS, "__test__.py", "exec"), vars(module))
    return module.TestCases(method).run().wasSuccessful()


@pytest.mark.parametrize(("target", "way", "moment"), _ALL)
def test_each_program_makes_its_targets_test_pass_where_nothing_checks(target, way, moment):
    """Not vacuous: in a plain interpreter each program makes the test of its target pass, where the wrong program
    alone fails it."""
    method = TARGETS[target][4]
    assert not _run_unsealed(WRONG, method)
    assert _run_unsealed(program(target, way, moment), method), (TARGETS[target], WAYS[way], MOMENTS[moment])


HONEST_CLASSES = {
    "a class with __init__ and __repr__": '''class Box:
    def __init__(self, value):
        self.value = value
    def __repr__(self):
        return f"Box({self.value!r})"
    def __str__(self):
        return "box"
''',
    "a handler class that overrides a library method the test does not name": '''import html.parser
class Parser(html.parser.HTMLParser):
    def handle_starttag(self, tag, attrs):
        pass
''',
    "a class made with type(...) holding data": '''Record = type("Record", (), {"size": 3, "__init__": lambda self: None})
''',
}


@pytest.mark.parametrize("label", sorted(HONEST_CLASSES))
def test_an_honest_program_with_classes_of_its_own_passes(workers, label):
    source = HONEST_CLASSES[label] + HONEST
    assert [t.status for t in workers.run(source, TESTS, _limits()).tests] == ["passed"] * len(TARGETS), label


def test_an_honest_program_judged_right_after_a_rigged_one_passes(workers):
    for target in range(len(TARGETS)):
        workers.run(program(target, 0, 0), TESTS, _limits())
        result = workers.run(HONEST, TESTS, _limits())
        assert [t.status for t in result.tests] == ["passed"] * len(TARGETS), (TARGETS[target], result)


def test_the_tests_line_up_with_the_targets():
    """One test method per target, each calling task_func with its target's kind."""
    assert sorted(target[4] for target in TARGETS) == list(defined_test_methods(TESTS))
    for kind, *_, method in TARGETS:
        body = TESTS.split(f"def {method}(")[1].split("def ")[0]
        assert f'task_func("{kind}")' in body, method


# The program's code inside a library's wrapper: unwrapped before it is judged (the test each makes pass).
WRAPPED = {
    "functools.lru_cache": ("test_not_different", '''import functools
class Rigged:
    __ne__ = functools.lru_cache(maxsize=None)(lambda self, other: False)
'''),
    "functools.cached_property": ("test_type", '''import functools
class Rigged:
    __class__ = functools.cached_property(lambda self: frozenset)
'''),
    "types.DynamicClassAttribute": ("test_type", '''import types
class Rigged:
    __class__ = types.DynamicClassAttribute(lambda self: frozenset)
'''),
    "functools.singledispatchmethod": ("test_not_different", '''import functools
class Rigged:
    __ne__ = functools.singledispatchmethod(lambda self, other: False)
'''),
    "a built-in type's method under another name": ("test_not_different", '''class Rigged(tuple):
    __ne__ = tuple.__eq__
'''),
}
_WRAPPED_TASK = '''
_wrong = task_func
def task_func(kind):
    if kind in ("different", "type"):
        return Rigged((5, 5)) if Rigged.__mro__[1] is tuple else Rigged()
    return _wrong(kind)
'''


@pytest.mark.parametrize("label", sorted(WRAPPED))
def test_the_programs_code_inside_a_library_wrapper_is_seen(workers, label):
    method, rigged = WRAPPED[label]
    source = WRONG + rigged + _WRAPPED_TASK
    assert not _run_unsealed(WRONG, method) and _run_unsealed(source, method), label  # not vacuous
    result = workers.run(source, TESTS, _limits())
    assert [t.status for t in result.tests] == ["failed"] * len(TARGETS), (label, result)
    verdict = next(t for t in result.tests if (t.message or "").startswith(f"{method}:"))
    assert "a class the program made" in (verdict.message or ""), verdict
