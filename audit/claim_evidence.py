"""The checks of a claim beyond the published margin: per-problem data in a run, the comparator, the numbers'
consistency (a value attributed twice, a benchmark size, a reproduction), and why a claim cannot be tested."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sotacheck.audit import distributions as dist
from sotacheck.audit.claim_checks import (
    ALPHA,
    CONTRADICTED,
    NOT_SIGNIFICANT,
    SUPPORTED,
    UNVERIFIABLE,
    CheckResult,
    Verdict,
    pp,
    range_verdict,
    solved,
)
from sotacheck.audit.claim_model import Claim
from sotacheck.audit.paired import pairing_range
from sotacheck.core.errors import InputError

if TYPE_CHECKING:
    import pandas as pd


def rerun(claim: Claim, table: pd.DataFrame | None) -> CheckResult:
    """The paired test of :mod:`sotacheck.audit.analysis` on the claim's two arms of a run (per-problem data):
    ``table`` is that run's combined outcomes (:meth:`sotacheck.audit.combined.CombinedRuns.parts`), None when
    the run was not given."""
    from sotacheck.audit.analysis import NotCompared, compare_if_possible  # pandas: only for runs

    assert claim.rerun is not None
    arms = claim.rerun
    question = "On the same problems, does the method solve significantly more than the baseline? (paired test " \
               "on the per-problem results of a run)"
    if table is None:
        return CheckResult("rerun", question, f"Needs the run {arms.run!r} with the per-problem results (pass "
                           f"--runs runs/{arms.run}).", None)
    present = set(table.loc[table["dataset"] == arms.dataset, "arm"])
    for field_name in ("method_arm", "baseline_arm"):
        arm = getattr(arms, field_name)
        if arm not in present:
            raise InputError(f"claim {claim.id!r}: field `rerun.{field_name}`: arm {arm!r} is not in run {arms.run!r} "
                             f"on {arms.dataset!r} (arms there: {', '.join(sorted(present)) or 'none'})")
    comparison = compare_if_possible(table, arms.method_arm, arms.baseline_arm, arms.dataset)
    if isinstance(comparison, NotCompared):
        return CheckResult("rerun", question, f"In the rerun {arms.run!r}, {comparison.describe()}.", UNVERIFIABLE)
    published = claim.margin if claim.margin is not None else (
        claim.method.value - claim.baseline.value
        if claim.baseline and claim.method.value is not None and claim.baseline.value is not None else None)
    numbers = {"measured_margin_pp": 100 * comparison.diff, "ci_pp": [100 * comparison.ci_low, 100 * comparison.ci_high],
               "b": comparison.b_count, "c": comparison.c_count, "n": comparison.n, "test": comparison.test,
               "published_margin_pp": published}
    verdict: Verdict = NOT_SIGNIFICANT
    if comparison.pvalue < ALPHA:
        verdict = SUPPORTED if comparison.diff > 0 else CONTRADICTED
    result = (f"In the run, {arms.method_arm} vs {arms.baseline_arm} on {comparison.n} {arms.dataset} problems: "
              f"{100 * comparison.diff:+.1f} pp (two-sided 95 % paired bootstrap CI {100 * comparison.ci_low:+.1f} to "
              f"{100 * comparison.ci_high:+.1f}), "
              f"{comparison.b_count} won / {comparison.c_count} lost, {comparison.test} p = {comparison.pvalue:.3g}.")
    return CheckResult("rerun", question, result, verdict, float(comparison.pvalue), numbers, tuple(comparison.notes))


def comparator_kind(claim: Claim) -> CheckResult:
    assert claim.baseline is not None
    base = claim.baseline
    question = "Is the baseline another method, not the base model without any method?"
    if base.kind == "method":
        return CheckResult("comparator-kind", question, f"Yes: {base.name} is another method.", None)
    gain = (claim.method.value - base.value) if claim.method.value is not None and base.value is not None else None
    gain_text = f"the {gain:.1f} pp gain ({pp(claim.method.value or 0)} vs {pp(base.value or 0)})" if gain is not None \
        else "the gain"
    return CheckResult("comparator-kind", question, f"No: {gain_text} is over {base.name}, a base model without any "
                       "method, not over another method; no other method is compared.", CONTRADICTED, None,
                       {"baseline_kind": base.kind, "gain_pp": gain})


def identical_numbers(claim: Claim) -> CheckResult:
    assert claim.same_as is not None
    value = claim.method.value
    numbers: dict[str, Any] = {"value": value, "same_as": claim.same_as.model_dump()}
    result = (f"{value} is attributed both to {claim.method.name} ({claim.source}) and to {claim.same_as.name} "
              f"({claim.same_as.source}), which suggests a copying error")
    verdict: Verdict = UNVERIFIABLE
    if claim.reference is not None:
        numbers["reference"] = claim.reference.model_dump()
        if value is not None and abs(claim.reference.value - value) > 0.5:
            result += f"; {claim.reference.source} gives {claim.reference.value} for {claim.reference.name}"
            verdict = CONTRADICTED
    return CheckResult("identical-numbers", "Is the number attributed to this system alone, and does it agree with "
                       "an independent source?", result + ".", verdict, None, numbers)


def benchmark_size(claim: Claim, dataset_sizes: dict[str, int]) -> CheckResult:
    question = "Does the stated n match the benchmark's problems as shipped?"
    if claim.dataset is not None:
        if claim.dataset not in dataset_sizes:
            return CheckResult("benchmark-size", question, f"The shipped {claim.dataset} could not be loaded to count "
                               "it.", UNVERIFIABLE)
        actual, where = dataset_sizes[claim.dataset], f"the shipped {claim.dataset} (counted by sotacheck)"
    else:
        assert claim.shipped_n is not None
        actual, where = claim.shipped_n, claim.shipped_source or "the shipped file"
    numbers = {"stated_n": claim.n, "shipped_n": actual}
    if claim.n == actual:
        return CheckResult("benchmark-size", question, f"The stated n = {claim.n} matches {where}.", SUPPORTED, None,
                           numbers)
    return CheckResult("benchmark-size", question, f"The stated n = {claim.n} does not match {where}: {actual}.",
                       CONTRADICTED, None, numbers)


def reproduction(claim: Claim) -> CheckResult:
    """Whether an independent reproduction reaches the reported number: the same method twice on the same
    problems, pairing unknown, so the pairing-range rule decides (:func:`sotacheck.audit.paired.pairing_range`):
    contradicted only when the reproduction is significantly below over every pairing the two totals allow,
    consistent only when it is significantly different over none. Fisher's p (two independent samples) is shown."""
    assert claim.reproduction is not None and claim.n is not None
    assert claim.method.value is not None and claim.reproduction.value is not None
    m, r, n = claim.method.value, claim.reproduction.value, claim.n
    km, kr = solved(m, n), solved(r, n)
    found = pairing_range(n, km, kr)
    fisher = dist.fisher_exact_two_sided([[km, n - km], [kr, n - kr]])
    numbers = {"reported": m, "reproduced": r, "n": n, "pvalue_range": [found.low, found.high], "fisher_pvalue": fisher}
    notes = (claim.reproduction.note,) if claim.reproduction.note else ()
    question = ("Does an independent reproduction reach the reported number? (the paired test over every pairing "
                "the two totals allow)")
    shown = f"paired p from {found.low:.2g} to {found.high:.2g} over the pairings the totals allow; Fisher p = {fisher:.2g}"
    verdict = range_verdict(found)
    if verdict == SUPPORTED:  # the report significantly above its reproduction over every pairing
        return CheckResult("reproduction", question, f"The reported {pp(m)} was not reproduced: "
                           f"{claim.reproduction.name} got {pp(r)} on the same n = {n} ({shown}).",
                           CONTRADICTED, None, numbers, notes)
    if verdict == UNVERIFIABLE:
        return CheckResult("reproduction", question, f"The reproduction ({pp(r)}) against the reported {pp(m)} hangs "
                           f"on the unpublished pairing ({shown}).", UNVERIFIABLE, None, numbers, notes)
    consistent = verdict == NOT_SIGNIFICANT
    return CheckResult("reproduction", question, f"The reproduction ({pp(r)}) is "
                       f"{'consistent with' if consistent else 'significantly above'} the reported {pp(m)} ({shown}).",
                       SUPPORTED if consistent else NOT_SIGNIFICANT, None, numbers, notes)


