"""Suspect tests: a benchmark's own tests that accept a cheap wrong program (``sotacheck judge --suspect-tests``).

For each function problem the real judge runs wrong programs that no correct solution resembles, and lists the
problems whose hidden tests pass any of them, with the program that passed:

* **constants**: a function returning ``None``, ``0``, ``1``, ``-1``, ``True``, ``False``, ``""``, ``[]``,
  ``()``, ``{}`` or ``0.0`` whatever its arguments (an empty body is the ``None`` one), and each literal a
  test compares the result with (``assert f(4, 8) == 2``: ``return 2``), up to eight of them;
* **identity**: returning its first argument; **input echoed**: returning all its arguments (one argument:
  as ``str``);
* **canonical, perturbed**: the canonical solution with its return value changed (an int or float plus one,
  a bool negated, a str with a character more, a list, tuple or set with its first element dropped or
  ``0`` added to an empty one, a dict with a key more, ``None`` made ``0``);
* **canonical, input mutated** (only where the prompt forbids changing the input, HumanEval/88's "don't
  change the given array"): the canonical solution that also reverses each list argument in place;
* **canonical, as complex**: the canonical result as a ``complex`` where it is an int or float (and an
  exception where it is not): HumanEval/13 accepts ``complex(gcd, 0)``; tests that compare numbers with
  ``==`` cannot tell the type.

Found without running anything: tests that call the entry point by name inside ``check(candidate)``, which
compare the candidate with itself (three of HumanEval/33's asserts).

For each ``unittest`` problem (BigCodeBench: a ``TestCases`` class, judged by the unittest judge as any completion
is, calibrated), the analogous programs, each after the task's own imports:

* **constants**: the entry point returning each of the constants above, an empty ``pandas.DataFrame``,
  ``pandas.Series`` or ``numpy`` array, an empty matplotlib ``Axes``, an empty DataFrame with an empty Axes (the
  ``(df, ax)`` pair many tasks return), and each literal a test compares with (``self.assertEqual(x, 5)``), up to
  four;
* **stub that raises**: ``raise ValueError``, whatever its arguments;
* **identity**: returning its first argument;
* **canonical, perturbed**: the canonical solution with its result changed as above, and also: a DataFrame or
  Series with its last row dropped (a column or a row added to an empty one), a numeric ``numpy`` array or scalar
  plus one, a tuple or dict with its first element or value that can be changed changed, NaN made ``0.0``. A
  task whose canonical solution returns ``None`` (or an object this audit does not change: an ``Axes``, a
  figure) has no such program: the perturbed one raises.

Which program each kind of problem gets is one builder per kind (:data:`BUILDERS`); a kind without one (the
stdin programs of APPS and CodeContests) is not audited.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sotacheck.core import pyast
from sotacheck.reruns.benchmarks.problem import Dataset, Problem

if TYPE_CHECKING:
    from sotacheck.reruns.sandbox.pool import SandboxPool

CONSTANTS = ("None", "0", "1", "-1", "True", "False", '""', "[]", "()", "{}", "0.0")
_FORBIDS_MUTATION = re.compile(r"(don'?t|do not|never|without) (change|chang|modify|modif|mutat)", re.IGNORECASE)
_PERTURB = '''
def _sotacheck_perturbed(value):
    if type(value) is bool:
        return not value
    if type(value) in (int, float):
        return value + 1
    if type(value) is str:
        return value + "x"
    if type(value) in (list, tuple):
        return value[1:] if value else type(value)([0])
    if type(value) is set:
        return set(list(value)[1:]) if value else {0}
    if type(value) is dict:
        return {**value, "_sotacheck": 0}
    if value is None:
        return 0
    raise TypeError("a result this audit does not change")
'''
# A unittest task's result: also the data-science types, a tuple or dict changed in one element, never ``None``.
_PERTURB_OBJECT = _PERTURB + '''
def _sotacheck_perturbed_object(value):
    import numbers
    kind = (type(value).__module__.split(".")[0], type(value).__name__)
    if value is None:
        raise TypeError("the task returns nothing")
    if kind == ("pandas", "DataFrame"):
        return value.iloc[:-1] if len(value) else value.assign(_sotacheck=0)
    if kind == ("pandas", "Series"):
        return value.iloc[:-1] if len(value) else type(value)([0])
    if kind == ("numpy", "ndarray"):
        if value.size and value.dtype.kind == "b":
            return ~value
        if value.size and value.dtype.kind in "iufc":
            return value + 1
        return value[1:] if len(value) else __import__("numpy").zeros(1)
    if kind == ("numpy", "bool_"):
        return not value
    if isinstance(value, float) and value != value:
        return 0.0
    if isinstance(value, numbers.Number) and not isinstance(value, bool):
        return value + 1
    if type(value) is tuple or type(value) is dict:
        keys = range(len(value)) if type(value) is tuple else list(value)
        for key in keys:
            try:
                changed = _sotacheck_perturbed_object(value[key])
            except Exception:
                continue
            if type(value) is dict:
                return {**value, key: changed}
            return value[:key] + (changed,) + value[key + 1:]
    return _sotacheck_perturbed(value)
'''
# What a unittest task's entry point returns besides :data:`CONSTANTS` (the label, the expression).
OBJECT_CONSTANTS = (
    ("pd.DataFrame()", "__import__('pandas').DataFrame()"),
    ("pd.Series()", "__import__('pandas').Series(dtype=float)"),
    ("np.array([])", "__import__('numpy').array([])"),
    ("an empty Axes", "__import__('matplotlib.pyplot').pyplot.subplots()[1]"),
    ("(pd.DataFrame(), an empty Axes)",
     "(__import__('pandas').DataFrame(), __import__('matplotlib.pyplot').pyplot.subplots()[1])"),
)
# unittest assertions whose two arguments are compared for equality: a literal among them is a result to try
_EQUALITY_ASSERTIONS = frozenset(("assertEqual", "assertEquals", "assertIs", "assertAlmostEqual", "assertListEqual",
                                  "assertTupleEqual", "assertDictEqual", "assertSetEqual", "assertCountEqual"))


@dataclass(frozen=True)
class WrongProgram:
    """One cheap wrong program for a problem: its kind, a short label and the completion judged."""

    kind: str
    label: str
    completion: str


@dataclass(frozen=True)
class Suspect:
    """A problem whose hidden tests accepted a wrong program (or that compare the candidate with itself)."""

    problem_id: str
    kind: str
    program: str


@dataclass(frozen=True)
class SuspectReport:
    """The audit of one dataset's tests: the suspects, in the dataset's order, and how many programs ran."""

    dataset: str
    problems: int
    programs_run: int
    suspects: tuple[Suspect, ...]

    def as_dict(self) -> dict[str, object]:
        return {"dataset": self.dataset, "problems": self.problems, "programs_run": self.programs_run,
                "suspects": [{"task_id": s.problem_id, "kind": s.kind, "program": s.program} for s in self.suspects]}


def _parameters(problem: Problem) -> list[str] | None:
    """The entry point's parameter names, from the prompt or the canonical solution."""
    for source in (problem.prompt, f"{problem.prompt}{problem.canonical_solution or ''}", problem.canonical_solution or ""):
        try:
            tree = pyast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == problem.entry_point:
                return [a.arg for a in node.args.posonlyargs + node.args.args]
    return None


