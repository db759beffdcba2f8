"""A verdict for each published claim: sotacheck derives every check that applies from what was published,
runs them all, and one rule decides (the format and the rule: ``docs/claims.md``).

Verdicts: ``supported``, ``not significant``, ``unverifiable from what was published``, ``contradicted``.
The rule, in order:

1. A published number shown wrong decides: a benchmark size that does not match, a value attributed twice
   and contradicted by a reference, a reproduction below the report over every pairing the two totals allow
   (the pairing-range rule of step 3), a "margin" over the base model.
2. Per-problem data decide a margin: the paired test on a run's arms (``rerun``) or on the published
   discordant counts (``paired-counts``).
3. From totals alone, **the pairing-range rule**: the paired test's p over every per-problem pattern the
   totals (and runs, and published regressions) allow (``paired-reconstruction``;
   :func:`sotacheck.audit.paired.pairing_range`). Significant over every allowed pattern: supported
   (contradicted when the margin is negative); significant over none: not significant; otherwise unverifiable,
   with the range and what would settle it. A named assumption (``assumptions: [nonnegative-correlation]``)
   narrows the range only when the claim lists it, and the verdict names it. Fisher's exact test
   (``two-proportions``) is the test for two independent samples: shown, never deciding.
4. Otherwise the claim's own check (a reproduction, a benchmark size, an attribution, the minimum detectable
   difference of differences reported without tests), else why nothing published can test it.

Run-to-run spread (``margin-vs-single``) is shown as added evidence and never decides: the runs share the same
problems. ``check`` in a file is a request: that check is shown and named in the verdict; it changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sotacheck.audit import claim_checks as stat
from sotacheck.audit import claim_evidence as evidence
from sotacheck.audit.claim_checks import (
    ALPHA,
    CONTRADICTED,
    NOT_SIGNIFICANT,
    SUPPORTED,
    UNVERIFIABLE,
    CheckResult,
    Verdict,
    numbers_json,
)
from sotacheck.audit.claim_model import RankClaim
from sotacheck.audit.claim_rank import rank_check
from sotacheck.audit.claim_registry import Claim, ClaimRegistry, ClaimsError, load_registry
from sotacheck.core.deprecation import renamed_attribute, renamed_names
from sotacheck.core.errors import InputError

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pandas as pd

    from sotacheck.audit.combined import CombinedRuns
    from sotacheck.core.rundir import Run

__all__ = ["ALPHA", "CONTRADICTED", "EVIDENCE_ONLY", "NOT_SIGNIFICANT", "SUPPORTED", "UNVERIFIABLE", "CheckResult",
           "ClaimVerdict", "ClaimsError", "Verdict", "applicable_checks", "check_claims", "check_registries", "evaluate",
           "load_registry"]

EVIDENCE_ONLY = ("two-proportions", "margin-vs-single")
"""Checks shown beside the verdict that never decide a margin: Fisher's test for two independent samples and
the run-to-run spread."""
_CONSISTENCY = ("benchmark-size", "identical-numbers", "reproduction", "comparator-kind")
_OWN = ("reproduction", "benchmark-size", "identical-numbers", "minimum-detectable-difference", "average-margin",
        "cost-bound", "decay-fit", "no-comparator", "setting", "rerun")


@dataclass(frozen=True)
class ClaimVerdict:
    """A claim's verdict, the check that decided it (``check``), its reason, and every check run.

    ``pvalue`` is the deciding test's p when it has one (per-problem data); it is None when a range decided
    (``paired-reconstruction``, ``reproduction``: the pairing of two totals is not published), whose ends are
    ``pvalue_range`` (low, high): significant only when high < α, not significant only when low ≥ α. ``p_range``:
    the old name of ``pvalue_range``, deprecated."""

    id: str
    paper: str
    statement: str
    source: str
    check: str
    verdict: Verdict
    reason: str
    pvalue: float | None
    numbers: dict[str, Any]
    notes: tuple[str, ...]
    checks: tuple[CheckResult, ...]
    requested: str | None = None
    pvalue_range: tuple[float, float] | None = None

    p_range = renamed_attribute("p_range", "pvalue_range")

    def check_named(self, name: str) -> CheckResult | None:
        return next((c for c in self.checks if c.name == name), None)

    def as_dict(self) -> dict[str, Any]:
        pvalue_range = None if self.pvalue_range is None else list(self.pvalue_range)
        return {"id": self.id, "paper": self.paper, "statement": self.statement, "source": self.source,
                "verdict": self.verdict, "deciding_check": self.check, "reason": self.reason, "pvalue": self.pvalue,
                "pvalue_range": pvalue_range, "numbers": numbers_json(self.numbers),
                "notes": list(self.notes), "requested_check": self.requested,
                "checks": [c.as_dict() for c in self.checks],
                "p_range": pvalue_range}  # the old name (#47), deprecated: goes in the next release


def _discordance(checks: list[CheckResult], n: int) -> float | None:
    paired = next((c for c in checks if c.name in ("rerun", "paired-counts") and "b" in c.numbers), None)
    return None if paired is None else (paired.numbers["b"] + paired.numbers["c"]) / n


RULE = "the pairing-range rule"
RULE_REASONS: dict[Verdict, str] = {
    SUPPORTED: f"{RULE}: the paired test is significant over every allowed pairing",
    CONTRADICTED: f"{RULE}: the paired test is significant, against the claim, over every allowed pairing",
    NOT_SIGNIFICANT: f"{RULE}: the paired test is significant over no allowed pairing",
    UNVERIFIABLE: f"{RULE}: the paired test is significant over some allowed pairings and not over others, so only "
                  "the unpublished pairing can decide",
}


def applicable_checks(claim: Claim, table: pd.DataFrame | None = None,
                      dataset_sizes: dict[str, int] | None = None) -> list[CheckResult]:
    """Every check that what was published allows, run (``table``: the combined outcomes of the run the claim's
    ``rerun`` names, :meth:`sotacheck.audit.combined.CombinedRuns.parts`; None when it was not given)."""
    checks: list[CheckResult] = []
    if claim.dataset is not None or claim.shipped_n is not None:
        checks.append(evidence.benchmark_size(claim, dataset_sizes or {}))
    if claim.same_as is not None:
        checks.append(evidence.identical_numbers(claim))
    rates = stat.is_rate(claim.method) and stat.is_rate(claim.baseline)
    if claim.reproduction is not None and claim.n and stat.is_rate(claim.method) and stat.is_rate(claim.reproduction):
        checks.append(evidence.reproduction(claim))
    if claim.baseline is not None:
        checks.append(evidence.comparator_kind(claim))
    if claim.kind == "margin":
        units_ok = claim.method.unit == "percent" and (claim.baseline is None or claim.baseline.unit == "percent")
        if claim.rerun is not None:
            checks.append(evidence.rerun(claim, table))
        if claim.discordant is not None:
            checks.append(stat.paired_counts(claim))
        if claim.n is not None and claim.discordant is None and (rates or (claim.margin is not None and units_ok)):
            checks.append(stat.paired_reconstruction(claim))
        if claim.n is not None and rates:
            checks.append(stat.two_proportions(claim))
        if rates and (claim.method.runs or 1) >= 2:
            checks.append(stat.margin_vs_single(claim))
        if claim.n is not None and units_ok and (rates or claim.margin is not None or claim.differences is not None
                                                 or claim.discordant is not None or claim.rerun is not None):
            checks.append(stat.minimum_detectable(claim, _discordance(checks, claim.n)))
    untestable = evidence.not_testable(claim)
    if untestable is not None:
        checks.append(untestable)
    return checks


def decide(checks: list[CheckResult]) -> tuple[CheckResult, str]:
    """The deciding check by the rule of this module, and a sentence on why it decides."""
    by_name = {c.name: c for c in checks}
    for name in _CONSISTENCY:
        if name in by_name and by_name[name].verdict == CONTRADICTED:
            return by_name[name], ("the comparison is not the one the claim makes" if name == "comparator-kind" else
                                   "a published number is contradicted")
    for name in ("rerun", "paired-counts"):
        if name in by_name and by_name[name].verdict is not None:
            return by_name[name], "per-problem data decide"
    if "paired-reconstruction" in by_name:
        paired = by_name["paired-reconstruction"]
        return paired, RULE_REASONS[paired.verdict or UNVERIFIABLE]
    for name in _OWN:
        if name in by_name and by_name[name].verdict is not None:
            return by_name[name], "the claim's own check"
    if "rerun" in by_name:
        return by_name["rerun"], "only per-problem data could decide"
    raise InputError("no check applies")  # not_testable always applies when nothing else does


def _provenance_notes(claim: Claim) -> list[str]:
    phrases = {"copied": "copied from another paper", "not-reproduced": "never reproduced",
               "unknown": "of unknown provenance"}
    notes = []
    if claim.baseline and claim.baseline.provenance in phrases:
        notes.append(f"the baseline number ({claim.baseline.name}) is {phrases[claim.baseline.provenance]}, not run "
                     f"under the same harness" + (f": {claim.baseline.note}" if claim.baseline.note else ""))
    return notes + ([claim.note] if claim.note else [])


def _request_note(claim: Claim, checks: list[CheckResult], deciding: CheckResult) -> list[str]:
    if claim.check is None or claim.check == deciding.name:
        return []
    requested = next((c for c in checks if c.name == claim.check), None)
    if requested is None:
        return [f"`check: {claim.check}` was requested, but it does not apply to what was published; the verdict "
                f"follows the rule ({deciding.name} decides)"]
    said = requested.verdict or "no conclusion"
    return [f"`check: {claim.check}` was requested (an override request): it is shown and alone says {said!r}; the "
            f"verdict follows the rule ({deciding.name} decides)"]


def _spread_note(checks: list[CheckResult], verdict: Verdict) -> list[str]:
    spread = next((c for c in checks if c.name == "margin-vs-single"), None)
    if spread is None or spread.verdict in (None, verdict):
        return []
    return [f"run-to-run spread alone would say {spread.verdict!r} (p = {spread.pvalue:.3g}); it is added evidence "
            "and cannot decide: the runs share the same problems"]


def evaluate(claim: Claim | RankClaim, paper: str, runs: Sequence[Run] | CombinedRuns | None = None,
             dataset_sizes: dict[str, int] | None = None) -> ClaimVerdict:
    """The verdict for one claim.

    Parameters
    ----------
    claim : the claim as published.
    paper : the id of its paper.
    runs : loaded runs (or runs combined, :func:`sotacheck.audit.combined.combine`), for a claim whose
        per-problem data are a run's arms.
    dataset_sizes : problem counts of the shipped benchmarks, for benchmark-size checks.

    Returns
    -------
    ClaimVerdict
    """
    return _verdicts([(None, paper, claim)], runs, dataset_sizes)[0]


def _named(claim: Claim | RankClaim) -> tuple[str, ...]:
    """The runs whose per-problem data a claim's check reads, by name (none for most claims)."""
    if isinstance(claim, RankClaim):
        return tuple(claim.leaderboard.runs)
    return (claim.rerun.run,) if claim.rerun is not None else ()