_NOT_TESTABLE = {
    "average-margin": "n is not published (the benchmark is {benchmark!r}): an average over benchmarks of different "
                      "sizes, without per-benchmark n or per-problem results, has no sampling distribution to test",
    "cost-bound": "a cost figure or bound ({unit}), not a pass rate; a rerun measures calls and tokens per problem",
    "decay-fit": "the fit's R² is not reported and the attempt-level data are not released; a max_attempts sweep "
                 "can measure it",
    "no-comparator": "there is no comparator number to test against",
    "setting": "a setting, not a measured result; a sweep over it can measure its effect",
}


def not_testable(claim: Claim) -> CheckResult | None:
    """Why nothing published can test the claim, or None when something can."""
    unit = next((s.unit for s in (claim.method, claim.baseline) if s is not None and s.unit != "percent"), None)
    has_totals = claim.method.value is not None and claim.baseline is not None and claim.baseline.value is not None
    has_margin = has_totals or claim.margin is not None
    name: str | None = None
    if claim.kind in ("fit", "setting"):
        name = "decay-fit" if claim.kind == "fit" else "setting"
    elif unit is not None:
        name = "cost-bound"
    elif claim.kind == "margin" and claim.n is None and has_margin:
        name = "average-margin"
    else:
        testable = {"margin": has_margin or claim.differences or claim.discordant or claim.rerun,
                    "value": claim.reproduction is not None or claim.same_as is not None}
        name = None if testable.get(claim.kind, True) else "no-comparator"
    if name is None:
        return None
    why = _NOT_TESTABLE[name].format(benchmark=claim.benchmark, unit=unit)
    return CheckResult(name, "Can the published numbers test the claim at all?", f"No: {why}.", UNVERIFIABLE)
