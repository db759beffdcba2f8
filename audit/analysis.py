"""The standard analysis of one or more runs: pass rate with CI per arm and dataset, grouped into studies
(:mod:`sotacheck.audit.studies`: the same problems, model, endpoint, sampling and judge), and within each
study every arm's paired comparison against that study's baseline, Holm-corrected within the study, each
with a power note. A comparison across studies is made only when asked for by name, and says so. An arm
without a complete result, and a comparison that cannot be made, are reported as such
(:mod:`sotacheck.audit.analysis_results`), never a reason to stop."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from sotacheck.audit.analysis_results import (
    REQUESTED,
    AnalysisResult,
    ArmSummary,
    Comparison,
    NotCompared,
    StudyResult,
    UnscoredArm,
)
from sotacheck.audit.combined import CombinedRuns, combine, combine_runs, paper_defaults
from sotacheck.audit.intervals import clustered_pass_rate
from sotacheck.audit.paired import holm, mcnemar_exact, paired_bootstrap_difference, sign_flip_test
from sotacheck.audit.power import mdd_paired
from sotacheck.audit.studies import Study
from sotacheck.core.rundir import OutcomeError, Run

__all__ = ["REQUESTED", "AnalysisResult", "ArmSummary", "CombinedRuns", "Comparison", "NotCompared", "PairedOutcomes",
           "StudyResult",
           "UnscoredArm", "analyze", "combine_runs", "compare_arms", "compare_if_possible", "default_baseline",
           "outcome_matrix", "paired_outcomes", "paper_defaults", "partial_repeats", "study_findings", "summarise_arm",
           "unscored_arm"]


def outcome_matrix(table: pd.DataFrame, arm: str, dataset: str) -> pd.DataFrame:
    """Problems × repeats of 0/1 (NaN for errored or missing cells) for one arm on one dataset, over the
    repeats every problem has a cell for (:func:`partial_repeats` names the others).

    A repeat index only some problems reach (a task judged on one more line than the others, a rerun stopped
    part-way through a repeat) is left out for every problem: kept, it would make every other problem look
    incomplete, and a run of 164 problems would be summarised on the one problem that has it. So every
    command counts a run's problems alike."""
    cells = table[(table["arm"] == arm) & (table["dataset"] == dataset)]
    values = cells["passed"].astype("float")
    matrix = cells.assign(value=values).pivot(index="problem", columns="repeat", values="value")
    partial = _partial_repeats(cells)
    return matrix.drop(columns=list(partial)) if len(partial) < matrix.shape[1] else matrix


def partial_repeats(table: pd.DataFrame, arm: str, dataset: str) -> tuple[int, ...]:
    """The repeat indices some but not all of the arm's problems on ``dataset`` have a cell for (errored
    cells count as cells: they are results that failed, not results that are absent)."""
    return _partial_repeats(table[(table["arm"] == arm) & (table["dataset"] == dataset)])


def _partial_repeats(cells: pd.DataFrame) -> tuple[int, ...]:
    per_repeat = cells["repeat"].value_counts()  # one cell per problem and repeat (the pivot checks it)
    return tuple(sorted(int(repeat) for repeat in per_repeat.index[per_repeat < cells["problem"].nunique()]))


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


def unscored_arm(table: pd.DataFrame, arm: str, dataset: str) -> UnscoredArm | None:
    """``None`` when the arm has a problem with a complete, non-error result on ``dataset``; else what it has
    instead (all cells errors, or errors and missing repeats on every problem)."""
    if not outcome_matrix(table, arm, dataset).dropna().empty:
        return None
    cells = table[(table["arm"] == arm) & (table["dataset"] == dataset)]
    n_errors = int((cells["status"] == "error").sum())
    cause = (f"all {len(cells)} cells are errors" if n_errors == len(cells) else
             f"every problem has an errored or missing repeat ({n_errors} of {len(cells)} cells are errors)")
    return UnscoredArm(arm, dataset, len(cells), n_errors, cause)


def summarise_arm(table: pd.DataFrame, arm: str, dataset: str, confidence_level: float = 0.95) -> ArmSummary:
    cells = table[(table["arm"] == arm) & (table["dataset"] == dataset)]
    matrix = outcome_matrix(table, arm, dataset)
    complete = matrix.dropna()
    notes = []
    n_errors = int((cells["status"] == "error").sum())
    if n_errors:
        notes.append(f"{n_errors} errored cell(s) excluded (not counted as failures)")
    partial = _partial_repeats(cells)
    if partial and len(partial) < cells["repeat"].nunique():
        notes.append(f"repeat(s) {', '.join(map(str, partial))} present for only some problems left out: "
                     f"every problem is counted on the repeats all of them have")
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
        name, pvalue, midp = "exact McNemar", test.pvalue, test.midp
    else:
        perm = sign_flip_test(xa, xb, n_resamples=n_resamples, rng=seed)
        name = "sign-flip permutation on per-problem means" + (
            " (exact)" if perm.exact else f" (Monte Carlo, {n_resamples} sign patterns)")
        pvalue, midp = perm.pvalue, None
    if len(shared) < 2:
        notes.append("a single shared problem: no test can say anything")
    mdd = mdd_paired(xa, xb).mdd
    return Comparison(a, b, dataset, len(shared), int(min(xa.shape[1], xb.shape[1])),
                      float(mean_a.mean() - mean_b.mean()), ci.low, ci.high, better, worse, name,
                      float(pvalue), midp, float("nan"), mdd, tuple(notes))


