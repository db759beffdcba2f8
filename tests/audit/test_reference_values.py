"""Every reference value of ../shared/reference/statistics.md, at the tolerance stated here.

The values were produced there with Python 3.11.7, numpy 2.4.6, scipy 1.17.1, statsmodels 0.15.0 by:

    import numpy as np; from scipy import stats, optimize
    from statsmodels.stats.contingency_tables import mcnemar
    from statsmodels.stats.proportion import proportion_confint
    from statsmodels.stats.power import NormalIndPower
    p = mcnemar([[0, b], [c, 0]], exact=True).pvalue   # == stats.binomtest(b, b + c, .5).pvalue
    k, n = min(b, c), b + c
    midp = min(1, 2 * (stats.binom.cdf(k, n, .5) - .5 * stats.binom.pmf(k, n, .5)))
    proportion_confint(158, 164, alpha=.05, method='wilson')
    t = (96.5 - 96.3) / (0.7 / np.sqrt(3)); p = 2 * stats.t.sf(abs(t), 2)
    h = NormalIndPower().solve_power(nobs1=164, alpha=.05, power=.8, ratio=1)
    f = lambda x, a, b: a * np.exp(-b * x); x = np.arange(1, 6.); y = np.array([.6, .25, .09, .04, .02])
    po, _ = optimize.curve_fit(f, x, y); r = y - f(x, *po); R2 = 1 - r @ r / ((y - y.mean()) @ (y - y.mean()))

Tolerance: values are printed to 6 significant figures there, so rel=1e-5 (abs=1e-6 near zero).
"""

from __future__ import annotations

import numpy as np
import pytest

from sotacheck.audit.decay import fit_exponential
from sotacheck.audit.intervals import clustered_pass_rate, pass_at_k, pass_rate
from sotacheck.audit.paired import cmh_test, holm, mcnemar_exact, sign_flip_test
from sotacheck.audit.power import mdd_paired_connor, mdd_paired_exact, mdd_unpaired

REL = 1e-5


@pytest.mark.parametrize(("b", "c", "exact", "midp"), [
    (40, 16, 0.00184155, 0.00126356),
    (33, 9, 0.000271539, 0.000170155),
    (10, 2, 0.0385742, 0.0224609),
    (5, 5, 1.0, 1.0),
])
def test_exact_mcnemar_and_midp(b, c, exact, midp) -> None:
    result = mcnemar_exact(b, c)
    assert result.pvalue == pytest.approx(exact, rel=REL)
    assert result.midp == pytest.approx(midp, rel=REL)


def test_holm_over_the_four_exact_pvalues() -> None:
    pvalues = [mcnemar_exact(b, c).pvalue for b, c in [(40, 16), (33, 9), (10, 2), (5, 5)]]
    assert holm(pvalues) == pytest.approx([0.005525, 0.001086, 0.077148, 1.0], rel=1e-3)


@pytest.mark.parametrize(("k", "method", "low", "high"), [
    (158, "wilson", 0.922490, 0.983127), (158, "clopper-pearson", 0.922073, 0.986458),
    (158, "jeffreys", 0.926156, 0.984588), (156, "wilson", 0.906707, 0.975078),
    (156, "clopper-pearson", 0.906148, 0.978708), (156, "jeffreys", 0.910075, 0.976671),
])
def test_one_pass_rate_intervals(k, method, low, high) -> None:
    ci = pass_rate(k, 164).confidence_interval(0.95, method)
    assert (ci.low, ci.high) == (pytest.approx(low, rel=REL), pytest.approx(high, rel=REL))


def test_minimum_detectable_differences_near_095() -> None:
    unpaired = mdd_unpaired(164, 0.95)
    assert unpaired.cohens_h == pytest.approx(0.309383, rel=REL)
    assert unpaired.up == pytest.approx(0.044993, rel=1e-4)
    assert unpaired.down == pytest.approx(-0.087723, rel=1e-4)
    assert mdd_paired_connor(164, 0.05) == pytest.approx(0.048567, rel=1e-4)
    assert mdd_paired_exact(164, 0.05) == pytest.approx(0.048836, rel=1e-4)


