"""The scipy.special / exact-integer distribution functions against scipy.stats, the reference they replace
on the claims path (tolerances: relative 1e-9 for tails, exact for the rejection bounds)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from sotacheck.audit import distributions as dist


def test_binomial_tails_and_pmf() -> None:
    n = np.arange(1, 200)
    for p in (0.5, 0.1, 0.93):
        for k in (-1, 0, 3, 17, 150, 250):
            assert dist.binom_cdf(k, n, p) == pytest.approx(stats.binom.cdf(k, n, p), rel=1e-9, abs=1e-300)
            assert dist.binom_sf(k, n, p) == pytest.approx(stats.binom.sf(k, n, p), rel=1e-9, abs=1e-300)
            assert dist.binom_pmf(k, n, p) == pytest.approx(stats.binom.pmf(k, n, p), rel=1e-9, abs=1e-300)


def test_rejection_bounds_equal_scipy_quantiles_after_the_boundary_check() -> None:
    """The bounds exact_mcnemar_power used to derive from binom.ppf / binom.isf and a correction step."""
    m = np.arange(1, 400)
    for alpha in (0.05, 0.01, 0.2):
        low = stats.binom.ppf(alpha / 2, m, 0.5)
        low = np.where(stats.binom.cdf(low, m, 0.5) <= alpha / 2, low, low - 1)
        assert np.array_equal(dist.largest_k_cdf_at_most(alpha / 2, m, 0.5), low)
        critical = stats.binom.isf(alpha, m, 0.5)
        critical = np.where(stats.binom.sf(critical - 1, m, 0.5) <= alpha, critical - 1, critical)
        assert np.array_equal(dist.smallest_k_sf_at_most(alpha, m, 0.5), critical)


def test_binomial_test_at_one_half() -> None:
    for n in range(0, 60):
        for k in range(0, n + 1):
            expected = stats.binomtest(k, n, 0.5).pvalue if n else 1.0
            assert dist.binom_two_sided_half(k, n) == pytest.approx(expected, rel=1e-9)


def test_fisher_exact_equals_scipy_including_ties() -> None:
    rng = np.random.default_rng(0)
    tables = [[[158, 6], [158, 6]], [[152, 12], [148, 16]], [[0, 5], [5, 0]], [[3, 3], [3, 3]]]
    tables += [rng.integers(0, 40, size=(2, 2)).tolist() for _ in range(300)]
    for table in tables:
        assert dist.fisher_exact_two_sided(table) == pytest.approx(stats.fisher_exact(table).pvalue, rel=1e-9)


def test_welch_and_t() -> None:
    for args in [(96.5, 0.7, 3, 96.3, 0.5, 3), (92.7, 0.8, 3, 90.2, 1.1, 5), (50, 2, 10, 48, 2, 10)]:
        expected = stats.ttest_ind_from_stats(*args, equal_var=False)
        t, p = dist.welch_from_stats(*args)
        assert t == pytest.approx(expected.statistic, rel=1e-12) and p == pytest.approx(expected.pvalue, rel=1e-9)
    assert dist.t_two_sided(0.494872, 2) == pytest.approx(0.669711, rel=1e-5)  # statistics.md reference


def test_normal() -> None:
    x = np.linspace(-8, 8, 33)
    assert np.allclose(dist.norm_sf(x), stats.norm.sf(x), rtol=1e-12)
    assert np.allclose(dist.norm_cdf(x), stats.norm.cdf(x), rtol=1e-12)
    assert np.allclose(dist.norm_ppf([0.025, 0.8, 0.975]), stats.norm.ppf([0.025, 0.8, 0.975]), rtol=1e-12)
