"""A submission judged: a problem's final submission against its hidden tests (once), or code against its
visible tests (a pipeline's feedback). Judging a whole dataset (``sotacheck judge``) is ``reruns/judging.py``."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from sotacheck.core.deprecation import renamed_names
from sotacheck.reruns.benchmarks.problem import Dataset, Problem
from sotacheck.reruns.sandbox.completion import assemble_program, interface_names, prompt_preamble
from sotacheck.reruns.sandbox.execution import EVERY_NAME
from sotacheck.reruns.sandbox.pool import SandboxPool
from sotacheck.reruns.sandbox.result import ExecutionResult, SandboxLimits


@dataclass(frozen=True)
class JudgedSubmission:
    """A judged submission: which problem, which dataset version, and what happened (``Verdict`` until #47: a
    verdict is a claim's, :class:`sotacheck.audit.claims.ClaimVerdict`)."""

    problem_id: str
    dataset_hash: str
    result: ExecutionResult
    test_timeout_s: float | None = None  # the problem's own per-test limit, where it had one (``--relative-timeout``)

    @property
    def status(self) -> str:
        return self.result.status

    @property
    def passed(self) -> bool:
        return self.result.passed


def judge_description(dataset: Dataset, test_timeout_s: float | None) -> str:
    """Which judge gives ``dataset``'s verdicts and under what limit, as a run's manifest records it (``judge``: a
    study's condition in the report): BigCodeBench's unittest judge and its limit per task for a ``unittest``
    benchmark (``test_timeout_s`` does not apply there), else the sandbox and its limit per test."""
    if any(problem.kind == "unittest" for problem in dataset.problems):
        from sotacheck.reruns.sandbox.unittest_judge import UnittestLimits

        return f"sotacheck unittest judge (a sealed process per task), {UnittestLimits().task_timeout_s:g} s a task"
    from sotacheck.core.rundir import sandbox_judge  # with pandas: not on the judge's start-up path

    return sandbox_judge(test_timeout_s)


def judge_hidden(pool: SandboxPool, problem: Problem, completion: str,
                 limits: SandboxLimits | None = None) -> ExecutionResult:
    """The completion against the hidden tests; the tests see the prompt's own helpers (HumanEval/32's
    ``poly``), run in the trusted process, not the program's versions of them. A program problem's
    completion is the whole program, run on each hidden test up to the first that does not pass."""
    if problem.kind == "unittest":  # BigCodeBench: its own environment's warm runners (not on the start-up path)
        from sotacheck.reruns.sandbox.unittest_judge import shared_workers

        return shared_workers(pool.workers).judge(problem, completion)
    if problem.kind == "program":
        # not on a function judge's start-up path
        from sotacheck.reruns.sandbox.stdin_programs import output_rules, run_program_tests

        return run_program_tests(pool, completion, problem.hidden_io, stop_at_first_failure=True,
                                 rules=output_rules(problem.dataset))
    program = assemble_program(problem.prompt, completion, problem.entry_point)
    own = {"limits": limits} if limits is not None else {}  # a pool-like object without per-run limits still serves
    return pool.run(program, problem.hidden_tests, setup=problem.test_setup,
                    entry_point=problem.entry_point, helpers=prompt_preamble(problem.prompt, problem.entry_point),
                    names=interface_names(problem), **own)


def run_visible(pool: SandboxPool, problem: Problem, code: str) -> ExecutionResult:
    """The code against the visible tests, which see every name of the program's (its own versions of the
    prompt's helpers):
    this is a pipeline's feedback, not a verdict, and recorded runs replay only if it stays as it was. A
    program problem's code runs on every sample test (the feedback lists each)."""
    if problem.kind == "program":
        from sotacheck.reruns.sandbox.stdin_programs import run_program_tests

        # ExecEval's rules: the feedback MapCoder's and CodeSim's pipelines got (their evaluate_sample_io)
        return run_program_tests(pool, code, problem.visible_io, stop_at_first_failure=False, rules="execeval")
    program = assemble_program(problem.prompt, code, problem.entry_point)
    return pool.run(program, problem.visible_tests, setup=problem.test_setup,
                    entry_point=problem.entry_point, names=EVERY_NAME)


def judge_many(pool: SandboxPool, dataset_hash: str, submissions: Iterable[tuple[Problem, str]],
               limits: Mapping[str, SandboxLimits] | None = None) -> Iterator[JudgedSubmission]:
    """Judge (problem, completion) pairs concurrently; verdicts come back in input order. ``limits``: a
    problem's own limits by its id (the pool's for the others)."""
    items = list(submissions)
    own = limits or {}

    def judge(item: tuple[Problem, str]) -> ExecutionResult:
        return judge_hidden(pool, item[0], item[1], own.get(item[0].id))

    if any(problem.kind == "unittest" for problem, _ in items):
        from sotacheck.reruns.benchmarks.test_seconds import expected_test_seconds
        from sotacheck.reruns.sandbox.unittest_judge import shared_workers

        # as many in flight as unused cores allow, the longest expected first
        results = shared_workers(pool.workers).map(judge, items, cost=lambda item: expected_test_seconds(item[0]))
    else:
        results = pool.map(judge, items)
    for (problem, _), result in zip(items, results, strict=True):
        mine = own.get(problem.id)
        yield JudgedSubmission(problem.id, dataset_hash, result, mine.test_timeout_s if mine else None)


def relative_limits(verdicts: Iterable[JudgedSubmission], base: SandboxLimits, floor_s: float = 4.0,
                    factor: float = 4.0) -> dict[str, SandboxLimits]:
    """Per-problem limits from the canonical solutions' verdicts, as EvalPlus sets its time limits: each test
    may take max(``floor_s``, ``factor`` x the slowest of the canonical solution's tests) (its whole run when
    the tests report no times); the problem's limit grows with it where it must."""
    limits = {}
    for verdict in verdicts:
        times = [t.duration_s for t in verdict.result.tests if t.duration_s is not None]
        slowest = max(times) if times else verdict.result.duration_s
        test_limit = max(floor_s, factor * slowest)
        problem_limit = max(base.problem_timeout_s, test_limit * max(1, len(verdict.result.tests)))
        limits[verdict.problem_id] = dataclasses.replace(base, test_timeout_s=test_limit,
                                                         problem_timeout_s=problem_limit)
    return limits


__getattr__ = renamed_names(__name__, {"Verdict": "JudgedSubmission"}, globals())  # the old name, for one release