def default_baseline(runs: Sequence[Run], arms: list[str]) -> str:
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


def _study_baseline(runs: Sequence[Run], table: pd.DataFrame, study: Study, wanted: str | None) -> tuple[str, list[str]]:
    """The arm a study's arms are compared against: the one the user named (by its name in the table or
    in its run), else :func:`default_baseline` over the study's first run; with a note when the named one
    is not in this study."""
    arms = list(study.arms)
    if wanted is not None:
        if wanted in arms:
            return wanted, []
        labels = table.drop_duplicates("arm").set_index("arm")["label"]
        by_label = [arm for arm in arms if labels.get(arm) == wanted]
        if by_label:
            return by_label[0], []
    chosen = default_baseline([runs[study.run_indexes[0]]], arms)
    notes = [f"no arm {wanted!r} in this study: compared against {chosen!r}, its default"] if wanted else []
    return chosen, notes


def analyze(runs: Sequence[Run] | CombinedRuns, baseline: str | None = None, confidence_level: float = 0.95,
            n_resamples: int = 10_000, seed: int = 0, compare: Sequence[tuple[str, str]] = ()) -> AnalysisResult:
    """Pass rates per arm and dataset, and within each study every arm against the study's baseline.

    Parameters
    ----------
    runs : the runs to analyse, in order (the first run of a study chooses its default baseline), or those runs
        combined already (:func:`sotacheck.audit.combined.combine`).
    baseline : the arm to compare against, by its name in the combined table or in its own run (``direct``
        matches every study's ``direct``); a study without it uses its default (see
        :func:`default_baseline`), with a note. Default: each study's default.
    confidence_level, n_resamples, seed : of the intervals and resampling tests.
    compare : pairs ``(arm, against)`` to compare in addition, by their names in the combined table, on
        every dataset both have, across studies if need be; each is labelled with the studies it spans and
        what differs between them, and the pairs form their own Holm family.

    Returns
    -------
    AnalysisResult
        Holm-adjusted p-values within each study (the family of its comparisons against its baseline).
    """
    combined = runs if isinstance(runs, CombinedRuns) else combine(runs)
    table, studies = combined.table, combined.studies
    arms_in_order = list(dict.fromkeys(table["arm"]))
    if baseline is not None and baseline not in arms_in_order and baseline not in set(table["label"]):
        raise OutcomeError(f"baseline arm {baseline!r} is not in the runs; arms: {', '.join(arms_in_order)}")
    summaries: list[ArmSummary] = []
    comparisons: list[Comparison] = []
    unscored: list[UnscoredArm] = []
    not_compared: list[NotCompared] = []
    results = []
    for study in studies:
        cells = table[table["study"] == study.id]
        lacking = {arm: u for arm in study.arms if (u := unscored_arm(cells, arm, study.dataset))}
        unscored += [replace(u, study=study.id) for u in lacking.values()]
        summaries += [replace(summarise_arm(cells, arm, study.dataset, confidence_level), study=study.id)
                      for arm in study.arms if arm not in lacking]
        chosen, notes = _study_baseline(combined.runs, table, study, baseline) if len(study.arms) > 1 else (None, [])
        family = []
        for arm in study.arms:
            if chosen and arm != chosen:
                made = compare_if_possible(cells, arm, chosen, study.dataset, confidence_level, n_resamples, seed)
                if isinstance(made, NotCompared):
                    not_compared.append(replace(made, family=study.id))
                else:
                    family.append(replace(made, study=study.id, family=study.id))
        comparisons += _holm_within(family)
        results.append(StudyResult(study, chosen, tuple(notes)))
    requested, refused = _requested(table, studies, compare, confidence_level, n_resamples, seed)
    comparisons += _holm_within(requested)
    not_compared += refused
    notes = []
    if len(studies) > 1:
        notes.append(f"{len(studies)} studies: arms are compared only within their study (same problems, model, "
                     f"endpoint, sampling and judge); Holm runs within each study")
    notes += [n.describe() for n in refused]
    first = next((r.baseline for r in results if r.baseline), arms_in_order[0])
    return AnalysisResult(tuple(summaries), tuple(comparisons), baseline or first, tuple(notes), tuple(results),
                          tuple(unscored), tuple(not_compared))


