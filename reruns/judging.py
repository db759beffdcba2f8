"""Judging a whole dataset: the canonical solutions or a samples file, on this machine or on Ray, with the
verdicts as a report and (optionally) as a run directory every other command reads."""

from __future__ import annotations

import contextlib
import functools
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sotacheck.core.errors import UsageError
from sotacheck.core.provenance import file_sha256
from sotacheck.core.version import version
from sotacheck.reruns.benchmarks.problem import Dataset, Problem
from sotacheck.reruns.benchmarks.registry import load_dataset
from sotacheck.reruns.benchmarks.suites import base_tests
from sotacheck.reruns.executors import EXECUTORS
from sotacheck.reruns.samples import Duplicates
from sotacheck.reruns.sandbox.result import SandboxLimits
from sotacheck.reruns.sandbox.submission import JudgedSubmission, judge_description


@dataclass(frozen=True)
class JudgeReport:
    """The verdicts on one dataset, in the dataset's (or the samples file's) order.

    On an EvalPlus dataset (``humaneval-plus``, ``mbpp-plus``) each verdict is EvalPlus's *plus* verdict (base
    and extra inputs all pass: what it reports as HumanEval+ / MBPP+), and :attr:`base_verdicts` holds its
    *base* verdict (the original benchmark's inputs alone) for the same sample.
    """

    dataset: Dataset
    verdicts: tuple[JudgedSubmission, ...]
    samples: Path | None

    @functools.cached_property
    def base_verdicts(self) -> tuple[bool, ...] | None:
        """Each sample's verdict on its problem's EvalPlus base tests alone (the program loaded and every base
        test passed); None when the dataset's problems have no such suites."""
        problems = self.dataset.by_id()
        suites: dict[str, tuple[int, ...] | None] = {}
        verdicts = []
        for verdict in self.verdicts:
            if verdict.problem_id not in suites:
                suites[verdict.problem_id] = base_tests(problems[verdict.problem_id])
            base = suites[verdict.problem_id]
            if base is None:
                return None
            passed = {test.index for test in verdict.result.tests if test.status == "passed"}
            verdicts.append(bool(verdict.result.tests) and passed.issuperset(base))
        return tuple(verdicts)

    @property
    def base_passed(self) -> int | None:
        return None if self.base_verdicts is None else sum(self.base_verdicts)

    @property
    def counts(self) -> dict[str, int]:
        return dict(sorted(Counter(v.status for v in self.verdicts).items()))

    @property
    def passed(self) -> int:
        return self.counts.get("passed", 0)

    @property
    def judged(self) -> int:
        """The verdicts the environment could give: all but ``environment`` ones (BigCodeBench's tasks that need the
        network or a missing resource), which count neither as a pass nor as a failure."""
        return len(self.verdicts) - self.counts.get("environment", 0)

    @property
    def pass_rate(self) -> float:
        return self.passed / self.judged if self.judged else float("nan")

    def by_library(self) -> dict[str, dict[str, int]]:
        """Per library the dataset's problems name (BigCodeBench's ``libs``): tasks, passed, environment; empty for a
        dataset without libraries."""
        problems = self.dataset.by_id()
        table: dict[str, Counter[str]] = {}
        for verdict in self.verdicts:
            for lib in problems[verdict.problem_id].libs:
                row = table.setdefault(lib, Counter())
                row["n"] += 1
                row["passed"] += verdict.passed
                row["environment"] += verdict.status == "environment"
        return {lib: {key: row[key] for key in ("n", "passed", "environment")} for lib, row in sorted(table.items())}

    @property
    def output_rules(self) -> str | None:
        """How a program task's standard output was compared with the expected (``strict`` or ``execeval``,
        see ``_outputs``); None for a dataset without program tasks."""
        if not any(problem.kind == "program" for problem in self.dataset.problems):
            return None
        from sotacheck.reruns.sandbox.stdin_programs import output_rules

        return output_rules(self.dataset.name)

    @property
    def execeval_only(self) -> list[str] | None:
        """The problems passed only by ExecEval's lenient rules, which the strict rules reject; None unless
        ExecEval's rules compared the outputs."""
        if self.output_rules != "execeval":
            return None
        return [verdict.problem_id for verdict in self.verdicts if verdict.result.execeval_only]

    def as_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data; on an EvalPlus dataset also ``base`` and ``plus`` (each ``passed`` and
        ``pass_rate``; ``plus`` is the top-level figure again) and per result ``base_passed``/``plus_passed``."""
        results: list[dict[str, Any]] = [{"task_id": v.problem_id, "status": v.status, "exception_type": v.result.exception_type,
                    "message": v.result.message} for v in self.verdicts]
        for result, verdict in zip(results, self.verdicts, strict=True):
            if verdict.test_timeout_s is not None:  # --relative-timeout: the problem's own limit
                result["test_timeout_s"] = round(verdict.test_timeout_s, 3)
        report: dict[str, Any] = {"dataset": self.dataset.name, "dataset_hash": self.dataset.content_hash,
                  "sotacheck_version": version(), "n": len(self.verdicts), "passed": self.passed,
                  "pass_rate": self.pass_rate, "counts": self.counts}
        if any(problem.kind == "unittest" for problem in self.dataset.problems):
            report["judged"] = self.judged  # pass_rate's denominator: ``environment`` verdicts left out
            report["by_library"] = self.by_library()
        if self.output_rules is not None:
            report["output_rules"] = self.output_rules
        if self.execeval_only is not None:
            report["execeval_only"] = {"n": len(self.execeval_only), "problems": self.execeval_only}
        if self.base_verdicts is not None and self.base_passed is not None:
            n = len(self.verdicts)
            report["base"] = {"passed": self.base_passed, "pass_rate": self.base_passed / n if n else float("nan")}
            report["plus"] = {"passed": self.passed, "pass_rate": self.pass_rate}
            for result, verdict, base in zip(results, self.verdicts, self.base_verdicts, strict=True):
                result.update(base_passed=base, plus_passed=verdict.passed)
        return {**report, "results": results}


def judge_dataset(dataset: str, samples: Path | None = None, canonical: bool = False, workers: int | None = None,
                  test_timeout_s: float = 5.0, data_dir: str | Path | None = None, executor: str = "local",
                  ray_address: str | None = None, progress: bool = False, hub_id: str | None = None,
                  relative_timeout: bool = False, duplicates: Duplicates = "auto") -> JudgeReport:
    """Judge a dataset's canonical solutions (``canonical``) or a samples file against its hidden tests; the
    dataset comes from ``hub_id`` where given (see ``loaders.load_dataset``). With ``relative_timeout`` each
    problem's per-test limit is max(4 s, 4 x its canonical solution's slowest test), measured first, as
    EvalPlus sets it, and recorded in its verdict."""
    from sotacheck.reruns.samples import read_samples

    if canonical == (samples is not None):
        raise UsageError("give exactly one of --canonical and --samples FILE")
    if executor not in EXECUTORS:
        raise UsageError(f"--executor {executor!r}: expected {' or '.join(map(repr, EXECUTORS))}")
    if executor not in ("local", "ray"):  # the judge's two ways: a local sandbox pool, or Ray's tasks
        raise UsageError(f"--executor {executor!r}: the judge runs on 'local' or 'ray' only")
    if relative_timeout and executor != "local":
        raise UsageError("--relative-timeout: only with --executor local")
    limits = SandboxLimits(test_timeout_s=test_timeout_s)
    if executor == "local":
        from sotacheck.reruns.sandbox.pool import SandboxPool

        pool_context: Any = SandboxPool(workers, limits)
    else:
        pool_context = contextlib.nullcontext()
    # A local pool starts its sandbox supervisors now: they import while the dataset loads.
    with pool_context as pool:
        data = load_dataset(dataset, data_dir, hub_id)
        problems = data.by_id()
        if canonical or relative_timeout:
            missing = [p.id for p in data.problems if not p.canonical_solution]
            if missing:  # judging empty code would report them as failures of the benchmark's own solutions
                option = "--canonical" if canonical else "--relative-timeout"
                raise UsageError(f"{option}: {len(missing)} of {len(data.problems)} problems of {data.name} have no "
                                 f"canonical solution (e.g. {missing[0]})"
                                 + ("; judge samples with --samples FILE instead" if canonical else ""))
        if canonical:
            pairs = [(p, p.canonical_solution or "") for p in data.problems]
        else:
            assert samples is not None
            pairs = [(problems[s.task_id], s.code) for s in read_samples(samples, data, duplicates)]
        if pool is not None:
            own = None
            if relative_timeout:
                from sotacheck.reruns.sandbox.submission import judge_many, relative_limits

                reference = judge_many(pool, data.content_hash, [(p, p.canonical_solution or "") for p in data.problems])
                own = relative_limits(reference, limits)
            verdicts = _judge_local(pool, data, pairs, progress, own)
        else:
            verdicts = _judge_on_ray(data, pairs, limits, ray_address, progress)
    return JudgeReport(data, tuple(verdicts), samples)


def _judge_local(pool: Any, data: Dataset, pairs: list[tuple[Problem, str]], progress: bool,
                 limits: dict[str, SandboxLimits] | None = None) -> list[JudgedSubmission]:
    from sotacheck.reruns.sandbox.submission import judge_many

    judged: Iterator[JudgedSubmission] = judge_many(pool, data.content_hash, pairs, limits)
    if progress:  # tqdm is imported only then: it is a sixtieth of a second of start-up
        from tqdm import tqdm

        judged = tqdm(judged, total=len(pairs), desc=f"judging {data.name}", unit="problem", file=sys.stderr)
    return list(judged)


def _judge_on_ray(data: Dataset, pairs: list[tuple[Problem, str]], limits: SandboxLimits, ray_address: str | None,
                  progress: bool) -> list[JudgedSubmission]:
    from tqdm import tqdm

    from sotacheck.reruns.executors import ray as cluster

    cluster.connect(ray_address)
    try:
        with tqdm(total=len(pairs), desc=f"judging {data.name} on Ray", unit="problem", file=sys.stderr,
                  disable=not progress) as bar:
            on_done: Callable[[int], object] = bar.update
            return list(cluster.judge_pairs(data.content_hash, pairs, limits, on_done=on_done))
    finally:
        cluster.shutdown()


def write_judged_run(out: Path, report: JudgeReport, arm: str | None = None, force: bool = False) -> Path:
    """The verdicts as a run directory: one arm (default: the samples file's name, or ``canonical``),
    repeat = the sample's occurrence index for its task; a sandbox failure is an ``error`` cell. On an EvalPlus
    dataset each sample also has a row on ``<dataset>-base`` with its base verdict, as ``sotacheck import
    evalplus`` writes EvalPlus's own (``humaneval-plus`` and ``humaneval-plus-base``). An existing run
    directory at ``out`` is replaced only with ``force``."""
    import pandas as pd

    from sotacheck.core.rundir import DatasetInfo, Manifest, write_run

    label = arm or (report.samples.stem if report.samples else "canonical")
    seen: Counter[str] = Counter()
    rows = []
    base_verdicts = report.base_verdicts or (None,) * len(report.verdicts)
    for verdict, base in zip(report.verdicts, base_verdicts, strict=True):
        sandbox_failed = verdict.result.exception_type == "SandboxFailure"
        row = {"arm": label, "pipeline": label, "dataset": report.dataset.name, "problem": verdict.problem_id,
               "repeat": seen[verdict.problem_id], "passed": None if sandbox_failed else verdict.passed,
               "status": "error" if sandbox_failed else None, "judge_status": verdict.status}
        rows.append(row)
        if base is not None:
            rows.append({**row, "dataset": f"{report.dataset.name}-base", "passed": None if sandbox_failed else base})
        seen[verdict.problem_id] += 1
    files = [{"file": str(report.samples), "sha256": file_sha256(report.samples)}] if report.samples else []
    manifest = Manifest(name=out.name, source="sotacheck judge", files=files,
                        judge=judge_description(report.dataset, None),
                        dataset=DatasetInfo(name=report.dataset.name, content_hash=report.dataset.content_hash,
                                            sources=list(report.dataset.sources), problems=len(report.dataset)))
    return write_run(out, pd.DataFrame(rows), manifest, overwrite=force)


def flaky_problems(reports: Sequence[JudgeReport]) -> dict[str, list[str]]:
    """Each problem's status in every judgement of the same code, for the problems whose statuses differ."""
    statuses: dict[str, list[str]] = {}
    for report in reports:
        for verdict in report.verdicts:
            statuses.setdefault(verdict.problem_id, []).append(verdict.status)
    return {problem: seen for problem, seen in statuses.items() if len(set(seen)) > 1}
