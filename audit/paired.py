"""Paired comparisons of two arms on the same problems.

This module owns every paired test sotacheck runs. One run each: exact McNemar (binomial on the discordant
pairs) with mid-p. K runs each: the sign-flip permutation test on per-problem mean differences, which tests
the *average* difference (the pass-rate difference) and reduces to McNemar at K = 1 (its exact lattice
arithmetic: :mod:`sotacheck.audit.signflip`). From published totals alone, the range of those tests' p over
every per-problem pattern the totals allow (:func:`feasible_mcnemar`, :func:`pairing_range`, computed in
:mod:`sotacheck.audit.paired_range` and imported from here). Paired cluster-bootstrap CI of the difference.
Holm across a table of comparisons, named explicitly (``multipletests``' default is Holm–Šidák). A
leaderboard's tests over many pairs at once (one-sided and two-sided p's) are registered in
:data:`PAIRWISE_TESTS`: exact McNemar over the co-pass matrix, and the sign-flip test with its null computed
exactly on a lattice (per-problem differences rounded to it where unequal samples make the natural lattice
too fine).

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
from collections.abc import Callable
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


@dataclass(frozen=True)
class PairwiseResult:
    """A leaderboard test over many pairs of systems (arrays in the order of the pairs given).

    ``pvalue`` is two-sided; ``greater`` the one-sided p that the first system of the pair is better,
    ``less`` that the second is; ``rounding`` the largest change that putting a pair's per-problem
    differences on the test's lattice made to its mean difference (0 where they lie on it, as with equal
    samples); ``a_only``/``b_only`` the discordant counts where the test uses them (one sample per problem)."""

    test: str
    pvalue: np.ndarray
    greater: np.ndarray
    less: np.ndarray
    rounding: np.ndarray
    a_only: np.ndarray | None = None
    b_only: np.ndarray | None = None


def mcnemar_pairs(passes: np.ndarray, samples: np.ndarray, first: np.ndarray, second: np.ndarray) -> PairwiseResult:
    """Exact McNemar for every pair at once, one sample per problem: the binomial tails of the discordant
    counts read off the co-pass matrix (``passes`` systems × problems of 0/1; ``samples`` all 1)."""
    from scipy import stats

    x = np.asarray(passes, dtype=float)
    both = x @ x.T
    solved = x.sum(axis=1)
    b = np.rint(solved[first] - both[first, second]).astype(np.int64)
    c = np.rint(solved[second] - both[first, second]).astype(np.int64)
    n = b + c
    greater = np.where(n > 0, stats.binom.sf(b - 1, n, 0.5), 1.0)
    less = np.where(n > 0, stats.binom.cdf(b, n, 0.5), 1.0)
    two_sided = np.where(n > 0, np.minimum(1.0, 2.0 * stats.binom.cdf(np.minimum(b, c), n, 0.5)), 1.0)
    return PairwiseResult("exact McNemar", two_sided, greater, less, np.zeros(len(b)), b, c)


def signflip_pairs(passes: np.ndarray, samples: np.ndarray, first: np.ndarray, second: np.ndarray,
                   limit: int | None = None) -> PairwiseResult:
    """The sign-flip test on per-problem mean differences for every pair, its null computed exactly.

    With equal samples per problem the differences lie on the lattice 1/lcm(K) and the p is the exact
    sign-flip p. With unequal samples (errored cells left out) the lcm grows without bound, so each
    difference is first rounded to the nearest 1/L, L the largest that keeps the pair's lattice within
    ``limit`` points (default :data:`~sotacheck.audit.signflip.LEADERBOARD_LATTICE`;
    :func:`~sotacheck.audit.signflip.on_lattice`); the p is then the exact sign-flip p of the rounded sum —
    no resampling, no floor — and ``rounding`` says how far the rounded mean difference can be from the
    unrounded one. A rounded pair whose p is surely below :data:`~sotacheck.audit.signflip.SURELY_SMALL`
    (Hoeffding's bound on a coarser lattice says so) is computed on that coarser lattice: its p is as exact, of a more
    coarsely rounded statistic, and far below any Holm threshold either way (the data-dependent choice adds
    at most SURELY_SMALL to the test's size: the coarse branch is taken only where the coarse p is below it)."""
    budget = signflip.LEADERBOARD_LATTICE if limit is None else limit
    means = np.asarray(passes, dtype=float) / np.asarray(samples, dtype=float)
    size = len(first)
    greater, less, two_sided, rounding = np.ones(size), np.ones(size), np.ones(size), np.zeros(size)
    for k, (i, j) in enumerate(zip(first.tolist(), second.tolist(), strict=True)):
        diff, counts = means[i] - means[j], np.concatenate([samples[i], samples[j]])
        steps, _, rounding[k] = signflip.on_lattice(diff, counts, budget)
        if rounding[k] > 0 and budget > signflip.COARSE_LATTICE:  # rounded anyway: coarser where p is surely tiny
            coarse = signflip.on_lattice(diff, counts, signflip.COARSE_LATTICE)
            if signflip.hoeffding_two_sided(coarse[0]) <= signflip.SURELY_SMALL:
                steps, _, rounding[k] = coarse
        if not steps.any():
            continue
        greater[k], less[k] = signflip.tails(steps, int(steps.sum()))
        two_sided[k] = min(1.0, 2.0 * min(greater[k], less[k]))
    rounded = bool(rounding.any())
    label = ("sign-flip on per-problem means (exact null of the differences rounded to a lattice)" if rounded
             else "sign-flip on per-problem means (exact, lattice)")
    return PairwiseResult(label, two_sided, greater, less, rounding)


@dataclass(frozen=True)
class PairwiseTest:
    """A registered leaderboard test: its ``name``, when it ``applies`` (a predicate on the systems ×
    problems matrix of samples per cell, described in ``when``) and the function that ``run``\\ s it over
    pairs (``passes``, ``samples``, first and second system indices) → :class:`PairwiseResult`."""

    name: str
    when: str
    applies: Callable[[np.ndarray], bool]
    run: Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], PairwiseResult]


PAIRWISE_TESTS: list[PairwiseTest] = [
    PairwiseTest("exact McNemar", "one sample per problem for every system",
                 lambda samples: bool((np.asarray(samples) == 1).all()), mcnemar_pairs),
    PairwiseTest("sign-flip", "any number of samples per problem (exact on the natural lattice when the numbers "
                 "are equal; rounded to a fine lattice when they differ)", lambda samples: True, signflip_pairs),
]
"""The leaderboard's tests, in order of preference: the first that applies is used unless one is named.
A new test is one entry here."""


def choose_pairwise_test(samples: np.ndarray, name: str | None = None) -> PairwiseTest:
    """The registered test named ``name``, or the first of :data:`PAIRWISE_TESTS` that applies to ``samples``.

    Raises
    ------
    ArgumentError
        ``name`` is not registered, or does not apply to these samples.
    """
    if name is None:
        return next(test for test in PAIRWISE_TESTS if test.applies(samples))
    for test in PAIRWISE_TESTS:
        if test.name == name:
            if not test.applies(samples):
                raise ArgumentError(f"`test`: {name!r} applies only with {test.when}")
            return test
    raise ArgumentError(f"`test`: no leaderboard test {name!r}; registered: "
                        f"{', '.join(t.name for t in PAIRWISE_TESTS)}")
