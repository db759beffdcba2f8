"""Leaderboards: many systems on the same problems, and which of them cannot be separated from #1.

A leaderboard is where the *system* varies by design (models, or model + method); the problems and the
judge do not. Every pair of systems is tested with the paired test (exact McNemar with one sample per
problem; the exact lattice sign-flip test on per-problem means with repeats), Holm-adjusted over one named
family — all N(N−1)/2 pairs by default — and the adjusted tests give simultaneous rank intervals: a
system's rank lies in [1 + #systems significantly better, N − #systems significantly worse]. The **top
group** is the systems whose interval contains 1: those no other system beats significantly. A claim of
state of the art holds only for a system alone in the top group.

References
----------
.. [1] Cochran, W. G. (1950). The comparison of percentages in matched samples. Biometrika 37.
.. [2] Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scand. J. Stat. 6.
.. [3] Demšar, J. (2006). Statistical comparisons of classifiers over multiple data sets. JMLR 7.
.. [4] Al Mohamad, D., Goeman, J. J. & van Zwet, E. W. (2022). Simultaneous confidence intervals for
       ranks with application to ranking institutions. Biometrics 78(1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.contingency_tables import cochrans_q

from sotacheck.audit import signflip
from sotacheck.audit.combined import CombinedRuns, combine
from sotacheck.audit.intervals import proportion_interval
from sotacheck.audit.leaderboard_facts import system_conditions, system_differences
from sotacheck.audit.leaderboard_results import (
    Leaderboard,
    OmnibusResult,
    PairResolution,
    PairResult,
    Resolution,
    SuspectProblem,
    SystemResult,
)
from sotacheck.audit.paired import PairwiseResult, PairwiseTest, choose_pairwise_test, holm
from sotacheck.audit.power import mdd_paired_exact, sign_flip_power
from sotacheck.core.errors import ArgumentError, InputError
from sotacheck.core.rundir import Run

TOP = "TOP"
BEST_SET_METHOD = ("confidence set for the best by test inversion: a system is left out when another beats it in "
                   "the one-sided paired test at α / (N − 1), Bonferroni over its N − 1 comparisons")


@dataclass(frozen=True)
class Counts:
    """Passes and samples (non-error cells) per system × shared problem, systems in the given order;
    ``missing``: per system, the cells of the shared problems short of its most samples on a problem
    (errors, and samples dropped from the table)."""

    systems: tuple[str, ...]
    problems: tuple[str, ...]
    passes: np.ndarray
    samples: np.ndarray
    left_out: dict[str, tuple[str, ...]]
    missing: dict[str, int]

    @property
    def means(self) -> np.ndarray:
        return self.passes / self.samples

    @property
    def one_sample(self) -> bool:
        return bool((self.samples == 1).all())


def count_outcomes(table: pd.DataFrame, dataset: str) -> Counts:
    """Per system × problem pass and sample counts on ``dataset``, restricted to the problems every system
    has at least one non-error cell on; errors are left out, never counted as failures."""
    cells = table[(table["dataset"] == dataset) & table["passed"].notna()]
    systems = tuple(sorted(table.loc[table["dataset"] == dataset, "arm"].unique()))
    if len(systems) < 2:
        raise InputError(f"a leaderboard needs at least two systems on {dataset!r}; found "
                         f"{len(systems)}: {', '.join(systems) or 'none'}")
    grouped = cells.assign(hit=cells["passed"].astype(int)).groupby(["arm", "problem"])["hit"].agg(["sum", "count"])
    passes = grouped["sum"].unstack("problem").reindex(index=list(systems))
    samples = grouped["count"].unstack("problem").reindex(index=list(systems)).fillna(0)
    every = (samples > 0).all(axis=0)
    shared = tuple(str(p) for p in samples.columns[every])
    if not shared:
        have = (samples > 0).sum(axis=1)
        fewest = str(have.idxmin())
        raise InputError(f"no problem of {dataset!r} has a result from every one of the {len(systems)} systems "
                         f"(e.g. {fewest!r} has {int(have.min())}); a leaderboard "
                         f"compares systems on the problems they share")
    left_out = {s: tuple(sorted(str(p) for p in samples.columns[(samples.loc[s] > 0) & ~every])) for s in systems}
    rows = table[table["dataset"] == dataset].groupby(["arm", "problem"]).size().unstack("problem")
    most = rows.reindex(index=list(systems)).max(axis=1).to_numpy(float)
    used = samples[list(shared)].to_numpy(float)
    missing = {s: round(float((most[k] - used[k]).sum())) for k, s in enumerate(systems)}
    return Counts(systems, shared, passes[list(shared)].to_numpy(float), used,
                  {s: v for s, v in left_out.items() if v}, missing)


def _pass_rate(passes: np.ndarray, samples: np.ndarray, level: float) -> tuple[float, float, float, str]:
    """Pass rate (mean of per-problem means) with Wilson's interval; with repeats, Wilson at the n
    adjusted by the problem-clustered design effect (sotacheck.audit.intervals.ClusteredPassRate)."""
    means = passes / samples
    rate = float(means.mean())
    if (samples == 1).all():
        ci = proportion_interval(float(passes.sum()), float(samples.size), level, "wilson")
        return rate, ci.low, ci.high, "Wilson"
    cells = float(samples.sum())
    k_mean = cells / samples.size
    naive = rate * (1 - rate) / cells
    clustered = float(means.var(ddof=1)) / means.size if means.size > 1 else naive * k_mean
    deff = float(np.clip(clustered / naive, 1.0, k_mean)) if naive > 0 else k_mean
    n_eff = cells / deff
    ci = proportion_interval(rate * n_eff, n_eff, level, "wilson")
    return rate, ci.low, ci.high, "Wilson, problem-clustered"


def _omnibus(counts: Counts) -> OmnibusResult:
    """Cochran's Q (one sample per problem) or Friedman's test; where no problem separates any two systems
    both statistics are 0/0 (statsmodels warns and returns NaN): that is no evidence of a difference, Q = 0,
    p = 1, never a NaN."""
    means = counts.means
    name = "Cochran's Q" if counts.one_sample else "Friedman (tie-corrected)"
    if np.ptp(means, axis=0).max() == 0:
        return OmnibusResult(name, 0.0, len(counts.systems) - 1, 1.0)
    if counts.one_sample:
        result = cochrans_q(counts.passes.T.astype(int))
        return OmnibusResult(name, float(result.statistic), int(result.df), float(result.pvalue))
    if len(means) == 2:  # scipy's friedmanchisquare needs three systems; with two its statistic (tie-corrected)
        # is (n+ − n−)² / (n+ + n−) over the problems that separate them, the sign test's χ² on 1 df
        diff = means[0] - means[1]
        ahead, behind = int((diff > 0).sum()), int((diff < 0).sum())
        statistic = (ahead - behind) ** 2 / (ahead + behind)
        return OmnibusResult(name, statistic, 1, float(stats.chi2.sf(statistic, 1)))
    result = stats.friedmanchisquare(*means)
    return OmnibusResult(name, float(result.statistic), len(counts.systems) - 1, float(result.pvalue))


def _family(order: Sequence[int], names: Sequence[str], against: str | None) -> tuple[list[tuple[int, int]], str]:
    """The pairs tested (indices into ``names``, the better-ranked first) and the family's description."""
    pairs = [(order[i], order[j]) for i in range(len(order)) for j in range(i + 1, len(order))]
    if against is None:
        return pairs, (f"Holm over all {len(pairs)} pairs" if len(pairs) != 1 else "one pair (no adjustment needed)")
    focus = order[0] if against == TOP else names.index(against)
    chosen = [pair for pair in pairs if focus in pair]
    label = (f"Holm over the {len(chosen)} pairs of the top system ({names[focus]}), chosen from these data"
             if against == TOP else f"Holm over the {len(chosen)} pairs of {names[focus]}")
    return chosen, label


