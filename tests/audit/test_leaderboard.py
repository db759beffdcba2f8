"""Leaderboards against independent computations: every pair's discordant counts and p vs
scipy.stats.binomtest, Holm vs statsmodels' multipletests(method="holm"), rank intervals and the top group
recomputed from those, the sign-flip p with repeats vs scipy.stats.permutation_test (every pattern), the
omnibus vs statsmodels' cochrans_q; and the reference example of ../shared/reference/statistics.md
("Leaderboards"), whose values were computed with scipy 1.17.1 / statsmodels 0.15.0."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import cochrans_q
from statsmodels.stats.multitest import multipletests

from sotacheck.audit.leaderboard import leaderboard
from sotacheck.core.errors import ArgumentError, InputError
from sotacheck.core.rundir import Run

REFERENCE = ["0111110111111111111111111101011011111110",
             "1110011011111111111101011111110111111010",
             "0010011110100111011001110111010011000110",
             "1010001110100101001001001011000001000100"]


def board_run(outcomes: np.ndarray, names: list[str] | None = None, dataset: str = "bench") -> Run:
    """A run whose arms are systems: ``outcomes`` is systems × problems (× samples) of 0/1."""
    x = outcomes if outcomes.ndim == 3 else outcomes[:, :, None]
    names = names or [f"s{i}" for i in range(x.shape[0])]
    s, p, k = np.meshgrid(np.arange(x.shape[0]), np.arange(x.shape[1]), np.arange(x.shape[2]), indexing="ij")
    table = pd.DataFrame({"arm": np.array(names)[s.ravel()], "dataset": dataset,
                          "problem": [f"P{j:03d}" for j in p.ravel()], "repeat": k.ravel(),
                          "passed": x.ravel().astype(bool)})
    return Run(None, table, {"name": "board", "source": "csv"})


def _reference() -> np.ndarray:
    return np.array([[int(ch) for ch in row] for row in REFERENCE])


def test_reference_example_of_statistics_md() -> None:
    board = leaderboard([board_run(_reference())])
    assert board.omnibus.test == "Cochran's Q"
    assert board.omnibus.statistic == pytest.approx(28.128713, rel=1e-6)
    assert board.omnibus.df == 3
    assert board.omnibus.pvalue == pytest.approx(3.41297e-06, rel=1e-5)
    expected = {("s0", "s1"): (7, 5, 0.774414, 0.774414), ("s0", "s2"): (14, 2, 0.00418091, 0.0167236),
                ("s0", "s3"): (22, 3, 0.000156522, 0.000939131), ("s1", "s2"): (13, 3, 0.0212708, 0.0638123),
                ("s1", "s3"): (19, 2, 0.000221252, 0.00110626), ("s2", "s3"): (9, 2, 0.0654297, 0.130859)}
    assert {(p.a, p.b) for p in board.pairs} == set(expected)
    for pair in board.pairs:
        a_only, b_only, p, holm = expected[(pair.a, pair.b)]
        assert (pair.a_only, pair.b_only) == (a_only, b_only)
        assert pair.pvalue == pytest.approx(p, rel=1e-5)
        assert pair.pvalue_adjusted == pytest.approx(holm, rel=1e-5)
    assert {s.system: s.rank_interval for s in board.systems} == {"s0": (1, 2), "s1": (1, 3), "s2": (2, 4),
                                                                  "s3": (3, 4)}
    assert board.top_group == ("s0", "s1")


def _recomputed(x: np.ndarray, alpha: float) -> tuple[dict[tuple[str, str], tuple[int, int, float, float]],
                                                     dict[str, tuple[int, int]]]:
    """Every pair by scipy's binomtest, Holm by statsmodels, rank intervals counted from those."""
    names = [f"s{i}" for i in range(x.shape[0])]
    pairs, pvalues = [], []
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            b, c = int(np.sum((x[i] == 1) & (x[j] == 0))), int(np.sum((x[i] == 0) & (x[j] == 1)))
            pairs.append((i, j, b, c))
            pvalues.append(stats.binomtest(b, b + c, 0.5).pvalue if b + c else 1.0)
    adjusted = multipletests(pvalues, method="holm")[1]
    better = np.zeros((len(names), len(names)), dtype=bool)
    out = {}
    for (i, j, b, c), p, q in zip(pairs, pvalues, adjusted, strict=True):
        if q < alpha and b != c:
            better[(i, j) if b > c else (j, i)] = True
        out[tuple(sorted((names[i], names[j])))] = (b, c, p, q)
    ranks = {names[i]: (1 + int(better[:, i].sum()), len(names) - int(better[i].sum())) for i in range(len(names))}
    return out, ranks


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_one_sample_pairs_holm_and_ranks_against_scipy_and_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(seed)
    rates = rng.uniform(0.3, 0.9, 9)
    difficulty = rng.normal(0, 1, 120)
    x = (rng.random((9, 120)) < 1 / (1 + np.exp(-(np.log(rates / (1 - rates))[:, None] - difficulty)))).astype(int)
    board = leaderboard([board_run(x)], alpha=0.05)
    expected, ranks = _recomputed(x, 0.05)
    assert len(board.pairs) == 36
    for pair in board.pairs:
        key = tuple(sorted((pair.a, pair.b)))
        b, c, p, q = expected[key]
        counts = (pair.a_only, pair.b_only) if key == (pair.a, pair.b) else (pair.b_only, pair.a_only)
        assert counts == (b, c)
        assert pair.pvalue == pytest.approx(p, rel=1e-9)
        assert pair.pvalue_adjusted == pytest.approx(q, rel=1e-9)
    assert {s.system: s.rank_interval for s in board.systems} == ranks
    assert board.top_group == tuple(s.system for s in board.systems if ranks[s.system][0] == 1)
    assert board.omnibus.statistic == pytest.approx(cochrans_q(x.T).statistic, rel=1e-12)


