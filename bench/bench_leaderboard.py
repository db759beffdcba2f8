"""Leaderboards: do the rank intervals cover, how often is the true best left out of the top group, and how
fast is it beside a naive loop over pairs?

Part ``coverage`` (seeded simulation). 20 systems with known abilities a_s, evenly spread with two near-ties
at the top; problems of heterogeneous difficulty d ~ N(0, 1.5²), drawn afresh each replicate; the
probability that system s solves problem p is expit(a_s − d_p), each of K samples an independent Bernoulli
draw. A system's *true* pass rate is E_d[expit(a_s − d)] (numerical integration), its true rank the rank of
that. For n = 164 and 500 problems and K = 1 and 5 samples, over REPS replicates: the simultaneous coverage
(every one of the 20 true ranks inside its interval, at α = 0.05: must be ≥ 95 %), the false top-group
exclusion rate (the true best system not in the top group: must be ≤ 5 %), and the mean size of the top group.

Part ``speed``. Side by side in one run, the same tables:
- 60 systems × 400 problems × 10 samples: ``sotacheck.audit.leaderboard.leaderboard`` against a naive loop
  over the 1,770 pairs with ``scipy.stats.permutation_test`` (9,999 resamples per pair: the naive way
  cannot be exact here) and ``statsmodels``' Holm; target under 2 s;
- 60 × 400 × 1 and 500 × 500 × 1: against a loop of ``scipy.stats.binomtest`` over the pairs; target for
  500 × 500 under 30 s;
- the whole command, ``sotacheck leaderboard RUN --json`` on a 60 × 400 × 10 run directory, process start
  included; target under 10 s; and on the same table with 5 % of its cells errored (samples per problem
  unequal: the sign-flip null on the rounded lattice), target under 10 s.

Part ``holes`` (issue 44). 25 systems × 200 problems × 20 samples, complete and with 5 % of cells errored at
random (seeded): the significant pairs of the complete table that stay significant (target ≥ 90 %; before,
with the resampled fallback and its p floor, 0 of 288), the smallest p, the largest rounding.

Run: ``.venv/bin/python bench/bench_leaderboard.py [coverage [REPS]] [speed] [holes]`` (default all, REPS 300).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import integrate, special, stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from sotacheck.audit.leaderboard import leaderboard
from sotacheck.core.rundir import Run, write_run

ABILITIES = np.concatenate([[2.0, 1.95, 1.9], np.linspace(1.6, -1.5, 17)])  # near-ties at the top
SIGMA = 1.5


def true_rates(abilities: np.ndarray) -> np.ndarray:
    density = stats.norm(0, SIGMA).pdf
    return np.array([integrate.quad(lambda d, a=a: special.expit(a - d) * density(d), -12, 12)[0]
                     for a in abilities])


def simulate(rng: np.random.Generator, abilities: np.ndarray, n: int, k: int) -> np.ndarray:
    """Systems × problems × samples of 0/1."""
    difficulty = rng.normal(0, SIGMA, n)
    p = special.expit(abilities[:, None] - difficulty[None, :])
    return (rng.random((abilities.size, n, k)) < p[:, :, None]).astype(np.int8)


def as_run(x: np.ndarray) -> Run:
    s, p, k = np.meshgrid(np.arange(x.shape[0]), np.arange(x.shape[1]), np.arange(x.shape[2]), indexing="ij")
    table = pd.DataFrame({"arm": np.char.add("m", s.ravel().astype(str)), "dataset": "sim",
                          "problem": np.char.add("P", p.ravel().astype(str)), "repeat": k.ravel(),
                          "passed": x.ravel().astype(bool)})
    return Run(None, table, {"name": "sim", "source": "csv"})


def coverage(reps: int) -> None:
    rates = true_rates(ABILITIES)
    true_rank = stats.rankdata(-rates, method="min").astype(int)
    best = f"m{int(np.argmax(rates))}"
    print(f"true pass rates (%): {np.round(100 * rates, 1).tolist()}")
    print("| n | K | replicates | simultaneous coverage [Wilson 95 %] | true best excluded from top group "
          "[Wilson 95 %] | mean top-group size | mean rank-interval width | s/replicate |")
    print("|---|---|---|---|---|---|---|---|")
    for n in (164, 500):
        for k in (1, 5):
            rng = np.random.default_rng(1000 * n + k)
            covered = excluded = 0
            sizes, widths = [], []
            start = time.perf_counter()
            for _ in range(reps):
                board = leaderboard([as_run(simulate(rng, ABILITIES, n, k))], alpha=0.05)
                inside = all(s.rank_interval[0] <= true_rank[int(s.system[1:])] <= s.rank_interval[1]
                             for s in board.systems)
                covered += inside
                excluded += best not in board.top_group
                sizes.append(len(board.top_group))
                widths.append(np.mean([s.rank_interval[1] - s.rank_interval[0] for s in board.systems]))
            per = (time.perf_counter() - start) / reps
            cov_lo, cov_hi = proportion_confint(covered, reps, method="wilson")
            ex_lo, ex_hi = proportion_confint(excluded, reps, method="wilson")
            print(f"| {n} | {k} | {reps} | {100 * covered / reps:.1f} % [{100 * cov_lo:.1f}, {100 * cov_hi:.1f}] | "
                  f"{100 * excluded / reps:.1f} % [{100 * ex_lo:.1f}, {100 * ex_hi:.1f}] | {np.mean(sizes):.2f} | "
                  f"{np.mean(widths):.2f} | {per:.2f} |", flush=True)


def naive_pairs(x: np.ndarray, limit: int | None = None) -> np.ndarray:
    """The loop a user would write: one scipy test per pair, then Holm over all pairs (``limit``: only the first
    pairs are tested, for timing; Holm then over those)."""
    pvalues = []
    one = x.shape[2] == 1
    means = x.mean(axis=2)
    pairs = [(i, j) for i in range(x.shape[0]) for j in range(i + 1, x.shape[0])][:limit]
    for i, j in pairs:
        if one:
            b = int(np.sum((x[i, :, 0] == 1) & (x[j, :, 0] == 0)))
            c = int(np.sum((x[i, :, 0] == 0) & (x[j, :, 0] == 1)))
            pvalues.append(stats.binomtest(b, b + c, 0.5).pvalue if b + c else 1.0)
        else:
            diff = means[i] - means[j]
            diff = diff[diff != 0]
            pvalues.append(stats.permutation_test((diff,), np.sum, permutation_type="samples", vectorized=True,
                                                  n_resamples=9_999, random_state=0).pvalue if diff.size else 1.0)
    return np.asarray(multipletests(pvalues, method="holm")[1])


def timed(label: str, x: np.ndarray, limit: int | None = None) -> None:
    """Ours on the whole table beside the naive loop (on its first ``limit`` pairs, scaled to all, when given)."""
    run = as_run(x)
    start = time.perf_counter()
    board = leaderboard([run])
    ours = time.perf_counter() - start
    start = time.perf_counter()
    naive = naive_pairs(x, limit)
    theirs = (time.perf_counter() - start) * (len(board.pairs) / len(naive))
    ordered = sorted(board.pairs, key=lambda p: tuple(sorted((int(p.a[1:]), int(p.b[1:])))))
    raw = np.array([p.pvalue for p in ordered])
    scope = "" if limit is None else f" (timed on {len(naive)} of {len(board.pairs)} pairs, scaled)"
    if limit is None:
        agree = np.mean((np.array([p.pvalue_adjusted for p in ordered]) < 0.05) == (naive < 0.05))  # naive: Holm-adjusted
        decisions = f"{100 * agree:.1f} %"
    else:
        decisions = (f"ours: {sum(p.significant for p in ordered)} of {len(ordered)} significant; the naive loop's "
                     f"smallest possible p, 2/10,000, times {len(ordered)} pairs is above α: none can be")
    print(f"| {label}{scope} | {len(board.pairs)} | {ours:.2f} s | {theirs:.2f} s | {theirs / ours:.0f}x | "
          f"{decisions} | min p ours {raw.min():.1e} |", flush=True)


def with_holes(run: Run, fraction: float, seed: int) -> Run:
    """``run`` with a ``fraction`` of its cells errored (``passed`` missing) at random."""
    table = run.outcomes.copy()
    table["passed"] = table["passed"].astype(object)
    table.loc[np.random.default_rng(seed).random(len(table)) < fraction, "passed"] = None
    return Run(None, table, {"name": "sim", "source": "csv"})


def holes() -> None:
    rng = np.random.default_rng(44)
    x = simulate(rng, np.linspace(2.0, -2.0, 25), 200, 20)
    start = time.perf_counter()
    complete = leaderboard([as_run(x)])
    first = time.perf_counter() - start
    start = time.perf_counter()
    holed = leaderboard([with_holes(as_run(x), 0.05, 1)])
    second = time.perf_counter() - start
    significant = {(p.a, p.b) for p in complete.pairs if p.significant}
    now = {(p.a, p.b) for p in holed.pairs if p.significant}
    close = [p.rounding for p in holed.pairs if p.pvalue >= 1e-12]
    print(f"25 × 200 × 20: complete {len(significant)} of {len(complete.pairs)} pairs significant ({first:.2f} s); "
          f"5 % of cells errored ({sum(s.missing_cells for s in holed.systems)} cells): {len(now)} significant, "
          f"{len(now & significant)} of the complete table's kept ({100 * len(now & significant) / len(significant):.1f} "
          f"%), {len(now - significant)} new ({second:.2f} s); smallest p {min(p.pvalue for p in holed.pairs):.1e}; "
          f"rounding at most {100 * max(close, default=0):.3f} points on the pairs with p ≥ 1e-12")


def whole_command(run: Run, label: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        write_run(Path(tmp) / "board", run.outcomes, {"name": "board", "source": "csv"})
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "sotacheck.cli", "leaderboard", str(Path(tmp) / "board"), "--json"],
                              capture_output=True, text=True, check=True)
        whole = time.perf_counter() - start
    print(f"whole command `sotacheck leaderboard RUN --json` on {label}, process start included: {whole:.2f} s "
          f"({len(done.stdout)} bytes of JSON)", flush=True)


def speed() -> None:
    rng = np.random.default_rng(7)
    print("| table (systems × problems × samples) | pairs | sotacheck leaderboard() | naive loop over pairs + Holm "
          "| speed-up | same significance decisions | |")
    print("|---|---|---|---|---|---|---|")
    big = simulate(rng, np.linspace(2.5, -2.5, 60), 400, 10)
    timed("60 × 400 × 10 (naive: permutation_test, 9,999 resamples)", big, limit=177)
    timed("60 × 400 × 1 (naive: binomtest)", big[:, :, :1])
    timed("500 × 500 × 1 (naive: binomtest)", simulate(rng, np.linspace(2.5, -2.5, 500), 500, 1))
    holed = with_holes(as_run(big), 0.05, 2)
    start = time.perf_counter()
    board = leaderboard([holed])
    print(f"| 60 × 400 × 10, 5 % of cells errored (unequal samples) | {len(board.pairs)} | "
          f"{time.perf_counter() - start:.2f} s | | | {sum(p.significant for p in board.pairs)} significant | "
          f"min p ours {min(p.pvalue for p in board.pairs):.1e} |", flush=True)
    print()
    whole_command(as_run(big), "60 × 400 × 10 (240,000 cells)")
    whole_command(holed, "60 × 400 × 10 with 5 % of cells errored")


if __name__ == "__main__":
    args = sys.argv[1:] or ["coverage", "speed", "holes"]
    if "coverage" in args:
        position = args.index("coverage")
        reps = int(args[position + 1]) if len(args) > position + 1 and args[position + 1].isdigit() else 300
        coverage(reps)
    if "speed" in args:
        speed()
    if "holes" in args:
        holes()
