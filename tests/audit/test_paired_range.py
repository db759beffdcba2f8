"""The range of the paired test's p over every per-problem pattern published totals allow
(:func:`sotacheck.audit.paired.pairing_range`) and the pairing-range rule on it, against independent
computations: brute-force enumeration of every allowed pattern (small n, with and without runs), scipy's
binomial and permutation tests, and a sweep of every pair of totals at n = 164 and 500."""

from __future__ import annotations

import itertools
import math
from functools import cache

import numpy as np
import pytest
from scipy import stats

from sotacheck.audit import signflip
from sotacheck.audit.claim_checks import ALPHA, range_verdict
from sotacheck.audit.paired import chernoff_envelope, pairing_range
from sotacheck.core.errors import ArgumentError


def _patterns(n: int, runs_a: int, runs_b: int, passes_a: int, passes_b: int):
    """Every allowed assignment, as counts of problems per outcome type (j of runs_a, k of runs_b)."""
    types = list(itertools.product(range(runs_a + 1), range(runs_b + 1)))

    def fill(t: int, left: int, ka: int, kb: int):
        j, k = types[t]
        if t == len(types) - 1:
            if j * left == ka and k * left == kb:
                yield (left,)
            return
        for count in range(left + 1):
            if j * count > ka or k * count > kb:
                break
            for rest in fill(t + 1, left - count, ka - j * count, kb - k * count):
                yield (count, *rest)

    yield from ((types, counts) for counts in fill(0, n, passes_a, passes_b))


