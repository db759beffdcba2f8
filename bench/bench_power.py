"""Is the gate's stated power right? And what does CMH test? Simulation, seeded, with Monte-Carlo error.

Part 1 (the gate's power note). For repeats K = 1, 3, 5 and two difficulty profiles (per-problem pass
probabilities p_i from a U-shaped Beta(0.5, 0.5), as on code benchmarks where most problems are always or
never solved, and a hump-shaped Beta(2, 2)) on n = 164 problems:

1. the candidate's probabilities are q_i = expit(logit(p_i) − θ), θ chosen so that the mean drop
   mean(p_i − q_i) is Δ: the drop falls on the problems of middling difficulty, as a real regression does;
2. the *stated* MDD is what the gate prints (``GateCheck.mdd``) on runs drawn at a drop Δ; Δ is moved to
   the mean stated MDD until the two agree (a fixed point: the drop the gate says it detects with 80 %
   power, when that is the true drop);
3. ``REPS`` new pairs of runs at that drop, each decided by ``sotacheck.audit.gate.gate`` (the real
   decision: one-sided exact McNemar at K = 1, the one-sided sign-flip test with 9,999 resamples at K > 1,
   alpha 0.05): the share that fails is the power at the stated MDD, with its Wilson 95 % interval;
4. the same at Δ = 0 (identical methods): the false-alarm rate, which must be at most alpha.

The MDD as it was computed before #20 (exact McNemar on the sign of each problem's difference, at the
share of problems whose means differ) is printed beside it for the same runs.

Part 2 (CMH). Per-problem effects of ±0.15 with random signs that average zero exactly (half the
problems each way), p_i ~ Beta(2, 2) limited to [0.15, 0.85], K repeats: the rejection rate at a
nominal 5 % of the Cochran–Mantel–Haenszel test with one stratum per problem, next to the sign-flip test
of the average (what the issue reported as 10.6 %; see bench/RESULTS.md for what this bench finds).

Run: ``.venv/bin/python bench/bench_power.py [REPS]`` (default 1000; about 20 minutes on 2 cores).
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd
from scipy import optimize, special

from sotacheck.audit.gate import GateSettings, gate
from sotacheck.audit.paired import cmh_test, sign_flip_test
from sotacheck.audit.power import mdd_paired_exact
from sotacheck.core.rundir import Run

N_PROBLEMS, ALPHA, SEED = 164, 0.05, 20
PROFILES = {"Beta(0.5,0.5)": (0.5, 0.5), "Beta(2,2)": (2.0, 2.0)}


def wilson(hits: int, n: int) -> tuple[float, float]:
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(hits, n, alpha=0.05, method="wilson")
    return float(low), float(high)


def shifted(p: np.ndarray, drop: float) -> np.ndarray:
    """q_i = expit(logit(p_i) − θ) with mean(p − q) = drop."""
    if drop == 0:
        return p
    logit = special.logit(p)
    theta = optimize.brentq(lambda t: float(np.mean(p - special.expit(logit - t))) - drop, 0.0, 50.0)
    return special.expit(logit - theta)


def as_run(arm: str, outcomes: np.ndarray) -> Run:
    n, k = outcomes.shape
    frame = pd.DataFrame({"arm": arm, "pipeline": arm, "dataset": "humaneval",
                          "problem": np.repeat([f"P/{i}" for i in range(n)], k), "repeat": np.tile(np.arange(k), n),
                          "passed": outcomes.ravel().astype(bool), "status": "passed"})
    frame.loc[~frame["passed"], "status"] = "failed"
    return Run(None, frame, {"name": arm, "source": "simulation"})


def one_gate(p: np.ndarray, q: np.ndarray, k: int, rng: np.random.Generator) -> tuple[bool, float, float]:
    """(failed, stated MDD, the pre-#20 MDD) for one simulated pair of runs."""
    base = rng.random((p.size, k)) < p[:, None]
    cand = rng.random((q.size, k)) < q[:, None]
    check = gate(as_run("base", base), as_run("cand", cand), settings=GateSettings(alpha=ALPHA)).checks[0]
    discordance = (check.drops + check.gains) / check.n
    old = mdd_paired_exact(check.n, discordance, ALPHA, 0.8, "greater") if discordance else float("inf")
    return check.regression, check.mdd, old


def power_part(reps: int) -> None:
    print(f"Part 1: the gate's power at its own stated MDD (n = {N_PROBLEMS}, alpha {ALPHA}, {reps} runs per cell)")
    print("| difficulty | K | stated MDD (mean ± sd) | pre-#20 MDD | power at the stated MDD [95 % CI] | "
          "false alarms at Δ = 0 [95 % CI] |")
    print("|---|---|---|---|---|---|")
    for name, (alpha_b, beta_b) in PROFILES.items():
        for k in (1, 3, 5):
            rng = np.random.default_rng([SEED, k, int(10 * alpha_b)])
            p = np.clip(rng.beta(alpha_b, beta_b, N_PROBLEMS), 1e-4, 1 - 1e-4)
            drop = 0.06
            for _ in range(3):  # the fixed point: the drop equals the MDD the gate states at that drop
                drop = float(np.mean([one_gate(p, shifted(p, drop), k, rng)[1] for _ in range(100)]))
            results = [one_gate(p, shifted(p, drop), k, rng) for _ in range(reps)]
            hits = sum(r[0] for r in results)
            stated = np.array([r[1] for r in results])
            old = np.array([r[2] for r in results])
            nulls = sum(one_gate(p, p, k, rng)[0] for _ in range(reps))
            low, high = wilson(hits, reps)
            n_low, n_high = wilson(nulls, reps)
            print(f"| {name} | {k} | {100 * stated.mean():.2f} ± {100 * stated.std():.2f} pp | "
                  f"{100 * old.mean():.2f} pp | {100 * hits / reps:.1f} % [{100 * low:.1f}, {100 * high:.1f}] | "
                  f"{100 * nulls / reps:.1f} % [{100 * n_low:.1f}, {100 * n_high:.1f}] |", flush=True)


def cmh_part(reps: int) -> None:
    print(f"\nPart 2: effects of ±0.15 averaging zero (n = {N_PROBLEMS}, nominal 5 %, {reps} runs per row)")
    print("| K | CMH rejects [95 % CI] | sign-flip on the mean rejects [95 % CI] |")
    print("|---|---|---|")
    for k in (3, 5, 10, 20):
        rng = np.random.default_rng([SEED, 99, k])
        cmh_hits = flip_hits = 0
        for _ in range(reps):
            p = np.clip(rng.beta(2, 2, N_PROBLEMS), 0.15, 0.85)
            effect = np.where(rng.permutation(N_PROBLEMS) < N_PROBLEMS // 2, 0.15, -0.15)
            a = rng.random((N_PROBLEMS, k)) < (p + effect)[:, None]
            b = rng.random((N_PROBLEMS, k)) < p[:, None]
            cmh_hits += cmh_test(a, b).pvalue < 0.05
            flip_hits += sign_flip_test(a, b, n_resamples=1999, rng=rng).pvalue < 0.05
        c_low, c_high = wilson(cmh_hits, reps)
        f_low, f_high = wilson(flip_hits, reps)
        print(f"| {k} | {100 * cmh_hits / reps:.1f} % [{100 * c_low:.1f}, {100 * c_high:.1f}] | "
              f"{100 * flip_hits / reps:.1f} % [{100 * f_low:.1f}, {100 * f_high:.1f}] |", flush=True)


def main() -> None:
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    started = time.perf_counter()
    power_part(reps)
    cmh_part(reps)
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
