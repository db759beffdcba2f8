"""The BigCodeBench importer on result files written by BigCodeBench 0.2.5's own evaluator
(tests/fixtures/bigcodebench/, README.md there says how): the table against what BigCodeBench reported and
against the raw files counted here, the names BigCodeBench gives its files, bad input as one line, and the
import feeding ``sotacheck leaderboard``."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from sotacheck.audit.importers.bigcodebench import import_bigcodebench, result_name
from sotacheck.audit.importers.evalplus import import_evalplus
from sotacheck.audit.importers.sniff import sniff
from sotacheck.cli import main as cli_main
from sotacheck.core.errors import UsageError
from sotacheck.core.outcomes import OutcomeError

REPO = Path(__file__).resolve().parents[3]
FIXTURE = REPO / "tests/fixtures/bigcodebench"
API = "example-api-model--bigcodebench-complete--openai-0-1-sanitized_calibrated"
SMALL = "example--coder-1b--main--bigcodebench-complete--vllm-0-1-sanitized_calibrated"
SAMPLED = "example--coder-7b--main--bigcodebench-complete--vllm-0.8-3-sanitized_calibrated"
# The arms, and the samples that pass of each, by construction of the fixture (build_fixture.py): the canonical
# solutions pass (BigCodeBench's ground-truth pass rate there: 1.0), the wrong, uncompilable and crashing ones not.
PASSED = {"example-api-model": (15, 20), "example--coder-1b--main": (9, 20), "example--coder-7b--main": (44, 60)}


def _eval_file(stem: str) -> Path:
    return FIXTURE / f"{stem}_eval_results.json"


def _raw_statuses(stem: str) -> dict[tuple[str, int], str]:
    """(task, sample) → status, read here straight from BigCodeBench's file."""
    raw = json.loads(_eval_file(stem).read_text())["eval"]
    return {(task, i): result["status"] for task, results in raw.items() for i, result in enumerate(results)}


def test_the_table_is_what_bigcodebench_reported() -> None:
    """Each arm's pass@1 (and pass@3 of the sampled one) as BigCodeBench's own _pass_at_k.json gives it."""
    table, fields = import_bigcodebench(FIXTURE)
    assert set(table["dataset"]) == {"bigcodebench-complete"}
    for stem in (API, SMALL, SAMPLED):
        report = json.loads((FIXTURE / f"{stem}_pass_at_k.json").read_text())
        rows = table[table["arm"] == report["model"]]
        per_task = rows.groupby("problem")["passed"].mean()
        assert len(per_task) == 20
        assert float(per_task.mean()) == pytest.approx(report["pass@1"], abs=1e-12)
        if "pass@3" in report:  # three samples: a task counts when any of them passes
            assert float((per_task > 0).mean()) == pytest.approx(report["pass@3"], abs=1e-12)
    assert {arm: (int(rows["passed"].sum()), len(rows)) for arm, rows in table.groupby("arm")} == PASSED
    entries = {entry["arm"]: entry for entry in fields["files"]}
    assert fields["source"] == "bigcodebench" and set(entries) == set(PASSED)
    sampled = entries["example--coder-7b--main"]
    assert sampled["model"] == "example--coder-7b--main" and sampled["backend"] == "vllm"
    assert sampled["sampling"] == {"temperature": 0.8, "top_p": None, "max_tokens": None, "n_samples": 3}
    assert sampled["pass_at_k"]["report"]["split"] == "complete" and sampled["bigcodebench_date"]
    assert sampled["samples"]["file"].endswith(f"{SAMPLED}.jsonl")
    assert entries["example-api-model"]["sampling"]["temperature"] == 0.0


