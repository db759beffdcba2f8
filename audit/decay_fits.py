"""The debug-decay fits an analysis carries (:attr:`~sotacheck.audit.analysis_results.AnalysisResult.decays`):
each arm :func:`~sotacheck.audit.sweeps.decay_arms` names, fitted once (:func:`~sotacheck.audit.decay.fit_decay`)
with one resample count and seed, so that every place that quotes a fit (the report's text, its figure)
quotes the same R² interval. A fit stays within the run that made it: a sweep's settings are one run's arms."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pandas as pd

from sotacheck.audit.analysis_results import AnalysisResult, ArmDecay
from sotacheck.audit.combined import CombinedRuns, combine
from sotacheck.audit.decay import DECAY_RESAMPLES, fit_decay
from sotacheck.audit.studies import RUN_COLUMN
from sotacheck.audit.sweeps import decay_arms
from sotacheck.core.rundir import Run

__all__ = ["DECAY_SEED", "arm_decays", "run_decays", "with_decays"]

DECAY_SEED = 0
"""Seed of every decay fit's problem resampling."""


def arm_decays(table: pd.DataFrame, dataset: str, n_resamples: int = DECAY_RESAMPLES,
               seed: int = DECAY_SEED) -> list[ArmDecay]:
    """The decay fit of every arm of ``table`` (one run's cells) on ``dataset`` that
    :func:`~sotacheck.audit.sweeps.decay_arms` names; an arm whose data cannot be fitted gets the reason."""
    out = []
    for max_attempts, arm in decay_arms(table, dataset):
        cells = table[(table["arm"] == arm) & (table["dataset"] == dataset) & (table["status"] != "error")]
        first = cells["first_pass_attempt"].astype("float").fillna(-1).to_numpy()
        try:
            result = fit_decay(first, max_attempts, n_resamples=n_resamples, rng=seed)
        except ValueError as exc:
            out.append(ArmDecay(arm, dataset, max_attempts, None, reason=str(exc), n_resamples=n_resamples))
            continue
        out.append(ArmDecay(arm, dataset, max_attempts, result, result.confidence_interval("r_squared"),
                            result.interval_note("r_squared"), n_resamples=n_resamples))
    return out


def run_decays(table: pd.DataFrame, n_resamples: int = DECAY_RESAMPLES, seed: int = DECAY_SEED) -> tuple[ArmDecay, ...]:
    """The decay fits of a combined table (:func:`~sotacheck.audit.analysis.combine_runs`), run by run and,
    within a run, dataset by dataset in the order they appear."""
    out: list[ArmDecay] = []
    for index in dict.fromkeys(table[RUN_COLUMN]):
        own = table[table[RUN_COLUMN] == index]
        for dataset in dict.fromkeys(own["dataset"]):
            out.extend(arm_decays(own, dataset, n_resamples, seed))
    return tuple(out)


def with_decays(result: AnalysisResult, runs: Sequence[Run] | CombinedRuns, n_resamples: int = DECAY_RESAMPLES,
                seed: int = DECAY_SEED) -> AnalysisResult:
    """``result`` (the analysis of ``runs``) with the decay fits of ``runs`` (:func:`run_decays`; ``runs`` may be
    combined already, :func:`sotacheck.audit.combined.combine`): what the report quotes, computed here once."""
    combined = runs if isinstance(runs, CombinedRuns) else combine(runs)
    return replace(result, decays=run_decays(combined.table, n_resamples, seed))