def _verdicts(claims: list[tuple[str | Path | None, str, Claim | RankClaim]], runs: Sequence[Run] | CombinedRuns | None,
              dataset_sizes: dict[str, int] | None) -> list[ClaimVerdict]:
    """The verdict of each (claims file, paper, claim); the runs are combined once, and each claim is given
    only the part its check reads (:meth:`sotacheck.audit.combined.CombinedRuns.parts`)."""
    parts: dict[tuple[str, ...], CombinedRuns | None] = {}
    if runs:
        from sotacheck.audit.combined import CombinedRuns, combine  # pandas: only for runs

        combined = runs if isinstance(runs, CombinedRuns) else combine(runs)
        parts = combined.parts(names for *_, claim in claims if (names := _named(claim)))
    verdicts = []
    for path, paper, claim in claims:
        part = parts.get(_named(claim))
        try:
            verdicts.append(_evaluate_rank(claim, paper, part) if isinstance(claim, RankClaim)
                            else _evaluate(claim, paper, None if part is None else part.table, dataset_sizes))
        except ClaimsError as exc:
            if path is None:
                raise
            raise ClaimsError(f"{'<stdin>' if str(path) == '-' else path}: {exc}") from None
    return verdicts


def _evaluate(claim: Claim, paper: str, table: pd.DataFrame | None, dataset_sizes: dict[str, int] | None
              ) -> ClaimVerdict:
    """A claim's verdict from its checks (:func:`applicable_checks`, :func:`decide`)."""
    try:
        checks = applicable_checks(claim, table, dataset_sizes)
    except InputError as exc:
        message = str(exc)
        raise ClaimsError(message if message.startswith("claim ") else f"claim {claim.id!r}: {message}") from None
    deciding, why = decide(checks)
    if deciding.pvalue is not None and not np.isfinite(deciding.pvalue):
        raise ClaimsError(f"claim {claim.id!r}: the check {deciding.name} produced a non-finite p-value")
    verdict = deciding.verdict or UNVERIFIABLE
    notes = [*deciding.notes, *_spread_note(checks, verdict), *_request_note(claim, checks, deciding),
             *_provenance_notes(claim)]
    reason = f"{deciding.result} {why[0].upper()}{why[1:]}."
    pvalue_range = deciding.numbers.get("pvalue_range")  # the checks a pairing range decides (totals, a reproduction)
    return ClaimVerdict(claim.id, paper, claim.statement, claim.source, deciding.name, verdict, reason, deciding.pvalue,
                        deciding.numbers, tuple(dict.fromkeys(notes)), tuple(checks), claim.check,
                        None if pvalue_range is None else (float(pvalue_range[0]), float(pvalue_range[1])))


