"""The exact lattice sign-flip distribution against independent computations: exact integer counting of
all sign patterns (Python integers and fractions, no floating point), and scipy.stats.permutation_test
with every pattern enumerated (n_resamples=np.inf)."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from sotacheck.audit import signflip
from sotacheck.audit.paired import mcnemar_exact, sign_flip_test


def _exact_tail(values: np.ndarray, threshold: int) -> Fraction:
    """P(S >= threshold) by counting sign patterns with Python integers."""
    dist: Counter[int] = Counter({0: 1})
    for v in values.tolist():
        step: Counter[int] = Counter()
        for total, count in dist.items():
            step[total + v] += count
            step[total - v] += count
        dist = step
    return Fraction(sum(c for s, c in dist.items() if s >= threshold), sum(dist.values()))


def test_tails_equal_exact_integer_counts() -> None:
    rng = np.random.default_rng(3)
    for _ in range(40):
        values = rng.integers(-6, 7, size=int(rng.integers(1, 35)))
        total = int(np.abs(values).sum())
        for threshold in (abs(int(values.sum())), 1, 0, -2, total, total - 2, total + 1):
            expected = float(_exact_tail(values, threshold))
            assert signflip.upper_tail(values, threshold) == pytest.approx(expected, rel=1e-12, abs=1e-300)


def test_far_tail_keeps_its_relative_accuracy() -> None:
    values = np.array([3] * 50 + [1] * 30 + [-2] * 5)  # p about 1e-17: an FFT's absolute error would swamp it
    expected = float(_exact_tail(values, int(values.sum())))
    assert expected < 1e-16
    assert signflip.upper_tail(values, int(values.sum())) == pytest.approx(expected, rel=1e-12)


def test_two_sided_equals_scipy_exact_permutation_test() -> None:
    rng = np.random.default_rng(5)
    for _ in range(10):
        values = rng.integers(-4, 5, size=13)
        reference = stats.permutation_test((values,), lambda d, axis: np.sum(d, axis=axis),
                                           permutation_type="samples", n_resamples=np.inf,
                                           alternative="two-sided").pvalue
        assert signflip.two_sided(values) == pytest.approx(reference, rel=1e-12)


def test_sign_flip_test_is_exact_with_repeats_and_matches_scipy() -> None:
    """K = 3 and K = 5 repeats: differences on the 1/15 lattice; every pattern enumerated by scipy."""
    rng = np.random.default_rng(8)
    a = (rng.random((40, 3)) < 0.7).astype(float)
    b = (rng.random((40, 5)) < 0.55).astype(float)
    diff = a.mean(axis=1) - b.mean(axis=1)
    nonzero = diff[diff != 0][:14]  # scipy enumerates 2^14 patterns
    a, b = a[diff != 0][:14], b[diff != 0][:14]
    for alternative in ("two-sided", "greater", "less"):
        reference = stats.permutation_test((nonzero,), lambda d, axis: np.sum(d, axis=axis),
                                           permutation_type="samples", n_resamples=np.inf,
                                           alternative=alternative).pvalue
        ours = sign_flip_test(a, b, alternative=alternative)
        assert ours.exact
        assert ours.pvalue == pytest.approx(reference, rel=1e-9)


def test_one_repeat_equals_exact_mcnemar() -> None:
    a = np.array([1] * 33 + [0] * 9 + [1] * 80 + [0] * 42)
    b = np.array([0] * 33 + [1] * 9 + [1] * 80 + [0] * 42)
    assert sign_flip_test(a, b).pvalue == pytest.approx(mcnemar_exact(33, 9).pvalue, rel=1e-12)
    assert sign_flip_test(a, b).pvalue == pytest.approx(0.000271539, rel=1e-5)  # statistics.md reference


def test_lattice_unit() -> None:
    assert signflip.lattice_unit(np.array([3, 5, 3])) == 15
    assert signflip.lattice_unit(np.array([10])) == 10
