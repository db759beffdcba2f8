"""The unittest judge on real BigCodeBench tasks in the benchmark's own environment (``make setup-bigcodebench``):
canonical solutions pass, a calibrated wrong program fails, the judge through ``judge_hidden`` as every pipeline
calls it. Slow (the runner imports pandas, scikit-learn...), and skipped where the environment is absent."""

from __future__ import annotations

import subprocess
import tempfile

import pytest

from sotacheck.reruns.benchmarks import load_dataset
from sotacheck.reruns.sandbox.result import ExecutionResult
from sotacheck.reruns.sandbox.unittest_judge import UnittestWorkers
from tests.bigcodebench_environment import MISSING, PYTHON

pytestmark = pytest.mark.slow


# pandas, matplotlib, scikit-learn, requests (mocked), a file written: a spread of what the tasks do
TASKS = ("BigCodeBench/1", "BigCodeBench/37", "BigCodeBench/100", "BigCodeBench/215", "BigCodeBench/530")


@pytest.mark.skipif(not PYTHON, reason=MISSING)
@pytest.mark.parametrize("split", ["complete", "instruct"])
def test_canonical_solutions_pass_and_a_stub_fails(split):
    problems = load_dataset(f"bigcodebench-{split}").by_id()
    with UnittestWorkers(1, python=PYTHON) as workers:
        for task in TASKS:
            problem = problems[task]
            assert problem.canonical_solution is not None
            assert workers.judge(problem, problem.canonical_solution).passed, task
            stub = f"def {problem.entry_point}(*args, **kwargs):\n    return None\n"
            result = workers.judge(problem, stub)
            assert result.status == "failed" and len(result.tests) > 1, (task, result)


# Holes found by reading the per-task judge's source (issue #46's red team), on real tasks in the real environment:
# wrong programs judged passed, or a wrong program judged ``environment`` (left out of the pass rate's denominator).
_W149 = ("def task_func(elements, include_index=False):\n"
         "    return pd.DataFrame({'Element': list(elements), 'Count': [0] * len(elements)})\n")
_W749 = "import numpy as np\ndef task_func(myList):\n    return np.ones(len(myList))\n"
_NO_OP_NUMPY_TESTING = "types.SimpleNamespace(assert_array_almost_equal=lambda *a, **k: None)"
BIGCODEBENCH_HOLES = {
    "the program's own pd, whose testing is a no-op (the test reads pd from the shared namespace)": (
        "BigCodeBench/149",
        "import types\nimport pandas as _pd\n"
        "pd = types.SimpleNamespace(**{k: getattr(_pd, k) for k in dir(_pd) if k[:2] != '__'})\n"
        "pd.testing = types.SimpleNamespace(assert_frame_equal=lambda *a, **k: None)\n" + _W149,
        "the test module uses the names the prompt imported, and the program rebinds them: pandas.testing is "
        "watched, the name pd is not"),
    "sys.modules['numpy'] a proxy with a no-op testing (the test imports numpy itself)": (
        "BigCodeBench/749",
        "import sys, types\nimport numpy as _np\nclass _Proxy(types.ModuleType):\n    def __getattr__(self, name):\n"
        f"        return getattr(_np, name)\n_proxy = _Proxy('numpy')\n_proxy.testing = {_NO_OP_NUMPY_TESTING}\n"
        "sys.modules['numpy'] = _proxy\n" + _W749,
        "only unittest's modules are put back in sys.modules before the test module imports"),
    "numpy's module class swapped, its testing a no-op": (
        "BigCodeBench/749",
        f"import types\nimport numpy as _np\n_FAKE = {_NO_OP_NUMPY_TESTING}\nclass _Module(types.ModuleType):\n"
        "    def __getattribute__(self, name):\n        return _FAKE if name == 'testing' else super().__getattribute__(name)\n"
        "_np.__class__ = _Module\n" + _W749,
        "the machinery check compares vars(module), not type(module)"),
    "pandas' assert_frame_equal with huge tolerances as its defaults": (
        "BigCodeBench/149",
        "import pandas.testing\n_defaults = list(pandas.testing.assert_frame_equal.__defaults__)\n"
        "_defaults[0], _defaults[-3], _defaults[-2] = False, 1e300, 1e300  # check_dtype, rtol, atol\n"
        "pandas.testing.assert_frame_equal.__defaults__ = tuple(_defaults)\n"
        "def task_func(elements, include_index=False):\n    columns = {'Element': list(elements), 'Count': [0] * len(elements)}\n"
        "    if include_index:\n        columns = {'Index': np.arange(len(elements)), **columns}\n"
        "    return pd.DataFrame(columns)\n",
        "a function's __defaults__ change without a new binding (only __code__ is refused)"),
    "the seal module's _run_method replaced, on a real task": (
        "BigCodeBench/749", "import _unittest_seal\n_unittest_seal._run_method = lambda *a: None\n" + _W749,
        "run_tests looks its helpers up in _unittest_seal's globals, which the program imports and rebinds"),
}