def test_decay_fit_in_the_original_space() -> None:
    fit = fit_exponential(np.arange(1, 6.0), np.array([0.60, 0.25, 0.09, 0.04, 0.02]))
    assert fit.a == pytest.approx(1.482496, rel=REL)
    assert fit.b == pytest.approx(0.902615, rel=REL)
    assert fit.r_squared == pytest.approx(0.999430, rel=REL)


def test_pass_at_k() -> None:
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3, rel=REL)
    assert pass_at_k(10, 3, 5) == pytest.approx(0.9166667, rel=REL)
    assert pass_at_k(10, 8, 5) == 1.0  # n − c < k


def test_clustered_standard_errors() -> None:
    outcomes = np.array([[1, 1, 1], [1, 0, 1], [0, 0, 1], [0, 0, 0]])
    result = clustered_pass_rate(outcomes)
    assert result.se_naive == pytest.approx(0.150756, rel=REL)
    assert result.se_clustered == pytest.approx(0.215166, rel=REL)
    # Miller's estimator without the C/(C−1) correction:
    assert result.se_clustered * np.sqrt(3 / 4) == pytest.approx(0.186339, rel=REL)


def test_k1_reductions_of_cmh_and_sign_flip() -> None:
    # b = 10 problems only A solved, c = 2 only B solved, 150 concordant
    a = np.array([1] * 10 + [0] * 2 + [1] * 50 + [0] * 100)
    b = np.array([0] * 10 + [1] * 2 + [1] * 50 + [0] * 100)
    cmh = cmh_test(a, b)
    assert cmh.statistic == pytest.approx(5.333333, rel=REL)
    assert cmh.pvalue == pytest.approx(0.020921, rel=1e-4)
    flip = sign_flip_test(a, b)
    assert flip.exact
    assert flip.pvalue == pytest.approx(0.038574, rel=1e-4)
    assert flip.pvalue == pytest.approx(mcnemar_exact(10, 2).pvalue, rel=1e-12)


def test_sign_flip_agrees_with_scipy_permutation_test() -> None:
    """Independent check of the vectorised sign-flip test against scipy.stats.permutation_test."""
    from scipy import stats

    rng = np.random.default_rng(11)
    a, b = (rng.random((60, 3)) < 0.7).astype(float), (rng.random((60, 3)) < 0.6).astype(float)
    diff = a.mean(axis=1) - b.mean(axis=1)
    nonzero = diff[diff != 0]
    reference = stats.permutation_test((nonzero,), np.sum, permutation_type="samples", vectorized=True,
                                       n_resamples=20_000, alternative="greater", random_state=0).pvalue
    ours = sign_flip_test(a, b, alternative="greater", n_resamples=20_000, rng=1).pvalue
    assert ours == pytest.approx(reference, abs=0.01)  # two Monte Carlo estimates, 20,000 draws each


def test_vectorised_exact_power_equals_a_brute_force_loop() -> None:
    """Exact McNemar power recomputed by enumerating every (m, k) with scipy's binomtest."""
    from scipy import stats

    from sotacheck.audit.power import exact_mcnemar_power

    n, psi, delta = 40, 0.3, 0.12
    q = (psi + delta) / (2 * psi)
    for alternative in ("two-sided", "greater"):
        brute = 0.0
        for m in range(1, n + 1):
            for k in range(m + 1):
                p = stats.binomtest(k, m, 0.5, alternative=alternative).pvalue
                if p <= 0.05:
                    brute += stats.binom.pmf(m, n, psi) * stats.binom.pmf(k, m, q)
        assert exact_mcnemar_power(n, psi, delta, alternative=alternative) == pytest.approx(brute, rel=1e-9)