def test_repeats_use_the_exact_sign_flip_test() -> None:
    rng = np.random.default_rng(4)
    x = (rng.random((4, 12, 3)) < rng.uniform(0.3, 0.8, (4, 1, 1))).astype(int)
    board = leaderboard([board_run(x)])
    counts = x.sum(axis=2)  # equal repeats: the sum differences are the mean differences × 3, in integers
    for pair in board.pairs:
        i, j = int(pair.a[1:]), int(pair.b[1:])
        diff = counts[i] - counts[j]
        reference = stats.permutation_test((diff[diff != 0],), lambda d, axis: np.sum(d, axis=axis),
                                           permutation_type="samples", n_resamples=np.inf).pvalue \
            if np.any(diff) else 1.0
        assert pair.exact and pair.a_only is None
        assert pair.pvalue == pytest.approx(reference, rel=1e-9)
    assert board.omnibus.test.startswith("Friedman")


def test_friedman_with_ties_equals_cochrans_q_on_binary_data() -> None:
    """The omnibus with repeats reduces to Cochran's Q at one sample (why it is 'its analogue')."""
    x = _reference()
    assert stats.friedmanchisquare(*x).statistic == pytest.approx(cochrans_q(x.T).statistic, rel=1e-12)


def test_two_systems_with_repeats_get_friedmans_statistic_as_the_sign_tests_chi_square() -> None:
    """scipy's friedmanchisquare needs three systems (a board of two with repeats once raised); with two, the
    tie-corrected Friedman statistic is (n+ − n−)² / (n+ + n−): checked against Friedman's formula computed from
    the within-problem ranks (1 and 2, or 1.5 and 1.5 for a tie), on a board with one errored cell."""
    rng = np.random.default_rng(11)
    x = (rng.random((2, 30, 4)) < np.array([[[0.7]], [[0.4]]])).astype(float)
    run = board_run(x.astype(int))
    table = run.outcomes[~((run.outcomes["arm"] == "s1") & (run.outcomes["problem"] == "P003")
                           & (run.outcomes["repeat"] == 3))]
    board = leaderboard([Run(None, table, {"name": "board", "source": "csv"})])
    means = np.array([x[0].mean(axis=1), np.append(x[1, :3].mean(axis=1), [x[1, 3, :3].mean(),
                                                                           *x[1, 4:].mean(axis=1)])])
    ranks = stats.rankdata(means, axis=0)  # per problem: 1 and 2, or 1.5 and 1.5 for a tie
    n, k = means.shape[1], 2
    numerator = (k - 1) * ((ranks.sum(axis=1) - n * (k + 1) / 2) ** 2).sum()
    statistic = numerator / ((ranks ** 2).sum() - n * k * (k + 1) ** 2 / 4)
    assert board.omnibus.test.startswith("Friedman") and board.omnibus.df == 1
    assert board.omnibus.statistic == pytest.approx(statistic, rel=1e-12)
    assert board.omnibus.pvalue == pytest.approx(stats.chi2.sf(statistic, 1), rel=1e-12)


