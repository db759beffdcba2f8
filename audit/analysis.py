"""The standard analysis of one or more runs: pass rate with CI per arm and dataset, and every arm's
paired comparison against a baseline arm, Holm-corrected across the table, each with a power note."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from sotacheck.audit.intervals import clustered_pass_rate
from sotacheck.audit.paired import cmh_test, holm, mcnemar_exact, paired_bootstrap_difference, sign_flip_test
from sotacheck.audit.power import mdd_paired_exact
from sotacheck.core.rundir import OutcomeError, Run


@dataclass(frozen=True)
class ArmSummary:
    arm: str
    dataset: str
    n: int
    n_repeats: int
    n_errors: int
    pass_rate: float
    ci_low: float
    ci_high: float
    ci_method: str
    design_effect: float
    calls_per_problem: float | None
    prompt_tokens_per_problem: float | None
    completion_tokens_per_problem: float | None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Comparison:
    """Arm ``a`` against baseline ``b`` on their shared problems. ``b_count``: problems where a did
    better, ``c_count``: where b did better (per problem, over repeats)."""

    a: str
    b: str
    dataset: str
    n: int
    n_repeats: int
    diff: float
    ci_low: float
    ci_high: float
    b_count: int
    c_count: int
    test: str
    pvalue: float
    midp: float | None
    cmh_pvalue: float | None
    pvalue_holm: float
    mdd: float
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class AnalysisResult:
    arms: tuple[ArmSummary, ...]
    comparisons: tuple[Comparison, ...]
    baseline: str
    notes: tuple[str, ...] = field(default_factory=tuple)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready; a non-finite number (an undetectable MDD) becomes null, never NaN/Infinity."""
        return _finite({"baseline": self.baseline, "arms": [asdict(a) for a in self.arms],
                        "comparisons": [asdict(c) for c in self.comparisons], "notes": list(self.notes),
                        "holm": "Holm (method='holm') across all comparisons in this table"})