@cache
def _brute(n: int, runs_a: int, runs_b: int, passes_a: int, passes_b: int, nonnegative: bool) -> list[float]:
    """The two-sided sign-flip p (exact, by the lattice convolution checked in test_signflip.py) of every
    allowed pattern; with ``nonnegative``, only patterns with Σ a_i·b_i ≥ A·B / n."""
    unit = math.lcm(runs_a, runs_b)
    floor = passes_a / runs_a * passes_b / runs_b / n
    out = []
    for types, counts in _patterns(n, runs_a, runs_b, passes_a, passes_b):
        if nonnegative and sum(c * j / runs_a * k / runs_b for (j, k), c in zip(types, counts, strict=True)) < floor - 1e-9:
            continue
        d = np.repeat([j * (unit // runs_a) - k * (unit // runs_b) for j, k in types], counts)
        out.append(signflip.two_sided(d[d != 0]) if d.any() else 1.0)
    return out


def _check_against_brute_force(n_max: int, runs_a: int, runs_b: int) -> int:
    checked = 0
    for n in range(1, n_max + 1):
        for ka, kb in itertools.product(range(runs_a * n + 1), range(runs_b * n + 1)):
            for nonnegative in (False, True):
                every = _brute(n, runs_a, runs_b, ka, kb, nonnegative)
                if not every:
                    continue
                found = pairing_range(n, ka, kb, runs_a, runs_b, nonnegative_correlation=nonnegative)
                where = (n, runs_a, runs_b, ka, kb, nonnegative)
                assert found.low <= min(every) * (1 + 1e-12) and found.high >= max(every) * (1 - 1e-12), where
                if found.low_attained:
                    assert found.low == pytest.approx(min(every), rel=1e-12), where
                if found.high_attained:
                    assert found.high == pytest.approx(max(every), rel=1e-12), where
                if found.high_seen is not None:  # a p some allowed pattern has
                    assert min(abs(p - found.high_seen) for p in every) < 1e-12, where
                checked += 1
    return checked


@pytest.mark.parametrize(("n_max", "runs_a", "runs_b"), [(6, 1, 1), (5, 3, 1), (6, 2, 1), (4, 1, 3), (3, 2, 2)])
def test_the_range_covers_every_allowed_pattern(n_max: int, runs_a: int, runs_b: int) -> None:
    assert _check_against_brute_force(n_max, runs_a, runs_b) > 20


@pytest.mark.slow
@pytest.mark.parametrize(("n_max", "runs_a", "runs_b"), [(9, 1, 1), (8, 3, 1), (9, 2, 1), (6, 4, 1), (5, 2, 2),
                                                         (5, 1, 3), (5, 3, 2)])
def test_the_range_covers_every_allowed_pattern_on_more_totals(n_max: int, runs_a: int, runs_b: int) -> None:
    assert _check_against_brute_force(n_max, runs_a, runs_b) > 100


def test_the_largest_p_is_not_always_at_whole_problems() -> None:
    # Why the high end with runs is a bound: n = 8, 3 runs against 1, totals 8/3 and 4 problems. The best
    # pattern mixes fractions, (−3, −3, −3, −3, 2, 2, 2, 2) in thirds of a problem, p = 0.703 (= 45/64), above
    # every pattern with at most one fractional problem (0.6875): counted here by brute force.
    every = _brute(8, 3, 1, 8, 4, False)
    assert max(every) == pytest.approx(45 / 64, rel=1e-12)
    mixed = np.array([-3, -3, -3, -3, 2, 2, 2, 2])
    assert signflip.two_sided(mixed) == pytest.approx(45 / 64, rel=1e-12)
    found = pairing_range(8, 8, 4, 3, 1)
    assert found.high >= 45 / 64 and found.high_seen == pytest.approx(0.6875, rel=1e-12)
    assert not found.high_attained


def test_one_run_a_side_is_exact_mcnemar_at_every_split() -> None:
    for n, ka, kb in ((164, 79, 60), (164, 158, 148), (164, 152, 148), (500, 300, 276), (40, 0, 40), (10, 3, 3)):
        found = pairing_range(n, ka, kb)
        splits = [(c + ka - kb, c) for c in range(max(0, kb - ka), min(kb, n - ka) + 1)]
        p = [stats.binomtest(b, b + c, 0.5).pvalue if b + c else 1.0 for b, c in splits]
        assert (found.low, found.high) == pytest.approx((min(p), max(p)), rel=1e-10)
        assert found.low_attained and found.high_attained and found.test == "exact McNemar"


def test_statistics_reference_48_2_and_96_3() -> None:
    # statistics.md: 48.2 vs 36.6 (79 vs 60 of 164) reaches paired p = 0.127 at b = 79, c = 60, while
    # Fisher's p = 0.044; 96.3 vs 90.2 (158 vs 148) reaches 0.0525. scipy.stats.binomtest(79, 139).pvalue.
    assert pairing_range(164, 79, 60).high == pytest.approx(stats.binomtest(79, 139, 0.5).pvalue, rel=1e-10)
    assert pairing_range(164, 79, 60).high == pytest.approx(0.1265, abs=5e-4)
    assert pairing_range(164, 158, 148).high == pytest.approx(0.0525, abs=5e-5)
    for ka, kb in ((79, 60), (158, 148)):
        assert range_verdict(pairing_range(164, ka, kb)) == "unverifiable from what was published"


def test_runs_reach_the_sign_flip_low_end() -> None:
    # 92.7 over 3 runs of 164 is 456 run-passes; 90.2 is 148 problems: a net of 12/3. Twelve problems each
    # +1/3 is allowed; its sign-flip p by scipy.stats.permutation_test over all 2^12 sign patterns (the zero
    # differences never change the statistic) is 2 · 2^-12 = 4.9e-4 (statistics.md).
    found = pairing_range(164, 456, 148, 3, 1)
    twelve = np.full(12, 1 / 3)
    scipy_p = stats.permutation_test((twelve,), np.mean, permutation_type="samples", n_resamples=np.inf).pvalue
    assert found.low == pytest.approx(scipy_p, rel=1e-12) and found.low == pytest.approx(2 * 2.0**-12, rel=1e-12)
    assert found.low <= 5e-4 and found.low_attained and found.low_pattern == "12 problems each +1/3"
    assert found.high >= stats.binomtest(16, 28, 0.5).pvalue  # b = 16, c = 12 whole problems is allowed
    assert range_verdict(found) == "unverifiable from what was published"


def test_a_wide_margin_with_runs_is_supported_by_the_bound() -> None:
    # 92.7 (3 runs) vs 80.5 (132 of 164): statistics.md says significant over every allowed pairing.
    found = pairing_range(164, 456, 132, 3, 1)
    assert found.high < ALPHA and range_verdict(found) == "supported"
    assert found.high_seen is not None and found.high_seen <= found.high


def test_the_chernoff_envelope_bounds_whole_problems() -> None:
    # the envelope at unit 1 must bound the exact binomial p (Chernoff), and equal 1 at no margin
    for b, c in ((4, 0), (16, 12), (79, 60), (32, 12), (500, 400)):
        assert chernoff_envelope(b - c, b + c, 1) >= stats.binomtest(b, b + c, 0.5).pvalue
    assert chernoff_envelope(0, 40, 3) == 1.0


def test_the_assumption_narrows_only_toward_positive_correlation() -> None:
    plain, assumed = pairing_range(164, 79, 60), pairing_range(164, 79, 60, nonnegative_correlation=True)
    assert assumed.low == plain.low and assumed.high < plain.high
    # both solved ≥ 79·60/164 = 28.9, so c ≤ 60 − 29 = 31: b = 50, c = 31 is the least significant split
    assert assumed.high == pytest.approx(stats.binomtest(50, 81, 0.5).pvalue, rel=1e-10)


@pytest.mark.parametrize(("args", "field"), [((0, 0, 0), "n"), ((10, 11, 0), "passes_a"), ((10, 0, -1), "passes_b"),
                                             ((10, 1, 1, 0, 1), "runs_a")])
def test_bad_arguments_name_the_argument(args: tuple[int, ...], field: str) -> None:
    with pytest.raises(ArgumentError, match=f"`{field}`"):
        pairing_range(*args)


def _independent_ranges(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) of the exact McNemar p over the allowed splits, for every (kA, kB), from a table of
    scipy.stats.binom p-values by net and c (independent of the product's code)."""
    net = np.arange(-n, n + 1)[:, None]
    c = np.arange(n + 1)[None, :]
    b = c + net
    total = np.maximum(b + c, 1)
    smaller = np.minimum(b, c)
    table = np.where(b + c > 0, np.minimum(1.0, 2 * stats.binom.cdf(smaller, total, 0.5)), 1.0)
    table = np.where(b >= 0, table, np.nan)
    ka, kb = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    low = np.empty(ka.shape)
    high = np.empty(ka.shape)
    for d in range(-n, n + 1):
        row = table[d + n]
        c_low = max(0, -d)
        running_min = np.minimum.accumulate(row[c_low:])
        running_max = np.maximum.accumulate(row[c_low:])
        pairs = ka - kb == d
        c_high = np.minimum(kb[pairs], n - ka[pairs])
        low[pairs] = running_min[c_high - c_low]
        high[pairs] = running_max[c_high - c_low]
    return low, high


def _sweep(n: int) -> None:
    low, high = _independent_ranges(n)
    for ka in range(n + 1):
        for kb in range(n + 1):
            found = pairing_range(n, ka, kb)
            assert (found.low, found.high) == pytest.approx((low[ka, kb], high[ka, kb]), rel=1e-9, abs=1e-300)
            verdict = range_verdict(found)
            if verdict in ("supported", "contradicted"):
                assert high[ka, kb] < ALPHA, (ka, kb)  # no allowed pairing reaches p ≥ α
            elif verdict == "not significant":
                assert low[ka, kb] >= ALPHA, (ka, kb)  # no allowed pairing reaches p < α
            else:
                assert low[ka, kb] < ALPHA <= high[ka, kb], (ka, kb)


def test_every_pair_of_totals_at_164_problems() -> None:
    _sweep(164)


@pytest.mark.slow
def test_every_pair_of_totals_at_500_problems() -> None:
    _sweep(500)
