"""The supervisor and what a candidate process inherits from the launcher it is forked from.

Only what candidates need is imported before the launcher is forked: every such module is memory each
candidate process maps, has its page tables copied for at fork and unmapped at exit (about 0.1 ms per MB
per execution, bench/RESULTS.md), and the test side's modules (the test compiler, the compiled-test cache)
have no business there at all. And the tests, which run in the supervisor, cannot reach its protocol."""

from __future__ import annotations

from sotacheck.reruns.sandbox import SandboxLimits, execute

# The supervisor's own (the test rewrite's ``ast``, the cache's ``hashlib``), and heavy ones few programs use.
NOT_INHERITED = ("ast", "_rewrite", "_testcache", "_tester", "hashlib", "_hashlib", "tempfile", "shutil",
                 "datetime", "statistics", "random", "selectors")
# What most programs import, found already loaded.
PRELOADED = ("typing", "re", "math", "collections", "itertools", "functools", "heapq", "bisect", "string")

PROGRAM = """import sys
def loaded(names):
    return [name for name in names if name in sys.modules]
"""


def test_the_candidate_process_holds_no_test_side_module_and_the_common_ones_preloaded() -> None:
    result = execute(PROGRAM, [f"assert loaded({list(NOT_INHERITED)!r}) == []",
                               f"assert loaded({list(PRELOADED)!r}) == {list(PRELOADED)!r}"],
                     entry_point="loaded", limits=SandboxLimits(test_timeout_s=5))
    assert result.passed, (result.status, result.message)


def test_a_program_importing_a_module_not_preloaded_still_works() -> None:
    program = "import hashlib, datetime, statistics\ndef digest(text):\n    return hashlib.md5(text.encode()).hexdigest()\n"
    result = execute(program, ["assert digest('abc') == '900150983cd24fb0d6963f7d28e17f72'"], entry_point="digest",
                     limits=SandboxLimits(test_timeout_s=5))
    assert result.passed, (result.status, result.message)


def test_a_test_that_prints_or_reads_stdin_leaves_the_supervisor_protocol_intact() -> None:
    """The tests run in the supervisor, whose job and reply pipes were its stdin and stdout: a printing
    test used to corrupt the reply (every later execution an ``error``)."""
    limits = SandboxLimits(test_timeout_s=5)
    printed = execute("def f():\n    return 1\n", ["print('a test that prints')\nassert f() == 1"], entry_point="f",
                      limits=limits)
    assert printed.status == "passed", (printed.status, printed.message)
    reads = execute("def f():\n    return 1\n", ["line = input()\nassert f() == 1"], entry_point="f", limits=limits)
    assert (reads.status, reads.exception_type) == ("error", "EOFError"), (reads.status, reads.exception_type)
    after = execute("def f():\n    return 1\n", ["assert f() == 1"], entry_point="f", limits=limits)
    assert after.status == "passed"


def test_arguments_reach_the_candidate_with_their_exact_types() -> None:
    """Calls whose values marshal keeps exactly go with marshal, the others as tagged JSON: the candidate
    sees the same types either way (references: the types as written in the test)."""
    program = ("def kinds(*args, **kwargs):\n    return [type(a).__name__ for a in args] + "
               "[type(v).__name__ for _, v in sorted(kwargs.items())]\n"
               "def inner(x):\n    return [type(x[0]).__name__, type(x[0][0]).__name__, type(list(x[1])[0]).__name__]\n")
    tests = [
        "assert kinds(1, True, 1.5, 2j, 's', b'b', (1,), [1], {1: 2}, {1}, frozenset(), None, 10 ** 40) == "
        "['int', 'bool', 'float', 'complex', 'str', 'bytes', 'tuple', 'list', 'dict', 'set', 'frozenset', 'NoneType', 'int']",
        "import collections, fractions\nassert kinds(collections.OrderedDict(), collections.Counter('ab'), bytearray(b'x'), "
        "range(3), fractions.Fraction(1, 3), a=collections.deque([1])) == "
        "['OrderedDict', 'Counter', 'bytearray', 'range', 'Fraction', 'deque']",
        "assert inner([(1, 2), {frozenset({3})}]) == ['tuple', 'int', 'frozenset']",
        "class S(str):\n    pass\nkinds(S('x'))",  # a test's own class is not data, even a subclass of str
    ]
    result = execute(program, tests, entry_point="kinds", limits=SandboxLimits(test_timeout_s=5),
                     names=("inner",))
    assert [t.status for t in result.tests] == ["passed"] * 3 + ["error"], [(t.status, t.message) for t in result.tests]
    assert "a value of type 'S' cannot be sent to the candidate" in (result.tests[3].message or "")
