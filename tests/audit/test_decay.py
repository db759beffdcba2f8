"""The human-eval/EvalPlus and CSV importers, and the decay analysis on constructed attempt data."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sotacheck.audit.decay import decay_curve, fit_decay
from sotacheck.audit.importers.humaneval_results import import_humaneval_results
from sotacheck.audit.importers.table import import_table
from sotacheck.core.rundir import OutcomeError, normalise


def test_humaneval_results_repeats_follow_the_order_of_samples(tmp_path) -> None:
    path = tmp_path / "samples.jsonl_results.jsonl"
    rows = [("HumanEval/0", True), ("HumanEval/1", False), ("HumanEval/0", False), ("HumanEval/1", True)]
    path.write_text("".join(json.dumps({"task_id": t, "completion": "", "result": "x", "passed": p}) + "\n"
                            for t, p in rows))
    frame, meta = import_humaneval_results(path, arm="direct")
    table = normalise(frame, str(path))
    assert table[["problem", "repeat", "passed"]].values.tolist() == [
        ["HumanEval/0", 0, True], ["HumanEval/0", 1, False], ["HumanEval/1", 0, False], ["HumanEval/1", 1, True]]
    assert set(table["arm"]) == {"direct"} and len(meta["files"][0]["sha256"]) == 64


def test_an_evalplus_file_given_as_humaneval_results_points_to_the_evalplus_importer(tmp_path) -> None:
    """human-eval's importer once read EvalPlus files and counted a pass on plus_status alone; EvalPlus's
    HumanEval+ pass needs base and plus (tests/audit/test_importers_evalplus.py checks that importer)."""
    path = tmp_path / "eval_results.json"
    path.write_text(json.dumps({"eval": {"HumanEval/0": [{"base_status": "pass", "plus_status": "fail"}],
                                         "HumanEval/1": [{"base_status": "pass", "plus_status": "pass"}]}}))
    with pytest.raises(OutcomeError, match="sotacheck import evalplus"):
        import_humaneval_results(path, dataset="humaneval-plus")


def test_csv_import_and_its_errors(tmp_path) -> None:
    good = tmp_path / "runs.csv"
    pd.DataFrame({"arm": ["A", "A"], "dataset": ["he", "he"], "problem": ["1", "2"], "repeat": [0, 0],
                  "passed": ["true", "false"]}).to_csv(good, index=False)
    table = normalise(import_table(good, "csv")[0], str(good))
    assert table["passed"].tolist() == [True, False] and table["status"].tolist() == ["passed", "failed"]
    missing = tmp_path / "missing.csv"
    with pytest.raises(OutcomeError, match="does not exist"):
        import_table(missing, "csv")


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
    table = pd.read_csv(Path(__file__).resolve().parents[2] / "data" / "runs"
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


def test_arm_family_keeps_a_sweeps_settings_together() -> None:
    """Families and settings come from the pipeline and param.* columns, never from the label; a run
    prefixed by combine_runs is its own family."""
    from sotacheck.audit.analysis import combine_runs
    from sotacheck.audit.importers.mapcoder import mapcoder_arm_columns
    from sotacheck.audit.sweeps import arm_family, arm_setting
    from sotacheck.core.arms import arm_columns
    from sotacheck.core.rundir import Run, manifest_of

    def run(name: str, identities: list[dict[str, object]]) -> Run:
        rows = [{**identity, "dataset": "humaneval", "problem": "p1", "repeat": 0, "passed": True}
                for identity in identities]
        return Run(Path(name), normalise(pd.DataFrame(rows), name), manifest_of({}, name=name))

    first = run("sweep-a", [arm_columns("codesim", {"d": 2, "p": 3}), mapcoder_arm_columns("MapCoder-5-3"),
                            arm_columns("pycapsule", {"max_attempts": 8}), arm_columns("direct", {})])
    second = run("sweep-b", [arm_columns("pycapsule", {"max_attempts": 8}), mapcoder_arm_columns("MapCoder-5-3")])
    table = combine_runs([first, second])
    assert arm_family(table, "codesim[d=2,p=3]") == "codesim"
    assert arm_setting(table, "codesim[d=2,p=3]") == {"d": 2, "p": 3}
    assert arm_family(table, "MapCoder-5-3") == "MapCoder"
    assert arm_setting(table, "MapCoder-5-3") == {"k": 5, "t": 3}
    assert arm_family(table, "sweep-b:pycapsule[max_attempts=8]") == "sweep-b:pycapsule"
    assert arm_family(table, "sweep-b:MapCoder-5-3") == "sweep-b:MapCoder"
    assert arm_family(table, "direct") == "direct" and arm_setting(table, "direct") == {}


def test_labels_of_old_run_directories_are_structured_on_load() -> None:
    """A format-1 table (labels only) gets pipeline and typed param.* columns when read."""
    frame = pd.DataFrame({"arm": ["codesim[d=2,p=3]", "gate[base=direct,hold_budget=3]", "MapCoder-5-3"],
                          "dataset": "humaneval", "problem": "p1", "repeat": 0, "passed": [True, False, True]})
    table = normalise(frame, "old").set_index("arm")
    assert table.loc["codesim[d=2,p=3]", "pipeline"] == "codesim"
    assert table.loc["codesim[d=2,p=3]", "param.p"] == 3 and str(table["param.p"].dtype) == "Int64"
    assert table.loc["gate[base=direct,hold_budget=3]", "param.base"] == "direct"
    assert table.loc["MapCoder-5-3", "pipeline"] == "MapCoder-5-3"  # not a bracketed label: its own pipeline


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


def test_mapcoder_rows_named_by_name_only(tmp_path: Path) -> None:
    """MapCoder's released Reflexion MBPP file has `name` and no `task_id` (its other files set task_id = name)."""
    from sotacheck.audit.importers.mapcoder import import_mapcoder

    folder = tmp_path / "MBPP"
    folder.mkdir()
    (folder / "ChatGPT-Reflexion-10-MBPP-Python3-0-1.jsonl").write_text(
        json.dumps({"name": "mbpp_3_is_not_prime", "is_solved": "True"}) + "\n"
        + json.dumps({"name": "mbpp_4_heap", "is_solved": "False"}) + "\n")
    (folder / "ChatGPT-CoT-MBPP-Python3-0-1.jsonl").write_text(
        json.dumps({"task_id": "mbpp_3_is_not_prime", "name": "mbpp_3_is_not_prime", "is_solved": False}) + "\n")
    table, _ = import_mapcoder(folder)
    assert sorted(zip(table["arm"], table["problem"], table["passed"], strict=True)) == [
        ("CoT", "mbpp_3_is_not_prime", False), ("Reflexion-10", "mbpp_3_is_not_prime", True),
        ("Reflexion-10", "mbpp_4_heap", False)]
    (folder / "ChatGPT-CoT-MBPP-Python3-0-1.jsonl").write_text(json.dumps({"is_solved": True}) + "\n")
    with pytest.raises(OutcomeError, match=r"needs fields `task_id` \(or `name`\)"):
        import_mapcoder(folder)
