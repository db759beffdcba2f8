"""Bad input at every entry is a one-line error naming the place (file:line and column, or the argument),
or a documented, tested normalisation. Each case is a reproduction from the statistics review (#20, item 5),
run through the CLI where a user would meet it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from scipy import stats

from sotacheck.audit.importers.mapcoder import mapcoder_file_identity
from sotacheck.audit.intervals import proportion_interval
from sotacheck.audit.paired import mcnemar_exact
from sotacheck.core.errors import ArgumentError
from sotacheck.core.rundir import load_run
from tests.sotacheck_command import SOTACHECK

HEADER = "arm,dataset,problem,repeat,passed,status\n"


def import_csv(tmp_path: Path, text: str) -> subprocess.CompletedProcess[str]:
    source = tmp_path / "cells.csv"
    source.write_text(text)
    return subprocess.run([*SOTACHECK, "import", "csv", str(source), "--out", str(tmp_path / "run")],
                          capture_output=True, text=True, cwd=tmp_path)


def test_a_blank_status_follows_passed(tmp_path: Path) -> None:
    """With pandas 3 a blank status was read as NaN and rejected as an unknown value."""
    done = import_csv(tmp_path, HEADER + "a,d,p1,0,true,\na,d,p2,0,,error\n")
    assert done.returncode == 0, done.stderr
    table = load_run(tmp_path / "run").outcomes.set_index("problem")
    assert table.loc["p1", "status"] == "passed" and bool(table.loc["p1", "passed"])
    assert table.loc["p2", "status"] == "error" and table["passed"].isna()["p2"]


@pytest.mark.parametrize("row,message", [
    ("a,d,p1,0,2,", "cells.csv:2: column `passed`: cannot read '2' as passed/failed (true/false, 1/0, yes/no, "
                    "pass/fail, passed/failed, or empty)"),
    ("a,d,p1,,true,", "cells.csv:2: column `repeat` is empty (a repeat number, 0 for a single run)"),
    ("a,d,p1,1.7,true,", "cells.csv:2: column `repeat`: 1.7 is not a whole number"),
    ("a,d,p1,-1,true,", "cells.csv:2: column `repeat`: -1 is negative"),
    ("a,d,p1,0,true,failed", "cells.csv:2: column `status`: 'failed' contradicts `passed` (true)"),
    ("a,d,p1,0,,passed", "cells.csv:2: column `status`: 'passed' contradicts `passed` (empty)"),
    ("a,d,,0,true,", "cells.csv:2: column `problem` is empty"),
    ("a,d,p1,0,true,maybe", "cells.csv:2: column `status`: unknown value 'maybe'"),
])
def test_a_bad_cell_is_one_line_naming_file_line_and_column(tmp_path: Path, row: str, message: str) -> None:
    done = import_csv(tmp_path, HEADER + row + "\na,d,p9,0,true,\n")
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and message in done.stderr, done.stderr
    assert not (tmp_path / "run").exists()  # nothing half-written


def test_every_spelling_the_message_lists_is_read_and_a_blank_verdict_is_named_in_the_summary(tmp_path: Path) -> None:
    rows = "".join(f"a,d,p{i},0,{word},\n" for i, word in enumerate(["yes", "no", "pass", "fail", "passed", "failed",
                                                                       "true", "false", "1", "0", ""]))
    done = import_csv(tmp_path, HEADER + rows)
    assert done.returncode == 0, done.stderr
    table = load_run(tmp_path / "run").outcomes.set_index("problem")
    assert [table.loc[f"p{i}", "status"] for i in range(11)] == ["passed", "failed"] * 5 + ["error"]
    assert ("a on d: 11 cells, 1 without a verdict (an empty or error result: counted as errors, not failures)"
            in done.stdout)


def test_a_directory_where_a_file_is_expected_is_named_as_such(tmp_path: Path) -> None:
    (tmp_path / "cells.csv").mkdir()
    done = subprocess.run([*SOTACHECK, "import", "csv", str(tmp_path / "cells.csv"), "--out", str(tmp_path / "run")],
                          capture_output=True, text=True)
    assert done.returncode == 2 and f"{tmp_path / 'cells.csv'}: a folder, but a CSV table is one file" in done.stderr


def test_an_empty_csv_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    done = import_csv(tmp_path, "")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "cells.csv: the file is empty" in done.stderr


def test_surrounding_whitespace_does_not_make_a_second_arm(tmp_path: Path) -> None:
    done = import_csv(tmp_path, HEADER + "a ,d,p1,0,true,\na,d,p2,0,false,\n")
    assert done.returncode == 0, done.stderr
    assert set(load_run(tmp_path / "run").outcomes["arm"]) == {"a"}


def test_resamples_out_of_range_is_a_usage_error() -> None:
    runs = Path(__file__).resolve().parents[2] / "recordings" / "methods-qwen05b"
    for value in ("0", "-5"):
        done = subprocess.run([*SOTACHECK, "analyze", str(runs), "--resamples", value], capture_output=True, text=True)
        assert done.returncode == 2 and "--resamples" in done.stderr and "Traceback" not in done.stderr


def test_mcnemar_counts_are_whole_numbers() -> None:
    """``4.0`` is read as 4 (the same p as scipy's binomial test on 3 of 7); ``4.5`` is an error."""
    assert mcnemar_exact(3, 4.0).pvalue == pytest.approx(stats.binomtest(3, 7, 0.5).pvalue, rel=1e-12)
    with pytest.raises(ArgumentError, match="`c` must be a non-negative integer"):
        mcnemar_exact(3, 4.5)
    with pytest.raises(ArgumentError, match="`b` must be a non-negative integer"):
        mcnemar_exact("3", 4)  # type: ignore[arg-type]


def test_more_successes_than_trials_is_an_error() -> None:
    with pytest.raises(ArgumentError, match=r"`k` must be in \[0, n\]"):
        proportion_interval(5, 3)
    with pytest.raises(ArgumentError, match="`n` must be a positive number"):
        proportion_interval(0, 0)


@pytest.mark.parametrize("k,n", [(164, 164), (0, 164), (20, 20), (0, 7)])
def test_jeffreys_keeps_the_boundary_rule(k: int, n: int) -> None:
    """Brown, Cai & DasGupta (2001) §4.1.2: upper = 1 at k = n, lower = 0 at k = 0; elsewhere the
    equal-tailed Beta(k + 1/2, n − k + 1/2) quantiles (scipy, tolerance 1e-12)."""
    ci = proportion_interval(k, n, method="jeffreys")
    expected_low = 0.0 if k == 0 else stats.beta.ppf(0.025, k + 0.5, n - k + 0.5)
    expected_high = 1.0 if k == n else stats.beta.ppf(0.975, k + 0.5, n - k + 0.5)
    assert ci.low == pytest.approx(expected_low, abs=1e-12) and ci.high == pytest.approx(expected_high, abs=1e-12)


def test_jeffreys_in_the_interior_is_unchanged() -> None:
    ci = proportion_interval(130, 164, method="jeffreys")
    assert ci.low == pytest.approx(stats.beta.ppf(0.025, 130.5, 34.5), abs=1e-12)
    assert ci.high == pytest.approx(stats.beta.ppf(0.975, 130.5, 34.5), abs=1e-12)


@pytest.mark.parametrize("name,model,arm", [
    ("GPT4-Turbo-CoT-Human-Python3-0-1.jsonl", "GPT4-Turbo", "CoT"),
    ("ChatGPT-MapCoder-5-5-Human-Python3-0-1.jsonl", "ChatGPT", "MapCoder-5-5"),
    ("ChatGPT-Reflexion-10-Python3-0-1.jsonl.gz", "ChatGPT", "Reflexion-10"),
    ("Gemini-Pro-1.5-MapCoder-3-5-APPS-Python3-0-1.jsonl", "Gemini-Pro-1.5", "MapCoder-3-5"),
    ("ChatGPT-SelfPlanning-APPS-Python3-0-1.jsonl", "ChatGPT", "SelfPlanning"),
])
def test_a_model_name_with_hyphens_stays_out_of_the_arm(name: str, model: str, arm: str) -> None:
    assert mapcoder_file_identity(name) == (model, arm)