def test_every_row_is_its_sample_in_the_raw_file() -> None:
    """Counted from the raw files: sample n of a task is repeat n, passed iff BigCodeBench's status is pass;
    the status is kept as BigCodeBench wrote it."""
    table, _ = import_bigcodebench(FIXTURE)
    for stem, arm in ((API, "example-api-model"), (SMALL, "example--coder-1b--main"),
                      (SAMPLED, "example--coder-7b--main")):
        raw = _raw_statuses(stem)
        rows = table[table["arm"] == arm]
        assert dict(zip(zip(rows["problem"], rows["repeat"], strict=True), rows["bigcodebench_status"],
                        strict=True)) == raw
        assert dict(zip(zip(rows["problem"], rows["repeat"], strict=True), rows["passed"].astype(bool),
                        strict=True)) == {key: status == "pass" for key, status in raw.items()}
    statuses = table.groupby("arm")["bigcodebench_status"].value_counts().to_dict()
    # the uncompilable sample and the wrong ones: fail; the one that kills its process: timeout
    assert statuses[("example-api-model", "fail")] == 4 and statuses[("example-api-model", "timeout")] == 1
    assert statuses[("example--coder-7b--main", "timeout")] == 1


@pytest.mark.parametrize(("name", "model", "dataset", "generation"), [
    ("meta-llama--Llama-3.1-8B-Instruct--main--bigcodebench-instruct--vllm-0-1-sanitized_calibrated_eval_results.json",
     "meta-llama--Llama-3.1-8B-Instruct--main", ("instruct", False), "vllm-0-1"),
    ("gpt-4o--bigcodebench-hard-complete--openai-0-1-sanitized_calibrated_eval_results.json",
     "gpt-4o", ("complete", True), "openai-0-1"),
    ("m--bigcodebench-complete--hf-inference-0.8-5-sanitized-calibrated_hard_eval_results.json.gz",
     "m", ("complete", True), "hf-inference-0.8-5"),
    ("m--bigcodebench-instruct_eval_results.json", "m", ("instruct", False), None),
    ("eval_results.json", None, (None, False), None),
    ("mine_eval_results.json", None, (None, False), None),
])
def test_result_names(name: str, model: str | None, dataset: tuple[str | None, bool], generation: str | None) -> None:
    """The names bigcodebench.generate (0.2.x: with the revision; 0.1.x: without, and _hard_eval_results) builds."""
    parsed = result_name(Path(name))
    assert (parsed.model, (parsed.split, parsed.hard), parsed.generation) == (model, dataset, generation)


def test_dataset_and_arm_from_other_names_and_options(tmp_path: Path) -> None:
    content = _eval_file(API).read_bytes()
    instruct = tmp_path / "instruct" / "acme--bigcodebench-instruct--openai-0-1-sanitized_calibrated_eval_results.json"
    hard = tmp_path / "hard" / "acme--bigcodebench-hard-complete--openai-0-1-sanitized_calibrated_eval_results.json.gz"
    for path, data in ((instruct, content), (hard, gzip.compress(content))):
        path.parent.mkdir()
        path.write_bytes(data)
    table, fields = import_bigcodebench(instruct)
    assert set(table["dataset"]) == {"bigcodebench-instruct"} and set(table["arm"]) == {"acme"}
    assert "pass_at_k" in fields["files"][0] and fields["files"][0]["pass_at_k"] is None
    table, fields = import_bigcodebench(hard.parent)
    assert set(table["dataset"]) == {"bigcodebench-hard-complete"} and int(table["passed"].sum()) == 15
    assert fields["files"][0]["uncompressed_sha256"] != fields["files"][0]["sha256"]
    table, _ = import_bigcodebench(instruct, arm="mine", dataset="bcb-rejudged")
    assert set(table["arm"]) == {"mine"} and set(table["dataset"]) == {"bcb-rejudged"}
    with pytest.raises(UsageError, match="`arm` names one arm, but the folder holds 3 result files"):
        import_bigcodebench(FIXTURE, arm="x")