PAIR_CHUNK = 2_048


@dataclass(frozen=True)
class PairStats:
    """Per tested pair (arrays in family order): the registered test's result, the problems where each
    side's mean is higher, and the mean squared per-problem difference (the discordance at one sample)."""

    result: PairwiseResult
    a_higher: np.ndarray
    b_higher: np.ndarray
    second_moment: np.ndarray


def _pair_stats(counts: Counts, pairs: Sequence[tuple[int, int]], test: PairwiseTest) -> PairStats:
    """Every pair's test (the registered ``test``) and the per-problem facts beside it."""
    first = np.array([p[0] for p in pairs], dtype=int)
    second = np.array([p[1] for p in pairs], dtype=int)
    higher, lower, moment = np.zeros(len(pairs), int), np.zeros(len(pairs), int), np.zeros(len(pairs))
    for start in range(0, len(pairs), PAIR_CHUNK):  # pairs × problems at once would not fit at 500 × 500
        part = slice(start, start + PAIR_CHUNK)
        diff = counts.means[first[part]] - counts.means[second[part]]
        higher[part], lower[part] = (diff > 0).sum(axis=1), (diff < 0).sum(axis=1)
        moment[part] = np.mean(diff**2, axis=1)
    return PairStats(test.run(counts.passes, counts.samples, first, second), higher, lower, moment)


