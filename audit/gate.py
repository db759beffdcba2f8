"""The CI regression gate: does a candidate run's pass rate drop below a baseline's — really, not by noise?

The gate compares the *baseline's* problems: a problem of the baseline the candidate has no result for is
unusable input (:class:`GateInputError`, the command's exit 2), never a pass — a candidate that leaves out
the problems it fails would otherwise pass — unless ``missing_as_failure`` asks for those problems to be
judged as failures, or ``candidate_problems_only`` asks for a gate of the slice the candidate ran (a
``--limit`` rerun, say), which the decision then states as such: on n of the baseline's problems, the others
not judged. Problems only the candidate has are not compared, and the decision says so.

Pairs the problems (and repeats) both runs have, then per dataset:

- one run each: the one-sided exact McNemar test of "more problems lost than gained" (binomial on the
  discordant pairs, alternative ``greater`` in the direction of a drop);
- repeats: the one-sided sign-flip permutation test on per-problem mean differences (the problem is the
  unit, so three failing repeats of one problem are one piece of evidence, not three);
- an interval of candidate − baseline, two-sided at 1 − 2 alpha, whose role the decision names
  (:attr:`GateCheck.interval_label`): in ``significance`` mode with one run each, the exact interval that
  inverts the deciding test (Clopper–Pearson on the lost share of the discordant problems: its upper end
  is below 0 exactly when the one-sided exact McNemar p is below alpha), so the two never disagree; with
  repeats, the paired cluster bootstrap, shown as a description while the exact sign-flip test decides (a
  disagreement between them is stated); in ``noninferiority`` mode the bootstrap's lower end decides.

``mode="significance"`` fails when the drop is significant at ``alpha``; ``mode="noninferiority"`` fails
when the one-sided (1 − alpha) lower confidence bound lies below ``-max_drop``. ``max_drop`` is a fraction
here and in percentage points on the command line (``--max-drop 2`` is 0.02, ``--max-drop 0.5`` half a
point). Every decision carries a power note: the smallest drop in pass rate this gate detects with 80 %
power, from the test it actually used (exact McNemar at one repeat; the sign-flip test on per-problem mean
differences with their observed spread at K repeats, see ``sotacheck.audit.power.mdd_paired``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np
import pandas as pd

from sotacheck.audit.analysis import paired_outcomes
from sotacheck.audit.intervals import ConfidenceInterval, proportion_interval
from sotacheck.audit.paired import mcnemar_exact, paired_bootstrap_difference, sign_flip_test
from sotacheck.audit.power import mdd_paired
from sotacheck.audit.studies import condition_differences
from sotacheck.core.errors import InputError
from sotacheck.core.rundir import Run

Mode = Literal["significance", "noninferiority"]
PASS, REGRESSION, UNUSABLE = 0, 1, 2


class GateInputError(InputError, ValueError):
    """Input the gate cannot decide on (exit code 2); the message is the explanation for the user."""


@dataclass(frozen=True)
class GateSettings:
    alpha: float = 0.05
    max_drop: float = 0.0
    min_n: int = 30
    mode: Mode = "significance"
    max_error_rate: float = 0.05
    n_resamples: int = 9_999
    seed: int = 0
    missing_as_failure: bool = False
    candidate_problems_only: bool = False

    def __post_init__(self) -> None:
        if self.missing_as_failure and self.candidate_problems_only:
            raise GateInputError("give at most one of {missing_as_failure} and {candidate_problems_only}: the baseline's "
                                 "problems the candidate lacks are either failures or not judged",
                                 parameters=("missing_as_failure", "candidate_problems_only"))
        if not 0 < self.alpha < 0.5:
            raise GateInputError(f"{{alpha}} must be in (0, 0.5), got {self.alpha}", parameters=("alpha",))
        if not 0 <= self.max_drop < 1:
            raise GateInputError(f"{{max_drop}} must be in [0, 1), got {self.max_drop}", parameters=("max_drop",))
        if self.min_n < 1:
            raise GateInputError(f"{{min_n}} must be at least 1, got {self.min_n}", parameters=("min_n",))
        if self.mode not in ("significance", "noninferiority"):
            raise GateInputError(f"{{mode}} must be 'significance' or 'noninferiority', got {self.mode!r}", parameters=("mode",))
        if self.mode == "noninferiority" and self.max_drop == 0:
            # The lower bound of the difference of two identical methods is below 0 in nearly every run, so a
            # margin of 0 fails identical methods most of the time: the margin has to be the user's choice.
            raise GateInputError("noninferiority mode needs the largest drop you accept, {max_drop} above 0 "
                                 "(e.g. two points); with 0 it fails identical methods in most runs",
                                 parameters=("max_drop",))
        if not 0 <= self.max_error_rate <= 1:
            raise GateInputError(f"{{max_error_rate}} must be in [0, 1], got {self.max_error_rate}",
                                 parameters=("max_error_rate",))


@dataclass(frozen=True)
class GateCheck:
    """The decision for one dataset."""

    dataset: str
    baseline_arm: str
    candidate_arm: str
    n: int
    n_repeats: int
    baseline_rate: float
    candidate_rate: float
    diff: float
    ci_low: float
    ci_high: float
    drops: int
    gains: int
    test: str
    pvalue: float
    regression: bool
    mdd: float
    reason: str
    notes: tuple[str, ...] = ()
    lost: tuple[str, ...] = ()
    gained: tuple[str, ...] = ()
    alpha: float = 0.05
    interval_method: Literal["exact", "bootstrap"] = "bootstrap"
    mode: Mode = "significance"
    baseline_problems: int = 0  # the baseline's problems on the dataset, compared or not

    @property
    def interval_label(self) -> str:
        """What ``ci_low``/``ci_high`` are: their level, sidedness and method, and whether they or the test
        decide."""
        level = f"two-sided {100 * (1 - 2 * self.alpha):.0f} %"
        if self.mode == "noninferiority":
            return (f"{level} paired cluster-bootstrap interval; its lower end, the one-sided "
                    f"{100 * (1 - self.alpha):.0f} % lower bound, decides (the test's p is shown, not deciding)")
        if self.interval_method == "exact":
            m = self.drops + self.gains
            return (f"{level} exact interval inverting the test, conditional on the {m} discordant problems "
                    f"(Clopper-Pearson on the share lost, times {m}/{self.n}): its upper end is below 0 exactly "
                    f"when p < {self.alpha:g}")
        return f"{level} paired cluster-bootstrap interval, descriptive: the test decides"


@dataclass(frozen=True)
class GateResult:
    settings: GateSettings
    checks: tuple[GateCheck, ...] = field(default_factory=tuple)

    @property
    def exit_code(self) -> int:
        return REGRESSION if any(c.regression for c in self.checks) else PASS


def resolve_arm(run: Run, arm: str | None, role: str) -> str:
    """The arm named after ``:`` or, when none is named, the run's only arm."""
    arms = list(dict.fromkeys(run.outcomes["arm"]))
    if arm is None:
        if len(arms) != 1:
            raise GateInputError(f"the {role} run {run.name} has arms {', '.join(arms)}; name one as "
                                 f"{run.path or run.name}:ARM")
        return arms[0]
    if arm not in arms:
        raise GateInputError(f"the {role} run {run.name} has no arm {arm!r}; its arms are {', '.join(arms)}")
    return arm


