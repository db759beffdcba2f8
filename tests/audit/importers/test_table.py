"""Long tables (sotacheck.audit.importers.table): each shape users have, read from CSV, JSON lines and Parquet
alike; counts and fractions expanded into one row per sample; per-system facts in the manifest. The expected
pass counts are recomputed from the input table with pandas, independently of the importer."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sotacheck.audit.importers.table import import_table
from sotacheck.core.errors import UsageError
from sotacheck.core.outcomes import OutcomeError, normalise


def _write(frame: pd.DataFrame, path: Path) -> Path:
    if path.suffix == ".csv":
        frame.to_csv(path, index=False)
    elif path.suffix == ".jsonl":
        frame.to_json(path, orient="records", lines=True)
    else:
        frame.to_parquet(path, index=False)
    return path


def _counts_table(seed: int = 3, systems: int = 4, problems: int = 7, samples: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"Model": np.repeat([f"m{i}" for i in range(systems)], problems),
                         "task_id": np.tile([f"P/{j}" for j in range(problems)], systems),
                         "passed": rng.integers(0, samples + 1, systems * problems), "samples": samples,
                         "release_date": np.repeat([f"2024-0{i + 1}" for i in range(systems)], problems),
                         "open_weights": np.repeat([True, False, True, False][:systems], problems),
                         "meta.params_b": np.repeat([7, 70, 8, 405][:systems], problems)})


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_counts_expand_into_one_row_per_sample(tmp_path: Path, suffix: str) -> None:
    source = _counts_table()
    table, fields = import_table(_write(source, tmp_path / f"t{suffix}"), dataset="he")
    assert len(table) == source["samples"].sum() == 4 * 7 * 5
    per_cell = table.groupby(["arm", "problem"])["passed"].agg(["sum", "size"])
    expected = source.set_index(["Model", "task_id"])[["passed", "samples"]]
    assert per_cell["sum"].tolist() == expected["passed"].tolist()
    assert per_cell["size"].tolist() == expected["samples"].tolist()
    first = table[(table["arm"] == "m0") & (table["problem"] == "P/0")]
    k = int(source.loc[0, "passed"])
    assert first["repeat"].tolist() == [0, 1, 2, 3, 4] and first["passed"].tolist() == [True] * k + [False] * (5 - k)
    assert set(table["dataset"]) == {"he"} and set(table["status"]) <= {"passed", "failed"}
    assert fields["systems"]["m1"] == {"release_date": "2024-02", "open_weights": False, "meta.params_b": 70}
    assert fields["files"][0]["shape"] == "counts"


def test_the_three_formats_give_the_same_table(tmp_path: Path) -> None:
    source = _counts_table(seed=5)
    tables = [import_table(_write(source, tmp_path / f"t{s}"), dataset="he")[0] for s in (".csv", ".jsonl", ".parquet")]
    pd.testing.assert_frame_equal(tables[0], tables[1])
    pd.testing.assert_frame_equal(tables[0], tables[2])


def test_n_passed_of_n_samples_and_fractions_give_the_same_table(tmp_path: Path) -> None:
    source = _counts_table(seed=9)
    counts = import_table(_write(source, tmp_path / "c.csv"), dataset="he")[0]
    named = source.rename(columns={"passed": "n_passed", "samples": "n_samples"})
    pd.testing.assert_frame_equal(import_table(_write(named, tmp_path / "n.csv"), dataset="he")[0], counts)
    fraction = source.assign(**{"pass@1": source["passed"] / source["samples"]}).drop(columns=["passed", "samples"])
    by_option = import_table(_write(fraction, tmp_path / "f.csv"), dataset="he", sample_count=5)[0]
    pd.testing.assert_frame_equal(by_option, counts)
    with_column = fraction.assign(samples=5).rename(columns={"pass@1": "pass_rate"})
    pd.testing.assert_frame_equal(import_table(_write(with_column, tmp_path / "g.jsonl"), dataset="he")[0], counts)


def test_verdicts_without_repeat_and_the_outcome_schema_csv(tmp_path: Path) -> None:
    rows = pd.DataFrame({"system": ["a", "a", "b", "b"], "problem": ["1", "2", "1", "2"],
                         "passed": ["1", "false", "True", "0"], "harness": ["x", "x", "y", "y"]})
    table, fields = import_table(_write(rows, tmp_path / "v.csv"), dataset="d")
    assert table["passed"].tolist() == [True, False, True, False] and table["repeat"].tolist() == [0] * 4
    assert fields["systems"] == {"a": {"harness": "x"}, "b": {"harness": "y"}}
    schema = tmp_path / "schema.csv"
    schema.write_text("arm,dataset,problem,repeat,passed,status,calls\nA,he,p1,0,true,,3\nA,he,p1,1,,error,\n")
    table, fields = import_table(schema, "csv")
    assert table["status"].tolist() == ["passed", "error"] and table["calls"].tolist()[0] == 3
    assert table["passed"].isna().tolist() == [False, True] and fields["systems"] == {"A": {}}


def test_arm_renames_a_table_of_one_system(tmp_path: Path) -> None:
    rows = pd.DataFrame({"model": ["x", "x"], "problem": ["1", "2"], "passed": [1, 0]})
    table, fields = import_table(_write(rows, tmp_path / "one.csv"), dataset="d", arm="renamed")
    assert set(table["arm"]) == {"renamed"} and list(fields["systems"]) == ["renamed"]
    two = pd.DataFrame({"model": ["x", "y"], "problem": ["1", "1"], "passed": [1, 0]})
    with pytest.raises(UsageError, match=r"`arm` names one system, but .* holds 2"):
        import_table(_write(two, tmp_path / "two.csv"), dataset="d", arm="renamed")


@pytest.mark.parametrize(("frame", "options", "message"), [
    ({"model": ["a", "a"], "problem": ["p", "p"], "passed": [1, 0]}, {},
     r"t\.csv:3: system 'a' has problem 'p' twice \(first at line 2\)"),
    ({"model": ["a"], "problem": ["p"], "pass@1": [0.3]}, {},
     r"t\.csv: fractions in `pass@1` without a sample count; give it as a `samples` column or as `sample_count`"),
    ({"model": ["a", "b"], "problem": ["p", "p"], "passed": [2, 6], "samples": [5, 5]}, {},
     r"t\.csv:3: `passed` is 6, more than `samples` \(5\)"),
    ({"model": ["a"], "problem": ["p"], "passed": [-1], "samples": [5]}, {},
     r"t\.csv:2: column `passed` is -1, not a whole number ≥ 0"),
    ({"model": ["a", "b"], "problem": ["p", "p"], "score": [0.2, 0.15]}, {"sample_count": 10},
     r"t\.csv:3: column `score` is 0.15, not k/10 for a whole k"),
    ({"model": ["a"], "problem": ["p"], "fraction": [45.0]}, {"sample_count": 10},
     r"t\.csv:2: column `fraction` is 45.0, outside \[0, 1\] \(a percentage\?"),
    ({"model": ["a", "b"], "problem": ["p", "p"], "passed": [1, 2], "samples": ["5", "ten"]}, {},
     r"t\.csv:3: column `samples` is 'ten', not a whole number"),
    ({"model": ["a", "b"], "problem": ["p", "p"], "passed": ["1", "maybe"]}, {},
     r"t\.csv:3: column `passed`: cannot read 'maybe' as passed/failed"),
    ({"model": ["a", "a"], "problem": ["p", "q"], "passed": [1, 0], "method": ["x", "y"]}, {},
     r"t\.csv: system 'a' has 2 values in column `method` \('x', 'y'\)"),
    ({"name": ["a"], "problem": ["p"], "passed": [1]}, {},
     r"t\.csv: no system column \(`arm`, `system` or `model`\); its columns: name, problem, passed"),
    ({"model": ["a"], "passed": [1]}, {}, r"t\.csv: no problem column"),
    ({"model": ["a"], "problem": ["p"], "passed": [1]}, {"dataset": None}, r"no `dataset` column; give the dataset "
                                                                           r"with `dataset`"),
    ({"model": ["a"], "problem": ["p"], "passed": [1], "repeat": [""]}, {},
     r"t\.csv:2: column `repeat` is empty"),
    ({"model": ["a"], "problem": [""], "passed": [1]}, {}, r"t\.csv:2: column `problem` is empty"),
])
def test_bad_tables_are_one_line_naming_file_and_row(tmp_path: Path, frame: dict, options: dict, message: str) -> None:
    path = _write(pd.DataFrame(frame), tmp_path / "t.csv")
    with pytest.raises(OutcomeError, match=message) as raised:
        import_table(path, **{"dataset": "d", **options})
    assert "\n" not in str(raised.value)


def test_options_that_do_not_apply_are_usage_errors(tmp_path: Path) -> None:
    counts = _write(pd.DataFrame({"model": ["a"], "problem": ["p"], "passed": [1], "samples": [2]}), tmp_path / "c.csv")
    with pytest.raises(UsageError, match="`sample_count` gives the sample count of a fraction column"):
        import_table(counts, dataset="d", sample_count=3)
    with_dataset = _write(pd.DataFrame({"model": ["a"], "dataset": ["x"], "problem": ["p"], "passed": [1]}),
                          tmp_path / "d.csv")
    with pytest.raises(UsageError, match=r"`dataset`: .* has a `dataset` column"):
        import_table(with_dataset, dataset="d")


def test_a_blank_verdict_is_an_error_cell(tmp_path: Path) -> None:
    path = tmp_path / "blank.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [{"model": "a", "problem": "p", "passed": True},
                                                     {"model": "a", "problem": "q", "passed": None}]) + "\n")
    table, _ = import_table(path, dataset="d")
    assert table["status"].tolist() == ["passed", "error"] and bool(table["passed"].isna().iloc[1])


def test_other_csv_columns_keep_their_numbers(tmp_path: Path) -> None:
    path = tmp_path / "extra.csv"
    path.write_text("arm,dataset,problem,repeat,passed,wall_s,note\nA,he,p1,0,true,1.5,x\nA,he,p2,0,false,2,\n")
    table, _ = import_table(path, "csv")
    assert table["wall_s"].tolist() == [1.5, 2.0] and table["note"].tolist()[0] == "x"


def test_a_long_table_given_as_human_eval_results_says_so(tmp_path: Path) -> None:
    from sotacheck.audit.importers.humaneval_results import import_humaneval_results

    path = tmp_path / "lt.jsonl"
    path.write_text('{"model": "a", "task_id": "HumanEval/0", "passed": true}\n')
    with pytest.raises(OutcomeError, match=r"lt\.jsonl:1: a long table .*`sotacheck import jsonl`"):
        import_humaneval_results(path)


def test_csv_import_and_its_errors(tmp_path) -> None:
    good = tmp_path / "runs.csv"
    pd.DataFrame({"arm": ["A", "A"], "dataset": ["he", "he"], "problem": ["1", "2"], "repeat": [0, 0],
                  "passed": ["true", "false"]}).to_csv(good, index=False)
    table = normalise(import_table(good, "csv")[0], str(good))
    assert table["passed"].tolist() == [True, False] and table["status"].tolist() == ["passed", "failed"]
    missing = tmp_path / "missing.csv"
    with pytest.raises(OutcomeError, match="does not exist"):
        import_table(missing, "csv")