def test_shared_problems_and_left_out_ones() -> None:
    x = _reference()
    table = board_run(x).outcomes
    table = table[~((table["arm"] == "s2") & table["problem"].isin(["P000", "P001"]))]
    board = leaderboard([Run(None, table, {"name": "b", "source": "csv"})])
    assert board.n_problems == 38
    assert {s.system: s.left_out for s in board.systems if s.left_out} == {
        "s0": ("P000", "P001"), "s1": ("P000", "P001"), "s3": ("P000", "P001")}
    assert any("left out" in note for note in board.notes)


def test_against_a_system_is_a_smaller_named_family() -> None:
    board = leaderboard([board_run(_reference())], against="s1")
    assert len(board.pairs) == 3 and all("s1" in (p.a, p.b) for p in board.pairs)
    assert board.family == "Holm over the 3 pairs of s1"
    top = leaderboard([board_run(_reference())], against="TOP")
    assert "chosen from these data" in top.family and any("name the system" in n for n in top.notes)
    with pytest.raises(ArgumentError, match="no system 'nope'"):
        leaderboard([board_run(_reference())], against="nope")


def test_several_runs_go_on_one_board() -> None:
    x = _reference()
    runs = [board_run(x[i:i + 1], [f"model{i}"]) for i in range(4)]
    board = leaderboard(runs)
    assert board.top_group == ("model0", "model1")


def test_bad_boards_are_one_line_errors() -> None:
    x = _reference()
    with pytest.raises(InputError, match="at least two systems"):
        leaderboard([board_run(x[:1])])
    a = board_run(x[:1], ["a"]).outcomes
    b = board_run(x[1:2], ["b"]).outcomes.assign(problem=lambda t: "Q" + t["problem"])
    with pytest.raises(InputError, match=r"no problem .* has a result from every one"):
        leaderboard([Run(None, pd.concat([a, b]), {"name": "x", "source": "csv"})])
    with pytest.raises(InputError, match="name one with `dataset`"):
        leaderboard([board_run(x, dataset="d1"), board_run(x, [f"t{i}" for i in range(4)], dataset="d2")])


def test_json_contract_has_no_nan_and_the_documented_keys() -> None:
    board = leaderboard([board_run(_reference())])
    body = json.loads(json.dumps(board.to_json(), allow_nan=False))
    assert {"dataset", "n_problems", "family", "systems", "pairs", "top_group"} <= set(body)
    assert {"system", "pass_rate", "ci", "rank_interval"} <= set(body["systems"][0])
    assert {"a", "b", "a_only", "b_only", "pvalue", "pvalue_adjusted"} <= set(body["pairs"][0])
    assert body["top_group"] == ["s0", "s1"]
    # the old keys (#47) for one release, after the new ones, with the same values (docs/leaderboards.md)
    assert body["omnibus"]["p"] == body["omnibus"]["pvalue"] and list(body["omnibus"])[-1] == "p"
    assert all((p["p"], p["p_adjusted"]) == (p["pvalue"], p["pvalue_adjusted"]) for p in body["pairs"])


def test_the_old_names_of_the_p_values_still_read_for_a_release() -> None:
    board = leaderboard([board_run(_reference())])
    pair = board.pairs[0]
    with pytest.warns(DeprecationWarning, match=r"PairResult\.p_adjusted is deprecated: it was renamed "
                                                r"PairResult\.pvalue_adjusted"):
        assert pair.p_adjusted == pair.pvalue_adjusted
    with pytest.warns(DeprecationWarning, match=r"PairResult\.p is deprecated"):
        assert pair.p == pair.pvalue
    with pytest.warns(DeprecationWarning, match=r"OmnibusResult\.p is deprecated"):
        assert board.omnibus.p == board.omnibus.pvalue
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new names do not warn
        assert (pair.pvalue, pair.pvalue_adjusted, board.omnibus.pvalue) is not None


def test_suspect_problems() -> None:
    board = leaderboard([board_run(_reference())], canonical={"P039": False})
    none = [s for s in board.suspect_problems if not s.solved_by]
    assert [s.problem for s in none] == ["P039"] and none[0].canonical_passed is False
    one = {s.problem: s.solved_by for s in board.suspect_problems if s.solved_by}
    x = _reference()
    assert set(one) == {f"P{j:03d}" for j in np.flatnonzero(x.sum(axis=0) == 1)}


def with_holes(run: Run, fraction: float, seed: int) -> Run:
    """``run`` with a ``fraction`` of its cells turned into errors (``passed`` missing), at random."""
    table = run.outcomes.copy()
    table["passed"] = table["passed"].astype(object)
    table.loc[np.random.default_rng(seed).random(len(table)) < fraction, "passed"] = None
    return Run(None, table, {"name": "board", "source": "csv"})


