"""The decay analysis (``sotacheck.audit.decay``) on constructed attempt data and a recorded sweep."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sotacheck.audit.decay import decay_curve, fit_decay


def test_decay_curve_counts_and_definitions() -> None:
    # 10 problems: 4 solved at attempt 0, 3 at 1, 1 at 2, 1 at 3, 1 never (max 3 attempts)
    curve = decay_curve(np.array([0, 0, 0, 0, 1, 1, 1, 2, 3, -1]), 3)
    assert curve.solved_at.tolist() == [3, 1, 1]
    assert curve.unsolved_before.tolist() == [6, 3, 2]
    assert curve.effectiveness == pytest.approx([3 / 6, 1 / 3, 1 / 2])
    assert curve.share == pytest.approx([0.3, 0.1, 0.1])
    with pytest.raises(ValueError, match=r"`first_solved` values must be in -1\.\.3"):
        decay_curve(np.array([4]), 3)


def test_decay_fit_recovers_a_known_decay_and_warns() -> None:
    rng = np.random.default_rng(5)
    n, max_attempts = 4000, 8
    rates = 0.6 * np.exp(-0.5 * np.arange(1, max_attempts + 1))
    first = np.full(n, -1)
    first[rng.random(n) < 0.3] = 0
    for x, rate in enumerate(rates, start=1):
        open_ = first == -1
        first[open_ & (rng.random(n) < rate)] = x
    result = fit_decay(first, max_attempts, n_resamples=300, rng=1)
    assert result.fit.b == pytest.approx(0.5, abs=0.1)
    assert result.fit.a == pytest.approx(0.6, abs=0.1)
    ci = result.confidence_interval("b")
    assert ci.low <= result.fit.b <= ci.high and ci.high - ci.low < 0.3
    assert result.aic_exponential < result.aic_constant  # a real decay beats a constant rate
    assert "says nothing about attempts past 8" in result.warning
    with pytest.raises(ValueError, match="fewer than 3 attempts"):
        fit_decay(np.array([1, 2]), 5)  # nothing left unsolved after attempt 2


def test_no_repair_ever_succeeding_is_explained_not_fitted() -> None:
    # what the recorded 0.5B PyCapsule run shows: 6 problems fail after the first generation, no repair helps
    first = np.array([0] * 14 + [-1] * 6)
    with pytest.raises(ValueError, match=r"no problem was first solved by a repair attempt .* 6 unsolved"):
        fit_decay(first, 5)


def test_solved_beyond_the_papers_cap_counts_late_first_solves() -> None:
    # first solved at 0, 0, 2, 6, 8, never, never: attempts 6..8 add two problems, 4..8 add two, 1..8 three
    curve = decay_curve(np.array([0, 0, 2, 6, 8, -1, -1]), 8)
    assert curve.solved_beyond(5) == 2 and curve.solved_beyond(3) == 2 and curve.solved_beyond(0) == 3
    assert curve.solved_beyond(8) == 0


@pytest.mark.slow
def test_recorded_max_attempts_sweep_decay_figures() -> None:
    """The recorded PyCapsule sweep (max_attempts 0..8, temperature 0.8, first 68 HumanEval problems, embedded
    model): the per-attempt counts equal an independent count of the outcome table, and the fit gives the
    figures quoted in the README (R² to 0.001)."""
    table = pd.read_csv(Path(__file__).resolve().parents[2] / "recordings"
                        / "sweep-pycapsule-attempts-t08-qwen05b" / "outcomes.csv")
    largest = table[table["arm"] == "pycapsule[max_attempts=8]"]
    first = largest["first_pass_attempt"].astype(float).fillna(-1).to_numpy()
    counted = largest["first_pass_attempt"].dropna().astype(int).value_counts()
    curve = decay_curve(first, 8)
    assert curve.solved_at.tolist() == [int(counted.get(x, 0)) for x in range(1, 9)]
    assert curve.solved_initially == int(counted.get(0, 0)) == 34 and curve.n_problems == 68
    assert curve.solved_at.tolist() == [3, 0, 1, 0, 0, 0, 1, 0]
    assert curve.solved_beyond(5) == 1  # attempt 7 still solved one problem past the paper's cap
    result = fit_decay(first, 8, n_resamples=2000, rng=0)
    assert result.fit.r_squared == pytest.approx(0.692, abs=1e-3)
    ci = result.confidence_interval("r_squared")
    assert ci.low == pytest.approx(0.0, abs=1e-3) and ci.high == pytest.approx(0.939, abs=1e-3)


def test_a_constant_curve_is_reported_as_such_not_as_a_huge_negative_r2() -> None:
    """#20 item 4: effectiveness 100/1000, 90/900, 81/810 is 0.1 at every attempt (not bit for bit): the
    total sum of squares is ~1e-34, and 1 − SSE/SST gave R² = −7.1e13. Now: no fit, said in words."""
    from sotacheck.audit.decay import ConstantCurve

    first = np.r_[np.full(100, 1), np.full(90, 2), np.full(81, 3), np.full(729, -1)]
    with pytest.raises(ConstantCurve, match=r"constant \(0.1 at every point\): there is no decay"):
        fit_decay(first, 3)
    with pytest.raises(ValueError):  # callers that catch ValueError (the report) still do
        fit_decay(first, 3)


def test_an_r2_interval_that_excludes_its_estimate_says_why() -> None:
    """Geometric effectiveness 0.5, 0.3, 0.18, 0.108 on 200 problems: R² ≈ 0.9996 on the observed problems,
    above every but 0.3 % of 1,000 problem resamples (seed 0): the percentile interval excludes the estimate,
    and the result says so (the report prints it)."""
    counts = [100, 30, 13, 6]
    first = np.concatenate([np.full(c, i + 1) for i, c in enumerate(counts)] + [np.full(51, -1)])
    result = fit_decay(first, 4, n_resamples=1000, rng=0)
    ci = result.confidence_interval("r_squared")
    assert result.fit.r_squared > ci.high
    note = result.interval_note("r_squared")
    assert note is not None and "lies above its 95 % bootstrap interval" in note
    recorded = fit_decay(np.r_[np.zeros(34), np.full(3, 1), [3, 7], np.full(29, -1)], 8, n_resamples=200, rng=0)
    interval = recorded.confidence_interval("r_squared")
    inside = interval.low <= recorded.fit.r_squared <= interval.high
    assert (recorded.interval_note("r_squared") is None) == inside