def test_a_folder_result_takes_split_and_model_from_its_pass_at_k(tmp_path: Path) -> None:
    """``evaluate --samples FOLDER`` writes FOLDER/eval_results.json and pass_at_k.json: the name says nothing,
    the report says the split and the model; without the report, --dataset is needed."""
    folder = tmp_path / "samples"
    folder.mkdir()
    shutil.copy(_eval_file(API), folder / "eval_results.json")
    with pytest.raises(OutcomeError, match=r"eval_results\.json: cannot tell BigCodeBench's split .*give `dataset`"):
        import_bigcodebench(folder)
    table, _ = import_bigcodebench(folder, dataset="bigcodebench-complete")
    assert set(table["arm"]) == {"samples"}
    shutil.copy(FIXTURE / f"{API}_pass_at_k.json", folder / "pass_at_k.json")
    table, _ = import_bigcodebench(folder)
    assert set(table["arm"]) == {"example-api-model"} and set(table["dataset"]) == {"bigcodebench-complete"}
    report = json.loads((folder / "pass_at_k.json").read_text()) | {"split": "instruct"}
    (folder / "pass_at_k.json").write_text(json.dumps(report))
    renamed = folder / f"{API}_eval_results.json"
    (folder / "eval_results.json").rename(renamed)
    (folder / "pass_at_k.json").rename(folder / f"{API}_pass_at_k.json")
    with pytest.raises(OutcomeError, match=r"its name says split 'complete', but .* says 'instruct'"):
        import_bigcodebench(renamed)


def test_two_generations_of_one_model_are_two_arms(tmp_path: Path) -> None:
    greedy = tmp_path / "acme--bigcodebench-complete--vllm-0-1-sanitized_calibrated_eval_results.json"
    sampled = tmp_path / "acme--bigcodebench-complete--vllm-0.8-3-sanitized_calibrated_eval_results.json"
    shutil.copy(_eval_file(API), greedy)
    shutil.copy(_eval_file(SAMPLED), sampled)
    table, fields = import_bigcodebench(tmp_path)
    assert sorted(set(table["arm"])) == ["acme--vllm-0-1", "acme--vllm-0.8-3"]
    assert sorted(entry["arm"] for entry in fields["files"]) == ["acme--vllm-0-1", "acme--vllm-0.8-3"]
    shutil.copy(_eval_file(API), tmp_path / "acme--bigcodebench-complete_eval_results.json")
    with pytest.raises(OutcomeError, match="a second result of arm 'acme' on bigcodebench-complete"):
        import_bigcodebench(tmp_path)


def _write(path: Path, payload: object) -> Path:
    path.write_text(payload if isinstance(payload, str) else json.dumps(payload))
    return path


def _result(task: str, status: object = "pass") -> dict[str, object]:
    return {"task_id": task, "solution": "def task_func():\n    pass\n", "status": status, "details": {}}


NAME = "acme--bigcodebench-complete--vllm-0-1-sanitized_calibrated_eval_results.json"


@pytest.mark.parametrize(("payload", "message"), [
    ('{"date": "2024-06-01", "eval": {', r": not a BigCodeBench eval_results\.json: invalid JSON \(.*line 1"),
    ([1, 2], r": not a BigCodeBench eval_results\.json \(no `eval` object\)$"),
    ({"date": "x", "eval": {}}, r": the `eval` object has no tasks$"),
    ({"eval": {"BigCodeBench/0": {"nfiles": 1, "base": [["success", []]]}}},
     r"task 'BigCodeBench/0': expected a list of results, got dict \(it looks like 'evalplus' input"),
    ({"eval": {"BigCodeBench/0": []}}, r"task 'BigCodeBench/0': no results$"),
    ({"eval": {"BigCodeBench/0": [_result("BigCodeBench/0"), {"task_id": "BigCodeBench/0", "solution": ""}]}},
     r"task 'BigCodeBench/0' sample 1: no `status`$"),
    ({"eval": {"BigCodeBench/0": [_result("BigCodeBench/0", "error")]}},
     r"task 'BigCodeBench/0' sample 0: status 'error'; BigCodeBench writes pass, fail, timeout$"),
    ({"eval": {"BigCodeBench/0": [_result("BigCodeBench/0", None)]}}, r"sample 0: status None; BigCodeBench writes"),
    ({"eval": {"BigCodeBench/0": [_result("BigCodeBench/0")], "BigCodeBench/1": [_result("BigCodeBench/2")]}},
     r"task 'BigCodeBench/1' sample 0: its `task_id` is 'BigCodeBench/2'$"),
    ('{"eval": {"BigCodeBench/0": [{"task_id": "BigCodeBench/0", "status": "pass"}], '
     '"BigCodeBench/0": [{"task_id": "BigCodeBench/0", "status": "fail"}]}}',
     r"task 'BigCodeBench/0' is listed twice in `eval`"),
    ({"eval": {"HumanEval/0": [_result("HumanEval/0")]}},
     r"task 'HumanEval/0' is not one of BigCodeBench's \(BigCodeBench/N\); give `dataset`"),
])
def test_bad_input_is_one_line_naming_the_file(tmp_path: Path, payload: object, message: str) -> None:
    path = _write(tmp_path / NAME, payload)
    with pytest.raises(OutcomeError) as caught:
        import_bigcodebench(path)
    text = str(caught.value)
    assert "\n" not in text and text.startswith(str(path)), text
    assert caught.match(message)


