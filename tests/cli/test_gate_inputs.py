"""The gate on input it cannot read: every file of a run directory it reads (``outcomes.parquet``,
``outcomes.csv``, ``run.json``), corrupt, empty, truncated, missing, of the wrong kind or a directory, is
exit 2 with one line naming the file, and ``--junit`` and ``--markdown`` are still written (an <error> test
case with the reason). Also: the lost and gained problems in all three outputs, the interval's level and
sidedness, ``--max-drop`` in points only (0.5 is half a point), the baseline's problems all compared
(a candidate that leaves out problems is exit 2, or with ``--missing-as-failure`` judged with them as
failures), the interval that agrees with the test, and the verdict on stdout.

Runs through ``sotacheck.cli.main.main`` in-process (the console entry point's own error handling)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import junitparser
import pandas as pd
import pytest
from scipy import stats

from sotacheck.cli.main import main
from sotacheck.core.rundir import write_run

N = 40
GARBAGE = bytes(range(256)) * 8  # not Parquet, not UTF-8, not JSON


def _run(path: Path, arm: str, failing: frozenset[int] = frozenset()) -> Path:
    frame = pd.DataFrame({"arm": arm, "dataset": "humaneval", "problem": [f"HumanEval/{i}" for i in range(N)],
                          "repeat": 0, "passed": [i not in failing for i in range(N)]})
    return write_run(path, frame, {"name": path.name})


def _p_lost(lost: int, gained: int) -> float:
    """The one-sided exact McNemar p-value of ``lost`` drops against ``gained`` gains, by scipy."""
    return float(stats.binomtest(lost, lost + gained, 0.5, alternative="greater").pvalue)


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """The exit code and everything printed (stdout, then stderr)."""
    with pytest.raises(SystemExit) as exit_:
        main(list(args))
    out, err = capsys.readouterr()
    return int(exit_.value.code or 0), out + err


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _directory(path: Path) -> None:
    path.unlink()
    path.mkdir()


def _wrong_kind(path: Path) -> None:
    if path.suffix == ".parquet":
        pd.DataFrame({"x": [1, 2]}).to_parquet(path)
    elif path.suffix == ".csv":
        path.write_text("arm,dataset,problem,repeat,passed\nb,humaneval,HumanEval/0,zero,maybe\n")
    else:
        path.write_text("[1, 2, 3]\n")


DAMAGE: dict[str, Callable[[Path], None]] = {
    "garbage": lambda p: p.write_bytes(GARBAGE),
    "empty": lambda p: p.write_bytes(b""),
    "truncated": _truncate,
    "directory": _directory,
    "wrong kind": _wrong_kind,
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
@pytest.mark.parametrize("name", ["outcomes.parquet", "outcomes.csv", "run.json"])
@pytest.mark.parametrize("role", ["baseline", "candidate"])
def test_a_damaged_file_is_exit_2_one_line_naming_it_and_both_reports_written(
        tmp_path, capsys, role: str, name: str, damage: str) -> None:
    runs = {"baseline": _run(tmp_path / "base", "b"), "candidate": _run(tmp_path / "cand", "b", frozenset({0, 1}))}
    target = runs[role] / name
    if name == "outcomes.csv":  # the Parquet table is read first when both are there
        (runs[role] / "outcomes.parquet").unlink()
    DAMAGE[damage](target)
    junit, md = tmp_path / "gate.xml", tmp_path / "gate.md"
    code, err = cli(capsys, "gate", "--baseline", str(runs["baseline"]), "--candidate", str(runs["candidate"]),
                    "--min-n", "10", "--junit", str(junit), "--markdown", str(md))
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and err.startswith("sotacheck gate: UNUSABLE INPUT (exit 2): ")
    assert str(target) in err
    cases = [case for suite in junitparser.JUnitXml.fromfile(str(junit)) for case in suite]
    (case,) = cases
    (error,) = case.result
    assert isinstance(error, junitparser.Error) and str(target) in error.message
    text = md.read_text()
    assert text.startswith("## sotacheck gate: ⚠️ unusable input (exit 2)") and str(target) in text


@pytest.mark.parametrize("missing", ["run directory", "outcome tables"])
def test_missing_input_is_exit_2_and_both_reports_written(tmp_path, capsys, missing: str) -> None:
    base = _run(tmp_path / "base", "b")
    cand = tmp_path / "cand"
    if missing == "outcome tables":
        _run(cand, "b")
        (cand / "outcomes.parquet").unlink()
        (cand / "outcomes.csv").unlink()
    junit, md = tmp_path / "gate.xml", tmp_path / "gate.md"
    code, err = cli(capsys, "gate", "--baseline", str(base), "--candidate", str(cand), "--junit", str(junit),
                    "--markdown", str(md))
    assert code == 2 and len(err.strip().splitlines()) == 1 and str(cand) in err
    assert junit.is_file() and md.is_file()
    assert "unusable input" in md.read_text()


def test_a_run_without_run_json_is_still_judged(tmp_path, capsys) -> None:
    """``run.json`` is optional in the run-directory contract (an outcome table alone is a run)."""
    base, cand = _run(tmp_path / "base", "b"), _run(tmp_path / "cand", "b")
    (cand / "run.json").unlink()
    code, err = cli(capsys, "gate", "--baseline", str(base), "--candidate", str(cand), "--min-n", "10")
    assert code == 0, err


def test_lost_and_gained_problems_are_listed_in_text_junit_and_markdown(tmp_path, capsys) -> None:
    base = _run(tmp_path / "base", "b", frozenset({20}))
    cand = _run(tmp_path / "cand", "b", frozenset({3, 5, 7, 11, 13, 17}))
    junit, md = tmp_path / "gate.xml", tmp_path / "gate.md"
    code, err = cli(capsys, "gate", "--baseline", str(base), "--candidate", str(cand), "--min-n", "10",
                    "--alpha", "0.1", "--junit", str(junit), "--markdown", str(md))
    lost = ", ".join(f"HumanEval/{i}" for i in (3, 5, 7, 11, 13, 17))  # in natural order
    assert _p_lost(6, 1) == pytest.approx(8 / 128) and code == 1  # significant at alpha 0.1: a failure case
    assert f"  Lost: {lost}. Gained: HumanEval/20." in err.splitlines()
    (case,) = [case for suite in junitparser.JUnitXml.fromfile(str(junit)) for case in suite]
    assert f"Lost: {lost}. Gained: HumanEval/20." in case.result[0].text
    text = md.read_text()
    assert f"  - lost (6): {lost}" in text and "  - gained (1): HumanEval/20" in text


def test_the_interval_names_its_level_and_sidedness_and_differences_are_points(tmp_path, capsys) -> None:
    base, cand = _run(tmp_path / "base", "b"), _run(tmp_path / "cand", "b", frozenset(range(4)))
    code, err = cli(capsys, "gate", "--baseline", str(base), "--candidate", str(cand), "--min-n", "10")
    assert "90.0 % vs 100.0 % (-10.0 points, [" in err
    assert ("= two-sided 90 % exact interval inverting the test, conditional on the 4 discordant problems "
            "(Clopper-Pearson on the share lost, times 4/40): its upper end is below 0 exactly when p < 0.05)") in err
    assert code == (1 if _p_lost(4, 0) < 0.05 else 0) == 0  # 4 of 4 discordant lost: p = 1/16


@pytest.mark.parametrize("given", ["2", "0.5"])
def test_max_drop_is_in_points_only(tmp_path, capsys, given: str) -> None:
    """One unit: 0.5 is half a point (it used to be read as the fraction 0.5, fifty points, so a
    significant 12-point drop passed); the output states the margin in points."""
    base = _run(tmp_path / "base", "b")
    cand = _run(tmp_path / "cand", "b", frozenset(range(5)))  # 12.5 points lost, p = 1/32
    md = tmp_path / "gate.md"
    code, out = cli(capsys, "gate", "--baseline", str(base), "--candidate", str(cand), "--min-n", "10",
                    "--mode", "noninferiority", "--max-drop", given, "--markdown", str(md))
    assert code == 1 and "deprecated" not in out
    assert f"the allowed drop of {given} percentage points" in md.read_text()
    assert f"is below the allowed drop of {given} points" in out


def test_max_drop_out_of_range_is_exit_2(tmp_path, capsys) -> None:
    base = _run(tmp_path / "base", "b")
    code, out = cli(capsys, "gate", "--baseline", str(base), "--candidate", str(base), "--mode", "noninferiority",
                    "--max-drop", "150")
    assert code == 2 and "--max-drop must be in [0, 100) percentage points, got 150" in out


def test_a_candidate_leaving_out_its_failed_problems_is_exit_2_or_judged_with_them_as_failures(
        tmp_path, capsys) -> None:
    """The candidate fails 12 of 40 problems and simply leaves them out: never a pass."""
    base = _run(tmp_path / "base", "b")
    frame = pd.DataFrame({"arm": "b", "dataset": "humaneval", "problem": [f"HumanEval/{i}" for i in range(12, N)],
                          "repeat": 0, "passed": True})
    cand = write_run(tmp_path / "cand", frame, {"name": "cand"})
    junit = tmp_path / "gate.xml"
    code, out = cli(capsys, "gate", "--baseline", str(base), "--candidate", str(cand), "--min-n", "10",
                    "--junit", str(junit))
    assert code == 2 and len(out.strip().splitlines()) == 1
    assert ("the candidate lacks 12 of the baseline's 40 problems on humaneval (HumanEval/0, HumanEval/1, "
            "HumanEval/2, HumanEval/3, HumanEval/4 and 7 more); a problem left out is never a pass: judge them too, "
            "pass --missing-as-failure to count them as failures, or --candidate-problems-only to gate only the slice "
            "the candidate ran") in out
    assert "unusable input" in junit.read_text()
    code, out = cli(capsys, "gate", "--baseline", str(base), "--candidate", str(cand), "--min-n", "10",
                    "--missing-as-failure")
    assert code == 1 and _p_lost(12, 0) < 0.05
    assert "70.0 % vs 100.0 %" in out and "12 lost, 0 gained" in out
    assert "12 of the baseline's problems absent from the candidate judged as failures, as asked" in out
    code, out = cli(capsys, "gate", "--baseline", str(base), "--candidate", str(cand), "--min-n", "10",
                    "--candidate-problems-only")  # a gate of the slice: all 28 it ran pass
    assert code == 0 and "100.0 % vs 100.0 %" in out and "over 28 problems (of the baseline's 40)" in out
    assert ("a gate of the slice the candidate ran, as asked: 12 of the baseline's 40 problems not judged "
            "(HumanEval/0, HumanEval/1, HumanEval/2, HumanEval/3, HumanEval/4 and 7 more)") in out
    code, out = cli(capsys, "gate", "--baseline", str(base), "--candidate", str(cand), "--missing-as-failure",
                    "--candidate-problems-only")
    assert code == 2 and "give at most one of --missing-as-failure and --candidate-problems-only" in out


def test_problems_only_in_the_candidate_are_named_as_not_compared(tmp_path, capsys) -> None:
    base = _run(tmp_path / "base", "b")
    frame = pd.DataFrame({"arm": "b", "dataset": "humaneval", "problem": [f"HumanEval/{i}" for i in range(N + 3)],
                          "repeat": 0, "passed": True})
    cand = write_run(tmp_path / "cand", frame, {"name": "cand"})
    code, out = cli(capsys, "gate", "--baseline", str(base), "--candidate", str(cand), "--min-n", "10")
    assert code == 0 and "over 40 problems" in out
    assert ("3 problem(s) only in the candidate, not in the baseline, not compared (HumanEval/40, HumanEval/41, "
            "HumanEval/42)") in out


def test_a_dataset_of_the_baseline_missing_from_the_candidate_is_exit_2(tmp_path, capsys) -> None:
    frame = pd.DataFrame({"arm": "b", "dataset": ["humaneval"] * N + ["mbpp"] * N,
                          "problem": [f"P/{i}" for i in range(N)] * 2, "repeat": 0, "passed": True})
    base = write_run(tmp_path / "base", frame, {"name": "base"})
    cand = write_run(tmp_path / "cand", frame[frame["dataset"] == "humaneval"], {"name": "cand"})
    code, out = cli(capsys, "gate", "--baseline", str(base), "--candidate", str(cand), "--min-n", "10")
    assert code == 2 and "no result on any of the baseline's 40 problems of mbpp" in out
    assert "gate the datasets both have with --dataset" in out
    code, out = cli(capsys, "gate", "--baseline", str(base), "--candidate", str(cand), "--min-n", "10",
                    "--dataset", "humaneval")
    assert code == 0


@pytest.mark.parametrize("lost", range(9))
def test_the_exact_interval_excludes_zero_exactly_when_the_test_rejects(lost: int) -> None:
    """The case that printed [-3.7, -0.6] beside p = 0.125 and a pass: 3 of 164 problems lost, none gained.
    With one run each the interval inverts the one-sided exact McNemar test, so they always agree; its ends
    are Clopper-Pearson's (statsmodels' ``method='beta'``) on the share lost, times the discordant share."""
    from statsmodels.stats.proportion import proportion_confint

    from sotacheck.audit.gate import gate
    from sotacheck.core.rundir import Run, normalise

    n, gained = 164, 1 if lost > 4 else 0  # some cases with a gain too

    def run(passed: list[bool], name: str) -> Run:
        frame = pd.DataFrame({"arm": "b", "dataset": "humaneval", "problem": [f"P/{i}" for i in range(n)],
                              "repeat": 0, "passed": passed})
        return Run(None, normalise(frame, name), {"name": name})

    baseline = run([i >= gained for i in range(n)], "base")  # fails the first `gained` problems
    candidate = run([not gained <= i < gained + lost for i in range(n)], "cand")  # passes those, loses `lost`
    check = gate(baseline, candidate).checks[0]
    assert (check.drops, check.gains) == (lost, gained)
    assert check.pvalue == pytest.approx(_p_lost(lost, gained) if lost + gained else 1.0, rel=1e-12)
    assert (check.ci_high < 0) == (check.pvalue < 0.05) == check.regression
    m = lost + gained
    if m:
        low, high = proportion_confint(lost, m, alpha=0.1, method="beta")
        assert (check.ci_low, check.ci_high) == pytest.approx((m / n * (1 - 2 * high), m / n * (1 - 2 * low)),
                                                              rel=1e-9, abs=1e-12)


def test_with_repeats_the_bootstrap_is_descriptive_and_a_disagreement_is_said(tmp_path, capsys) -> None:
    """3 of 40 problems lost in all 3 repeats: the exact sign-flip p is 1/8 (a pass), while the bootstrap's
    90 % interval excludes 0 (a resample without a lost problem has probability (37/40)^40 = 0.044 < 0.05)."""
    def run(name: str, lost: int) -> Path:
        frame = pd.DataFrame([{"arm": "b", "dataset": "d", "problem": f"p{i}", "repeat": r, "passed": i >= lost}
                              for i in range(N) for r in range(3)])
        return write_run(tmp_path / name, frame, {"name": name})

    code, out = cli(capsys, "gate", "--baseline", str(run("base", 0)), "--candidate", str(run("cand", 3)),
                    "--min-n", "10")
    assert code == 0 and "p = 0.125" in out
    assert "paired cluster-bootstrap interval, descriptive: the test decides" in out
    assert "the bootstrap interval excludes 0 while the test does not reject: the test decides" in out


def test_the_verdict_goes_to_stdout_so_a_redirect_keeps_it(tmp_path) -> None:
    import subprocess

    from tests.sotacheck_command import SOTACHECK

    base, cand = _run(tmp_path / "base", "b"), _run(tmp_path / "cand", "b", frozenset(range(6)))
    verdict = tmp_path / "verdict.txt"
    with verdict.open("w") as handle:
        done = subprocess.run([*SOTACHECK, "gate", "--baseline", str(base), "--candidate", str(cand), "--min-n", "10"],
                              stdout=handle, stderr=subprocess.PIPE, text=True, timeout=120)
    assert done.returncode == 1 and done.stderr == ""
    assert verdict.read_text().startswith("sotacheck gate: REGRESSION (exit 1)")


def test_runs_that_record_no_model_are_not_said_to_differ_in_it(tmp_path, capsys) -> None:
    base, cand = _run(tmp_path / "base", "b"), _run(tmp_path / "cand", "b")
    code, out = cli(capsys, "gate", "--baseline", str(base), "--candidate", str(cand), "--min-n", "10")
    assert code == 0 and "differ in" not in out
    assert "baseline and candidate: neither records the model, endpoint, sampling, judge" in out
