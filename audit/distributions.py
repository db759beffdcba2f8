"""The few distribution functions the claim checks and power computations need, from ``scipy.special`` and
exact integer arithmetic rather than ``scipy.stats``: importing ``scipy.stats`` alone takes about 1 s on 2
cores, which a one-line ``sotacheck compare`` should not pay. Each function equals its ``scipy.stats``
counterpart (``tests/audit/test_distributions.py`` checks them against it, tolerance stated there).

References
----------
.. [1] Fisher, R. A. (1935). The logic of inductive inference. J. R. Stat. Soc. 98(1) (the exact test).
.. [2] Welch, B. L. (1947). The generalization of "Student's" problem when several different population
       variances are involved. Biometrika 34.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from scipy import special


def binom_cdf(k: np.ndarray | float, n: np.ndarray | float, p: float | np.ndarray) -> np.ndarray:
    """P(X ≤ k) for X ~ Binomial(n, p) (``scipy.stats.binom.cdf``)."""
    k, n = np.floor(np.asarray(k, dtype=float)), np.asarray(n, dtype=float)
    inside = special.bdtr(np.clip(k, 0, n).astype(np.int64), n.astype(np.int64), p)
    return np.asarray(np.where(k < 0, 0.0, np.where(k >= n, 1.0, inside)), dtype=float)


def binom_sf(k: np.ndarray | float, n: np.ndarray | float, p: float | np.ndarray) -> np.ndarray:
    """P(X > k) for X ~ Binomial(n, p) (``scipy.stats.binom.sf``)."""
    k, n = np.floor(np.asarray(k, dtype=float)), np.asarray(n, dtype=float)
    inside = special.bdtrc(np.clip(k, 0, n).astype(np.int64), n.astype(np.int64), p)
    return np.asarray(np.where(k < 0, 1.0, np.where(k >= n, 0.0, inside)), dtype=float)


def binom_pmf(k: np.ndarray | float, n: np.ndarray | float, p: float) -> np.ndarray:
    """P(X = k) for X ~ Binomial(n, p) (``scipy.stats.binom.pmf``), from log-gamma."""
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    log = (special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(np.maximum(n - k, 0) + 1)
           + special.xlogy(k, p) + special.xlog1py(n - k, -p))
    return np.asarray(np.where((k >= 0) & (k <= n) & (k == np.floor(k)), np.exp(log), 0.0), dtype=float)


def largest_k_cdf_at_most(level: float, n: np.ndarray, p: float) -> np.ndarray:
    """For each n, the largest k with P(X ≤ k) ≤ ``level`` (−1 when even k = 0 exceeds it): the lower
    rejection bound of an exact binomial test, found by bisection on k."""
    n = np.asarray(n, dtype=float)
    low, high = np.full(n.shape, -1.0), n.copy()  # invariant: cdf(low) <= level (cdf(-1) = 0), cdf(high) > level
    fits = binom_cdf(high, n, p) <= level
    while True:
        active = high - low > 1
        if not active.any():
            break
        middle = np.floor((low + high) / 2)
        ok = binom_cdf(middle, n, p) <= level
        low = np.where(active & ok, middle, low)
        high = np.where(active & ~ok, middle, high)
    return np.where(fits, n, low)


def smallest_k_sf_at_most(level: float, n: np.ndarray, p: float) -> np.ndarray:
    """For each n, the smallest k with P(X > k) ≤ ``level``: the upper rejection bound (reject when X > k)."""
    n = np.asarray(n, dtype=float)
    low, high = np.full(n.shape, -1.0), n.copy()  # invariant: sf(low) > level or low = -1; sf(high) = 0 <= level
    while True:
        active = high - low > 1
        if not active.any():
            break
        middle = np.floor((low + high) / 2)
        ok = binom_sf(middle, n, p) <= level
        high = np.where(active & ok, middle, high)
        low = np.where(active & ~ok, middle, low)
    return np.where(binom_sf(-1.0, n, p) <= level, -1.0, high)


def binom_two_sided_half(k: np.ndarray | int, n: np.ndarray | int) -> np.ndarray:
    """The exact two-sided binomial test at p = 1/2 (``scipy.stats.binomtest(k, n).pvalue``):
    min(1, 2·P(X ≤ min(k, n − k))); 1 when n = 0."""
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    tail = binom_cdf(np.minimum(k, n - k), np.maximum(n, 1), 0.5)
    return np.asarray(np.where(n > 0, np.minimum(1.0, 2 * tail), 1.0), dtype=float)


def norm_sf(x: np.ndarray | float) -> np.ndarray:
    return np.asarray(special.ndtr(-np.asarray(x, dtype=float)))


def norm_cdf(x: np.ndarray | float) -> np.ndarray:
    return np.asarray(special.ndtr(np.asarray(x, dtype=float)))


def norm_ppf(q: np.ndarray | float) -> np.ndarray:
    return np.asarray(special.ndtri(np.asarray(q, dtype=float)))


def t_two_sided(t: float, df: float) -> float:
    """Two-sided p of Student's t with ``df`` degrees of freedom: 2·P(T ≥ |t|)."""
    return float(2 * special.stdtr(df, -abs(t)))


def welch_from_stats(mean1: float, sd1: float, n1: int, mean2: float, sd2: float, n2: int) -> tuple[float, float]:
    """Welch's t and its two-sided p from summary statistics (``scipy.stats.ttest_ind_from_stats(...,
    equal_var=False)``)."""
    v1, v2 = sd1**2 / n1, sd2**2 / n2
    se = math.sqrt(v1 + v2)
    t = (mean1 - mean2) / se if se > 0 else math.copysign(math.inf, mean1 - mean2) if mean1 != mean2 else math.nan
    denominator = (v1**2 / (n1 - 1) if n1 > 1 else 0.0) + (v2**2 / (n2 - 1) if n2 > 1 else 0.0)
    df = (v1 + v2) ** 2 / denominator if denominator > 0 else math.nan
    if math.isnan(t) or math.isnan(df):
        return t, math.nan
    return t, t_two_sided(t, df)


def fisher_exact_two_sided(table: list[list[int]]) -> float:
    """Fisher's exact test of a 2 × 2 table of counts, two-sided: the probability, given the margins, of the
    tables no more likely than the one observed (``scipy.stats.fisher_exact``), in exact integer arithmetic."""
    (a, b), (c, d) = table
    if min(a, b, c, d) < 0:
        raise ValueError(f"counts must be non-negative, got {table}")
    row1, row2, col1 = a + b, c + d, a + c
    weights = {x: math.comb(row1, x) * math.comb(row2, col1 - x)
               for x in range(max(0, col1 - row2), min(row1, col1) + 1)}
    observed = weights[a]
    total = sum(weights.values())
    return float(min(Fraction(sum(w for w in weights.values() if w <= observed), total), Fraction(1)))
