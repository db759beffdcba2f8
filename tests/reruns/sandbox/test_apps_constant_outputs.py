"""Fixed outputs on APPS: under the default ``apps`` comparison (strict) no constant program and no echo of the
input passes any of the 150 problems; ``apps-execeval`` keeps ExecEval's NaN rule, under which
``print("nan")`` passes 33 of its problems, 83 were every test readable (the counts issue #33 measured
with the judge before this change, independently of this code)."""

from __future__ import annotations

import pytest

from sotacheck.reruns.benchmarks import load_dataset
from sotacheck.reruns.sandbox import SandboxLimits, SandboxPool, judge_hidden
from sotacheck.reruns.sandbox.child._outputs import accepted, decode_output

FIXED = {"print('nan')": lambda stdin: "nan", "print(0)": lambda stdin: "0", "print('')": lambda stdin: "",
         "echo the input": lambda stdin: stdin}
PROGRAMS = {"print('nan')": "print('nan')\n", "print(0)": "print(0)\n", "print('')": "print('')\n",
            "echo the input": "import sys\nsys.stdout.write(sys.stdin.read())\n"}


def _passes(problem, output, rules: str) -> bool:
    return bool(problem.hidden_io) and all(
        test.judgeable and accepted(test.outputs, decode_output(output(test.input).encode()), rules)
        for test in problem.hidden_io)


@pytest.mark.parametrize("name", list(FIXED))
def test_no_fixed_output_passes_an_apps_problem(name: str) -> None:
    problems = load_dataset("apps").problems
    assert len(problems) == 150
    assert [p.id for p in problems if _passes(p, FIXED[name], "strict")] == []


def test_execeval_rules_keep_the_nan_rule() -> None:
    assert sum(_passes(p, FIXED["print('nan')"], "execeval") for p in load_dataset("apps-execeval").problems) == 33
    assert sum(_passes(p, FIXED["print('nan')"], "execeval") for p in load_dataset("apps").problems) == 83


def test_the_real_judge_compares_by_the_datasets_rules() -> None:
    """Through the sandbox: each fixed program fails the problems ``print('nan')`` passes under ExecEval's rule
    (the first five), on ``apps``; ``print('nan')`` passes them on ``apps-execeval``."""
    strict, execeval = load_dataset("apps").by_id(), load_dataset("apps-execeval").by_id()
    nan_prone = [pid for pid, p in execeval.items() if _passes(p, FIXED["print('nan')"], "execeval")][:5]
    with SandboxPool(workers=1, limits=SandboxLimits(test_timeout_s=5, problem_timeout_s=60)) as pool:
        for pid in nan_prone:
            lenient = judge_hidden(pool, execeval[pid], PROGRAMS["print('nan')"])
            assert (lenient.status, lenient.execeval_only) == ("passed", True), pid  # named as ExecEval's pass
            for name, program in PROGRAMS.items():
                assert judge_hidden(pool, strict[pid], program).status == "failed", (pid, name)