def _error_rate(table: pd.DataFrame, arm: str, dataset: str) -> float:
    cells = table[(table["arm"] == arm) & (table["dataset"] == dataset)]
    return float((cells["status"] == "error").mean()) if len(cells) else 0.0


def gate(baseline: Run, candidate: Run, baseline_arm: str | None = None, candidate_arm: str | None = None,
         dataset: str | None = None, settings: GateSettings | None = None) -> GateResult:
    """Decide, per dataset of the baseline, whether ``candidate`` regressed against ``baseline``."""
    settings = settings or GateSettings()
    base_arm = resolve_arm(baseline, baseline_arm, "baseline")
    cand_arm = resolve_arm(candidate, candidate_arm, "candidate")
    base_table = baseline.outcomes[baseline.outcomes["arm"] == base_arm]
    cand_table = candidate.outcomes[candidate.outcomes["arm"] == cand_arm]
    datasets = sorted(set(base_table["dataset"]))
    if dataset is not None:
        if dataset not in datasets:
            raise GateInputError(f"dataset {dataset!r} is not in the baseline; its datasets: {', '.join(datasets)}")
        datasets = [dataset]
    # Named by the user, the two runs may differ in more than the change under test (a new model, say):
    # the decision is made, and says so.
    differ = condition_differences(baseline, base_arm, candidate, cand_arm)
    notes = (f"baseline and candidate: {'; '.join(differ)}",) if differ else ()
    checks = [_check(base_table, cand_table, base_arm, cand_arm, d, settings) for d in datasets]
    return GateResult(settings, tuple(replace(check, notes=check.notes + notes) for check in checks))