# A library function the tests compare with, rebound or shadowed: the judge before 2026-12-05 passed every test of
# /33 and /371 (both programs) and 4 of 5 of /44's with these wrong programs.
LIBRARY_TAMPERING = {
    "np.array_equal rebound": (
        "BigCodeBench/33",
        "import numpy as np\nnp.array_equal = lambda *a, **k: True\ndef task_func(list_of_pairs):\n"
        "    return np.array([0])\n"),
    "np.allclose rebound": (
        "BigCodeBench/44",
        "import numpy as np\nimport matplotlib.pyplot as plt\nnp.allclose = lambda *a, **k: True\n"
        "def task_func(df):\n    fig, ax = plt.subplots()\n    return df.fillna(0) * 0, ax\n"),
    "DataFrame.equals shadowing NDFrame's": (
        "BigCodeBench/371",
        "import pandas as pd\npd.DataFrame.equals = lambda self, other: True\ndef task_func(l):\n"
        "    return pd.DataFrame({'Scaled Values': l})\n"),
    "NDFrame.equals replaced during the test": (
        "BigCodeBench/371",
        "import pandas as pd\ndef task_func(l):\n    pd.core.generic.NDFrame.equals = lambda self, other: True\n"
        "    return pd.DataFrame({'Scaled Values': l})\n"),
}


@pytest.fixture(scope="module")
def bigcodebench_workers():
    if not PYTHON:
        pytest.skip(MISSING)
    with UnittestWorkers(1, python=PYTHON, preload=("numpy", "pandas")) as workers:
        yield workers


@pytest.mark.parametrize("label", sorted(BIGCODEBENCH_HOLES))
def test_the_red_teams_programs_on_real_tasks_are_never_a_pass(bigcodebench_workers, label):
    # each got through the judge as it stood before (its third field says how); all closed since
    task, program, _ = BIGCODEBENCH_HOLES[label]
    problem = load_dataset("bigcodebench-complete").by_id()[task]
    result = bigcodebench_workers.judge(problem, program)
    assert result.status == "failed" and all(t.status != "passed" for t in result.tests), (label, result)


def test_a_wrong_program_cannot_buy_environment(bigcodebench_workers):
    problem = load_dataset("bigcodebench-complete").by_id()["BigCodeBench/177"]
    result = bigcodebench_workers.judge(problem, "def task_func(df):\n    raise LookupError('Resource punkt not found.')\n")
    assert result.status == "failed", result


def _every_test_failed(workers: UnittestWorkers, task: str, program: str) -> ExecutionResult:
    """``program`` judged on ``task``, every one of its tests failed (asserted); the result."""
    result = workers.judge(load_dataset("bigcodebench-complete").by_id()[task], program)
    assert result.status == "failed" and all(t.status == "failed" for t in result.tests), (task, result)
    return result


@pytest.mark.parametrize("label", sorted(LIBRARY_TAMPERING))
def test_a_library_function_the_tests_compare_with_cannot_be_rebound(bigcodebench_workers, label):
    result = _every_test_failed(bigcodebench_workers, *LIBRARY_TAMPERING[label])
    assert "changed" in (result.message or ""), (label, result)


# A value whose class decides the test's comparison with the program's own code (``_unittest_classes.py``): each
# passes tests of its task where nothing checks (BigCodeBench's own way: the program and the test module in one
# module), and the judge before 2026-12-05 passed them there too.
RIGGED_VALUES = {
    "an ndarray subclass whose __array_function__ says yes to np.array_equal": (
        "BigCodeBench/33",
        "import numpy as np\nclass Yes(np.ndarray):\n    def __array_function__(self, func, types, args, kwargs):\n"
        "        return True\ndef task_func(list_of_pairs):\n    return np.zeros(1).view(Yes)\n"),
    "a DataFrame subclass whose equals says yes": (
        "BigCodeBench/371",
        "import pandas as pd\nclass Same(pd.DataFrame):\n    def equals(self, other):\n        return True\n"
        "def task_func(l):\n    return Same({'Scaled Values': [0.0]})\n"),
    "an object whose __getattr__ answers every name with yes": (
        "BigCodeBench/371",
        "class Anything:\n    def __getattr__(self, name):\n        return lambda *a, **k: True\n"
        "def task_func(l):\n    return Anything()\n"),
    "an object equal to anything, made by type() inside task_func": (
        "BigCodeBench/270",
        "def task_func(sentence):\n    Equal = type('Equal', (), {'__eq__': lambda s, o: True,\n"
        "                                 '__getitem__': lambda s, k: s, '__len__': lambda s: 0})\n"
        "    return Equal()\n"),
}
_UNSEALED = """import sys, types, unittest
module = types.ModuleType("__test__")
sys.modules["__test__"] = module
exec(compile(sys.argv[1], "__test__.py", "exec"), vars(module))
exec(compile(sys.argv[2], "__test__.py", "exec"), vars(module))
names = unittest.TestLoader().getTestCaseNames(module.TestCases)
print(sum(module.TestCases(name).run().wasSuccessful() for name in names))
"""


@pytest.mark.parametrize("label", sorted(RIGGED_VALUES))
def test_a_value_that_decides_its_own_comparison_is_never_a_pass(bigcodebench_workers, label):
    task, program = RIGGED_VALUES[label]
    result = _every_test_failed(bigcodebench_workers, task, program)
    assert any("a class the program made" in (t.message or "") for t in result.tests), (label, result)
    # not vacuous: where nothing checks, as BigCodeBench runs a task, the same program passes tests of its task
    test = load_dataset("bigcodebench-complete").by_id()[task].hidden_tests[0]
    with tempfile.TemporaryDirectory() as workdir:
        unsealed = subprocess.run([PYTHON, "-c", _UNSEALED, program, test], capture_output=True, text=True,
                                  timeout=300, cwd=workdir)
    assert unsealed.returncode == 0 and int(unsealed.stdout.split()[-1]) >= 1, (label, unsealed.stderr[-2000:])
