"""The typed results of an analysis (:mod:`sotacheck.audit.analysis`): an arm's pass rate, an arm without
one, a paired comparison, one that could not be made, a study's place, an arm's decay fit, and the whole
result."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from sotacheck.audit.studies import Study
from sotacheck.core.deprecation import renamed_attribute, with_old_keys
from sotacheck.core.rundir import OutcomeError

if TYPE_CHECKING:
    from sotacheck.audit.decay import DecayResult
    from sotacheck.audit.intervals import ConfidenceInterval


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
    study: str = ""


@dataclass(frozen=True)
class UnscoredArm:
    """An arm with no problem whose every repeat has a non-error result: it has no pass rate and enters no
    comparison, and the analysis says so instead of stopping (``n_cells``: its cells on the dataset,
    ``n_errors``: those that are errors; ``cause``: the two in words)."""

    arm: str
    dataset: str
    n_cells: int
    n_errors: int
    cause: str
    study: str = ""

    @property
    def reason(self) -> str:
        return f"no pass rate and no comparison: {self.cause}"


@dataclass(frozen=True)
class NotCompared:
    """A comparison the analysis would make (against a study's baseline) or was asked for (``family``
    ``requested``) but cannot: an arm without a complete result, or no problem complete in both."""

    a: str
    b: str
    dataset: str
    reason: str
    family: str = ""

    @property
    def asked_for(self) -> bool:
        """Whether the user named this comparison (``--compare``)."""
        return self.family == REQUESTED

    def describe(self) -> str:
        return f"{self.a} vs {self.b} on {self.dataset}: not compared; {self.reason}"


@dataclass(frozen=True)
class Comparison:
    """Arm ``a`` against baseline ``b`` on their shared problems. ``b_count``: problems where a did
    better, ``c_count``: where b did better (per problem, over repeats). ``mdd``: the smallest difference
    in pass rate the test used detects with 80 % power (two-sided, alpha 0.05; see
    :func:`sotacheck.audit.power.mdd_paired`). ``study``: the study both arms belong to, or ``S1 vs S3``
    for a comparison across studies the user asked for; ``family``: the Holm family, a study's id or
    ``requested``. ``pvalue``: two-sided, unadjusted; ``midp``: McNemar's mid-p (one sample per problem);
    ``pvalue_adjusted``: Holm over ``family``. ``pvalue_holm``: the old name of ``pvalue_adjusted``,
    deprecated."""

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
    pvalue_adjusted: float
    mdd: float
    notes: tuple[str, ...] = ()
    study: str = ""
    family: str = ""

    pvalue_holm = renamed_attribute("pvalue_holm", "pvalue_adjusted")


@dataclass(frozen=True)
class StudyResult:
    """One study's place in an analysis: its conditions, the baseline its arms are compared against
    (``None`` with a single arm) and what the analysis says about the choice."""

    study: Study
    baseline: str | None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ArmDecay:
    """One arm's debug-decay fit on one dataset (:func:`sotacheck.audit.decay.fit_decay`), or why there is none
    (``result`` None, ``reason`` says why). ``r_squared_ci`` is the 95 % percentile interval of R² over the
    fit's ``n_resamples`` problem resamples, ``interval_note`` why it does not contain the estimate, when it
    does not (:meth:`~sotacheck.audit.decay.DecayResult.interval_note`)."""

    arm: str
    dataset: str
    max_attempts: int
    result: DecayResult | None
    r_squared_ci: ConfidenceInterval | None = None
    interval_note: str | None = None
    reason: str = ""
    n_resamples: int = 0

    @property
    def r_squared_text(self) -> str:
        """R² with its interval, as the report quotes it (``0.912 [0.401, 0.997]``), or why there is no fit."""
        if self.result is None or self.r_squared_ci is None:
            return f"No decay fit for {self.arm}: {self.reason}."
        return f"{self.result.fit.r_squared:.3f} [{self.r_squared_ci.low:.3f}, {self.r_squared_ci.high:.3f}]"

    @property
    def observed(self) -> np.ndarray:
        """The effectiveness at each fitted attempt: the points the curve was fitted to."""
        if self.result is None:
            return np.array([])
        curve = self.result.curve
        return curve.effectiveness[curve.unsolved_before > 0]


@dataclass(frozen=True)
class AnalysisResult:
    """Arms, comparisons and studies. ``baseline`` is the arm the user named, else the first study's.
    ``decays``: the debug-decay fits, where they were asked for (:func:`sotacheck.audit.decay_fits.with_decays`;
    the report quotes them, and :meth:`as_dict` leaves them out)."""

    arms: tuple[ArmSummary, ...]
    comparisons: tuple[Comparison, ...]
    baseline: str
    notes: tuple[str, ...] = field(default_factory=tuple)
    studies: tuple[StudyResult, ...] = field(default_factory=tuple)
    unscored: tuple[UnscoredArm, ...] = field(default_factory=tuple)
    not_compared: tuple[NotCompared, ...] = field(default_factory=tuple)
    decays: tuple[ArmDecay, ...] = field(default_factory=tuple)

    def in_study(self, study: str) -> tuple[list[ArmSummary], list[Comparison]]:
        """The arm summaries and the comparisons (its Holm family) of one study."""
        return ([a for a in self.arms if a.study == study], [c for c in self.comparisons if c.family == study])

    def for_study(self, study: str) -> AnalysisResult:
        """The part of this result that concerns one study, as a result of its own (for its tables)."""
        arms, comparisons = self.in_study(study)
        chosen = [s for s in self.studies if s.study.id == study]
        if not chosen:
            raise OutcomeError(f"no study {study!r}; studies: {', '.join(s.study.id for s in self.studies)}")
        return AnalysisResult(tuple(arms), tuple(comparisons), chosen[0].baseline or self.baseline, (), tuple(chosen),
                              tuple(u for u in self.unscored if u.study == study),
                              tuple(n for n in self.not_compared if n.family == study))

    @property
    def requested(self) -> list[Comparison]:
        """The comparisons the user asked for by name (their own Holm family)."""
        return [c for c in self.comparisons if c.family == REQUESTED]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready; a non-finite number (an undetectable MDD) becomes null, never NaN/Infinity."""
        return _finite({"baseline": self.baseline, "arms": [asdict(a) for a in self.arms],
                        "comparisons": [with_old_keys(asdict(c), OLD_COMPARISON_KEYS) for c in self.comparisons],
                        "notes": list(self.notes),
                        "unscored": [asdict(u) for u in self.unscored],
                        "not_compared": [asdict(n) for n in self.not_compared],
                        "studies": [{**asdict(s.study), "baseline": s.baseline, "notes": list(s.notes)}
                                    for s in self.studies],
                        "holm": "Holm (method='holm') within each study's comparisons against its baseline; "
                                "the comparisons asked for by name are one family of their own"})


REQUESTED = "requested"
# JSON keys renamed in #47 (old → new), written under both names for one release (docs/statistics.md)
OLD_COMPARISON_KEYS = {"pvalue_holm": "pvalue_adjusted"}


def _finite(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value