def _finite(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def combine_runs(runs: list[Run]) -> pd.DataFrame:
    """One outcome table from several runs. When a run uses an arm name an earlier run already used, *every*
    arm of that run is prefixed with the run's name, so a run's arms (a sweep's settings) stay together."""
    if not runs:
        raise OutcomeError("no runs given")
    seen: set[tuple[str, str]] = set()
    frames = []
    for run in runs:
        frame = run.outcomes.copy()
        frame["label"] = frame["arm"]  # the arm as its run names it, before any prefix
        keys = set(frame[["arm", "dataset"]].drop_duplicates().itertuples(index=False, name=None))
        if keys & seen:
            frame["arm"] = run.name + ":" + frame["arm"]
        seen |= set(frame[["arm", "dataset"]].drop_duplicates().itertuples(index=False, name=None))
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def outcome_matrix(table: pd.DataFrame, arm: str, dataset: str) -> pd.DataFrame:
    """Problems × repeats of 0/1 (NaN for errored or missing cells) for one arm on one dataset."""
    cells = table[(table["arm"] == arm) & (table["dataset"] == dataset)]
    values = cells["passed"].astype("float")
    return cells.assign(value=values).pivot(index="problem", columns="repeat", values="value")


@dataclass(frozen=True)
class PairedOutcomes:
    """Two arms' problems × repeats 0/1 matrices on the problems both have complete results for."""

    a: np.ndarray
    b: np.ndarray
    problems: pd.Index
    unpaired: int  # problems present in one arm only, or with errored/missing repeats

    @property
    def wins_losses(self) -> tuple[int, int]:
        """(problems where a's mean is higher, problems where b's is)."""
        mean_a, mean_b = self.a.mean(axis=1), self.b.mean(axis=1)
        return int((mean_a > mean_b).sum()), int((mean_a < mean_b).sum())


def paired_outcomes(table_a: pd.DataFrame, arm_a: str, table_b: pd.DataFrame, arm_b: str, dataset: str,
                    common_repeats: bool = False) -> PairedOutcomes:
    """Pair two arms on a dataset. ``common_repeats`` keeps only repeat indices both arms have (the gate
    compares repeat k with repeat k); otherwise each arm keeps all its repeats (compared by means)."""
    ma, mb = outcome_matrix(table_a, arm_a, dataset), outcome_matrix(table_b, arm_b, dataset)
    if common_repeats:
        repeats = ma.columns.intersection(mb.columns)
        ma, mb = ma[repeats], mb[repeats]
    ma, mb = ma.dropna(), mb.dropna()
    shared = ma.index.intersection(mb.index)
    unpaired = len(ma.index.union(mb.index)) - len(shared)
    return PairedOutcomes(ma.loc[shared].to_numpy(), mb.loc[shared].to_numpy(), shared, unpaired)


def _per_problem(cells: pd.DataFrame, column: str) -> float | None:
    values = cells.groupby("problem")[column].sum(min_count=1).astype("float")
    return None if values.isna().all() else float(values.mean())


def summarise_arm(table: pd.DataFrame, arm: str, dataset: str, confidence_level: float = 0.95) -> ArmSummary:
    cells = table[(table["arm"] == arm) & (table["dataset"] == dataset)]
    matrix = outcome_matrix(table, arm, dataset)
    complete = matrix.dropna()
    notes = []
    n_errors = int((cells["status"] == "error").sum())
    if n_errors:
        notes.append(f"{n_errors} errored cell(s) excluded (not counted as failures)")
    if len(complete) < len(matrix):
        notes.append(f"{len(matrix) - len(complete)} problem(s) with errored or missing repeats left out")
    if complete.empty:
        raise OutcomeError(f"arm {arm!r} on {dataset!r} has no problem with a complete, non-error result")
    rate = clustered_pass_rate(complete.to_numpy())
    ci = rate.confidence_interval(confidence_level)
    if rate.statistic in (0.0, 1.0):
        notes.append(f"all {'pass' if rate.statistic == 1 else 'fail'}: the interval is one-sided by nature")
    if rate.n_problems == 1:
        notes.append("a single problem: the interval reflects repeats only and says little")
    return ArmSummary(arm, dataset, rate.n_problems, rate.n_repeats, n_errors, rate.statistic, ci.low,
                      ci.high, "wilson" if rate.n_repeats == 1 else "wilson on the design-effect-adjusted n",
                      rate.design_effect, _per_problem(cells, "calls"), _per_problem(cells, "prompt_tokens"),
                      _per_problem(cells, "completion_tokens"), tuple(notes))


def compare_arms(table: pd.DataFrame, a: str, b: str, dataset: str, confidence_level: float = 0.95,
                 n_resamples: int = 10_000, seed: int = 0) -> Comparison:
    """Paired comparison of arm ``a`` against arm ``b`` on the problems both have complete results for."""
    paired = paired_outcomes(table, a, table, b, dataset)
    shared, xa, xb = paired.problems, paired.a, paired.b
    notes = []
    if paired.unpaired:
        notes.append(f"paired on the {len(shared)} problems both arms have; {paired.unpaired} problem(s) in one arm only")
    if len(shared) == 0:
        raise OutcomeError(f"arms {a!r} and {b!r} share no problem with complete results on {dataset!r}")
    mean_a, mean_b = xa.mean(axis=1), xb.mean(axis=1)
    better, worse = paired.wins_losses
    ci = paired_bootstrap_difference(xa, xb, confidence_level, n_resamples, rng=seed)
    if xa.shape[1] == 1 and xb.shape[1] == 1:
        test = mcnemar_exact(better, worse)
        name, pvalue, midp, cmh_p = "exact McNemar", test.pvalue, test.midp, None
    else:
        perm = sign_flip_test(xa, xb, n_resamples=n_resamples, rng=seed)
        name = "sign-flip permutation on per-problem means" + (" (exact)" if perm.exact else "")
        pvalue, midp, cmh_p = perm.pvalue, None, cmh_test(xa, xb).pvalue
    discordance = (better + worse) / len(shared)
    if len(shared) < 2:
        notes.append("a single shared problem: no test can say anything")
        mdd = float("inf")
    else:
        mdd = mdd_paired_exact(len(shared), discordance) if discordance > 0 else float("inf")
    return Comparison(a, b, dataset, len(shared), int(min(xa.shape[1], xb.shape[1])),
                      float(mean_a.mean() - mean_b.mean()), ci.low, ci.high, better, worse, name,
                      float(pvalue), midp, cmh_p, float("nan"), mdd, tuple(notes))


def default_baseline(runs: list[Run], arms: list[str]) -> str:
    """The arm to compare against when none is named: the first run's first pipeline as the run listed
    them (a rerun's ``spec``; a method comparison usually lists Direct first), else the first arm.

    Parameters
    ----------
    runs : the runs, in the order given; only the first one's ``spec`` is read.
    arms : every arm of the combined table, in table order (sorted by name within a run).

    Returns
    -------
    str
        An arm of ``arms``. Arm labels of reruns are the pipeline's name, with its parameters in brackets.
    """
    pipelines = (runs[0].manifest.spec or {}).get("pipelines")
    if pipelines and isinstance(pipelines[0], dict):
        first = pipelines[0].get("name")
        own = runs[0].outcomes.drop_duplicates("arm").set_index("arm")["pipeline"]
        for arm in arms:
            if arm in own.index and own[arm] == first:
                return arm
    return arms[0]


def paper_defaults(runs: list[Run]) -> dict[str, dict[str, Any]]:
    """Each pipeline's paper-default parameters as the runs recorded them (the first run naming a
    pipeline wins): the setting a sweep is compared against."""
    found: dict[str, dict[str, Any]] = {}
    for run in runs:
        for pipeline, params in run.manifest.pipeline_defaults.items():
            found.setdefault(pipeline, dict(params))
    return found


def analyze(runs: list[Run], baseline: str | None = None, confidence_level: float = 0.95,
            n_resamples: int = 10_000, seed: int = 0) -> AnalysisResult:
    """Pass rates per arm and dataset, and each arm against ``baseline`` (default: see
    ``default_baseline``)."""
    table = combine_runs(runs)
    arms_in_order = list(dict.fromkeys(table["arm"]))
    baseline = baseline or default_baseline(runs, arms_in_order)
    if baseline not in arms_in_order:
        raise OutcomeError(f"baseline arm {baseline!r} is not in the runs; arms: {', '.join(arms_in_order)}")
    summaries = []
    comparisons = []
    for dataset in dict.fromkeys(table["dataset"]):
        arms = list(dict.fromkeys(table.loc[table["dataset"] == dataset, "arm"]))
        summaries += [summarise_arm(table, arm, dataset, confidence_level) for arm in arms]
        if baseline in arms:
            comparisons += [compare_arms(table, arm, baseline, dataset, confidence_level, n_resamples, seed)
                            for arm in arms if arm != baseline]
    adjusted = holm([c.pvalue for c in comparisons]) if comparisons else np.array([])
    comparisons = [_with_holm(c, float(p)) for c, p in zip(comparisons, adjusted, strict=True)]
    notes = []
    if len(set(table["dataset"])) > 1:
        notes.append("several datasets: comparisons are within each dataset; Holm spans all of them")
    return AnalysisResult(tuple(summaries), tuple(comparisons), baseline, tuple(notes))


def _with_holm(comparison: Comparison, pvalue_holm: float) -> Comparison:
    from dataclasses import replace

    return replace(comparison, pvalue_holm=pvalue_holm)
