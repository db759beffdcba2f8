"""The statistical checks of a margin claim, each answering one question from what was published.

Problem sampling: ``paired-counts`` (exact McNemar on published discordant counts), ``paired-reconstruction``
(the range of the paired test's p over every per-problem pattern the published numbers allow:
:func:`sotacheck.audit.paired.pairing_range`). Shown, never deciding: ``two-proportions`` (Fisher's exact
test, the test for two *independent* samples: not a bound on the paired p) and run-to-run spread,
``margin-vs-single`` (t over the runs; the runs share the same problems).
``minimum-detectable-difference``: the smallest difference the benchmark could have detected.
Which of them decides is :mod:`sotacheck.audit.claims`' rule.

References
----------
.. [1] Fagerland, M. W., Lydersen, S., Laake, P. (2013). The McNemar test for binary matched-pairs data:
       mid-p and asymptotic are better than exact conditional. BMC Med. Res. Methodol. 13:91.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from sotacheck.audit import distributions as dist
from sotacheck.audit.claim_model import Claim, Side
from sotacheck.audit.paired import PairingRange, mcnemar_exact, mcnemar_range, pairing_range
from sotacheck.audit.power import mdd_paired_exact, mdd_unpaired
from sotacheck.core.deprecation import with_old_keys
from sotacheck.core.errors import ArgumentError, InputError

Verdict = Literal["supported", "not significant", "unverifiable from what was published", "contradicted"]
SUPPORTED: Verdict = "supported"
NOT_SIGNIFICANT: Verdict = "not significant"
UNVERIFIABLE: Verdict = "unverifiable from what was published"
CONTRADICTED: Verdict = "contradicted"
ALPHA = 0.05


@dataclass(frozen=True)
class CheckResult:
    """One check of a claim: the question it answers, its one-line result and what it alone would conclude.

    ``verdict`` is None for a check that informs without concluding (the minimum detectable difference of a
    margin, a baseline that is another method)."""

    name: str
    question: str
    result: str
    verdict: Verdict | None
    pvalue: float | None = None
    numbers: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "question": self.question, "result": self.result, "verdict": self.verdict,
                "pvalue": self.pvalue, "numbers": numbers_json(self.numbers), "notes": list(self.notes)}


# ``numbers`` keys renamed in #47 (old → new), written under both names in JSON for one release (docs/claims.md);
# ``p_if_LABEL`` → ``pvalue_if_LABEL`` too
OLD_NUMBER_KEYS = {"p_range": "pvalue_range", "p_range_attained": "pvalue_range_attained",
                   "p_high_seen": "pvalue_high_seen", "p_range_without_assumptions": "pvalue_range_without_assumptions"}


def numbers_json(numbers: dict[str, Any]) -> dict[str, Any]:
    """A check's ``numbers`` as JSON: each key renamed in #47 also under its old name (deprecated)."""
    renamed = OLD_NUMBER_KEYS | {"p_if_" + key.removeprefix("pvalue_if_"): key for key in numbers
                                 if key.startswith("pvalue_if_")}
    return with_old_keys(numbers, renamed)


def pp(value: float) -> str:
    return f"{value:.1f}"


def _significance(pvalue: float, direction: float) -> Verdict:
    if pvalue >= ALPHA:
        return NOT_SIGNIFICANT
    return SUPPORTED if direction > 0 else CONTRADICTED


def solved(value: float, n: int) -> int:
    """The number of problems a published percentage of ``n`` stands for."""
    return round(value / 100 * n)


def is_rate(side: Side | None) -> bool:
    return side is not None and side.value is not None and side.unit == "percent"


def paired_counts(claim: Claim) -> CheckResult:
    assert claim.discordant is not None
    b, c = claim.discordant.b, claim.discordant.c
    p = mcnemar_exact(b, c).pvalue
    return CheckResult(
        "paired-counts", "On the same problems, does the method solve significantly more than the baseline? "
        "(exact McNemar on the published discordant counts)",
        f"{b} problems solved only by the method, {c} only by the baseline: exact McNemar p = {p:.3g}.",
        _significance(p, b - c), p, {"b": b, "c": c, "n": claim.n})


NONNEGATIVE_CORRELATION = "nonnegative-correlation"