def _best_set(counts: Counts, pairs: Sequence[tuple[int, int]], result: PairwiseResult, alpha: float
              ) -> tuple[bool, ...]:
    """Whether each system is in the 95 % (1 − alpha) confidence set for the best.

    System i is left out when some other system beats it in the one-sided paired test at alpha / (N − 1):
    the test of "i is the best" (i at least as good as each of the N − 1 others), Bonferroni over those
    N − 1 comparisons, so it rejects a true best with probability at most alpha whatever the dependence
    between the comparisons; the set of systems it does not reject covers each truly best system with
    probability ≥ 1 − alpha (test inversion, as in Mogstad, Romano, Shaikh & Wilhelm, with a Bonferroni
    critical value in place of their bootstrap one). ``pairs`` must hold every pair."""
    n = len(counts.systems)
    beaten = np.zeros(n, dtype=bool)
    level = alpha / max(n - 1, 1)
    for (i, j), greater, less in zip(pairs, result.greater.tolist(), result.less.tolist(), strict=True):
        beaten[j] |= greater <= level  # i better than j
        beaten[i] |= less <= level
    return tuple(bool(not b) for b in beaten)


def _resolution(counts: Counts, pair: tuple[int, int], alpha: float, family_size: int) -> PairResolution:
    i, j = pair
    diff = counts.means[i] - counts.means[j]
    second = float(np.mean(diff**2))
    n = diff.size
    names = counts.systems
    if n < 2 or second == 0:
        return PairResolution(names[i], names[j], float("inf"), float("inf"), "none: the two never differ")

    def mdd(level: float) -> float:
        if counts.one_sample:
            return mdd_paired_exact(n, second, level)
        lattice = signflip.on_lattice(diff, np.concatenate([counts.samples[i], counts.samples[j]]),
                                      signflip.LEADERBOARD_LATTICE)[1]
        limit = np.sqrt(second) * (1 - 1e-12)
        if sign_flip_power(n, second, limit, level, n_repeats=lattice) < 0.8:
            return float("inf")
        from scipy import optimize

        return float(optimize.brentq(lambda d: sign_flip_power(n, second, d, level, n_repeats=lattice) - 0.8,
                                     1e-9, limit))

    method = "exact McNemar" if counts.one_sample else "sign-flip (normal approximation)"
    return PairResolution(names[i], names[j], mdd(alpha), mdd(alpha / max(family_size, 1)), method)


def _suspects(counts: Counts, canonical: Mapping[str, bool] | None,
              weak_tests: Mapping[str, str] | None) -> tuple[SuspectProblem, ...]:
    solved = counts.passes > 0
    weak = weak_tests or {}
    out = []
    for column in range(len(counts.problems)):
        problem = counts.problems[column]
        who = tuple(counts.systems[i] for i in np.flatnonzero(solved[:, column]))
        if len(who) > 1 and problem not in weak:
            continue
        reason = ("solved by no system" if not who else "solved by one system only" if len(who) == 1
                  else "its tests accept a wrong program")
        out.append(SuspectProblem(problem, reason, who if len(who) <= 1 else (),
                                  None if canonical is None else canonical.get(problem), weak.get(problem)))
    return tuple(sorted(out, key=lambda s: (len(s.solved_by) if s.reason != "its tests accept a wrong program" else 2,
                                            s.problem)))