def _function(problem: Problem, body: str) -> str:
    """A whole program defining only the entry point, with ``body`` (``args``: its arguments as a tuple)."""
    return f"def {problem.entry_point}(*args, **kwargs):\n    {body}\n"


def _wrapping(problem: Problem, body: str, prelude: str = "") -> str | None:
    """The canonical solution with the entry point wrapped: ``body`` sees ``args`` and ``_canonical``. A
    unittest problem's canonical solution is already the whole program."""
    if not problem.canonical_solution:
        return None
    from sotacheck.reruns.sandbox.completion import assemble_program

    canonical = (problem.canonical_solution if problem.kind == "unittest"
                 else assemble_program(problem.prompt, problem.canonical_solution, problem.entry_point))
    return (f"{canonical}\n{prelude}\n_sotacheck_canonical = {problem.entry_point}\n\n"
            f"def {problem.entry_point}(*args, **kwargs):\n    {body}\n")


def _test_nodes(problem: Problem) -> Iterator[ast.AST]:
    """Every syntax node of the problem's hidden tests (a test that does not parse has none)."""
    for test in problem.hidden_tests:
        try:
            yield from ast.walk(pyast.parse(test))
        except SyntaxError:
            continue


def _compared(node: ast.AST) -> list[ast.expr]:
    """What ``node`` compares a result with: the right of ``==``, or both arguments of an equality assertion
    (``self.assertEqual(result, 5)``)."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq):
        return [node.comparators[0]]
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in _EQUALITY_ASSERTIONS and len(node.args) >= 2):
        return [node.args[1], node.args[0]]
    return []


def _compared_literals(problem: Problem, most: int = 8) -> list[str]:
    """The literals the tests compare a result with, as source, distinct, in order."""
    found: list[str] = []
    for node in _test_nodes(problem):
        for side in _compared(node):
            try:
                value = pyast.literal_eval(side)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
            text = repr(value)
            if text not in found and text not in CONSTANTS and len(text) <= 200:
                found.append(text)
                if len(found) == most:
                    return found
    return found


WrongProgramBuilder = Callable[[Problem], Iterator[WrongProgram]]
BUILDERS: dict[str, WrongProgramBuilder] = {}


def _builds(kind: str) -> Callable[[WrongProgramBuilder], WrongProgramBuilder]:
    """Register the builder of a kind of problem's wrong programs."""
    def register(builder: WrongProgramBuilder) -> WrongProgramBuilder:
        BUILDERS[kind] = builder
        return builder
    return register