def _totals_range(claim: Claim) -> tuple[PairingRange, dict[str, Any], list[str]]:
    """The pairing range of a claim with both totals: its solved counts (over its runs), and notes."""
    assert claim.n is not None and claim.baseline is not None
    assert claim.method.value is not None and claim.baseline.value is not None
    n, notes = claim.n, []
    runs_a, runs_b = claim.method.runs or 1, claim.baseline.runs or 1
    ka, kb = round(claim.method.value / 100 * n * runs_a), round(claim.baseline.value / 100 * n * runs_b)
    numbers: dict[str, Any] = {"method_solved": ka if runs_a == 1 else ka / runs_a,
                               "baseline_solved": kb if runs_b == 1 else kb / runs_b}
    if runs_a > 1 or runs_b > 1:
        numbers |= {"runs": [runs_a, runs_b], "passes_over_runs": [ka, kb]}
    losses = None
    if claim.regressions is not None:
        if runs_a == runs_b == 1:
            losses = (math.ceil(claim.regressions.low), math.floor(claim.regressions.high))
        else:
            notes.append("the published regressions count whole problems; with runs they do not narrow the range")
    try:
        found = pairing_range(n, ka, kb, runs_a, runs_b, losses=losses,
                              nonnegative_correlation=NONNEGATIVE_CORRELATION in claim.assumptions)
    except ArgumentError as exc:
        if claim.regressions is None:
            raise InputError(f"claim {claim.id!r}: {exc}") from None
        raise InputError(f"claim {claim.id!r}: field `regressions`: {claim.regressions.low:g}–"
                         f"{claim.regressions.high:g} regressions are impossible with {ka} and {kb} problems solved "
                         f"of {n}") from None
    return found, numbers, notes


def _margin_range(claim: Claim) -> tuple[PairingRange, dict[str, Any], list[str]]:
    """The pairing range of a claim with a margin and n but not both totals (whole problems: c from
    max(0, −net) to (n − net) / 2, or the published regressions)."""
    assert claim.n is not None and claim.margin is not None
    n = claim.n
    net = round(n * claim.margin / 100)
    low, high = max(0, -net), (n - net) // 2  # b + c = 2c + net <= n
    if claim.regressions is not None:
        low, high = max(low, math.ceil(claim.regressions.low)), min(high, math.floor(claim.regressions.high))
        if low > high:
            raise InputError(f"claim {claim.id!r}: field `regressions`: {claim.regressions.low:g}–"
                             f"{claim.regressions.high:g} regressions are impossible with a net gain of {net} "
                             f"problems of {n}")
    notes = ([f"the assumption {NONNEGATIVE_CORRELATION} needs both totals; it is not applied"]
             if NONNEGATIVE_CORRELATION in claim.assumptions else [])
    return mcnemar_range(net, low, high), {"gain_pp": claim.margin}, notes


SETTLE = ("the per-problem results (a rerun or released logs), the discordant counts (problems only the method "
          "solved, only the baseline solved), or a published correlation of the two systems' per-problem results")


def range_text(found: PairingRange, source: str = "the totals") -> str:
    """``p from a to b over the pairings the totals allow``, each end with the pattern reaching it (or the
    bound it is)."""
    if found.low == found.high and found.low_attained and found.high_attained:
        return f"p = {found.low:.3g} over every pairing {source} allow"
    low = f"{found.low:.3g} ({found.low_pattern})" if found.low_attained else f"at least {found.low:.3g}"
    if found.high_attained:
        high = f"{found.high:.3g} ({found.high_pattern})"
    elif found.high_seen is not None:
        high = (f"at least {found.high_seen:.3g} ({found.high_pattern}) and at most {found.high:.3g} (Chernoff bound "
                "over every pattern)")
    else:
        high = f"at most {found.high:.3g} (Chernoff bound over every pattern)"
    return f"p from {low} to {high} over the pairings {source} allow"


def range_verdict(found: PairingRange, alpha: float = ALPHA) -> Verdict:
    """The pairing-range rule on a range: significant over every allowed pattern (high < α), supported or
    contradicted by the sign of the margin; over none (low ≥ α), not significant; otherwise unverifiable."""
    if found.high < alpha:
        return SUPPORTED if found.observed > 0 else CONTRADICTED
    return NOT_SIGNIFICANT if found.low >= alpha else UNVERIFIABLE