def simulated_board(seed: int, systems: int, problems: int, samples: int) -> np.ndarray:
    """Systems of evenly spread ability on problems of N(0, 1.5²) difficulty (bench/bench_leaderboard.py)."""
    rng = np.random.default_rng(seed)
    ability = np.linspace(2.0, -2.0, systems)
    p = 1 / (1 + np.exp(-(ability[:, None] - rng.normal(0, 1.5, problems)[None, :])))
    return (rng.random((systems, problems, samples)) < p[:, :, None]).astype(int)


def test_errored_cells_keep_the_leaderboards_power() -> None:
    """25 systems × 200 problems × 20 samples, 5 % of cells errored: the pairs significant with every cell
    stay significant (≥ 90 %; measured 2026-12-04: 285 of 286 kept, 287 in all), no p at a resampling floor."""
    complete_run = board_run(simulated_board(44, 25, 200, 20))
    complete = leaderboard([complete_run])
    holes = leaderboard([with_holes(complete_run, 0.05, 1)])
    significant = {(p.a, p.b) for p in complete.pairs if p.significant}
    assert all(p.exact and p.rounding == 0 for p in complete.pairs)  # equal samples: nothing rounded
    assert not any("rounded" in note for note in complete.notes)
    kept = {(p.a, p.b) for p in holes.pairs if p.significant} & significant
    assert len(significant) > 250
    assert len(kept) >= 0.9 * len(significant)
    assert min(p.pvalue for p in holes.pairs) < 0.05 / len(holes.pairs) / 1e6  # far below Holm's smallest threshold
    assert sum(s.missing_cells for s in holes.systems) == int(holes_count(with_holes(complete_run, 0.05, 1)))
    assert any("rounded to a lattice" in note for note in holes.notes)


def holes_count(run: Run) -> int:
    return int(run.outcomes["passed"].isna().sum())


