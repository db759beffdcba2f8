"""Confidence intervals for pass rates: one run (Wilson, Clopper–Pearson, Jeffreys), repeats clustered on
problems (Wilson on the design-effect-adjusted n, BCa / percentile cluster bootstrap), and pass@k.

References
----------
.. [1] Wilson, E. B. (1927). Probable inference, the law of succession, and statistical inference.
.. [2] Brown, Cai & DasGupta (2001). Interval estimation for a binomial proportion. Stat. Sci. 16(2).
.. [3] Kish, L. (1965). Survey Sampling (design effect).
.. [4] Chen et al. (2021). Evaluating large language models trained on code (pass@k estimator).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np

from sotacheck.core.errors import ArgumentError

ProportionMethod = Literal["wilson", "clopper-pearson", "jeffreys"]
ClusterMethod = Literal["wilson-deff", "bca", "percentile"]
_STATSMODELS_NAME = {"wilson": "wilson", "clopper-pearson": "beta", "jeffreys": "jeffreys"}


@dataclass(frozen=True)
class ConfidenceInterval:
    low: float
    high: float


def check_confidence_level(confidence_level: float) -> None:
    """Raise :class:`~sotacheck.core.errors.ArgumentError` unless ``confidence_level`` is in (0, 1): every
    interval of this module and of :mod:`sotacheck.audit.paired` checks its level the same way."""
    if not 0 < confidence_level < 1:
        raise ArgumentError(f"`confidence_level` must be in (0, 1), got {confidence_level}")


def _proportion_iv(k: int, n: int) -> None:
    if n < 1:
        raise ArgumentError(f"`n` must be at least 1, got {n}")
    if not 0 <= k <= n:
        raise ArgumentError(f"`k` must be in [0, n] = [0, {n}], got {k}")


def proportion_interval(k: float, n: float, confidence_level: float = 0.95,
                        method: ProportionMethod = "wilson") -> ConfidenceInterval:
    """Interval for k successes in n trials (n may be an effective, non-integer size; 0 ≤ k ≤ n).

    Jeffreys follows the boundary rule of Brown, Cai & DasGupta (2001, §4.1.2) [2]_: the lower bound is 0
    when k = 0 and the upper bound is 1 when k = n (the equal-tailed Beta quantiles would exclude them).
    """
    check_confidence_level(confidence_level)
    if method not in _STATSMODELS_NAME:
        raise ArgumentError(f"`method` must be one of {list(_STATSMODELS_NAME)}, got {method!r}")
    if not (isinstance(n, int | float | np.number) and np.isfinite(n) and n > 0):
        raise ArgumentError(f"`n` must be a positive number, got {n!r}")
    if not (isinstance(k, int | float | np.number) and 0 <= k <= n):
        raise ArgumentError(f"`k` must be in [0, n] = [0, {n}], got {k!r}")
    from statsmodels.stats.proportion import proportion_confint  # statsmodels loads pandas: only when used

    low, high = proportion_confint(k, n, alpha=1 - confidence_level, method=_STATSMODELS_NAME[method])
    if method == "jeffreys":
        low, high = (0.0 if k == 0 else low), (1.0 if k == n else high)
    return ConfidenceInterval(float(max(0.0, low)), float(min(1.0, high)))


@dataclass(frozen=True)
class PassRateResult:
    """A pass rate over one run: ``statistic`` = k / n."""

    statistic: float
    k: int
    n: int

    def confidence_interval(self, confidence_level: float = 0.95,
                            method: ProportionMethod = "wilson") -> ConfidenceInterval:
        """Wilson by default; ``"clopper-pearson"`` guarantees coverage; ``"jeffreys"`` is Bayesian.
        Wald is deliberately not offered (too narrow and shifted near 1; zero width at n/n)."""
        return proportion_interval(self.k, self.n, confidence_level, method)


def pass_rate(k: int, n: int) -> PassRateResult:
    """The pass rate of ``k`` passing problems out of ``n``."""
    _proportion_iv(k, n)
    return PassRateResult(k / n, k, n)


@dataclass(frozen=True)
class ClusteredPassRate:
    """A pass rate over problems × repeats, with the problem as the cluster.

    ``se_clustered`` = sd(problem means, ddof=1) / sqrt(C): the cluster-robust SE with the C/(C−1)
    correction. ``design_effect`` = se_clustered² / se_naive², clamped to [1, K].
    """

    statistic: float
    problem_means: np.ndarray
    n_problems: int
    n_repeats: int
    se_naive: float
    se_clustered: float
    design_effect: float

    @property
    def effective_n(self) -> float:
        return self.n_problems * self.n_repeats / self.design_effect

    def confidence_interval(self, confidence_level: float = 0.95, method: ClusterMethod = "wilson-deff",
                            n_resamples: int = 10_000, rng: np.random.Generator | int | None = None
                            ) -> ConfidenceInterval:
        """``"wilson-deff"`` (default): Wilson at the design-effect-adjusted n — the method whose
        coverage stayed within 93–97 % in ``bench/bench_coverage.py``. ``"bca"`` and ``"percentile"``
        bootstrap the problems (BCa falls back to Wilson-deff where it degenerates, e.g. 164/164)."""
        check_confidence_level(confidence_level)
        if method == "wilson-deff":
            n_eff = self.effective_n
            return proportion_interval(self.statistic * n_eff, n_eff, confidence_level, "wilson")
        if method not in ("bca", "percentile"):
            raise ArgumentError(f"`method` must be 'wilson-deff', 'bca' or 'percentile', got {method!r}")
        if np.ptp(self.problem_means) == 0:
            return self.confidence_interval(confidence_level, "wilson-deff")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from scipy import stats  # scipy.stats takes about 1 s to import: only for a bootstrap

            result = stats.bootstrap((self.problem_means,), np.mean, confidence_level=confidence_level,
                                     n_resamples=n_resamples, method="BCa" if method == "bca" else "percentile",
                                     vectorized=True, random_state=rng)
        low, high = result.confidence_interval
        if not (np.isfinite(low) and np.isfinite(high)):
            return self.confidence_interval(confidence_level, "wilson-deff")
        return ConfidenceInterval(float(low), float(high))


def outcome_matrix_of(outcomes: np.ndarray, name: str = "outcomes") -> np.ndarray:
    """``outcomes`` as a problems × repeats float matrix of 0/1 (a vector is one repeat), or an
    :class:`~sotacheck.core.errors.ArgumentError` naming ``name``: empty, missing cells, or not 0/1."""
    matrix = np.asarray(outcomes, dtype=float)
    if matrix.ndim == 1:
        matrix = matrix[:, None]
    if matrix.ndim != 2 or matrix.shape[0] < 1 or matrix.shape[1] < 1:
        raise ArgumentError(f"`{name}` must be a non-empty problems × repeats matrix, got shape {matrix.shape}")
    if np.isnan(matrix).any():
        raise ArgumentError(f"`{name}` contains missing cells; drop or impute errored cells explicitly first")
    if not np.isin(matrix, (0.0, 1.0)).all():
        raise ArgumentError(f"`{name}` must hold 0/1 outcomes")
    return matrix


def clustered_pass_rate(outcomes: np.ndarray) -> ClusteredPassRate:
    """Pass rate of a problems × repeats 0/1 matrix, clustered on problems.

    With one problem the clustered SE is undefined; it is then reported as the naive SE with a
    design effect of K (every repeat of one problem counts as one observation), never as NaN.
    """
    matrix = outcome_matrix_of(outcomes)
    n_problems, n_repeats = matrix.shape
    means = matrix.mean(axis=1)
    p = float(matrix.mean())
    # the naive SE treats every (problem, repeat) cell as independent: sd(cells, ddof=1) / sqrt(cells)
    se_naive = float(matrix.std(ddof=1) / np.sqrt(matrix.size)) if matrix.size > 1 else 0.0
    if n_problems > 1:
        se_clustered = float(means.std(ddof=1) / np.sqrt(n_problems))
    else:
        se_clustered = se_naive * np.sqrt(n_repeats)
    if se_naive > 0:
        deff = float(np.clip(se_clustered**2 / se_naive**2, 1.0, n_repeats))
    else:
        deff = float(n_repeats)  # all-pass / all-fail: no information on correlation; be conservative
    return ClusteredPassRate(p, means, n_problems, n_repeats, se_naive, se_clustered, deff)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Chen et al.'s unbiased pass@k from n samples with c correct: 1 − C(n−c, k) / C(n, k)."""
    if n < 1 or not 0 <= c <= n or not 1 <= k <= n:
        raise ArgumentError(f"need 1 <= `k` <= `n` and 0 <= `c` <= `n`; got n={n}, c={c}, k={k}")
    if n - c < k:
        return 1.0
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))
