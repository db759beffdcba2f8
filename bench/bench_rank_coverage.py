"""Do the leaderboard's rank intervals and its confidence set for the best cover, on boards with ties and under
a global null, and how wide are they?

Boards of 20 systems (seeded; problem difficulty N(0, 1.5²) drawn afresh each replicate, the probability that
system s solves problem p is expit(a_s − d_p), each of K samples an independent draw; as
``bench_leaderboard.py``), for n = 164 and 400 problems and K = 1 and 10 samples, α = 0.05:

- ``spread``: ``bench_leaderboard.ABILITIES`` (a unique best, two near-ties behind it);
- ``ties``: three systems tied for the best, two tied in the middle, the rest spread;
- ``null``: all 20 systems equal (every system is a best; every true rank range is 1–20).

Per replicate, ``sotacheck.audit.leaderboard.leaderboard`` on the board, then:

- simultaneous rank coverage: every system's interval contains its whole true rank range
  [1 + #truly better, N − #truly worse] (a tied system's rank is any in that range); must be ≥ 95 %;
- best-set coverage, the set's guarantee: a truly best system lies in the set; where several tie for the best,
  each in turn (the share of the tied bests covered, averaged over boards: they are exchangeable in these
  boards, so each has this coverage); must be ≥ 95 %;
- best-set coverage of every truly best system at once (shown for what it is: not the set's guarantee where
  the best is tied), and the top group's, which has that guarantee (Holm over all pairs);
- mean rank-interval width (highest − lowest rank, averaged over systems), mean top-group and best-set size,
  beside the statistician's reference widths (issue 44; its board is not specified, so the comparison is of
  orders of magnitude, not a target).

Each coverage figure carries its Monte Carlo standard error sqrt(p (1 − p) / R) and Wilson 95 % interval.

Run: ``.venv/bin/python bench/bench_rank_coverage.py [--reps R] [--boards B ...] [--cells 400x10 ...]
[--seed S]`` (default 100 replicates per cell, every board and cell; a board or a cell per process uses several
cores; ``--seed`` draws an independent batch of boards, to pool with another for a smaller Monte Carlo error).
"""

from __future__ import annotations

import gc
import sys
import time
from pathlib import Path

import numpy as np
from statsmodels.stats.proportion import proportion_confint

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_leaderboard import ABILITIES, as_run, simulate, true_rates

from sotacheck.audit.leaderboard import leaderboard

BOARDS = {
    "spread": ABILITIES,
    "ties": np.concatenate([[2.0, 2.0, 2.0, 1.6], [0.8, 0.8], np.linspace(1.4, -1.5, 14)]),
    "null": np.full(20, 0.5),
}
# issue 44, the statistician's reference: mean rank-interval width and top-group size per (n, K)
REFERENCE = {(164, 1): (10.5, 7.3), (164, 10): (4.8, 3.8), (400, 1): (6.6, 4.7), (400, 10): (2.7, 2.5)}


def true_ranges(rates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each system's true rank range: [1 + #strictly better, N − #strictly worse] (ties share a range)."""
    close = np.isclose(rates[:, None], rates[None, :], rtol=0, atol=1e-12)
    better = (rates[None, :] > rates[:, None]) & ~close
    worse = (rates[None, :] < rates[:, None]) & ~close
    return 1 + better.sum(axis=1), rates.size - worse.sum(axis=1)


def share(hits: int, reps: int) -> str:
    p = hits / reps
    low, high = proportion_confint(hits, reps, method="wilson")
    return f"{100 * p:.1f} % ± {100 * np.sqrt(p * (1 - p) / reps):.1f} [{100 * low:.1f}, {100 * high:.1f}]"


def mean_share(values: list[float]) -> str:
    """Mean of per-board shares with its Monte Carlo standard error over boards."""
    v = np.asarray(values)
    return f"{100 * v.mean():.2f} % ± {100 * v.std(ddof=1) / np.sqrt(v.size):.2f}"


def main(reps: int, boards: list[str], cells: list[tuple[int, int]], seed: int = 0) -> None:
    gc.freeze()  # statsmodels' multipletests calls gc.collect(); keep the long-lived objects out of its scan
    print("| board | n | K | R | simultaneous rank coverage ± MC s.e. [Wilson 95 %] | best-set coverage (a true "
          "best) ± MC s.e. | best set ⊇ every true best | top group ⊇ every true best | mean rank-interval width "
          "(reference) | mean top-group size (reference) | mean best-set size | s / board |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for index, (label, abilities) in enumerate(BOARDS.items()):
        if label not in boards:
            continue
        rates = true_rates(abilities)
        low_true, high_true = true_ranges(rates)
        bests = np.flatnonzero(np.isclose(rates, rates.max(), rtol=0, atol=1e-12))
        for n, k in cells:
            rng = np.random.default_rng(1_000_000 * index + 1000 * n + k + 10_000_000 * seed)
            covered = all_best = top_all = 0
            per_best: list[float] = []
            widths, tops, sets = [], [], []
            start = time.perf_counter()
            for _ in range(reps):
                board = leaderboard([as_run(simulate(rng, abilities, n, k))], alpha=0.05)
                rows = {int(s.system[1:]): s for s in board.systems}
                covered += all(rows[i].rank_interval[0] <= low_true[i] and rows[i].rank_interval[1] >= high_true[i]
                               for i in rows)
                inside = np.array([rows[b].in_best_set for b in bests])
                per_best.append(float(inside.mean()))
                all_best += bool(inside.all())
                top_all += all(rows[b].in_top_group for b in bests)
                widths.append(np.mean([s.rank_interval[1] - s.rank_interval[0] for s in board.systems]))
                tops.append(len(board.top_group))
                sets.append(len(board.best_set))
                gc.collect()
            per = (time.perf_counter() - start) / reps
            width_ref, top_ref = REFERENCE[(n, k)]
            print(f"| {label} | {n} | {k} | {reps} | {share(covered, reps)} | {mean_share(per_best)} | "
                  f"{100 * all_best / reps:.1f} % | {100 * top_all / reps:.1f} % | "
                  f"{np.mean(widths):.2f} ({width_ref}) | {np.mean(tops):.2f} "
                  f"({top_ref}) | {np.mean(sets):.2f} | {per:.2f} |", flush=True)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--boards", nargs="*", default=list(BOARDS), choices=list(BOARDS))
    parser.add_argument("--cells", nargs="*", default=["164x1", "164x10", "400x1", "400x10"])
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args()
    chosen = [(int(c.split("x")[0]), int(c.split("x")[1])) for c in options.cells]
    main(options.reps, options.boards, chosen, options.seed)
