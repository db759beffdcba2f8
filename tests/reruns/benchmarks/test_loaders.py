"""Benchmark loaders against the real files: counts, visible/hidden split, hashes, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sotacheck.core.errors import DataFileNotFound, SotacheckError
from sotacheck.reruns.benchmarks import load_dataset
from sotacheck.reruns.benchmarks.loaders import docstring_examples


@pytest.mark.parametrize(("name", "count"), [
    ("humaneval", 164), ("humaneval-et", 164), ("mbpp", 974), ("mbpp-test", 500), ("mbpp-mapcoder", 397),
])
def test_counts(name: str, count: int, data_dir) -> None:
    dataset = load_dataset(name, data_dir)
    assert len(dataset) == count
    assert len({p.id for p in dataset.problems}) == count
    assert all(p.hidden_tests for p in dataset.problems)
    assert len(dataset.content_hash) == 64


def test_humaneval_visible_tests_come_from_sample_io(data_dir) -> None:
    problems = load_dataset("humaneval", data_dir).by_id()
    assert problems["HumanEval/0"].visible_tests == (
        "assert has_close_elements([1.0, 2.0, 3.0], 0.5) == False",
        "assert has_close_elements([1.0, 2.8, 3.0, 4.0, 5.0, 2.0], 0.3) == True",
    )
    assert problems["HumanEval/0"].hidden_tests[0].rstrip().endswith("check(has_close_elements)")
    # hidden tests never double as visible ones
    assert not set(problems["HumanEval/0"].visible_tests) & set(problems["HumanEval/0"].hidden_tests)


def test_humaneval_et_hidden_tests_are_the_test_case_list(data_dir) -> None:
    problems = load_dataset("humaneval-et", data_dir).by_id()
    raw = {json.loads(line)["task_id"]: json.loads(line)
           for line in (data_dir / "benchmarks/humaneval/HumanEvalET.jsonl").open()}
    assert list(problems["HumanEval/0"].hidden_tests) == list(raw["HumanEval/0"]["test_case_list"])


def test_docstring_examples_are_parsed_when_no_sample_io() -> None:
    prompt = 'def f(x):\n    """Double.\n    >>> f(2)\n    4\n    >>> f(0)\n    0\n    """\n'
    assert docstring_examples(prompt, "f") == ("assert f(2) == 4", "assert f(0) == 0")


def test_without_the_shared_copy_visible_tests_fall_back_to_docstrings(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("SOTACHECK_DATA", raising=False)
    monkeypatch.chdir(tmp_path)
    from sotacheck.reruns.benchmarks import loaders

    monkeypatch.setattr(loaders, "find_data_file", _always_missing)
    problems = loaders.load_humaneval(tmp_path).by_id()
    assert problems["HumanEval/2"].visible_tests == ("assert truncate_number(3.5) == 0.5",)


def _always_missing(relative, data_dir=None):
    raise DataFileNotFound(relative, ["nowhere"])


def test_mbpp_visible_is_the_first_assert_only(data_dir) -> None:
    problem = load_dataset("mbpp", data_dir).by_id()["MBPP/2"]
    assert len(problem.visible_tests) == 1
    assert len(problem.hidden_tests) == 3
    assert problem.visible_tests[0] == problem.hidden_tests[0]
    assert problem.entry_point == "similar_elements"


def test_mbpp_et_rows_loads_every_row_of_a_local_file(tmp_path) -> None:
    row = {"task_id": 7, "text": "Add one.", "code": "def add_one(x):\n    return x + 1",
           "test_list": ["assert add_one(1) == 2"], "test_setup_code": "",
           "test_case_list": ["assert add_one(1) == 2", "assert add_one(-1) == 0"]}
    (tmp_path / "benchmarks/mbpp").mkdir(parents=True)
    (tmp_path / "benchmarks/mbpp/MBPP_ET.jsonl").write_text(json.dumps(row) + "\n")
    problem = load_dataset("mbpp-et-rows", tmp_path).problems[0]
    assert problem.hidden_tests == ("assert add_one(1) == 2", "assert add_one(-1) == 0")
    assert problem.visible_tests == ("assert add_one(1) == 2",)


def _et_file(tmp_path: Path, task_ids: list[int]) -> Path:
    """An MBPP_ET.jsonl with one row per task id; its ``test_list`` names the task, so the test can tell
    which row each problem's hidden tests came from."""
    (tmp_path / "benchmarks/mbpp").mkdir(parents=True)
    rows = [{"task_id": task_id, "text": "t", "code": "def f():\n    pass", "test_setup_code": "",
             "test_list": [f"assert True  # ET {task_id} a", f"assert True  # ET {task_id} b"],
             "test_case_list": ["assert False"]} for task_id in task_ids]
    path = tmp_path / "benchmarks/mbpp/MBPP_ET.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_mbpp_et_is_the_published_definition(tmp_path, data_dir) -> None:
    """MapCoder's evaluate-et-dataset.py: the 397 problems of their mbpp-py runs, each judged on the
    test_list of its task id's MBPP_ET row (not test_case_list; rows of other tasks unused)."""
    runs = load_dataset("mbpp-mapcoder", data_dir)
    task_ids = [int(p.id.split("_")[1]) for p in runs.problems]
    _et_file(tmp_path, [*task_ids, 9999])
    for problem in runs.problems:  # the bundled mbpp-py beside the test's MBPP_ET
        assert problem.id.startswith("mbpp_")
    et = load_dataset("mbpp-et", tmp_path)
    assert len(et) == len(runs) == 397
    for mine, theirs, task_id in zip(et.problems, runs.problems, task_ids, strict=True):
        assert (mine.id, mine.prompt, mine.entry_point, mine.visible_tests) == (
            theirs.id, theirs.prompt, theirs.entry_point, theirs.visible_tests)
        assert mine.hidden_tests == (f"assert True  # ET {task_id} a", f"assert True  # ET {task_id} b")


def test_mbpp_et_without_a_row_for_a_problem_names_the_task(tmp_path, data_dir) -> None:
    task_ids = [int(p.id.split("_")[1]) for p in load_dataset("mbpp-mapcoder", data_dir).problems]
    _et_file(tmp_path, task_ids[1:])
    with pytest.raises(SotacheckError, match=rf"no row with a test_list for task_id {task_ids[0]} \(mbpp_{task_ids[0]}_"):
        load_dataset("mbpp-et", tmp_path)


def test_missing_file_names_every_place_looked(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SOTACHECK_DATA", str(tmp_path / "env"))
    with pytest.raises(DataFileNotFound) as info:
        load_dataset("mbpp-et", tmp_path / "explicit")
    message = str(info.value)
    assert "MBPP_ET.jsonl" in message
    assert str(tmp_path / "explicit") in message and str(tmp_path / "env") in message
    assert "\n" not in message


def test_unknown_dataset_is_a_clear_error() -> None:
    with pytest.raises(SotacheckError, match=r"unknown dataset 'humaneval2'.*choose one of humaneval"):
        load_dataset("humaneval2")


def test_content_hash_changes_with_the_tests(data_dir) -> None:
    import dataclasses

    problem = load_dataset("humaneval", data_dir).problems[0]
    changed = dataclasses.replace(problem, hidden_tests=(*problem.hidden_tests, "assert True"))
    assert changed.content_hash != problem.content_hash
