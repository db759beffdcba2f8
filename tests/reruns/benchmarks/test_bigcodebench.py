"""BigCodeBench's two splits from the bundled file: counts, prompts per split, the canonical program, libs, the
registry's cards, and bad input (one line naming the file, the line and what is wrong)."""

from __future__ import annotations

import ast
import gzip
import json
from collections import Counter
from pathlib import Path

import pytest

from sotacheck.core.errors import SotacheckError
from sotacheck.reruns.benchmarks import load_dataset
from sotacheck.reruns.benchmarks.bigcodebench import load_bigcodebench
from sotacheck.reruns.benchmarks.problem import ProblemView
from sotacheck.reruns.benchmarks.registry import card

BUNDLED = Path(__file__).resolve().parents[3] / "data" / "benchmarks" / "bigcodebench" / "BigCodeBench.jsonl.gz"


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    with gzip.open(BUNDLED, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


@pytest.mark.parametrize("split", ["complete", "instruct"])
def test_both_splits_load_every_task_from_the_bundled_file(rows, split):
    dataset = load_dataset(f"bigcodebench-{split}")
    assert len(dataset) == 1140 == len(rows)
    assert [p.id for p in dataset.problems] == [r["task_id"] for r in rows]
    for problem, row in zip(dataset.problems, rows, strict=True):
        assert problem.kind == "unittest"
        assert problem.prompt == row[f"{split}_prompt"]
        assert problem.hidden_tests == (row["test"],)
        assert problem.starter_code == row["code_prompt"]
        assert problem.canonical_solution == row["complete_prompt"] + row["canonical_solution"]
        assert problem.visible_tests == ()
        assert ProblemView.of(problem).visible_tests == ()  # nothing of the tests reaches a pipeline


def test_libs_are_kept_for_a_per_library_breakdown(rows):
    dataset = load_bigcodebench(split="complete")
    counts = Counter(lib for p in dataset.problems for lib in set(p.libs))
    # independently: the file's `libs` strings parsed with ast.literal_eval
    expected = Counter(lib for r in rows for lib in set(ast.literal_eval(r["libs"])))
    assert counts == expected
    assert counts["pandas"] == 426 and counts["matplotlib"] == 309 and counts["tensorflow"] == 3


def test_splits_share_tests_but_not_prompts_and_hashes_differ():
    complete, instruct = load_bigcodebench(split="complete"), load_bigcodebench(split="instruct")
    assert complete.content_hash != instruct.content_hash
    first_c, first_i = complete.problems[0], instruct.problems[0]
    assert first_c.hidden_tests == first_i.hidden_tests and first_c.prompt != first_i.prompt


def test_cards_name_the_source_and_licence():
    for name in ("bigcodebench-complete", "bigcodebench-instruct"):
        assert "Apache-2.0" in card(name).licence
        assert "bigcodebench-annotation" in card(name).source


def test_decompressed_copy_under_a_data_dir_reads_the_same(data_dir):
    assert load_bigcodebench(data_dir).content_hash == load_bigcodebench().content_hash


@pytest.mark.parametrize(("line", "message"), [
    ('{"task_id": "X/0"}', "missing field(s) complete_prompt"),
    ("not json", "not a JSON object"),
])
def test_bad_rows_are_one_line_errors_naming_file_and_line(tmp_path, rows, line, message):
    folder = tmp_path / "benchmarks" / "bigcodebench"
    folder.mkdir(parents=True)
    (folder / "BigCodeBench.jsonl").write_text(json.dumps(rows[0]) + "\n" + line + "\n")
    with pytest.raises(SotacheckError, match=rf"BigCodeBench.jsonl:2: {message}".replace("(", r"\(")
                       .replace(")", r"\)")):
        load_bigcodebench(tmp_path)


def test_bad_libs_and_unknown_split(tmp_path, rows):
    folder = tmp_path / "benchmarks" / "bigcodebench"
    folder.mkdir(parents=True)
    (folder / "BigCodeBench.jsonl").write_text(json.dumps({**rows[0], "libs": "['os', 3]"}) + "\n")
    with pytest.raises(SotacheckError, match="`libs` is not a list of names"):
        load_bigcodebench(tmp_path)
    with pytest.raises(SotacheckError, match="unknown BigCodeBench split 'hard'"):
        load_bigcodebench(split="hard")  # type: ignore[arg-type]


def test_a_judge_report_leaves_environment_out_of_the_rate_and_breaks_down_by_library():
    from sotacheck.reruns.benchmarks.problem import Dataset
    from sotacheck.reruns.judging import JudgeReport
    from sotacheck.reruns.sandbox.result import ExecutionResult
    from sotacheck.reruns.sandbox.submission import JudgedSubmission

    full = load_bigcodebench()
    problems = full.problems[:3]
    dataset = Dataset(full.name, problems, full.sources)
    statuses = ("passed", "failed", "environment")
    report = JudgeReport(dataset, tuple(JudgedSubmission(p.id, dataset.content_hash, ExecutionResult(s))  # type: ignore[arg-type]
                                        for p, s in zip(problems, statuses, strict=True)), None)
    assert report.judged == 2 and report.pass_rate == 0.5
    as_dict = report.as_dict()
    assert as_dict["judged"] == 2 and as_dict["counts"] == {"environment": 1, "failed": 1, "passed": 1}
    expected: dict[str, dict[str, int]] = {}
    for problem, status in zip(problems, statuses, strict=True):
        for lib in problem.libs:
            row = expected.setdefault(lib, {"n": 0, "passed": 0, "environment": 0})
            row["n"] += 1
            row["passed"] += status == "passed"
            row["environment"] += status == "environment"
    assert as_dict["by_library"] == dict(sorted(expected.items()))
