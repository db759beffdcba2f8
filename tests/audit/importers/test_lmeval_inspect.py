"""The lm-evaluation-harness and Inspect AI importers, on logs the real tools wrote (tests/fixtures/*/README.md
gives the commands): the imported pass rate is the tool's own, and bad input is one line naming the place."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sotacheck.audit.importers.inspect import import_inspect, read_log, score_to_float
from sotacheck.audit.importers.lmeval import import_lmeval
from sotacheck.core.outcomes import OutcomeError, normalise

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
LMEVAL = FIXTURES / "lmeval/logs"
LMEVAL_SAMPLES = next(LMEVAL.rglob("samples_*.jsonl"))
LMEVAL_RESULTS = next(LMEVAL.rglob("results_*.json"))
INSPECT_EVAL = next((FIXTURES / "inspect/logs").glob("*.eval"))
INSPECT_JSON = next((FIXTURES / "inspect/logs").glob("*.json"))
MODEL = "qwen2.5-coder-0.5b-instruct-q4_k_m"
FIRST5 = [f"HumanEval/{i}" for i in range(5)]


def test_lmeval_import_gives_the_pass_rate_lm_eval_reported() -> None:
    frame, fields = import_lmeval(LMEVAL)
    table = normalise(frame, "import")
    reported = json.loads(LMEVAL_RESULTS.read_text())["results"]["sotacheck_humaneval_first5"]["pass_at_1,none"]
    # Exact up to float rounding: lm-eval's mean of the same five 0/1 values (0.8 in the committed log).
    assert table["passed"].mean() == pytest.approx(reported, abs=1e-12)
    assert list(table["problem"]) == FIRST5 and set(table["repeat"]) == {0}
    assert set(table["arm"]) == {f"{MODEL}/sotacheck_humaneval_first5"}
    assert fields["model_identity"] == {"model": MODEL,
                                        "endpoint": "lm-eval local-completions http://127.0.0.1:8093/v1/completions"}
    assert fields["files"][0]["arm"] == f"{MODEL}/sotacheck_humaneval_first5"
    assert fields["files"][0]["sampling"] == {"temperature": 0.0, "top_p": None, "max_tokens": 200}  # the task YAML
    report = fields["lm_eval"][str(LMEVAL_RESULTS)]
    assert report["lm_eval_version"] == "0.4.13" and report["versions"]["sotacheck_humaneval_first5"] == 1.0
    # Each verdict is the metric of its own line, read independently.
    lines = [json.loads(line) for line in LMEVAL_SAMPLES.read_text().splitlines()]
    assert list(table["passed"].astype(bool)) == [line["pass_at_1"] == 1.0 for line in lines]
    # A single samples file reads the same, with its results file found beside it.
    assert normalise(import_lmeval(LMEVAL_SAMPLES)[0], "x").equals(table)


def test_inspect_import_gives_the_accuracy_inspect_reported() -> None:
    pytest.importorskip("inspect_ai")
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(INSPECT_EVAL))
    accuracy = log.results.scores[0].metrics["accuracy"].value
    frame, fields = import_inspect(INSPECT_EVAL)
    table = normalise(frame, "import")
    # Inspect averages each sample's epochs, then the samples; with every sample at 2 epochs that is the
    # mean over all cells. Exact up to float rounding (0.8 in the committed log).
    assert table["passed"].mean() == pytest.approx(accuracy, abs=1e-12)
    assert len(table) == 10 and set(table["repeat"]) == {0, 1} and sorted(set(table["problem"])) == FIRST5
    assert set(table["arm"]) == {f"openai-api/sotacheck/{MODEL}/sotacheck_humaneval_first5"}
    header = fields["inspect"][str(INSPECT_EVAL)]
    assert header["eval"]["packages"]["inspect_ai"] == "0.3.285"
    assert header["eval"]["model_generate_config"]["temperature"] == 0.8
    assert fields["model_identity"]["endpoint"] == "inspect http://127.0.0.1:8093/v1"
    assert fields["files"][0]["sampling"] == {"temperature": 0.8, "top_p": None, "max_tokens": 300}
    for sample in log.samples or []:  # each cell is its sample's score at its epoch
        cell = table[(table["problem"] == sample.id) & (table["repeat"] == sample.epoch - 1)]
        assert bool(cell["passed"].iloc[0]) == (sample.scores["verify"].value == "C")


@pytest.mark.parametrize("log", [INSPECT_EVAL, INSPECT_JSON], ids=["eval", "json"])
def test_inspect_documented_layout_reads_as_inspect_does(log: Path) -> None:
    """The .json log is `inspect log convert --to json` of the .eval one: both formats, and both readers
    (Inspect's own and the documented layout, for a machine without inspect_ai), give one table."""
    pytest.importorskip("inspect_ai")
    reference = normalise(import_inspect(INSPECT_EVAL, use_inspect=True)[0], "x")
    without = normalise(import_inspect(log, use_inspect=False)[0], "x")
    assert without.equals(reference)
    assert normalise(import_inspect(log, use_inspect=True)[0], "x").equals(reference)


def test_a_log_and_its_converted_copy_are_not_imported_twice() -> None:
    with pytest.raises(OutcomeError, match=r"\.json: the same evaluation as .*\.eval \(eval id"):
        import_inspect(INSPECT_EVAL.parent)


def test_inspect_score_values_as_inspect_maps_them() -> None:
    pytest.importorskip("inspect_ai")
    from inspect_ai.scorer import value_to_float

    to_float = value_to_float()
    for value in ("C", "I", "P", "N", "yes", "No", "TRUE", True, False, 1, 0, 0.5, "1", "0.0"):
        assert score_to_float(value) == to_float(value), value
    assert score_to_float([1]) is None and score_to_float("maybe") is None


def test_truncated_eval_log_is_one_line_naming_the_file(tmp_path: Path) -> None:
    truncated = tmp_path / "cut.eval"
    data = INSPECT_EVAL.read_bytes()
    truncated.write_bytes(data[: len(data) // 2])
    for use_inspect in ([None, False] if _has_inspect() else [False]):
        with pytest.raises(OutcomeError, match=r"cut\.eval: cannot read as an Inspect log") as info:
            read_log(truncated, use_inspect)
        assert "\n" not in str(info.value)


def test_a_log_of_another_format_says_what_it_is(tmp_path: Path) -> None:
    with pytest.raises(OutcomeError, match=r"samples_.*\.jsonl: not an Inspect log.*lm-eval"):
        import_inspect(LMEVAL_SAMPLES)
    evalplus = tmp_path / "eval_results.json"
    evalplus.write_text('{"date": "d", "hash": "h", "eval": {"HumanEval/0": []}}')
    with pytest.raises(OutcomeError, match=r"eval_results\.json: not an Inspect log .*'evalplus'"):
        import_inspect(evalplus)
    renamed = tmp_path / "samples_x_2026-01-01T00-00-00.000000.jsonl"
    shutil.copy(INSPECT_EVAL, renamed)
    with pytest.raises(OutcomeError, match=r"samples_x_.*\.jsonl: not an lm-eval sample log .*'inspect'"):
        import_lmeval(renamed)
    with pytest.raises(OutcomeError, match=r"\.eval: not an lm-eval sample log .*'inspect'"):
        import_lmeval(INSPECT_EVAL)


def test_garbled_and_empty_lm_eval_lines_name_the_line(tmp_path: Path) -> None:
    lines = LMEVAL_SAMPLES.read_text().splitlines()
    target = tmp_path / LMEVAL_SAMPLES.name
    target.write_text("\n".join([*lines[:2], lines[2][: len(lines[2]) // 2], *lines[3:]]) + "\n")
    with pytest.raises(OutcomeError, match=rf"{target.name}:3: invalid JSON") as info:
        import_lmeval(target)
    assert "\n" not in str(info.value)
    target.write_text("\n".join([*lines[:3], "{}", *lines[3:]]) + "\n")
    with pytest.raises(OutcomeError, match=rf"{target.name}:4: no `doc_id`"):
        import_lmeval(target)
    fractional = json.loads(lines[0]) | {"pass_at_1": 0.5}
    target.write_text(json.dumps(fractional) + "\n")
    with pytest.raises(OutcomeError, match=rf"{target.name}:1: metric `pass_at_1` is 0.5, not a 0/1 verdict"):
        import_lmeval(target)
    target.write_text("\n")
    with pytest.raises(OutcomeError, match="no samples in the log"):
        import_lmeval(target)


def _has_inspect() -> bool:
    try:
        import inspect_ai  # noqa: F401
    except ImportError:
        return False
    return True
