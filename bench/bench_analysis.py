"""Speed of the full analysis: 6 arms × 164 problems × 3 repeats, 10,000 bootstrap resamples.

Side by side: sotacheck's vectorised `analyze` (per-arm intervals, 5 paired comparisons with the
paired cluster bootstrap, sign-flip permutation and CMH, Holm, power notes) against a straightforward
per-resample pandas loop computing the same 5 paired bootstrap intervals. The loop is timed on 200
resamples and scaled linearly to 10,000 (stated as such). Target: sotacheck under 5 s.
Run: `.venv/bin/python bench/bench_analysis.py`.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd

sys.path.insert(0, ".")
from sotacheck.audit.analysis import analyze
from sotacheck.core.rundir import Run, normalise

ARMS, PROBLEMS, REPEATS, RESAMPLES, LOOP_RESAMPLES = 6, 164, 3, 10_000, 200


def synthetic_table(seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    difficulty = rng.beta(2, 1, PROBLEMS)
    rows = []
    for a in range(ARMS):
        skill = 0.05 * a
        for i in range(PROBLEMS):
            for r in range(REPEATS):
                rows.append({"arm": f"arm{a}", "dataset": "humaneval", "problem": f"HumanEval/{i}", "repeat": r,
                             "passed": bool(rng.random() < min(1, difficulty[i] + skill)),
                             "calls": int(rng.integers(1, 10)), "prompt_tokens": 500, "completion_tokens": 200})
    return normalise(pd.DataFrame(rows), "synthetic")


def pandas_loop(table: pd.DataFrame, resamples: int) -> list[tuple[float, float]]:
    """The straightforward way: for each resample, draw problems and recompute with pandas."""
    rng = np.random.default_rng(0)
    problems = table["problem"].unique()
    out = []
    for arm in [f"arm{a}" for a in range(1, ARMS)]:
        diffs = []
        for _ in range(resamples):
            drawn = pd.DataFrame({"problem": rng.choice(problems, size=len(problems))})
            sample = drawn.merge(table[table["arm"].isin([arm, "arm0"])], on="problem")
            means = sample.groupby("arm")["passed"].mean()
            diffs.append(means[arm] - means["arm0"])
        out.append(tuple(np.quantile(diffs, [0.025, 0.975])))
    return out


def main() -> None:
    table = synthetic_table()
    run = Run(None, table, {})
    started = time.perf_counter()
    result = analyze([run], baseline="arm0", n_resamples=RESAMPLES)
    ours = time.perf_counter() - started
    started = time.perf_counter()
    pandas_loop(table, LOOP_RESAMPLES)
    loop = (time.perf_counter() - started) * RESAMPLES / LOOP_RESAMPLES
    print(f"{ARMS} arms x {PROBLEMS} problems x {REPEATS} repeats, {RESAMPLES} resamples, "
          f"{len(result.comparisons)} comparisons")
    print(f"sotacheck analyze (vectorised, full analysis): {ours:.2f} s (target < 5 s)")
    print(f"pandas per-resample loop (bootstrap CIs only):  {loop:.1f} s "
          f"(timed on {LOOP_RESAMPLES} resamples, scaled to {RESAMPLES})")
    print(f"speed-up: {loop / ours:.0f}x")


if __name__ == "__main__":
    main()
