"""The exact sign-flip permutation distribution of a sum of integer differences.

Paired per-problem mean differences of 0/1 outcomes over K_a and K_b samples are multiples of
1 / lcm(K_a, K_b): they lie on a lattice. Scaled to integers ``D_i``, the sign-flip null distribution of
``S = sum(eps_i * D_i)`` (``eps_i`` = ±1 with probability 1/2 each, independently) lives on the integers
``-T..T`` (``T = sum |D_i|``), so its tails can be computed exactly instead of by resampling: no p-value
sits at a Monte-Carlo floor.

How: the ``n_v`` problems with ``|D| = v`` contribute ``v * (2 B_v - n_v)`` with ``B_v ~ Binomial(n_v, 1/2)``,
so the null distribution is the convolution of one scaled binomial per distinct magnitude. Each is a
direct (not FFT) convolution of non-negative numbers, so every probability, however far in the tail, has a
small *relative* rounding error (checked against exact integer counts down to 1e-18 and
``scipy.stats.permutation_test`` in ``tests/audit/test_signflip.py``). The cost is about
``(2T + 1) * (m + number of magnitudes)`` multiply-adds for m non-zero differences.

References
----------
.. [1] Fisher, R. A. (1935). The Design of Experiments (the randomisation test).
.. [2] Good, P. (2005). Permutation, Parametric and Bootstrap Tests of Hypotheses, 3rd ed., §3.
"""

from __future__ import annotations

import functools

import numpy as np
from scipy import special

# Above this many lattice points (sum |D|) the exact distribution is not computed (callers resample).
MAX_LATTICE = 2_000_000


def lattice_unit(sample_counts: np.ndarray) -> int:
    """The lcm of the per-problem sample counts: every difference of two means is a multiple of 1/lcm."""
    counts = np.unique(np.asarray(sample_counts, dtype=np.int64))
    return int(np.lcm.reduce(counts)) if counts.size else 1


@functools.lru_cache(maxsize=4096)
def _half_binomial(n: int) -> np.ndarray:
    """P(B = j), j = 0..n, for B ~ Binomial(n, 1/2), from log-gamma (relative error about 1e-13)."""
    j = np.arange(n + 1)
    log_pmf = special.gammaln(n + 1) - special.gammaln(j + 1) - special.gammaln(n - j + 1) - n * np.log(2.0)
    pmf = np.exp(log_pmf)
    pmf.flags.writeable = False
    return pmf


def _groups(values: np.ndarray) -> list[tuple[int, int]]:
    """(magnitude v, count n_v) of the non-zero values, the largest count last (its convolution is the
    one :func:`upper_tail` skips)."""
    magnitudes, counts = np.unique(np.abs(np.asarray(values, dtype=np.int64)), return_counts=True)
    keep = magnitudes > 0
    return sorted(zip(magnitudes[keep].tolist(), counts[keep].tolist(), strict=True), key=lambda g: (g[1], g[0]))


def _convolve(groups: list[tuple[int, int]]) -> np.ndarray:
    pmf = np.ones(1)
    for v, n in groups:
        kernel = _half_binomial(n)
        step = 2 * v
        grown = np.zeros(pmf.size + step * n)
        if n + 1 < min(step, pmf.size):  # fewer taps than residue classes: shift-and-add each tap
            for j, weight in enumerate(kernel):
                grown[j * step: j * step + pmf.size] += weight * pmf
        else:  # residue class r mod 2v is one sub-sequence, along which the binomial moves mass by 2v
            for r in range(min(step, pmf.size)):
                grown[r::step] = np.correlate(pmf[r::step], kernel, "full")  # the kernel is symmetric
        pmf = grown
    return pmf


def upper_tail(values: np.ndarray, threshold: int) -> float:
    """P(S ≥ ``threshold``) under sign flips of the integers ``values``, exact up to rounding (:func:`tails`)."""
    return tails(values, threshold)[0]


