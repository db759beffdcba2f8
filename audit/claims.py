"""A verdict for each published claim of the registry (its schema: :mod:`sotacheck.audit.claim_registry`).

A claim names its paper and section, the benchmark and its n, each side's number as published (runs,
spread, SD/SE when known), the baseline's provenance, and the check that applies. Verdicts:
``supported``, ``not significant``, ``unverifiable from what was published``, ``contradicted`` — each
with the numbers that produced it and a one-sentence reason a reviewer could paste.

Checks from published numbers alone: ``margin-vs-single`` (one-sample t over runs, SD/SE ambiguity
flagged, problem-sampling SE shown), ``two-proportions`` (Fisher's exact test, margin in problems),
``paired-reconstruction`` (b = c + n·gain over the published range of regressions, exact McNemar),
``minimum-detectable-difference``, ``comparator-kind``, ``identical-numbers``, ``benchmark-size``,
``reproduction``; and ``rerun``: the paired tests of ``audit.analysis`` on a sotacheck run's arms.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from scipy import stats

from sotacheck.audit.analysis import NotCompared, combine_runs, compare_if_possible
from sotacheck.audit.claim_registry import Claim, ClaimsError, load_registry
from sotacheck.audit.paired import mcnemar_exact
from sotacheck.audit.power import mdd_paired_exact, mdd_unpaired
from sotacheck.core.rundir import Run

Verdict = Literal["supported", "not significant", "unverifiable from what was published", "contradicted"]
SUPPORTED: Verdict = "supported"
NOT_SIGNIFICANT: Verdict = "not significant"
UNVERIFIABLE: Verdict = "unverifiable from what was published"
CONTRADICTED: Verdict = "contradicted"
ALPHA = 0.05

@dataclass(frozen=True)
class ClaimVerdict:
    id: str
    paper: str
    statement: str
    source: str
    check: str
    verdict: Verdict
    reason: str
    pvalue: float | None
    numbers: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "paper": self.paper, "statement": self.statement, "source": self.source,
                "check": self.check, "verdict": self.verdict, "reason": self.reason, "pvalue": self.pvalue,
                "numbers": self.numbers, "notes": list(self.notes)}


def _pp(value: float) -> str:
    return f"{value:.1f}"


def _provenance_notes(claim: Claim) -> list[str]:
    notes = []
    phrases = {"copied": "copied from another paper", "not-reproduced": "never reproduced",
               "unknown": "of unknown provenance"}
    if claim.baseline and claim.baseline.provenance in phrases:
        notes.append(f"the baseline number ({claim.baseline.name}) is {phrases[claim.baseline.provenance]}, not run "
                     f"under the same harness" + (f": {claim.baseline.note}" if claim.baseline.note else ""))
    if claim.note:
        notes.append(claim.note)
    return notes


def _margin_vs_single(claim: Claim) -> tuple[Verdict, str, float | None, dict[str, Any], list[str]]:
    assert claim.baseline is not None and claim.n is not None
    m, b = float(claim.method.value or 0), float(claim.baseline.value or 0)
    runs, spread = claim.method.runs or 1, claim.method.spread
    p_rate = m / 100
    problem_se = 100 * math.sqrt(p_rate * (1 - p_rate) / claim.n)
    numbers: dict[str, Any] = {"method": m, "baseline": b, "margin_pp": m - b, "runs": runs, "spread": spread,
                               "problem_sampling_se_pp": problem_se, "one_problem_pp": 100 / claim.n}
    notes = []
    if runs < 2 or not spread:
        p = _fisher(m, b, claim.n)
        numbers["fisher_p"] = p
        notes.append("no run spread published: two independent proportions used instead")
        verdict = SUPPORTED if p < ALPHA and m > b else NOT_SIGNIFICANT
        return verdict, f"{_pp(m)} vs {_pp(b)} on n = {claim.n}: Fisher's exact p = {p:.3g}.", p, numbers, notes
    df = runs - 1
    readings = {"sd": spread / math.sqrt(runs), "se": spread}
    kinds = [claim.method.spread_kind] if claim.method.spread_kind in ("sd", "se") else ["sd", "se"]
    pvalues = {}
    for kind in kinds:
        t = (m - b) / readings[kind]
        pvalues[kind] = float(2 * stats.t.sf(abs(t), df))
        numbers[f"t_if_{kind}"] = t
        numbers[f"p_if_{kind}"] = pvalues[kind]
    numbers["df"] = df
    if len(kinds) == 2:
        notes.append(f"the paper does not say whether ±{spread} is an SD or an SE: p = {pvalues['sd']:.3g} if SD, "
                     f"{pvalues['se']:.3g} if SE")
    notes.append(f"±{spread} over {runs} runs is run-to-run spread only; the problem-sampling SE at "
                 f"{_pp(m)} % with n = {claim.n} is {problem_se:.2f} pp")
    best = min(pvalues.values())
    worst = max(pvalues.values())
    margin_problems = (m - b) * claim.n / 100
    if worst < ALPHA and m > b:
        verdict, why = SUPPORTED, "significant under every reading of the spread"
    elif best >= ALPHA:
        verdict, why = NOT_SIGNIFICANT, "not significant under any reading of the spread"
    else:
        verdict, why = UNVERIFIABLE, "significant only if the spread is read one particular way"
    reason = (f"A {m - b:+.1f} pp margin ({margin_problems:+.1f} problems of {claim.n}) of a {runs}-run mean "
              f"{_pp(m)} ± {spread} over a single reported {_pp(b)} is {why} (one-sample t, df = {df}, "
              f"p = {best:.2f}{'' if len(kinds) == 1 else f' to {worst:.2f}'}).")
    return verdict, reason, best, numbers, notes


def _fisher(a_pct: float, b_pct: float, n: int) -> float:
    ka, kb = round(a_pct / 100 * n), round(b_pct / 100 * n)
    return float(stats.fisher_exact([[ka, n - ka], [kb, n - kb]]).pvalue)


def _achievable(value: float, n: int) -> bool:
    """Whether some k/n rounds to the published one-decimal percentage."""
    k = round(value / 100 * n)
    return any(abs(100 * j / n - value) <= 0.05 + 1e-9 for j in (k - 1, k, k + 1) if 0 <= j <= n)


def _two_proportions(claim: Claim) -> tuple[Verdict, str, float | None, dict[str, Any], list[str]]:
    assert claim.baseline is not None and claim.n is not None
    m, b, n = float(claim.method.value or 0), float(claim.baseline.value or 0), claim.n
    ka, kb = round(m / 100 * n), round(b / 100 * n)
    p = _fisher(m, b, n)
    numbers = {"method": m, "baseline": b, "n": n, "method_solved": ka, "baseline_solved": kb,
               "margin_problems": ka - kb, "one_problem_pp": 100 / n, "fisher_p": p}
    notes = [f"{_pp(v)} is not k/{n} for any k: check the number or the n" for v in (m, b)
             if (claim.method.runs or 1) == 1 and not _achievable(v, n)]
    notes.append("an unpaired test: the published numbers do not give the per-problem pairing")
    if p < ALPHA:
        verdict: Verdict = SUPPORTED if ka > kb else CONTRADICTED
    else:
        verdict = NOT_SIGNIFICANT
    reason = (f"{_pp(m)} vs {_pp(b)} on n = {n} is {ka} vs {kb} problems ({ka - kb:+d}, one problem = "
              f"{100 / n:.2f} pp); Fisher's exact p = {p:.3g}.")
    return verdict, reason, p, numbers, notes


def _paired_reconstruction(claim: Claim) -> tuple[Verdict, str, float | None, dict[str, Any], list[str]]:
    assert claim.n is not None and claim.margin is not None and claim.regressions is not None
    n, gain = claim.n, claim.margin / 100
    net = round(n * gain)
    rows = []
    for c in range(int(claim.regressions.low), int(claim.regressions.high) + 1):
        b = c + net
        rows.append((b, c, mcnemar_exact(b, c).pvalue))
    p_low, p_high = min(r[2] for r in rows), max(r[2] for r in rows)
    numbers = {"n": n, "gain_pp": claim.margin, "net_problems": net, "regressions": [claim.regressions.low,
               claim.regressions.high], "feasible": [{"b": b, "c": c, "p": p} for b, c, p in rows],
               "p_range": [p_low, p_high]}
    if p_high < ALPHA:
        verdict: Verdict = SUPPORTED
    elif p_low >= ALPHA:
        verdict = NOT_SIGNIFICANT
    else:
        verdict = UNVERIFIABLE
    reason = (f"With n = {n}, a {claim.margin:+.1f} pp gain is {net} problems net; with {int(claim.regressions.low)}–"
              f"{int(claim.regressions.high)} regressions (b = c + {net}) exact McNemar gives p between "
              f"{p_low:.2g} and {p_high:.2g}.")
    return verdict, reason, p_high, numbers, []


def _minimum_detectable(claim: Claim) -> tuple[Verdict, str, float | None, dict[str, Any], list[str]]:
    assert claim.n is not None and claim.differences is not None
    n = claim.n
    unpaired = mdd_unpaired(n, 0.5)
    paired = {psi: mdd_paired_exact(n, psi) for psi in (0.1, 0.2, 0.3)}
    numbers = {"n": n, "differences_pp": [claim.differences.low, claim.differences.high],
               "mdd_unpaired_pp_at_50": 100 * unpaired.up,
               "mdd_paired_pp_by_discordance": {f"{psi:.0%}": 100 * d for psi, d in paired.items()}}
    smallest = 100 * min(paired.values())
    verdict: Verdict = UNVERIFIABLE
    reason = (f"At n = {n}, one run detects with 80 % power only differences of {smallest:.1f}–"
              f"{100 * max(paired.values()):.1f} pp (paired, 10–30 % discordance) or {100 * unpaired.up:.1f} pp "
              f"(unpaired, near 50 %), so the published {claim.differences.low:g}–{claim.differences.high:g} pp "
              f"differences, reported without tests, cannot be resolved.")
    return verdict, reason, None, numbers, []


def _comparator_kind(claim: Claim) -> tuple[Verdict, str, float | None, dict[str, Any], list[str]]:
    assert claim.baseline is not None and claim.n is not None
    m, b = float(claim.method.value or 0), float(claim.baseline.value or 0)
    p = _fisher(m, b, claim.n)
    numbers = {"method": m, "baseline": b, "gain_pp": m - b, "fisher_p": p, "baseline_kind": claim.baseline.kind}
    if claim.baseline.kind == "base-model":
        return (CONTRADICTED, f"The {m - b:.1f} pp gain ({_pp(m)} vs {_pp(b)}) is over {claim.baseline.name}, a base "
                f"model without any method, not over another method; no multi-agent method is compared.",
                p, numbers, [f"the gain over the base model itself is significant (Fisher p = {p:.2g})"])
    return _two_proportions(claim)


def _identical_numbers(claim: Claim) -> tuple[Verdict, str, float | None, dict[str, Any], list[str]]:
    assert claim.same_as is not None
    value = claim.method.value
    numbers: dict[str, Any] = {"value": value, "same_as": claim.same_as.model_dump()}
    reason = (f"{value} is attributed both to {claim.method.name} ({claim.source}) and to {claim.same_as.name} "
              f"({claim.same_as.source}), which suggests a copying error")
    if claim.reference is not None:
        numbers["reference"] = claim.reference.model_dump()
        if value is not None and abs(claim.reference.value - value) > 0.5:
            return (CONTRADICTED, reason + f"; {claim.reference.source} gives {claim.reference.value} for "
                    f"{claim.reference.name}.", None, numbers, [])
    return UNVERIFIABLE, reason + ".", None, numbers, []


def _benchmark_size(claim: Claim, dataset_sizes: dict[str, int]) -> tuple[Verdict, str, float | None, dict[str, Any],
                                                                            list[str]]:
    stated = claim.n
    if claim.dataset is not None:
        if claim.dataset not in dataset_sizes:
            return UNVERIFIABLE, f"The shipped {claim.dataset} could not be loaded to count it.", None, {}, []
        actual, where = dataset_sizes[claim.dataset], f"the shipped {claim.dataset} (counted by sotacheck)"
    elif claim.shipped_n is not None:
        actual, where = claim.shipped_n, claim.shipped_source or "the shipped file"
    else:
        return UNVERIFIABLE, "No shipped copy to count.", None, {}, []
    numbers = {"stated_n": stated, "shipped_n": actual}
    if stated == actual:
        return SUPPORTED, f"The stated n = {stated} matches {where}.", None, numbers, []
    return CONTRADICTED, f"The stated n = {stated} does not match {where}: {actual}.", None, numbers, []


def _reproduction(claim: Claim) -> tuple[Verdict, str, float | None, dict[str, Any], list[str]]:
    assert claim.reproduction is not None and claim.n is not None
    m, r = float(claim.method.value or 0), float(claim.reproduction.value or 0)
    p = _fisher(m, r, claim.n)
    numbers = {"reported": m, "reproduced": r, "fisher_p": p, "n": claim.n}
    notes = [claim.reproduction.note] if claim.reproduction.note else []
    if p < ALPHA and r < m:
        return (CONTRADICTED, f"The reported {_pp(m)} was not reproduced: {claim.reproduction.name} got {_pp(r)} on "
                f"the same n = {claim.n} (Fisher p = {p:.2g}).", p, numbers, notes)
    return (SUPPORTED if p >= ALPHA else NOT_SIGNIFICANT,
            f"The reproduction ({_pp(r)}) is consistent with the reported {_pp(m)} (p = {p:.2g}).", p, numbers, notes)


def _no_test(claim: Claim) -> tuple[Verdict, str, float | None, dict[str, Any], list[str]]:
    why = {
        "average-margin": "an average over benchmarks of different sizes, without per-benchmark n or per-problem "
                          "results, has no sampling distribution to test",
        "cost-bound": "a cost figure or bound, not a tested margin; a rerun measures calls and tokens per problem",
        "decay-fit": "the fit's R² is not reported and the attempt-level data are not released; a max_attempts sweep "
                     "can measure it",
        "no-comparator": "there is no comparator number to test against",
    }[claim.check]
    return UNVERIFIABLE, f"Not testable from the publication: {why}.", None, {}, []


def _rerun(claim: Claim, runs: list[Run]) -> tuple[Verdict, str, float | None, dict[str, Any], list[str]]:
    assert claim.rerun is not None
    named = [run for run in runs if run.name == claim.rerun.run]
    if not named:
        return (UNVERIFIABLE, f"Needs the sotacheck run {claim.rerun.run!r} (pass --runs runs/{claim.rerun.run}).",
                None, {}, [])
    table = combine_runs(named)
    present = set(table.loc[table["dataset"] == claim.rerun.dataset, "arm"])
    for field_name in ("method_arm", "baseline_arm"):
        arm = getattr(claim.rerun, field_name)
        if arm not in present:
            raise ClaimsError(f"claim {claim.id!r}: field `rerun.{field_name}`: arm {arm!r} is not in run "
                              f"{claim.rerun.run!r} on {claim.rerun.dataset!r} (arms there: "
                              f"{', '.join(sorted(present)) or 'none'})")
    comparison = compare_if_possible(table, claim.rerun.method_arm, claim.rerun.baseline_arm, claim.rerun.dataset)
    if isinstance(comparison, NotCompared):
        return UNVERIFIABLE, f"In the rerun {claim.rerun.run!r}, {comparison.describe()}.", None, {}, []
    numbers = {"measured_margin_pp": 100 * comparison.diff, "ci_pp": [100 * comparison.ci_low, 100 * comparison.ci_high],
               "b": comparison.b_count, "c": comparison.c_count, "n": comparison.n, "test": comparison.test,
               "published_margin_pp": claim.margin if claim.margin is not None else (
                   (claim.method.value - claim.baseline.value)
                   if claim.baseline and claim.method.value is not None and claim.baseline.value is not None else None)}
    if comparison.pvalue < ALPHA:
        verdict: Verdict = SUPPORTED if comparison.diff > 0 else CONTRADICTED
    else:
        verdict = NOT_SIGNIFICANT
    reason = (f"In the rerun, {claim.rerun.method_arm} vs {claim.rerun.baseline_arm} on {comparison.n} "
              f"{claim.rerun.dataset} problems: {100 * comparison.diff:+.1f} pp (95 % CI {100 * comparison.ci_low:+.1f} "
              f"to {100 * comparison.ci_high:+.1f}), {comparison.b_count} won / {comparison.c_count} lost, "
              f"{comparison.test} p = {comparison.pvalue:.3g}.")
    return verdict, reason, float(comparison.pvalue), numbers, list(comparison.notes)


def evaluate(claim: Claim, paper: str, runs: list[Run] | None = None,
             dataset_sizes: dict[str, int] | None = None) -> ClaimVerdict:
    """The verdict for one claim."""
    published_only = {
        "margin-vs-single": _margin_vs_single, "two-proportions": _two_proportions,
        "paired-reconstruction": _paired_reconstruction, "minimum-detectable-difference": _minimum_detectable,
        "comparator-kind": _comparator_kind, "identical-numbers": _identical_numbers, "reproduction": _reproduction,
    }
    if claim.check in published_only:
        result = published_only[claim.check](claim)
    elif claim.check == "benchmark-size":
        result = _benchmark_size(claim, dataset_sizes or {})
    elif claim.check == "rerun":
        result = _rerun(claim, runs or [])
    else:
        result = _no_test(claim)
    verdict, reason, pvalue, numbers, notes = result
    notes = [*notes, *_provenance_notes(claim)]
    if pvalue is not None and not np.isfinite(pvalue):
        raise ClaimsError(f"claim {claim.id!r}: the check produced a non-finite p-value")
    return ClaimVerdict(claim.id, paper, claim.statement, claim.source, claim.check, verdict, reason, pvalue, numbers,
                        tuple(dict.fromkeys(notes)))


def audit_claims(files: list[Path], runs: list[Run] | None = None,
                 dataset_sizes: dict[str, int] | None = None) -> list[ClaimVerdict]:
    """Verdicts for every claim of every registry file, in file order."""
    verdicts = []
    for file in files:
        registry = load_registry(file)
        for claim in registry.claims:
            try:
                verdicts.append(evaluate(claim, registry.paper.id, runs, dataset_sizes))
            except ClaimsError as exc:
                raise ClaimsError(f"{file}: {exc}") from None
    return verdicts
