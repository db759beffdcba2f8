"""Paired comparisons of two arms on the same problems.

This module owns every paired test sotacheck runs. One run each: exact McNemar (binomial on the discordant
pairs) with mid-p. K runs each: the sign-flip permutation test on per-problem mean differences, which tests
the *average* difference (the pass-rate difference) and reduces to McNemar at K = 1 (its exact lattice
arithmetic: :mod:`sotacheck.audit.signflip`). From published totals alone, the range of those tests' p over
every per-problem pattern the totals allow (:func:`feasible_mcnemar`, :func:`pairing_range`, computed in
:mod:`sotacheck.audit.paired_range` and imported from here). Paired
cluster-bootstrap CI of the difference. Holm across a table of comparisons, named explicitly
(``multipletests``' default is Holm–Šidák).

:func:`cmh_test` (Cochran–Mantel–Haenszel, one stratum per problem) is kept for users who want it, but it
is not part of the analysis' output: it is a large-sample test of a common odds ratio of 1 — of "no
association in any problem" — and so a second p-value for the question the exact sign-flip test answers
(its behaviour under effects that cancel: ``bench/bench_power.py``, part 2, and ``bench/RESULTS.md``).

References
----------
.. [1] McNemar, Q. (1947). Psychometrika 12(2).
.. [2] Fagerland, Lydersen & Laake (2013). The McNemar test for binary matched-pairs data: mid-p and
       asymptotic are better than exact conditional. BMC Med. Res. Methodol. 13:91.
.. [3] Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scand. J. Stat. 6.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np

from sotacheck.audit import distributions as dist
from sotacheck.audit import signflip
from sotacheck.audit.intervals import ConfidenceInterval, check_confidence_level, outcome_matrix_of
from sotacheck.audit.paired_range import PairingRange as PairingRange  # the range of a paired test: public here
from sotacheck.audit.paired_range import chernoff_envelope as chernoff_envelope
from sotacheck.audit.paired_range import feasible_mcnemar as feasible_mcnemar
from sotacheck.audit.paired_range import mcnemar_range as mcnemar_range
from sotacheck.audit.paired_range import pairing_range as pairing_range
from sotacheck.core.errors import ArgumentError

Alternative = Literal["two-sided", "greater", "less"]


@dataclass(frozen=True)
class McNemarResult:
    """Exact McNemar. ``b`` = problems only arm A solved, ``c`` = only arm B solved.

    ``statistic`` is b; ``pvalue`` the exact binomial p; ``midp`` the mid-p. For
    ``alternative="greater"`` the test is of A better than B (b > c); ``"less"`` of A worse."""

    statistic: int
    pvalue: float
    midp: float
    b: int
    c: int
    alternative: str


def _counts_iv(b: int, c: int) -> tuple[int, int]:
    """The discordant counts as integers: a whole number given as a float (``4.0``) is taken as that
    integer; anything else that is not a non-negative whole number is an error naming the argument."""
    counts = []
    for name, value in (("b", b), ("c", c)):
        try:
            whole = isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool) \
                and float(value).is_integer()
        except (TypeError, ValueError, OverflowError):
            whole = False
        if not whole or value < 0:
            raise ArgumentError(f"`{name}` must be a non-negative integer, got {value!r}")
        counts.append(int(value))
    return counts[0], counts[1]


def mcnemar_exact(b: int, c: int, alternative: Alternative = "two-sided") -> McNemarResult:
    """Exact McNemar from the discordant counts (whole numbers; ``4.0`` is read as 4)."""
    b, c = _counts_iv(b, c)
    if alternative not in ("two-sided", "greater", "less"):
        raise ArgumentError(f"`alternative` must be 'two-sided', 'greater' or 'less', got {alternative!r}")
    n = b + c
    if n == 0:
        return McNemarResult(b, 1.0, 1.0, b, c, alternative)
    if alternative == "two-sided":
        p = float(dist.binom_two_sided_half(b, n))
        k = min(b, c)
        midp = min(1.0, float(2 * (dist.binom_cdf(k, n, 0.5) - 0.5 * dist.binom_pmf(k, n, 0.5))))
    elif alternative == "greater":
        p = float(dist.binom_sf(b - 1, n, 0.5))
        midp = float(dist.binom_sf(b, n, 0.5) + 0.5 * dist.binom_pmf(b, n, 0.5))
    else:
        p = float(dist.binom_cdf(b, n, 0.5))
        midp = float(dist.binom_cdf(b, n, 0.5) - 0.5 * dist.binom_pmf(b, n, 0.5))
    return McNemarResult(b, p, float(midp), b, c, alternative)


@dataclass(frozen=True)
class PermutationResult:
    """Sign-flip permutation test of the mean per-problem difference (A − B)."""

    statistic: float
    pvalue: float
    exact: bool
    n_problems: int


def _paired_iv(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a = outcome_matrix_of(a, "a")
    b = outcome_matrix_of(b, "b")
    if a.shape[0] != b.shape[0]:
        raise ArgumentError(f"`a` and `b` must cover the same problems: {a.shape[0]} vs {b.shape[0]} rows")
    return a, b


def sign_flip_test(a: np.ndarray, b: np.ndarray, alternative: Alternative = "two-sided",
                   n_resamples: int = 9_999, rng: np.random.Generator | int | None = None
                   ) -> PermutationResult:
    """Permutation test flipping the sign of each problem's mean difference (the problem is the unit).

    The per-problem differences of means over K_a and K_b repeats are multiples of 1/lcm(K_a, K_b), so
    the null distribution over all 2^m sign patterns is computed exactly on that lattice
    (:mod:`sotacheck.audit.signflip`); at K = 1 the test equals exact McNemar. Only when the lattice is
    too wide (sum of |differences| over ``signflip.MAX_LATTICE`` lattice steps) are ``n_resamples`` random
    sign patterns drawn instead, p = (hits + 1) / (n_resamples + 1), and the result says ``exact=False``.
    Two-sided p = 2·min(one-sided p's), capped at 1 (as in ``scipy.stats.permutation_test``).
    """
    a, b = _paired_iv(a, b)
    if alternative not in ("two-sided", "greater", "less"):
        raise ArgumentError(f"`alternative` must be 'two-sided', 'greater' or 'less', got {alternative!r}")
    diff = a.mean(axis=1) - b.mean(axis=1)
    statistic = float(diff.mean())
    unit = signflip.lattice_unit(np.array([a.shape[1], b.shape[1]]))
    steps = np.rint(diff * unit).astype(np.int64)
    if not steps.any():
        return PermutationResult(statistic, 1.0, True, diff.size)
    observed = int(steps.sum())
    if int(np.abs(steps).sum()) <= signflip.MAX_LATTICE:
        greater = signflip.upper_tail(steps, observed)
        less = signflip.upper_tail(-steps, -observed)
        exact = True
    else:
        greater, less = signflip.resampled_tails(steps[steps != 0].astype(float), observed, n_resamples, rng)
        exact = False
    pvalue = {"greater": greater, "less": less, "two-sided": min(1.0, 2 * min(greater, less))}[alternative]
    return PermutationResult(statistic, float(pvalue), exact, diff.size)


@dataclass(frozen=True)
class CMHResult:
    """Cochran–Mantel–Haenszel test of a common odds ratio of 1, one stratum per problem."""

    statistic: float
    pvalue: float
    n_informative_strata: int


def cmh_test(a: np.ndarray, b: np.ndarray) -> CMHResult:
    """CMH over per-problem 2×2 tables [[A passes, A fails], [B passes, B fails]] (no continuity
    correction). Strata where both arms always pass or always fail carry no information and are
    dropped; with none left the result is statistic 0, p = 1 (never NaN).

    What it tests: a common odds ratio of 1 across problems, by a chi-square approximation. With equal
    repeats in both arms its numerator is half the sum of the per-problem count differences (the
    sign-flip statistic) and its variance uses pooled margins, so under effects that cancel on average
    it is conservative (``bench/bench_power.py``, part 2); the exact test of the average difference is
    :func:`sign_flip_test`."""
    a, b = _paired_iv(a, b)
    k_a, k_b = a.shape[1], b.shape[1]
    pa, pb = a.sum(axis=1), b.sum(axis=1)
    tables = np.stack([np.stack([pa, k_a - pa], axis=1), np.stack([pb, k_b - pb], axis=1)], axis=1)
    informative = (tables[:, :, 0].sum(axis=1) > 0) & (tables[:, :, 1].sum(axis=1) > 0)
    if not informative.any():
        return CMHResult(0.0, 1.0, 0)
    from statsmodels.stats.contingency_tables import StratifiedTable  # statsmodels loads pandas: only when used

    stratified = StratifiedTable(np.transpose(tables[informative], (1, 2, 0)).astype(float))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        test = stratified.test_null_odds(correction=False)
    return CMHResult(float(test.statistic), float(test.pvalue), int(informative.sum()))


def paired_bootstrap_difference(a: np.ndarray, b: np.ndarray, confidence_level: float = 0.95,
                                n_resamples: int = 10_000, rng: np.random.Generator | int | None = None
                                ) -> ConfidenceInterval:
    """Percentile CI of mean(A) − mean(B), resampling problems (each keeps its A and B repeats)."""
    check_confidence_level(confidence_level)
    a, b = _paired_iv(a, b)
    diff = a.mean(axis=1) - b.mean(axis=1)
    if np.ptp(diff) == 0:
        return ConfidenceInterval(float(diff[0]), float(diff[0]))
    generator = np.random.default_rng(rng)
    index = generator.integers(0, diff.size, size=(n_resamples, diff.size))
    means = diff[index].mean(axis=1)
    tail = (1 - confidence_level) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return ConfidenceInterval(float(low), float(high))


def holm(pvalues: list[float] | np.ndarray) -> np.ndarray:
    """Holm-adjusted p-values (``method='holm'`` passed explicitly)."""
    p = np.asarray(pvalues, dtype=float)
    if p.size == 0:
        return p
    if np.isnan(p).any() or (p < 0).any() or (p > 1).any():
        raise ArgumentError("`pvalues` must be numbers in [0, 1] with no NaN")
    from statsmodels.stats.multitest import multipletests  # statsmodels loads pandas: only when used

    return np.asarray(multipletests(p, method="holm")[1])
