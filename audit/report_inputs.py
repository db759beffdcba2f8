"""Everything the HTML report shows, computed in the audit layer: the analysis with its decay fits, the claim
verdicts, the sweeps, the fidelity of each arm, each study's per-problem outcomes and the leaderboards, all from
the runs combined once (:mod:`sotacheck.audit.combined`).

The report (:mod:`sotacheck.reports.html`) renders a :class:`ReportInputs` and computes nothing, so a number
in the report is always one the audit made, the same one ``analyze``, ``claims`` and ``table`` print.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sotacheck.audit.analysis import analyze, outcome_matrix
from sotacheck.audit.analysis_results import AnalysisResult
from sotacheck.audit.claims import ClaimVerdict, check_claims
from sotacheck.audit.combined import CombinedRuns, combine
from sotacheck.audit.decay_fits import with_decays
from sotacheck.audit.fidelity import ArmFidelity, fidelity, truncation_warnings
from sotacheck.audit.leaderboard import leaderboard
from sotacheck.audit.leaderboard_results import Leaderboard
from sotacheck.audit.studies import RUN_COLUMN
from sotacheck.audit.sweeps import SweepResult, arm_family, find_sweeps
from sotacheck.core.rundir import OutcomeError, Run

__all__ = ["OutcomeShares", "ReportInputs", "SweepFinding", "report_inputs"]


@dataclass(frozen=True)
class SweepFinding:
    """One sweep found in one run: the pipeline it varies, on which dataset, and its result."""

    pipeline: str
    dataset: str
    result: SweepResult


@dataclass(frozen=True)
class OutcomeShares:
    """A study's per-problem outcomes: the share of repeats each arm solved on each problem (arms × problems,
    NaN where an arm has no complete result on a problem)."""

    arms: tuple[str, ...]
    problems: tuple[str, ...]
    shares: np.ndarray


@dataclass(frozen=True)
class ReportInputs:
    """What the report of some runs shows.

    Attributes
    ----------
    analysis : AnalysisResult
        The analysis of the runs, with its decay fits (:func:`sotacheck.audit.decay_fits.with_decays`).
    claims : tuple of ClaimVerdict
        The verdicts of the claims files given, in their order.
    sweeps : tuple of SweepFinding
        Each run's sweeps (a sweep stays within the run that made it, as the decay fits do).
    fidelity : tuple of ArmFidelity
        Each arm's calls, cut replies and cells.
    fidelity_warnings : tuple of str
        The arms whose replies were cut by the token limit too often.
    outcome_shares : dict of str to OutcomeShares
        Per study id, the share of repeats solved per arm and problem.
    leaderboards : tuple of Leaderboard
        The leaderboards asked for.
    runs : tuple of Run
        The runs, for their provenance.
    """

    analysis: AnalysisResult
    claims: tuple[ClaimVerdict, ...]
    sweeps: tuple[SweepFinding, ...]
    fidelity: tuple[ArmFidelity, ...]
    fidelity_warnings: tuple[str, ...]
    outcome_shares: dict[str, OutcomeShares]
    leaderboards: tuple[Leaderboard, ...] = ()
    runs: tuple[Run, ...] = ()


def report_inputs(runs: Sequence[Run] | CombinedRuns, claims_files: Sequence[Path] = (), *,
                  baseline: str | None = None, dataset_sizes: dict[str, int] | None = None,
                  compare: Sequence[tuple[str, str]] = (), leaderboards: Sequence[str] = (),
                  analysis: AnalysisResult | None = None) -> ReportInputs:
    """Compute what the report of ``runs`` shows, from the runs combined once (:func:`~sotacheck.audit.combined.combine`):
    every part below reads that one combination.

    Parameters
    ----------
    runs : list of Run, or CombinedRuns
        The runs, as :func:`sotacheck.core.rundir.load_run` reads them, or combined already.
    claims_files : sequence of Path
        Claims registries whose verdicts the report lists.
    baseline, compare
        As for :func:`sotacheck.audit.analysis.analyze`; used only when ``analysis`` is not given.
    dataset_sizes : dict of str to int, optional
        Benchmark sizes the claims need (their ``n``), by dataset name.
    leaderboards : sequence of str
        Datasets to rank every arm of the runs on (:func:`sotacheck.audit.leaderboard.leaderboard`), each once.
    analysis : AnalysisResult, optional
        The analysis of ``runs`` with its decay fits, when the caller has it already.

    Returns
    -------
    ReportInputs

    Raises
    ------
    OutcomeError
        No runs.
    InputError
        A leaderboard that cannot be made, a claims file that cannot be read.
    """
    if not runs:
        raise OutcomeError("no runs given")
    combined = runs if isinstance(runs, CombinedRuns) else combine(runs)
    boards = tuple(leaderboard(combined, name) for name in dict.fromkeys(leaderboards))
    if analysis is None:
        analysis = with_decays(analyze(combined, baseline, compare=compare), combined)
    table = combined.table
    claims = tuple(check_claims(list(claims_files), combined, dataset_sizes)) if claims_files else ()
    sweeps = []
    for index, defaults in enumerate(combined.defaults):
        own = table[table[RUN_COLUMN] == index]
        for dataset in dict.fromkeys(own["dataset"]):
            sweeps += [SweepFinding(arm_family(own, result.default_arm), dataset, result)
                       for result in find_sweeps(own, dataset, defaults)]
    arms_fidelity = fidelity(combined.runs)
    shares = {}
    for study in analysis.studies:
        names = [arm.arm for arm in analysis.for_study(study.study.id).arms]
        if not names:
            continue
        dataset = study.study.dataset
        cells = table[table["arm"].isin(study.study.arms) & (table["dataset"] == dataset)]
        problems = list(dict.fromkeys(cells["problem"]))
        matrix = np.vstack([outcome_matrix(cells, arm, dataset).mean(axis=1).reindex(problems).to_numpy()
                            for arm in names])
        shares[study.study.id] = OutcomeShares(tuple(names), tuple(str(p) for p in problems), matrix)
    return ReportInputs(analysis, claims, tuple(sweeps), tuple(arms_fidelity), tuple(truncation_warnings(arms_fidelity)),
                        shares, boards, combined.runs)
