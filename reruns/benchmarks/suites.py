"""Suites of hidden tests within one problem: EvalPlus's *base* and *plus* tests (``evalplus.py``).

A hidden test that belongs to a suite says so on its first line, ``# evalplus base[3]`` (the fourth base
input) or ``# evalplus plus[0]``; a problem's base tests come before its plus tests. The verdict over all the
tests is EvalPlus's *plus* verdict, the verdict over the base tests alone its *base* verdict. Kept apart from
the loader so that the judge reads the markers without importing it.
"""

from __future__ import annotations

from sotacheck.reruns.benchmarks.problem import Problem

BASE, PLUS = "base", "plus"
SUITES = (BASE, PLUS)
MARKER = "# evalplus "


def marker(suite: str, index: int) -> str:
    """The first line of the ``index``-th test of ``suite``."""
    return f"{MARKER}{suite}[{index}]"


def suite_of(test: str) -> str | None:
    """``base`` or ``plus`` for a test of an EvalPlus problem, None for any other test."""
    if not test.startswith(MARKER):
        return None
    suite = test[len(MARKER):].partition("[")[0]
    return suite if suite in SUITES else None


def base_tests(problem: Problem) -> tuple[int, ...] | None:
    """The indices of a problem's base tests; None for a problem whose tests belong to no suite."""
    suites = [suite_of(test) for test in problem.hidden_tests]
    if not any(suites):
        return None
    return tuple(index for index, suite in enumerate(suites) if suite == BASE)