def paired_reconstruction(claim: Claim) -> CheckResult:
    """The paired test's p over every pairing the published numbers allow; the pairing-range rule decides
    (docs/claims.md): significant over every allowed pairing, ``supported`` (``contradicted`` when the
    margin is negative); over none, ``not significant``; otherwise ``unverifiable``. Its ``pvalue`` is None:
    a range has no one p (``numbers["pvalue_range"]`` = [low, high], the ends the rule compared with α)."""
    assert claim.n is not None
    n = claim.n
    both = is_rate(claim.method) and is_rate(claim.baseline)
    found, numbers, notes = _totals_range(claim) if both else _margin_range(claim)
    assumed = [NONNEGATIVE_CORRELATION] if NONNEGATIVE_CORRELATION in claim.assumptions and both else []
    numbers |= {"n": n, "test": found.test, "pvalue_range": [found.low, found.high],
                "pvalue_range_attained": [found.low_attained, found.high_attained], "pvalue_high_seen": found.high_seen,
                "most_significant": found.low_pattern, "least_significant": found.high_pattern,
                "assumptions": assumed, "alpha": ALPHA}
    if found.unit == 1:
        numbers["net_problems"] = found.observed
    verdict = range_verdict(found)
    source = ("the published regressions" if claim.regressions is not None and found.unit == 1 else "the totals") + (
        f" and the assumption of {NONNEGATIVE_CORRELATION}" if assumed else "")
    margin = (f"a net {found.observed:+d} problems of {n}" if found.unit == 1 else
              f"a net {found.observed / found.unit:+.3g} problems of {n} ({found.observed:+d}/{found.unit}: with runs, "
              f"a problem's outcome is the fraction of its runs solved)")
    result = f"{margin}; {found.test}: {range_text(found, source)}."
    if assumed:
        plain, _, _ = _totals_range(claim.model_copy(update={"assumptions": []}))
        numbers["pvalue_range_without_assumptions"] = [plain.low, plain.high]
        notes.append(f"this verdict assumes {NONNEGATIVE_CORRELATION} (the two systems' per-problem results are not "
                     f"negatively correlated, φ ≥ 0); without it, {range_text(plain)}")
    if verdict == UNVERIFIABLE:
        notes.append(f"the verdict hangs on the unpublished pairing (α = {ALPHA:g} lies inside the range); what "
                     f"would settle it: {SETTLE}")
    return CheckResult("paired-reconstruction", "Whatever the unpublished pairing of problems, is the paired test "
                       "significant? (its p over every pairing the published numbers allow)",
                       result[0].upper() + result[1:], verdict, None, numbers, tuple(notes))


def two_proportions(claim: Claim) -> CheckResult:
    assert claim.n is not None and claim.baseline is not None
    assert claim.method.value is not None and claim.baseline.value is not None
    m, base, n = claim.method.value, claim.baseline.value, claim.n
    ka, kb = solved(m, n), solved(base, n)
    p = dist.fisher_exact_two_sided([[ka, n - ka], [kb, n - kb]])
    notes = tuple(f"{pp(v)} is not k/{n} for any k: check the number or the n" for side, v in
                  ((claim.method, m), (claim.baseline, base)) if (side.runs or 1) == 1 and not _achievable(v, n))
    return CheckResult(
        "two-proportions", "Read as two independent samples, is the difference significant? (Fisher's exact test, "
        "the test for two independent samples: shown as evidence, never deciding a paired question)",
        f"{pp(m)} vs {pp(base)} on n = {n} is {ka} vs {kb} problems ({ka - kb:+d}, one problem = {100 / n:.2f} pp): "
        f"Fisher's exact p = {p:.3g}.", _significance(p, ka - kb), p,
        {"method": m, "baseline": base, "n": n, "method_solved": ka, "baseline_solved": kb,
         "margin_problems": ka - kb, "one_problem_pp": 100 / n}, notes)


def _achievable(value: float, n: int) -> bool:
    """Whether some k/n rounds to the published one-decimal percentage."""
    k = solved(value, n)
    return any(abs(100 * j / n - value) <= 0.05 + 1e-9 for j in (k - 1, k, k + 1) if 0 <= j <= n)


def _readings(side: Side) -> dict[str, float]:
    """The standard deviation over the runs under each reading of the published spread."""
    assert side.spread is not None and side.runs is not None
    readings = {"sd": side.spread, "se": side.spread * math.sqrt(side.runs)}
    return {kind: readings[kind] for kind in ((side.spread_kind,) if side.spread_kind in ("sd", "se") else ("sd", "se"))}


