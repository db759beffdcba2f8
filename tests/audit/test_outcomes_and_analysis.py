"""Importing real published logs, the analysis on them, and bad input."""

from __future__ import annotations

import json
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sotacheck.audit.analysis import analyze
from sotacheck.audit.importers.mapcoder import import_mapcoder
from sotacheck.audit.intervals import clustered_pass_rate, pass_rate
from sotacheck.audit.paired import mcnemar_exact
from sotacheck.audit.sweeps import SweepRow, sweep_table
from sotacheck.core.rundir import Run, load_run, normalise
from tests.sotacheck_command import SOTACHECK


@pytest.fixture(scope="module")
def mapcoder_run(tmp_path_factory, data_dir) -> Run:
    out = tmp_path_factory.mktemp("runs") / "mapcoder-he"
    done = subprocess.run([*SOTACHECK, "import", "mapcoder",
                           str(data_dir / "published-runs/mapcoder/ChatGPT/HumanEval"), "--out", str(out)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return load_run(out)


def test_import_names_arms_from_files_and_keeps_provenance(mapcoder_run) -> None:
    table = mapcoder_run.outcomes
    assert sorted(table["arm"].unique()) == ["Analogical", "CoT", "MapCoder-5-5", "Reflexion-10"]
    assert set(table["dataset"]) == {"humaneval"}
    assert len(table) == 4 * 164
    assert len(mapcoder_run.manifest.files) == 4 and all(len(f["sha256"]) == 64 for f in mapcoder_run.manifest.files)
    # published solved counts, read independently from the raw files
    assert table.groupby("arm")["passed"].sum().to_dict() == {
        "Analogical": 104, "CoT": 113, "MapCoder-5-5": 132, "Reflexion-10": 110}


def test_paired_table_mapcoder_vs_baselines(mapcoder_run) -> None:
    result = analyze([mapcoder_run], baseline="MapCoder-5-5")
    table = {c.a: c for c in result.comparisons}
    raw = mapcoder_run.outcomes.pivot(index="problem", columns="arm", values="passed").astype(bool)
    for arm, comparison in table.items():
        # discordant counts recomputed independently from the pivoted published verdicts
        only_arm = int((raw[arm] & ~raw["MapCoder-5-5"]).sum())
        only_mapcoder = int((~raw[arm] & raw["MapCoder-5-5"]).sum())
        assert (comparison.b_count, comparison.c_count) == (only_arm, only_mapcoder)
        assert comparison.pvalue == pytest.approx(mcnemar_exact(only_arm, only_mapcoder).pvalue, rel=1e-12)
        assert comparison.test == "exact McNemar"
    assert (table["Analogical"].b_count, table["Analogical"].c_count) == (9, 37)
    # Holm, explicitly: smallest p times 3, then max(prev, p * 2), ...
    ps = sorted(c.pvalue for c in table.values())
    assert min(c.pvalue_adjusted for c in table.values()) == pytest.approx(3 * ps[0], rel=1e-12)
    mapcoder = next(a for a in result.arms if a.arm == "MapCoder-5-5")
    ci = pass_rate(132, 164).confidence_interval()
    assert (mapcoder.ci_low, mapcoder.ci_high) == (pytest.approx(ci.low), pytest.approx(ci.high))
    assert mapcoder.calls_per_problem == pytest.approx(16.835, abs=1e-3)  # published average: 16.8


def test_ablation_sweep_against_k5_t5(data_dir) -> None:
    frame, meta = import_mapcoder(data_dir / "published-runs/mapcoder/Ablation/HumanEval")
    assert meta["repairs"] == [
        "ChatGPT-MapCoder-3-3-Human-Python3-0-1.jsonl:1: ignored 93 stray characters before the JSON object"]
    sweep = sweep_table(normalise(frame, "ablation"), "humaneval", "MapCoder-5-5")
    rows = {(r.setting["k"], r.setting["t"]): r for r in sweep.rows}
    assert set(rows) == {(3, 0), (3, 3), (3, 5), (5, 0), (5, 3), (5, 5)}  # typed, from the param.* columns
    assert rows[(5, 5)].is_default and rows[(5, 5)].pvalue is None
    assert rows[(3, 0)].pass_rate == pytest.approx(103 / 164)
    holm_ps = [r.pvalue_adjusted for r in sweep.rows if r.pvalue_adjusted is not None]
    raw_ps = [r.pvalue for r in sweep.rows if r.pvalue is not None]
    assert all(h >= p for h, p in zip(holm_ps, raw_ps, strict=True)) and len(holm_ps) == 5


def test_the_old_name_of_the_adjusted_p_still_reads_for_a_release(mapcoder_run) -> None:
    comparison = analyze([mapcoder_run], baseline="MapCoder-5-5").comparisons[0]
    with pytest.warns(DeprecationWarning, match=r"^Comparison\.pvalue_holm is deprecated: it was renamed "
                                                r"Comparison\.pvalue_adjusted"):
        assert comparison.pvalue_holm == comparison.pvalue_adjusted
    row = SweepRow("a", {}, False, 1, 1.0, 0.0, 1.0, None, None, 0.5, 1, 0, 0.25, 0.5)
    with pytest.warns(DeprecationWarning, match=r"^SweepRow\.pvalue_holm is deprecated"):
        assert row.pvalue_holm == row.pvalue_adjusted == 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new name does not warn
        assert comparison.pvalue_adjusted >= comparison.pvalue


def _cells(arm: str, problems: list[str], passed: list[object], repeat: int = 0) -> list[dict[str, object]]:
    return [{"arm": arm, "dataset": "d", "problem": p, "repeat": repeat, "passed": v}
            for p, v in zip(problems, passed, strict=True)]


def test_errored_cells_are_kept_and_not_counted_as_failures() -> None:
    frame = pd.DataFrame([*_cells("A", ["p1", "p2", "p3"], [True, True, None]),
                          *_cells("B", ["p1", "p2", "p3"], [True, False, True])])
    table = normalise(frame, "x")
    assert table.loc[(table.arm == "A") & (table.problem == "p3"), "status"].item() == "error"
    result = analyze([Run(None, table, {})], baseline="B")
    arm_a = next(a for a in result.arms if a.arm == "A")
    assert arm_a.n == 2 and arm_a.pass_rate == 1.0 and arm_a.n_errors == 1
    assert any("errored" in note for note in arm_a.notes)
    assert result.comparisons[0].n == 2


def test_different_problem_sets_pair_on_the_intersection_and_say_so() -> None:
    frame = pd.DataFrame([*_cells("A", ["p1", "p2", "p3"], [True, True, False]),
                          *_cells("B", ["p2", "p3", "p4"], [False, False, True])])
    comparison = analyze([Run(None, normalise(frame, "x"), {})], baseline="B").comparisons[0]
    assert comparison.n == 2 and (comparison.b_count, comparison.c_count) == (1, 0)
    assert "paired on the 2 problems both arms have; 2 problem(s) in one arm only" in comparison.notes


def test_all_pass_all_fail_and_single_problem_are_defined() -> None:
    frame = pd.DataFrame([*_cells("A", ["p1", "p2"], [True, True]), *_cells("B", ["p1", "p2"], [False, False])])
    result = analyze([Run(None, normalise(frame, "x"), {})], baseline="B")
    for arm in result.arms:
        assert np.isfinite([arm.pass_rate, arm.ci_low, arm.ci_high]).all()
    assert result.comparisons[0].pvalue == pytest.approx(0.5)
    single = analyze([Run(None, normalise(pd.DataFrame(_cells("A", ["p1"], [True]) + _cells("B", ["p1"], [False])),
                                          "x"), {})], baseline="B")
    assert single.comparisons[0].n == 1 and np.isfinite(single.comparisons[0].pvalue)
    assert "a single shared problem" in single.comparisons[0].notes[0]
    assert json.dumps(single.as_dict())  # no NaN / Infinity in the JSON
    assert "NaN" not in json.dumps(single.as_dict()) and "Infinity" not in json.dumps(single.as_dict())


def test_repeats_use_the_cluster_aware_tests() -> None:
    rng = np.random.default_rng(3)
    rows = []
    for repeat in range(3):
        rows += _cells("A", [f"p{i}" for i in range(40)], list(rng.random(40) < 0.7), repeat)
        rows += _cells("B", [f"p{i}" for i in range(40)], list(rng.random(40) < 0.5), repeat)
    comparison = analyze([Run(None, normalise(pd.DataFrame(rows), "x"), {})], baseline="B").comparisons[0]
    assert comparison.n_repeats == 3
    assert comparison.test.startswith("sign-flip permutation")
    # CMH tests "no effect on any problem", not the average: it is not in the primary output (#20)
    assert "cmh_pvalue" not in json.dumps(analyze([Run(None, normalise(pd.DataFrame(rows), "x"), {})]).as_dict())


def test_clustered_interval_one_problem_and_degenerate_bca() -> None:
    one = clustered_pass_rate(np.array([[1, 0, 1]]))
    ci = one.confidence_interval()
    assert 0 <= ci.low < ci.high <= 1
    full = clustered_pass_rate(np.ones((164, 3)))
    bca = full.confidence_interval(method="bca", rng=0)  # BCa degenerates at 164/164: falls back
    assert np.isfinite([bca.low, bca.high]).all() and bca.high == pytest.approx(1.0)


def test_cli_import_bad_line_and_analyze_missing_run(tmp_path) -> None:
    bad = tmp_path / "HumanEval"
    bad.mkdir()
    (bad / "ChatGPT-CoT-Python3-0-1.jsonl").write_text('{"task_id": "HumanEval/0", "is_solved": true}\n{"task_id"\n')
    done = subprocess.run([*SOTACHECK, "import", "mapcoder", str(bad), "--out", str(tmp_path / "out")],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "ChatGPT-CoT-Python3-0-1.jsonl:2: invalid JSON" in done.stderr
    assert not (tmp_path / "out").exists()
    done = subprocess.run([*SOTACHECK, "analyze", str(tmp_path / "nope"), "--json"], capture_output=True, text=True)
    assert done.returncode == 2 and "does not exist" in done.stderr


def test_cli_analyze_json_keys(mapcoder_run) -> None:
    done = subprocess.run([*SOTACHECK, "analyze", str(mapcoder_run.path), "--baseline", "CoT", "--json"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert {"arm", "n", "pass_rate", "ci_low", "ci_high"} <= set(report["arms"][0])
    assert {"a", "b", "diff", "b_count", "c_count", "pvalue", "pvalue_adjusted"} <= set(report["comparisons"][0])
    # the old key (#47) for one release, the same value (docs/statistics.md)
    assert all(c["pvalue_holm"] == c["pvalue_adjusted"] for c in report["comparisons"])
    assert len(report["comparisons"]) == 3 and all(c["b"] == "CoT" for c in report["comparisons"])


def test_recorded_hold_budget_sweep_has_one_axis_and_the_paper_default_as_reference() -> None:
    """The gate's `base=direct` is held fixed, so the only axis is hold_budget (a non-numeric constant must not
    become an axis). Figures from the recorded run: every setting solved 8 of 10."""
    run = Path(__file__).resolve().parents[2] / "recordings" / "sweep-gate-hold-qwen05b"
    sweep = sweep_table(load_run(run).outcomes, "humaneval", "gate[base=direct,hold_budget=3]")
    assert sweep.parameters == ("hold_budget",)
    assert [r.setting["hold_budget"] for r in sweep.rows] == [0, 1, 2, 3, 5]
    assert all(r.pass_rate == pytest.approx(0.8) for r in sweep.rows)
    assert [r.is_default for r in sweep.rows] == [False, False, False, True, False]


def test_cli_analyze_says_why_no_difference_is_detectable() -> None:
    """The recorded max_attempts sweep (temperature 0) solved the same 15 of 20 at every setting: no
    discordant problem, so no difference is detectable, and the text says so instead of printing `inf`."""
    run = Path(__file__).resolve().parents[2] / "recordings" / "sweep-pycapsule-attempts-qwen05b"
    done = subprocess.run([*SOTACHECK, "analyze", str(run)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "inf" not in done.stdout
    assert done.stdout.count("no difference detectable at 80 % power: 0 discordant of 20 shared problems") == 8


def test_cli_analyze_never_cuts_an_arm_name() -> None:
    """Arm names longer than the columns (``selfplanning@original``, ``direct@original``) are printed whole in
    the pass-rate and comparison lines; the baseline column once kept only the last 10 characters
    (``t@original``), which named no arm."""
    run = Path(__file__).resolve().parents[2] / "recordings" / "originals-baselines-qwen05b"
    done = subprocess.run([*SOTACHECK, "analyze", str(run)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    compared = [line.split() for line in lines if "exact McNemar" in line]
    assert sorted(fields[0] for fields in compared) == ["analogical@original", "cot@original", "selfplanning@original"]
    assert all(fields[1] == "direct@original" for fields in compared)
    rates = {line.split()[0] for line in lines if line.startswith("  ") and line.split()[0].endswith("@original")
             and "[" in line and "McNemar" not in line}
    assert rates == {"analogical@original", "cot@original", "direct@original", "selfplanning@original"}


def test_default_baseline_is_the_first_pipeline_the_run_listed(mapcoder_run) -> None:
    """Outcomes are stored sorted by arm, so "the first arm" would be codesim in the methods run; the
    default is the pipeline its spec lists first (direct). Without a spec (an imported run) it is the first
    arm; with several runs, the first run's spec decides."""
    runs_dir = Path(__file__).resolve().parents[2] / "recordings"
    methods = load_run(runs_dir / "methods-qwen05b")
    assert (methods.manifest.spec or {})["pipelines"][0]["name"] == "direct"
    assert sorted(set(methods.outcomes["arm"]))[0] == "codesim[d=5,p=5]"
    assert analyze([methods], n_resamples=200).baseline == "direct"
    assert analyze([load_run(runs_dir / "sweep-gate-hold-qwen05b")], n_resamples=200).baseline == (
        "gate[base=direct,hold_budget=0]")
    assert analyze([mapcoder_run], n_resamples=200).baseline == "Analogical"
    assert analyze([mapcoder_run, methods], n_resamples=200).baseline == "Analogical"
    assert analyze([methods, mapcoder_run], n_resamples=200).baseline == "direct"
    assert analyze([methods], baseline="cot", n_resamples=200).baseline == "cot"