def _evaluate_rank(claim: RankClaim, paper: str, part: CombinedRuns | None) -> ClaimVerdict:
    """A rank claim's verdict: its one check, by the claim's test (:mod:`sotacheck.audit.claim_rank`), on the
    runs it names (``part``)."""
    try:
        check = rank_check(claim, part)
    except InputError as exc:
        raise ClaimsError(str(exc)) from None
    verdict = check.verdict or UNVERIFIABLE
    decider = ("the one-sided paired tests against each competitor decide (intersection-union)"
               if claim.test == "intersection-union" else "the leaderboard decides (Holm over all pairs)")
    why = decider if check.verdict else "the leaderboard's runs were not given"
    return ClaimVerdict(claim.id, paper, claim.statement, claim.source, check.name, verdict, f"{check.result} "
                        f"{why[0].upper()}{why[1:]}.", None, check.numbers, (), (check,), claim.check)


def check_registries(registries: list[tuple[str | Path, ClaimRegistry]], runs: Sequence[Run] | CombinedRuns | None = None,
                     dataset_sizes: dict[str, int] | None = None) -> list[ClaimVerdict]:
    """Verdicts for every claim of loaded claims files (each with its path, ``-``: standard input), in order;
    ``runs`` may be combined already (:func:`sotacheck.audit.combined.combine`)."""
    return _verdicts([(path, registry.paper.id, claim) for path, registry in registries for claim in registry.claims],
                     runs, dataset_sizes)


def check_claims(files: list[Path] | list[str | Path], runs: Sequence[Run] | CombinedRuns | None = None,
                 dataset_sizes: dict[str, int] | None = None) -> list[ClaimVerdict]:
    """Verdicts for every claim of every claims file (``-``: standard input), in file order."""
    return check_registries([(file, load_registry(file)) for file in files], runs, dataset_sizes)


# the old names, for one release (#47: "audit" is the package, not a verb)
__getattr__ = renamed_names(__name__, {"audit_claims": "check_claims", "audit_registries": "check_registries"},
                            globals())
