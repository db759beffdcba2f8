"""The gate on input it cannot read: every file of a run directory it reads (``outcomes.parquet``,
``outcomes.csv``, ``run.json``), corrupt, empty, truncated, missing, of the wrong kind or a directory, is
exit 2 with one line naming the file, and ``--junit`` and ``--markdown`` are still written (an <error> test
case with the reason). Also: the lost and gained problems in all three outputs, the interval's level and
sidedness, and ``--max-drop`` in points (the old fraction accepted with a deprecation line).

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
    with pytest.raises(SystemExit) as exit_:
        main(list(args))
    return int(exit_.value.code or 0), capsys.readouterr().err


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
    assert "= two-sided 90 % interval; its lower end is the one-sided 95 % lower bound)" in err
    assert code == (1 if _p_lost(4, 0) < 0.05 else 0) == 0  # 4 of 4 discordant lost: p = 1/16


@pytest.mark.parametrize(("given", "deprecated"), [("2", False), ("0.02", True)])
def test_max_drop_is_in_points_and_the_old_fraction_is_read_with_a_deprecation_line(
        tmp_path, capsys, given: str, deprecated: bool) -> None:
    base, cand = _run(tmp_path / "base", "b"), _run(tmp_path / "cand", "b", frozenset({0}))
    md = tmp_path / "gate.md"
    code, err = cli(capsys, "gate", "--baseline", str(base), "--candidate", str(cand), "--min-n", "10",
                    "--mode", "noninferiority", "--max-drop", given, "--markdown", str(md))
    warning = ("sotacheck gate: deprecated: --max-drop 0.02 read as a fraction (2 points); --max-drop is now in "
               "percentage points: write --max-drop 2")
    assert (warning in err.splitlines()) is deprecated
    assert "the allowed drop of 2.0 points" in md.read_text()
    assert code == 1  # one problem lost of 40: the lower bound is below -2.5 points