def test_unequal_samples_p_is_the_exact_sign_flip_p_of_the_rounded_differences() -> None:
    """With unequal samples the p is the sign-flip p of the per-problem differences rounded to 1/L, every one of
    the 2^m sign patterns counted by scipy.stats.permutation_test, and the rounding is what the pair reports."""
    from sotacheck.audit import signflip
    from sotacheck.audit.paired import signflip_pairs

    rng = np.random.default_rng(3)
    problems = 14
    samples = rng.integers(5, 12, size=(2, problems)).astype(float)
    passes = np.floor(rng.random((2, problems)) * (samples + 1)) * np.array([[1.0], [0.6]])
    passes = np.minimum(np.rint(passes), samples)
    result = signflip_pairs(passes, samples, np.array([0]), np.array([1]), limit=200)
    diff = passes[0] / samples[0] - passes[1] / samples[1]
    unit = max(1, int(200 // np.abs(diff).sum()))
    rounded = np.rint(diff * unit)
    assert unit < signflip.lattice_unit(samples.ravel())  # the lcm does not fit: rounded
    reference = stats.permutation_test((rounded,), np.sum, permutation_type="samples", n_resamples=np.inf,
                                       alternative="two-sided").pvalue
    assert result.pvalue[0] == pytest.approx(reference, rel=1e-9)
    greater = stats.permutation_test((rounded,), np.sum, permutation_type="samples", n_resamples=np.inf,
                                     alternative="greater").pvalue
    assert result.greater[0] == pytest.approx(greater, rel=1e-9)
    less = stats.permutation_test((rounded,), np.sum, permutation_type="samples", n_resamples=np.inf,
                                  alternative="less").pvalue
    assert result.less[0] == pytest.approx(less, rel=1e-9)
    assert result.rounding[0] == pytest.approx(np.abs(diff - rounded / unit).mean(), rel=1e-9)
    assert 0 < result.rounding[0] <= 0.5 / unit


def test_missing_cells_are_reported_per_system() -> None:
    x = np.ones((3, 10, 4), dtype=int)
    x[1, :, :] = 0
    run = board_run(x)
    table = run.outcomes.copy()
    table["passed"] = table["passed"].astype(object)
    errored = (table["arm"] == "s1") & table["problem"].isin(["P000", "P001"]) & (table["repeat"] == 0)
    table.loc[errored, "passed"] = None
    dropped = (table["arm"] == "s2") & (table["problem"] == "P005") & (table["repeat"] >= 2)
    board = leaderboard([Run(None, table[~dropped], {"name": "board", "source": "csv"})])
    assert {s.system: s.missing_cells for s in board.systems} == {"s0": 0, "s1": 2, "s2": 2}
    assert {s["system"]: s["missing_cells"] for s in board.to_json()["systems"]} == {"s0": 0, "s1": 2, "s2": 2}
    assert any("4 missing cell(s)" in note for note in board.notes)


def test_adding_a_leaderboard_test_is_one_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new pairwise test joins the registry as one entry and is then chosen by name: here McNemar's mid-p,
    checked against its definition computed with scipy.stats.binom."""
    from sotacheck.audit import paired

    def midp_pairs(passes: np.ndarray, samples: np.ndarray, first: np.ndarray, second: np.ndarray
                   ) -> paired.PairwiseResult:
        exact = paired.mcnemar_pairs(passes, samples, first, second)
        b, c = exact.a_only, exact.b_only
        assert b is not None and c is not None
        n = b + c
        mid = np.minimum(1.0, 2 * (stats.binom.cdf(np.minimum(b, c), n, .5) - .5 * stats.binom.pmf(np.minimum(b, c), n, .5)))
        return paired.PairwiseResult("mid-p McNemar", mid, exact.greater, exact.less, exact.rounding, b, c)

    monkeypatch.setattr(paired, "PAIRWISE_TESTS", [*paired.PAIRWISE_TESTS, paired.PairwiseTest(
        "mid-p McNemar", "one sample per problem", lambda s: bool((s == 1).all()), midp_pairs)])
    board = leaderboard([board_run(_reference())], test="mid-p McNemar")
    pair = next(p for p in board.pairs if (p.a, p.b) == ("s0", "s1"))  # b = 7, c = 5
    assert pair.test == "mid-p McNemar"
    assert pair.pvalue == pytest.approx(2 * (stats.binom.cdf(5, 12, .5) - .5 * stats.binom.pmf(5, 12, .5)), rel=1e-12)
    assert leaderboard([board_run(_reference())]).pairs[0].test == "exact McNemar"  # the default is unchanged
    with pytest.raises(ArgumentError, match="`test`"):
        leaderboard([board_run(_reference())], test="no such test")


def test_best_set_by_one_sided_tests_at_alpha_over_n_minus_1() -> None:
    """The confidence set for the best on the reference example: a system is out when some other beats it in
    the one-sided exact McNemar test (scipy.stats.binomtest, alternative='greater') at 0.05 / 3."""
    x = _reference()
    board = leaderboard([board_run(x)])
    expected = []
    for i in range(4):
        beaten = False
        for j in range(4):
            if i != j:
                b = int(np.sum((x[j] == 1) & (x[i] == 0)))
                c = int(np.sum((x[j] == 0) & (x[i] == 1)))
                beaten |= b + c > 0 and stats.binomtest(b, b + c, 0.5, alternative="greater").pvalue <= 0.05 / 3
        if not beaten:
            expected.append(f"s{i}")
    assert set(board.best_set) == set(expected) == {"s0", "s1"}
    assert board.to_json()["best_set"] == list(board.best_set)
    assert "Bonferroni" in board.best_set_method


def test_no_binomial_arithmetic_in_the_leaderboard_modules() -> None:
    """The paired tests live in audit/paired.py (issue 47): no `binom` in audit/leaderboard*.py."""
    from pathlib import Path

    import sotacheck.audit.leaderboard as module

    folder = Path(module.__file__).parent
    for path in folder.glob("leaderboard*.py"):
        assert "binom" not in path.read_text(encoding="utf-8"), path.name


def test_weak_tests_join_the_suspect_problems() -> None:
    """A problem whose tests accept a wrong program is suspect however many systems solve it."""
    x = _reference()
    solved_by_all = f"P{int(np.flatnonzero(x.sum(axis=0) == 4)[0]):03d}"
    board = leaderboard([board_run(x)], weak_tests={solved_by_all: "constant", "P039": "identity"})
    rows = {s.problem: s for s in board.suspect_problems}
    assert rows[solved_by_all].reason == "its tests accept a wrong program" and rows[solved_by_all].weak_test == "constant"
    assert rows["P039"].reason == "solved by no system" and rows["P039"].weak_test == "identity"


def test_counts_are_integers_in_the_result_and_the_json() -> None:
    board = leaderboard([board_run(_reference())])
    assert all(type(p.a_only) is int and type(p.b_only) is int and type(p.a_higher) is int for p in board.pairs)
    assert '"a_only": 7,' in json.dumps(board.to_json())