def select_dataset(table: pd.DataFrame, dataset: str | None) -> str:
    """The dataset of ``table`` a board is on: ``dataset``, or the only one (InputError naming them otherwise)."""
    datasets = sorted(table["dataset"].unique())
    if dataset is None:
        if len(datasets) > 1:
            raise InputError(f"the runs hold {len(datasets)} datasets ({', '.join(datasets)}); name one with {{dataset}}",
                             parameters=("dataset",))
        return str(datasets[0])
    if dataset not in datasets:
        raise InputError(f"no system has results on dataset {dataset!r}; the runs hold: {', '.join(datasets)}")
    return dataset


def leaderboard(runs: Sequence[Run] | CombinedRuns, dataset: str | None = None, *, alpha: float = 0.05,
                against: str | None = None, confidence_level: float = 0.95,
                canonical: Mapping[str, bool] | None = None, weak_tests: Mapping[str, str] | None = None,
                test: str | None = None) -> Leaderboard:
    """Audit a leaderboard: every arm of ``runs`` on ``dataset`` is a system.

    Parameters
    ----------
    runs : sequence of Run, or CombinedRuns
        Run directories as loaded (several runs are put on one board; an arm name used by two runs is
        prefixed with its run's name), or runs combined already (:func:`sotacheck.audit.combined.combine`).
    dataset : str, optional
        The benchmark; required when the runs hold several.
    alpha : float
        Family-wise error rate of the pairwise tests (Holm), and so the level of the rank intervals.
    against : str, optional
        Test only the pairs of this system (``"TOP"``: the system with the highest pass rate, chosen from
        these data) instead of all pairs: a smaller Holm family, named in the result.
    confidence_level : float
        Level of the pass-rate intervals.
    canonical : mapping of str to bool, optional
        Whether each problem's canonical solution passes, where it was judged (shown for suspect problems).
    weak_tests : mapping of str to str, optional
        Problems whose tests accept a cheap wrong program, with the program's kind (``sotacheck judge
        --suspect-tests``): listed among the suspect problems.
    test : str, optional
        The pairwise test, by its name in :data:`sotacheck.audit.paired.PAIRWISE_TESTS`; by default the first
        registered test that applies (exact McNemar with one sample per problem, else the sign-flip test).

    Returns
    -------
    Leaderboard

    Raises
    ------
    InputError
        Fewer than two systems, no problem shared by all, an unknown dataset.
    ArgumentError
        ``alpha``, ``confidence_level`` or ``against`` out of range or unknown.

    Examples
    --------
    >>> import sotacheck
    >>> board = sotacheck.leaderboard([sotacheck.load_run(p) for p in paths])  # doctest: +SKIP
    >>> board.top_group  # doctest: +SKIP
    """
    if not 0 < alpha < 1:
        raise ArgumentError(f"`alpha` must be in (0, 1), got {alpha}")
    if not 0 < confidence_level < 1:
        raise ArgumentError(f"`confidence_level` must be in (0, 1), got {confidence_level}")
    combined = runs if isinstance(runs, CombinedRuns) else combine(runs)
    table = combined.table
    chosen = select_dataset(table, dataset)
    counts = count_outcomes(table, chosen)
    names = list(counts.systems)
    if against is not None and against != TOP and against not in names:
        raise ArgumentError(f"`against`: no system {against!r}; systems: {', '.join(names)}")
    rates = [_pass_rate(counts.passes[i], counts.samples[i], confidence_level) for i in range(len(names))]
    order = sorted(range(len(names)), key=lambda i: (-rates[i][0], names[i]))
    pairs, family = _family(order, names, against)
    chosen_test = choose_pairwise_test(counts.samples, test)
    tested = _pair_stats(counts, pairs, chosen_test)
    result = tested.result
    every = pairs if against is None else _family(order, names, None)[0]
    best = _best_set(counts, every, result if against is None else _pair_stats(counts, every, chosen_test).result,
                     alpha)
    adjusted = holm(result.pvalue) if len(pairs) else np.array([])
    means = counts.means
    rate_of = np.array([rate[0] for rate in rates])
    differences = [float(rate_of[i] - rate_of[j]) for i, j in pairs]
    better = np.zeros((len(names), len(names)), dtype=bool)  # better[i, j]: i significantly beats j
    pair_rows = []
    a_only = result.a_only.tolist() if result.a_only is not None else [None] * len(pairs)
    b_only = result.b_only.tolist() if result.b_only is not None else [None] * len(pairs)
    columns = zip(pairs, result.pvalue.tolist(), adjusted.tolist(), result.rounding.tolist(), a_only, b_only,
                  tested.a_higher.tolist(), tested.b_higher.tolist(), differences, strict=True)
    for (i, j), p, q, rounding, a1, b1, ah, bh, diff in columns:
        significant = q < alpha and diff != 0
        if significant:
            better[(i, j) if diff > 0 else (j, i)] = True
        pair_rows.append(PairResult(names[i], names[j], a1, b1, int(ah), int(bh), diff, p, q, significant,
                                    result.test, rounding))
    n = len(names)
    facts = system_conditions(combined, chosen)
    systems = []
    for position, i in enumerate(order, start=1):
        above, below = int(better[:, i].sum()), int(better[i, :].sum())
        low, high = 1 + above, n - below
        per_problem = sorted({int(k) for k in np.unique(counts.samples[i])})
        shown = str(per_problem[0]) if len(per_problem) == 1 else f"{per_problem[0]}–{per_problem[-1]}"
        rate, lo, hi, method = rates[i]
        systems.append(SystemResult(names[i], position, rate, lo, hi, method, (low, high), low == 1, below, above,
                                    len(counts.problems), shown, best[i], counts.missing.get(names[i], 0),
                                    counts.left_out.get(names[i], ()), facts.meta.get(names[i], {}),
                                    facts.conditions.get(names[i], {})))
    top_group = tuple(s.system for s in systems if s.in_top_group)
    best_set = tuple(s.system for s in systems if s.in_best_set)
    median_pair = pairs[int(np.argsort(tested.second_moment, kind="stable")[len(pairs) // 2])] if pairs else None
    resolution = Resolution(
        _resolution(counts, median_pair, alpha, len(pairs)) if median_pair else None,
        _resolution(counts, (order[0], order[1]), alpha, len(pairs)))
    difficulty = np.argsort(-means.mean(axis=0), kind="stable")
    notes = [f"{len(v)} problem(s) of {k} not shared by every system are left out" for k, v in counts.left_out.items()]
    if against == TOP:
        notes.append("the family was chosen after seeing which system is on top; for a claim made in advance, "
                     "name the system (--against NAME)")
    missing = {k: v for k, v in counts.missing.items() if v}
    if missing:
        notes.append(f"{sum(missing.values())} missing cell(s) (errors or dropped samples) on the shared problems, "
                     f"in {len(missing)} system(s): samples per problem differ")
    if result.rounding.any():
        close = result.rounding[result.pvalue >= signflip.SURELY_SMALL]
        notes.append(f"{int((result.rounding > 0).sum())} pair(s) had their per-problem differences rounded to a "
                     f"lattice (unequal samples per problem make the natural one too fine) and the sign-flip null of "
                     f"the rounded sum computed exactly (no resampling); the rounding changes a mean difference by at "
                     f"most {100 * float(close.max() if close.size else 0):.2g} points on the pairs with "
                     f"p ≥ {signflip.SURELY_SMALL:g}")
    return Leaderboard(
        chosen, len(counts.problems), alpha, confidence_level, family, tuple(systems), tuple(pair_rows),
        _omnibus(counts), top_group, best_set, BEST_SET_METHOD, resolution, _suspects(counts, canonical, weak_tests),
        tuple(system_differences(facts)), tuple(notes),
        tuple(counts.problems[k] for k in difficulty),
        tuple(tuple(float(v) for v in means[i, difficulty]) for i in order))