def test_the_other_tools_result_files_are_named(tmp_path: Path) -> None:
    """EvalPlus's eval_results.json given as BigCodeBench's, and the reverse: an error naming the right kind."""
    evalplus = REPO / "tests/fixtures/evalplus/samples_eval_results.json"
    with pytest.raises(OutcomeError, match=r"sample 0: no `status` \(it looks like 'evalplus' input"):
        import_bigcodebench(evalplus)
    with pytest.raises(OutcomeError, match=r"sample 0: no `base_status` \(it looks like 'bigcodebench' input"):
        import_evalplus(_eval_file(API))
    assert sniff(_eval_file(API)) == "bigcodebench" and sniff(evalplus) == "evalplus"
    legacy = next((REPO / "data/published/mapcoder/ChatGPT/HumanEvalPlus").glob("*_eval_results.json.gz"))
    assert sniff(legacy) == "evalplus"
    assert sniff(FIXTURE / f"{API}.jsonl") == "samples to judge (`sotacheck judge --samples`), not results"


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        cli_main.main(args)
    out, err = capsys.readouterr()
    return int(done.value.code or 0), out, err


def test_import_then_leaderboard(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``sotacheck import bigcodebench FOLDER`` then ``sotacheck leaderboard``: the three systems ranked by the
    pass rates counted from BigCodeBench's files, each on the 20 tasks they share."""
    run = tmp_path / "bcb"
    code, out, err = _cli(["import", "bigcodebench", str(FIXTURE), "--out", str(run)], capsys)
    assert code == 0, err
    assert out.startswith(f"wrote {run}: 100 cells")
    assert "  example--coder-7b--main on bigcodebench-complete: 60 cells" in out
    manifest = json.loads((run / "run.json").read_text())
    assert manifest["source"] == "bigcodebench" and len(manifest["files"]) == 3
    code, out, err = _cli(["leaderboard", str(run), "--json"], capsys)
    assert code == 0, err
    board = json.loads(out)
    assert board["dataset"] == "bigcodebench-complete" and board["n_problems"] == 20 and board["n_systems"] == 3
    expected = {}
    for stem, arm in ((API, "example-api-model"), (SMALL, "example--coder-1b--main"),
                      (SAMPLED, "example--coder-7b--main")):
        per_task: dict[str, list[bool]] = {}
        for (task, _), status in _raw_statuses(stem).items():
            per_task.setdefault(task, []).append(status == "pass")
        expected[arm] = sum(sum(v) / len(v) for v in per_task.values()) / len(per_task)
    assert [s["system"] for s in board["systems"]] == sorted(expected, key=expected.get, reverse=True)
    assert {s["system"]: s["pass_rate"] for s in board["systems"]} == pytest.approx(expected, abs=1e-12)
    assert {s["system"]: s["pass_rate"] for s in board["systems"]} == pytest.approx(
        {"example-api-model": 15 / 20, "example--coder-7b--main": 44 / 60, "example--coder-1b--main": 9 / 20})
    code, text, _ = _cli(["leaderboard", str(run)], capsys)
    assert code == 0
    order = [text.index(system) for system in ("example-api-model", "example--coder-7b--main",
                                               "example--coder-1b--main")]
    assert order == sorted(order)
