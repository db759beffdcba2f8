"""Coverage of the pass-rate intervals by simulation, and the level of exact McNemar under the null.

2,000 simulated 164-problem datasets per scenario: one run or 3 repeats, all problems alike or with
per-problem difficulty (p_i ~ Beta with mean p and concentration 2), at p = 0.5, 0.8, 0.95. The estimand
is the population pass rate p. Bootstrap intervals use 1,000 resamples (vectorised, problems resampled).
Run: `.venv/bin/python bench/bench_coverage.py` (about a minute on 2 cores). Figures go to RESULTS.md.
"""

from __future__ import annotations

import sys
import time

import numpy as np
from scipy import stats

sys.path.insert(0, ".")
from sotacheck.audit.intervals import clustered_pass_rate, proportion_interval
from sotacheck.audit.paired import mcnemar_exact

N, DATASETS, B, CONCENTRATION = 164, 2000, 1000, 2.0


def simulate(rng: np.random.Generator, p: float, repeats: int, difficulty: bool) -> np.ndarray:
    if difficulty:
        p_i = rng.beta(p * CONCENTRATION, (1 - p) * CONCENTRATION, size=(DATASETS, N, 1))
    else:
        p_i = np.full((DATASETS, N, 1), p)
    return (rng.random((DATASETS, N, repeats)) < p_i).astype(float)


def bootstrap_intervals(means: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Percentile and BCa intervals for each dataset's mean of per-problem means (vectorised)."""
    n = means.shape[1]
    idx = rng.integers(0, n, size=(B, n))
    boots = means[:, idx].mean(axis=2)                      # datasets × B
    theta = means.mean(axis=1)
    pct = np.quantile(boots, [0.025, 0.975], axis=1).T
    with np.errstate(divide="ignore", invalid="ignore"):
        z0 = stats.norm.ppf((boots < theta[:, None]).mean(axis=1))
        jack = (means.sum(axis=1, keepdims=True) - means) / (n - 1)
        d = jack.mean(axis=1, keepdims=True) - jack
        accel = (d**3).sum(axis=1) / (6 * ((d**2).sum(axis=1)) ** 1.5)
        z = stats.norm.ppf([0.025, 0.975])
        alphas = stats.norm.cdf(z0[:, None] + (z0[:, None] + z) / (1 - accel[:, None] * (z0[:, None] + z)))
    bca = np.array([np.quantile(b, a) if np.isfinite(a).all() else [np.nan, np.nan]
                    for b, a in zip(boots, alphas, strict=True)])
    return pct, bca


def coverage(intervals: np.ndarray, p: float) -> float:
    ok = np.isfinite(intervals).all(axis=1)
    return float(((intervals[:, 0] <= p) & (p <= intervals[:, 1]) & ok).mean())


def main() -> None:
    rng = np.random.default_rng(20261130)
    started = time.perf_counter()
    print(f"{DATASETS} datasets x {N} problems per scenario; bootstrap B = {B}; coverage of nominal 95 %")
    header = "| repeats | difficulty | p | method | coverage |"
    print(header)
    print("|---|---|---|---|---|")
    for repeats in (1, 3):
        for difficulty in (False, True):
            for p in (0.5, 0.8, 0.95):
                data = simulate(rng, p, repeats, difficulty)
                means = data.mean(axis=2)
                rows: dict[str, np.ndarray] = {}
                if repeats == 1:
                    k = data.sum(axis=(1, 2))
                    for method in ("wilson", "clopper-pearson", "jeffreys"):
                        rows[method + (" (default)" if method == "wilson" else "")] = np.array(
                            [[(ci := proportion_interval(int(x), N, 0.95, method)).low, ci.high] for x in k])
                else:
                    rows["wilson-deff (default)"] = np.array(
                        [[(ci := clustered_pass_rate(d).confidence_interval()).low, ci.high] for d in data])
                    cells = N * repeats
                    rows["naive Wilson, rows as independent"] = np.array(
                        [[(ci := proportion_interval(float(x), cells)).low, ci.high] for x in data.sum(axis=(1, 2))])
                pct, bca = bootstrap_intervals(means, rng)
                rows["percentile bootstrap"] = pct
                rows["BCa bootstrap"] = bca
                for method, intervals in rows.items():
                    print(f"| {repeats} | {'yes' if difficulty else 'no'} | {p} | {method} | "
                          f"{100 * coverage(intervals, p):.1f} % |")
    # Level of exact McNemar under the null: two arms with the same per-problem rates, one run each.
    print("\n| p | difficulty | exact McNemar rejections at alpha = 0.05 (null true) |")
    print("|---|---|---|")
    for p in (0.5, 0.8, 0.95):
        for difficulty in (False, True):
            a = simulate(rng, p, 1, difficulty)[:, :, 0]
            if difficulty:
                p_i = rng.beta(p * CONCENTRATION, (1 - p) * CONCENTRATION, size=(DATASETS, N))
                a = (rng.random((DATASETS, N)) < p_i).astype(float)
                b = (rng.random((DATASETS, N)) < p_i).astype(float)
            else:
                b = simulate(rng, p, 1, False)[:, :, 0]
            b_counts = ((a == 1) & (b == 0)).sum(axis=1)
            c_counts = ((a == 0) & (b == 1)).sum(axis=1)
            rejections = np.mean([mcnemar_exact(int(x), int(y)).pvalue <= 0.05
                                  for x, y in zip(b_counts, c_counts, strict=True)])
            print(f"| {p} | {'yes' if difficulty else 'no'} | {100 * rejections:.2f} % |")
    print(f"\nwall time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