def margin_vs_single(claim: Claim) -> CheckResult:
    assert claim.baseline is not None and claim.method.value is not None and claim.baseline.value is not None
    method, base = claim.method, claim.baseline
    m, b, runs = float(claim.method.value), float(claim.baseline.value), int(method.runs or 1)
    pvalues: dict[str, float] = {}
    numbers: dict[str, Any] = {"method": m, "baseline": b, "margin_pp": m - b, "runs": runs, "spread": method.spread}
    paired_with_runs = (base.runs or 1) >= 2
    for kind, sd in _readings(method).items():
        for base_kind, base_sd in (_readings(base).items() if paired_with_runs else [("", 0.0)]):
            label = kind + (f"/{base_kind}" if base_kind else "")
            if paired_with_runs:
                t, p = dist.welch_from_stats(m, sd, runs, b, base_sd, int(base.runs or 1))
            else:
                t = (m - b) / (sd / math.sqrt(runs))
                p = dist.t_two_sided(t, runs - 1)
            pvalues[label] = p
            numbers[f"t_if_{label}"], numbers[f"pvalue_if_{label}"] = t, p
    best, worst = min(pvalues.values()), max(pvalues.values())
    if worst < ALPHA:
        verdict = _significance(worst, m - b)
    elif best >= ALPHA:
        verdict = NOT_SIGNIFICANT
    else:
        verdict = UNVERIFIABLE
    test_name = "Welch's t over both sides' runs" if paired_with_runs else f"one-sample t over the runs, df = {runs - 1}"
    reading = f"p = {best:.3g}" if len(pvalues) == 1 else f"p = {best:.3g} to {worst:.3g} over the readings of ±{method.spread}"
    notes = []
    if len(pvalues) > 1:
        notes.append("the paper does not say whether the spread is an SD or an SE: "
                     + ", ".join(f"p = {p:.3g} if {k.upper()}" for k, p in pvalues.items()))
    if claim.n is not None:
        rate = m / 100
        problem_se = 100 * math.sqrt(rate * (1 - rate) / claim.n)
        numbers |= {"problem_sampling_se_pp": problem_se, "one_problem_pp": 100 / claim.n}
        notes.append(f"±{method.spread} over {runs} runs is run-to-run spread on the same {claim.n} problems; the "
                     f"problem-sampling SE at {pp(m)} % with n = {claim.n} is {problem_se:.2f} pp")
    return CheckResult(
        "margin-vs-single", "Is the margin larger than run-to-run noise? (added evidence only: the runs share the "
        "same problems, so this cannot decide a claim about the benchmark)",
        f"{pp(m)} ± {method.spread} ({runs} runs) vs {pp(b)}: {test_name}, {reading}.", verdict, best, numbers,
        tuple(notes))


_mdd_paired = lru_cache(maxsize=256)(mdd_paired_exact)  # the same n and discordance recur across a registry


def minimum_detectable(claim: Claim, discordance: float | None = None) -> CheckResult:
    """The smallest difference the benchmark detects with 80 % power at α = 0.05; for published differences
    reported without tests (``differences``), whether they could be resolved at all."""
    assert claim.n is not None
    n = claim.n
    rated = next((side for side in (claim.baseline, claim.method) if side is not None and is_rate(side)), None)
    at = rated.value if rated is not None and rated.value is not None else 50.0
    unpaired = mdd_unpaired(n, at / 100)
    numbers: dict[str, Any] = {"n": n, "at_pp": at, "unpaired_up_pp": 100 * unpaired.up,
                               "unpaired_down_pp": 100 * unpaired.down}
    if discordance is not None and discordance > 0:
        paired = {discordance: _mdd_paired(n, discordance)}
    else:
        paired = {psi: _mdd_paired(n, psi) for psi in (0.1, 0.2, 0.3)}
    numbers["paired_pp_by_discordance"] = {f"{psi:.1%}": 100 * d if math.isfinite(d) else None
                                           for psi, d in paired.items()}
    observed = discordance is not None and discordance > 0
    paired_text = ", ".join((f"{100 * d:.1f} pp" if math.isfinite(d) else "none detectable") +
                            (f" at the observed {psi:.1%} discordance" if observed else f" if {psi:.0%} of problems are "
                             "discordant") for psi, d in paired.items())
    condition = "" if observed else " (the paired figure depends on the discordance, which is not published: each is " \
                                    "conditional on the discordance assumed)"
    result = (f"At n = {n}, 80 % power at α = 0.05 needs a difference of +{100 * unpaired.up:.1f} / "
              f"{100 * unpaired.down:.1f} pp unpaired (around {pp(at)} %), or paired {paired_text}{condition}.")
    verdict: Verdict | None = None
    if claim.differences is not None:
        smallest = 100 * min(min(paired.values()), unpaired.up)
        numbers["differences_pp"] = [claim.differences.low, claim.differences.high]
        numbers["smallest_detectable_pp"] = smallest
        verdict = UNVERIFIABLE
        resolved = "cannot be resolved" if claim.differences.low < smallest else "could be resolved, but no test is published"
        result += (f" The published {claim.differences.low:g}–{claim.differences.high:g} pp differences, reported "
                   f"without tests, {resolved}.")
    return CheckResult("minimum-detectable-difference", "What is the smallest difference this benchmark could have "
                       "detected?", result, verdict, None, numbers)
