"""``sotacheck import`` of long tables and SWE-bench results through the command line: bad input is one line
naming the file (and row), exit 2, and nothing written; SWE-bench's layout (tests/fixtures/swebench/README.md)
imports as one arm per submission; runs of several systems imported one by one keep distinct arms."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from sotacheck import api
from sotacheck.cli.main import main
from sotacheck.core.errors import UsageError
from sotacheck.core.outcomes import OutcomeError

REPO = Path(__file__).resolve().parents[2]
SWEBENCH = REPO / "tests/fixtures/swebench"
LITE = SWEBENCH / "evaluation/lite"
EVALPLUS = REPO / "data/published/mapcoder/ChatGPT/HumanEvalPlus"


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(["import", *args])
    captured = capsys.readouterr()
    return int(done.value.code or 0), captured.out, captured.err


def _garbage(tmp: Path) -> Path:
    path = tmp / "garbage.csv"
    path.write_bytes(bytes(range(128, 256)) * 4)
    return path


BAD = {
    "problem twice": ("csv", "model,problem,passed\na,p,1\na,p,0\n", (), r"bad\.csv:3: system 'a' has problem 'p' twice"),
    "fraction without samples": ("csv", "model,problem,pass@1\na,p,0.5\n", (),
                                 r"bad\.csv: fractions in `pass@1` without a sample count"),
    "passed > samples": ("csv", "model,problem,passed,samples\na,p,3,2\n", (),
                         r"bad\.csv:2: `passed` is 3, more than `samples` \(2\)"),
    "empty file": ("csv", "", (), r"bad\.csv: the file is empty"),
    "wrong column type": ("csv", "model,problem,passed,samples\na,p,1,5\nb,p,x,5\n", (),
                          r"bad\.csv:3: column `passed` is 'x', not a whole number"),
    "jsonl not JSON": ("jsonl", '{"model": "a", "problem": "p", "passed": 1}\nnot json\n', (),
                       r"bad\.jsonl:2: invalid JSON"),
    "parquet garbage": ("parquet", "PAR1 but not parquet", (), r"bad\.parquet: cannot read as Parquet"),
    "parquet not parquet": ("parquet", "model,problem\n", (), r"bad\.parquet: not a Parquet file"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_tables_through_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str) -> None:
    kind, text, extra, message = BAD[case]
    path = tmp_path / f"bad.{kind}"
    path.write_text(text)
    code, out, err = _cli(capsys, kind, str(path), "--out", str(tmp_path / "run"), "--dataset", "d", *extra)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert pytest.importorskip("re").search(message, err), err
    assert not (tmp_path / "run").exists()


def test_binary_garbage_and_a_folder_where_a_file_is_expected(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for path, message in ((_garbage(tmp_path), "garbage.csv: cannot parse as CSV"),
                          (tmp_path, f"{tmp_path}: a folder, but a CSV table is one file")):
        code, _, err = _cli(capsys, "csv", str(path), "--out", str(tmp_path / "run"), "--dataset", "d")
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
        assert not (tmp_path / "run").exists()


def test_a_count_table_imports_and_the_summary_counts_error_cells(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    table = tmp_path / "t.csv"
    table.write_text("system,problem,passed,samples,model\nours,p1,2,3,gpt\nours,p2,0,3,gpt\nbase,p1,3,3,llama\n"
                     "base,p2,1,3,llama\n")
    code, out, _ = _cli(capsys, "table", str(table), "--out", str(tmp_path / "run"), "--dataset", "he")
    assert code == 0 and out.startswith(f"wrote {tmp_path / 'run'}: 12 cells\n")
    run = api.load_run(tmp_path / "run")
    assert run.manifest.systems == {"ours": {"model": "gpt"}, "base": {"model": "llama"}}
    assert run.outcomes.groupby("arm")["passed"].sum().to_dict() == {"base": 4, "ours": 2}
    blank = tmp_path / "blank.csv"
    blank.write_text("arm,dataset,problem,repeat,passed\na,d,p1,0,true\na,d,p2,0,\n")
    code, out, _ = _cli(capsys, "csv", str(blank), "--out", str(tmp_path / "blank"))
    assert code == 0 and "a on d: 2 cells, 1 without a verdict (an empty or error result: counted as errors, not " \
                         "failures)" in out


@pytest.mark.parametrize("instances", ["instances.txt", "instances.json"])
def test_swebench_folder_of_submissions(tmp_path: Path, instances: str) -> None:
    run, _ = api.import_logs("swebench", path=LITE, out=tmp_path / "run", instances=SWEBENCH / instances)
    outcomes = run.outcomes
    ids = (SWEBENCH / "instances.txt").read_text().split()
    expected = {}
    for results in sorted(LITE.glob("*/results/results.json")):
        resolved = set(json.loads(results.read_text())["resolved"])
        expected[results.parent.parent.name] = [i in resolved for i in sorted(ids)]
    assert {arm: group.sort_values("problem")["passed"].tolist() for arm, group in outcomes.groupby("arm")} == expected
    assert outcomes.groupby("arm")["passed"].sum().to_dict() == {"20240101_agent-a": 4, "20240201_agent-b": 1,
                                                                  "20240301_agent-c": 3}
    assert set(outcomes["dataset"]) == {"swe-bench"} and len(outcomes) == 3 * 8
    status = outcomes.set_index(["arm", "problem"])["swebench_status"]
    assert status["20240101_agent-a", "psf__requests-2317"] == "no_generation"
    assert status["20240201_agent-b", "pytest-dev__pytest-5692"] == "no_logs"
    assert run.manifest.systems["20240101_agent-a"]["metadata"]["tags"]["model"] == ["gpt-4o-2024-05-13"]
    assert run.manifest.systems["20240201_agent-b"] == {}


def test_swebench_one_file_with_arm_and_dataset(tmp_path: Path) -> None:
    results = LITE / "20240201_agent-b/results/results.json"
    run, _ = api.import_logs("swebench", path=results, out=tmp_path / "run", arm="b", dataset="swe-bench-lite",
                             instances=SWEBENCH / "instances.txt")
    assert set(run.outcomes["arm"]) == {"b"} and set(run.outcomes["dataset"]) == {"swe-bench-lite"}
    assert run.outcomes["passed"].sum() == 1


def test_swebench_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = LITE / "20240101_agent-a/results/results.json"
    code, _, err = _cli(capsys, "swebench", str(results), "--out", str(tmp_path / "run"))
    assert code == 2 and "give the benchmark's instance ids with --instances FILE" in err, err
    short = tmp_path / "short.txt"
    short.write_text("astropy__astropy-12907\n")
    code, _, err = _cli(capsys, "swebench", str(results), "--out", str(tmp_path / "run"), "--instances", str(short))
    assert code == 2 and "resolved instance 'django__django-11099' is not in the instance list" in err, err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "run").exists()
    with pytest.raises(OutcomeError, match=r"not a SWE-bench results.json \(no `resolved` list\) \(it looks like 'evalplus'"):
        api.import_logs("swebench", path=next(EVALPLUS.glob("*eval_results.json.gz")), out=tmp_path / "run", instances=short)


def test_runs_of_several_models_keep_distinct_arms(tmp_path: Path) -> None:
    files = sorted(EVALPLUS.glob("*eval_results.json.gz"))[:2]
    runs = [api.import_logs("evalplus", path=file, out=tmp_path / f"run{i}", arm=f"model-{i}")[0]
            for i, file in enumerate(files)]
    combined = pd.concat([run.outcomes for run in runs])
    assert sorted(set(combined["arm"])) == ["model-0", "model-1"]
    assert combined.duplicated(["arm", "dataset", "problem", "repeat"]).sum() == 0
    with pytest.raises(UsageError, match="--sample-count: not an option of import kind 'evalplus'"):
        api.import_logs("evalplus", path=files[0], out=tmp_path / "x", sample_count=3)


def test_the_old_spelling_of_the_sample_count_still_works_for_a_release(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``import --samples N`` (a count; ``judge --samples`` is a file) was renamed ``--sample-count N`` (#47): the old
    flag still sets it, hidden from --help, with one line on standard error; ``import_logs(samples=)`` warns."""
    import warnings

    table = tmp_path / "t.csv"
    table.write_text("model,problem,pass@1\na,p,0.3\nb,p,0.5\n")
    given = (str(table), "--dataset", "humaneval")
    code, _, err = _cli(capsys, "csv", *given, "--out", str(tmp_path / "old"), "--samples", "10")
    assert code == 0 and err == ("sotacheck: --samples is deprecated, use --sample-count (the old spelling goes in "
                                 "the next release)\n")
    code, _, err = _cli(capsys, "csv", *given, "--out", str(tmp_path / "new"), "--sample-count", "10")
    assert code == 0 and err == ""
    old, new = (api.load_run(tmp_path / name).outcomes for name in ("old", "new"))
    assert len(old) == len(new) == 20 and old["passed"].tolist() == new["passed"].tolist()
    code, out, _ = _cli(capsys, "--help")
    assert code == 0 and "--sample-count" in out and "--samples" not in out  # hidden
    with pytest.warns(DeprecationWarning, match=r"import_logs\(samples=\.\.\.\) is deprecated: it was renamed "
                                                r"sample_count=\.\.\."):
        run, _ = api.import_logs("csv", path=table, out=tmp_path / "api", dataset="humaneval",
                                 samples=10)  # type: ignore[call-arg]
    assert len(run.outcomes) == 20
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new name does not warn
        api.import_logs("csv", path=table, out=tmp_path / "api2", dataset="humaneval", sample_count=10)