def _problems_of(table: pd.DataFrame, dataset: str) -> set[str]:
    return set(table.loc[table["dataset"] == dataset, "problem"].astype(str))


def _first(ids: set[str], shown: int = 5) -> str:
    ordered = sorted(ids, key=_natural)
    return ", ".join(ordered[:shown]) + (f" and {len(ordered) - shown} more" if len(ordered) > shown else "")


def _coverage(base_table: pd.DataFrame, cand_table: pd.DataFrame, cand_arm: str, dataset: str,
              settings: GateSettings) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """The two tables on ``dataset`` checked against the baseline's problems: a baseline problem the candidate
    lacks is an error, or with ``missing_as_failure`` a failure in every repeat, or with
    ``candidate_problems_only`` left out of both; the notes say what was done and which problems only the
    candidate has (not compared)."""
    base_problems, cand_problems = _problems_of(base_table, dataset), _problems_of(cand_table, dataset)
    missing, extra = base_problems - cand_problems, cand_problems - base_problems
    notes = []
    if missing and not (settings.missing_as_failure or settings.candidate_problems_only):
        whole = (f"no overlap: the candidate has no result on any of the baseline's {len(base_problems)} problems "
                 f"of {dataset}" + ("" if cand_problems else " (gate the datasets both have with {dataset})")
                 if missing == base_problems else
                 f"the candidate lacks {len(missing)} of the baseline's {len(base_problems)} problems on {dataset}")
        raise GateInputError(f"{whole} ({_first(missing)}); a problem left out is never a pass: judge them too, pass "
                             f"{{missing_as_failure}} to count them as failures, or {{candidate_problems_only}} to gate "
                             f"only the slice the candidate ran",
                             parameters=("dataset", "missing_as_failure", "candidate_problems_only"))
    if missing and settings.missing_as_failure:
        cells = cand_table[cand_table["dataset"] == dataset]
        repeats = sorted(set(cells["repeat"])) or sorted(set(base_table.loc[base_table["dataset"] == dataset, "repeat"]))
        filler = pd.DataFrame([{"arm": cand_arm, "dataset": dataset, "problem": problem, "repeat": repeat,
                                "passed": False, "status": "failed"} for problem in sorted(missing) for repeat in repeats])
        cand_table = pd.concat([cand_table, filler], ignore_index=True)
        notes.append(f"{len(missing)} of the baseline's problems absent from the candidate judged as failures, as "
                     f"asked ({_first(missing)})")
    elif missing:
        base_table = base_table[~((base_table["dataset"] == dataset) & base_table["problem"].astype(str).isin(missing))]
        notes.append(f"a gate of the slice the candidate ran, as asked: {len(missing)} of the baseline's "
                     f"{len(base_problems)} problems not judged ({_first(missing)})")
    if extra:
        notes.append(f"{len(extra)} problem(s) only in the candidate, not in the baseline, not compared ({_first(extra)})")
    return base_table, cand_table, notes


def _exact_interval(drops: int, gains: int, n: int, alpha: float) -> ConfidenceInterval:
    """The two-sided (1 − 2 alpha) interval of candidate − baseline that inverts the one-sided exact McNemar
    test: Clopper–Pearson on the share of drops among the m discordant problems, scaled by m / n (the
    difference is (gains − drops) / n). Its upper end is below 0 exactly when the test's p is below alpha."""
    m = drops + gains
    if m == 0:
        return ConfidenceInterval(0.0, 0.0)
    share = proportion_interval(drops, m, 1 - 2 * alpha, "clopper-pearson")
    return ConfidenceInterval(m / n * (1 - 2 * share.high), m / n * (1 - 2 * share.low))


