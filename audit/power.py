"""Power and minimum detectable difference (MDD) for pass-rate comparisons.

Unpaired: Cohen's h with the normal approximation (``NormalIndPower``); near 0.95 the MDD is
asymmetric (about +4.5 pp up vs −8.8 pp down at n = 164). Paired, one run each: Connor's (1987)
sample-size formula for McNemar, cross-checked with the exact McNemar power (binomial number of
discordant pairs, exact conditional test for each). Paired with K repeats: the power of the sign-flip
test that is actually used on the per-problem mean differences d_i (:func:`mdd_paired`), stated in
pass-rate points.

References
----------
.. [1] Cohen, J. (1988). Statistical Power Analysis for the Behavioral Sciences, 2nd ed.
.. [2] Connor, R. J. (1987). Sample size for testing differences in proportions for the paired-sample
       design. Biometrics 43(1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize

from sotacheck.audit import distributions as dist
from sotacheck.core.errors import ArgumentError


def _power_iv(n: int, alpha: float, power: float) -> None:
    if n < 2:
        raise ArgumentError(f"`n` must be at least 2, got {n}")
    if not 0 < alpha < 1:
        raise ArgumentError(f"`alpha` must be in (0, 1), got {alpha}")
    if not 0 < power < 1:
        raise ArgumentError(f"`power` must be in (0, 1), got {power}")


def cohens_h_detectable(n: int, alpha: float = 0.05, power: float = 0.8) -> float:
    """Cohen's h that two arms of ``n`` each detect with the given power, two-sided: the root of the power
    function that ``statsmodels.stats.power.NormalIndPower().solve_power(nobs1=n, ratio=1)`` solves (both
    rejection tails counted), solved here with scipy alone so that a quick ``sotacheck compare`` does not import
    statsmodels and pandas (tests/audit/test_claim_rule.py checks it against statsmodels)."""
    z = float(-dist.norm_ppf(alpha / 2))
    scale = np.sqrt(n / 2)

    def shortfall(h: float) -> float:
        return float(dist.norm_sf(z - h * scale) + dist.norm_cdf(-z - h * scale) - power)

    return float(optimize.brentq(shortfall, 1e-9, 10.0, xtol=1e-12))


@dataclass(frozen=True)
class UnpairedMDD:
    """Smallest rise and fall from ``baseline`` detectable at the given power (two independent arms)."""

    cohens_h: float
    up: float
    down: float
    baseline: float
    n: int


def mdd_unpaired(n: int, baseline: float, alpha: float = 0.05, power: float = 0.8) -> UnpairedMDD:
    """MDD for two independent arms of ``n`` problems each, around pass rate ``baseline``.

    ``up``/``down`` are differences (``down`` negative). A side that would leave [0, 1] is reported as
    the distance to the bound, since nothing further can be detected there."""
    _power_iv(n, alpha, power)
    if not 0 <= baseline <= 1:
        raise ArgumentError(f"`baseline` must be in [0, 1], got {baseline}")
    h = cohens_h_detectable(n, alpha, power)
    theta = np.arcsin(np.sqrt(baseline))
    up = float(np.sin(min(theta + h / 2, np.pi / 2)) ** 2 - baseline)
    down = float(np.sin(max(theta - h / 2, 0.0)) ** 2 - baseline)
    return UnpairedMDD(h, up, down, baseline, n)


def _discordance_iv(discordance: float) -> None:
    if not 0 < discordance <= 1:
        raise ArgumentError(f"`discordance` must be in (0, 1], got {discordance}")


def mdd_paired_connor(n: int, discordance: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """Smallest |p10 − p01| detectable by McNemar (Connor's normal approximation, two-sided)."""
    _power_iv(n, alpha, power)
    _discordance_iv(discordance)
    z_a, z_b = float(dist.norm_ppf(1 - alpha / 2)), float(dist.norm_ppf(power))

    def excess(delta: float) -> float:
        return float((z_a * np.sqrt(discordance) + z_b * np.sqrt(discordance - delta**2)) ** 2 / delta**2 - n)

    if excess(discordance * (1 - 1e-12)) > 0:
        return float("inf")  # even a difference equal to the whole discordance is not detectable
    return float(optimize.brentq(excess, 1e-9, discordance * (1 - 1e-12)))


def exact_mcnemar_power(n: int, discordance: float, difference: float, alpha: float = 0.05,
                        alternative: str = "two-sided") -> float:
    """Power of the exact McNemar test with ``n`` pairs, P(discordant) = ``discordance`` and
    p10 − p01 = ``difference``; ``alternative="greater"`` is the one-sided test of p10 > p01."""
    if alternative not in ("two-sided", "greater"):
        raise ArgumentError(f"`alternative` must be 'two-sided' or 'greater', got {alternative!r}")
    _power_iv(n, alpha, 0.5)
    _discordance_iv(discordance)
    if not abs(difference) <= discordance:
        raise ArgumentError(f"`difference` must satisfy |difference| <= discordance, got {difference}")
    q = (discordance + difference) / (2 * discordance)
    m = np.arange(1, n + 1)
    weights = dist.binom_pmf(m, n, discordance)
    keep = weights > 1e-15
    m, weights = m[keep], weights[keep]
    # Rejection regions of the exact conditional test for every number m of discordant pairs at once.
    if alternative == "greater":
        critical = dist.smallest_k_sf_at_most(alpha, m, 0.5)  # reject when the count of p10 pairs exceeds this
        reject = dist.binom_sf(critical, m, q)
    else:
        low = dist.largest_k_cdf_at_most(alpha / 2, m, 0.5)  # reject when min(k, m - k) <= low
        reject = dist.binom_cdf(low, m, q) + dist.binom_sf(m - low - 1, m, q)
    return float(np.sum(weights * reject))


def mdd_paired_exact(n: int, discordance: float, alpha: float = 0.05, power: float = 0.8,
                     alternative: str = "two-sided") -> float:
    """Smallest |p10 − p01| the exact McNemar test detects with the given power (``inf`` when even a
    difference as large as the discordance is not detected)."""
    _power_iv(n, alpha, power)
    _discordance_iv(discordance)
    if exact_mcnemar_power(n, discordance, discordance, alpha, alternative) < power:
        return float("inf")
    return float(optimize.brentq(lambda d: exact_mcnemar_power(n, discordance, d, alpha, alternative) - power,
                                 1e-6, discordance))


def sign_flip_power(n: int, second_moment: float, difference: float, alpha: float = 0.05,
                    alternative: str = "two-sided", n_repeats: int = 1) -> float:
    """Power of the sign-flip test on ``n`` per-problem mean differences d_i whose second moment
    E[d²] is ``second_moment``, when their mean (the pass-rate difference) is ``difference``.

    Conditional on the |d_i|, the test's null distribution of Σ d_i has variance Σ d_i² ≈ n·E[d²], and
    under the alternative Σ d_i ≈ N(n·Δ, n·(E[d²] − Δ²)) (normal approximation, good for the n ≥ 30 the
    gate requires). E[d²] is held fixed as Δ varies, as Connor's formula holds the discordance fixed: at
    one repeat each d_i ∈ {−1, 0, 1}, E[d²] is the discordance and, without the correction below, this
    is Connor's McNemar power. With ``n_repeats`` = K the d_i are multiples of 1/K, so flipping one moves Σ d_i by a multiple of
    2/K: the null distribution lives on a lattice of that spacing and, as the test counts ties as
    extreme, the threshold carries a continuity correction of half a step, 1/K (at K = 1 McNemar's
    own). ``alternative="greater"`` is the one-sided test of Δ > 0."""
    if alternative not in ("two-sided", "greater"):
        raise ArgumentError(f"`alternative` must be 'two-sided' or 'greater', got {alternative!r}")
    _power_iv(n, alpha, 0.5)
    if n_repeats < 1:
        raise ArgumentError(f"`n_repeats` must be at least 1, got {n_repeats}")
    if not 0 < second_moment <= 1:
        raise ArgumentError(f"`second_moment` must be in (0, 1], got {second_moment}")
    if not abs(difference) <= np.sqrt(second_moment):
        raise ArgumentError(f"`difference` must satisfy difference² <= second_moment, got {difference}")
    z = float(dist.norm_ppf(1 - alpha / 2 if alternative == "two-sided" else 1 - alpha))
    spread = np.sqrt(n * max(second_moment - difference**2, 1e-300))
    shift, threshold = n * difference, z * np.sqrt(n * second_moment) + 1 / n_repeats
    power = float(dist.norm_sf((threshold - shift) / spread))
    if alternative == "two-sided":
        power += float(dist.norm_cdf((-threshold - shift) / spread))
    return float(power)


@dataclass(frozen=True)
class PairedMDD:
    """The smallest pass-rate difference a paired comparison detects with the given power.

    ``mdd`` is in pass-rate units (0.05 = 5 points; ``inf`` when no difference is detectable, e.g. the
    two arms never differ); ``method`` names the computation; ``second_moment`` is the mean of the
    squared per-problem differences (the discordance at one repeat)."""

    mdd: float
    method: str
    n: int
    n_repeats: int
    second_moment: float


def mdd_paired(a: np.ndarray, b: np.ndarray, alpha: float = 0.05, power: float = 0.8,
               alternative: str = "two-sided") -> PairedMDD:
    """MDD of the paired test used on problems × repeats 0/1 matrices ``a`` and ``b``.

    One repeat each: the exact McNemar MDD at the observed discordance (:func:`mdd_paired_exact`).
    Repeats: the sign-flip test's MDD at the observed E[d²] of the per-problem mean differences
    (:func:`sign_flip_power`), which counts a problem solved in 2 of 3 repeats instead of 3 of 3 as a
    difference of 1/3, not as a whole discordant problem. ``bench/bench_power.py`` checks by simulation
    that the gate detects a drop of its stated MDD with the stated power."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.ndim != 2 or b.ndim != 2 or a.shape[0] != b.shape[0]:
        raise ArgumentError(f"`a` and `b` must be problems × repeats matrices over the same problems, "
                            f"got shapes {a.shape} and {b.shape}")
    n, repeats = a.shape[0], int(min(a.shape[1], b.shape[1]))
    diff = a.mean(axis=1) - b.mean(axis=1)
    second_moment = float(np.mean(diff**2)) if n else 0.0
    if n < 2 or second_moment == 0:
        method = "none: fewer than 2 problems" if n < 2 else "none: the arms never differ"
        return PairedMDD(float("inf"), method, n, repeats, second_moment)
    if a.shape[1] == 1 and b.shape[1] == 1:
        return PairedMDD(mdd_paired_exact(n, second_moment, alpha, power, alternative), "exact McNemar", n, 1,
                         second_moment)
    lattice = int(np.lcm(a.shape[1], b.shape[1]))  # the d_i are multiples of 1 / lattice
    method = "sign-flip (normal approximation with continuity correction)"

    def power_at(d: float) -> float:
        return sign_flip_power(n, second_moment, d, alpha, alternative, lattice) - power

    limit = np.sqrt(second_moment) * (1 - 1e-12)
    if power_at(limit) < 0:
        return PairedMDD(float("inf"), method, n, repeats, second_moment)
    return PairedMDD(float(optimize.brentq(power_at, 1e-9, limit)), method, n, repeats, second_moment)