def wrong_programs(problem: Problem) -> Iterator[WrongProgram]:
    """The cheap wrong programs for one problem, by its kind (module docstring); none for a kind not audited."""
    builder = BUILDERS.get(problem.kind)
    return builder(problem) if builder is not None else iter(())


@_builds("function")
def _function_programs(problem: Problem) -> Iterator[WrongProgram]:
    for constant in (*CONSTANTS, *_compared_literals(problem)):
        yield WrongProgram("constant", f"return {constant}", _function(problem, f"return {constant}"))
    parameters = _parameters(problem)
    if parameters:
        yield WrongProgram("identity", "return the first argument", _function(problem, "return args[0]"))
        echo = "return str(args[0])" if len(parameters) == 1 else "return args"
        yield WrongProgram("input echoed", echo, _function(problem, echo))
    perturbed = _wrapping(problem, "return _sotacheck_perturbed(_sotacheck_canonical(*args, **kwargs))", _PERTURB)
    if perturbed is not None:
        yield WrongProgram("canonical, perturbed", "canonical result changed", perturbed)
    if _FORBIDS_MUTATION.search(problem.prompt):
        mutated = _wrapping(problem, "result = _sotacheck_canonical(*args, **kwargs)\n"
                                     "    for arg in args:\n        if type(arg) is list:\n            arg.reverse()\n"
                                     "    return result")
        if mutated is not None:
            yield WrongProgram("canonical, input mutated", "canonical result, each list argument reversed in place",
                               mutated)
    as_complex = _wrapping(problem, "value = _sotacheck_canonical(*args, **kwargs)\n"
                                    "    if type(value) not in (int, float):\n        raise TypeError('not a number')\n"
                                    "    return complex(value, 0)")
    if as_complex is not None:
        yield WrongProgram("canonical, as complex", "complex(canonical result, 0)", as_complex)


@_builds("unittest")
def _unittest_programs(problem: Problem) -> Iterator[WrongProgram]:
    constants = [(text, text) for text in (*CONSTANTS, *_compared_literals(problem, most=4))]
    for label, expression in (*constants, *OBJECT_CONSTANTS):
        yield WrongProgram("constant", f"return {label}", _function(problem, f"return {expression}"))
    yield WrongProgram("stub that raises", "raise ValueError", _function(problem, "raise ValueError('a stub')"))
    if _parameters(problem):
        yield WrongProgram("identity", "return the first argument", _function(problem, "return args[0]"))
    perturbed = _wrapping(problem, "return _sotacheck_perturbed_object(_sotacheck_canonical(*args, **kwargs))",
                          _PERTURB_OBJECT)
    if perturbed is not None:
        yield WrongProgram("canonical, perturbed", "canonical result changed", perturbed)


def self_comparing(problem: Problem) -> bool:
    """Whether a test calls the entry point by name inside a function that takes the candidate as an argument
    (it then compares the candidate with itself). Only a function problem's tests take the candidate so."""
    if problem.kind != "function":
        return False
    for node in _test_nodes(problem):
        if isinstance(node, ast.FunctionDef) and node.args.args and node.name != problem.entry_point:
            names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
            if problem.entry_point in names and node.args.args[0].arg in names:
                return True
    return False


def audit_dataset(pool: SandboxPool, data: Dataset) -> SuspectReport:
    """Run every wrong program of every problem of ``data`` of a kind with a builder (:data:`BUILDERS`) through
    ``pool`` (a unittest problem: the unittest judge's runners, ``pool.workers`` of them)."""
    from sotacheck.reruns.sandbox.submission import judge_hidden

    problems = [p for p in data.problems if p.kind in BUILDERS]
    jobs = [(p, w) for p in problems for w in wrong_programs(p)]
    verdicts = [result.passed for result in pool.map(lambda job: judge_hidden(pool, job[0], job[1].completion), jobs)]
    suspects: dict[tuple[str, str], Suspect] = {}
    for (problem, wrong), passed in zip(jobs, verdicts, strict=True):
        key = (problem.id, wrong.kind)
        if passed and key not in suspects:
            suspects[key] = Suspect(problem.id, wrong.kind, wrong.label)
    for problem in problems:
        if self_comparing(problem):
            suspects[(problem.id, "self-comparison")] = Suspect(
                problem.id, "self-comparison", f"a test calls {problem.entry_point} by name: the candidate against itself")
    order = {p.id: index for index, p in enumerate(problems)}
    rows = sorted(suspects.values(), key=lambda s: (order[s.problem_id], s.kind))
    return SuspectReport(data.name, len(problems), len(jobs), tuple(rows))