def _check(base_table: pd.DataFrame, cand_table: pd.DataFrame, base_arm: str, cand_arm: str, dataset: str,
           settings: GateSettings) -> GateCheck:
    for table, arm, role in ((base_table, base_arm, "baseline"), (cand_table, cand_arm, "candidate")):
        rate = _error_rate(table, arm, dataset)
        if rate > settings.max_error_rate:
            raise GateInputError(f"too many errors: {100 * rate:.1f} % of the {role}'s cells on {dataset} are "
                                 f"errors (no valid result), above the allowed {100 * settings.max_error_rate:.1f} %; "
                                 f"a gate on what is left could hide a regression")
    baseline_problems = len(_problems_of(base_table, dataset))
    base_table, cand_table, notes = _coverage(base_table, cand_table, cand_arm, dataset, settings)
    paired = paired_outcomes(base_table, base_arm, cand_table, cand_arm, dataset, common_repeats=True)
    shared, xb, xc = paired.problems, paired.a, paired.b
    if paired.unpaired:
        notes.append(f"{paired.unpaired} problem(s) with an errored or missing repeat in either run were left out")
    if len(shared) == 0:
        raise GateInputError(f"no overlap on {dataset}: the two runs share no problem with complete results")
    if len(shared) < settings.min_n:
        raise GateInputError(f"too few problems: the runs share {len(shared)} problem(s) on {dataset}, fewer than "
                             f"{{min_n}} {settings.min_n}; a gate this small cannot tell a drop from noise",
                             parameters=("min_n",))
    mean_b, mean_c = xb.mean(axis=1), xc.mean(axis=1)
    drops, gains = paired.wins_losses  # problems the baseline did better on are the candidate's drops
    lost = tuple(sorted((str(problem) for problem in shared[mean_c < mean_b]), key=_natural))
    gained = tuple(sorted((str(problem) for problem in shared[mean_c > mean_b]), key=_natural))
    n_repeats = xb.shape[1]
    if n_repeats == 1:
        test_name = "one-sided exact McNemar"
        pvalue = mcnemar_exact(drops, gains, alternative="greater").pvalue
    else:
        test_name = f"one-sided sign-flip permutation over problems ({n_repeats} repeats)"
        pvalue = sign_flip_test(xb, xc, alternative="greater", n_resamples=settings.n_resamples,
                                rng=settings.seed).pvalue
    exact = settings.mode == "significance" and n_repeats == 1
    ci = (_exact_interval(drops, gains, len(shared), settings.alpha) if exact else
          paired_bootstrap_difference(xc, xb, 1 - 2 * settings.alpha, n_resamples=10_000, rng=settings.seed))
    diff = float(mean_c.mean() - mean_b.mean())
    mdd = mdd_paired(xb, xc, settings.alpha, 0.8, "greater").mdd
    if settings.mode == "significance":
        regression = pvalue < settings.alpha and diff < 0
        reason = (f"drop of {-100 * diff:.1f} points is significant (p = {pvalue:.3g} < {settings.alpha})"
                  if regression else f"no significant drop (p = {pvalue:.3g} >= {settings.alpha})" if diff < 0
                  else f"no drop (difference {100 * diff:+.1f} points)")
        if not exact and (ci.high < 0) != regression:
            notes.append(f"the bootstrap interval {'excludes' if ci.high < 0 else 'reaches'} 0 while the test "
                         f"{'does not reject' if ci.high < 0 else 'rejects'}: the test decides, being exact where "
                         f"the bootstrap is approximate (few discordant problems)")
    else:
        regression = ci.low < -settings.max_drop
        bound = f"the one-sided {100 * (1 - settings.alpha):.0f} % lower bound {100 * ci.low:+.1f} points"
        reason = (f"{bound} is below the allowed drop of {100 * settings.max_drop:g} points" if regression
                  else f"{bound} is within the allowed drop of {100 * settings.max_drop:g} points")
    return GateCheck(dataset, base_arm, cand_arm, len(shared), n_repeats, float(mean_b.mean()),
                     float(mean_c.mean()), diff, ci.low, ci.high, drops, gains, test_name, float(pvalue),
                     bool(regression), float(mdd), reason, tuple(notes), lost, gained, settings.alpha,
                     "exact" if exact else "bootstrap", settings.mode, baseline_problems)


def _natural(problem: str) -> list[tuple[int, int | str]]:
    """``HumanEval/9`` before ``HumanEval/10``."""
    return [(0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", problem)]


def power_note(check: GateCheck) -> str:
    """One sentence on what this gate could have seen."""
    if not np.isfinite(check.mdd):
        return (f"Power: with {check.n} problems and {check.drops + check.gains} discordant ones, no drop is "
                f"detectable with 80 % power at this discordance; a green gate here is not evidence of no drop.")
    spread = (f"the observed discordance ({(check.drops + check.gains) / check.n:.1%} of problems)"
              if check.n_repeats == 1 else f"the observed spread of per-problem differences over {check.n_repeats} repeats")
    return (f"Power: with {check.n} problems at {spread}, the smallest drop in pass rate this gate detects "
            f"with 80 % power is {100 * check.mdd:.1f} points; smaller drops can pass unnoticed.")