def compare_if_possible(table: pd.DataFrame, a: str, b: str, dataset: str, confidence_level: float = 0.95,
                        n_resamples: int = 10_000, seed: int = 0) -> Comparison | NotCompared:
    """:func:`compare_arms`, or why it cannot be made.

    Parameters
    ----------
    table : the combined outcome table.
    a, b : the arm and the arm it is compared against.
    dataset : the dataset both are compared on.
    confidence_level, n_resamples, seed : as :func:`compare_arms`.

    Returns
    -------
    Comparison | NotCompared
        ``NotCompared`` when an arm has no complete result on ``dataset`` (:func:`unscored_arm`) or the two
        have complete results on different problems only; the analysis reports it instead of stopping.
    """
    lacking = [u for arm in (a, b) if (u := unscored_arm(table, arm, dataset))]
    if lacking:
        return NotCompared(a, b, dataset, "; ".join(f"{u.arm}: {u.cause}" for u in lacking))
    if paired_outcomes(table, a, table, b, dataset).problems.empty:
        return NotCompared(a, b, dataset, "no problem has complete results in both")
    return compare_arms(table, a, b, dataset, confidence_level, n_resamples, seed)


def _requested(table: pd.DataFrame, studies: tuple[Study, ...], pairs: Sequence[tuple[str, str]],
               confidence_level: float, n_resamples: int, seed: int) -> tuple[list[Comparison], list[NotCompared]]:
    """The comparisons the user named, on every dataset both arms have, labelled with their studies; and
    those that cannot be made (see :func:`compare_if_possible`)."""
    by_id = {s.id: s for s in studies}
    out, refused = [], []
    for a, b in pairs:
        for arm in (a, b):
            if arm not in set(table["arm"]):
                raise OutcomeError(f"compare: no arm {arm!r} in the runs; arms: {', '.join(dict.fromkeys(table['arm']))}")
        shared = [d for d in dict.fromkeys(table.loc[table["arm"] == a, "dataset"])
                  if d in set(table.loc[table["arm"] == b, "dataset"])]
        if not shared:
            raise OutcomeError(f"compare: arms {a!r} and {b!r} have no dataset in common")
        for dataset in shared:
            study_a = by_id[table.loc[(table["arm"] == a) & (table["dataset"] == dataset), "study"].iloc[0]]
            study_b = by_id[table.loc[(table["arm"] == b) & (table["dataset"] == dataset), "study"].iloc[0]]
            comparison = compare_if_possible(table, a, b, dataset, confidence_level, n_resamples, seed)
            if isinstance(comparison, NotCompared):
                refused.append(replace(comparison, family=REQUESTED))
                continue
            if study_a.id == study_b.id:
                label, note = study_a.id, "asked for by name, within one study"
            else:
                label = f"{study_a.id} vs {study_b.id}"
                note = f"across studies, asked for by name: {'; '.join(study_a.differences(study_b))}"
            out.append(replace(comparison, study=label, family=REQUESTED, notes=(note, *comparison.notes)))
    return out, refused


def _holm_within(family: list[Comparison]) -> list[Comparison]:
    adjusted = holm([c.pvalue for c in family]) if family else np.array([])
    return [replace(c, pvalue_adjusted=float(p)) for c, p in zip(family, adjusted, strict=True)]


FINDINGS_NAMED = 5  # significant comparisons a study's one-sentence finding names; the rest are counted


def study_findings(result: AnalysisResult, study: StudyResult, alpha: float = 0.05) -> str:
    """One sentence: what a study compared with what, and what was found."""
    arms, comparisons = result.in_study(study.study.id)
    head = f"{study.study.id}: {len(arms)} arm(s) on {study.study.dataset} ({study.study.n_problems} problems)"
    lacking = [u.arm for u in result.unscored if u.study == study.study.id]
    if lacking:
        head += f", {len(lacking)} more without any complete result ({', '.join(lacking)})"
    if not arms:
        return f"{head}: no pass rate to report."
    if not comparisons:
        best = max(arms, key=lambda a: a.pass_rate)
        return f"{head}; a single arm, {best.arm} at {100 * best.pass_rate:.1f} %: nothing to compare."
    significant = [c for c in comparisons if c.pvalue_adjusted < alpha]
    best = max(arms, key=lambda a: a.pass_rate)
    named = significant[:FINDINGS_NAMED]
    found = ("; ".join(f"{c.a} {100 * c.diff:+.1f} pp (Holm p = {c.pvalue_adjusted:.3g})" for c in named)
             + (f"; and {len(significant) - len(named)} more (the comparison table lists them)"
                if len(significant) > len(named) else "")
             if significant else "none differs significantly after Holm")
    return (f"{head}; {len(comparisons)} compared with {study.baseline}: {found}. Best: {best.arm} at "
            f"{100 * best.pass_rate:.1f} % [{100 * best.ci_low:.1f}, {100 * best.ci_high:.1f}].")