def tails(values: np.ndarray, observed: int) -> tuple[float, float]:
    """(P(S ≥ ``observed``), P(S ≤ ``observed``)) under sign flips of the integers ``values``, exact up to
    rounding, from one convolution.

    The last (largest) group is not convolved: with ``n`` values of magnitude ``v`` left, P(S ≥ a) =
    sum_j P(B = j) · P(S' ≥ a − v(2j − n)) over the distribution S' of the others (and P(S ≤ a) likewise,
    S' being symmetric)."""
    groups = _groups(values)
    if not groups:
        return (1.0 if observed <= 0 else 0.0), (1.0 if observed >= 0 else 0.0)
    v, n = groups[-1]
    rest = _convolve(groups[:-1])
    half = (rest.size - 1) // 2
    survival = np.concatenate([np.cumsum(rest[::-1])[::-1], [0.0]])
    weights = _half_binomial(n)
    shift = v * (2 * np.arange(n + 1) - n)
    greater = weights @ survival[np.clip(observed - shift + half, 0, rest.size)]
    less = weights @ survival[np.clip(-observed - shift + half, 0, rest.size)]  # S' is symmetric
    return float(min(1.0, greater)), float(min(1.0, less))


def two_sided(values: np.ndarray) -> float:
    """Two-sided sign-flip p of the observed sum of ``values``: min(1, 2·P(S ≥ |s|)), as
    ``scipy.stats.permutation_test`` defines it for this symmetric null."""
    observed = int(np.asarray(values, dtype=np.int64).sum())
    return min(1.0, 2.0 * upper_tail(values, abs(observed))) if observed else 1.0


def resampled_tails(differences: np.ndarray, observed: float, n_resamples: int,
                    rng: np.random.Generator | int | None) -> tuple[float, float]:
    """Monte-Carlo one-sided p's, (hits + 1) / (n_resamples + 1), from random sign patterns: the fallback
    where the lattice is too wide to enumerate (its p is never below 1 / (n_resamples + 1))."""
    generator = np.random.default_rng(rng)
    values = np.asarray(differences, dtype=float)
    values = values[values != 0]
    tolerance = 1e-9 * max(1.0, float(np.abs(values).sum()))
    hits_greater = hits_less = 0
    for start in range(0, n_resamples, 2_000):
        size = min(2_000, n_resamples - start)
        signs = generator.integers(0, 2, size=(size, values.size), dtype=np.int8) * 2 - 1
        null = signs @ values
        hits_greater += int(np.sum(null >= observed - tolerance))
        hits_less += int(np.sum(null <= observed + tolerance))
    return (hits_greater + 1) / (n_resamples + 1), (hits_less + 1) / (n_resamples + 1)


# The leaderboard's lattice budget, sum |D| on one pair's lattice (about 10 ms a pair at 400 problems), and
# the coarser one for a pair whose p is surely below SURELY_SMALL (Hoeffding's bound on the coarse lattice).
LEADERBOARD_LATTICE = 16_384
COARSE_LATTICE = 512
SURELY_SMALL = 1e-12


def hoeffding_two_sided(values: np.ndarray) -> float:
    """Hoeffding's bound on the two-sided sign-flip p of the sum of ``values``: 2·exp(−s² / (2 Σ v²)), an
    upper bound for every sign-flip distribution (Hoeffding 1963, Theorem 2)."""
    v = np.asarray(values, dtype=float)
    square = float(v @ v)
    return 1.0 if square == 0 else min(1.0, 2.0 * float(np.exp(-float(v.sum()) ** 2 / (2 * square))))


def on_lattice(differences: np.ndarray, sample_counts: np.ndarray, limit: int) -> tuple[np.ndarray, int, float]:
    """Per-problem differences of means as integers on the lattice 1/L, for the exact null of their sum.

    L is the lcm of the sample counts where ``L · sum |d| <= limit``: the differences lie on that lattice and
    nothing changes. Otherwise (unequal samples per problem make the lcm large) L is the largest integer
    that fits and each difference is rounded to the nearest 1/L, by ``np.rint``, which is odd
    (rint(−x) = −rint(x)): a sign flip of a problem flips its rounded value, so the sign-flip null of the
    rounded sum is computed exactly and the test of that statistic keeps its level.

    Returns
    -------
    steps : ndarray of int
        ``rint(L · d)``.
    unit : int
        L.
    rounding : float
        The largest change rounding can make to the mean difference, ``sum |d − steps / L| / n`` (0 on the
        natural lattice).
    """
    d = np.asarray(differences, dtype=float)
    total = float(np.abs(d).sum())
    unit = lattice_unit(sample_counts)
    if unit * total > limit:
        unit = max(1, int(limit // max(total, 1e-12)))
    scaled = d * unit
    steps = np.rint(scaled).astype(np.int64)
    change = float(np.abs(scaled - steps).sum()) / unit / max(d.size, 1)
    return steps, unit, (change if change > 1e-9 / max(unit, 1) else 0.0)
